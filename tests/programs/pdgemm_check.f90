! pdgemm_check.f90: ScaLAPACK's pdgemm on a 2x2 BLACS grid (run with 4 MPI processes), every
! transpose pair with several alpha and beta, block-cyclic blocks that do not divide the sizes.
! Each process checks its local part of C against a serial product of the global matrices,
! computed here with loops (no BLAS), under the netlib gauge
!   |C - Cref| <= 2 (k+2) eps (|alpha| |op(A)| |op(B)| + |beta| |C0|)   (NaN fails).
! Process 0 prints one line per case and "pdgemm_check: PASSED" when every process passed;
! a failure ends every process with exit code 1.
program pdgemm_check
  implicit none
  integer, parameter :: dp = kind(1.0d0), ncases = 5
  character(len=1), parameter :: tas(ncases) = ['N', 'T', 'N', 'T', 'N']
  character(len=1), parameter :: tbs(ncases) = ['N', 'N', 'T', 'T', 'N']
  integer, parameter :: ms(ncases) = [700, 650, 601, 517, 333]
  integer, parameter :: ns(ncases) = [600, 553, 700, 451, 257]
  integer, parameter :: ks(ncases) = [500, 449, 401, 350, 129]
  integer, parameter :: nbs(ncases) = [64, 64, 50, 48, 32]
  real(dp), parameter :: alphas(ncases) = [1.0_dp, 0.7_dp, -1.3_dp, 0.5_dp, -1.0_dp]
  real(dp), parameter :: betas(ncases) = [0.0_dp, -1.3_dp, 1.0_dp, 0.25_dp, 0.7_dp]
  integer :: iam, nprocs, ictxt, nprow, npcol, myrow, mycol, c, bad, allbad
  integer, external :: numroc

  call blacs_pinfo(iam, nprocs)
  if (nprocs /= 4) then
    if (iam == 0) print '(a,i0,a)', 'pdgemm_check: needs 4 processes (a 2x2 grid), got ', nprocs, '; FAILED'
    call blacs_exit(0)
    stop 1
  end if
  call blacs_get(-1, 0, ictxt)
  call blacs_gridinit(ictxt, 'R', 2, 2)
  call blacs_gridinfo(ictxt, nprow, npcol, myrow, mycol)

  allbad = 0
  do c = 1, ncases
    call run_case(c, bad)
    call igsum2d(ictxt, 'All', ' ', 1, 1, bad, 1, -1, -1)
    if (iam == 0) print '(a,2a1,3(a,i0),2(a,f5.2),a,i0,a,i0)', 'pdgemm ', tas(c), tbs(c), &
        ' m=', ms(c), ' n=', ns(c), ' k=', ks(c), ' alpha=', alphas(c), ' beta=', betas(c), &
        ' nb=', nbs(c), ': entries off the gauge on all processes: ', bad
    allbad = allbad + bad
  end do
  if (iam == 0) then
    if (allbad == 0) then
      print '(a)', 'pdgemm_check: PASSED'
    else
      print '(a)', 'pdgemm_check: FAILED'
    end if
  end if
  call blacs_gridexit(ictxt)
  call blacs_exit(0)
  if (allbad /= 0) stop 1

