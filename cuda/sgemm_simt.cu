// sgemm_simt.cu: the SIMT SGEMM configurations the library is built with, and the table that
// picks one per problem. The kernels themselves are in sgemm_simt.cuh.
#include "kernels.h"
#include "sgemm_simt.cuh"

namespace {
// In the order of fg_kernel_names (kernels.h). Chosen from fastgemm-tune on the H100
// (perf/NOTES.md): BK = 16 wins on large problems, 64-wide tiles where 128x128 ones are too
// few to fill the 132 SMs.
using Simt128x128 = fg_simt::SimtConfig<128, 128, 16, 64, 32, 3>;
using Simt64x128 = fg_simt::SimtConfig<64, 128, 8, 32, 64, 4>;
using Simt64x64 = fg_simt::SimtConfig<64, 64, 8, 32, 64, 4>;

int64_t tiles(const fg_gemm_args *g, int64_t bm, int64_t bn)
{
    return ((g->m + bm - 1) / bm) * ((g->n + bn - 1) / bn);
}

int sm_count()
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        cudaGetLastError();
        return 132;
    }
    return sms;
}
} // namespace

cudaError_t fg_cuda_sgemm_simt(const fg_gemm_args *g, int kernel, const void *a, int64_t lda,
                               const void *b, int64_t ldb, void *c, int64_t ldc, cudaStream_t s)
{
    if (kernel == FG_KERNEL_AUTO) {
        // The largest tile that still gives every SM a block.
        const int64_t sms = sm_count();
        kernel = tiles(g, 128, 128) >= sms  ? FG_SGEMM_SIMT_128
                 : tiles(g, 64, 128) >= sms ? FG_SGEMM_SIMT_64x128
                                            : FG_SGEMM_SIMT_64;
    }
    auto run = kernel == FG_SGEMM_SIMT_128      ? fg_simt::launch_any<Simt128x128>
               : kernel == FG_SGEMM_SIMT_64x128 ? fg_simt::launch_any<Simt64x128>
                                                : fg_simt::launch_any<Simt64x64>;
    return run(g->ta == 'T', g->tb == 'T', g->m, g->n, g->k, (float)g->alpha,
               static_cast<const float *>(a), lda, static_cast<const float *>(b), ldb,
               (float)g->beta, static_cast<float *>(c), ldc, s);
}
