// offload_copies.cu: the pipeline's copies (offload_pipeline.h). Host operands go in and C goes
// out through the device's ring of pinned slots: the host side (the caller's pageable memory to
// a slot and back, staging.c) runs on the calling thread and the staging threads, the DMA on the
// streams `up` and `down`, so that copies in, kernels and copies out overlap. Out of core, the
// column blocks of B live in a ring of device slots, the least recently used one reused.
#include "backends/cuda/offload_pipeline.h"
#include "backends/cuda/staging.h"

namespace fg_offload {

// ---- the staging ring ----

// Completed copies: those in leave their slot free, those out are written to C.
bool Pipeline::poll()
{
    while (!in_up.empty()) {
        cudaError_t q = cudaEventQuery(cx.slots[in_up.front()].ev);
        if (q == cudaErrorNotReady) break;
        FG_PIPE_TRY(q);
        free_slots.push_back(in_up.front());
        in_up.pop_front();
    }
    while (!in_down.empty()) {
        cudaError_t q = cudaEventQuery(cx.slots[in_down.front()].ev);
        if (q == cudaErrorNotReady) break;
        FG_PIPE_TRY(q);
        unstage(in_down.front());
        in_down.pop_front();
    }
    return enqueue_downloads();
}

// Blocks until the oldest copy in flight (or, with none, the kernel C waits for) is done.
bool Pipeline::wait_one()
{
    // Copies out first: they were enqueued after their kernel finished, so they are short.
    const int s = !in_down.empty() ? in_down.front() : !in_up.empty() ? in_up.front() : -1;
    const double t0 = fg_now_s();
    if (s >= 0) FG_PIPE_TRY(cudaEventSynchronize(cx.slots[s].ev));
    else if (!to_download.empty()) FG_PIPE_TRY(cudaEventSynchronize(runs[to_download.front()].done));
    wait_s += fg_now_s() - t0;
    return true;
}

bool Pipeline::acquire(int *slot)
{
    for (;;) {
        if (!poll()) return false;
        if (!free_slots.empty()) {
            *slot = free_slots.back();
            free_slots.pop_back();
            return true;
        }
        if (!wait_one()) return false;
    }
}

// Host region (pageable) -> device, through the ring; `ready` is recorded after it.
bool Pipeline::upload(char *dst, size_t dld, const char *src, size_t sld, size_t width, int64_t cols,
                      cudaEvent_t ready)
{
    const Chunking ch = {width, cx.slot_bytes, cols};
    for (int64_t q = 0; q < ch.count(); q++) {
        int64_t col, nc;
        size_t off, w;
        ch.chunk(q, &col, &nc, &off, &w);
        int s;
        if (!acquire(&s)) return false;
        Slot &sl = cx.slots[s];
        const fg_copy2d cp = {sl.host, w, src + col * sld + off, sld, w, (size_t)nc};
        const double t0 = fg_now_s();
        fg_stage_copy(&cp);
        copy_s += fg_now_s() - t0;
        bytes_in += w * nc;
        FG_PIPE_TRY(cudaMemcpy2DAsync(dst + col * dld + off, dld, sl.host, w, w, nc, cudaMemcpyHostToDevice, cx.up));
        FG_PIPE_TRY(cudaEventRecord(sl.ev, cx.up));
        in_up.push_back(s);
    }
    FG_PIPE_TRY(cudaEventRecord(ready, cx.up));
    return true;
}

// Copies out the next chunks of finished jobs, as far as free slots allow.
bool Pipeline::enqueue_downloads()
{
    if (uploads_left) return true;
    while (!to_download.empty()) {
        const Job &jb = plan.jobs[to_download.front()];
        JobRun &run = runs[to_download.front()];
        if (run.queued == 0) {
            cudaError_t q = cudaEventQuery(run.done);
            if (q == cudaErrorNotReady) return true;
            FG_PIPE_TRY(q);
            bool again;
            if (!settle(to_download.front(), &again)) return false;
            if (again) return true; // the SIMT kernels compute it now
        }
        int64_t ld;
        char *src = c_dev(jb, &ld);
        const size_t es = plan.es;
        const Chunking ch = c_chunks(jb);
        while (run.queued < run.chunks) {
            if (free_slots.empty()) return true;
            const int s = free_slots.front();
            free_slots.pop_front();
            int64_t col, nc;
            size_t off, w;
            ch.chunk(run.queued, &col, &nc, &off, &w);
            Slot &sl = cx.slots[s];
            FG_PIPE_TRY(cudaMemcpy2DAsync(sl.host, w, src + (col * ld) * es + off, ld * es, w, nc,
                                          cudaMemcpyDeviceToHost, cx.down));
            FG_PIPE_TRY(cudaEventRecord(sl.ev, cx.down));
            if (out_done && cudaEventRecord(out_done, cx.down) != cudaSuccess) cudaGetLastError(); // trace only
            sl.job = to_download.front();
            sl.chunk = run.queued++;
            in_down.push_back(s);
        }
        if (plan.hc) FG_PIPE_TRY(cudaEventRecord(c_free[plan.c_slot(jb)], cx.down));
        to_download.pop_front();
    }
    return true;
}

// A copy out has landed in slot s: into C with it.
void Pipeline::unstage(int s)
{
    Slot &sl = cx.slots[s];
    const Job &jb = plan.jobs[sl.job];
    int64_t col, nc;
    size_t off, w;
    c_chunks(jb).chunk(sl.chunk, &col, &nc, &off, &w);
    const size_t hld = (size_t)g->ldc * plan.es;
    const fg_copy2d cp = {c_host(jb) + col * hld + off, hld, sl.host, w, w, (size_t)nc};
    const double t0 = fg_now_s();
    fg_stage_copy(&cp);
    copy_s += fg_now_s() - t0;
    bytes_out += w * nc;
    runs[sl.job].saved++; // chunks come out in order
    sl.job = -1;
    free_slots.push_back(s);
}

// ---- where the blocks lie ----

// Where job jb's C lies on the device, and in the caller's memory.
char *Pipeline::c_dev(const Job &jb, int64_t *ld) const
{
    const size_t es = plan.es;
    if (!plan.hc) {
        *ld = g->ldc;
        return (char *)g->c + (jb.r0 + jb.c0 * g->ldc) * es;
    }
    *ld = plan.mp;
    if (plan.incore) return dC + (size_t)(jb.r0 + jb.c0 * plan.mp) * es;
    return dC + ((size_t)plan.c_slot(jb) * (size_t)(plan.mp * plan.nb) + (size_t)(jb.r0 - jb.p * plan.mp)) * es;
}
char *Pipeline::c_host(const Job &jb) const { return (char *)g->c + (jb.r0 + jb.c0 * g->ldc) * plan.es; }
// Job jb's piece of C in chunks of a slot.
Chunking Pipeline::c_chunks(const Job &jb) const
{
    return {(size_t)(jb.r1 - jb.r0) * plan.es, cx.slot_bytes, jb.c1 - jb.c0};
}

const char *Pipeline::a_view(int64_t r0, int p, int64_t *ld) const
{
    const size_t es = plan.es;
    const int64_t k = plan.k;
    if (!plan.ha) {
        *ld = g->lda;
        return (const char *)g->a + (g->ta == 'N' ? r0 : r0 * g->lda) * es;
    }
    const int64_t lr = r0 - p * plan.mp;
    *ld = g->ta == 'N' ? plan.mp : k;
    return dA + (g->ta == 'N' ? lr : lr * k) * es;
}

// Rows [r0, r1) of op(A), its columns [k0, k1).
bool Pipeline::upload_a(int64_t r0, int64_t r1, int p, int64_t k0, int64_t k1)
{
    const size_t es = plan.es;
    const int64_t k = plan.k, mp = plan.mp;
    const int64_t lr = r0 - p * mp;
    const char *src = (const char *)g->a;
    const size_t sld = (size_t)g->lda * es;
    if (g->ta == 'N')
        return upload(dA + (lr + k0 * mp) * es, mp * es, src + r0 * es + k0 * sld, sld, (r1 - r0) * es, k1 - k0,
                      ev_in);
    return upload(dA + (lr * k + k0) * es, k * es, src + r0 * sld + k0 * es, sld, (k1 - k0) * es, r1 - r0, ev_in);
}

char *Pipeline::b_slot_ptr(int s) const { return dB + (size_t)s * (size_t)(plan.k * plan.nb) * plan.es; }

const char *Pipeline::b_view(const Job &jb, int64_t *ld) const
{
    if (!plan.hb || plan.incore) return b_at(jb.c0, ld);
    *ld = g->tb == 'N' ? plan.k : plan.nb;
    return b_slot_ptr(b_slot_of[jb.j]);
}

// Column c0 of op(B), where B stays whole (on the device from the start, or in core).
const char *Pipeline::b_at(int64_t c0, int64_t *ld) const
{
    const size_t es = plan.es;
    const int64_t k = plan.k;
    if (!plan.hb) {
        *ld = g->ldb;
        return (const char *)g->b + (g->tb == 'N' ? c0 * g->ldb : c0) * es;
    }
    // In core, B whole, packed: k x n, or n x k for B^T.
    *ld = g->tb == 'N' ? k : plan.n;
    return dB + (g->tb == 'N' ? c0 * k : c0) * es;
}

// Out of core: makes B block j resident, in the least recently used slot once its last kernel
// is done; the kernels' streams wait for it.
bool Pipeline::ensure_b(int j, int64_t stamp)
{
    if (!plan.hb) return true;
    int s = b_slot_of[j];
    if (s < 0) {
        s = 0;
        for (int t = 1; t < plan.b_slots; t++)
            if (b_stamp[t] < b_stamp[s]) s = t;
        if (b_holds[s] >= 0) {
            b_slot_of[b_holds[s]] = -1;
            FG_PIPE_TRY(cudaStreamWaitEvent(cx.up, runs[b_last_job[s]].done, 0));
        }
        b_holds[s] = j;
        b_slot_of[j] = s;
        const size_t es = plan.es;
        const int64_t k = plan.k, nb = plan.nb;
        const int64_t c0 = j * nb, c1 = std::min(plan.n, c0 + nb);
        const char *src = (const char *)g->b;
        const size_t sld = (size_t)g->ldb * es;
        const bool ok = g->tb == 'N'
                            ? upload(b_slot_ptr(s), k * es, src + c0 * sld, sld, k * es, c1 - c0, b_ready[s])
                            : upload(b_slot_ptr(s), nb * es, src + c0 * es, sld, (c1 - c0) * es, k, b_ready[s]);
        if (!ok) return false;
    }
    b_stamp[s] = stamp;
    return comp_wait(b_ready[s]);
}

// In core: column block j of op(B), its rows [k0, k1).
bool Pipeline::upload_b_incore(int j, int64_t k0, int64_t k1)
{
    const size_t es = plan.es;
    const int64_t k = plan.k, n = plan.n;
    const int64_t c0 = plan.cols_at[j], c1 = plan.cols_at[j + 1];
    const char *src = (const char *)g->b;
    const size_t sld = (size_t)g->ldb * es;
    if (g->tb == 'N')
        return upload(dB + (c0 * k + k0) * es, k * es, src + c0 * sld + k0 * es, sld, (k1 - k0) * es, c1 - c0, ev_in);
    return upload(dB + (c0 + k0 * n) * es, n * es, src + c0 * es + k0 * sld, sld, (c1 - c0) * es, k1 - k0, ev_in);
}

} // namespace fg_offload