contains

  ! A global matrix's entry (i, j) of matrix id, in [-1, 1): a hash of the indices, the same
  ! on every process, so that each one fills its own blocks and knows the whole operands.
  pure real(dp) function gval(id, i, j)
    integer, intent(in) :: id, i, j
    integer(8) :: h
    h = modulo(int(i, 8) * 2654435761_8 + int(j, 8) * 40503_8 + int(id, 8) * 977_8, 1000003_8)
    gval = real(h, dp) / 500001.5_dp - 1.0_dp
  end function

  ! Fills the local part (nloc columns) of the block-cyclic global matrix id with rows rows,
  ! in nb x nb blocks.
  subroutine fill_local(id, rows, nb, loc, lld, nloc)
    integer, intent(in) :: id, rows, nb, lld, nloc
    real(dp), intent(out) :: loc(lld, *)
    integer :: il, jl
    integer, external :: indxl2g
    do jl = 1, nloc
      do il = 1, numroc(rows, nb, myrow, 0, nprow)
        loc(il, jl) = gval(id, indxl2g(il, nb, myrow, 0, nprow), indxl2g(jl, nb, mycol, 0, npcol))
      end do
    end do
  end subroutine

  subroutine run_case(c, bad)
    integer, intent(in) :: c
    integer, intent(out) :: bad
    integer :: m, n, k, nb, ar, ac, br, bc, info, il, jl, ig, jg, l
    integer :: lra, lca, lrb, lcb, lrc, lcc
    integer :: desca(9), descb(9), descc(9)
    real(dp), allocatable :: a(:, :), b(:, :), cc(:, :), opa(:, :), opb(:, :)
    real(dp) :: s, sabs, c0, bound
    integer, external :: indxl2g

    m = ms(c); n = ns(c); k = ks(c); nb = nbs(c)
    ! Global shapes: A is m x k, or k x m when transposed; B is k x n, or n x k.
    ar = m; ac = k
    if (tas(c) == 'T') then
      ar = k; ac = m
    end if
    br = k; bc = n
    if (tbs(c) == 'T') then
      br = n; bc = k
    end if
    lra = numroc(ar, nb, myrow, 0, nprow); lca = numroc(ac, nb, mycol, 0, npcol)
    lrb = numroc(br, nb, myrow, 0, nprow); lcb = numroc(bc, nb, mycol, 0, npcol)
    lrc = numroc(m, nb, myrow, 0, nprow); lcc = numroc(n, nb, mycol, 0, npcol)
    call descinit(desca, ar, ac, nb, nb, 0, 0, ictxt, max(1, lra), info)
    call descinit(descb, br, bc, nb, nb, 0, 0, ictxt, max(1, lrb), info)
    call descinit(descc, m, n, nb, nb, 0, 0, ictxt, max(1, lrc), info)
    allocate(a(max(1, lra), max(1, lca)), b(max(1, lrb), max(1, lcb)), cc(max(1, lrc), max(1, lcc)))
    call fill_local(3 * c, ar, nb, a, max(1, lra), lca)
    call fill_local(3 * c + 1, br, nb, b, max(1, lrb), lcb)
    call fill_local(3 * c + 2, m, nb, cc, max(1, lrc), lcc)

    call pdgemm(tas(c), tbs(c), m, n, k, alphas(c), a, 1, 1, desca, b, 1, 1, descb, &
                betas(c), cc, 1, 1, descc)

    ! The serial product: op(A) (m x k) and op(B) (k x n) of the global matrices, by loops.
    allocate(opa(k, m), opb(k, n))
    do ig = 1, m
      do l = 1, k
        if (tas(c) == 'N') then
          opa(l, ig) = gval(3 * c, ig, l)
        else
          opa(l, ig) = gval(3 * c, l, ig)
        end if
      end do
    end do
    do jg = 1, n
      do l = 1, k
        if (tbs(c) == 'N') then
          opb(l, jg) = gval(3 * c + 1, l, jg)
        else
          opb(l, jg) = gval(3 * c + 1, jg, l)
        end if
      end do
    end do
    bad = 0
    do jl = 1, lcc
      jg = indxl2g(jl, nb, mycol, 0, npcol)
      do il = 1, lrc
        ig = indxl2g(il, nb, myrow, 0, nprow)
        s = 0; sabs = 0
        do l = 1, k
          s = s + opa(l, ig) * opb(l, jg)
          sabs = sabs + abs(opa(l, ig) * opb(l, jg))
        end do
        c0 = gval(3 * c + 2, ig, jg)
        bound = 2 * (k + 2) * epsilon(1.0_dp) * (abs(alphas(c)) * sabs + abs(betas(c) * c0))
        if (.not. (abs(cc(il, jl) - (alphas(c) * s + betas(c) * c0)) <= bound)) then
          if (bad < 3) print '(a,i0,a,2a1,2(a,i0),2(a,es24.16))', 'process ', iam, ': ', tas(c), tbs(c), &
              ' C(', ig, ',', jg, ') = ', cc(il, jl), ', serial ', alphas(c) * s + betas(c) * c0
          bad = bad + 1
        end if
      end do
    end do
  end subroutine
end program
