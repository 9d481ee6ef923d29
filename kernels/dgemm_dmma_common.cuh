// dgemm_dmma_common.cuh: the DGEMM kernel family on the FP64 tensor cores (mma.sync with f64
// operands: m16n8k16 on sm_90, the same 16x8x16 step as eight m8n8k4 on sm_80), as templates
// for the library's configurations (dgemm_dmma.cu, from the tuner's generated table) and for
// the tuner's candidates (perf/); this file holds what its kernels share: the configuration,
// the shared-memory layouts, the MMA step and the epilogue.
// Block tiles of op(A) and op(B) are staged in shared memory by the cp.async pipeline and the
// tile loaders (common/pipeline.cuh, common/loaders.cuh), each operand in the layout it has in
// memory (k-major rows when its columns run along M or N, mn-major rows when they run along
// K), so every copy can be 16 bytes. Each warp computes a WM x WN warp tile as (WM/16) x (WN/8) accumulator
// fragments. The MMA's rows are mapped to the tile's in an order that pairs a lane's rows
// (Layout): the fragment loads of op(A) in k-major rows are 16 bytes, and so are the stores of C
// in blocks inside the matrix. The padding of each layout keeps the fragment loads free of bank
// conflicts. Blocks are rasterized in groups for L2 reuse; gridDim.z slices K when the table
// asks for it. On sm_90, configurations with FG_TMA run dgemm_tma instead where the operands
// allow: the same warp tiles and epilogue, the tiles copied by the tensor memory accelerator;
// their last wave of a large problem runs as stream-K (dgemm_tma_sk, common/streamk.cuh).
// Where they do not, they run dgemm_dmma with prefetched fragments (FG_PREFETCH). The kernels:
// dgemm_dmma.cuh and dgemm_tma.cuh; their launch: dgemm_dmma_launch.cuh.
// Any M, N, K, leading dimension, alignment and transpose pair.
#pragma once

#include "common/features.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace fg_dmma {

using namespace fg_kern;

// What a configuration makes of its numbers: the block tile BM x BN x BK, the warp tile WM x WN,
// the stages, FEAT its tuning choices and ABLATE its ablation switches (features.h).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int FEAT_, int ABLATE_>
struct DmmaTraits {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int FEAT = FEAT_, ABLATE = ABLATE_;
    static_assert(tuning_only(FEAT), "FEATURES holds tuning choices only (features.h)");
    static_assert(ablation_allowed(ABLATE), "ablation switches are for perf/ builds (FG_ABLATION)");
    static constexpr bool SYNC = ABLATE & FG_SYNC_LOADS, RASTER = !(FEAT & FG_COLUMN_ORDER);
    // FG_PREFETCH: m16n8k8 steps with fragments double-buffered in registers across k-steps and
    // stages (as cuBLAS's sm90 DGEMM kernels do); else m16n8k16 steps loaded, then used.
    static constexpr bool PREFETCH = FEAT & FG_PREFETCH;
    static constexpr bool TMA = FEAT & FG_TMA; // dgemm_tma on sm_90 (dgemm_dmma_launch.cuh)
    static constexpr bool RING = FEAT & FG_RING;
    static constexpr int KI = PREFETCH ? 8 : 16; // k of one MMA step
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int MT = WM / 16, NT = WN / 8; // accumulator fragments of a warp
    // The padding of a row (in doubles) for each operand's layout and transpose pair, from
    // Layout<Cfg, TA, TB> in the kernel; a stage is sized for the largest (4).
    static constexpr bool PAD = !(ABLATE & FG_NO_PAD);
    static constexpr int A_STAGE = BK * (BM + 4) > BM * (BK + 4) ? BK * (BM + 4) : BM * (BK + 4);
    static constexpr int B_STAGE = BK * (BN + 4) > BN * (BK + 4) ? BK * (BN + 4) : BN * (BK + 4);
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(double);
    // Blocks per SM the registers should allow (__launch_bounds__), from an estimate of a
    // thread's registers: accumulators, fragments, addresses; at most 3 (the 32-wide tiles'
    // estimate of 128 would ask for 4, and ptxas's cap of 128 registers makes them spill).
    static constexpr int REGS = 8 * MT * NT + (PREFETCH ? 2 * (4 * MT + 4 * NT) : 8 * NT + 16) + 48;
    static constexpr int MIN_BLOCKS_R = 65536 / (THREADS * REGS);
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_R < 1 ? 1 : MIN_BLOCKS_R > 3 ? 3 : MIN_BLOCKS_R;
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles tile the block tile");
    static_assert(WM % 16 == 0 && WN % 8 == 0, "a warp tile is made of 16 x 8 fragments");
    static_assert(BK % 16 == 0 && BK <= 64, "BK: whole k-steps of 16");
    static_assert(STAGES >= 2 && STAGES <= 8, "2 (double buffering) to 8 pipeline stages");
    static_assert(!RING || (TMA && !PREFETCH), "FG_RING: the m16n8k16 TMA kernel");
    static_assert(SMEM_BYTES <= 227 * 1024 || TMA, "shared memory of one block on sm_90");
    // Where dgemm_tma cannot run (fg_dmma::launch): dgemm_dmma with as many of the stages as fit.
    static constexpr int STAGE_BYTES = (A_STAGE + B_STAGE) * (int)sizeof(double);
    static constexpr int FALLBACK_STAGES = SMEM_BYTES <= 227 * 1024 ? STAGES : 227 * 1024 / STAGE_BYTES;
    // store_c_staged: each warp stages 16 columns of its warp tile at a time, WM + 4 doubles a
    // column, in the shared memory of the stages (which every configuration's exceed). dgemm_dmma
    // takes it where a lane holds at most 32 accumulators: with 64 (64x32 and 32x64 warp tiles)
    // its code makes ptxas recompute the element copies' predicates in the main loop instead of
    // keeping them in a register, and the loop runs slower. dgemm_tma's main loop is unchanged by it.
    static constexpr bool STAGED_C = MT * NT <= 8;
    static constexpr int STAGED_LD = WM + 4;
    static constexpr int STAGED_BYTES = WARPS_M * WARPS_N * 16 * STAGED_LD * (int)sizeof(double);
    static_assert(NT % 2 == 0, "the staged epilogue's passes: WN a multiple of 16");
};

