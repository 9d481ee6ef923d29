/* test_gemm.c: the correctness sweep. Every transpose pair x m, n, k independently in
 * {1,2,3,7,31,33,63,65,127,129,255,257} x alpha, beta in {0, 1, 0.7, -1.3}, leading dimensions
 * mostly larger than needed, each case through one of the five entry points in turn, on fresh
 * random inputs, checked against OpenBLAS with the netlib error gauge
 *   |C - Cref| <= 2 (k+2) eps (|alpha| |op(A)| |op(B)| + |beta| |C0|)   (NaN fails).
 * Device and managed operands start 0 to 3 elements past an aligned address; with --ptr mixed
 * one or two of A, B and C lie in device memory, in turn from case to case.
 * Padding rows of A, B and C hold NaN; C's must come back bit for bit, and beta = 0 cases start
 * with NaN in C, alpha = 0 cases with NaN in all of A and B. The backend that ran is checked
 * against FASTGEMM_MODE, FASTGEMM_BACKEND and the kind of pointers.
 * --random N instead: N cases of random shapes up to --max-size (default 2500; a quarter of the
 * dimensions below 64, the rest log-uniform), transposes, scalars, leading dimensions and
 * offsets, the same checks: the larger tiles, the kernel table's choices and split-K.
 * --min-size N: the random dimensions log-uniform from N to --max-size, none smaller.
 * Usage: test_gemm --prec s|d [--ptr host|device|managed|mixed] [--max-size N] [--min-size N]
 *                  [--stride N] [--random N] [--seed S] [--case I]
 *                  (a failure prints the --seed/--case to replay) */
#include "../cpu_ref/ref.h"
#include "testutil.h"

#include <float.h>
#include <strings.h>
#include <time.h>

static const int64_t sizes[] = {1, 2, 3, 7, 31, 33, 63, 65, 127, 129, 255, 257};
#define NSIZES ((int)(sizeof sizes / sizeof *sizes))
static const double scalars[] = {0, 1, 0.7, -1.3};

enum { PTR_HOST, PTR_DEVICE, PTR_MANAGED, PTR_MIXED };
static const char *const ptr_names[] = {"host", "device", "managed", "mixed"};
static int ptr_kind = PTR_HOST;
static uint64_t seed;
static long failures, checked;
static void *gpu_buf[3]; /* device or managed copies of A, B, C */
static size_t gpu_cap = 300 * 300 * sizeof(double) + 64;

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The operands of case idx in device (or managed) memory, bit 0 A, 1 B, 2 C: all, none, or
 * with --ptr mixed one or two of them, in turn. */
static int on_device(long idx)
{
    return ptr_kind == PTR_HOST ? 0 : ptr_kind == PTR_MIXED ? 1 + (int)(idx % 6) : 7;
}

/* Most leading dimensions exceed the rows they hold; a quarter are exact. */
static int64_t leading(rng_t *r, int64_t rows)
{
    return max64(1, rows) + (rng_below(r, 4) == 0 ? 0 : 1 + rng_below(r, 13));
}

static void report(long idx, const char *prec, api_t api, char ta, char tb, int64_t m, int64_t n,
                   int64_t k, int64_t lda, int64_t ldb, int64_t ldc, double alpha, double beta,
                   const char *what)
{
    if (++failures <= 20)
        fprintf(stderr,
                "FAIL %s: prec=%s api=%s ta=%c tb=%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld "
                "ldc=%lld alpha=%g beta=%g ptr=%s (device operands %d)  (replay: --seed %llu "
                "--case %ld)\n",
                what, prec, api_names[api], ta, tb, (long long)m, (long long)n, (long long)k,
                (long long)lda, (long long)ldb, (long long)ldc, alpha, beta, ptr_names[ptr_kind],
                on_device(idx), (unsigned long long)seed, idx);
}

static int backend_ok(fastgemm_backend got, int quick)
{
    if (quick) return got == FASTGEMM_BACKEND_NONE;
    if (ptr_kind != PTR_HOST || mode_is("gpu"))
        return got == (omp_backend() ? FASTGEMM_BACKEND_OMP : FASTGEMM_BACKEND_GPU);
    if (mode_is("cpu")) return got == FASTGEMM_BACKEND_CPU;
    return got == FASTGEMM_BACKEND_CPU || got == FASTGEMM_BACKEND_GPU;
}

