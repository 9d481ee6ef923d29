// choose.cuh: the kernel chooser. For a call off the tuned grid it weighs every configuration of
// a family's table, unsplit and in each useful number of split-K slices, by a cost model of
// waves, tile efficiency and k depth, and takes the least predicted time. The model's constants
// are fitted by perf/tables/fit_model.py to tuner runs on random problems
// (kernels/*gemm_model.gen.h); time() below is that script's time_const, term for term. The same
// model says whether copying unaligned operands aligned first pays (pack_choice), and, for the
// configurations it fits stream-K for, whether running them unsplit with stream-K does best
// (time_streamk: fit_model.py's streamk_model.py).
#pragma once

#include "common/launch.cuh"
#include "common/streamk.cuh"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <atomic>

namespace fg_choose {

// One configuration's constants (X of FG_*GEMM_MODEL): the chip's rate in TFLOP/s at the SM
// count the model was fitted on, a unit's fixed cost in k-tiles (prologue, epilogue), the blocks
// an SM needs to reach the rate, the rate's factor unless both operands allow 16-byte copies
// (its own copy paths: a TMA configuration's fallback), the blocks an SM holds, the rate's factor
// where the block tile is longer than m or n (every block then runs on the edge), and its factor by
// transpose pair (ta + 2 tb: 1 unless the model's spec gives the configuration its own).
struct Cost {
    const char *name;
    double tflops, fixed, jsat, unaligned;
    int occ;
    double short_tile;
    double trans[4] = {1, 1, 1, 1};
    // Stream-K, where the model fits it for the configuration (sk_rate 0: not weighed): the
    // fixed cost of a block's piece in k-tiles on top of `fixed`, the rate's factor, and the
    // bytes per second at which a tile's last block adds the partial sums of the others.
    double sk_fixed = 0, sk_rate = 0, sk_bytes_per_s = 0;
};

// What the family's configurations share: the SM count their rates were fitted at, a launch's
// cost, the device memory's rate (split-K's reduction, packing), and the rate's factor by copy
// class (copy_class).
struct Machine {
    int fitted_sms;
    double launch_s, bytes_per_s;
    // A packing copy's fixed cost (its workspace, its launch, the workspace's release), on top of
    // its bytes at bytes_per_s.
    double pack_s;
    double factor[16];
    // Whether the family's kernels read an operand along k (op(A) = A^T, op(B) = B) at the same
    // speed whatever its alignment, so that only the others are worth packing (the SIMT
    // family: its general copies are for the operands read along m or n).
    bool k_free;
    // Stream-K is weighed where a tile has this many k-tiles or more (the rows its constants
    // are fitted on), and taken where its predicted time is below the best without it by this
    // fraction or more (its term fits its rows less closely than the rest of the model fits
    // theirs: where the gain predicted is smaller, it is as likely a loss).
    int sk_min_ktiles = 0;
    double sk_margin = 0;
    // The rate's factor by wave group (wave_group): 1 unless the model's spec fits them.
    double wave[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
};

// A launch's wave group: the busiest SM's units (busy: 1, 2, 3-4, 5-8, more), plus 5 where it is
// split. The model's rate takes a factor per group, fitted where the spec asks: launches of few
// waves, unsplit or split, keep their SMs busy for different shares of their time.
constexpr int wave_group(int64_t busy, int splits)
{
    return (busy <= 1 ? 0 : busy == 2 ? 1 : busy <= 4 ? 2 : busy <= 8 ? 3 : 4) + (splits > 1 ? 5 : 0);
}
static_assert(wave_group(INT64_MAX, 2) + 1 == sizeof(Machine::wave) / sizeof(double), "a factor per wave group");

// A call's copy class: its transpose pair and whether each operand allows 16-byte copies
// (aligned16 of its pointer and leading dimension), which decide the kernels' copy paths.
inline int copy_class(bool ta, bool tb, bool al_a, bool al_b)
{
    return (int)ta + 2 * (int)tb + 4 * (int)al_a + 8 * (int)al_b;
}

// The split-K slices weighed for a block tile: 1, and where the tiles fill fewer than two
// waves, each that leaves a slice at least 8 k-tiles and all slices at most 8 blocks per SM
// (perf/tune.cu's split_options and fit_model.py's candidates: the same list).
constexpr int split_choices[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};

inline bool split_useful(int64_t tiles, int64_t k, int bk, int splits, int sms)
{
    if (splits == 1) return true;
    return tiles < 2 * sms && k / splits >= 8 * bk && tiles * splits <= 8 * (int64_t)sms;
}

// The SMs of the current device (0 if unknown), asked once per device.
inline int device_sms()
{
    static std::atomic<int> cache[64];
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return 0;
    if (int known = cache[dev].load(std::memory_order_relaxed)) return known;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    cache[dev].store(sms, std::memory_order_relaxed);
    return sms;
}

// The SMs the model counts: the current device's, or the fitted count where that is unknown.
inline int model_sms(const Machine &mc)
{
    const int sms = device_sms();
    return sms > 0 ? sms : mc.fitted_sms;
}

// An SM's rate in flop/s of a bm x bn configuration of cost c on m x n in copy class cls.
inline double sm_rate(const Cost &c, const Machine &mc, int bm, int bn, int64_t m, int64_t n, int cls)
{
    return c.tflops * 1e12 / mc.fitted_sms * mc.factor[cls] * (cls >= 12 ? 1.0 : c.unaligned) *
           (m < bm || n < bn ? c.short_tile : 1.0) * c.trans[cls & 3];
}

// The rate's share that j blocks an SM reach (the blocks it needs: jsat).
inline double efficiency(const Cost &c, double j) { return j / c.jsat < 1.0 ? j / c.jsat : 1.0; }

// The busiest SM's units where `units` share `sms` SMs.
inline int64_t busiest(int64_t units, int sms) { return (units + sms - 1) / sms; }

// The seconds of `units` units of kt k-tiles each, one a block, of a bm x bn x bk configuration
// of cost c at an SM's rate on `sms` SMs: the busiest SM's units, up to c.occ at a time.
inline double units_time(const Cost &c, int64_t units, int64_t kt, int bm, int bn, int bk, double rate, int sms)
{
    const int64_t busy = busiest(units, sms);
    const double j = (double)(busy < c.occ ? busy : c.occ);
    return (double)busy * ((double)kt + c.fixed / j) * 2.0 * bm * bn * bk / (rate * efficiency(c, j));
}

// The predicted seconds of a bm x bn x bk configuration of cost c in `splits` slices on
// m x n x k in copy class cls with `sms` SMs.
inline double time(const Cost &c, const Machine &mc, int bm, int bn, int bk, int64_t m, int64_t n,
                   int64_t k, int splits, int cls, int sms, size_t esize)
{
    const int64_t units = ((m + bm - 1) / bm) * ((n + bn - 1) / bn) * splits;
    const double rate = sm_rate(c, mc, bm, bn, m, n, cls) * mc.wave[wave_group(busiest(units, sms), splits)];
    const int64_t kt = ((k + bk - 1) / bk + splits - 1) / splits;
    double t = units_time(c, units, kt, bm, bn, bk, rate, sms) + mc.launch_s;
    if (splits > 1) t += (double)(splits + 1) * m * n * esize / mc.bytes_per_s + mc.launch_s;
    return t;
}

// The predicted seconds of configuration c unsplit with stream-K plan p (streamk_plan's, p.tiles
// > 0) on m x n x k: its first p.first tiles one a block as time() has them, then p.ctas blocks,
// j an SM, over the p.tiles kt k-tiles of the rest, L each, in 1 + L / kt pieces that each cost
// fixed + sk_fixed k-tiles, all at sk_rate times the rate; and a tile's last block adding the
// partial sums of the blocks before it, ceil(ctas / tiles) + 1 of them.
inline double time_streamk(const Cost &c, const Machine &mc, int bm, int bn, int bk, int64_t m, int64_t n,
                           int64_t k, const fg_kern::StreamKPlan &p, int cls, int sms, size_t esize)
{
    const double rate = sm_rate(c, mc, bm, bn, m, n, cls) * c.sk_rate, flop = 2.0 * bm * bn * bk;
    const int64_t kt = (k + bk - 1) / bk;
    double t = 2 * mc.launch_s; // the stream-K launch and its counters' reset
    if (p.first > 0) t += units_time(c, p.first, kt, bm, bn, bk, rate, sms) + mc.launch_s;
    const double run = (double)(p.tiles * kt) / p.ctas;
    const double j = (double)((p.ctas + sms - 1) / sms);
    t += (j * run + (1.0 + run / (double)kt) * (c.fixed + c.sk_fixed)) * flop / (rate * efficiency(c, j));
    t += (double)((p.ctas + p.tiles - 1) / p.tiles + 1) * bm * bn * esize / c.sk_bytes_per_s;
    return t;
}

// The configuration (an index of configs), slices and stream-K (unsplit, the plan forced) of
// least predicted time on g, whose operands allow 16-byte copies or not (al_a, al_b), and that
// time; splits above 0 fixes the slices (the configuration is still chosen) and leaves stream-K
// out, as does with_sk false. Stream-K is weighed for the configurations whose cost has it,
// where their instance for g has it (cf.streamk's plan, forced) and a tile has sk_min_ktiles
// k-tiles or more, and taken where it beats the rest by sk_margin.
template <class Config, size_t N, class G>
double choose(const Config (&configs)[N], const Cost (&costs)[N], const Machine &mc, const G &g, bool al_a,
              bool al_b, int splits, bool with_sk, int *config_out, int *splits_out, bool *streamk_out)
{
    const int cls = copy_class(g.ta, g.tb, al_a, al_b), sms = model_sms(mc);
    double best = INFINITY, best_sk = INFINITY;
    int best_c = 0, best_s = splits > 0 ? splits : 1, sk_c = -1;
    for (size_t i = 0; i < N; i++) {
        const Config &cf = configs[i];
        const int64_t tiles = ((g.m + cf.bm - 1) / cf.bm) * ((g.n + cf.bn - 1) / cf.bn);
        for (int s : split_choices) {
            if (splits > 0) s = splits; // the one asked
            else if (!split_useful(tiles, g.k, cf.bk, s, sms)) continue;
            const double t = time(costs[i], mc, cf.bm, cf.bn, cf.bk, g.m, g.n, g.k, s, cls, sms,
                                  sizeof(*g.a));
            if (t < best) best = t, best_c = (int)i, best_s = s;
            if (splits > 0) break;
        }
    }
    // Stream-K takes two launches at least: where that is not sk_margin below the best, none can
    // win (the small calls, whose host time counts, skip its plans).
    const bool weigh_sk = splits <= 0 && with_sk && 2 * mc.launch_s * (1.0 + mc.sk_margin) < best;
    for (size_t i = 0; weigh_sk && i < N; i++) {
        const Config &cf = configs[i];
        if (costs[i].sk_rate <= 0 || !cf.streamk || (g.k + cf.bk - 1) / cf.bk < mc.sk_min_ktiles) continue;
        const fg_kern::StreamKPlan p = cf.streamk(cf.instance(g, 1), g, /*force=*/true);
        if (p.tiles < 1 || p.ctas < 1) continue;
        const double t = time_streamk(costs[i], mc, cf.bm, cf.bn, cf.bk, g.m, g.n, g.k, p, cls, sms, sizeof(*g.a));
        if (t < best_sk) best_sk = t, sk_c = (int)i;
    }
    *streamk_out = sk_c >= 0 && best_sk * (1.0 + mc.sk_margin) < best;
    if (*streamk_out) best = best_sk, best_c = sk_c, best_s = 1;
    *config_out = best_c, *splits_out = best_s;
    return best;
}

// Whether copying the operands that rule out 16-byte copies into aligned workspace first
// (backends/cuda/pack.cu) pays: the model's best time with them aligned plus the copies (each
// reads and writes its rows x cols elements, and has a fixed cost) against its best time as they
// are. Only operands whose alignment the family's copies depend on count (k_free). pack_a,
// pack_b: which to copy (none where it does not pay).
template <class Config, size_t N, class G>
void pack_choice(const Config (&configs)[N], const Cost (&costs)[N], const Machine &mc, const G &g, bool al_a,
                 bool al_b, bool *pack_a, bool *pack_b)
{
    *pack_a = *pack_b = false;
    const bool want_a = !al_a && !(mc.k_free && g.ta), want_b = !al_b && !(mc.k_free && !g.tb);
    if (!want_a && !want_b) return;
    // The copies cost pack_s each at least and save at most the time as it is, which is at most
    // any configuration's unsplit: below the copies' cost, the search is skipped (the same
    // answer, without its host time on the small calls where that time counts).
    const int cls = copy_class(g.ta, g.tb, al_a, al_b), sms = model_sms(mc);
    double bound = INFINITY;
    for (size_t i = 0; i < N; i++) {
        const double t = time(costs[i], mc, configs[i].bm, configs[i].bn, configs[i].bk, g.m, g.n, g.k, 1, cls, sms,
                              sizeof(*g.a));
        if (t < bound) bound = t;
    }
    if (bound <= mc.pack_s * ((int)want_a + (int)want_b)) return;
    int c, s;
    bool sk;
    const double as_is = choose(configs, costs, mc, g, al_a, al_b, 0, true, &c, &s, &sk);
    const double es = (double)sizeof(*g.a);
    double packed = choose(configs, costs, mc, g, al_a || want_a, al_b || want_b, 0, true, &c, &s, &sk);
    if (want_a) packed += 2.0 * es * (double)g.m * (double)g.k / mc.bytes_per_s + mc.pack_s;
    if (want_b) packed += 2.0 * es * (double)g.k * (double)g.n / mc.bytes_per_s + mc.pack_s;
    if (packed < as_is) *pack_a = want_a, *pack_b = want_b;
}

} // namespace fg_choose
