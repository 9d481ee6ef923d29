// offload_exec.cu: running a plan (offload_pipeline.h): the device buffers, the memory budget,
// the kernels' streams and order, and the loop over the jobs.
#include "backends/cuda/offload_pipeline.h"

namespace fg_offload {

namespace {
// The call as the plan sees it.
Problem problem_of(const fg_call *call)
{
    const fg_gemm_args *g = call->g;
    const bool ab = fg_reads_ab(g);
    Problem p;
    p.m = g->m, p.n = g->n, p.k = g->k;
    p.es = fg_elem_size(g->dt);
    p.ha = ab && call->ops.a == FG_MEM_HOST;
    p.hb = ab && call->ops.b == FG_MEM_HOST;
    p.hc = call->ops.c == FG_MEM_HOST;
    p.reads_c = g->beta != 0;
    p.block = call->set->block;
    p.tail_rows = call->set->tail_rows;
    // The Ozaki scheme where FASTGEMM_OZAKI asks for it; with auto, only where the SIMT kernels
    // would be the longer pole: their time at about 40 TFLOP/s in pieces above the copies' at
    // about 55 GB/s, 2 m n k / 40e12 > 4 (m k + k n + m n) / 55e9. Elsewhere the scheme's faster
    // kernels save nothing, and its kernels wait for whole blocks (no slices of k).
    const double mnk = (double)p.m * (double)p.n * (double)p.k, moved = (double)(p.m * p.k + p.k * p.n + p.m * p.n);
    // DGEMM's scheme takes device operands only.
    p.whole_k =
        ab && g->dt == FG_F32 && fg_ozaki_wanted(call->set, g) && (call->set->ozaki == 1 || mnk > 1455 * moved);
    return p;
}
} // namespace

Pipeline::Pipeline(Context &c, const fg_call *call_, int d)
    : cx(c), call(call_), g(call_->g), dev(d), plan(problem_of(call_))
{
}

Pipeline::~Pipeline()
{
    for (cudaEvent_t e : timeline) cudaEventDestroy(e);
    if (out_done) cudaEventDestroy(out_done);
}

bool Pipeline::fail(cudaError_t e, const char *what)
{
    if (err == cudaSuccess) {
        err = e;
        failed_call = what;
    }
    return false;
}

void Pipeline::stamp(cudaStream_t s)
{
    cudaEvent_t e;
    if (cudaEventCreate(&e) != cudaSuccess) return (void)cudaGetLastError();
    timeline.push_back(e);
    cudaEventRecord(e, s);
}

// The device memory the pipeline may use: free memory plus what the pool holds unused, less a
// margin for the kernels' workspace and others, capped by the settings' device_mb.
size_t Pipeline::budget() const
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 0;
    uint64_t reserved = 0, used = 0;
    if (cudaMemPool_t pool = fg_cuda_pool(dev)) {
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
    }
    cudaGetLastError();
    size_t have = free_b + (size_t)(reserved - used);
    const size_t margin = (size_t)128 << 20;
    have = have > margin ? have - margin : 0;
    const int64_t cap = call->set->device_mb;
    if (cap > 0) have = std::min(have, (size_t)cap << 20);
    return have;
}

// The plan's buffers, on comp; the other streams wait for them.
bool Pipeline::allocate()
{
    auto get = [&](char **p, size_t bytes) -> cudaError_t {
        return bytes ? fg_pool_alloc(reinterpret_cast<void **>(p), bytes, cx.comp) : cudaSuccess;
    };
    FG_PIPE_TRY(get(&dA, plan.a_bytes()));
    FG_PIPE_TRY(get(&dB, plan.b_bytes()));
    FG_PIPE_TRY(get(&dC, plan.c_bytes()));
    if (plan.incore && plan.whole_k) { // without them, the SIMT kernels run every job
        bool ok;
        const char *note;
        FG_PIPE_TRY(fg_ozaki_sides_alloc(g, &sides, cx.comp, &ok, &note));
        if (ok) FG_PIPE_TRY(cx.reserve_statuses(plan.jobs.size())); // before any status is copied
        if (ok && !prepare(plan.ha ? -1 : 0, plan.hb ? -1 : 0)) return false; // operands on the device
    }
    FG_PIPE_TRY(cudaEventRecord(ev_alloc, cx.comp));
    FG_PIPE_TRY(cudaStreamWaitEvent(cx.comp2, ev_alloc, 0));
    FG_PIPE_TRY(cudaStreamWaitEvent(cx.up, ev_alloc, 0));
    FG_PIPE_TRY(cudaStreamWaitEvent(cx.down, ev_alloc, 0));
    return true;
}