// A configuration of the library's tables and the tuner's candidates: tuning choices only.
// With<S, F>: the same kind of configuration with other stages and tuning choices.
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int FEAT = 0>
struct DmmaConfig : DmmaTraits<BM, BN, BK, WM, WN, STAGES, FEAT, 0> {
    template <int S, int F>
    using With = DmmaConfig<BM, BN, BK, WM, WN, S, F>;
};

#ifdef FG_ABLATION
// A configuration with ablation switches (perf/).
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int FEAT, int ABLATE>
struct DmmaAblated : DmmaTraits<BM, BN, BK, WM, WN, STAGES, FEAT, ABLATE> {
    template <int S, int F>
    using With = DmmaAblated<BM, BN, BK, WM, WN, S, F, ABLATE>;
};
#endif

__device__ __forceinline__ double2 lds2(const double *p) { return *reinterpret_cast<const double2 *>(p); }

// How a transpose pair's tiles lie in shared memory (g = lane/4, t = lane%4). op(A) is
// m-contiguous unless TA, op(B) n-contiguous if TB: such an operand is stored xs[k][mn] (k-major
// rows of LD_MN), the other xs[mn][k] (mn-major rows of LD_K). Row g + 8h of the MMA's A fragment
// i is row 16i + 2g + h of the warp tile: a lane's two A rows are then neighbours in k-major rows,
// one 16-byte load for the two registers the MMA wants side by side, and so are its two rows of
// a column of C in the epilogue. (k positions are not paired: 16-byte loads of op(B)'s mn-major
// rows for NN would not make it faster.)
// Padding: 16-byte loads are served a quarter-warp (g = 0..1, t = 0..3) at a time, 8-byte loads
// a half-warp (g = 0..3); the strides give each phase distinct banks (in doubles, mod 16):
// k-major rows of A 4t + 2g (stride 4 mod 16), of B 4t + g (stride 4); mn-major rows of B
// 4g + t (stride 4), of A 8g + 4h + t for rows 2g + h (stride 4), which A_SWAP makes distinct.
// Every padded row starts 32 bytes aligned: a 16-byte cp.async whose destination lies 16 bytes
// off its source's offset within a 32-byte sector takes about twice the shared-memory
// wavefronts, so strides of 2 mod 4 doubles (BK + 2), which would spread those loads without
// A_SWAP, are not used.
// A_SWAP (mn-major rows of A, padded): lanes with g & 2 take the warp tile's rows 2g + 1 - h for
// MMA row g + 8h instead of 2g + h, which spreads a half-warp's 8-byte loads over 8g + 4(h ^
// (g/2 & 1)) + t, all 16 banks; their accumulators' two rows come out swapped, and the kernel
// swaps them back before the epilogue.
template <class Cfg, bool TA, bool TB>
struct Layout {
    static constexpr bool A_KROWS = !TA, B_KROWS = TB;
    static constexpr bool A_SWAP = TA && Cfg::PAD;
    static constexpr int LD_MN_A = Cfg::BM + (Cfg::PAD ? 4 : 0), LD_K_A = Cfg::BK + (Cfg::PAD ? 4 : 0);
    static constexpr int LD_MN_B = Cfg::BN + (Cfg::PAD ? 4 : 0), LD_K_B = Cfg::BK + (Cfg::PAD ? 4 : 0);
    // Element (mn, k) of a stage is at mn * X_MN + k * X_K.
    static constexpr int A_MN = A_KROWS ? 1 : LD_K_A, A_K = A_KROWS ? LD_MN_A : 1;
    static constexpr int B_MN = B_KROWS ? 1 : LD_K_B, B_K = B_KROWS ? LD_MN_B : 1;
};

