// ozaki.cu: SGEMM and DGEMM on the INT8 tensor cores by the Ozaki scheme, where FASTGEMM_OZAKI
// (FASTGEMM_OZAKI_D) asks for it (cuda_backend.h). A call's operands are prepared into sides
// (kernels.h) once; a product over ranges of them is queued with nothing waiting for the host:
// it writes C only where its status, tested on the device, accepts the call, and the status comes
// back to the host for the caller, which has the SIMT (DMMA) kernels run the call where it was
// not accepted. fg_run_ozaki does all of it at once, for device operands; the host-operand
// pipeline (offload_exec.cu, SGEMM only) prepares each block as it arrives and reads each
// kernel's status when its C is due to go out.
#include "backends/cuda/cuda_backend.h"

cudaError_t fg_ozaki_sides_alloc(const fg_gemm_args *g, fg_ozaki_sides *sd, cudaStream_t s, bool *ok,
                                 const char **note)
{
    *ok = false;
    sd->mem = nullptr;
    const int f64 = g->dt == FG_F64, t = fg_kernel_ozaki_moduli(g->k, f64);
    if (t == 0) {
        *note = f64 ? "ozaki: k too deep, DMMA kernels" : "ozaki: k too deep, SIMT kernels";
        return cudaSuccess;
    }
    const size_t word = 256, a_bytes = fg_kernel_ozaki_side_bytes(g->m, g->k, t);
    if (fg_pool_alloc(&sd->mem, word + a_bytes + fg_kernel_ozaki_side_bytes(g->n, g->k, t), s) != cudaSuccess) {
        cudaGetLastError();
        sd->mem = nullptr;
        *note = f64 ? "ozaki: no workspace, DMMA kernels" : "ozaki: no workspace, SIMT kernels";
        return cudaSuccess;
    }
    char *w = static_cast<char *>(sd->mem);
    sd->inputs = reinterpret_cast<unsigned *>(w);
    sd->a = fg_kernel_ozaki_side(w + word, g->m, g->k, t, f64);
    sd->b = fg_kernel_ozaki_side(w + word + a_bytes, g->n, g->k, t, f64);
    const cudaError_t err = cudaMemsetAsync(sd->inputs, 0, sizeof *sd->inputs, s);
    *ok = err == cudaSuccess;
    return err;
}

cudaError_t fg_ozaki_sides_free(fg_ozaki_sides *sd, cudaStream_t s)
{
    const cudaError_t err = sd->mem ? cudaFreeAsync(sd->mem, s) : cudaSuccess;
    sd->mem = nullptr;
    return err;
}

// op(A)'s row i is a vector along k: a[i + p lda] (N), or a[i lda + p]; op(B)'s column j:
// b[j ldb + p] (N), or b[j + p ldb].
cudaError_t fg_ozaki_prepare_a(const fg_gemm_args *g, fg_ozaki_sides *sd, int64_t r0, int64_t r1, const void *a,
                               int64_t lda, cudaStream_t s)
{
    return fg_kernel_ozaki_prepare(&sd->a, r0, r1 - r0, a, lda, g->ta != 'N', sd->inputs, s);
}

cudaError_t fg_ozaki_prepare_b(const fg_gemm_args *g, fg_ozaki_sides *sd, int64_t c0, int64_t c1, const void *b,
                               int64_t ldb, cudaStream_t s)
{
    return fg_kernel_ozaki_prepare(&sd->b, c0, c1 - c0, b, ldb, g->tb == 'N', sd->inputs, s);
}

cudaError_t fg_ozaki_queue(const fg_gemm_args *g, const fg_ozaki_sides *sd, int64_t r0, int64_t c0, const void *a,
                           int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc, cudaStream_t s,
                           fg_ozaki_status *status, bool *queued, const char **note)
{
    *queued = false;
    void *ws = nullptr;
    if (fg_pool_alloc(&ws, fg_kernel_ozaki_ws(g->m, g->n, sd->a.t), s) != cudaSuccess) {
        cudaGetLastError();
        *note = sd->a.f64 ? "ozaki: no workspace, DMMA kernels" : "ozaki: no workspace, SIMT kernels";
        return cudaSuccess;
    }
    cudaError_t err =
        fg_kernel_ozaki_multiply(g, &sd->a, r0, &sd->b, c0, sd->inputs, a, lda, b, ldb, c, ldc, ws, s);
    if (err == cudaSuccess) err = cudaMemcpyAsync(status, ws, sizeof *status, cudaMemcpyDeviceToHost, s);
    *queued = err == cudaSuccess;
    const cudaError_t freed = cudaFreeAsync(ws, s);
    return err != cudaSuccess ? err : freed;
}

const char *fg_ozaki_outcome(const fg_ozaki_status *st, int64_t m, int64_t n, int t)
{
    const bool f64 = t > 8; // SGEMM takes 8 moduli, DGEMM 15 or 16
    if (st->inputs != 0)
        return f64 ? "ozaki: Inf or NaN in A or B, DMMA kernels" : "ozaki: Inf or NaN in A or B, SIMT kernels";
    if (!fg_ozaki_accepts(st, m, n))
        return f64 ? "ozaki: the guard certifies too few entries, DMMA kernels"
                   : "ozaki: the guard certifies too few entries, SIMT kernels";
    if (st->uncertified == 0)
        return t == 16   ? "ozaki: 16 moduli on the INT8 tensor cores"
               : t == 15 ? "ozaki: 15 moduli on the INT8 tensor cores"
                         : "ozaki: 8 moduli on the INT8 tensor cores";
    return f64 ? "ozaki: the INT8 tensor cores, and double sums for the entries the guard cannot certify"
               : "ozaki: the INT8 tensor cores, and float sums for the entries the guard cannot certify";
}

cudaError_t fg_run_ozaki(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb, void *c,
                         int64_t ldc, cudaStream_t s, bool *done, const char **note)
{
    *done = false;
    fg_ozaki_sides sd;
    bool ok = false, queued = false;
    cudaError_t err = fg_ozaki_sides_alloc(g, &sd, s, &ok, note);
    if (err != cudaSuccess || !ok) {
        fg_ozaki_sides_free(&sd, s);
        return err;
    }
    fg_ozaki_status st = {};
    err = fg_ozaki_prepare_a(g, &sd, 0, g->m, a, lda, s);
    if (err == cudaSuccess) err = fg_ozaki_prepare_b(g, &sd, 0, g->n, b, ldb, s);
    if (err == cudaSuccess) err = fg_ozaki_queue(g, &sd, 0, 0, a, lda, b, ldb, c, ldc, s, &st, &queued, note);
    const cudaError_t freed = fg_ozaki_sides_free(&sd, s);
    if (err == cudaSuccess) err = freed;
    if (err == cudaSuccess && queued) err = cudaStreamSynchronize(s);
    if (err != cudaSuccess || !queued) return err;
    *done = fg_ozaki_accepts(&st, g->m, g->n);
    *note = fg_ozaki_outcome(&st, g->m, g->n, sd.a.t);
    return cudaSuccess;
}
