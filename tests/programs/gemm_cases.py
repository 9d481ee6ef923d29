"""gemm_cases.py: matrix products of NumPy or SciPy whose GEMM calls libfastgemm must take.

  python3 gemm_cases.py numpy|scipy run OUTDIR [ENTRY]
      computes the suite's products and saves each result in OUTDIR/<case>.npy; with ENTRY
      (the BLAS name the program calls, {p} standing for s or d, e.g. scipy_cblas_{p}gemm64_)
      also writes OUTDIR/expected: a line "COUNT REGEX" per product that must call GEMM, the
      trace lines (FASTGEMM_TRACE) that call must leave (check_calls in common.sh reads it).
  python3 gemm_cases.py numpy|scipy check REFDIR GOTDIR
      compares the results of two runs (one under LD_PRELOAD=libfastgemm.so, one without),
      each also against the product in float64, with the netlib gauge
        |C - Cref| <= 2 (k+2) eps (|alpha| |op(A)| |op(B)| + |beta| |C0|)   (NaN fails).

The inputs are drawn from a fixed seed, so that both runs and the check see the same ones.
Every product has its own m, n, k, so that its trace line is its own.
"""
import glob
import os
import sys

import numpy as np

SEED = 52


def rand(rng, shape, dtype, order="C"):
    return np.asarray(rng.uniform(-1, 1, size=shape), dtype=dtype, order=order)


def numpy_cases(dtype):
    """(name, function giving (op(A), op(B), result), k, calls) per product.

    calls: how many GEMM calls the product makes, the (m, n, k) of each as NumPy passes it to
    CBLAS in row-major order, and the transposes libfastgemm traces: the column-major call that
    row-major one is, C^T = op(B)^T op(A)^T (the operands' transposes swapped; m and n too, see
    trace_patterns). NumPy passes a transposed view (a.T of a C-ordered array, or a
    Fortran-ordered array) as a transposed operand. None: NumPy may compute the product without
    BLAS (NumPy 1.x loops over an operand whose rows are not contiguous, 2.x copies it), so
    only its result is checked."""
    rng = np.random.default_rng(SEED)

    def plain():  # C-contiguous operands
        a, b = rand(rng, (300, 200), dtype), rand(rng, (200, 250), dtype)
        return a, b, a @ b

    def a_t():  # op(A) = A^T of a C-contiguous A: a transposed call, no copy
        a, b = rand(rng, (190, 310), dtype), rand(rng, (190, 240), dtype)
        return a.T, b, a.T @ b

    def b_t():
        a, b = rand(rng, (290, 180), dtype), rand(rng, (230, 180), dtype)
        return a, b.T, a @ b.T

    def both_t():
        a, b = rand(rng, (170, 280), dtype), rand(rng, (260, 170), dtype)
        return a.T, b.T, a.T @ b.T

    def fortran():  # Fortran-ordered operands
        a, b = rand(rng, (270, 150), dtype, "F"), rand(rng, (150, 230), dtype, "F")
        return a, b, np.matmul(a, b)

    def every_other_row():  # a[::2, :]: rows 2 apart, passed with twice the leading dimension
        a, b = rand(rng, (2 * 210, 160), dtype), rand(rng, (160, 220), dtype)
        return a[::2, :], b, a[::2, :] @ b

    def submatrices():  # views into larger arrays: an offset and a leading dimension > columns
        a, b = rand(rng, (300, 180), dtype), rand(rng, (170, 260), dtype)
        av, bv = a[5:265, 7:147], b[3:143, 11:221]
        return av, bv, av @ bv

    def dot():  # np.dot of 2-D arrays
        a, b = rand(rng, (230, 130), dtype), rand(rng, (130, 190), dtype)
        return a, b, np.dot(a, b)

    def every_other_column():  # a[:, ::2]: no BLAS layout; NumPy copies it or loops itself
        a, b = rand(rng, (200, 2 * 110), dtype), rand(rng, (110, 170), dtype)
        return a[:, ::2], b, a[:, ::2] @ b

    def stack():  # a stack of three products: one call each
        a, b = rand(rng, (3, 120, 90), dtype), rand(rng, (3, 90, 110), dtype)
        return a, b, a @ b

    return [
        ("plain", plain, 200, [(1, 300, 250, 200, "NN")]),
        ("a_t", a_t, 190, [(1, 310, 240, 190, "NT")]),
        ("b_t", b_t, 180, [(1, 290, 230, 180, "TN")]),
        ("both_t", both_t, 170, [(1, 280, 260, 170, "TT")]),
        ("fortran", fortran, 150, [(1, 270, 230, 150, "TT")]),
        ("every_other_row", every_other_row, 160, [(1, 210, 220, 160, "NN")]),
        ("submatrices", submatrices, 140, [(1, 260, 210, 140, "NN")]),
        ("dot", dot, 130, [(1, 230, 190, 130, "NN")]),
        ("every_other_column", every_other_column, 110, None),
        ("stack", stack, 90, [(3, 120, 110, 90, "NN")]),
    ]


