// offload.cu: GEMMs with an operand in host memory, on the GPU.
//
// Each device gets a context at its first such call, kept for the life of the process: four
// streams (copies in, two for kernels, copies out), events, and a ring of pinned staging
// buffers; device memory comes from a memory pool that keeps what it has (cuda/offload.cu's
// device_pool). So the hot path of a call makes no cudaMalloc, no cudaHostAlloc and never
// page-locks user memory.
//
// The pipeline cuts op(A) into row blocks and op(B) and C into column blocks:
//
//   B_0 in;  for each row block i: A_i in, C(i, 0) = A_i B_0        (the first column of C)
//   for each later column block j: B_j in, C(:, j) = A B_j
//
// and every finished piece of C goes out while later ones are computed (in core, once all of A
// and B is in: the host's memory copies are what both directions share). The host side (staging
// the caller's pageable memory into the pinned ring and back, cuda/staging.c) runs on the
// calling thread and the staging threads; copies in, kernels and copies out overlap on the
// streams. C is uploaded only when beta != 0; operands already on the device are used in
// place. When A, B and C do not fit in the device memory there is to have, the rows of C are
// cut into panels: the A panel stays, the column blocks of B stream through a ring of device
// slots (in serpentine order, so those still resident at a panel's end are reused), and C
// blocks go through a ring of their own: out of core, on the same path.
//
// When a CUDA call fails midway, what was already copied back stays, and the CPU BLAS computes
// the rest of C (when it can read A and B), so the caller still gets the right C.
#include "kernels.h"
#include "staging.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <vector>

namespace {

constexpr int MAX_DEVICES = 64;

// ---- the device memory pool: the pipeline's buffers and the split-K workspaces ----

std::once_flag pool_once[MAX_DEVICES];
cudaMemPool_t pools[MAX_DEVICES];

// A pool of our own, so the application's default pool keeps its settings. It keeps up to a
// quarter of the device's memory between calls (the rest goes back at synchronisation).
cudaMemPool_t device_pool(int dev)
{
    if (dev < 0 || dev >= MAX_DEVICES) return nullptr;
    std::call_once(pool_once[dev], [dev] {
        cudaMemPoolProps props = {};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        cudaMemPool_t p;
        size_t free_b = 0, total_b = 0;
        if (cudaMemPoolCreate(&p, &props) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
            cudaGetLastError();
            return;
        }
        uint64_t keep = total_b / 4;
        cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
        cudaGetLastError();
        pools[dev] = p;
    });
    return pools[dev];
}

// ---- the per-device context ----

struct Slot {
    char *host;
    cudaEvent_t ev; // recorded after the copy that last used the buffer
    int job;        // a copy out in flight: its job and chunk; -1 otherwise
    int64_t chunk;
};

struct Context {
    std::mutex lock; // one pipelined call at a time per device: it fills the PCIe link alone
    std::atomic<bool> ready{false}; // read without the lock by fg_gpu_warm
    cudaStream_t up, comp, comp2, down; // comp2: in core, every other kernel (Pipeline::launch)
    std::vector<Slot> slots;
    size_t slot_bytes = 0;
    std::vector<cudaEvent_t> events; // grown as calls need more, kept

    cudaError_t init(size_t pinned_bytes, size_t slot_max);
    cudaError_t reserve_events(size_t n)
    {
        while (events.size() < n) {
            cudaEvent_t e;
            cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
            if (err != cudaSuccess) return err;
            events.push_back(e);
        }
        return cudaSuccess;
    }
};

Context contexts[MAX_DEVICES];

cudaError_t Context::init(size_t pinned_bytes, size_t slot_max)
{
    if (ready) return cudaSuccess;
    // Slots of up to slot_max (16 MB by default: a full-speed DMA), at least four of them.
    slot_bytes = std::min<size_t>(slot_max, pinned_bytes / 4) & ~(size_t)4095;
    if (slot_bytes < 4096) slot_bytes = 4096;
    const size_t n = std::max<size_t>(4, pinned_bytes / slot_bytes);
    char *ring = nullptr;
    cudaError_t err;
    if ((err = cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking)) != cudaSuccess) return err;
    if ((err = cudaStreamCreateWithFlags(&comp, cudaStreamNonBlocking)) != cudaSuccess) goto no_comp;
    if ((err = cudaStreamCreateWithFlags(&comp2, cudaStreamNonBlocking)) != cudaSuccess) goto no_comp2;
    if ((err = cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking)) != cudaSuccess) goto no_down;
    if ((err = cudaHostAlloc(reinterpret_cast<void **>(&ring), n * slot_bytes, cudaHostAllocDefault)) != cudaSuccess)
        goto no_ring;
    for (size_t i = 0; i < n; i++) {
        Slot s = {ring + i * slot_bytes, nullptr, -1, 0};
        if ((err = cudaEventCreateWithFlags(&s.ev, cudaEventDisableTiming)) != cudaSuccess) {
            for (Slot &t : slots) cudaEventDestroy(t.ev);
            slots.clear();
            cudaFreeHost(ring);
            goto no_ring;
        }
        slots.push_back(s);
    }
    ready = true;
    return cudaSuccess;
no_ring:
    cudaStreamDestroy(down);
no_down:
    cudaStreamDestroy(comp2);
no_comp2:
    cudaStreamDestroy(comp);
no_comp:
    cudaStreamDestroy(up);
    return err;
}

// ---- the pipeline of one call ----

// A 2-D region of `cols` columns of `width` bytes, cut into chunks that fit one slot: whole
// columns when a column fits, else pieces of one column.
struct Chunking {
    size_t width, slot;
    int64_t cols;
    int64_t per_chunk() const { return (int64_t)(slot / width); }       // columns, when width <= slot
    int64_t pieces() const { return (int64_t)((width + slot - 1) / slot); } // per column, else
    int64_t count() const
    {
        if (width == 0 || cols == 0) return 0;
        return width <= slot ? (cols + per_chunk() - 1) / per_chunk() : cols * pieces();
    }
    // Chunk q: columns [col, col + ncols), bytes [off, off + w) of each.
    void chunk(int64_t q, int64_t *col, int64_t *ncols, size_t *off, size_t *w) const
    {
        if (width <= slot) {
            *col = q * per_chunk();
            *ncols = std::min(per_chunk(), cols - *col);
            *off = 0;
            *w = width;
        } else {
            *col = q / pieces();
            *ncols = 1;
            *off = (size_t)(q % pieces()) * slot;
            *w = std::min(slot, width - *off);
        }
    }
};