void Pipeline::release()
{
    for (char **p : {&dA, &dB, &dC})
        if (*p) cudaFreeAsync(*p, cx.comp);
    dA = dB = dC = nullptr;
    fg_ozaki_sides_free(&sides, cx.comp);
}

// The kernels' streams wait for e (both, in core).
bool Pipeline::comp_wait(cudaEvent_t e)
{
    FG_PIPE_TRY(cudaStreamWaitEvent(cx.comp, e, 0));
    if (plan.incore) FG_PIPE_TRY(cudaStreamWaitEvent(cx.comp2, e, 0));
    return true;
}

// In core the kernels alternate between two streams, so that one kernel's last wave, which
// leaves SMs idle, overlaps the next kernel's first (4096 x 4096 pieces of 128 x 256 tiles are
// 3.9 waves on 132 SMs). Job ji waits for the latest earlier job of the other stream whose
// piece of C overlaps its own: an earlier slice of k, or the first of two passes.
bool Pipeline::order(int ji)
{
    if (!plan.incore) return true; // one stream
    const Job &jb = plan.jobs[ji];
    for (int i = ji - 1; i >= 0; i--) {
        const Job &o = plan.jobs[i];
        if (runs[i].on == runs[ji].on || o.r1 <= jb.r0 || jb.r1 <= o.r0 || o.c1 <= jb.c0 || jb.c1 <= o.c0)
            continue;
        FG_PIPE_TRY(cudaStreamWaitEvent(stream_of(ji), runs[i].done, 0));
        break;
    }
    return true;
}

// On comp, the sides of the Ozaki scheme (where it has them): op(A)'s row block a_block and
// op(B)'s column block b_block as they arrive, or (0 for an operand on the device) all of it.
bool Pipeline::prepare(int a_block, int b_block)
{
    if (!sides.mem) return true;
    if (a_block >= 0) {
        const int64_t r0 = plan.ha ? plan.rows_at[a_block] : 0, r1 = plan.ha ? plan.rows_at[a_block + 1] : plan.m;
        int64_t ld;
        const char *a = a_view(r0, 0, &ld);
        FG_PIPE_TRY(fg_ozaki_prepare_a(g, &sides, r0, r1, a, ld, cx.comp));
    }
    if (b_block >= 0) {
        const int64_t c0 = plan.hb ? plan.cols_at[b_block] : 0, c1 = plan.hb ? plan.cols_at[b_block + 1] : plan.n;
        int64_t ld;
        const char *b = b_at(c0, &ld);
        FG_PIPE_TRY(fg_ozaki_prepare_b(g, &sides, c0, c1, b, ld, cx.comp));
    }
    return true;
}

bool Pipeline::launch(int ji)
{
    const long fault = call->set->fault_after;
    if (fault > 0 && ++launches == fault) return fail(cudaErrorMemoryAllocation, "kernel launch (FASTGEMM_FAULT_AFTER)");
    if (!compute(ji, plan.incore && plan.whole_k)) return false;
    runs[ji].launched = true;
    return true;
}

