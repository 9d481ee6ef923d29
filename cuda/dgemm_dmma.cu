// dgemm_dmma.cu: the DGEMM configurations on the FP64 tensor cores the library is built with and
// the table that picks one per problem, both from dgemm_table.gen.h (written by perf/tune.cu on
// the GPU it tuned). The kernels are in dgemm_dmma.cuh, the table logic in gemm_table.cuh.
#include "dgemm_dmma.cuh"
#include "dgemm_table.gen.h"
#include "gemm_table.cuh"
#include "kernels.h"

namespace {

#define FG_CONFIG(name, BM, BN, BK, WM, WN, S, F)                                               \
    {name, fg_dmma::launch<fg_dmma::DmmaConfig<BM, BN, BK, WM, WN, S, F>>, BK,                    \
     fg_dmma::DmmaConfig<BM, BN, BK, WM, WN, S, F>::TMA                                           \
         ? fg_dmma::streamk_bytes<fg_dmma::DmmaConfig<BM, BN, BK, WM, WN, S, F>>                  \
         : nullptr}, // stream-K for the TMA configurations
const fg_table::Config<double> configs[] = {FG_DGEMM_CONFIGS(FG_CONFIG)};
#define FG_ENTRY(m, n, k, trans, config, splits) {m, n, k, trans, config, splits},
const fg_table::Entry table[] = {FG_DGEMM_TABLE(FG_ENTRY)};

} // namespace

int fg_cuda_dgemm_config(const char *name) { return fg_table::find(configs, name); }

cudaError_t fg_cuda_dgemm_dmma(const fg_gemm_args *g, int config, int splits, const void *a,
                               int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                               cudaStream_t s)
{
    return fg_table::run(configs, table, g, config, splits, a, lda, b, ldb, c, ldc, s);
}