struct Job {
    int64_t r0, r1, c0, c1; // the region of C it computes
    int p, j;               // its row panel and column block
    int a_block;            // the row block of A copied in just before it, or -1
    int b_block = -1;       // in core: the column block of B copied in just before it, or -1
    int64_t k0 = 0, k1 = -1; // in core: its slice of the k range (k1 < 0: all of it), and
                             // of a_block and b_block, when it copies them in
    int64_t chunks = 0, queued = 0, saved = 0; // its copy out: chunks, enqueued, written to C
    bool launched = false;
    int on = 0;                 // its kernel's stream: 0 comp, 1 comp2
    cudaEvent_t done = nullptr; // after its kernel
};

struct Pipeline {
    Context &cx;
    const fg_gemm_args *g;
    const fg_operands *ops;
    int dev;
    size_t es;
    bool ha, hb, hc, reads_c;
    int64_t m, n, k;
    // the plan
    int64_t mb, nb;     // row block of A, column block of B and C
    int64_t mp;         // rows of a panel
    int panels;
    int64_t nblk_b;     // column blocks
    int b_slots, c_slots;
    bool incore;        // A, B and C stay whole on the device (else panels and slots)
    std::vector<int64_t> rows_at, cols_at; // in core: where the blocks of A and B begin
    char *dA = nullptr, *dB = nullptr, *dC = nullptr;
    // state
    std::vector<Job> jobs;
    // Free slots, the least recently freed first. A copy out takes the front: the DMA's writes
    // to pinned memory that the host's cores have just read (a copy into C) wait for those cores'
    // caches to let go of the lines, and a 16 MB copy out into a slot that 16 threads had just
    // copied from took 0.45-1.3 ms on the H100 host, instead of 0.31.
    std::deque<int> free_slots;
    std::deque<int> in_up, in_down; // slots with a copy in flight, in issue order
    std::deque<int> to_download;    // jobs whose C still has to come out, in order
    std::vector<int> b_slot_of, b_holds, b_last_job; // B block <-> device slot
    std::vector<int64_t> b_stamp;
    std::vector<int> c_last_job;                   // C slot: its last job
    std::vector<cudaEvent_t> b_ready, c_free;
    cudaEvent_t ev_in = nullptr, ev_alloc = nullptr;
    cudaError_t err = cudaSuccess;
    const char *failed_call = "";
    long launches = 0;
    // for the trace line
    double copy_s = 0, wait_s = 0;
    size_t bytes_in = 0, bytes_out = 0;
    // Traced calls only: timing events, the call's start (on comp) and then a pair around each
    // kernel on its own stream (where the GPU computed, and where it waited for copies)
    std::vector<cudaEvent_t> timeline;
    cudaEvent_t out_done = nullptr; // traced: after the last copy out
    double t_start = 0;        // when the call began
    double uploads_done_s = 0; // in core: when the last block of A and B had been staged
    // In core, the copies out wait until every block of A and B has been staged: the host's
    // memory copies are what the two directions share, and with the operands in sooner the GPU
    // finishes sooner (dgemm_ 12288 on the H100 host: 84.8 against 87.1 ms; the others within
    // their noise). Out of core, C's slots must be emptied as the panels go.
    bool uploads_left = false;

    Pipeline(Context &c, const fg_gemm_args *g_, const fg_operands *o, int d)
        : cx(c), g(g_), ops(o), dev(d), es(fg_elem_size(g_->dt)), m(g_->m), n(g_->n), k(g_->k)
    {
        const bool ab = fg_reads_ab(g);
        ha = ab && ops->a == FG_MEM_HOST;
        hb = ab && ops->b == FG_MEM_HOST;
        hc = ops->c == FG_MEM_HOST;
        reads_c = g->beta != 0;
    }

    ~Pipeline()
    {
        for (cudaEvent_t e : timeline) cudaEventDestroy(e);
        if (out_done) cudaEventDestroy(out_done);
    }
    void stamp(cudaStream_t s)
    {
        cudaEvent_t e;
        if (cudaEventCreate(&e) != cudaSuccess) return (void)cudaGetLastError();
        timeline.push_back(e);
        cudaEventRecord(e, s);
    }
    // "first kernel at X ms, kernels busy Y of Z ms, the last done at W ms, the last copy out at
    // V ms" from the timeline. Busy: the GPU time covered by at least one kernel (two streams
    // overlap).
    void gpu_times(double *first, double *busy, double *span, double *end, double *out) const
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