// d += a * b for one 16 x 8 x K step of a warp (K = 8 or 16). Fragments (lane = 4*g + t):
// a[i] = A(g + 8*(i%2), t + 4*(i/2)), b[i] = B(t + 4*i, g), d[i] = D(g + 8*(i/2), 2*t + i%2).
template <int K>
__device__ __forceinline__ void mma_16x8(double (&d)[4], const double (&a)[K / 2], const double (&b)[K / 4])
{
    static_assert(K == 8 || K == 16, "m16n8k8 or m16n8k16");
#if __CUDA_ARCH__ >= 900
    if constexpr (K == 16)
        asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
            : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
              "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
    else
        asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
            "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
            : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#elif __CUDA_ARCH__ >= 800
    // m8n8k4: a = A(g, t), b = B(t, g), d = D(g, 2t .. 2t+1): rows h*8.. and k-quarter q of the
    // step are a[h + 2q], b[q] and d[2h], d[2h+1].
#pragma unroll
    for (int q = 0; q < K / 4; q++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                : "+d"(d[2 * h]), "+d"(d[2 * h + 1])
                : "d"(a[h + 2 * q]), "d"(b[q]));
#else
    __trap(); // no FP64 tensor cores: the runtime sends DGEMM elsewhere (gemm_tiled.cu)
#endif
}

