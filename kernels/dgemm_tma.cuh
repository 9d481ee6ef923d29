// dgemm_tma.cuh: the DMMA kernels whose tiles the tensor memory accelerator copies (sm_90,
// FG_TMA): the plain kernel and the stream-K one.
#pragma once

#include "common/ptx.cuh"
#include "common/raster.cuh"
#include "common/streamk.cuh"
#include "common/tma.cuh"
#include "dgemm_dmma_common.cuh"

#include <stdint.h>

#include <type_traits>

namespace fg_dmma {

// FG_TMA (sm_90): the same warp tiles, fragments and epilogue, with the tiles copied by the
// tensor memory accelerator. One thread asks for each k-tile of op(A) and op(B) (one box each);
// the copies count their bytes on the stage's `full` mbarrier, and every thread arrives on its
// `empty` mbarrier once it has read the stage, after which the stage is refilled. No thread
// computes addresses or waits at a block-wide barrier in the main loop. Layouts (doubles):
// - an mn-contiguous operand lies in k-major rows of BMN + 4: the box is 4 wider than the tile
//   (the 4 are the next tile's, or zeros past the matrix), which is the padding of Layout;
// - a k-contiguous one in mn-major rows of BK = 16 (128 bytes), swizzled by the accelerator:
//   element (mn, k) is at 16 mn + 2 ((k / 2) ^ (mn % 8)) + k % 2, so the fragment loads of a
//   quarter of the warp (8-byte: rows g, columns t) fall in distinct banks.
// K past the matrix reads zeros, so the last k-tile needs no predicate; split-K slices are whole
// k-tiles. Needs A, B 16-byte aligned and lda, ldb even (the launcher checks; else dgemm_dmma).
template <class Cfg, bool TA, bool TB>
struct TmaLayout {
    static_assert(Cfg::BK == 16, "FG_TMA: BK = 16 (128-byte rows)");
    static constexpr bool A_KROWS = !TA, B_KROWS = TB;
    static constexpr int LD_A = Cfg::BM + 4, LD_B = Cfg::BN + 4; // k-major rows
    static constexpr int round1k(int bytes) { return (bytes + 1023) / 1024 * 1024; }
    // Stage sizes in bytes, multiples of 1024 (the swizzle's alignment), and the bytes a
    // stage's two boxes bring.
    static constexpr int A_BYTES = (A_KROWS ? 16 * LD_A : 16 * Cfg::BM) * 8;
    static constexpr int B_BYTES = (B_KROWS ? 16 * LD_B : 16 * Cfg::BN) * 8;
    static constexpr int A_STAGE = round1k(A_BYTES), B_STAGE = round1k(B_BYTES);
};

template <class Cfg>
struct TmaSmem {
    // The largest layout of any transpose pair, the barriers, and room to align to 1024.
    static constexpr int STAGE = TmaLayout<Cfg, false, true>::A_STAGE + TmaLayout<Cfg, false, true>::B_STAGE;
    static constexpr int BYTES = Cfg::STAGES * STAGE + 1024 + 16 * Cfg::STAGES;
    static_assert(BYTES <= 227 * 1024, "shared memory of one block on sm_90");
};

// The TMA kernels' shared memory: the stages' `full` and `empty` mbarriers, then the stages,
// aligned to 1024 (the swizzle's alignment).
template <class Cfg>
__device__ __forceinline__ void tma_smem(uint64_t *&full, uint64_t *&empty, unsigned char *&tiles)
{
    extern __shared__ __align__(16) unsigned char smem_t[];
    full = reinterpret_cast<uint64_t *>(smem_t), empty = full + Cfg::STAGES;
    const uint32_t base = smem_addr(smem_t);
    tiles = smem_t + ((base + 16 * Cfg::STAGES + 1023) / 1024 * 1024 - base);
}

// Thread 0 of a block, before its first k-tile is issued.
template <class Cfg>
__device__ __forceinline__ void tma_ring_init(const CUtensorMap &map_a, const CUtensorMap &map_b, uint64_t *full,
                                              uint64_t *empty)
{
    tma_prefetch_map(&map_a);
    tma_prefetch_map(&map_b);
    for (int st = 0; st < Cfg::STAGES; st++) mbar_init(&full[st], 1), mbar_init(&empty[st], Cfg::THREADS);
    mbar_init_fence();
}

// The product of op(A)'s rows [m0, m0 + BM) and op(B)'s columns [n0, n0 + BN) over ktiles k-tiles
// of 16 from k = k0 (of an m x n C), then epi(acc, row0, col0, inside): the lane's accumulators,
// its first row and column of C (store_c's), whether the tile lies inside C. `used`: the k-tiles
// the block's ring of stages held before (the barriers go on from their phases: the pieces of
// a stream-K block share one ring); INIT: the block's first, which sets the ring up. Every
// k-tile issued is consumed before it returns, so a next call may refill any stage. The
// accumulators stay inside (epi gets them) and the ring's set-up is part of it (INIT): returned
// to the caller, or set up apart, they change the plain kernel's code, and it runs slower.
template <class Cfg, bool TA, bool TB, bool INIT, class Epilogue>
__device__ __forceinline__ void tma_product(const CUtensorMap &map_a, const CUtensorMap &map_b, int64_t m,
                                            int64_t n, int m0, int n0, int64_t k0, int ktiles, int used, bool vec_c,
                                            Epilogue &&epi)
{
    constexpr int BM = Cfg::BM, BN = Cfg::BN, STAGES = Cfg::STAGES;
    constexpr int MT = Cfg::MT, NT = Cfg::NT;
    using L = TmaLayout<Cfg, TA, TB>;
    uint64_t *full, *empty;
    unsigned char *tiles;
    tma_smem<Cfg>(full, empty, tiles);
    const double *as = reinterpret_cast<const double *>(tiles);
    const double *bs = reinterpret_cast<const double *>(tiles + STAGES * L::A_STAGE);

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int wm0 = warp % Cfg::WARPS_M * Cfg::WM, wn0 = warp / Cfg::WARPS_M * Cfg::WN;

    // Tile kt into stage st: the box of op(A) at (m0, k) or (k, m0) as it lies in memory.
    auto issue = [&](int st, int kt) {
        const int kk = (int)k0 + 16 * kt;
        unsigned char *a_dst = tiles + st * L::A_STAGE, *b_dst = tiles + STAGES * L::A_STAGE + st * L::B_STAGE;
        mbar_expect_bytes(&full[st], L::A_BYTES + L::B_BYTES);
        if (L::A_KROWS) tma_load_2d(a_dst, &map_a, &full[st], m0, kk);
        else tma_load_2d(a_dst, &map_a, &full[st], kk, m0);
        if (L::B_KROWS) tma_load_2d(b_dst, &map_b, &full[st], n0, kk);
        else tma_load_2d(b_dst, &map_b, &full[st], kk, n0);
    };
    const int st0 = used % STAGES; // the stage of k-tile 0, and its phases' parity
    const uint32_t phase0 = (uint32_t)(used / STAGES) & 1;
    if (tid == 0) {
        if (INIT) tma_ring_init<Cfg>(map_a, map_b, full, empty);
        for (int i = 0; i < STAGES && i < ktiles; i++) issue(st0 + i < STAGES ? st0 + i : st0 + i - STAGES, i);
    }
    __syncthreads();

    double acc[MT][NT][4];
    zero_acc<Cfg>(acc);

    // A lane's fragments as in dgemm_dmma: a[2p + h] = A(row 2g + h, k t + 4p) of its row block,
    // b[q] = B(k t + 4q, column g) of its column block, for the k-steps ks = 0, 1 of a tile.
    // Swizzled rows: (k / 2) ^ (mn % 8) = (4 ks + 2 p) ^ ((t / 2) ^ (mn % 8)), the last part a
    // lane's constant (mn % 8 is 2g + h for A, g for B).
    // A k-contiguous op(B) has its columns paired too (store_c's PAIR_N): with rows g of a
    // quarter-warp, g % 8 ^ t / 2 would take 4 values, (2g + h) % 8 ^ t / 2 takes 8.
    constexpr bool PAIR_N = !L::B_KROWS;
    static_assert(!PAIR_N || NT % 2 == 0, "paired columns: WN a multiple of 16");
    const int ya0 = (t / 2) ^ ((2 * g) & 7), ya1 = (t / 2) ^ ((2 * g + 1) & 7);
    // Into af[i][ao ..] and bf[j][bo ..]: an m16n8k16 step's fragments are the m16n8k8 ones of
    // k-steps 0 and 1 side by side.
    auto fragments = [&](int st, int ks, auto &af, auto &bf, int ao, int bo) {
        const double *a_s = as + st * (L::A_STAGE / 8), *b_s = bs + st * (L::B_STAGE / 8);
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int p = 0; p < 2; p++) {
                const int mn = wm0 + 16 * i + 2 * g;
                if constexpr (L::A_KROWS) {
                    const double2 v = lds2(a_s + mn + (8 * ks + 4 * p + t) * L::LD_A);
                    af[i][ao + 2 * p] = v.x, af[i][ao + 2 * p + 1] = v.y;
                } else {
                    const int sw = 4 * ks + 2 * p;
                    af[i][ao + 2 * p] = a_s[16 * mn + 2 * (sw ^ ya0) + t % 2];
                    af[i][ao + 2 * p + 1] = a_s[16 * (mn + 1) + 2 * (sw ^ ya1) + t % 2];
                }
            }
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int q = 0; q < 2; q++) {
                if constexpr (L::B_KROWS) {
                    bf[j][bo + q] = b_s[wn0 + 8 * j + g + (8 * ks + 4 * q + t) * L::LD_B];
                } else {
                    const int mn = wn0 + 16 * (j / 2) + 2 * g + j % 2;
                    const int sw = (4 * ks + 2 * q) ^ (j % 2 ? ya1 : ya0);
                    bf[j][bo + q] = b_s[16 * mn + 2 * sw + t % 2];
                }
            }
    };
    auto mmas = [&](const double (&af)[MT][Cfg::KI / 2], const double (&bf)[NT][Cfg::KI / 4]) {
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NT; j++) mma_16x8<Cfg::KI>(acc[i][j], af[i], bf[j]);
    };
    auto refill = [&](int kt, int st, auto lag) { // thread 0: tile kt - LAG's stage, once released
        constexpr int LAG = decltype(lag)::value;
        if (tid == 0 && kt >= LAG && kt - LAG + STAGES < ktiles) {
            const int prev = LAG == 1 ? (st == 0 ? STAGES - 1 : st - 1) // NT's code depends on this form
                                      : st >= LAG ? st - LAG : st - LAG + STAGES;
            mbar_wait(&empty[prev], (uint32_t)((used + kt - LAG) / STAGES) & 1);
            issue(prev, kt - LAG + STAGES);
        }
    };

    if constexpr (!Cfg::PREFETCH) {
        // m16n8k16 steps, a tile's fragments loaded, then used (the registers allow no second
        // set): half the MMA instructions of m16n8k8 steps, each reading and writing its
        // accumulators once per 16 of k. Under a GPU's power cap the clock follows the energy per
        // flop, and these steps spend less of it.
        double af[MT][8], bf[NT][4];
        uint32_t phase = phase0;
        auto tile = [&](int kt, int st) {
            mbar_wait(&full[st], phase);
            fragments(st, 0, af, bf, 0, 0);
            fragments(st, 1, af, bf, 4, 2);
            mbar_arrive(&empty[st]);
            refill(kt, st, std::integral_constant<int, STAGES >= 4 ? 2 : 1>());
            mmas(af, bf);
        };
        int kt = 0, st = st0;
        if constexpr (Cfg::RING && INIT) { // st0 = 0: whole rounds of the ring, stages as constants
            for (; kt + STAGES <= ktiles; kt += STAGES, phase ^= 1)
#pragma unroll
                for (int s = 0; s < STAGES; s++) tile(kt + s, s);
        }
        for (; kt < ktiles; kt++) {
            tile(kt, st);
            st = st + 1 == STAGES ? 0 : st + 1;
            phase ^= st == 0;
        }
    } else {
        // Fragments double-buffered across the two k-steps and into the next stage. A thread
        // releases a stage once it has loaded its second k-step's fragments; thread 0 refills
        // the stage of tile kt - LAG during tile kt, when every thread has long released it
        // (with LAG = 1, thread 0's warp would wait there for the slowest warp). The refill's
        // distance behind the tile computed; NT (both operands in padded k-major rows) keeps
        // every stage but the current one in flight.
        constexpr int LAG = STAGES >= 5 && !(L::A_KROWS && L::B_KROWS) ? 2 : 1;
        double af[2][MT][4], bf[2][NT][2];
        int st = st0;
        uint32_t phase = phase0;
        if (ktiles > 0) {
            mbar_wait(&full[st0], phase0);
            fragments(st0, 0, af[0], bf[0], 0, 0);
        }
        for (int kt = 0; kt < ktiles; kt++) {
            fragments(st, 1, af[1], bf[1], 0, 0);
            mbar_arrive(&empty[st]);
            mmas(af[0], bf[0]);
            refill(kt, st, std::integral_constant<int, LAG>());
            const int next = st + 1 == STAGES ? 0 : st + 1;
            const uint32_t next_phase = next == 0 ? phase ^ 1 : phase;
            if (kt + 1 < ktiles) {
                mbar_wait(&full[next], next_phase);
                fragments(next, 0, af[0], bf[0], 0, 0);
            }
            mmas(af[1], bf[1]);
            st = next, phase = next_phase;
        }
    }

    epi(acc, m0 + wm0 + 2 * g, n0 + wn0 + (PAIR_N ? 4 : 2) * t, m0 + BM <= m && n0 + BN <= n && vec_c);
}


