/* cpu_blas.c: the CPU backend. Calls the process's own BLAS: FASTGEMM_CPU_BLAS if set, else the
 * next definition of the call's family of names (common/symbols.c: the BLAS the program already
 * uses when we are LD_PRELOADed; for the scipy_* names of pip's NumPy and SciPy, the wheel's own
 * OpenBLAS), else OpenBLAS loaded at first use. Never a libfastgemm (this copy or another), never
 * a second BLAS beside one the process already has. */
#define _GNU_SOURCE
#include "backends/backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
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

/* One CPU BLAS: its LP64 and ILP64 Fortran GEMMs (any may be missing), and its file. */
typedef struct {
    sgemm_fn s;
    dgemm_fn d;
    sgemm64_fn s64;
    dgemm64_fn d64;
    char path[512]; /* "" for the built-in loops */
} cpu_blas;

/* The Fortran-ABI names of each family (fg_abi): LP64 sgemm, dgemm, ILP64 sgemm, dgemm. */
static const char *const family[FG_ABI_COUNT][4] = {
    {"sgemm_", "dgemm_", "sgemm_64_", "dgemm_64_"},
    {"scipy_sgemm_", "scipy_dgemm_", NULL, NULL},
    {NULL, NULL, "scipy_sgemm_64_", "scipy_dgemm_64_"},
};
static const char *const standard[4] = {"sgemm_", "dgemm_", "sgemm_64_", "dgemm_64_"};

static cpu_blas blas[FG_ABI_COUNT];
static pthread_once_t once[FG_ABI_COUNT] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static cpu_blas from_env; /* FASTGEMM_CPU_BLAS's, when it has a GEMM */
static int env_usable;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static const char *setup_path; /* FASTGEMM_CPU_BLAS */

void fg_cpu_setup(const char *path) { setup_path = path; }

/* Fills b from four symbols (NULL: missing) and names the file they came from: 1 if any. */
static int take(cpu_blas *b, void *const p[4])
{
    b->s = (sgemm_fn)p[0];
    b->d = (dgemm_fn)p[1];
    b->s64 = (sgemm64_fn)p[2];
    b->d64 = (dgemm64_fn)p[3];
    Dl_info info;
    for (int i = 0; i < 4; i++)
        if (p[i] && dladdr(p[i], &info) && info.dli_fname) {
            char *real = realpath(info.dli_fname, NULL);
            snprintf(b->path, sizeof b->path, "%s", real ? real : info.dli_fname);
            free(real);
            return 1;
        }
    return 0;
}

/* The standard names from a dlopen handle (a BLAS that is not a libfastgemm). */
static int take_from_handle(cpu_blas *b, void *h)
{
    void *p[4];
    for (int i = 0; i < 4; i++) p[i] = dlsym(h, standard[i]);
    return take(b, p);
}

static void load_env(void)
{
    const char *path = setup_path;
    if (!path || !*path) return;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        fg_warn("FASTGEMM_CPU_BLAS='%s' cannot be loaded (%s); using the default", path, dlerror());
    else if (fg_handle_is_fastgemm(h))
        fg_warn("FASTGEMM_CPU_BLAS='%s' is a libfastgemm, not a CPU BLAS; using the default", path);
    else if (!(env_usable = take_from_handle(&from_env, h)))
        fg_warn("FASTGEMM_CPU_BLAS='%s' has no sgemm_/dgemm_; using the default", path);
}

static const cpu_blas *blas_of(fg_abi abi);

static void resolve(fg_abi abi)
{
    pthread_once(&env_once, load_env);
    if (env_usable) {
        blas[abi] = from_env;
        return;
    }
    /* The program's own: the next definition of the family's names. */
    void *p[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; i++) {
        const char *copy = NULL;
        if (family[abi][i]) p[i] = fg_next_symbol(family[abi][i], &copy);
        static atomic_int warned;
        if (copy && !atomic_exchange(&warned, 1))
            fg_warn("%s is another copy of libfastgemm: its %s is not taken as the CPU BLAS", copy,
                    family[abi][i]);
    }
    if (take(&blas[abi], p)) return;
    if (abi != FG_ABI_BLAS) { /* none of the wheel's: the standard names' BLAS */
        blas[abi] = *blas_of(FG_ABI_BLAS);
        return;
    }
    static const char *const libs[] = {"libopenblas.so.0", "libopenblas.so"};
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
        if (h && take_from_handle(&blas[abi], h)) return;
    }
    fg_warn("no CPU BLAS found (install OpenBLAS or set FASTGEMM_CPU_BLAS); the CPU path uses "
            "slow built-in loops");
}
static void resolve_blas(void) { resolve(FG_ABI_BLAS); }
static void resolve_scipy(void) { resolve(FG_ABI_SCIPY); }
static void resolve_scipy64(void) { resolve(FG_ABI_SCIPY64); }

static const cpu_blas *blas_of(fg_abi abi)
{
    static void (*const init[FG_ABI_COUNT])(void) = {resolve_blas, resolve_scipy, resolve_scipy64};
    if ((unsigned)abi >= FG_ABI_COUNT) abi = FG_ABI_BLAS;
    pthread_once(&once[abi], init[abi]);
    return &blas[abi];
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

const char *fg_cpu_blas_path(fg_abi abi)
{
    const char *p = blas_of(abi)->path;
    return p[0] ? p : "builtin-loops";
}

void fg_cpu_gemm(const fg_gemm_args *g)
{
    if (!fg_reads_ab(g)) {
        fg_host_scale_c(g); /* alpha = 0 reads neither A nor B, whatever the BLAS does */
        return;
    }
    const cpu_blas *b = blas_of(g->abi);
    if (g->dt == FG_F32) FG_CALL_BLAS(float, b->s, b->s64, naive_s);
    else FG_CALL_BLAS(double, b->d, b->d64, naive_d);
}
