// offload_recover.cu: after a CUDA call fails midway, what was already copied back into C stays,
// and the CPU BLAS (call->cpu_gemm) computes the rest, so that the caller still gets the right C.
#include "backends/cuda/offload_pipeline.h"

#include <stdlib.h>

namespace fg_offload {

// The parts of C not yet written, computed by the CPU BLAS. Possible when C is host memory and
// the CPU can read A and B (device operands are copied over, unless the device is lost). False
// when it was not possible.
bool Pipeline::cpu_finish(bool device_lost)
{
    if (!plan.hc) return false;
    const size_t es = plan.es;
    fg_gemm_args h = *g;
    void *bufs[2] = {nullptr, nullptr};
    bool ok = true;
    if (fg_reads_ab(g)) {
        if (call->ops.a == FG_MEM_DEVICE)
            ok = !device_lost && to_host(&h.a, &h.lda, fg_rows_a(g), fg_cols_a(g), &bufs[0]);
        if (ok && call->ops.b == FG_MEM_DEVICE)
            ok = !device_lost && to_host(&h.b, &h.ldb, fg_rows_b(g), fg_cols_b(g), &bufs[1]);
    }
    if (ok && plan.jobs.empty()) cpu_part(h, 0, plan.m, 0, plan.n); // it failed before any work was planned
    for (size_t i = 0; ok && i < plan.jobs.size(); i++) {
        const Job &jb = plan.jobs[i];
        if (!plan.final_slice(jb)) continue; // its piece of C is the final slice's
        const Chunking ch = c_chunks(jb);
        const int64_t saved = runs[i].saved;
        int64_t cdone = 0, rdone = 0; // columns written, and rows of the next one
        if (saved > 0) {
            int64_t col, nc;
            size_t off, w;
            ch.chunk(saved - 1, &col, &nc, &off, &w);
            if (off + w == ch.width) cdone = col + nc;
            else cdone = col, rdone = (int64_t)((off + w) / es);
        }
        if (rdone > 0) cpu_part(h, jb.r0 + rdone, jb.r1, jb.c0 + cdone, jb.c0 + cdone + 1), cdone++;
        cpu_part(h, jb.r0, jb.r1, jb.c0 + cdone, jb.c1);
    }
    free(bufs[0]);
    free(bufs[1]);
    return ok;
}

// A device operand (rows x cols, leading dimension *ld) copied into a host buffer *buf, which
// *p and *ld then describe.
bool Pipeline::to_host(const void **p, int64_t *ld, int64_t rows, int64_t cols, void **buf) const
{
    const size_t es = plan.es;
    if (!(*buf = malloc((size_t)(rows * cols) * es))) return false;
    if (cudaMemcpy2D(*buf, rows * es, *p, *ld * es, rows * es, cols, cudaMemcpyDeviceToHost) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    *p = *buf;
    *ld = rows;
    return true;
}

// C(r0:r1, c0:c1) of `whole` by the CPU BLAS.
void Pipeline::cpu_part(const fg_gemm_args &whole, int64_t r0, int64_t r1, int64_t c0, int64_t c1) const
{
    if (r0 >= r1 || c0 >= c1) return;
    const size_t es = plan.es;
    fg_gemm_args h = whole;
    h.m = r1 - r0;
    h.n = c1 - c0;
    h.a = (const char *)whole.a + (whole.ta == 'N' ? r0 : r0 * whole.lda) * es;
    h.b = (const char *)whole.b + (whole.tb == 'N' ? c0 * whole.ldb : c0) * es;
    h.c = (char *)whole.c + (r0 + c0 * whole.ldc) * es;
    call->cpu_gemm(&h);
}

// Some of C may have been written: a copy out landed, or a kernel ran on C in device memory.
bool Pipeline::c_written() const
{
    for (size_t i = 0; i < runs.size(); i++)
        if (runs[i].saved > 0 || (!plan.hc && runs[i].launched)) return true;
    return false;
}

} // namespace fg_offload