// Job ji's kernels on its stream, then its done event: by the Ozaki scheme where `ozaki` allows
// it, the sides are there and FASTGEMM_OZAKI asks for it (its status to cx.statuses[ji], its C
// held back until settle), else the SIMT or DMMA kernels.
bool Pipeline::compute(int ji, bool ozaki)
{
    const Job &jb = plan.jobs[ji];
    const size_t es = plan.es;
    const cudaStream_t ks = stream_of(ji);
    fg_gemm_args sg = *g;
    sg.m = jb.r1 - jb.r0;
    sg.n = jb.c1 - jb.c0;
    sg.k = plan.kend(jb) - jb.k0;
    if (jb.k0 > 0) sg.beta = 1; // a later slice adds to what the earlier ones left
    int64_t lda = 0, ldb = 0, ldc;
    char *pc = c_dev(jb, &ldc);
    if (!timeline.empty()) stamp(ks);
    if (fg_reads_ab(g)) {
        const char *pa = a_view(jb.r0, jb.p, &lda);
        const char *pb = b_view(jb, &ldb);
        pa += (g->ta == 'N' ? jb.k0 * lda : jb.k0) * (int64_t)es;
        pb += (g->tb == 'N' ? jb.k0 : jb.k0 * ldb) * (int64_t)es;
        bool queued = false;
        if (ozaki && sides.mem && fg_ozaki_wanted(call->set, &sg)) {
            const char *note;
            FG_PIPE_TRY(fg_ozaki_queue(&sg, &sides, jb.r0, jb.c0, pa, lda, pb, ldb, pc, ldc, ks, &cx.statuses[ji],
                                       &queued, &note));
        }
        runs[ji].ozaki = queued;
        ozaki_jobs += queued;
        if (!queued) FG_PIPE_TRY(fg_run_gemm(dev, call->set, &sg, pa, lda, pb, ldb, pc, ldc, ks));
    } else {
        FG_PIPE_TRY(fg_run_scale_c(&sg, pc, ldc, ks));
    }
    if (!timeline.empty()) stamp(ks);
    FG_PIPE_TRY(cudaEventRecord(runs[ji].done, ks));
    return true;
}

// Job ji's kernels are done. Where they were the Ozaki scheme's and its status did not accept
// the call, its C is as it was, and the SIMT kernels compute it now (*again: its done event is
// recorded anew, and its C is not final until that one). In core only, where A, B and C stay
// on the device and nothing else waits for the job.
bool Pipeline::settle(int ji, bool *again)
{
    *again = false;
    JobRun &run = runs[ji];
    if (!run.ozaki) return true;
    run.ozaki = false;
    const Job &jb = plan.jobs[ji];
    const fg_ozaki_status &st = cx.statuses[ji];
    if (fg_ozaki_accepts(&st, jb.r1 - jb.r0, jb.c1 - jb.c0)) {
        ozaki_summed += st.uncertified > 0;
        return true;
    }
    ozaki_declined++;
    *again = true;
    return compute(ji, false);
}