    bool fail(cudaError_t e, const char *call)
    {
        if (err == cudaSuccess) {
            err = e;
            failed_call = call;
        }
        return false;
    }
#define FG_TRY(call)                                                                             \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) return fail(e_, #call);                                           \
    } while (0)

    // ---- the plan: block sizes, and panels when the operands do not all fit ----
    size_t need(int64_t rows, int64_t blk, int bs, int cs) const
    {
        return es * ((ha ? (size_t)(rows * k) : 0) + (size_t)bs * (hb ? (size_t)(k * blk) : 0) +
                     (size_t)cs * (hc ? (size_t)(rows * blk) : 0));
    }
    bool plan(int64_t block, size_t budget)
    {
        for (int64_t b = block;; b /= 2) {
            mb = nb = b;
            nblk_b = (n + nb - 1) / nb;
            if (need(m, nb, (int)nblk_b, (int)nblk_b) <= budget) { // in core: all of it stays
                mp = m, panels = 1, b_slots = c_slots = (int)nblk_b;
                incore = true;
                return true;
            }
            // Out of core: the fewest panels that leave room for 2 B slots and 2 C slots.
            const int cs = (int)std::min<int64_t>(nblk_b, 2);
            const int64_t nblk_a = (m + mb - 1) / mb;
            for (int64_t p = 1; p <= nblk_a; p++) {
                const int64_t rows = ((m + p - 1) / p + mb - 1) / mb * mb;
                const size_t fixed = need(rows, nb, 0, cs);
                const size_t bblk = hb ? es * (size_t)(k * nb) : 0;
                if (fixed + 2 * bblk > budget) continue;
                mp = std::min(rows, m);
                panels = (int)((m + mp - 1) / mp);
                incore = false;
                c_slots = cs;
                b_slots = bblk ? (int)std::min<int64_t>(nblk_b, (int64_t)((budget - fixed) / bblk)) : 0;
                return true;
            }
            if (b <= 64) return false; // smaller blocks would only slow the kernels down
        }
    }

    // In core: the blocks of A and B come in alternately (A_0, B_0, A_1, B_1, ...; an operand
    // on the device has all its blocks from the start), and each arrival brings the kernels it
    // makes possible: A_i times the B blocks present, the A blocks present times B_j. The work
    // on hand grows with the square of the data in, so the GPU is soon busy; sooner still
    // because the first arrivals (but the last) come in slices of k, each bringing its kernels
    // on that slice (C accumulates on the device; the first slice applies beta). Kernels are
    // at most 4096 x 4096 (two blocks a side for smaller blocks), so that C comes out in pieces
    // while the rest is computed, and those of the last arrival at most 2048 rows, the last
    // ones fewer still (FASTGEMM_TAIL_ROWS), so that little of C is left to come out after the
    // last kernel.
    static constexpr int SLICED_ARRIVALS = 3;
    void schedule_incore()
    {
        jobs.clear();
        rows_at = bounds(m, mb);
        cols_at = bounds(n, nb);
        const int nra = (int)rows_at.size() - 1, ncb = (int)cols_at.size() - 1;
        const int64_t piece = std::min(2 * nb, std::max<int64_t>(nb, 4096));
        // The slices of the first arrivals, up to 8: only where a slice's kernels still fill the
        // GPU (blocks of 2048 or more a side) and reading and writing C once per slice costs
        // little against its FMAs (1024 steps of k for floats, 2048 for doubles: ~6% at most).
        // Floats halve the count from one arrival to the next: their kernels outlast their
        // copies, so a later arrival is mostly in before the GPU gets to it, and thin slices only
        // run slower kernels (4096 x 4096 x 1024: 0.93 of cuBLAS, against 0.98 at k = 4096). On
        // the H100 host, sgemm_ 12288 took 76.8 ms so, 79.0 with 8 slices each; dgemm_ 12288,
        // whose copies take twice as long, went the other way (88.8 against 87.1 ms).
        const int64_t kmin = es == 4 ? 1024 : 2048;
        const bool can_slice = std::min(m, mb) >= 2048 && std::min(n, nb) >= 2048 && k >= 2 * kmin;
        auto slice_k = [&](int arr) -> int64_t { // the depth of arrival arr's slices
            const int64_t s = std::min<int64_t>(es == 4 ? 8 >> arr : 8, k / kmin);
            return !can_slice || s < 2 ? k : ((k + s - 1) / s + 63) / 64 * 64;
        };
        int arrival = 0;
        // The kernels of one arrival: C(r0:r1, c0:c1) on k in [kb, ke) (ke < 0: all of k, sliced
        // for the first arrivals), in pieces.
        const int64_t tail = (fg_get_config()->tail_rows + 127) / 128 * 128;
        auto add = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1, int a_blk, int b_blk, bool last, int64_t kb,
                       int64_t ke) {
            const int64_t rstep = last && hc ? std::min<int64_t>(piece, std::clamp<int64_t>(mb, 512, 2048)) : piece;
            int64_t step = ke - kb; // a pass's range of k: one job deep
            if (ke < 0) {
                // Not the last arrival, unless it is the only one: its kernels end the call, and
                // sliced they would leave all of their C to come out after the last one.
                const bool sliced = arrival < SLICED_ARRIVALS && (ha || hb) && (!last || arrival == 0);
                const int64_t kc = slice_k(arrival++);
                step = sliced && kc < k ? kc : std::max<int64_t>(k, 1); // k = 0: one job
            }
            const int64_t kstop = ke < 0 ? k : ke;
            for (int64_t k0 = kb; k0 == kb || k0 < kstop; k0 += step) {
                int a = a_blk, b = b_blk;
                auto job = [&](int64_t jr0, int64_t jr1, int64_t jc0, int64_t jc1) {
                    Job j = {jr0, jr1, jc0, jc1, 0, (int)(jc0 / nb), a};
                    j.b_block = b;
                    j.k0 = k0;
                    j.k1 = step < k ? std::min(k, k0 + step) : -1;
                    jobs.push_back(j);
                    a = b = -1;
                };
                for (int64_t c = c0; c < c1; c += piece) {
                    const int64_t ce = std::min(c1, c + piece);
                    // The call's last kernels: their last rows halve down to FASTGEMM_TAIL_ROWS, so
                    // that little of C is left to come out when the last one ends.
                    const bool ends = last && hc && ce == c1 && tail > 0 && k0 + step >= kstop;
                    std::vector<int64_t> cut;
                    for (int64_t r = r0; r < r1; r += rstep) cut.push_back(r);
                    if (ends)
                        for (int64_t r = cut.back(), left = r1 - r; left >= 2 * tail; left = r1 - r) {
                            r += (left - left / 2 + 127) / 128 * 128;
                            cut.push_back(r);
                        }
                    cut.push_back(r1);
                    for (size_t q = 0; q + 1 < cut.size(); q++) job(cut[q], cut[q + 1], c, ce);
                }
            }
        };
        if (!ha && !hb) { // only C is host memory: kernels by column blocks, C out as they end
            for (int j = 0; j < ncb; j++) add(0, m, cols_at[j], cols_at[j + 1], -1, -1, false, 0, -1);
            return;
        }
        // The blocks in alternately, on k in [kb, ke); the pass that ends the call has `final`.
        auto pass = [&](int64_t kb, int64_t ke, bool final) {
            int ia = ha ? 0 : nra, jb = hb ? 0 : ncb; // blocks present
            int pending_a = -1;                        // in before the next kernel
            while (ia < nra || jb < ncb) {
                if (ia < nra && (jb >= ncb || ia <= jb)) {
                    ia++;
                    if (jb > 0)
                        add(rows_at[ia - 1], rows_at[ia], 0, cols_at[jb], ia - 1, -1, final && ia == nra && jb == ncb,
                            kb, ke);
                    else
                        pending_a = ia - 1;
                } else {
                    jb++;
                    add(0, rows_at[ia], cols_at[jb - 1], cols_at[jb], pending_a, jb - 1,
                        final && ia == nra && jb == ncb, kb, ke);
                    pending_a = -1;
                }
            }
        };
        // Doubles in blocks of 2048 (the larger side 7172-8195), whose kernels take about as long
        // as their copies: in one pass the first arrivals bring little work and the last a quarter
        // of it, so on the H100 host the GPU waited for copies 6 of its 26 ms and had 10 ms of
        // kernels left when the last block was in. In two passes (the first half of k of every
        // block, then the second half) each arrival is half as long, and the first pass's
        // kernels are queued before the second pass's come; C comes out as the second pass's
        // kernels end. There, dgemm_ 8192's last kernel ended at 25.0-25.6 ms instead of
        // 28.3-32.9, and the call took 0.96-1.01x as long (four A/B runs, one H100 host whose
        // copies then bound it: perf/NOTES.md). With blocks of 4096 (n >= 12288) the GPU is
        // the longer pole, and two passes took 1.00-1.02x as long: not used there.
        if (es == 8 && can_slice && nra >= 2 && ncb >= 2 && std::max(mb, nb) <= 2048) {
            const int64_t kh = (k / 2 + 63) / 64 * 64;
            pass(0, kh, false);
            pass(kh, k, true);
        } else {
            pass(0, -1, true);
        }
    }
    // Block boundaries over `total`, blocks of b. (Cutting the first and last blocks smaller, to
    // start sooner and end sooner, measured slower on the H200 host: more, smaller kernels.)
    static std::vector<int64_t> bounds(int64_t total, int64_t b)
    {
        std::vector<int64_t> v{0};
        for (int64_t x = 0; x < total; x += b) v.push_back(std::min(total, x + b));
        return v;
    }

    void schedule()
    {
        if (incore) return schedule_incore();
        jobs.clear();
        rows_at = bounds(m, mb);
        const int64_t nblk_a = (m + mb - 1) / mb;
        for (int p = 0; p < panels; p++) {
            const int64_t pr0 = p * mp, pr1 = std::min(m, pr0 + mp);
            for (int64_t t = 0; t < nblk_b; t++) {
                const int j = (int)(p % 2 ? nblk_b - 1 - t : t);
                const int64_t c0 = j * nb, c1 = std::min(n, c0 + nb);
                if (t == 0 && ha) { // the panel's A comes in block by block, each used at once
                    for (int64_t i = pr0 / mb; i < nblk_a && i * mb < pr1; i++)
                        jobs.push_back({i * mb, std::min(pr1, (i + 1) * mb), c0, c1, p, j, (int)i});
                } else {
                    jobs.push_back({pr0, pr1, c0, c1, p, j, -1});
                }
            }
        }
    }

    // ---- the staging ring ----
    // Completed copies: those in leave their slot free, those out are written to C.
    bool poll()
    {
        while (!in_up.empty()) {
            cudaError_t q = cudaEventQuery(cx.slots[in_up.front()].ev);
            if (q == cudaErrorNotReady) break;
            FG_TRY(q);
            free_slots.push_back(in_up.front());
            in_up.pop_front();
        }
        while (!in_down.empty()) {
            cudaError_t q = cudaEventQuery(cx.slots[in_down.front()].ev);
            if (q == cudaErrorNotReady) break;
            FG_TRY(q);
            unstage(in_down.front());
            in_down.pop_front();
        }
        return enqueue_downloads();
    }
    // Blocks until the oldest copy in flight (or, with none, the kernel C waits for) is done.
    bool wait_one()
    {
        // Copies out first: they were enqueued after their kernel finished, so they are short.
        const int s = !in_down.empty() ? in_down.front() : !in_up.empty() ? in_up.front() : -1;
        const double t0 = fg_now_s();
        if (s >= 0) FG_TRY(cudaEventSynchronize(cx.slots[s].ev));
        else if (!to_download.empty()) FG_TRY(cudaEventSynchronize(jobs[to_download.front()].done));
        wait_s += fg_now_s() - t0;
        return true;
    }
    bool acquire(int *slot)
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
    bool upload(char *dst, size_t dld, const char *src, size_t sld, size_t width, int64_t cols,
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
            FG_TRY(cudaMemcpy2DAsync(dst + col * dld + off, dld, sl.host, w, w, nc, cudaMemcpyHostToDevice, cx.up));
            FG_TRY(cudaEventRecord(sl.ev, cx.up));
            in_up.push_back(s);
        }
        FG_TRY(cudaEventRecord(ready, cx.up));
        return true;
    }

    int64_t kend(const Job &jb) const { return jb.k1 < 0 ? k : jb.k1; }
    // The job that leaves its piece of C final (a whole k range, or the last slice).
    bool final_slice(const Job &jb) const { return kend(jb) == k; }

    // Where job jb's C lies on the device, and in the caller's memory.
    char *c_dev(const Job &jb, int64_t *ld) const
    {
        if (!hc) {
            *ld = g->ldc;
            return (char *)g->c + (jb.r0 + jb.c0 * g->ldc) * es;
        }
        *ld = mp;
        if (incore) return dC + (size_t)(jb.r0 + jb.c0 * mp) * es;
        return dC + ((size_t)c_slot(jb) * (size_t)(mp * nb) + (size_t)(jb.r0 - jb.p * mp)) * es;
    }
    // In core, C block j has slot j; out of core, blocks take the ring's slots in turn.
    int c_slot(const Job &jb) const
    {
        if (c_slots == nblk_b) return jb.j;
        return (int)((jb.p * nblk_b + (jb.p % 2 ? nblk_b - 1 - jb.j : jb.j)) % c_slots);
    }
    char *c_host(const Job &jb) const { return (char *)g->c + (jb.r0 + jb.c0 * g->ldc) * es; }

    // Copies out the next chunks of finished jobs, as far as free slots allow.
    bool enqueue_downloads()
    {
        if (uploads_left) return true;
        while (!to_download.empty()) {
            Job &jb = jobs[to_download.front()];
            if (jb.queued == 0) {
                cudaError_t q = cudaEventQuery(jb.done);
                if (q == cudaErrorNotReady) return true;
                FG_TRY(q);
            }
            int64_t ld;
            char *src = c_dev(jb, &ld);
            const Chunking ch = {(size_t)(jb.r1 - jb.r0) * es, cx.slot_bytes, jb.c1 - jb.c0};
            while (jb.queued < jb.chunks) {
                if (free_slots.empty()) return true;
                const int s = free_slots.front();
                free_slots.pop_front();
                int64_t col, nc;
                size_t off, w;
                ch.chunk(jb.queued, &col, &nc, &off, &w);
                Slot &sl = cx.slots[s];
                FG_TRY(cudaMemcpy2DAsync(sl.host, w, src + (col * ld) * es + off, ld * es, w, nc,
                                         cudaMemcpyDeviceToHost, cx.down));
                FG_TRY(cudaEventRecord(sl.ev, cx.down));
                if (out_done && cudaEventRecord(out_done, cx.down) != cudaSuccess) cudaGetLastError(); // trace only
                sl.job = to_download.front();
                sl.chunk = jb.queued++;
                in_down.push_back(s);
            }
            if (hc) FG_TRY(cudaEventRecord(c_free[c_slot(jb)], cx.down));
            to_download.pop_front();
        }
        return true;
    }

    void unstage(int s)
    {
        Slot &sl = cx.slots[s];
        Job &jb = jobs[sl.job];
        const Chunking ch = {(size_t)(jb.r1 - jb.r0) * es, cx.slot_bytes, jb.c1 - jb.c0};
        int64_t col, nc;
        size_t off, w;
        ch.chunk(sl.chunk, &col, &nc, &off, &w);
        const size_t hld = (size_t)g->ldc * es;
        const fg_copy2d cp = {c_host(jb) + col * hld + off, hld, sl.host, w, w, (size_t)nc};
        const double t0 = fg_now_s();
        fg_stage_copy(&cp);
        copy_s += fg_now_s() - t0;
        bytes_out += w * nc;
        jb.saved++; // chunks come out in order
        sl.job = -1;
        free_slots.push_back(s);
    }

    // ---- the operands' blocks ----
    const char *a_view(int64_t r0, int p, int64_t *ld) const
    {
        if (!ha) {
            *ld = g->lda;
            return (const char *)g->a + (g->ta == 'N' ? r0 : r0 * g->lda) * es;
        }
        const int64_t lr = r0 - p * mp;
        *ld = g->ta == 'N' ? mp : k;
        return dA + (g->ta == 'N' ? lr : lr * k) * es;
    }
    // Rows [r0, r1) of op(A), its columns [k0, k1).
    bool upload_a(int64_t r0, int64_t r1, int p, int64_t k0, int64_t k1)
    {
        const int64_t lr = r0 - p * mp;
        const char *src = (const char *)g->a;
        const size_t sld = (size_t)g->lda * es;
        if (g->ta == 'N')
            return upload(dA + (lr + k0 * mp) * es, mp * es, src + r0 * es + k0 * sld, sld, (r1 - r0) * es,
                          k1 - k0, ev_in);
        return upload(dA + (lr * k + k0) * es, k * es, src + r0 * sld + k0 * es, sld, (k1 - k0) * es, r1 - r0,
                      ev_in);
    }
    char *b_slot_ptr(int s) const { return dB + (size_t)s * (size_t)(k * nb) * es; }
    const char *b_view(const Job &jb, int64_t *ld) const
    {
        const int j = jb.j;
        const int64_t c0 = jb.c0;
        if (!hb) {
            *ld = g->ldb;
            return (const char *)g->b + (g->tb == 'N' ? c0 * g->ldb : c0) * es;
        }
        if (incore) { // B whole, packed: k x n, or n x k for B^T
            *ld = g->tb == 'N' ? k : n;
            return dB + (g->tb == 'N' ? c0 * k : c0) * es;
        }
        *ld = g->tb == 'N' ? k : nb;
        return b_slot_ptr(b_slot_of[j]);
    }
    // Makes B block j resident: in the least recently used slot, once its last kernel is done.
    bool ensure_b(int j, int64_t stamp)
    {
        if (!hb) return true;
        int s = b_slot_of[j];
        if (s < 0) {
            s = 0;
            for (int t = 1; t < b_slots; t++)
                if (b_stamp[t] < b_stamp[s]) s = t;
            if (b_holds[s] >= 0) {
                b_slot_of[b_holds[s]] = -1;
                FG_TRY(cudaStreamWaitEvent(cx.up, jobs[b_last_job[s]].done, 0));
            }
            b_holds[s] = j;
            b_slot_of[j] = s;
            const int64_t c0 = j * nb, c1 = std::min(n, c0 + nb);
            const char *src = (const char *)g->b;
            const size_t sld = (size_t)g->ldb * es;
            const bool ok = g->tb == 'N'
                                ? upload(b_slot_ptr(s), k * es, src + c0 * sld, sld, k * es, c1 - c0, b_ready[s])
                                : upload(b_slot_ptr(s), nb * es, src + c0 * es, sld, (c1 - c0) * es, k, b_ready[s]);
            if (!ok) return false;
        }
        b_stamp[s] = stamp;
        if (!comp_wait(b_ready[s])) return false;
        return true;
    }

    // In core: column block j of op(B), its rows [k0, k1).
    bool upload_b_incore(int j, int64_t k0, int64_t k1)
    {
        const int64_t c0 = cols_at[j], c1 = cols_at[j + 1];
        const char *src = (const char *)g->b;
        const size_t sld = (size_t)g->ldb * es;
        if (g->tb == 'N')
            return upload(dB + (c0 * k + k0) * es, k * es, src + c0 * sld + k0 * es, sld, (k1 - k0) * es, c1 - c0,
                          ev_in);
        return upload(dB + (c0 + k0 * n) * es, n * es, src + c0 * es + k0 * sld, sld, (c1 - c0) * es, k1 - k0,
                      ev_in);
    }

    cudaStream_t stream_of(const Job &jb) const { return jb.on ? cx.comp2 : cx.comp; }
    // The kernels' streams wait for e (both, in core).
    bool comp_wait(cudaEvent_t e)
    {
        FG_TRY(cudaStreamWaitEvent(cx.comp, e, 0));
        if (incore) FG_TRY(cudaStreamWaitEvent(cx.comp2, e, 0));
        return true;
    }
    // In core the kernels alternate between two streams, so that one kernel's last wave, which
    // leaves SMs idle, overlaps the next kernel's first (4096 x 4096 pieces of 128 x 256 tiles
    // are 3.9 waves on 132 SMs). Job ji waits for the latest earlier job of the other stream
    // whose piece of C overlaps its own: an earlier slice of k, or the first of two passes.
    bool order(int ji)
    {
        if (!incore) return true; // one stream
        const Job &jb = jobs[ji];
        for (int i = ji - 1; i >= 0; i--) {
            const Job &o = jobs[i];
            if (o.on == jb.on || o.r1 <= jb.r0 || jb.r1 <= o.r0 || o.c1 <= jb.c0 || jb.c1 <= o.c0) continue;
            FG_TRY(cudaStreamWaitEvent(stream_of(jb), o.done, 0));
            break;
        }
        return true;
    }

    bool launch(Job &jb)
    {
        const cudaStream_t ks = stream_of(jb);
        fg_gemm_args sg = *g;
        sg.m = jb.r1 - jb.r0;
        sg.n = jb.c1 - jb.c0;
        sg.k = kend(jb) - jb.k0;
        if (jb.k0 > 0) sg.beta = 1; // a later slice adds to what the earlier ones left
        int64_t lda = 0, ldb = 0, ldc;
        char *pc = c_dev(jb, &ldc);
        const long fault = fg_get_config()->fault_after;
        if (fault > 0 && ++launches == fault) return fail(cudaErrorMemoryAllocation, "kernel launch (FASTGEMM_FAULT_AFTER)");
        if (fg_reads_ab(g)) {
            const char *pa = a_view(jb.r0, jb.p, &lda);
            const char *pb = b_view(jb, &ldb);
            pa += (g->ta == 'N' ? jb.k0 * lda : jb.k0) * (int64_t)es;
            pb += (g->tb == 'N' ? jb.k0 : jb.k0 * ldb) * (int64_t)es;
            if (!timeline.empty()) stamp(ks);
            FG_TRY(fg_run_gemm(dev, &sg, pa, lda, pb, ldb, pc, ldc, ks));
        } else {
            if (!timeline.empty()) stamp(ks);
            FG_TRY(fg_cuda_scale_c(&sg, pc, ldc, ks));
        }
        if (!timeline.empty()) stamp(ks);
        jb.launched = true;
        FG_TRY(cudaEventRecord(jb.done, ks));
        return true;
    }

    bool allocate()
    {
        cudaMemPool_t pool = device_pool(dev);
        auto get = [&](char **p, size_t bytes) -> cudaError_t {
            if (!bytes) return cudaSuccess;
            return pool ? cudaMallocFromPoolAsync(reinterpret_cast<void **>(p), bytes, pool, cx.comp)
                        : cudaMallocAsync(reinterpret_cast<void **>(p), bytes, cx.comp);
        };
        FG_TRY(get(&dA, ha ? es * (size_t)(mp * k) : 0));
        FG_TRY(get(&dB, hb ? es * (incore ? (size_t)(k * n) : (size_t)b_slots * (size_t)(k * nb)) : 0));
        FG_TRY(get(&dC, hc ? es * (incore ? (size_t)(m * n) : (size_t)c_slots * (size_t)(mp * nb)) : 0));
        FG_TRY(cudaEventRecord(ev_alloc, cx.comp));
        FG_TRY(cudaStreamWaitEvent(cx.comp2, ev_alloc, 0));
        FG_TRY(cudaStreamWaitEvent(cx.up, ev_alloc, 0));
        FG_TRY(cudaStreamWaitEvent(cx.down, ev_alloc, 0));
        return true;
    }
    void release()
    {
        for (char **p : {&dA, &dB, &dC})
            if (*p) cudaFreeAsync(*p, cx.comp);
        dA = dB = dC = nullptr;
    }

    // The device memory the pipeline may use: free memory plus what the pool holds unused,
    // less a margin for the kernels' workspace and others, capped by FASTGEMM_DEVICE_MEMORY_MB.
    size_t budget() const
    {
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 0;
        uint64_t reserved = 0, used = 0;
        if (cudaMemPool_t pool = device_pool(dev)) {
            cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
            cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
        }
        cudaGetLastError();
        size_t have = free_b + (size_t)(reserved - used);
        const size_t margin = (size_t)128 << 20;
        have = have > margin ? have - margin : 0;
        const int64_t cap = fg_get_config()->device_mb;
        if (cap > 0) have = std::min(have, (size_t)cap << 20);
        return have;
    }

    // Runs the whole call; false on a CUDA error (err, failed_call).
    bool execute()
    {
        const int64_t big = std::max(m, n);
        int64_t block = fg_get_config()->block;
        // Blocks of a quarter of the larger side, 512 to 4096; 4096 from 8192 on for floats and
        // from 12288 on for doubles. Kernels of 4096 x 4096 fill whole waves of 128 x 128 tiles
        // on 132 SMs (3.9), where 3072 x 3072 leaves a third of the last wave empty. Doubles
        // keep 2048 at 8192: their copies take longer than their kernels, and what counts
        // there is the compute left after the last block is in (the last column block of C).
        const int64_t large = es == 4 ? 8192 : 12288;
        if (block <= 0)
            block = big >= large ? 4096 : std::min<int64_t>(4096, std::max<int64_t>(512, (big / 4 + 255) / 256 * 256));
        t_start = fg_now_s();
        if (fg_tracing()) {
            stamp(cx.comp);
            if (cudaEventCreate(&out_done) != cudaSuccess) out_done = nullptr, cudaGetLastError();
        }
        size_t avail = budget();
        for (int attempt = 0;; attempt++) { // the memory free now may be gone when we allocate
            if (!plan(block, avail)) return fail(cudaErrorMemoryAllocation, "the pipeline's plan (device memory)");
            schedule();
            FG_TRY(cx.reserve_events(jobs.size() + b_slots + c_slots + 2));
            ev_in = cx.events[0];
            ev_alloc = cx.events[1];
            if (allocate()) break;
            release();
            if (attempt == 3 || err != cudaErrorMemoryAllocation) return false;
            cudaGetLastError();
            err = cudaSuccess;
            avail /= 2;
        }
        size_t e = 2;
        for (size_t ji = 0; ji < jobs.size(); ji++) {
            Job &jb = jobs[ji];
            jb.on = incore ? (int)(ji % 2) : 0;
            jb.done = cx.events[e++];
            jb.chunks = hc && final_slice(jb) ? Chunking{(size_t)(jb.r1 - jb.r0) * es, cx.slot_bytes, jb.c1 - jb.c0}.count() : 0;
        }
        b_ready.assign(cx.events.begin() + e, cx.events.begin() + e + b_slots);
        e += b_slots;
        c_free.assign(cx.events.begin() + e, cx.events.begin() + e + c_slots);
        b_slot_of.assign(nblk_b, -1);
        b_holds.assign(b_slots, -1);
        b_last_job.assign(b_slots, -1);
        b_stamp.assign(b_slots, -1);
        c_last_job.assign(c_slots, -1);
        free_slots.clear();
        for (int s = (int)cx.slots.size() - 1; s >= 0; s--) free_slots.push_back(s);

        int last_upload = -1; // in core: the last job that brings blocks of A or B
        for (int ji = 0; incore && ji < (int)jobs.size(); ji++)
            if (jobs[ji].a_block >= 0 || jobs[ji].b_block >= 0) last_upload = ji;
        uploads_left = last_upload >= 0;
        for (int ji = 0; ji < (int)jobs.size(); ji++) {
            Job &jb = jobs[ji];
            if (ji == last_upload + 1 && uploads_left) {
                uploads_done_s = fg_now_s() - t_start;
                uploads_left = false;
            }
            const bool new_block = !incore && (ji == 0 || jobs[ji - 1].p != jb.p || jobs[ji - 1].j != jb.j);
            if (incore && (jb.a_block >= 0 || jb.b_block >= 0)) { // A_0 comes before B_0
                if (jb.a_block >= 0 && !upload_a(rows_at[jb.a_block], rows_at[jb.a_block + 1], jb.p, jb.k0, kend(jb)))
                    return false;
                if (jb.b_block >= 0 && !upload_b_incore(jb.b_block, jb.k0, kend(jb))) return false;
                if (!comp_wait(ev_in)) return false;
                jb.a_block = -1;
            }
            if (new_block) {
                if (hc) { // the C slot's last tenant must be on its way out before it is reused
                    const int cs = c_slot(jb);
                    if (c_last_job[cs] >= 0) {
                        const Job &old = jobs[c_last_job[cs]];
                        while (old.queued < old.chunks)
                            if (!poll() || !wait_one()) return false;
                        FG_TRY(cudaStreamWaitEvent(cx.up, c_free[cs], 0));
                        if (!comp_wait(c_free[cs])) return false;
                    }
                }
                if (!ensure_b(jb.j, ji)) return false;
                // A new panel of A overwrites the last one: after the last panel's kernels.
                if (ha && ji > 0 && jobs[ji - 1].p != jb.p) FG_TRY(cudaStreamWaitEvent(cx.up, jobs[ji - 1].done, 0));
            }
            if (jb.a_block >= 0) {
                if (!upload_a(rows_at[jb.a_block], rows_at[jb.a_block + 1], jb.p, 0, k)) return false;
                if (!comp_wait(ev_in)) return false;
            }
            if (hc && reads_c && jb.k0 == 0) {
                int64_t ld;
                char *dst = c_dev(jb, &ld);
                if (!upload(dst, ld * es, c_host(jb), g->ldc * es, (jb.r1 - jb.r0) * es, jb.c1 - jb.c0, ev_in))
                    return false;
                if (!comp_wait(ev_in)) return false;
            }
            if (!order(ji) || !launch(jb)) return false;
            if (hb && !incore) b_last_job[b_slot_of[jb.j]] = ji;
            if (hc && final_slice(jb)) {
                if (!incore) c_last_job[c_slot(jb)] = ji;
                to_download.push_back(ji);
            }
            if (!poll()) return false;
        }
        if (uploads_left) uploads_done_s = fg_now_s() - t_start;
        uploads_left = false;
        while (!to_download.empty() || !in_down.empty())
            if (!wait_one() || !poll()) return false;
        FG_TRY(cudaStreamSynchronize(cx.comp));
        FG_TRY(cudaStreamSynchronize(cx.comp2));
        FG_TRY(cudaStreamSynchronize(cx.up));
        release();
        return true;
    }
