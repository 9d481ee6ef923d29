// ozaki.cu: SGEMM on the INT8 tensor cores by the Ozaki scheme, where FASTGEMM_OZAKI asks for it
// (cuda_backend.h): the status, read back after the scan and after the products, decides
// between the scheme and the SIMT kernels before anything is written to C.
#include "backends/cuda/cuda_backend.h"
#include "kernels/kernels.h"

cudaError_t fg_run_ozaki(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb,
                         void *c, int64_t ldc, cudaStream_t s, bool *done, const char **note)
{
    *done = false;
    const int t = fg_kernel_ozaki_moduli(g->k);
    if (t == 0) {
        *note = "ozaki: k too deep, SIMT kernels";
        return cudaSuccess;
    }
    void *ws = nullptr;
    if (fg_pool_alloc(&ws, fg_kernel_ozaki_ws(g, t), s) != cudaSuccess) {
        cudaGetLastError();
        *note = "ozaki: no workspace, SIMT kernels";
        return cudaSuccess;
    }
    fg_ozaki_status st = {};
    cudaError_t err = fg_kernel_ozaki_scan(g, a, lda, b, ldb, t, ws, s);
    if (err == cudaSuccess) err = cudaMemcpyAsync(&st, ws, sizeof st, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
    if (err == cudaSuccess && st.inputs != 0) *note = "ozaki: Inf or NaN in A or B, SIMT kernels";
    if (err == cudaSuccess && st.inputs == 0) {
        err = fg_kernel_ozaki_products(g, a, lda, b, ldb, t, ws, s);
        if (err == cudaSuccess) err = cudaMemcpyAsync(&st, ws, sizeof st, cudaMemcpyDeviceToHost, s);
        if (err == cudaSuccess) err = cudaStreamSynchronize(s);
        // The CRT pass sums each entry the guard does not certify alone, k steps in one thread:
        // beyond one entry in 1024 the SIMT kernels are the faster way to SGEMM's accuracy.
        if (err == cudaSuccess && st.uncertified > (unsigned long long)(g->m * g->n / 1024)) {
            *note = "ozaki: the guard certifies too few entries, SIMT kernels";
        } else if (err == cudaSuccess) {
            err = fg_kernel_ozaki_crt(g, a, lda, b, ldb, c, ldc, t, ws, s);
            *done = err == cudaSuccess;
            *note = st.uncertified == 0 ? "ozaki: 8 moduli on the INT8 tensor cores"
                                        : "ozaki: the INT8 tensor cores, and float sums for the entries the "
                                          "guard cannot certify";
        }
    }
    const cudaError_t freed = cudaFreeAsync(ws, s);
    return err != cudaSuccess ? err : freed;
}