template <class Cfg, bool TA, bool TB>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    dgemm_tma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
              int64_t m, int64_t n, int64_t k, int64_t kslice, double alpha, double beta,
              double *__restrict__ c, int64_t ldc, int64_t c_slice, bool vec_c)
{
#if __CUDA_ARCH__ >= 900
    constexpr int BM = Cfg::BM, BN = Cfg::BN;
    int64_t bm, bn;
    block_tile<Cfg::RASTER>((m + BM - 1) / BM, (n + BN - 1) / BN, bm, bn);
    const int64_t k0 = blockIdx.z * kslice;
    const int ktiles = (int)(((k - k0 < kslice ? k - k0 : kslice) + 15) / 16);
    c += blockIdx.z * c_slice;
    constexpr bool PAIR_N = !TmaLayout<Cfg, TA, TB>::B_KROWS;
    static_assert(Cfg::STAGED_BYTES <= Cfg::STAGES * TmaSmem<Cfg>::STAGE, "the staging fits in the stages");
    tma_product<Cfg, TA, TB, true>(map_a, map_b, m, n, (int)(bm * BM), (int)(bn * BN), k0, ktiles, 0, vec_c,
                                   [&](const auto &acc, int64_t row0, int64_t col0, bool inside) {
                                       if (inside) {
                                           store_c<Cfg, PAIR_N>(acc, m, n, row0, col0, true, alpha, beta, c, ldc);
                                           return;
                                       }
                                       // Every k-tile the accelerator brought has been read: the
                                       // stages are free once every warp is done with them.
                                       uint64_t *full, *empty;
                                       unsigned char *tiles;
                                       tma_smem<Cfg>(full, empty, tiles);
                                       __syncthreads();
                                       store_c_staged<Cfg, PAIR_N>(
                                           acc, m, n, row0, col0, alpha, beta, c, ldc,
                                           reinterpret_cast<double *>(tiles) + threadIdx.x / 32 * 16 * Cfg::STAGED_LD);
                                   });
#else
    __trap(); // launch() sends other architectures to dgemm_dmma
#endif
}

