// kernels.h: the launchers of cuda/*.cu, called by cuda/runtime.cu (private).
// a, b, c are device pointers with their own leading dimensions; the rest comes from g.
#ifndef FG_CUDA_KERNELS_H
#define FG_CUDA_KERNELS_H

#include "../blas/fg.h"

#include <cuda_runtime.h>

// gemm_tiled.cu, float and double: the plain shared-memory kernel ("tiled_64x64x16").
FG_HIDDEN cudaError_t fg_cuda_gemm_tiled(const fg_gemm_args *g, const void *a, int64_t lda,
                                         const void *b, int64_t ldb, void *c, int64_t ldc,
                                         cudaStream_t s);
// sgemm_simt.cu: the SIMT SGEMM configurations of the generated table (sgemm_table.gen.h).
// config: an index from fg_cuda_sgemm_config(), or -1 for the table's choice; splits: the
// split-K slices, or 0 for the table's choice.
FG_HIDDEN cudaError_t fg_cuda_sgemm_simt(const fg_gemm_args *g, int config, int splits,
                                         const void *a, int64_t lda, const void *b, int64_t ldb,
                                         void *c, int64_t ldc, cudaStream_t s);
// The index of the SIMT configuration called `name`, or -1.
FG_HIDDEN int fg_cuda_sgemm_config(const char *name);
// dgemm_dmma.cu: the DGEMM configurations on the FP64 tensor cores (dgemm_table.gen.h), sm_80
// and up; config and splits as above.
FG_HIDDEN cudaError_t fg_cuda_dgemm_dmma(const fg_gemm_args *g, int config, int splits,
                                         const void *a, int64_t lda, const void *b, int64_t ldb,
                                         void *c, int64_t ldc, cudaStream_t s);
FG_HIDDEN int fg_cuda_dgemm_config(const char *name);
// C = beta*C over g->m x g->n (beta = 0 writes zeros without reading C).
FG_HIDDEN cudaError_t fg_cuda_scale_c(const fg_gemm_args *g, void *c, int64_t ldc, cudaStream_t s);

// runtime.cu: one GEMM on device pointers on stream s, with the kernel the configuration and
// the tables choose for device dev (alpha != 0, k > 0).
FG_HIDDEN cudaError_t fg_run_gemm(int dev, const fg_gemm_args *g, const void *a, int64_t lda,
                                  const void *b, int64_t ldb, void *c, int64_t ldc, cudaStream_t s);
// offload.cu: device memory from the current device's pool (freed with cudaFreeAsync).
FG_HIDDEN cudaError_t fg_pool_alloc(void **p, size_t bytes, cudaStream_t s);
// offload.cu: g, with an operand in host memory, through the pipelined host-pointer path on
// device dev (the current device). Returns an FG_GPU_* code; *broken: the device is lost.
FG_HIDDEN int fg_offload_gemm(const fg_gemm_args *g, const fg_operands *ops, int dev,
                              bool *broken, char *why, size_t whylen);

#endif
