// kernels.h: the launchers of cuda/*.cu, called by cuda/runtime.cu (private).
// a, b, c are device pointers with their own leading dimensions; the rest comes from g.
#ifndef FG_CUDA_KERNELS_H
#define FG_CUDA_KERNELS_H

#include "../blas/fg.h"

#include <cuda_runtime.h>

FG_HIDDEN cudaError_t fg_cuda_gemm_tiled(const fg_gemm_args *g, const void *a, int64_t lda,
                                         const void *b, int64_t ldb, void *c, int64_t ldc,
                                         cudaStream_t s);
// The kernels by name; FASTGEMM_KERNEL=<name> forces one (tests, perf/), else a table picks.
enum {
    FG_KERNEL_AUTO = -1,
    FG_KERNEL_TILED = 0,   // gemm_tiled.cu, float and double: the plain shared-memory kernel
    FG_SGEMM_SIMT_128 = 1,    // sgemm_simt.cu, 128x128x16 blocks, 64x32 warps, 3 stages
    FG_SGEMM_SIMT_64x128 = 2, // sgemm_simt.cu, 64x128x8 blocks, 32x64 warps, 4 stages
    FG_SGEMM_SIMT_64 = 3,     // sgemm_simt.cu, 64x64x8 blocks, 32x64 warps, 4 stages
    FG_KERNEL_COUNT
};
FG_HIDDEN extern const char *const fg_kernel_names[FG_KERNEL_COUNT];
FG_HIDDEN cudaError_t fg_cuda_sgemm_simt(const fg_gemm_args *g, int kernel, const void *a,
                                         int64_t lda, const void *b, int64_t ldb, void *c,
                                         int64_t ldc, cudaStream_t s);
// C = beta*C over g->m x g->n (beta = 0 writes zeros without reading C).
FG_HIDDEN cudaError_t fg_cuda_scale_c(const fg_gemm_args *g, void *c, int64_t ldc, cudaStream_t s);

#endif
