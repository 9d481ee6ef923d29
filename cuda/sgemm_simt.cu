// sgemm_simt.cu: the SIMT SGEMM configurations the library is built with, and the table that
// picks one per problem. The kernels themselves are in sgemm_simt.cuh.
#include "kernels.h"
#include "sgemm_simt.cuh"

namespace {
// In the order of fg_kernel_names (kernels.h).
using Simt128x128 = fg_simt::SimtConfig<128, 128, 8, 32, 64, 4>;
using Simt64x64 = fg_simt::SimtConfig<64, 64, 8, 32, 64, 4>;
} // namespace

cudaError_t fg_cuda_sgemm_simt(const fg_gemm_args *g, int kernel, const void *a, int64_t lda,
                               const void *b, int64_t ldb, void *c, int64_t ldc, cudaStream_t s)
{
    if (kernel == FG_KERNEL_AUTO) {
        // Two 128x128 tiles for each of the 132 SMs or more: the large tile; otherwise the
        // smaller one, which fills the GPU on problems like 1000^3.
        const int64_t tiles = ((g->m + 127) / 128) * ((g->n + 127) / 128);
        kernel = tiles >= 264 ? FG_SGEMM_SIMT_128 : FG_SGEMM_SIMT_64;
    }
    auto run = kernel == FG_SGEMM_SIMT_128 ? fg_simt::launch_any<Simt128x128>
                                           : fg_simt::launch_any<Simt64x64>;
    return run(g->ta == 'T', g->tb == 'T', g->m, g->n, g->k, (float)g->alpha,
               static_cast<const float *>(a), lda, static_cast<const float *>(b), ldb,
               (float)g->beta, static_cast<float *>(c), ldc, s);
}
