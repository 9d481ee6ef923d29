/* ref.h: the reference the tests and perf/ check libfastgemm against (not part of the library).
 * ref_*gemm: OpenBLAS (FASTGEMM_REF_BLAS overrides the path), loaded privately so that it is
 * never confused with the library under test. ref_naive_*gemm: plain loops accumulating in
 * higher precision (double for float, long double for double), for small exact checks. */
#ifndef FG_REF_H
#define FG_REF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The Fortran BLAS entry points, as looked up with dlsym (hidden string lengths last). */
typedef void (*ref_sgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                             const float *, const float *, const int *, const float *,
                             const int *, const float *, float *, const int *, size_t, size_t);
typedef void (*ref_dgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                             const double *, const double *, const int *, const double *,
                             const int *, const double *, double *, const int *, size_t, size_t);

/* Loads the reference BLAS; prints why and returns -1 when it cannot. */
int ref_init(void);
const char *ref_blas_path(void);

void ref_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
void ref_dgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
               int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc);

void ref_naive_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha,
                     const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                     float *c, int64_t ldc);
void ref_naive_dgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const double *a, int64_t lda, const double *b, int64_t ldb, double beta,
                     double *c, int64_t ldc);

#ifdef __cplusplus
}
#endif
#endif