#undef FG_TRY

    // After a failure: the parts of C not yet written, computed by the CPU BLAS. Possible when
    // C is host memory and A and B can be read by the CPU (device operands are copied over,
    // unless the device is lost). False when it was not possible.
    bool cpu_finish(bool device_lost)
    {
        if (!hc) return false;
        fg_gemm_args h = *g;
        void *bufs[2] = {nullptr, nullptr};
        bool ok = true;
        if (fg_reads_ab(g)) {
            if (ops->a == FG_MEM_DEVICE)
                ok = !device_lost && to_host(&h.a, &h.lda, fg_rows_a(g), fg_cols_a(g), &bufs[0]);
            if (ok && ops->b == FG_MEM_DEVICE)
                ok = !device_lost && to_host(&h.b, &h.ldb, fg_rows_b(g), fg_cols_b(g), &bufs[1]);
        }
        if (ok && jobs.empty()) cpu_part(h, 0, m, 0, n); // it failed before any work was planned
        for (const Job &jb : jobs) {
            if (!ok) break;
            if (!final_slice(jb)) continue; // its piece of C is the final slice's
            const Chunking ch = {(size_t)(jb.r1 - jb.r0) * es, cx.slot_bytes, jb.c1 - jb.c0};
            int64_t cdone = 0, rdone = 0; // columns written, and rows of the next one
            if (jb.saved > 0) {
                int64_t col, nc;
                size_t off, w;
                ch.chunk(jb.saved - 1, &col, &nc, &off, &w);
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
    bool to_host(const void **p, int64_t *ld, int64_t rows, int64_t cols, void **buf) const
    {
        if (!(*buf = malloc((size_t)(rows * cols) * es))) return false;
        if (cudaMemcpy2D(*buf, rows * es, *p, *ld * es, rows * es, cols, cudaMemcpyDeviceToHost) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        *p = *buf;
        *ld = rows;
        return true;
    }
    void cpu_part(const fg_gemm_args &whole, int64_t r0, int64_t r1, int64_t c0, int64_t c1) const
    {
        if (r0 >= r1 || c0 >= c1) return;
        fg_gemm_args h = whole;
        h.m = r1 - r0;
        h.n = c1 - c0;
        h.a = (const char *)whole.a + (whole.ta == 'N' ? r0 : r0 * whole.lda) * es;
        h.b = (const char *)whole.b + (whole.tb == 'N' ? c0 * whole.ldb : c0) * es;
        h.c = (char *)whole.c + (r0 + c0 * whole.ldc) * es;
        fg_cpu_gemm(&h);
    }
    bool c_written() const
    {
        for (const Job &jb : jobs)
            if (jb.saved > 0 || (!hc && jb.launched)) return true;
        return false;
    }
};

} // namespace

int fg_gpu_warm(int device)
{
    return device >= 0 && device < MAX_DEVICES &&
           contexts[device].ready.load(std::memory_order_relaxed);
}

cudaError_t fg_pool_alloc(void **p, size_t bytes, cudaStream_t s)
{
    int dev = -1;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    cudaMemPool_t pool = device_pool(dev);
    return pool ? cudaMallocFromPoolAsync(p, bytes, pool, s) : cudaMallocAsync(p, bytes, s);
}

int fg_offload_gemm(const fg_gemm_args *g, const fg_operands *ops, int dev, bool *broken,
                    char *why, size_t whylen)
{
    Context &cx = contexts[dev];
    std::lock_guard<std::mutex> hold(cx.lock);
    const fg_config *cfg = fg_get_config();
    cudaError_t err = cx.init((size_t)cfg->pinned_kb << 10, (size_t)cfg->slot_kb << 10);
    if (err != cudaSuccess) {
        cudaGetLastError();
        snprintf(why, whylen, "pinned staging buffers: %s", cudaGetErrorString(err));
        *broken = false;
        return FG_GPU_FAILED;
    }
    Pipeline pl(cx, g, ops, dev);
    const double t0 = fg_now_s();
    const size_t largest = pl.es * (size_t)std::max({pl.ha ? pl.m * pl.k : 0, pl.hb ? pl.k * pl.n : 0,
                                                     pl.hc ? pl.m * pl.n : 0});
    const int awake = fg_stage_begin(largest);
    const bool ok = pl.execute();
    fg_stage_end(awake);
    if (ok) {
        if (!fg_tracing()) return FG_GPU_OK;
        // For the trace line: how the call was cut, and where the host's time went.
        const double t = fg_now_s() - t0;
        double first, busy, span, end, out;
        pl.gpu_times(&first, &busy, &span, &end, &out);
        char in_by[40] = "", out_at[48] = "";
        if (pl.incore) snprintf(in_by, sizeof in_by, ", all in at %.1f ms", pl.uploads_done_s * 1e3);
        if (pl.bytes_out > 0) snprintf(out_at, sizeof out_at, ", the last copy out at %.1f ms", out);
        snprintf(why, whylen,
                 "pipeline: blocks %lldx%lld, %s, %zu kernels; host copies %.0f MB in, %.0f MB out, "
                 "%.1f ms at %.1f GB/s; waits %.1f ms%s; GPU: first kernel at %.1f ms, kernels "
                 "busy %.1f of %.1f ms, the last done at %.1f ms%s; %.1f ms",
                 (long long)pl.mb, (long long)pl.nb, pl.incore ? "in core" : "out of core",
                 pl.jobs.size(), pl.bytes_in / 1e6, pl.bytes_out / 1e6, pl.copy_s * 1e3,
                 pl.copy_s > 0 ? (pl.bytes_in + pl.bytes_out) / pl.copy_s * 1e-9 : 0.0, pl.wait_s * 1e3,
                 in_by, first, busy, span, end, out_at, t * 1e3);
        return FG_GPU_OK;
    }

    // Stop everything in flight before the buffers are reused or C is touched.
    cudaGetLastError();
    bool sticky = false;
    for (cudaStream_t s : {cx.up, cx.comp, cx.comp2, cx.down}) sticky |= cudaStreamSynchronize(s) != cudaSuccess;
    pl.release();
    cudaGetLastError();
    *broken = sticky;
    const char *call = pl.failed_call;
    int n = 0;
    while (call[n] && call[n] != '(') n++;
    snprintf(why, whylen, "%.*s: %s", n, call, cudaGetErrorString(pl.err));
    if (pl.cpu_finish(sticky)) return FG_GPU_FINISHED_ON_CPU;
    return pl.c_written() ? FG_GPU_FAILED_C_WRITTEN : FG_GPU_FAILED;
}
