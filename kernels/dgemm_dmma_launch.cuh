// dgemm_dmma_launch.cuh: the host side of the DMMA DGEMM family: which kernel of a
// configuration runs a problem (dgemm_tma where the configuration asks for it and the GPU and
// operands allow it, else dgemm_dmma), its stream-K plan, its launch, and the configuration as
// the plan sees it (fg_table::Config).
#pragma once

#include "common/launch.cuh"
#include "common/streamk.cuh"
#include "common/tma.cuh"
#include "dgemm_dmma.cuh"
#include "dgemm_tma.cuh"
#include "gemm_table.cuh"

#include <stdint.h>

#include <atomic>

namespace fg_dmma {

// The TMA kernels of a transpose pair, with what their launches keep per device.
template <class Cfg, bool TA, bool TB>
struct TmaKernels {
    static inline fg_kern::SmemAsked asked, asked_sk;
    static inline std::atomic<int> slots[64];
};

// Stream-K for the last wave of a TMA launch (streamk_plan): after 4 whole waves or more
// (SGEMM asks 8), where the last wave leaves more than 2% of the slots' time idle and a tile has
// 128 k-tiles or more: with fewer k-tiles a tile's partial sums cost more than the last wave's
// idle time (perf/NOTES.md, DGEMM).
constexpr int TMA_SK_MIN_WAVES = 4, TMA_SK_MIN_KTILES = 128;

template <class Cfg, bool TA, bool TB>
fg_kern::StreamKPlan tma_plan(int64_t m, int64_t n, int64_t k, bool force)
{
    using K = TmaKernels<Cfg, TA, TB>;
    const int64_t tiles = ((m + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
    if (tiles > 0x7fffffff) return {};
    const int waves = fg_kern::resident_blocks(dgemm_tma<Cfg, TA, TB>, K::asked, K::slots, Cfg::THREADS,
                                               TmaSmem<Cfg>::BYTES);
    return fg_kern::streamk_plan(tiles, (k + 15) / 16, waves, TMA_SK_MIN_KTILES, force, TMA_SK_MIN_WAVES);
}

// Whether the current device has the tensor memory accelerator (sm_90 on).
inline bool tma_device()
{
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return major >= 9;
}

// Sizes within the accelerator's 32-bit coordinates (a box may reach a tile past the end).
inline bool tma_sizes(int64_t m, int64_t n, int64_t k, int bm, int bn)
{
    return m + bm <= 0x7fffffff && n + bn <= 0x7fffffff && k + 16 <= 0x7fffffff;
}

// Whether dgemm_tma can run here on these operands: tma_device, tma_sizes, and what tma_map
// asks of A and B (16-byte aligned, leading dimensions even).
inline bool tma_possible(int64_t m, int64_t n, int64_t k, int bm, int bn, const double *a, int64_t lda,
                         const double *b, int64_t ldb)
{
    return tma_device() && tma_sizes(m, n, k, bm, bn) && fg_kern::tma_encoder() && (uintptr_t)a % 16 == 0 &&
           (uintptr_t)b % 16 == 0 && lda % 2 == 0 && ldb % 2 == 0;
}

// Launches dgemm_tma<Cfg, TA, TB> on g where the accelerator can map A and B: the stream-K plan
// sk where it has tiles, else `splits` slices (ws: their partial products). Returns false,
// having launched nothing, where it cannot map them.
template <class Cfg, bool TA, bool TB>
bool launch_tma_pair(const fg_kern::Gemm<double> &g, int splits, const fg_kern::StreamKPlan &sk, void *ws,
                     cudaStream_t s, cudaError_t *err)
{
    using L = TmaLayout<Cfg, TA, TB>;
    using K = TmaKernels<Cfg, TA, TB>;
    const int64_t m = g.m, n = g.n, k = g.k, ldc = g.ldc;
    const double alpha = g.alpha, beta = g.beta;
    double *c = g.c;
    CUtensorMap ma, mb;
    if (!tma_sizes(m, n, k, Cfg::BM, Cfg::BN)) return false;
    if (!(L::A_KROWS ? tma_map(&ma, g.a, m, k, g.lda, 8, L::LD_A, 16, false)
                     : tma_map(&ma, g.a, k, m, g.lda, 8, 16, Cfg::BM, true)) ||
        !(L::B_KROWS ? tma_map(&mb, g.b, n, k, g.ldb, 8, L::LD_B, 16, false)
                     : tma_map(&mb, g.b, k, n, g.ldb, 8, 16, Cfg::BN, true)))
        return false;
    constexpr int SMEM = TmaSmem<Cfg>::BYTES, THREADS = Cfg::THREADS;
    if (sk.tiles > 0) {
        *err = fg_kern::allow_smem(dgemm_tma<Cfg, TA, TB>, K::asked, SMEM);
        if (*err == cudaSuccess) *err = fg_kern::allow_smem(dgemm_tma_sk<Cfg, TA, TB>, K::asked_sk, SMEM);
        fg_kern::StreamK run;
        if (*err == cudaSuccess) *err = fg_kern::streamk_args(run, sk, (k + 15) / 16, Cfg::BM, Cfg::BN, 8, ws, s);
        if (*err != cudaSuccess) return true;
        const bool vc = fg_kern::aligned16(c, ldc, 8);
        if (sk.first > 0)
            dgemm_tma<Cfg, TA, TB><<<(unsigned)sk.first, THREADS, SMEM, s>>>(ma, mb, m, n, k, k, alpha, beta, c,
                                                                             ldc, 0, vc);
        dgemm_tma_sk<Cfg, TA, TB><<<(unsigned)sk.ctas, THREADS, SMEM, s>>>(ma, mb, m, n, alpha, beta, c, ldc,
                                                                          vc, run);
        *err = cudaGetLastError();
        return true;
    }
    *err = fg_kern::launch_sliced(
        dgemm_tma<Cfg, TA, TB>, K::asked, SMEM, Cfg::BM, Cfg::BN, Cfg::BK, m, n, k, alpha, beta, c, ldc, splits,
        static_cast<double *>(ws), s,
        [&](dim3 grid, int64_t kslice, double al, double be, double *cs, int64_t ldcs, int64_t slice, bool vc) {
            dgemm_tma<Cfg, TA, TB><<<grid, THREADS, SMEM, s>>>(ma, mb, m, n, k, kslice, al, be, cs, ldcs, slice, vc);
        });
    return true;
}

// Launches dgemm_dmma<Cfg> for g's transpose pair in `splits` slices (ws: their partial products).
template <class Cfg>
cudaError_t launch_dmma(const fg_kern::Gemm<double> &g, int splits, void *ws, cudaStream_t s)
{
    static fg_kern::SmemAsked asked[4];
    const fg_kern::GemmKernel<double> kernels[4] = {dgemm_dmma<Cfg, false, false>, dgemm_dmma<Cfg, true, false>,
                                                    dgemm_dmma<Cfg, false, true>, dgemm_dmma<Cfg, true, true>};
    const int t = g.ta + 2 * g.tb;
    return fg_kern::launch_tiles<double>(kernels[t], asked[t], Cfg::THREADS, Cfg::SMEM_BYTES, Cfg::BM, Cfg::BN,
                                         Cfg::BK, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c,
                                         g.ldc, splits, static_cast<double *>(ws), s);
}

// Cfg's instances: [ta + 2 tb] for the transpose pair on dgemm_dmma, + 4 on dgemm_tma (a
// configuration with FG_TMA, where tma_possible).
template <class Cfg>
int instance(const fg_kern::Gemm<double> &g, int)
{
    const int t = g.ta + 2 * g.tb;
    if constexpr (Cfg::TMA)
        if (tma_possible(g.m, g.n, g.k, Cfg::BM, Cfg::BN, g.a, g.lda, g.b, g.ldb)) return t + 4;
    return t;
}

// The stream-K plan of instance i on g: the TMA instances' (streamk_plan, tma_plan), none for
// the others.
template <class Cfg>
fg_kern::StreamKPlan streamk(int i, const fg_kern::Gemm<double> &g, bool force)
{
    if constexpr (!Cfg::TMA) {
        return {};
    } else {
        using PlanFn = fg_kern::StreamKPlan (*)(int64_t, int64_t, int64_t, bool);
        const PlanFn plans[4] = {tma_plan<Cfg, false, false>, tma_plan<Cfg, true, false>,
                                 tma_plan<Cfg, false, true>, tma_plan<Cfg, true, true>};
        return i >= 4 ? plans[i - 4](g.m, g.n, g.k, force) : fg_kern::StreamKPlan{};
    }
}

// Launches instance i on g: the stream-K plan sk where it has tiles, else `splits` slices (ws:
// their partial products). A TMA instance whose operands the accelerator cannot map after all
// runs dgemm_dmma, unsplit where the plan was stream-K's.
template <class Cfg>
cudaError_t launch(int i, const fg_kern::Gemm<double> &g, int splits, const fg_kern::StreamKPlan &sk, void *ws,
                   cudaStream_t s)
{
    if constexpr (Cfg::TMA) {
        if (i >= 4) {
            using Fn = bool (*)(const fg_kern::Gemm<double> &, int, const fg_kern::StreamKPlan &, void *,
                                cudaStream_t, cudaError_t *);
            const Fn pairs[4] = {launch_tma_pair<Cfg, false, false>, launch_tma_pair<Cfg, true, false>,
                                 launch_tma_pair<Cfg, false, true>, launch_tma_pair<Cfg, true, true>};
            cudaError_t err = cudaSuccess;
            if (pairs[i - 4](g, splits, sk, ws, s, &err)) return err;
        }
        cudaGetLastError();
        if (sk.tiles > 0) splits = 1;
    }
    // Cfg itself, or for a TMA configuration dgemm_dmma with its fragments prefetched
    // (FG_PREFETCH) whatever its own steps: where the operands' strides are no multiples of 16
    // bytes its m16n8k16 steps without prefetched fragments run far slower (perf/NOTES.md,
    // "FG_RING").
    constexpr int fallback_feat = Cfg::TMA ? (Cfg::FEAT & ~(FG_TMA | FG_RING)) | FG_PREFETCH : Cfg::FEAT;
    using Fallback = typename Cfg::template With<Cfg::FALLBACK_STAGES, fallback_feat>;
    return launch_dmma<Fallback>(g, splits, ws, s);
}

} // namespace fg_dmma

// The configuration __VA_ARGS__ (a DmmaConfig) called `name`, as the plan sees it: a
// fg_table::Config's initializer, with the functions named in place for the kernels' order
// (FG_SIMT_CONFIG).
#define FG_DMMA_CONFIG(name, ...)                                                               \
    {name, __VA_ARGS__::BM, __VA_ARGS__::BN, __VA_ARGS__::BK, fg_dmma::instance<__VA_ARGS__>,   \
     __VA_ARGS__::TMA ? fg_dmma::streamk<__VA_ARGS__> : nullptr, fg_dmma::launch<__VA_ARGS__>}
