// families.h: the kernel families' entries, for the kernel layer's face (kernels.cu) and for
// perf/ablate.cu (the tiled kernel). Each family's file holds its kernels and, for the tuned
// families, its table (gemm_table.cuh): sgemm_simt.cu, dgemm_dmma.cu, gemm_tiled.cu.
#ifndef FG_KERNEL_FAMILIES_H
#define FG_KERNEL_FAMILIES_H

#include "kernels.h"

// A tuned family: its configuration called `name`, or -1; the plan of a GEMM (config: an index,
// or -1 for the family's choice; the rest as fg_kernel_plan_gemm's); which operands to copy
// aligned first (fg_kernel_pack); a plan's launch.
#define FG_TUNED_FAMILY(F)                                                                      \
    FG_HIDDEN int fg_##F##_find(const char *name);                                              \
    FG_HIDDEN void fg_##F##_plan(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, \
                                 int64_t ldb, int config, int splits, int stream_k, int choice,     \
                                 size_t max_ws,                                                 \
                                 fg_kernel_plan *plan);                                         \
    FG_HIDDEN void fg_##F##_pack(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, \
                                 int64_t ldb, bool *pack_a, bool *pack_b);                      \
    FG_HIDDEN cudaError_t fg_##F##_launch(const fg_kernel_plan *plan, const fg_gemm_args *g,    \
                                          const void *a, int64_t lda, const void *b, int64_t ldb, \
                                          void *c, int64_t ldc, void *ws, cudaStream_t s);
FG_TUNED_FAMILY(simt) // sgemm_simt.cu: FG_FAMILY_SIMT
FG_TUNED_FAMILY(dmma) // dgemm_dmma.cu: FG_FAMILY_DMMA
#undef FG_TUNED_FAMILY

// gemm_tiled.cu: the tiled kernel (FG_FAMILY_TILED), float or double, any problem.
#define FG_TILED_NAME "tiled_64x64x16"
FG_HIDDEN cudaError_t fg_tiled_gemm(const fg_gemm_args *g, const void *a, int64_t lda, const void *b,
                                    int64_t ldb, void *c, int64_t ldc, cudaStream_t s);

#endif
