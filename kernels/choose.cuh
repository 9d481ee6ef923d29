// choose.cuh: the kernel chooser. For a call off the tuned grid it weighs every configuration of
// a family's table, unsplit and in each useful number of split-K slices, by a cost model of
// waves, tile efficiency and k depth, and takes the least predicted time. The model's constants
// are fitted by perf/tables/fit_model.py to tuner runs on random problems
// (kernels/*gemm_model.gen.h); time() below is that script's time_const, term for term. The same
// model says whether copying unaligned operands aligned first pays (pack_choice).
#pragma once

#include "common/launch.cuh"

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
};

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

// The predicted seconds of a bm x bn x bk configuration of cost c in `splits` slices on
// m x n x k in copy class cls with `sms` SMs.
inline double time(const Cost &c, const Machine &mc, int bm, int bn, int bk, int64_t m, int64_t n,
                   int64_t k, int splits, int cls, int sms, size_t esize)
{
    const double rate = c.tflops * 1e12 / mc.fitted_sms * mc.factor[cls] * (cls >= 12 ? 1.0 : c.unaligned) *
                        (m < bm || n < bn ? c.short_tile : 1.0) * c.trans[cls & 3];
    const int64_t units = ((m + bm - 1) / bm) * ((n + bn - 1) / bn) * splits;
    const int64_t kt = ((k + bk - 1) / bk + splits - 1) / splits;
    const int64_t busy = (units + sms - 1) / sms;
    const double j = (double)(busy < c.occ ? busy : c.occ);
    const double eff = j / c.jsat < 1.0 ? j / c.jsat : 1.0;
    double t = (double)busy * ((double)kt + c.fixed / j) * 2.0 * bm * bn * bk / (rate * eff) + mc.launch_s;
    if (splits > 1) t += (double)(splits + 1) * m * n * esize / mc.bytes_per_s + mc.launch_s;
    return t;
}

// The configuration (an index of configs) and slices of least predicted time on g, whose
// operands allow 16-byte copies or not (al_a, al_b), and that time; splits above 0 fixes the
// slices (the configuration is still chosen).
template <class Config, size_t N, class G>
double choose(const Config (&configs)[N], const Cost (&costs)[N], const Machine &mc, const G &g, bool al_a,
              bool al_b, int splits, int *config_out, int *splits_out)
{
    const int cls = copy_class(g.ta, g.tb, al_a, al_b), sms = model_sms(mc);
    double best = INFINITY;
    int best_c = 0, best_s = splits > 0 ? splits : 1;
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
    const double as_is = choose(configs, costs, mc, g, al_a, al_b, 0, &c, &s);
    const double es = (double)sizeof(*g.a);
    double packed = choose(configs, costs, mc, g, al_a || want_a, al_b || want_b, 0, &c, &s);
    if (want_a) packed += 2.0 * es * (double)g.m * (double)g.k / mc.bytes_per_s + mc.pack_s;
    if (want_b) packed += 2.0 * es * (double)g.k * (double)g.n / mc.bytes_per_s + mc.pack_s;
    if (packed < as_is) *pack_a = want_a, *pack_b = want_b;
}

} // namespace fg_choose
