! abi_f.f90: a Fortran program calling SGEMM and DGEMM the way Fortran code does (gfortran
! passes the CHARACTER lengths as hidden arguments). Built twice, like abi_c.c: linked against
! libfastgemm, and against another BLAS then run with LD_PRELOAD. Checks its own results.
program abi_f
  implicit none
  integer, parameter :: m = 67, n = 45, k = 83, lda = m + 3, ldb = n + 1, ldc = m + 2
  real :: a(lda, k), b(ldb, k), c(ldc, n), c0(ldc, n)
  double precision :: da(k, m), db(k, n), dc(m, n), dc0(m, n)
  double precision :: s, g, tol
  integer :: i, j, p, bad

  call random_number(a); call random_number(b); call random_number(c)
  a = a - 0.5; b = b - 0.5; c0 = c
  ! C = 1.5 A B^T, beta = 0: C's old values must not matter.
  call sgemm('N', 'T', m, n, k, 1.5, a, lda, b, ldb, 0.0, c, ldc)
  bad = 0
  do j = 1, n
    do i = 1, m
      s = 0; g = 0
      do p = 1, k
        s = s + dble(a(i, p)) * dble(b(j, p)); g = g + abs(dble(a(i, p)) * dble(b(j, p)))
      end do
      tol = 2 * (k + 2) * epsilon(1.0) * 1.5d0 * g
      if (.not. (abs(c(i, j) - 1.5d0 * s) <= tol)) bad = bad + 1
    end do
    if (any(c(m + 1:ldc, j) /= c0(m + 1:ldc, j))) bad = bad + 1
  end do
  print '(a, i0)', 'sgemm wrong entries: ', bad
  if (bad /= 0) stop 1

  call random_number(da); call random_number(db); call random_number(dc)
  dc0 = dc
  ! C = -0.5 A^T B + 2 C
  call dgemm('T', 'n', m, n, k, -0.5d0, da, k, db, k, 2.0d0, dc, m)
  bad = 0
  do j = 1, n
    do i = 1, m
      s = 0; g = 0
      do p = 1, k
        s = s + da(p, i) * db(p, j); g = g + abs(da(p, i) * db(p, j))
      end do
      tol = 2 * (k + 2) * epsilon(1d0) * (0.5d0 * g + 2 * abs(dc0(i, j)))
      if (.not. (abs(dc(i, j) - (-0.5d0 * s + 2 * dc0(i, j))) <= tol)) bad = bad + 1
    end do
  end do
  print '(a, i0)', 'dgemm wrong entries: ', bad
  if (bad /= 0) stop 1
end program abi_f
