// sgemm_simt_launch.cuh: the host side of the SIMT SGEMM family (sgemm_simt.cuh): which
// instance of a configuration runs a problem, its stream-K plan, its launch, and the
// configuration as the plan sees it (fg_table::Config).
#pragma once

#include "common/launch.cuh"
#include "common/streamk.cuh"
#include "gemm_table.cuh"
#include "sgemm_simt.cuh"

#include <stdint.h>

#include <atomic>
#include <utility>

namespace fg_simt {

// Configurations with stream-K instances: those whose lanes hold 128 accumulators, one block per
// SM or two, the ones the table gives the large problems.
template <class Cfg>
constexpr bool has_streamk() { return Cfg::TM * Cfg::TN >= 128 && Cfg::KG == 1; }

// Whether an operand that takes 16-byte copies along a dimension of `size` leaves its last tile
// (MNT long) crossing the edge, where the kernel puts it (inside_origin: moved inside only by a
// multiple of 4 and only where the dimension holds a whole tile); that tile's blocks run the
// general loop for all of k. Where FG_SPREAD gives a configuration its ELEM instances, the
// operand is copied element by element instead: the tile moves inside (or, shorter than a tile,
// its rows past the edge repeat the last one: TileLoader's CLAMP), and every block runs the
// fast loop.
template <int MNT>
bool edge_stays(int64_t size)
{
    const int64_t last = (size - 1) / MNT * MNT; // the last tile's place on the grid
    return size % MNT != 0 && inside_origin<MNT>(last, size, /*vec16=*/true) + MNT > size;
}

// NN on a block tile wider than tall runs as the TT of the transposed problem, C^T = B^T A^T
// (op(A') = B^T, op(B') = A^T, the kernel storing C^T: CT): the k-contiguous operand B then goes
// over the tile's shorter side, so a k-tile takes half the 4-byte transposing copies (8 a
// thread at 128x256 instead of 16). Where A allows the 16-byte copies of op(B') (aligned16) and
// K is not split into slices (perf/NOTES.md, SGEMM item 23), and where the transposed problem
// takes no more tiles than the problem: on m x n it takes ceil(n / BM) ceil(m / BN) tiles, which
// on shapes off the tile multiples can exceed ceil(m / BM) ceil(n / BN) and spill into another
// wave (the chooser's cost model counts the tiles of m x n). Not where the swapped kernel's tile
// along m (BN long) would stay on the edge (edge_stays): the unswapped NN instances run it in
// the fast loop.
template <class Cfg>
bool swaps_nn(const fg_kern::Gemm<float> &g, int splits)
{
    if (!Cfg::SWAP_NN || g.ta || g.tb || splits > 1 || !aligned16(g.a, g.lda, 4)) return false;
    if (Cfg::SPREAD && edge_stays<Cfg::BN>(g.m)) return false;
    const int64_t tiles = ((g.m + Cfg::BM - 1) / Cfg::BM) * ((g.n + Cfg::BN - 1) / Cfg::BN);
    return ((g.n + Cfg::BM - 1) / Cfg::BM) * ((g.m + Cfg::BN - 1) / Cfg::BN) <= tiles;
}

// Cfg's instances: [ta + 2 tb] for the transpose pair, + 4 with FG_SPREAD where op(A) = A or
// op(B) = B^T (mn-contiguous) cannot take 16-byte copies or would leave a tile on the edge with
// them (edge_stays: the ELEM ones); [8] swaps_nn's. Instance t's stream-K kernel is the t-th of
// launch's (where the configuration has them).
template <class Cfg>
struct Instances {
    static constexpr bool E = Cfg::SPREAD; // without FG_SPREAD the last four are the first four
    static constexpr fg_kern::GemmKernel<float> kernels[9] = {
        sgemm_simt<Cfg, false, false>,    sgemm_simt<Cfg, true, false>,
        sgemm_simt<Cfg, false, true>,     sgemm_simt<Cfg, true, true>,
        sgemm_simt<Cfg, false, false, E>, sgemm_simt<Cfg, true, false, E>,
        sgemm_simt<Cfg, false, true, E>,  sgemm_simt<Cfg, true, true, E>,
        sgemm_simt<Cfg, true, true, false, Cfg::SWAP_NN>}; // the TT one where unused
    static inline fg_kern::SmemAsked asked[9], asked_sk[9];
    static inline std::atomic<int> slots[9][64];
};

// The instance that runs g in `splits` slices; with swaps_nn (8), the launch swaps the operands
// and m, n.
template <class Cfg>
int instance(const fg_kern::Gemm<float> &g, int splits)
{
    const int t = g.ta + 2 * g.tb;
    if (swaps_nn<Cfg>(g, splits)) return 8;
    const bool elem_a = !g.ta && (!aligned16(g.a, g.lda, 4) || edge_stays<Cfg::BM>(g.m));
    const bool elem_b = g.tb && (!aligned16(g.b, g.ldb, 4) || edge_stays<Cfg::BN>(g.n));
    return Instances<Cfg>::E && (elem_a || elem_b) ? t + 4 : t;
}

// The stream-K plan of instance t on g (on its m x n, swapped for 8).
template <class Cfg>
fg_kern::StreamKPlan streamk(int t, const fg_kern::Gemm<float> &g, bool force)
{
    using I = Instances<Cfg>;
    if (!has_streamk<Cfg>()) return {};
    const int64_t m = t == 8 ? g.n : g.m, n = t == 8 ? g.m : g.n;
    const int64_t tiles = ((m + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
    if (tiles > 0x7fffffff) return {};
    const int waves = fg_kern::resident_blocks(I::kernels[t], I::asked[t], I::slots[t], Cfg::THREADS,
                                               Cfg::SMEM_BYTES);
    return fg_kern::streamk_plan(tiles, (g.k + Cfg::BK - 1) / Cfg::BK, waves, 4 * Cfg::STAGES, force);
}

// Launches instance t on g: the stream-K plan sk where it has tiles, else `splits` slices (ws:
// their partial products).
template <class Cfg>
cudaError_t launch(int t, const fg_kern::Gemm<float> &g, int splits, const fg_kern::StreamKPlan &sk, void *ws,
                   cudaStream_t s)
{
    using I = Instances<Cfg>;
    int64_t m = g.m, n = g.n, lda = g.lda, ldb = g.ldb;
    const float *a = g.a, *b = g.b;
    if (t == 8) { // swaps_nn: C^T = B^T A^T
        std::swap(m, n);
        std::swap(a, b);
        std::swap(lda, ldb);
    }
    if constexpr (has_streamk<Cfg>()) {
        if (sk.tiles > 0) {
            constexpr bool E = I::E;
            constexpr decltype(&sgemm_simt_sk<Cfg, false, false>) sk_kernels[9] = {
                sgemm_simt_sk<Cfg, false, false>,           sgemm_simt_sk<Cfg, true, false>,
                sgemm_simt_sk<Cfg, false, true>,            sgemm_simt_sk<Cfg, true, true>,
                sgemm_simt_sk<Cfg, false, false, false, E>, sgemm_simt_sk<Cfg, true, false, false, E>,
                sgemm_simt_sk<Cfg, false, true, false, E>,  sgemm_simt_sk<Cfg, true, true, false, E>,
                sgemm_simt_sk<Cfg, true, true, Cfg::SWAP_NN>};
            return fg_kern::launch_streamk<float>(I::kernels[t], I::asked[t], sk_kernels[t], I::asked_sk[t], sk,
                                                  Cfg::THREADS, Cfg::SMEM_BYTES, Cfg::BM, Cfg::BN, Cfg::BK, m, n,
                                                  g.k, g.alpha, a, lda, b, ldb, g.beta, g.c, g.ldc, ws, s);
        }
    }
    return fg_kern::launch_tiles<float>(I::kernels[t], I::asked[t], Cfg::THREADS, Cfg::SMEM_BYTES, Cfg::BM,
                                        Cfg::BN, Cfg::BK, m, n, g.k, g.alpha, a, lda, b, ldb, g.beta, g.c,
                                        g.ldc, splits, static_cast<float *>(ws), s);
}

} // namespace fg_simt

// The configuration __VA_ARGS__ (a SimtConfig) called `name`, as the plan sees it: a
// fg_table::Config's initializer. It names the functions in place, not through a function or a
// variable template: the compiler emits the kernels in the order of these references (a
// table's plain kernels first, then its stream-K ones), and the code it makes for a kernel can
// depend on that order.
#define FG_SIMT_CONFIG(name, ...)                                                               \
    {name, __VA_ARGS__::BM, __VA_ARGS__::BN, __VA_ARGS__::BK, fg_simt::instance<__VA_ARGS__>,   \
     fg_simt::has_streamk<__VA_ARGS__>() ? fg_simt::streamk<__VA_ARGS__> : nullptr,             \
     fg_simt::launch<__VA_ARGS__>}
