/* cpu_blas.c: the CPU backend. Calls the process's own BLAS: FASTGEMM_CPU_BLAS if set, else the
 * next definition of the symbol after libfastgemm (the BLAS the program already uses, when we
 * are LD_PRELOADed), else OpenBLAS loaded at first use. Never ourselves, never a second BLAS
 * beside one the process already has. */
#define _GNU_SOURCE
#include "backends/backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define F77_GEMM_TYPE(NAME, T, INT)                                                            \
    typedef void (*NAME)(const char *, const char *, const INT *, const INT *, const INT *,   \
                         const T *, const T *, const INT *, const T *, const INT *, const T *, \
                         T *, const INT *, size_t, size_t)
F77_GEMM_TYPE(sgemm_fn, float, int);
F77_GEMM_TYPE(dgemm_fn, double, int);
F77_GEMM_TYPE(sgemm64_fn, float, int64_t);
F77_GEMM_TYPE(dgemm64_fn, double, int64_t);

static struct {
    sgemm_fn s;
    dgemm_fn d;
    sgemm64_fn s64;
    dgemm64_fn d64;
} blas;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static const char *setup_path; /* FASTGEMM_CPU_BLAS */

void fg_cpu_setup(const char *path) { setup_path = path; }

/* Takes all four symbols from one place (a dlopen handle or RTLD_NEXT); 1 if any was found. */
static int take_from(void *handle)
{
    void *p[4] = {dlsym(handle, "sgemm_"), dlsym(handle, "dgemm_"), dlsym(handle, "sgemm_64_"),
                  dlsym(handle, "dgemm_64_")};
    for (int i = 0; i < 4; i++)
        if (p[i] && fg_is_ours(p[i])) p[i] = NULL;
    blas.s = (sgemm_fn)p[0];
    blas.d = (dgemm_fn)p[1];
    blas.s64 = (sgemm64_fn)p[2];
    blas.d64 = (dgemm64_fn)p[3];
    return p[0] || p[1] || p[2] || p[3];
}

static void resolve(void)
{
    const char *path = setup_path;
    if (path && *path) {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            fg_warn("FASTGEMM_CPU_BLAS='%s' cannot be loaded (%s); using the default", path,
                    dlerror());
        else if (take_from(h))
            return;
        else
            fg_warn("FASTGEMM_CPU_BLAS='%s' has no sgemm_/dgemm_; using the default", path);
    }
    if (take_from(RTLD_NEXT)) return; /* the program's own BLAS, after us in the search order */
    static const char *const libs[] = {"libopenblas.so.0", "libopenblas.so"};
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (h && take_from(h)) return;
    }
    fg_warn("no CPU BLAS found (install OpenBLAS or set FASTGEMM_CPU_BLAS); the CPU path uses "
            "slow built-in loops");
}

/* The last resort, and C = beta*C: plain loops, beta = 0 never reads C, written once per type. */
#define FG_HOST_LOOPS(T, SUFFIX)                                                               \
    static void scale_##SUFFIX(const fg_gemm_args *g)                                          \
    {                                                                                          \
        T *c = (T *)g->c, beta = (T)g->beta;                                                   \
        for (int64_t j = 0; j < g->n; j++)                                                     \
            for (int64_t i = 0; i < g->m; i++)                                                 \
                c[i + j * g->ldc] = beta == 0 ? (T)0 : beta * c[i + j * g->ldc];               \
    }                                                                                          \
    static void naive_##SUFFIX(const fg_gemm_args *g)                                          \
    {                                                                                          \
        const T *a = (const T *)g->a, *b = (const T *)g->b;                                    \
        T *c = (T *)g->c, alpha = (T)g->alpha, beta = (T)g->beta;                              \
        for (int64_t j = 0; j < g->n; j++)                                                     \
            for (int64_t i = 0; i < g->m; i++) {                                               \
                T s = 0;                                                                       \
                for (int64_t p = 0; p < g->k; p++)                                             \
                    s += (g->ta == 'N' ? a[i + p * g->lda] : a[p + i * g->lda]) *              \
                         (g->tb == 'N' ? b[p + j * g->ldb] : b[j + p * g->ldb]);               \
                T *cij = &c[i + j * g->ldc];                                                   \
                *cij = beta == 0 ? alpha * s : alpha * s + beta * *cij;                        \
            }                                                                                  \
    }
FG_HOST_LOOPS(float, s)
FG_HOST_LOOPS(double, d)

void fg_host_scale_c(const fg_gemm_args *g)
{
    if (g->dt == FG_F32) scale_s(g);
    else scale_d(g);
}

static int fits_int(const fg_gemm_args *g)
{
    int64_t v[6] = {g->m, g->n, g->k, g->lda, g->ldb, g->ldc};
    for (int i = 0; i < 6; i++)
        if (v[i] > INT_MAX) return 0;
    return 1;
}

/* Calls the LP64 BLAS when the sizes fit in int, else its ILP64 names, else the loops. */
#define FG_CALL_BLAS(T, LP64, ILP64, NAIVE)                                                    \
    do {                                                                                       \
        T alpha = (T)g->alpha, beta = (T)g->beta;                                              \
        if (LP64 && fits_int(g)) {                                                             \
            int m = (int)g->m, n = (int)g->n, k = (int)g->k;                                   \
            int lda = (int)g->lda, ldb = (int)g->ldb, ldc = (int)g->ldc;                       \
            LP64(&g->ta, &g->tb, &m, &n, &k, &alpha, g->a, &lda, g->b, &ldb, &beta, g->c,      \
                 &ldc, 1, 1);                                                                  \
        } else if (ILP64) {                                                                    \
            ILP64(&g->ta, &g->tb, &g->m, &g->n, &g->k, &alpha, g->a, &g->lda, g->b, &g->ldb,   \
                  &beta, g->c, &g->ldc, 1, 1);                                                 \
        } else {                                                                               \
            NAIVE(g);                                                                          \
        }                                                                                      \
    } while (0)

const char *fg_cpu_blas_name(void)
{
    pthread_once(&blas_once, resolve);
    Dl_info info;
    void *f = blas.d ? (void *)blas.d : (void *)blas.d64;
    if (!f || !dladdr(f, &info) || !info.dli_fname) return "builtin-loops";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

void fg_cpu_gemm(const fg_gemm_args *g)
{
    if (!fg_reads_ab(g)) {
        fg_host_scale_c(g); /* alpha = 0 reads neither A nor B, whatever the BLAS does */
        return;
    }
    pthread_once(&blas_once, resolve);
    if (g->dt == FG_F32) FG_CALL_BLAS(float, blas.s, blas.s64, naive_s);
    else FG_CALL_BLAS(double, blas.d, blas.d64, naive_d);
}
