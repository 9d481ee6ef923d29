/* testutil.h: what the C test programs share: a seeded RNG, one call helper per entry point of
 * libfastgemm (so a case can go through any ABI), the netlib error gauge, and GPU presence. */
#ifndef FG_TESTUTIL_H
#define FG_TESTUTIL_H

#include <fastgemm.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The exit code CTest's SKIP_RETURN_CODE is set to for the gpu-labelled tests. */
#define TEST_SKIP 77

/* ---- the BLAS names of the library under test ---- */
#include "abi/blas_names.h"
void sgemm_64_(const char *, const char *, const int64_t *, const int64_t *, const int64_t *,
               const float *, const float *, const int64_t *, const float *, const int64_t *,
               const float *, float *, const int64_t *, size_t, size_t);
void dgemm_64_(const char *, const char *, const int64_t *, const int64_t *, const int64_t *,
               const double *, const double *, const int64_t *, const double *, const int64_t *,
               const double *, double *, const int64_t *, size_t, size_t);
enum { CblasRowMajor = 101, CblasColMajor = 102 };
enum { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };

/* ---- splitmix64: small, seedable, good enough to fill matrices ---- */
typedef struct { uint64_t s; } rng_t;
static inline uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline double rng_uniform(rng_t *r) /* in [-1, 1) */
{
    return (double)(rng_next(r) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}
static inline int rng_below(rng_t *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

/* ---- every entry point, one helper per type: a column-major request in, through api ---- */
typedef enum { API_F77, API_F77_64, API_CBLAS_COL, API_CBLAS_ROW, API_C, API_COUNT } api_t;
static const char *const api_names[API_COUNT] = {"f77", "f77_64", "cblas_col", "cblas_row", "c"};

static inline int cblas_op(char t)
{
    return (t == 'N' || t == 'n') ? CblasNoTrans : (t == 'C' || t == 'c') ? CblasConjTrans : CblasTrans;
}

/* NAME(api, ...): the GEMM through one entry point; 0, or -1 when the C API returned an error
 * (the other entry points return nothing). */
#define TEST_CALL_GEMM(NAME, T, F77, F77_64, CBLAS, CAPI)                                      \
    static inline int NAME(api_t api, char ta, char tb, int64_t m, int64_t n, int64_t k,      \
                            T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta,  \
                            T *c, int64_t ldc)                                                  \
    {                                                                                           \
        int im = (int)m, in = (int)n, ik = (int)k;                                              \
        int ilda = (int)lda, ildb = (int)ldb, ildc = (int)ldc;                                  \
        switch (api) {                                                                          \
        case API_F77:                                                                           \
            F77(&ta, &tb, &im, &in, &ik, &alpha, a, &ilda, b, &ildb, &beta, c, &ildc, 1, 1);    \
            break;                                                                              \
        case API_F77_64:                                                                        \
            F77_64(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);       \
            break;                                                                              \
        case API_CBLAS_COL:                                                                     \
            CBLAS(CblasColMajor, cblas_op(ta), cblas_op(tb), im, in, ik, alpha, a, ilda, b,     \
                  ildb, beta, c, ildc);                                                         \
            break;                                                                              \
        case API_CBLAS_ROW: /* C^T = op(B)^T op(A)^T: the same memory, seen row-major */       \
            CBLAS(CblasRowMajor, cblas_op(tb), cblas_op(ta), in, im, ik, alpha, b, ildb, a,     \
                  ilda, beta, c, ildc);                                                         \
            break;                                                                              \
        default:                                                                                \
            if (CAPI((fastgemm_op)ta, (fastgemm_op)tb, m, n, k, alpha, a, lda, b, ldb, beta, c, \
                     ldc) != 0)                                                                 \
                return -1;                                                                      \
            break;                                                                              \
        }                                                                                       \
        return 0;                                                                               \
    }
TEST_CALL_GEMM(call_sgemm, float, sgemm_, sgemm_64_, cblas_sgemm, fastgemm_sgemm)
TEST_CALL_GEMM(call_dgemm, double, dgemm_, dgemm_64_, cblas_dgemm, fastgemm_dgemm)

/* FASTGEMM_MODE as the library will read it. */
static inline int mode_is(const char *m)
{
    const char *e = getenv("FASTGEMM_MODE");
    return e && !strcmp(e, m);
}
/* FASTGEMM_BACKEND=omp: the GPU's calls run on the OpenMP-target GEMM, which OpenMP runs on the
 * host when it has no device. */
static inline int omp_backend(void)
{
    const char *e = getenv("FASTGEMM_BACKEND");
    return e && !strcmp(e, "omp");
}

/* gpumem.c: GPU memory for the tests, through the CUDA runtime (the library probes on its own).
 * test_gpu_present: 1 when a device is there. test_alloc: device (managed = 0) or managed memory,
 * NULL on failure. test_copy: cudaMemcpy with cudaMemcpyDefault, 0 on success. */
int test_gpu_present(void);
void *test_alloc(size_t bytes, int managed);
void test_free(void *p);
int test_copy(void *dst, const void *src, size_t bytes);
int test_sync(void);

#endif