// The stream-K part of a launch (StreamK, launch_tma_pair): ctas blocks, each over its run of
// k-tiles of the last tiles, its pieces one after another through one ring of stages.
template <class Cfg, bool TA, bool TB>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    dgemm_tma_sk(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 int64_t m, int64_t n, double alpha, double beta, double *__restrict__ c, int64_t ldc,
                 bool vec_c, StreamK sk)
{
#if __CUDA_ARCH__ >= 900
    constexpr int BM = Cfg::BM, BN = Cfg::BN, MT = Cfg::MT, NT = Cfg::NT, THREADS = Cfg::THREADS;
    constexpr bool PAIR_N = !TmaLayout<Cfg, TA, TB>::B_KROWS;
    if (threadIdx.x == 0) { // before streamk_run's first barrier
        uint64_t *full, *empty;
        unsigned char *tiles;
        tma_smem<Cfg>(full, empty, tiles);
        tma_ring_init<Cfg>(map_a, map_b, full, empty);
    }
    constexpr int E = MT * NT * 4; // a lane's accumulators, acc[i][j][r] its element (i * NT + j) * 4 + r
    double acc[MT][NT][4];
    double *flat = &acc[0][0][0];
    int used = 0; // the k-tiles the ring has held
    // A thread's partial sums: element e of slot s at [s * BM * BN + e * THREADS], a warp's
    // accesses whole lines.
    auto partials = [&](int64_t slot) {
        return static_cast<double *>(sk.partials) + slot * (THREADS * E) + threadIdx.x;
    };
    auto origin = [&](int64_t tile, int &m0, int &n0) {
        int64_t bm, bn;
        block_tile<Cfg::RASTER>((m + BM - 1) / BM, (n + BN - 1) / BN, bm, bn, sk.first + tile);
        m0 = (int)(bm * BM), n0 = (int)(bn * BN);
    };
    streamk_run(
        sk,
        [&](int64_t tile, int64_t kt0, int64_t kt1) {
            int m0, n0;
            origin(tile, m0, n0);
            tma_product<Cfg, TA, TB, false>(map_a, map_b, m, n, m0, n0, 16 * kt0, (int)(kt1 - kt0), used, false,
                                            [&](const double (&a)[MT][NT][4], int64_t, int64_t, bool) {
#pragma unroll
                                                for (int e = 0; e < E; e++) flat[e] = (&a[0][0][0])[e];
                                            });
            used += (int)(kt1 - kt0);
        },
        [&](int64_t slot) {
            double *p = partials(slot);
#pragma unroll
            for (int e = 0; e < E; e++) p[e * THREADS] = flat[e];
        },
        [&](int64_t slot, auto first) {
            const double *p = partials(slot);
#pragma unroll
            for (int e = 0; e < E; e++) {
                const double v = __ldcg(p + e * THREADS);
                flat[e] = decltype(first)::value ? v : flat[e] + v;
            }
        },
        [&](int64_t tile) {
            int m0, n0;
            origin(tile, m0, n0);
            const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
            const int wm0 = warp % Cfg::WARPS_M * Cfg::WM, wn0 = warp / Cfg::WARPS_M * Cfg::WN;
            store_c<Cfg, PAIR_N>(acc, m, n, m0 + wm0 + 2 * (lane / 4), n0 + wn0 + (PAIR_N ? 4 : 2) * (lane % 4),
                                 m0 + BM <= m && n0 + BN <= n && vec_c, alpha, beta, c, ldc);
        });
#else
    __trap();
#endif
}

} // namespace fg_dmma
