/* ref.c: the tests' reference GEMMs. See ref.h. */
#define _GNU_SOURCE
#include "ref.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef ref_sgemm_fn sgemm_fn;
typedef ref_dgemm_fn dgemm_fn;

static sgemm_fn ref_s;
static dgemm_fn ref_d;
static const char *ref_path;

int ref_init(void)
{
    if (ref_s) return 0;
    const char *env = getenv("FASTGEMM_REF_BLAS");
    const char *const tries[] = {env, "libopenblas.so.0", "libopenblas.so"};
    for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
        if (!tries[i] || !*tries[i]) continue;
        void *h = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        ref_s = (sgemm_fn)dlsym(h, "sgemm_");
        ref_d = (dgemm_fn)dlsym(h, "dgemm_");
        if (ref_s && ref_d) {
            ref_path = tries[i];
            return 0;
        }
    }
    fprintf(stderr, "reference BLAS: cannot load OpenBLAS (libopenblas.so.0; or set "
                    "FASTGEMM_REF_BLAS)\n");
    return -1;
}

const char *ref_blas_path(void) { return ref_path; }

void ref_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    int im = (int)m, in = (int)n, ik = (int)k, ilda = (int)lda, ildb = (int)ldb, ildc = (int)ldc;
    ref_s(&ta, &tb, &im, &in, &ik, &alpha, a, &ilda, b, &ildb, &beta, c, &ildc, 1, 1);
}

void ref_dgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
               int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc)
{
    int im = (int)m, in = (int)n, ik = (int)k, ilda = (int)lda, ildb = (int)ldb, ildc = (int)ldc;
    ref_d(&ta, &tb, &im, &in, &ik, &alpha, a, &ilda, b, &ildb, &beta, c, &ildc, 1, 1);
}

static int is_n(char t) { return t == 'N' || t == 'n'; }

/* The BLAS definition, one entry at a time: beta = 0 never reads C. */
#define REF_NAIVE(NAME, T, ACC)                                                                \
    void NAME(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T *a,          \
              int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc)                 \
    {                                                                                          \
        for (int64_t j = 0; j < n; j++)                                                        \
            for (int64_t i = 0; i < m; i++) {                                                  \
                ACC s = 0;                                                                     \
                if (alpha != 0)                                                                \
                    for (int64_t p = 0; p < k; p++)                                            \
                        s += (ACC)(is_n(ta) ? a[i + p * lda] : a[p + i * lda]) *               \
                             (ACC)(is_n(tb) ? b[p + j * ldb] : b[j + p * ldb]);                \
                ACC r = (ACC)alpha * s;                                                        \
                if (beta != 0) r += (ACC)beta * (ACC)c[i + j * ldc];                           \
                c[i + j * ldc] = (T)r;                                                         \
            }                                                                                  \
    }
REF_NAIVE(ref_naive_sgemm, float, double)
REF_NAIVE(ref_naive_dgemm, double, long double)
