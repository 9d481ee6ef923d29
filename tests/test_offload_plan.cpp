// test_offload_plan: the host-operand pipeline's plan (backends/cuda/offload_plan.cpp) over
// seeded random calls, host code only (no GPU). Each case checks what the pipeline relies on:
//   - the plan fits the budget (the device buffers, and the panel it sized them by), and fails
//     only when even blocks of 64 do not fit; a block is halved only when the larger one does
//     not fit;
//   - every job's region lies inside C; the jobs' regions and k slices compute each element of
//     C exactly once over [0, k), in increasing k order; the first slice brings C when beta != 0;
//   - in core: every job's blocks of A and B (rows, columns and its k slice) were brought by it
//     or an earlier job, each piece once; C block j has slot j; the call's last kernel is short
//     (tail_rows); with whole_k (the Ozaki scheme's kernels) every job takes all of k;
//   - out of core: the panels cover the rows; a panel's A comes in block by block with its first
//     column block; the column blocks go in serpentine order; the B and C slots fit the budget
//     and no panel of more rows would have.
// Usage: test_offload_plan [cases [first seed]]. A failing case prints its seed: run it alone
// with `test_offload_plan 1 SEED`.
#include "backends/cuda/offload_plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

using fg_offload::Job;
using fg_offload::Plan;
using fg_offload::Problem;

namespace {

struct Case {
    uint64_t seed;
    Problem p;
    size_t budget;
};

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return cdiv(a, b) * b; }

// Device bytes of a panel of `rows` rows, bs B slots and cs C slots of blocks of b columns.
size_t panel_bytes(const Problem &p, int64_t rows, int64_t b, int64_t bs, int64_t cs)
{
    return p.es * ((p.ha ? (size_t)(rows * p.k) : 0) + (size_t)bs * (p.hb ? (size_t)(p.k * b) : 0) +
                   (size_t)cs * (p.hc ? (size_t)(rows * b) : 0));
}
// A, B and C whole on the device with blocks of b (the in-core test).
size_t incore_bytes(const Problem &p, int64_t b)
{
    const int64_t nblk = cdiv(p.n, b);
    return panel_bytes(p, p.m, b, nblk, nblk);
}
// The least any out-of-core plan with blocks of b needs: one block of rows, 2 B and C slots.
size_t least_bytes(const Problem &p, int64_t b)
{
    return panel_bytes(p, b, b, 2, std::min<int64_t>(cdiv(p.n, b), 2));
}
bool fits(const Problem &p, int64_t b, size_t budget)
{
    return incore_bytes(p, b) <= budget || least_bytes(p, b) <= budget;
}

Case draw(uint64_t seed)
{
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    auto dim = [&]() -> int64_t {
        switch (pick(0, 6)) {
        case 0: return pick(1, 16);
        case 1: return pick(1, 300);
        case 2: return pick(1, 5000);
        case 3: return 1024 * pick(1, 16);
        case 4: return pick(1, 20000);
        case 5: return pick(1, 60000);
        default: return pick(1, 1000000);
        }
    };
    static const int64_t blocks[] = {0, 0, 0, 0, 1, 50, 64, 100, 128, 256, 512, 777, 1024, 2048, 4096, 8192};
    static const int64_t tails[] = {0, 1, 100, 128, 512, 1000, 2048};
    Case c;
    c.seed = seed;
    Problem &p = c.p;
    for (;;) { // shapes whose job lists stay small enough to check (a million blocks at most)
        p.m = dim();
        p.n = dim();
        p.k = pick(0, 9) == 0 ? pick(0, 64) : pick(0, 9) == 0 ? pick(1, 10000000) : dim();
        p.block = blocks[pick(0, 15)];
        const int64_t bmin = p.block > 0 ? std::min<int64_t>(p.block, 64) : 64;
        if (cdiv(p.m, bmin) * cdiv(p.n, bmin) <= 1000000 && p.m * p.k <= (int64_t)1e13 && p.k * p.n <= (int64_t)1e13)
            break;
    }
    p.es = pick(0, 1) ? 4 : 8;
    const bool reads_ab = p.k > 0 && pick(0, 7) != 0; // alpha != 0 and k > 0
    p.ha = reads_ab && pick(0, 2) != 0;
    p.hb = reads_ab && pick(0, 2) != 0;
    p.hc = pick(0, 3) != 0;
    p.reads_c = pick(0, 1);
    p.tail_rows = tails[pick(0, 6)];
    p.whole_k = reads_ab && p.es == 4 && pick(0, 3) == 0;
    // Budgets from none to ample, and at the plan's thresholds.
    const size_t whole = incore_bytes(p, fg_offload::block_size(p));
    int64_t b = fg_offload::block_size(p);
    for (int64_t h = pick(0, 6); h > 0 && b > 64; h--) b /= 2;
    switch (pick(0, 7)) {
    case 0: c.budget = (size_t)pick(0, 1 << 20); break;
    case 1: c.budget = (size_t)((double)whole * std::uniform_real_distribution<double>(0, 0.1)(rng)); break;
    case 2: c.budget = (size_t)((double)whole * std::uniform_real_distribution<double>(0.1, 1.2)(rng)); break;
    case 3: c.budget = whole * 4 + 1; break;
    case 4: c.budget = (size_t)pick(0, (int64_t)96 << 30); break;
    case 5: c.budget = incore_bytes(p, b) + (size_t)pick(-1, 1); break;
    case 6: c.budget = least_bytes(p, b) + (size_t)pick(-1, 1); break;
    default: c.budget = least_bytes(p, b) * (size_t)pick(2, 40) + (size_t)pick(0, 4096); break;
    }
    return c;
}

