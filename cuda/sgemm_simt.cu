// sgemm_simt.cu: the SIMT SGEMM configurations the library is built with and the table that
// picks one per problem, both from sgemm_table.gen.h (written by perf/tune.cu on the GPU it
// tuned; only the configurations the table uses are compiled). The kernels are in
// sgemm_simt.cuh, the table logic in gemm_table.cuh.
#include "gemm_table.cuh"
#include "kernels.h"
#include "sgemm_simt.cuh"
#include "sgemm_table.gen.h"

namespace {

#define FG_CONFIG(name, BM, BN, BK, WM, WN, S, TM, TN, F)                                       \
    {name, fg_simt::launch_any<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>>, BK,             \
     fg_simt::has_streamk<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>>()                   \
         ? fg_simt::streamk_bytes<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>>          \
         : nullptr},
const fg_table::Config<float> configs[] = {FG_SGEMM_CONFIGS(FG_CONFIG)};
#define FG_ENTRY(m, n, k, trans, config, splits) {m, n, k, trans, config, splits},
const fg_table::Entry table[] = {FG_SGEMM_TABLE(FG_ENTRY)};

} // namespace

int fg_cuda_sgemm_config(const char *name) { return fg_table::find(configs, name); }

cudaError_t fg_cuda_sgemm_simt(const fg_gemm_args *g, int config, int splits, const void *a,
                               int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                               cudaStream_t s)
{
    return fg_table::run(configs, table, g, config, splits, a, lda, b, ldb, c, ldc, s);
}
