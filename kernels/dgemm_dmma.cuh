// dgemm_dmma.cuh: the DMMA kernel with cp.async copies (dgemm_dmma_common.cuh has the family).
#pragma once

#include "common/loaders.cuh"
#include "common/pipeline.cuh"
#include "common/raster.cuh"
#include "dgemm_dmma_common.cuh"

#include <stdint.h>

#include <type_traits>

namespace fg_dmma {

template <class Cfg, bool TA, bool TB>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    dgemm_dmma(int64_t m, int64_t n, int64_t k, int64_t kslice, double alpha,
               const double *__restrict__ a, int64_t lda, const double *__restrict__ b,
               int64_t ldb, double beta, double *__restrict__ c, int64_t ldc, int64_t c_slice,
               bool vec_a, bool vec_b, bool vec_c)
{
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, STAGES = Cfg::STAGES;
    constexpr int THREADS = Cfg::THREADS, MT = Cfg::MT, NT = Cfg::NT;
    using L = Layout<Cfg, TA, TB>;
    constexpr bool A_KROWS = L::A_KROWS, B_KROWS = L::B_KROWS;
    constexpr int A_MN = L::A_MN, A_K = L::A_K, B_MN = L::B_MN, B_K = L::B_K;
    extern __shared__ __align__(16) double smem_d[];
    double *as = smem_d, *bs = smem_d + STAGES * Cfg::A_STAGE;

    int64_t bm, bn;
    block_tile<Cfg::RASTER>((m + BM - 1) / BM, (n + BN - 1) / BN, bm, bn);
    const int64_t m0 = bm * BM, n0 = bn * BN;
    {
        const int64_t k0 = blockIdx.z * kslice;
        k = k - k0 < kslice ? k - k0 : kslice;
        a += TA ? k0 : k0 * lda;
        b += TB ? k0 * ldb : k0;
        c += blockIdx.z * c_slice;
    }
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int wm0 = warp % Cfg::WARPS_M * Cfg::WM, wn0 = warp / Cfg::WARPS_M * Cfg::WN;
    const int64_t ktiles = (k + BK - 1) / BK;

    // Loaders: an m-contiguous op(A) (no TA) and an n-contiguous op(B) (TB) take TileLoader's
    // k-major rows, the others TileLoaderK's mn-major rows.
    using LoadAK = TileLoader<double, BM, BK, THREADS, L::LD_MN_A, true, Cfg::SYNC>;
    using LoadAM = TileLoaderK<double, BM, BK, THREADS, L::LD_K_A, Cfg::SYNC>;
    using LoadBK = TileLoader<double, BN, BK, THREADS, L::LD_MN_B, true, Cfg::SYNC>;
    using LoadBM = TileLoaderK<double, BN, BK, THREADS, L::LD_K_B, Cfg::SYNC>;
    typename std::conditional<A_KROWS, LoadAK, LoadAM>::type load_a;
    typename std::conditional<B_KROWS, LoadBK, LoadBM>::type load_b;
    load_a.init(a, lda, m0, m, vec_a, tid);
    load_b.init(b, ldb, n0, n, vec_b, tid);
    int64_t k_left = k;
    auto load_stage = [&](int stage) {
        load_a.load(as + stage * Cfg::A_STAGE, a, k_left);
        load_b.load(bs + stage * Cfg::B_STAGE, b, k_left);
        k_left -= BK;
    };

    double acc[MT][NT][4];
    zero_acc<Cfg>(acc);

    // A lane's fragments start at (mn, k) = (2g, t) of its warp tile for A, (g, t) for B;
    // a[r] = A(MMA row g + 8(r%2), k t + 4(r/2)), b[q] = B(k t + 4q, column g). With A_SWAP
    // (Layout), lanes with g & 2 start at row 2g + 1 and take row 2g for a[2p + 1].
    const int swap = L::A_SWAP ? (g >> 1) & 1 : 0;
    const int a_lane = (wm0 + 2 * g + swap) * A_MN + t * A_K, b_lane = (wn0 + g) * B_MN + t * B_K;
    const int a_row1 = (1 - 2 * swap) * A_MN; // from a lane's first A row to its second
    // The fragments of k-step ks (of KI) of a stage: A for the warp's MT row blocks, B for its
    // NT column blocks.
    constexpr int KI = Cfg::KI;
    auto fragments = [&](int stage, int ks, double (&af)[MT][KI / 2], double (&bf)[NT][KI / 4]) {
        const double *a_s = as + stage * Cfg::A_STAGE + a_lane + ks * KI * A_K;
        const double *b_s = bs + stage * Cfg::B_STAGE + b_lane + ks * KI * B_K;
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int p = 0; p < KI / 4; p++) { // a[2p + h]: row 2g + h, k t + 4p
                if constexpr (A_KROWS) {         // the two rows side by side
                    const double2 v = lds2(a_s + 16 * i + 4 * p * A_K);
                    af[i][2 * p] = v.x, af[i][2 * p + 1] = v.y;
                } else {
                    af[i][2 * p] = a_s[16 * i * A_MN + 4 * p];
                    af[i][2 * p + 1] = a_s[16 * i * A_MN + a_row1 + 4 * p];
                }
            }
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int q = 0; q < KI / 4; q++) bf[j][q] = b_s[8 * j * B_MN + 4 * q * B_K];
    };
    auto mmas = [&](const double (&af)[MT][KI / 2], const double (&bf)[NT][KI / 4]) {
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NT; j++) mma_16x8<KI>(acc[i][j], af[i], bf[j]);
    };

    if (!Cfg::PREFETCH) {
        // The fragments of a k-step are loaded, then used: within a stage only.
        auto compute = [&](int stage) {
#pragma unroll
            for (int ks = 0; ks < BK / KI; ks++) {
                double af[MT][KI / 2], bf[NT][KI / 4];
                fragments(stage, ks, af, bf);
                mmas(af, bf);
            }
        };
        pipeline<STAGES>(ktiles, load_stage, compute);
    } else {
        // Fragments double-buffered in registers: those of the next k-step (of the next stage
        // after the last) are loaded before the MMAs of this one, so shared-memory latency hides
        // behind them. The copies of a new k-tile are issued at the first k-step of each tile,
        // into the buffer the previous tile was read from (every warp left it at the barrier).
        constexpr int KSTEPS = BK / KI;
#pragma unroll
        for (int st = 0; st < STAGES - 1; st++) {
            if (st < ktiles) load_stage(st);
            cp_async_commit();
        }
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        double af[2][MT][KI / 2], bf[2][NT][KI / 4];
        int read = 0, write = STAGES - 1;
        fragments(read, 0, af[0], bf[0]);
        for (int64_t kt = 0; kt < ktiles; kt++) {
#pragma unroll
            for (int ks = 0; ks < KSTEPS; ks++) {
                if (ks == KSTEPS - 1) { // the next tile must have landed before its fragments
                    cp_async_wait<STAGES - 2>();
                    __syncthreads();
                    read = read + 1 == STAGES ? 0 : read + 1;
                }
                if (ks == 0) {
                    if (kt + STAGES - 1 < ktiles) load_stage(write);
                    cp_async_commit();
                    write = write + 1 == STAGES ? 0 : write + 1;
                }
                fragments(read, (ks + 1) % KSTEPS, af[(ks + 1) % 2], bf[(ks + 1) % 2]);
                mmas(af[ks % 2], bf[ks % 2]);
            }
        }
        cp_async_wait<0>();
    }

    if (L::A_SWAP && swap) { // the accumulators' rows back in the epilogue's order
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    const double x = acc[i][j][c];
                    acc[i][j][c] = acc[i][j][c + 2], acc[i][j][c + 2] = x;
                }
    }

    const bool vec = m0 + BM <= m && n0 + BN <= n && vec_c;
    if constexpr (Cfg::STAGED_C) {
        static_assert(Cfg::STAGED_BYTES <= Cfg::SMEM_BYTES, "the staging fits in the stages");
        if (!vec) {
            __syncthreads(); // every warp's last fragments read from the stages
            store_c_staged<Cfg>(acc, m, n, m0 + wm0 + 2 * g, n0 + wn0 + 2 * t, alpha, beta, c, ldc,
                                smem_d + warp * 16 * Cfg::STAGED_LD);
            return;
        }
    }
    store_c<Cfg>(acc, m, n, m0 + wm0 + 2 * g, n0 + wn0 + 2 * t, vec, alpha, beta, c, ldc);
}

} // namespace fg_dmma
