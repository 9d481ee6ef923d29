// staged.cu: the CPU's answer for a call with device operands after the GPU failed: the device
// operands are copied to the host, the CPU BLAS computes, and C is copied back.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/exit_gate.h"

#include <stdio.h>
#include <stdlib.h>

int fg_gpu_staged_cpu_gemm(const fg_call *call, char *why, size_t whylen)
{
    const fg_gemm_args *g = call->g;
    const fg_operands *ops = &call->ops;
    const size_t es = fg_elem_size(g->dt);
    const bool reads_ab = fg_reads_ab(g), reads_c = g->beta != 0;
    const int64_t m = g->m, n = g->n;
    const int64_t ra = fg_rows_a(g), ca = fg_cols_a(g), rb = fg_rows_b(g), cb = fg_cols_b(g);
    fg_gemm_args h = *g;
    void *ha = nullptr, *hb = nullptr, *hc = nullptr;
    cudaError_t err = cudaSuccess;
    const char *failed_call = "";
    int rc = FG_FAILED;
    ExitGate gate;
    if (!gate.open()) {
        snprintf(why, whylen, "the process is exiting");
        return FG_FAILED;
    }
    KeepCallerContext keep;

    if (ops->device >= 0 && cudaSetDevice(ops->device) == cudaSuccess) fg_use_context(ops->context);
    cudaDeviceSynchronize(); // managed operands are read in place by the CPU: settle them first
    cudaGetLastError();
    if (reads_ab && ops->a == FG_MEM_DEVICE) {
        if (!(ha = malloc((size_t)(ra * ca) * es))) goto oom;
        FG_CUDA_TRY(cudaMemcpy2D(ha, ra * es, g->a, g->lda * es, ra * es, ca, cudaMemcpyDefault));
        h.a = ha;
        h.lda = ra;
    }
    if (reads_ab && ops->b == FG_MEM_DEVICE) {
        if (!(hb = malloc((size_t)(rb * cb) * es))) goto oom;
        FG_CUDA_TRY(cudaMemcpy2D(hb, rb * es, g->b, g->ldb * es, rb * es, cb, cudaMemcpyDefault));
        h.b = hb;
        h.ldb = rb;
    }
    if (ops->c == FG_MEM_DEVICE) {
        if (!(hc = malloc((size_t)(m * n) * es))) goto oom;
        if (reads_c) FG_CUDA_TRY(cudaMemcpy2D(hc, m * es, g->c, g->ldc * es, m * es, n, cudaMemcpyDefault));
        h.c = hc;
        h.ldc = m;
    }
    call->cpu_gemm(&h);
    if (hc) FG_CUDA_TRY(cudaMemcpy2D(g->c, g->ldc * es, hc, m * es, m * es, n, cudaMemcpyDefault));
    rc = FG_OK;
    goto out;
oom:
    snprintf(why, whylen, "out of host memory");
    goto out;
fail:
    fg_cuda_describe(why, whylen, failed_call, err);
out:
    cudaGetLastError();
    free(ha);
    free(hb);
    free(hc);
    return rc;
}
