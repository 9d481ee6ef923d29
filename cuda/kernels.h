// kernels.h: the launchers of cuda/*.cu, called by cuda/runtime.cu (private).
// a, b, c are device pointers with their own leading dimensions; the rest comes from g.
#ifndef FG_CUDA_KERNELS_H
#define FG_CUDA_KERNELS_H

#include "../blas/fg.h"

#include <cuda_runtime.h>

FG_HIDDEN cudaError_t fg_cuda_gemm_tiled(const fg_gemm_args *g, const void *a, int64_t lda,
                                         const void *b, int64_t ldb, void *c, int64_t ldc,
                                         cudaStream_t s);
// C = beta*C over g->m x g->n (beta = 0 writes zeros without reading C).
FG_HIDDEN cudaError_t fg_cuda_scale_c(const fg_gemm_args *g, void *c, int64_t ldc, cudaStream_t s);

#endif