// The first broken invariant of a case, with the case.
struct Checker {
    const Case &c;
    std::string why;
    bool check(bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)))
    {
        if (ok || !why.empty()) return ok;
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        why = buf;
        return false;
    }
};
#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        if (!ck.check((cond), __VA_ARGS__)) return false;                                        \
    } while (0)

// The jobs compute every element of C once over [0, k), slices in increasing order; the first
// slice of an element brings C when beta != 0. C is cut into the cells the jobs' edges make.
bool check_cover(Checker &ck, const Plan &pl)
{
    std::vector<int64_t> rc{0, pl.m}, cc{0, pl.n};
    for (const Job &jb : pl.jobs) {
        rc.push_back(jb.r0), rc.push_back(jb.r1);
        cc.push_back(jb.c0), cc.push_back(jb.c1);
    }
    for (auto *v : {&rc, &cc}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    const size_t nr = rc.size() - 1, nc = cc.size() - 1;
    CHECK(nr * nc <= (size_t)20000000, "%zu x %zu cells: too many to check", nr, nc);
    std::vector<int64_t> next(nr * nc, 0); // the k where a cell's next slice starts; -1: done
    for (size_t ji = 0; ji < pl.jobs.size(); ji++) {
        const Job &jb = pl.jobs[ji];
        const int64_t ke = pl.kend(jb);
        const size_t i0 = std::lower_bound(rc.begin(), rc.end(), jb.r0) - rc.begin();
        const size_t i1 = std::lower_bound(rc.begin(), rc.end(), jb.r1) - rc.begin();
        const size_t j0 = std::lower_bound(cc.begin(), cc.end(), jb.c0) - cc.begin();
        const size_t j1 = std::lower_bound(cc.begin(), cc.end(), jb.c1) - cc.begin();
        for (size_t i = i0; i < i1; i++)
            for (size_t j = j0; j < j1; j++) {
                int64_t &at = next[i * nc + j];
                CHECK(at == jb.k0, "job %zu: rows %lld, column %lld of C at k %lld, but its slice starts at %lld", ji,
                      (long long)rc[i], (long long)cc[j], (long long)at, (long long)jb.k0);
                CHECK(pl.brings_c(jb) == (pl.hc && pl.reads_c && at == 0), "job %zu: brings C wrongly", ji);
                at = ke == pl.k ? -1 : ke;
            }
    }
    for (size_t q = 0; q < next.size(); q++)
        CHECK(next[q] == -1, "rows %lld, column %lld of C: computed up to k %lld of %lld", (long long)rc[q / nc],
              (long long)cc[q % nc], (long long)next[q], (long long)pl.k);
    return true;
}

// In core: each job's A rows and B columns on its k slice were brought by it or an earlier job;
// every block of A and B comes in once over [0, k).
bool check_incore_uploads(Checker &ck, const Plan &pl)
{
    typedef std::vector<std::pair<int64_t, int64_t>> Spans;
    std::vector<Spans> a(cdiv(pl.m, pl.mb)), b(cdiv(pl.n, pl.nb));
    auto add = [&](Spans &s, int64_t k0, int64_t k1) {
        for (auto &x : s)
            if (x.first < k1 && k0 < x.second) return false;
        s.push_back({k0, k1});
        std::sort(s.begin(), s.end());
        return true;
    };
    auto covers = [](const Spans &s, int64_t k0, int64_t k1) {
        for (auto &x : s)
            if (x.first <= k0 && k0 < x.second) k0 = x.second;
        return k0 >= k1;
    };
    for (size_t ji = 0; ji < pl.jobs.size(); ji++) {
        const Job &jb = pl.jobs[ji];
        const int64_t ke = pl.kend(jb);
        if (jb.a_block >= 0) {
            CHECK(pl.ha && jb.a_block < (int64_t)a.size(), "job %zu brings A block %d", ji, jb.a_block);
            CHECK(add(a[jb.a_block], jb.k0, ke), "job %zu brings k %lld-%lld of A block %d again", ji,
                  (long long)jb.k0, (long long)ke, jb.a_block);
        }
        if (jb.b_block >= 0) {
            CHECK(pl.hb && jb.b_block < (int64_t)b.size(), "job %zu brings B block %d", ji, jb.b_block);
            CHECK(add(b[jb.b_block], jb.k0, ke), "job %zu brings k %lld-%lld of B block %d again", ji,
                  (long long)jb.k0, (long long)ke, jb.b_block);
        }
        for (int64_t i = jb.r0 / pl.mb; pl.ha && i * pl.mb < jb.r1; i++)
            CHECK(covers(a[i], jb.k0, ke), "job %zu uses k %lld-%lld of A block %lld before it is in", ji,
                  (long long)jb.k0, (long long)ke, (long long)i);
        for (int64_t j = jb.c0 / pl.nb; pl.hb && j * pl.nb < jb.c1; j++)
            CHECK(covers(b[j], jb.k0, ke), "job %zu uses k %lld-%lld of B block %lld before it is in", ji,
                  (long long)jb.k0, (long long)ke, (long long)j);
    }
    for (size_t i = 0; pl.ha && i < a.size(); i++) CHECK(covers(a[i], 0, pl.k), "A block %zu never all in", i);
    for (size_t j = 0; pl.hb && j < b.size(); j++) CHECK(covers(b[j], 0, pl.k), "B block %zu never all in", j);
    return true;
}

bool check_incore(Checker &ck, const Plan &pl, size_t budget)
{
    CHECK(pl.panels == 1 && pl.mp == pl.m && pl.b_slots == pl.nblk_b && pl.c_slots == pl.nblk_b,
          "in core with %d panels of %lld rows, %d B slots, %d C slots", pl.panels, (long long)pl.mp, pl.b_slots,
          pl.c_slots);
    CHECK(incore_bytes(pl, pl.nb) <= budget, "in core, needing %zu bytes", incore_bytes(pl, pl.nb));
    for (size_t ji = 0; ji < pl.jobs.size(); ji++) {
        const Job &jb = pl.jobs[ji];
        CHECK(jb.p == 0 && jb.j == jb.c0 / pl.nb && pl.c_slot(jb) == jb.j, "job %zu: panel %d, block %d, slot %d", ji,
              jb.p, jb.j, pl.c_slot(jb));
        CHECK((jb.k0 >= 0 && jb.k0 < pl.kend(jb) && pl.kend(jb) <= pl.k) || (pl.k == 0 && jb.k0 == 0 && jb.k1 < 0),
              "job %zu: k slice %lld-%lld", ji, (long long)jb.k0, (long long)jb.k1);
        CHECK(!pl.whole_k || (jb.k0 == 0 && jb.k1 < 0), "job %zu: a k slice %lld-%lld with whole_k", ji,
              (long long)jb.k0, (long long)jb.k1);
    }
    const int64_t tail = round_up(pl.tail_rows, 128);
    const Job &last = pl.jobs.back();
    CHECK(!(pl.hc && (pl.ha || pl.hb) && tail > 0) || last.r1 - last.r0 < 2 * tail,
          "the last kernel has %lld rows (tail rows %lld)", (long long)(last.r1 - last.r0), (long long)pl.tail_rows);
    return check_incore_uploads(ck, pl);
}

bool check_out_of_core(Checker &ck, const Plan &pl, size_t budget)
{
    const int64_t m = pl.m, mb = pl.mb, nb = pl.nb, nblk = pl.nblk_b;
    CHECK(pl.mp == m || pl.mp % mb == 0, "panels of %lld rows, blocks of %lld", (long long)pl.mp, (long long)mb);
    CHECK(pl.panels == cdiv(m, pl.mp), "%d panels of %lld rows for %lld rows", pl.panels, (long long)pl.mp,
          (long long)m);
    CHECK(pl.c_slots == std::min<int64_t>(nblk, 2), "%d C slots", pl.c_slots);
    CHECK(pl.hb ? pl.b_slots >= std::min<int64_t>(nblk, 2) && pl.b_slots <= nblk : pl.b_slots == 0, "%d B slots",
          pl.b_slots);
    const int64_t rows = round_up(pl.mp, mb);
    CHECK(panel_bytes(pl, rows, nb, pl.b_slots, pl.c_slots) <= budget, "panels need %zu bytes",
          panel_bytes(pl, rows, nb, pl.b_slots, pl.c_slots));
    CHECK(incore_bytes(pl, nb) > budget, "out of core, though in core fits");
    for (int64_t q = 1; q <= cdiv(m, mb); q++) { // fewer, larger panels do not fit
        const int64_t r = round_up(cdiv(m, q), mb);
        CHECK(r <= rows || panel_bytes(pl, r, nb, 2, pl.c_slots) > budget, "panels of %lld rows would fit",
              (long long)r);
    }
    // Panel by panel, column blocks in serpentine order; a panel's A with its first block.
    size_t ji = 0;
    int64_t ordinal = 0; // of the (panel, column block) pairs, in visiting order
    for (int p = 0; p < pl.panels; p++) {
        const int64_t pr0 = p * pl.mp, pr1 = std::min(m, pr0 + pl.mp);
        for (int64_t t = 0; t < nblk; t++, ordinal++) {
            const int64_t j = p % 2 ? nblk - 1 - t : t;
            int64_t r = pr0;
            for (;;) {
                CHECK(ji < pl.jobs.size(), "the jobs end before panel %d, column block %lld", p, (long long)j);
                const Job &jb = pl.jobs[ji];
                CHECK(jb.p == p && jb.j == j, "job %zu: panel %d, block %d; expected %d, %lld", ji, jb.p, jb.j, p,
                      (long long)j);
                CHECK(jb.c0 == j * nb && jb.c1 == std::min(pl.n, (j + 1) * nb) && jb.r0 == r,
                      "job %zu: C(%lld:%lld, %lld:%lld)", ji, (long long)jb.r0, (long long)jb.r1, (long long)jb.c0,
                      (long long)jb.c1);
                CHECK(jb.k0 == 0 && jb.k1 < 0 && jb.b_block < 0, "job %zu: k slice or B block", ji);
                const bool brings_a = pl.ha && t == 0;
                CHECK(brings_a ? jb.a_block == r / mb && jb.r1 == std::min(pr1, r + mb)
                               : jb.a_block < 0 && jb.r1 == pr1,
                      "job %zu: A block %d, rows %lld-%lld", ji, jb.a_block, (long long)jb.r0, (long long)jb.r1);
                const int slot = pl.c_slot(jb);
                CHECK(slot >= 0 && slot < pl.c_slots && (pl.c_slots == nblk || slot == ordinal % pl.c_slots),
                      "job %zu: C slot %d", ji, slot);
                r = jb.r1;
                ji++;
                if (r == pr1) break;
            }
        }
    }
    CHECK(ji == pl.jobs.size(), "%zu jobs after the last panel", pl.jobs.size() - ji);
    return true;
}

// One case: true when every invariant holds. planned: the plan succeeded; incore: in core.
bool check_case(Checker &ck, int *planned, int *incore, size_t *jobs)
{
    const Problem &p = ck.c.p;
    const size_t budget = ck.c.budget;
    const int64_t b0 = fg_offload::block_size(p);
    CHECK(p.block > 0 ? b0 == p.block : b0 >= 512 && b0 <= 4096 && b0 % 256 == 0, "block size %lld", (long long)b0);
    Plan pl(p);
    *planned = pl.make(budget);
    int64_t b = b0; // the blocks the plan tried before the one it took
    for (; b > 64 && (!*planned || b > pl.mb); b /= 2)
        CHECK(!fits(p, b, budget), "blocks of %lld fit, yet the plan took %s", (long long)b,
              *planned ? "smaller ones" : "none");
    if (!*planned) return ck.check(!fits(p, b, budget), "blocks of %lld fit, yet the plan failed", (long long)b);
    CHECK(pl.mb == b && pl.nb == b && pl.nblk_b == cdiv(p.n, b), "blocks %lld x %lld, %lld column blocks",
          (long long)pl.mb, (long long)pl.nb, (long long)pl.nblk_b);
    const size_t dev = pl.a_bytes() + pl.b_bytes() + pl.c_bytes();
    const size_t expect = p.es * ((p.ha ? (size_t)(pl.mp * p.k) : 0) +
                                  (p.hb ? (pl.incore ? (size_t)(p.k * p.n) : (size_t)pl.b_slots * (size_t)(p.k * b)) : 0) +
                                  (p.hc ? (pl.incore ? (size_t)(p.m * p.n) : (size_t)pl.c_slots * (size_t)(pl.mp * b)) : 0));
    CHECK(dev == expect && dev <= budget, "device buffers of %zu bytes (expected %zu), budget %zu", dev, expect, budget);
    CHECK(!pl.jobs.empty(), "no jobs");
    *incore = pl.incore;
    *jobs = pl.jobs.size();
    for (size_t ji = 0; ji < pl.jobs.size(); ji++) {
        const Job &jb = pl.jobs[ji];
        CHECK(0 <= jb.r0 && jb.r0 < jb.r1 && jb.r1 <= p.m && 0 <= jb.c0 && jb.c0 < jb.c1 && jb.c1 <= p.n,
              "job %zu: C(%lld:%lld, %lld:%lld) of %lld x %lld", ji, (long long)jb.r0, (long long)jb.r1,
              (long long)jb.c0, (long long)jb.c1, (long long)p.m, (long long)p.n);
    }
    if (!check_cover(ck, pl)) return false;
    return pl.incore ? check_incore(ck, pl, budget) : check_out_of_core(ck, pl, budget);
}

} // namespace

