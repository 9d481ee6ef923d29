/* blas_names.h: the BLAS GEMM names as a program linked with any BLAS declares them (the ABI
 * test programs are built against other BLAS libraries as well as libfastgemm). */
#ifndef FG_BLAS_NAMES_H
#define FG_BLAS_NAMES_H

#include <stddef.h>

void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *, size_t, size_t);
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *, size_t, size_t);
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);
void cblas_dgemm(int, int, int, int, int, int, double, const double *, int, const double *, int,
                 double, double *, int);

#endif
