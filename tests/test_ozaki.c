/* test_ozaki.c: (gpu) the inputs FASTGEMM_OZAKI=on must hand to the SIMT kernels or carry
 * exactly, on device operands (or, with `host`, host operands through the pipeline, where the
 * SIMT kernels run a kernel again after its status came back; with `d`, DGEMM under
 * FASTGEMM_OZAKI_D=on on device operands, the DMMA kernels in the SIMT kernels' place and the
 * scaled case on double's range), each against OpenBLAS:
 *   inf-nan   an Inf, a -Inf and a NaN in A, one Inf in B (B has no zeros, so every product
 *             is defined as OpenBLAS computes it): every entry of C has OpenBLAS's class (NaN,
 *             +Inf, -Inf) or, where finite, its value within SGEMM's tolerance;
 *   scaled    rows of A on powers of two from 2^-140 (denormal floats) to 2^-40, columns of B
 *             from 2^60 to 2^100, a zero row and a zero column: C within SGEMM's tolerance,
 *             exact zeros where the reference has them;
 *   peaked    one entry of each row of A at 10^6 meeting 10^-6 in B: the guard certifies no
 *             entry, and the SIMT kernels take the call;
 *   one-peak  one entry of A at 10^6 meeting 10^-6 in one column of B, 1 in the others: the
 *             guard certifies all but that entry of C, which is summed in float; for DGEMM
 *             one-dip, a row of A and a column of B at 2^-30 on alternate k, all but their
 *             entry certified and that one summed in double;
 * each within SGEMM's (DGEMM's) tolerance.
 * Run with the trace on (stderr) and stdout unbuffered, so that CTest's regular expression sees
 * which path took each case, in order. The tolerance is test_gemm's: 2 (k+2) eps (|A| |B|)_ij. */
#include "../cpu_ref/ref.h"
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <string.h>

enum { M = 300, N = 260, K = 517 };

static int on_host; /* the operands in host memory: the pipeline */
static int dbl;     /* DGEMM */

static int classify(double x) { return isnan(x) ? 1 : isinf(x) ? (x > 0 ? 2 : 3) : 0; }

/* x as the precision under test holds it (the cases are written once, in double). */
static double val(double x) { return dbl ? x : (float)x; }

/* Entry i of an array of the precision under test. */
static double at(const void *x, int i) { return dbl ? ((const double *)x)[i] : ((const float *)x)[i]; }

/* The array x (n values of the precision under test) in that precision, freshly allocated. */
static void *typed(const double *x, int n)
{
    void *t = malloc((dbl ? sizeof(double) : sizeof(float)) * (size_t)n);
    for (int i = 0; t && i < n; i++)
        if (dbl) ((double *)t)[i] = x[i];
        else ((float *)t)[i] = (float)x[i];
    return t;
}

/* C = A B on the device through fastgemm_sgemm (dgemm) against OpenBLAS; fails counted. */
static int run(const char *name, const double *a64, const double *b64)
{
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t sa = es * M * K, sb = es * K * N, sc = es * M * N;
    double *abs64_a = malloc(sizeof(double) * M * K), *abs64_b = malloc(sizeof(double) * K * N);
    for (int i = 0; abs64_a && i < M * K; i++) abs64_a[i] = fabs(a64[i]);
    for (int i = 0; abs64_b && i < K * N; i++) abs64_b[i] = fabs(b64[i]);
    void *a = typed(a64, M * K), *b = typed(b64, K * N), *abs_a = abs64_a ? typed(abs64_a, M * K) : NULL;
    void *abs_b = abs64_b ? typed(abs64_b, K * N) : NULL;
    void *c = malloc(sc), *want = malloc(sc), *bound = malloc(sc);
    void *da = on_host ? NULL : test_alloc(sa, 0), *db = on_host ? NULL : test_alloc(sb, 0);
    void *dc = on_host ? c : test_alloc(sc, 0);
    int fails = 0;
    if (!a || !b || !c || !want || !bound || !abs_a || !abs_b ||
        (!on_host && (!da || !db || !dc || test_copy(da, a, sa) || test_copy(db, b, sb)))) {
        printf("FAIL %s: setup\n", name);
        return 1;
    }
    if (dbl) {
        ref_dgemm('N', 'N', M, N, K, 1, a, M, b, K, 0, want, M);
        ref_dgemm('N', 'N', M, N, K, 1, abs_a, M, abs_b, K, 0, bound, M);
        for (int i = 0; i < M * N; i++) ((double *)c)[i] = NAN; /* beta = 0: C must not be read */
    } else {
        ref_sgemm('N', 'N', M, N, K, 1, a, M, b, K, 0, want, M);
        ref_sgemm('N', 'N', M, N, K, 1, abs_a, M, abs_b, K, 0, bound, M);
        for (int i = 0; i < M * N; i++) ((float *)c)[i] = NAN;
    }
    const void *pa = on_host ? a : da, *pb = on_host ? b : db;
    if ((dbl ? fastgemm_dgemm(FASTGEMM_OP_N, FASTGEMM_OP_N, M, N, K, 1, pa, M, pb, K, 0, dc, M)
             : fastgemm_sgemm(FASTGEMM_OP_N, FASTGEMM_OP_N, M, N, K, 1, pa, M, pb, K, 0, dc, M)) != 0 ||
        (!on_host && test_copy(c, dc, sc))) {
        printf("FAIL %s: the call failed\n", name);
        fails++;
    } else if (fastgemm_last_backend() != FASTGEMM_BACKEND_GPU) {
        printf("FAIL %s: ran on backend %s, not the GPU\n", name, fastgemm_backend_name(fastgemm_last_backend()));
        fails++;
    }
    for (int i = 0; i < M * N && !fails; i++) {
        const double ci = at(c, i), wi = at(want, i);
        const int cw = classify(wi), cg = classify(ci);
        const double tol = 2.0 * (K + 2) * (dbl ? DBL_EPSILON : FLT_EPSILON) * at(bound, i);
        if (cw != cg || (cw == 0 && !(fabs(ci - wi) <= tol)) || (wi == 0 && ci != 0)) {
            printf("FAIL %s: C(%d,%d) = %.17g, OpenBLAS %.17g (tol %.3g)\n", name, i % M, i / M, ci, wi, tol);
            fails++;
        }
    }
    printf("%s: %s\n", name, fails ? "FAIL" : "ok");
    free(a), free(b), free(c), free(want), free(bound), free(abs_a), free(abs_b), free(abs64_a), free(abs64_b);
    if (!on_host) test_free(da), test_free(db), test_free(dc);
    return fails;
}