int main(int argc, char **argv)
{
    const long cases = argc > 1 ? atol(argv[1]) : 3000;
    const uint64_t first = argc > 2 ? strtoull(argv[2], nullptr, 0) : 1;
    long planned = 0, incore = 0, failed = 0;
    size_t jobs = 0;
    for (long i = 0; i < cases; i++) {
        const Case c = draw(first + (uint64_t)i);
        Checker ck{c, ""};
        int ok_plan = 0, in = 0;
        size_t nj = 0;
        if (!check_case(ck, &ok_plan, &in, &nj)) {
            const Problem &p = c.p;
            printf("FAIL seed %llu: %s\n  m %lld n %lld k %lld, %zu-byte elements, host A %d B %d C %d, beta %s, "
                   "block %lld, tail rows %lld, whole k %d, budget %zu bytes\n",
                   (unsigned long long)c.seed, ck.why.c_str(), (long long)p.m, (long long)p.n, (long long)p.k, p.es,
                   p.ha, p.hb, p.hc, p.reads_c ? "!= 0" : "0", (long long)p.block, (long long)p.tail_rows, p.whole_k,
                   c.budget);
            return 1;
        }
        planned += ok_plan;
        failed += !ok_plan;
        incore += in;
        jobs += nj;
    }
    printf("test_offload_plan: %ld cases (seeds %llu-%llu): %ld planned (%ld in core, %ld out of core), %ld "
           "without a plan; %zu jobs; every invariant holds\n",
           cases, (unsigned long long)first, (unsigned long long)(first + cases - 1), planned, incore, planned - incore,
           failed, jobs);
    return 0;
}
