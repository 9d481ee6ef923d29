/* fastgemm.h: the public C API of libfastgemm.
 * Column-major GEMM, C = alpha*op(A)*op(B) + beta*C, on an NVIDIA GPU or the CPU BLAS.
 * The BLAS names (sgemm_, dgemm_, sgemm_64_, dgemm_64_, cblas_sgemm, cblas_dgemm) are exported too. */
#ifndef FASTGEMM_H
#define FASTGEMM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FASTGEMM_VERSION_MAJOR 0
#define FASTGEMM_VERSION_MINOR 1
#define FASTGEMM_VERSION_PATCH 0

/* op(X): X, X^T, or X^H (= X^T for real types). The values are the BLAS characters. */
typedef enum {
    FASTGEMM_OP_N = 'N',
    FASTGEMM_OP_T = 'T',
    FASTGEMM_OP_C = 'C'
} fastgemm_op;

/* Where the last GEMM of the calling thread ran. */
typedef enum {
    FASTGEMM_BACKEND_NONE = 0, /* no call yet, an argument error, or a BLAS quick return */
    FASTGEMM_BACKEND_CPU = 1,  /* the CPU BLAS (or the host, for C = beta*C) */
    FASTGEMM_BACKEND_GPU = 2,  /* our CUDA kernels */
    FASTGEMM_BACKEND_CPU_FALLBACK = 3, /* the GPU was chosen, failed, and the CPU computed C */
    FASTGEMM_BACKEND_OMP = 4 /* the OpenMP-target GEMM (FASTGEMM_BACKEND=omp) */
} fastgemm_backend;

/* Status of fastgemm_sgemm/dgemm: 0 on success; -i when argument i is invalid
 * (1 transa, 2 transb, 3 m, 4 n, 5 k, 8 lda, 10 ldb, 13 ldc, as in the Fortran BLAS).
 * Argument errors do not call xerbla_ here, and C is left untouched. */
enum { FASTGEMM_SUCCESS = 0, FASTGEMM_ERROR_FAILED = -100 };

/* C = alpha*op(A)*op(B) + beta*C on host, device or managed memory. With FASTGEMM_OZAKI=on
 * (or auto) in the environment, SGEMM on device operands runs on the INT8 tensor cores by the
 * Ozaki scheme II, each entry certified within FP32 SGEMM's error bound or summed in FP32;
 * inputs with Inf or NaN run on the FP32 kernels. FASTGEMM_OZAKI_D=on (or auto) does the same
 * for DGEMM, within FP64 DGEMM's typical error, (floor(sqrt(k)) + 2) 2^-53 (|A||B|)_ij, or on
 * the FP64 kernels (README, "Environment"). */
int fastgemm_sgemm(fastgemm_op transa, fastgemm_op transb, int64_t m, int64_t n, int64_t k,
                   float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                   float beta, float *c, int64_t ldc);
int fastgemm_dgemm(fastgemm_op transa, fastgemm_op transb, int64_t m, int64_t n, int64_t k,
                   double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                   double beta, double *c, int64_t ldc);

/* The same on device (or managed) memory, enqueued on a CUDA stream (a cudaStream_t; NULL is
 * the legacy default stream) of the device that stream belongs to, without waiting for it, as
 * cuBLAS does: no CPU fallback. Returns 0, -i for an invalid argument i, or
 * FASTGEMM_ERROR_FAILED when nothing could be enqueued (a host operand, no usable device, a
 * launch error). */
int fastgemm_sgemm_stream(void *stream, fastgemm_op transa, fastgemm_op transb, int64_t m,
                          int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                          const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
int fastgemm_dgemm_stream(void *stream, fastgemm_op transa, fastgemm_op transb, int64_t m,
                          int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
                          const double *b, int64_t ldb, double beta, double *c, int64_t ldc);

/* FASTGEMM_MODE for the calls that start after it, from any thread: "auto", "gpu" or "cpu"
 * (any case). 0, or -1 for anything else (the mode is left as it was). */
int fastgemm_set_mode(const char *mode);

/* "0.1.0" */
const char *fastgemm_version(void);
/* The backend of the calling thread's last GEMM, through any entry point. */
fastgemm_backend fastgemm_last_backend(void);
/* "none", "cpu", "gpu", "cpu-fallback" */
const char *fastgemm_backend_name(fastgemm_backend b);
/* Measures this machine for FASTGEMM_MODE=auto (CPU BLAS and GPU times of square calls up to
 * n = 2048, the GPU path's fixed cost and copy rate; about a second) and stores the profile
 * in $XDG_CACHE_HOME/fastgemm (else ~/.cache/fastgemm), where later processes find it. Without
 * one, the first call large enough to need it makes a shorter measurement. verbose: print the
 * table to stdout. 0, or -1 (no usable GPU, or the profile could not be written). */
int fastgemm_calibrate(int verbose);

#ifdef __cplusplus
}
#endif
#endif /* FASTGEMM_H */
