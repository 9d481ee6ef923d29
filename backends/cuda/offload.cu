// offload.cu: GEMMs with an operand in host memory, on the GPU (cuda_backend.h).
//
// A call takes its device's lock (one pipelined call at a time per device: it fills the PCIe
// link alone), sets up the device's staging ring at its first call (offload_ring.cu), and runs
// a Pipeline (offload_pipeline.h): the plan of offload_plan.cpp, executed by offload_exec.cu and
// offload_copies.cu. Operands already on the device are used in place; C is uploaded only when
// beta != 0. When a CUDA call fails midway, the CPU BLAS finishes C (offload_recover.cu).
#include "backends/cuda/offload_pipeline.h"
#include "backends/cuda/staging.h"

#include <stdio.h>

#include <algorithm>
#include <mutex>
#include <utility>

namespace fg_offload {

// "first kernel at X ms, kernels busy Y of Z ms, the last done at W ms, the last copy out at V
// ms" from the timeline. Busy: the GPU time covered by at least one kernel (two streams
// overlap).
void Pipeline::gpu_times(double *first, double *busy, double *span, double *end, double *out) const
{
    *first = *busy = *span = *end = *out = 0;
    float t_out;
    if (out_done && !timeline.empty() && cudaEventElapsedTime(&t_out, timeline[0], out_done) == cudaSuccess)
        *out = t_out;
    cudaGetLastError();
    const size_t n = timeline.size();
    if (n < 3 || n % 2 == 0) return;
    std::vector<std::pair<float, float>> k; // each kernel's start and end, from the call's start
    for (size_t i = 1; i + 1 < n; i += 2) {
        float t0, t1;
        if (cudaEventElapsedTime(&t0, timeline[0], timeline[i]) == cudaSuccess &&
            cudaEventElapsedTime(&t1, timeline[0], timeline[i + 1]) == cudaSuccess)
            k.push_back({t0, t1});
    }
    cudaGetLastError();
    if (k.empty()) return;
    std::sort(k.begin(), k.end());
    *first = k[0].first;
    double cover_end = k[0].first;
    for (const auto &iv : k) {
        const double from = std::max<double>(iv.first, cover_end);
        if (iv.second > from) *busy += iv.second - from;
        cover_end = std::max<double>(cover_end, iv.second);
    }
    *end = cover_end;
    *span = cover_end - *first;
}

namespace {
// The trace line of a call that went through: how it was cut, and where the host's time went.
void describe(const Pipeline &pl, double t, char *why, size_t whylen)
{
    double first, busy, span, end, out;
    pl.gpu_times(&first, &busy, &span, &end, &out);
    char in_by[40] = "", out_at[48] = "", ozaki[112] = "";
    if (pl.plan.incore) snprintf(in_by, sizeof in_by, ", all in at %.1f ms", pl.uploads_done_s * 1e3);
    if (pl.bytes_out > 0) snprintf(out_at, sizeof out_at, ", the last copy out at %.1f ms", out);
    if (pl.ozaki_jobs > 0)
        snprintf(ozaki, sizeof ozaki,
                 "; ozaki: %d kernels on the INT8 tensor cores, %d with float sums, %d run again by the SIMT kernels",
                 pl.ozaki_jobs, pl.ozaki_summed, pl.ozaki_declined);
    snprintf(why, whylen,
             "pipeline: blocks %lldx%lld, %s, %zu kernels; host copies %.0f MB in, %.0f MB out, "
             "%.1f ms at %.1f GB/s; waits %.1f ms%s; GPU: first kernel at %.1f ms, kernels "
             "busy %.1f of %.1f ms, the last done at %.1f ms%s%s; %.1f ms",
             (long long)pl.plan.mb, (long long)pl.plan.nb, pl.plan.incore ? "in core" : "out of core",
             pl.plan.jobs.size(), pl.bytes_in / 1e6, pl.bytes_out / 1e6, pl.copy_s * 1e3,
             pl.copy_s > 0 ? (pl.bytes_in + pl.bytes_out) / pl.copy_s * 1e-9 : 0.0, pl.wait_s * 1e3, in_by,
             first, busy, span, end, out_at, ozaki, t * 1e3);
}

std::once_flag staging_once;
} // namespace

} // namespace fg_offload

using namespace fg_offload;

int fg_offload_warm(int dev)
{
    return dev >= 0 && dev < FG_MAX_DEVICES && context(dev).ready.load(std::memory_order_relaxed);
}

int fg_offload_gemm(const fg_call *call, int dev, bool *broken, char *why, size_t whylen)
{
    const fg_settings *set = call->set;
    std::call_once(staging_once, [call] { fg_stage_setup(call->set->staging_threads, call->active_calls); });
    Context &cx = context(dev);
    std::lock_guard<std::mutex> hold(cx.lock);
    cudaError_t err = cx.init((size_t)set->pinned_kb << 10, (size_t)set->slot_kb << 10);
    if (err != cudaSuccess) {
        cudaGetLastError();
        snprintf(why, whylen, "pinned staging buffers: %s", cudaGetErrorString(err));
        *broken = false;
        return FG_FAILED;
    }
    Pipeline pl(cx, call, dev);
    const double t0 = fg_now_s();
    const Plan &p = pl.plan;
    const size_t largest = p.es * (size_t)std::max({p.ha ? p.m * p.k : 0, p.hb ? p.k * p.n : 0, p.hc ? p.m * p.n : 0});
    const int awake = fg_stage_begin(largest);
    const bool ok = pl.execute();
    fg_stage_end(awake);
    if (ok) {
        if (call->traced) describe(pl, fg_now_s() - t0, why, whylen);
        return FG_OK;
    }

    // Stop everything in flight before the buffers are reused or C is touched.
    cudaGetLastError();
    bool sticky = false;
    for (cudaStream_t s : {cx.up, cx.comp, cx.comp2, cx.down}) sticky |= cudaStreamSynchronize(s) != cudaSuccess;
    pl.release();
    cudaGetLastError();
    *broken = sticky;
    fg_cuda_describe(why, whylen, pl.failed_call, pl.err);
    if (pl.cpu_finish(sticky)) return FG_FINISHED_ON_CPU;
    return pl.c_written() ? FG_FAILED_C_WRITTEN : FG_FAILED;
}
