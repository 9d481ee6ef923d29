// offload_plan.cpp: the host-operand pipeline's plan and job order (offload_plan.h).
//
// In core, op(A) is cut into row blocks and op(B) and C into column blocks; the blocks of A and
// B come in alternately and each arrival brings the kernels it makes possible, and every
// finished piece of C goes out while later ones are computed. When A, B and C do not fit in
// the device memory there is to have, the rows of C are cut into panels: the A panel stays, the
// column blocks of B stream through a ring of device slots (in serpentine order, so that those
// still resident at a panel's end are reused), and C blocks go through a ring of their own.
#include "backends/cuda/offload_plan.h"

#include <algorithm>

namespace fg_offload {

int64_t block_size(const Problem &p)
{
    if (p.block > 0) return p.block;
    // A quarter of the larger side, 512 to 4096; 4096 from 8192 on for floats and from 12288 on
    // for doubles. Kernels of 4096 x 4096 fill whole waves of 128 x 128 tiles on 132 SMs (3.9),
    // where 3072 x 3072 leaves a third of the last wave empty. Doubles keep 2048 at 8192: their
    // copies take longer than their kernels, and what counts there is the compute left after
    // the last block is in (the last column block of C).
    // With whole_k (the Ozaki scheme's kernels, 2-3x faster than the SIMT ones and not sliced),
    // floats keep a quarter up to 12288: the GPU waits for the first blocks whole, and the sooner
    // they are in, the sooner it starts.
    const int64_t big = std::max(p.m, p.n);
    const int64_t large = p.es == 4 && !p.whole_k ? 8192 : 12288;
    return big >= large ? 4096 : std::min<int64_t>(4096, std::max<int64_t>(512, (big / 4 + 255) / 256 * 256));
}

bool Plan::make(size_t budget)
{
    if (!fit(block_size(*this), budget)) return false;
    schedule();
    return true;
}

// Block sizes, and panels when the operands do not all fit: blocks halve from `block` until
// the operands fit whole, or in panels with two B slots and two C slots.
bool Plan::fit(int64_t block, size_t budget)
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

// Even blocks: cutting the first and last ones smaller, to start and end sooner, makes more
// and smaller kernels, which cost more than they save (perf/NOTES.md, "Host-pointer pipeline").
std::vector<int64_t> Plan::bounds(int64_t total, int64_t b)
{
    std::vector<int64_t> v{0};
    for (int64_t x = 0; x < total; x += b) v.push_back(std::min(total, x + b));
    return v;
}

// Out of core: panel by panel, the column blocks in serpentine order; the first column block of
// a panel brings the panel's A block by block, each used at once.
void Plan::schedule()
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
            if (t == 0 && ha) {
                for (int64_t i = pr0 / mb; i < nblk_a && i * mb < pr1; i++)
                    jobs.push_back({i * mb, std::min(pr1, (i + 1) * mb), c0, c1, p, j, (int)i});
            } else {
                jobs.push_back({pr0, pr1, c0, c1, p, j, -1});
            }
        }
    }
}

// In core: the blocks of A and B come in alternately (A_0, B_0, A_1, B_1, ...; an operand on
// the device has all its blocks from the start), and each arrival brings the kernels it makes
// possible: A_i times the B blocks present, the A blocks present times B_j. The work on hand
// grows with the square of the data in, so the GPU is soon busy; sooner still because the first
// arrivals (but the last) come in slices of k, each bringing its kernels on that slice (C
// accumulates on the device; the first slice applies beta). Kernels are at most 4096 x 4096
// (two blocks a side for smaller blocks), so that C comes out in pieces while the rest is
// computed, and those of the last arrival at most 2048 rows, the last ones fewer still
// (tail_rows), so that little of C is left to come out after the last kernel.
static constexpr int SLICED_ARRIVALS = 3;

void Plan::schedule_incore()
{
    jobs.clear();
    rows_at = bounds(m, mb);
    cols_at = bounds(n, nb);
    const int nra = (int)rows_at.size() - 1, ncb = (int)cols_at.size() - 1;
    const int64_t piece = std::min(2 * nb, std::max<int64_t>(nb, 4096));
    // The slices of the first arrivals, up to 8: only where a slice's kernels still fill the
    // GPU (blocks of 2048 or more a side) and reading and writing C once per slice costs little
    // against its FMAs (1024 steps of k for floats, 2048 for doubles: ~6% at most). Floats halve
    // the count from one arrival to the next: their kernels outlast their copies, so a later
    // arrival is mostly in before the GPU gets to it, and thin slices only run slower kernels.
    // Doubles, whose copies take twice as long, keep 8 slices for each sliced arrival.
    const int64_t kmin = es == 4 ? 1024 : 2048;
    const bool can_slice = !whole_k && std::min(m, mb) >= 2048 && std::min(n, nb) >= 2048 && k >= 2 * kmin;
    auto slice_k = [&](int arr) -> int64_t { // the depth of arrival arr's slices
        const int64_t s = std::min<int64_t>(es == 4 ? 8 >> arr : 8, k / kmin);
        return !can_slice || s < 2 ? k : ((k + s - 1) / s + 63) / 64 * 64;
    };
    int arrival = 0;
    // The kernels of one arrival: C(r0:r1, c0:c1) on k in [kb, ke) (ke < 0: all of k, sliced
    // for the first arrivals), in pieces.
    const int64_t tail = (tail_rows + 127) / 128 * 128;
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
                // The call's last kernels: their last rows halve down to tail_rows, so that
                // little of C is left to come out when the last one ends.
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
                    add(rows_at[ia - 1], rows_at[ia], 0, cols_at[jb], ia - 1, -1, final && ia == nra && jb == ncb, kb,
                        ke);
                else
                    pending_a = ia - 1;
            } else {
                jb++;
                add(0, rows_at[ia], cols_at[jb - 1], cols_at[jb], pending_a, jb - 1, final && ia == nra && jb == ncb,
                    kb, ke);
                pending_a = -1;
            }
        }
    };
    // Doubles in blocks of 2048 or less, whose kernels take about as long as their copies: in
    // one pass the first arrivals bring little work and the last a quarter of it, so the GPU
    // waits for copies early and has much of the work left when the last block is in. In two
    // passes (the first half of k of every block, then the second half) each arrival is half as
    // long, and the first pass's kernels are queued before the second pass's come; C comes out
    // as the second pass's kernels end. With blocks of 4096 the GPU is the longer pole, and two
    // passes do not pay (perf/NOTES.md, "two passes over k").
    if (es == 8 && can_slice && nra >= 2 && ncb >= 2 && std::max(mb, nb) <= 2048) {
        const int64_t kh = (k / 2 + 63) / 64 * 64;
        pass(0, kh, false);
        pass(kh, k, true);
    } else {
        pass(0, -1, true);
    }
}

} // namespace fg_offload