// A warp's accumulator fragments, zeroed.
template <class Cfg>
__device__ __forceinline__ void zero_acc(double (&acc)[Cfg::MT][Cfg::NT][4])
{
#pragma unroll
    for (int i = 0; i < Cfg::MT; i++)
#pragma unroll
        for (int j = 0; j < Cfg::NT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0;
}

// Epilogue: C = alpha*acc + beta*C; beta = 0 never reads C. acc[i][j][h + 2v] is C(row0 + 16i
// + v, col0 + 8j + h) (a lane's rows v = 0, 1 side by side), or with PAIR_N (columns paired as
// rows are: fragment column d of j is column 16 (j / 2) + 2d + j % 2 of the warp tile, col0 at
// d = 2t) C(row0 + 16i + v, col0 + 16 (j / 2) + 2h + j % 2). In a block whose tile lies inside C,
// when C allows it (vec: inside and aligned16), both go in one 16-byte access, and a warp's
// access covers whole 128-byte rows of C; other blocks store element by element here (dgemm_tma_sk's
// tiles, dgemm_dmma without STAGED_C) or go through store_c_staged. (A 16-byte path in edge
// blocks too costs registers that the main loop then spills.)
template <class Cfg, bool PAIR_N = false>
__device__ __forceinline__ void store_c(const double (&acc)[Cfg::MT][Cfg::NT][4], int64_t m, int64_t n,
                                        int64_t row0, int64_t col0, bool vec, double alpha,
                                        double beta, double *__restrict__ c, int64_t ldc)
{
    constexpr int MT = Cfg::MT, NT = Cfg::NT;
    auto col = [](int j, int h) { return PAIR_N ? 16 * (j / 2) + 2 * h + j % 2 : 8 * j + h; };
    if (vec) {
        double *c_lane = c + row0 + col0 * ldc;
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    double2 *cp = reinterpret_cast<double2 *>(c_lane + 16 * i + col(j, h) * ldc);
                    double2 out = {alpha * acc[i][j][h], alpha * acc[i][j][h + 2]};
                    if (beta != 0.0) {
                        const double2 old = *cp;
                        out.x += beta * old.x, out.y += beta * old.y;
                    }
                    *cp = out;
                }
        return;
    }
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int64_t gm = row0 + 16 * i + r / 2;
                const int64_t gn = col0 + col(j, r % 2);
                if (gm < m && gn < n) {
                    double *cp = c + gm + gn * ldc;
                    *cp = beta != 0.0 ? alpha * acc[i][j][r] + beta * *cp : alpha * acc[i][j][r];
                }
            }
}

// store_c where a block cannot store 16 bytes at a time (C's leading dimension or pointer rules it
// out, or the tile crosses C's edge). From the fragments, a warp store would put 8-byte entries
// two rows apart in four columns. Instead each warp stages 16 columns of its warp tile at a time
// in shared memory (ws: its WM + 4 doubles x 16, column-major), 16 bytes a write (a lane's two
// rows), and stores them back 32 consecutive rows of a column a store: whole 256-byte runs of C.
// Column c of a pass is at position 4 s + t of the staging, t the lane that holds it and s which
// of the lane's four columns it is, so that a quarter-warp's writes fall in distinct banks.
// row0, col0: the lane's first row and column, as store_c has them. The caller has every warp
// done reading the stages (a block-wide barrier) before any warp stages.
template <class Cfg, bool PAIR_N = false>
__device__ __forceinline__ void store_c_staged(const double (&acc)[Cfg::MT][Cfg::NT][4], int64_t m, int64_t n,
                                               int64_t row0, int64_t col0, double alpha, double beta,
                                               double *__restrict__ c, int64_t ldc, double *ws)
{
    constexpr int MT = Cfg::MT, NT = Cfg::NT, WM = Cfg::WM, LD = Cfg::STAGED_LD;
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int64_t r_w = row0 - 2 * g, c_w = col0 - (PAIR_N ? 4 : 2) * t; // the warp tile's origin
#pragma unroll
    for (int q = 0; q < NT / 2; q++) {
#pragma unroll
        for (int jj = 0; jj < 2; jj++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                double *col = ws + (4 * (2 * jj + h) + t) * LD + 2 * g;
#pragma unroll
                for (int i = 0; i < MT; i++)
                    *reinterpret_cast<double2 *>(col + 16 * i) =
                        make_double2(alpha * acc[i][2 * q + jj][h], alpha * acc[i][2 * q + jj][h + 2]);
            }
        __syncwarp();
#pragma unroll 4
        for (int it = 0; it < 16 * WM / 32; it++) {
            const int e = it * 32 + lane, row = e % WM, cc = e / WM; // cc: the pass's column
            // The lane t that held column cc, and which of its columns (2 jj + h) it was.
            const int tt = PAIR_N ? cc / 4 : cc % 8 / 2, s = PAIR_N ? (cc % 2) * 2 + cc % 4 / 2 : cc / 8 * 2 + cc % 2;
            const int64_t gm = r_w + row, gn = c_w + 16 * q + cc;
            if (gm < m && gn < n) {
                double *cp = c + gm + gn * ldc;
                const double v = ws[(4 * s + tt) * LD + row];
                *cp = beta != 0.0 ? v + beta * *cp : v;
            }
        }
        __syncwarp();
    }
}

} // namespace fg_dmma
