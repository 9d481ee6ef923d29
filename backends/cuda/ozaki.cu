// ozaki.cu: SGEMM on the INT8 tensor cores by the Ozaki scheme, where FASTGEMM_OZAKI asks for it
// (cuda_backend.h): the scan's status, read back, decides between the scheme and the SIMT
// kernels before anything is written to C.
#include "backends/cuda/cuda_backend.h"
#include "kernels/kernels.h"

cudaError_t fg_run_ozaki(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb,
                         void *c, int64_t ldc, cudaStream_t s, bool *done, const char **note)
{
    *done = false;
    const int t = fg_kernel_ozaki_moduli(g->k);
    if (t == 0) {
        *note = "ozaki: k below 16 or too deep, SIMT kernels";
        return cudaSuccess;
    }
    void *ws = nullptr;
    if (fg_pool_alloc(&ws, fg_kernel_ozaki_ws(g, t), s) != cudaSuccess) {
        cudaGetLastError();
        *note = "ozaki: no workspace, SIMT kernels";
        return cudaSuccess;
    }
    unsigned status = 0; // ws's first word (kernels.h)
    cudaError_t err = fg_kernel_ozaki_scan(g, a, lda, b, ldb, t, ws, s);
    if (err == cudaSuccess) err = cudaMemcpyAsync(&status, ws, sizeof status, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
    if (err == cudaSuccess && status == 0) {
        err = fg_kernel_ozaki_finish(g, a, lda, b, ldb, c, ldc, t, ws, s);
        *done = err == cudaSuccess;
        *note = "ozaki: 8 moduli on the INT8 tensor cores";
    } else if (err == cudaSuccess) {
        *note = "ozaki: Inf or NaN in A or B, SIMT kernels";
    }
    const cudaError_t freed = cudaFreeAsync(ws, s);
    return err != cudaSuccess ? err : freed;
}