#define DEFINE_RUN_CASE(SUF, T, EPS, CALL, REF, NAIVE)                                               \
    static void run_case_##SUF(long idx, int tai, int tbi, int64_t m, int64_t n, int64_t k,     \
                               double alpha_d, double beta_d)                                   \
    {                                                                                           \
        rng_t r = {seed ^ (0xd1b54a32d192ed03ull * (uint64_t)(idx + 1))};                       \
        api_t api = (api_t)(idx % API_COUNT);                                                   \
        char ta = tai ? "TtCc"[rng_below(&r, 4)] : "Nn"[rng_below(&r, 2)];                      \
        char tb = tbi ? "TtCc"[rng_below(&r, 4)] : "Nn"[rng_below(&r, 2)];                      \
        T alpha = (T)alpha_d, beta = (T)beta_d;                                                 \
        int64_t ra = tai ? k : m, ca = tai ? m : k, rb = tbi ? n : k, cb = tbi ? k : n;         \
        int64_t lda = leading(&r, ra), ldb = leading(&r, rb), ldc = leading(&r, m);             \
        int off[3] = {rng_below(&r, 4), rng_below(&r, 4), rng_below(&r, 4)};                    \
        size_t na = (size_t)(lda * ca), nb = (size_t)(ldb * cb), nc = (size_t)(ldc * n);        \
        T *a = malloc(na * sizeof(T)), *b = malloc(nb * sizeof(T));                             \
        T *c = malloc(nc * sizeof(T)), *c0 = malloc(nc * sizeof(T)), *cref = malloc(nc * sizeof(T)); \
        double *ga = malloc(sizeof(double) * (size_t)(ra * ca));                                \
        double *gb = malloc(sizeof(double) * (size_t)(rb * cb));                                \
        double *g = malloc(sizeof(double) * (size_t)(m * n));                                  \
        for (int64_t j = 0; j < ca; j++)                                                        \
            for (int64_t i = 0; i < lda; i++) {                                                 \
                a[i + j * lda] = (i < ra && alpha != 0) ? (T)rng_uniform(&r) : (T)NAN;          \
                if (i < ra) ga[i + j * ra] = fabs((double)a[i + j * lda]);                      \
            }                                                                                   \
        for (int64_t j = 0; j < cb; j++)                                                        \
            for (int64_t i = 0; i < ldb; i++) {                                                 \
                b[i + j * ldb] = (i < rb && alpha != 0) ? (T)rng_uniform(&r) : (T)NAN;          \
                if (i < rb) gb[i + j * rb] = fabs((double)b[i + j * ldb]);                      \
            }                                                                                   \
        for (int64_t j = 0; j < n; j++)                                                         \
            for (int64_t i = 0; i < ldc; i++)                                                   \
                c[i + j * ldc] = (i < m && beta != 0) ? (T)rng_uniform(&r) : (T)NAN;            \
        memcpy(c0, c, nc * sizeof(T));                                                          \
        memcpy(cref, c, nc * sizeof(T));                                                        \
        /* OpenBLAS reads A and B when alpha = 0 (NaN there propagates): the definition then. */ \
        if (alpha == 0) NAIVE(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cref, ldc);         \
        else REF(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, cref, ldc);                      \
        /* The gauge, in double: |alpha| |op(A)| |op(B)| + |beta| |C0| (terms never read: 0). */ \
        ref_dgemm(ta, tb, m, n, k, alpha != 0 ? fabs((double)alpha) : 0.0, ga, max64(1, ra),    \
                  gb, max64(1, rb), 0.0, g, m);                                                 \
        if (alpha == 0 || k == 0)                                                               \
            for (int64_t i = 0; i < m * n; i++) g[i] = 0;                                       \
        if (beta != 0)                                                                          \
            for (int64_t j = 0; j < n; j++)                                                     \
                for (int64_t i = 0; i < m; i++)                                                 \
                    g[i + j * m] += fabs((double)beta) * fabs((double)c0[i + j * ldc]);         \
                                                                                                \
        T *ua = a, *ub = b, *uc = c;                                                            \
        const int dev = on_device(idx);                                                         \
        /* Device operands start 0 to 3 elements past an aligned address. */                    \
        if (((dev & 1) && test_copy((T *)gpu_buf[0] + off[0], a, na * sizeof(T))) ||             \
            ((dev & 2) && test_copy((T *)gpu_buf[1] + off[1], b, nb * sizeof(T))) ||             \
            ((dev & 4) && test_copy((T *)gpu_buf[2] + off[2], c, nc * sizeof(T)))) {             \
            report(idx, #SUF, api, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, "copy in");     \
            goto out;                                                                           \
        }                                                                                       \
        if (dev & 1) ua = (T *)gpu_buf[0] + off[0];                                             \
        if (dev & 2) ub = (T *)gpu_buf[1] + off[1];                                             \
        if (dev & 4) uc = (T *)gpu_buf[2] + off[2];                                             \
        if (CALL(api, ta, tb, m, n, k, alpha, ua, lda, ub, ldb, beta, uc, ldc) != 0) {          \
            report(idx, #SUF, api, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta,                 \
                   "the C API returned an error");                                              \
            goto out;                                                                           \
        }                                                                                       \
        fastgemm_backend be = fastgemm_last_backend();                                          \
        if ((dev & 4) && test_copy(c, (T *)gpu_buf[2] + off[2], nc * sizeof(T))) {              \
            report(idx, #SUF, api, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, "copy out");    \
            goto out;                                                                           \
        }                                                                                       \
        checked++;                                                                              \
        int quick = (alpha == 0 || k == 0) && beta == 1;                                        \
        if (!backend_ok(be, quick)) {                                                           \
            char what[64];                                                                      \
            snprintf(what, sizeof what, "backend %s", fastgemm_backend_name(be));               \
            report(idx, #SUF, api, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, what);          \
            goto out;                                                                           \
        }                                                                                       \
        for (int64_t j = 0; j < n; j++) {                                                       \
            if (memcmp(c + m + j * ldc, c0 + m + j * ldc, (size_t)(ldc - m) * sizeof(T))) {     \
                report(idx, #SUF, api, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta,             \
                       "C changed below row m");                                                \
                goto out;                                                                       \
            }                                                                                   \
            for (int64_t i = 0; i < m; i++) {                                                   \
                double err = fabs((double)c[i + j * ldc] - (double)cref[i + j * ldc]);          \
                double tol = 2.0 * (double)(k + 2) * (EPS) * g[i + j * m];                      \
                if (!(err <= tol)) {                                                            \
                    char what[160];                                                             \
                    snprintf(what, sizeof what, "C(%lld,%lld) = %.9g, reference %.9g, tol %.3g", \
                             (long long)i, (long long)j, (double)c[i + j * ldc],                \
                             (double)cref[i + j * ldc], tol);                                   \
                    report(idx, #SUF, api, ta, tb, m, n, k, lda, ldb, ldc, alpha, beta, what);  \
                    goto out;                                                                   \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    out:                                                                                        \
        free(a);                                                                                \
        free(b);                                                                                \
        free(c);                                                                                \
        free(c0);                                                                               \
        free(cref);                                                                             \
        free(ga);                                                                               \
        free(gb);                                                                               \
        free(g);                                                                                \
    }
DEFINE_RUN_CASE(s, float, FLT_EPSILON, call_sgemm, ref_sgemm, ref_naive_sgemm)
DEFINE_RUN_CASE(d, double, DBL_EPSILON, call_dgemm, ref_dgemm, ref_naive_dgemm)

int main(int argc, char **argv)
{
    const char *prec = "s";
    long only = -1, stride = 1, random_cases = 0;
    int64_t max_size = -1, min_size = 0;
    seed = (uint64_t)time(NULL) * 2654435761u;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--prec")) prec = argv[i + 1];
        else if (!strcmp(argv[i], "--ptr")) {
            for (int p = 0; p < 4; p++)
                if (!strcmp(argv[i + 1], ptr_names[p])) ptr_kind = p;
        } else if (!strcmp(argv[i], "--max-size")) max_size = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--min-size")) min_size = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--stride")) stride = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--random")) random_cases = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--case")) only = atol(argv[i + 1]);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    /* Without a GPU, only the OpenMP backend asked to run on the host (OpenMP with offload
     * disabled) has something to test. */
    const char *offload = getenv("OMP_TARGET_OFFLOAD");
    const int omp_host = omp_backend() && offload && !strcasecmp(offload, "disabled");
    if ((ptr_kind != PTR_HOST || (mode_is("gpu") && !omp_host)) && !test_gpu_present()) {
        printf("no CUDA device: skipped\n");
        return TEST_SKIP;
    }
    if (ref_init()) return 1;
    if (random_cases > 0) {
        if (max_size < 1) max_size = 2500;
        gpu_cap = (size_t)(max_size + 16) * (size_t)max_size * sizeof(double) + 64;
    } else if (max_size < 1) {
        max_size = 1 << 30;
    }
    if (ptr_kind != PTR_HOST)
        for (int i = 0; i < 3; i++)
            if (!(gpu_buf[i] = test_alloc(gpu_cap, ptr_kind == PTR_MANAGED))) return 1;
    printf("test_gemm: prec=%s ptr=%s FASTGEMM_MODE=%s reference=%s seed=%llu\n", prec,
           ptr_names[ptr_kind], getenv("FASTGEMM_MODE") ? getenv("FASTGEMM_MODE") : "(unset)",
           ref_blas_path(), (unsigned long long)seed);

    long idx = 0;
    for (; idx < random_cases; idx++) {
        if ((only >= 0 && idx != only) || idx % stride) continue;
        rng_t r = {seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(idx + 1)) ^ 0x5bd1e995u};
        int64_t dim[3];
        for (int d = 0; d < 3; d++)
            dim[d] = min_size > 0 && min_size < max_size
                         ? (int64_t)((double)min_size * pow((double)max_size / (double)min_size, 0.5 + 0.5 * rng_uniform(&r)))
                     : rng_below(&r, 4) == 0 || max_size < 64
                         ? 1 + rng_below(&r, (int)(max_size < 63 ? max_size : 63))
                         : (int64_t)(64.0 * pow((double)max_size / 64.0, 0.5 + 0.5 * rng_uniform(&r)));
        const int tai = rng_below(&r, 2), tbi = rng_below(&r, 2);
        const double alpha = rng_below(&r, 16) == 0 ? 0.0 : scalars[1 + rng_below(&r, 3)];
        const double beta = scalars[rng_below(&r, 4)];
        if (prec[0] == 'd') run_case_d(idx, tai, tbi, dim[0], dim[1], dim[2], alpha, beta);
        else run_case_s(idx, tai, tbi, dim[0], dim[1], dim[2], alpha, beta);
    }
    if (random_cases > 0) goto done;
    for (int tai = 0; tai < 2; tai++)
        for (int tbi = 0; tbi < 2; tbi++)
            for (int mi = 0; mi < NSIZES; mi++)
                for (int ni = 0; ni < NSIZES; ni++)
                    for (int ki = 0; ki < NSIZES; ki++)
                        for (int ai = 0; ai < 4; ai++)
                            for (int bi = 0; bi < 4; bi++, idx++) {
                                if ((only >= 0 && idx != only) || idx % stride) continue;
                                if (sizes[mi] > max_size || sizes[ni] > max_size ||
                                    sizes[ki] > max_size)
                                    continue;
                                if (prec[0] == 'd')
                                    run_case_d(idx, tai, tbi, sizes[mi], sizes[ni], sizes[ki],
                                               scalars[ai], scalars[bi]);
                                else
                                    run_case_s(idx, tai, tbi, sizes[mi], sizes[ni], sizes[ki],
                                               scalars[ai], scalars[bi]);
                            }
done:
    printf("test_gemm: %ld cases checked, %ld failed\n", checked, failures);
    if (checked == 0) {
        printf("test_gemm: no case ran\n");
        return 1;
    }
    return failures ? 1 : 0;
}