def scipy_cases(dtype):
    """scipy.linalg.blas.sgemm / dgemm with every transpose pair, alpha and beta, C given
    or not (beta = 0 over a C full of NaN too). The operands are Fortran-ordered, which f2py
    passes to the Fortran routine as they are: its call is the one traced."""
    from scipy.linalg import blas

    gemm = blas.sgemm if dtype == np.float32 else blas.dgemm
    rng = np.random.default_rng(SEED)
    cases = []
    for ta, tb, m, n, k, alpha, beta, c0 in [
        (0, 0, 310, 270, 230, 1.0, 0.0, "none"),
        (1, 0, 290, 250, 210, 0.7, -1.3, "rand"),
        (0, 1, 270, 330, 190, -1.3, 1.0, "rand"),
        (1, 1, 250, 210, 170, 0.5, 0.0, "nan"),
        (0, 0, 233, 177, 129, -1.0, 0.7, "rand"),
    ]:
        def product(ta=ta, tb=tb, m=m, n=n, k=k, alpha=alpha, beta=beta, c0=c0):
            a = rand(rng, (k, m) if ta else (m, k), dtype, "F")
            b = rand(rng, (n, k) if tb else (k, n), dtype, "F")
            opa, opb = (a.T if ta else a), (b.T if tb else b)
            if c0 == "none":
                return opa, opb, gemm(alpha, a, b, trans_a=ta, trans_b=tb), alpha, beta, None
            c = rand(rng, (m, n), dtype, "F") if c0 == "rand" else np.full((m, n), np.nan, dtype, "F")
            got = gemm(alpha, a, b, beta=beta, c=c, trans_a=ta, trans_b=tb)
            return opa, opb, got, alpha, beta, c
        name = "%s%s_%dx%dx%d" % ("NT"[ta], "NT"[tb], m, n, k)
        # The Fortran call is traced as it is made: transposes, m, n, k.
        cases.append((name, product, k, [(1, m, n, k, "NT"[ta] + "NT"[tb])]))
    return cases


def cases_of(suite, dtype):
    if suite == "numpy":
        out = []
        for name, f, k, calls in numpy_cases(dtype):
            def product(f=f):
                a, b, c = f()
                return a, b, c, 1.0, 0.0, None
            out.append((name, product, k, calls))
        return out
    return scipy_cases(dtype)


def trace_patterns(suite, entry, calls):
    """The trace lines (regular expressions) a product's calls leave."""
    pats = []
    for count, m, n, k, trans in calls:
        if suite == "numpy":  # row-major CBLAS: the column-major call has m and n swapped
            m, n = n, m
        pats.append((count, r"^fastgemm: %s %s m=%d n=%d k=%d " % (entry, trans, m, n, k)))
    return pats


def run(suite, outdir, entry):
    os.makedirs(outdir, exist_ok=True)
    expected = []
    for dtype, p in ((np.float32, "s"), (np.float64, "d")):
        for name, product, k, calls in cases_of(suite, dtype):
            a, b, c, alpha, beta, c0 = product()
            np.save(os.path.join(outdir, "%s_%s.npy" % (p, name)), c)
            if entry and calls:
                expected += trace_patterns(suite, entry.replace("{p}", p), calls)
    if entry:
        with open(os.path.join(outdir, "expected"), "w") as f:
            for count, pat in expected:
                f.write("%d %s\n" % (count, pat))
    version = sys.modules[suite].__version__ if suite in sys.modules else "?"
    print("%s %s: %d products computed" % (suite, version, len(glob.glob(os.path.join(outdir, "*.npy")))))


def check(suite, refdir, gotdir):
    failed = 0
    for dtype, p in ((np.float32, "s"), (np.float64, "d")):
        eps = np.finfo(dtype).eps
        for name, product, k, calls in cases_of(suite, dtype):
            a, b, _, alpha, beta, c0 = product()  # the inputs again (same seed); C0 unchanged
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            exact = alpha * (a64 @ b64)
            gauge = abs(alpha) * (np.abs(a64) @ np.abs(b64))
            if c0 is not None and beta != 0:
                exact += beta * c0.astype(np.float64)
                gauge += abs(beta) * np.abs(c0.astype(np.float64))
            tol = 2 * (k + 2) * eps * gauge
            ref = np.load(os.path.join(refdir, "%s_%s.npy" % (p, name))).astype(np.float64)
            got = np.load(os.path.join(gotdir, "%s_%s.npy" % (p, name))).astype(np.float64)
            bad = 0
            for what, x, y in (("preloaded vs. not", got, ref), ("not preloaded vs. float64", ref, exact),
                               ("preloaded vs. float64", got, exact)):
                if x.shape != y.shape:
                    print("FAIL %s %s: %s: shapes %s and %s" % (p, name, what, x.shape, y.shape))
                    bad += 1
                    continue
                off = ~(np.abs(x - y) <= tol)
                if off.any():
                    i = tuple(np.argwhere(off)[0])
                    print("FAIL %s %s: %s: %d entries off the gauge, e.g. C%s = %r against %r (tolerance %g)"
                          % (p, name, what, off.sum(), i, x[i], y[i], tol[i]))
                    bad += 1
            if not bad:
                print("ok   %s %s: max |C - Cref| / tolerance = %.3g" % (p, name, np.max(np.abs(got - ref) / tol)))
            failed += bad
    return failed


def main():
    suite, what = sys.argv[1], sys.argv[2]
    if suite not in ("numpy", "scipy") or what not in ("run", "check"):
        sys.exit(__doc__)
    if what == "run":
        run(suite, sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
    else:
        failed = check(suite, sys.argv[3], sys.argv[4])
        print("%s: %s" % (suite, "FAILED (%d)" % failed if failed else "all products within the gauge"))
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
