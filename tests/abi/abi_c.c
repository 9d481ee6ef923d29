/* abi_c.c: a C program of the kind libfastgemm serves, calling the BLAS names directly:
 * sgemm_/dgemm_ (Fortran ABI) and cblas_sgemm/cblas_dgemm (both layouts). Built twice: linked
 * against libfastgemm, and against another BLAS (then run with LD_PRELOAD=libfastgemm.so).
 * It checks its results itself against sums in long double; exit 0 when all are right.
 * ABI_REQUIRE_LIB / ABI_FORBID_LIB: a library (path part) that must / must not be loaded in the
 * end, to check which CPU BLAS libfastgemm took (and that it loaded no second one). */
#define _GNU_SOURCE
#include <float.h>
#include <link.h>
#include <string.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "blas_names.h"

enum { RowMajor = 101, ColMajor = 102, NoTrans = 111, Trans = 112 };

enum { M = 70, N = 50, K = 90, LD = 101 };
static int fails;

/* C = alpha A B^T + beta C0, A = M x K, B = N x K, column-major with leading dimension LD. */
#define CHECK(T, EPS, name, c, c0, a, b, alpha, beta)                                          \
    do {                                                                                       \
        int bad = 0;                                                                           \
        for (int j = 0; j < N; j++)                                                            \
            for (int i = 0; i < M; i++) {                                                      \
                long double s = 0, g = 0;                                                      \
                for (int p = 0; p < K; p++) {                                                  \
                    s += (long double)a[i + p * LD] * b[j + p * LD];                           \
                    g += fabsl((long double)a[i + p * LD] * b[j + p * LD]);                    \
                }                                                                              \
                long double want = alpha * s + beta * c0[i + j * LD];                          \
                long double tol = 2 * (K + 2) * (EPS) * (fabsl(alpha) * g + fabsl(beta * c0[i + j * LD])); \
                if (!(fabsl(c[i + j * LD] - want) <= tol)) bad++;                              \
            }                                                                                  \
        printf("%-22s %s\n", name, bad ? "WRONG" : "ok");                                      \
        fails += bad != 0;                                                                     \
    } while (0)

#define RUN(T, EPS, F77, CBLAS, PREFIX)                                                         \
    do {                                                                                       \
        T *a = malloc(sizeof(T) * LD * K), *b = malloc(sizeof(T) * LD * K);                    \
        T *c = malloc(sizeof(T) * LD * N), *c0 = malloc(sizeof(T) * LD * N);                   \
        for (int i = 0; i < LD * K; i++) {                                                     \
            a[i] = (T)rand() / RAND_MAX - (T)0.5;                                              \
            b[i] = (T)rand() / RAND_MAX - (T)0.5;                                              \
        }                                                                                      \
        for (int i = 0; i < LD * N; i++) c[i] = c0[i] = (T)rand() / RAND_MAX;                  \
        T alpha = (T)1.5, beta = (T)-0.25;                                                     \
        int m = M, n = N, k = K, ld = LD;                                                      \
        F77("N", "T", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld, 1, 1);                \
        CHECK(T, EPS, PREFIX "gemm_", c, c0, a, b, alpha, beta);                               \
        for (int i = 0; i < LD * N; i++) c[i] = c0[i];                                         \
        CBLAS(ColMajor, NoTrans, Trans, M, N, K, alpha, a, LD, b, LD, beta, c, LD);            \
        CHECK(T, EPS, "cblas_" PREFIX "gemm col", c, c0, a, b, alpha, beta);                   \
        for (int i = 0; i < LD * N; i++) c[i] = c0[i];                                         \
        /* Row-major C^T (N x M) = B A^T, op(B) = B read as row-major K x N, transposed. */                        \
        CBLAS(RowMajor, Trans, NoTrans, N, M, K, alpha, b, LD, a, LD, beta, c, LD);            \
        CHECK(T, EPS, "cblas_" PREFIX "gemm row", c, c0, a, b, alpha, beta);                   \
        free(a);                                                                               \
        free(b);                                                                               \
        free(c);                                                                               \
        free(c0);                                                                              \
    } while (0)

static int find_lib(struct dl_phdr_info *info, size_t size, void *part)
{
    (void)size;
    return info->dlpi_name && strstr(info->dlpi_name, (const char *)part) != NULL;
}

static void check_loaded(const char *var, int want)
{
    const char *part = getenv(var);
    if (!part || !*part) return;
    int loaded = dl_iterate_phdr(find_lib, (void *)part);
    printf("%-22s %s (%s is %sloaded)\n", var, loaded == want ? "ok" : "WRONG", part,
           loaded ? "" : "not ");
    fails += loaded != want;
}

int main(void)
{
    RUN(float, FLT_EPSILON, sgemm_, cblas_sgemm, "s");
    RUN(double, DBL_EPSILON, dgemm_, cblas_dgemm, "d");
    check_loaded("ABI_REQUIRE_LIB", 1);
    check_loaded("ABI_FORBID_LIB", 0);
    return fails != 0;
}