bool Pipeline::execute()
{
    const bool ha = plan.ha, hb = plan.hb, hc = plan.hc;
    t_start = fg_now_s();
    if (call->traced) {
        stamp(cx.comp);
        if (cudaEventCreate(&out_done) != cudaSuccess) out_done = nullptr, cudaGetLastError();
    }
    size_t avail = budget();
    for (int attempt = 0;; attempt++) { // the memory free now may be gone when we allocate
        if (!plan.make(avail)) return fail(cudaErrorMemoryAllocation, "the pipeline's plan (device memory)");
        runs.assign(plan.jobs.size(), JobRun());
        FG_PIPE_TRY(cx.reserve_events(plan.jobs.size() + plan.b_slots + plan.c_slots + 3));
        ev_in = cx.events[0];
        ev_alloc = cx.events[1];
        ev_prep = cx.events[2];
        if (allocate()) break;
        release();
        if (attempt == 3 || err != cudaErrorMemoryAllocation) return false;
        cudaGetLastError();
        err = cudaSuccess;
        avail /= 2;
    }
    const std::vector<Job> &jobs = plan.jobs;
    const bool incore = plan.incore;
    size_t e = 3;
    for (size_t ji = 0; ji < jobs.size(); ji++) {
        runs[ji].on = incore ? (int)(ji % 2) : 0;
        runs[ji].done = cx.events[e++];
        runs[ji].chunks = hc && plan.final_slice(jobs[ji]) ? c_chunks(jobs[ji]).count() : 0;
    }
    b_ready.assign(cx.events.begin() + e, cx.events.begin() + e + plan.b_slots);
    e += plan.b_slots;
    c_free.assign(cx.events.begin() + e, cx.events.begin() + e + plan.c_slots);
    b_slot_of.assign(plan.nblk_b, -1);
    b_holds.assign(plan.b_slots, -1);
    b_last_job.assign(plan.b_slots, -1);
    b_stamp.assign(plan.b_slots, -1);
    c_last_job.assign(plan.c_slots, -1);
    free_slots.clear();
    for (int s = (int)cx.slots.size() - 1; s >= 0; s--) free_slots.push_back(s);

    int last_upload = -1; // in core: the last job that brings blocks of A or B
    for (int ji = 0; incore && ji < (int)jobs.size(); ji++)
        if (jobs[ji].a_block >= 0 || jobs[ji].b_block >= 0) last_upload = ji;
    uploads_left = last_upload >= 0;
    for (int ji = 0; ji < (int)jobs.size(); ji++) {
        const Job &jb = jobs[ji];
        if (ji == last_upload + 1 && uploads_left) {
            uploads_done_s = fg_now_s() - t_start;
            uploads_left = false;
        }
        if (incore && (jb.a_block >= 0 || jb.b_block >= 0)) { // A_0 comes before B_0
            if (jb.a_block >= 0 &&
                !upload_a(plan.rows_at[jb.a_block], plan.rows_at[jb.a_block + 1], jb.p, jb.k0, plan.kend(jb)))
                return false;
            if (jb.b_block >= 0 && !upload_b_incore(jb.b_block, jb.k0, plan.kend(jb))) return false;
            if (!comp_wait(ev_in)) return false;
            if (sides.mem) { // whole_k: each block arrives whole
                if (!prepare(jb.a_block, jb.b_block)) return false;
                FG_PIPE_TRY(cudaEventRecord(ev_prep, cx.comp));
                FG_PIPE_TRY(cudaStreamWaitEvent(cx.comp2, ev_prep, 0));
            }
        }
        const bool new_block = !incore && (ji == 0 || jobs[ji - 1].p != jb.p || jobs[ji - 1].j != jb.j);
        if (new_block) {
            if (hc) { // the C slot's last tenant must be on its way out before it is reused
                const int cs = plan.c_slot(jb);
                if (c_last_job[cs] >= 0) {
                    const JobRun &old = runs[c_last_job[cs]];
                    while (old.queued < old.chunks)
                        if (!poll() || !wait_one()) return false;
                    FG_PIPE_TRY(cudaStreamWaitEvent(cx.up, c_free[cs], 0));
                    if (!comp_wait(c_free[cs])) return false;
                }
            }
            if (!ensure_b(jb.j, ji)) return false;
            // A new panel of A overwrites the last one: after the last panel's kernels.
            if (ha && ji > 0 && jobs[ji - 1].p != jb.p) FG_PIPE_TRY(cudaStreamWaitEvent(cx.up, runs[ji - 1].done, 0));
        }
        if (!incore && jb.a_block >= 0) { // out of core: A block by block, each used at once
            if (!upload_a(plan.rows_at[jb.a_block], plan.rows_at[jb.a_block + 1], jb.p, 0, plan.k)) return false;
            if (!comp_wait(ev_in)) return false;
        }
        if (plan.brings_c(jb)) {
            int64_t ld;
            char *dst = c_dev(jb, &ld);
            if (!upload(dst, ld * plan.es, c_host(jb), g->ldc * plan.es, (jb.r1 - jb.r0) * plan.es, jb.c1 - jb.c0,
                        ev_in))
                return false;
            if (!comp_wait(ev_in)) return false;
        }
        if (!order(ji) || !launch(ji)) return false;
        if (hb && !incore) b_last_job[b_slot_of[jb.j]] = ji;
        if (hc && plan.final_slice(jb)) {
            if (!incore) c_last_job[plan.c_slot(jb)] = ji;
            to_download.push_back(ji);
        }
        if (!poll()) return false;
    }
    if (uploads_left) uploads_done_s = fg_now_s() - t_start;
    uploads_left = false;
    while (!to_download.empty() || !in_down.empty())
        if (!wait_one() || !poll()) return false;
    // C on the device: the Ozaki scheme's outcomes (C in host memory had them before going out).
    for (int ji = 0; ji < (int)jobs.size(); ji++) {
        if (!runs[ji].ozaki) continue;
        FG_PIPE_TRY(cudaEventSynchronize(runs[ji].done));
        bool again;
        if (!settle(ji, &again)) return false;
    }
    FG_PIPE_TRY(cudaStreamSynchronize(cx.comp));
    FG_PIPE_TRY(cudaStreamSynchronize(cx.comp2));
    FG_PIPE_TRY(cudaStreamSynchronize(cx.up));
    release();
    return true;
}

} // namespace fg_offload