int main(int argc, char **argv)
{
    on_host = argc > 1 && !strcmp(argv[1], "host");
    dbl = argc > 1 && !strcmp(argv[1], "d");
    if (!test_gpu_present()) {
        printf("no CUDA device: skipped\n");
        return TEST_SKIP;
    }
    if (ref_init()) return 1;
    setvbuf(stdout, NULL, _IONBF, 0);
    double *a = malloc(sizeof(double) * M * K), *b = malloc(sizeof(double) * K * N);
    rng_t r = {2026};
    int fails = 0;

    /* inf-nan: B without zeros, so that OpenBLAS never meets Inf * 0 where the reference BLAS
     * would skip it. */
    for (int i = 0; i < M * K; i++) a[i] = val(rng_uniform(&r));
    for (int i = 0; i < K * N; i++) b[i] = val(0.5 + 0.5 * fabs(rng_uniform(&r))) * (rng_next(&r) & 1 ? 1 : -1);
    a[7 + 11 * M] = INFINITY;
    a[100 + 300 * M] = -INFINITY;
    a[200 + 3 * M] = NAN;
    b[5 + 17 * K] = INFINITY;
    fails += run("inf-nan", a, b);

    /* scaled: row i of A on 2^(-140 + 100 i / M) (its first rows denormal floats), column j of
     * B on 2^(100 - 40 j / N), so that every product is a normal float; a zero row and column.
     * Double: rows on 2^(-1060 + 160 i / M) (the first subnormal), columns on 2^(900 - 40 j / N). */
    const int r0 = dbl ? -1060 : -140, r1 = dbl ? 160 : 100, c0 = dbl ? 900 : 100;
    for (int p = 0; p < K; p++)
        for (int i = 0; i < M; i++) a[i + p * M] = val(ldexp(val(rng_uniform(&r)), r0 + r1 * i / M));
    for (int j = 0; j < N; j++)
        for (int p = 0; p < K; p++) b[p + j * K] = val(ldexp(val(rng_uniform(&r)), c0 - 40 * j / N));
    for (int p = 0; p < K; p++) a[17 + p * M] = 0;
    for (int p = 0; p < K; p++) b[p + 23 * K] = 0;
    fails += run("scaled", a, b);

    /* peaked: one entry of each row of A at 10^6, B's entry it meets at 10^-6: the scheme's
     * bound exceeds SGEMM's on every entry, and the guard must sum them in float. */
    for (int i = 0; i < M * K; i++) a[i] = val(rng_uniform(&r));
    for (int i = 0; i < K * N; i++) b[i] = val(rng_uniform(&r));
    for (int i = 0; i < M; i++) a[i] = a[i] < 0 ? -1e6 : 1e6;
    for (int j = 0; j < N; j++) b[j * K] = val(b[j * K] * val(1e-6));
    fails += run("peaked", a, b);

    /* one-peak: row 9 of A peaks at column 0; row 0 of B is 1 in size but at column 31.
     * Double (whose guard holds entries to DGEMM's typical error, so that the peak's row fails
     * whole): one-dip, row 9 of A at 2^-30 on even p and column 31 of B on odd p, so that only
     * entry (9, 31) has all its products small against its row's and column's largest. */
    for (int i = 0; i < M * K; i++) a[i] = val(rng_uniform(&r));
    for (int i = 0; i < K * N; i++) b[i] = val(rng_uniform(&r));
    if (dbl) {
        for (int p = 0; p < K; p += 2) a[9 + p * M] = ldexp(a[9 + p * M], -30);
        for (int p = 1; p < K; p += 2) b[p + 31 * K] = ldexp(b[p + 31 * K], -30);
    } else {
        a[9] = 1e6;
        for (int j = 0; j < N; j++) b[j * K] = j == 31 ? val(1e-6) : (rng_next(&r) & 1 ? 1 : -1);
    }
    fails += run(dbl ? "one-dip" : "one-peak", a, b);

    free(a), free(b);
    printf("test_ozaki: %s\n", fails ? "FAIL" : "ok");
    return fails != 0;
}
