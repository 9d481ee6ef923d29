// kernels.cu: the kernel layer's face (kernels.h) over its families (families.h): a kernel by
// name, the plan of a GEMM by type and device, and the plan's launch.
#include "kernels.h"

#include "families.h"

#include <string.h>

const char *fg_kernel_timeline_file = nullptr;

int fg_kernel_find(const char *name, int *family, int *config)
{
    int c = -1;
    if (!strcmp(name, FG_TILED_NAME)) *family = FG_FAMILY_TILED, c = 0;
    else if ((c = fg_simt_find(name)) >= 0) *family = FG_FAMILY_SIMT;
    else if ((c = fg_dmma_find(name)) >= 0) *family = FG_FAMILY_DMMA;
    if (c < 0) return -1;
    *config = c;
    return 0;
}

// A forced configuration applies to its family's type only; the tiled kernel serves both, and
// DGEMM without FP64 tensor cores (dmma false: below sm_80).
cudaError_t fg_kernel_plan_gemm(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb,
                                int family, int config, int splits, int stream_k, int choice, bool dmma, size_t max_ws,
                                fg_kernel_plan *plan)
{
    if (family < FG_FAMILY_ANY || family > FG_FAMILY_DMMA) return cudaErrorInvalidValue;
    *plan = {};
    if (family == FG_FAMILY_TILED || (g->dt == FG_F64 && !dmma)) {
        plan->family = FG_FAMILY_TILED;
        plan->splits = 1;
    } else if (g->dt == FG_F64) {
        fg_dmma_plan(g, a, lda, b, ldb, family == FG_FAMILY_DMMA ? config : -1, splits, stream_k, choice, max_ws,
                     plan);
    } else {
        fg_simt_plan(g, a, lda, b, ldb, family == FG_FAMILY_SIMT ? config : -1, splits, stream_k, choice, max_ws,
                     plan);
    }
    return cudaSuccess;
}

void fg_kernel_pack(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb, bool dmma,
                    bool *pack_a, bool *pack_b)
{
    *pack_a = *pack_b = false;
    if (g->dt == FG_F64) {
        if (dmma) fg_dmma_pack(g, a, lda, b, ldb, pack_a, pack_b);
    } else {
        fg_simt_pack(g, a, lda, b, ldb, pack_a, pack_b);
    }
}

void fg_kernel_plan_unsplit(fg_kernel_plan *plan)
{
    plan->instance = plan->instance_unsplit;
    plan->splits = 1;
    plan->sk_first = plan->sk_tiles = 0;
    plan->sk_ctas = 0;
    plan->ws_bytes = 0;
}

cudaError_t fg_kernel_launch(const fg_kernel_plan *plan, const fg_gemm_args *g, const void *a, int64_t lda,
                             const void *b, int64_t ldb, void *c, int64_t ldc, void *ws, cudaStream_t s)
{
    switch (plan->family) {
    case FG_FAMILY_TILED: return fg_tiled_gemm(g, a, lda, b, ldb, c, ldc, s);
    case FG_FAMILY_SIMT: return fg_simt_launch(plan, g, a, lda, b, ldb, c, ldc, ws, s);
    case FG_FAMILY_DMMA: return fg_dmma_launch(plan, g, a, lda, b, ldb, c, ldc, ws, s);
    default: return cudaErrorInvalidValue;
    }
}
