// sgemm_simt.cuh: the SIMT SGEMM kernel family (strict FP32, FFMA) as templates, for the
// library's configurations (sgemm_simt.cu, from the tuner's generated table) and for the
// tuner's candidates and the ablation (perf/): the configuration and the kernels (their launch:
// sgemm_simt_launch.cuh).
// Block tiles of op(A) and op(B) are staged in shared memory by a cp.async pipeline of STAGES
// buffers; each warp computes a WM x WN warp tile, each lane TM x TN outputs as groups of 4x4
// outer products with its operands cached in registers; blocks are rasterized in groups along
// M for L2 reuse; gridDim.z slices K (split-K) when the table asks for it. With FG_K_GROUPS two
// groups of warps compute the same tile over halves of each k-tile, and add their sums in
// shared memory at the end (reduce_groups).
// Any M, N, K, leading dimension, alignment and transpose pair.
#pragma once

#include "common/features.h"
#include "common/loaders.cuh"
#include "common/pipeline.cuh"
#include "common/ptx.cuh"
#include "common/raster.cuh"
#include "common/streamk.cuh"
#include "common/timeline.cuh"

#include <stdint.h>

namespace fg_simt {

using namespace fg_kern;

// What a configuration makes of its numbers: the block tile BM x BN x BK, the warp tile WM x WN,
// the stages, the thread tile TM x TN, FEAT its tuning choices and ABLATE its ablation switches
// (features.h). Shared memory holds both operands k-major: xs[k][mn], a row of BM (BN) + PAD
// floats per k.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int TM_, int TN_, int FEAT_, int ABLATE_>
struct SimtTraits {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int TM = TM_, TN = TN_, FEAT = FEAT_, ABLATE = ABLATE_;
    static_assert(tuning_only(FEAT), "FEATURES holds tuning choices only (features.h)");
    static_assert(ablation_allowed(ABLATE), "ablation switches are for perf/ builds (FG_ABLATION)");
    static constexpr bool WARP_TILE = !(ABLATE & FG_NO_WARP_TILE), REG_CACHE = !(ABLATE & FG_NO_REG_CACHE);
    static constexpr bool SYNC = ABLATE & FG_SYNC_LOADS, RASTER = !(FEAT & FG_COLUMN_ORDER);
    static constexpr bool PREFETCH = FEAT & FG_PREFETCH, FAST_LOOP = FEAT & FG_FAST_LOOP;
    static constexpr bool SPREAD = FEAT & FG_SPREAD, SERPENTINE = FEAT & FG_SERPENTINE;
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    // FG_K_GROUPS: KG groups of WARPS_M x WARPS_N warps, group g taking steps [g, g + 1) * KSTEPS
    // of every k-tile; all of them copy the tiles.
    static constexpr int KG = FEAT & FG_K_GROUPS ? 2 : 1, KSTEPS = BK / KG;
    static constexpr int GROUP_THREADS = WARPS_M * WARPS_N * 32, THREADS = KG * GROUP_THREADS;
    // The lanes of a warp tile its warp tile; without warp tiling the threads tile the block.
    static constexpr int TILE_M = WARP_TILE ? WM : BM, TILE_N = WARP_TILE ? WN : BN;
    static constexpr int LM = TILE_M / TM, LN = TILE_N / TN; // threads along M and N of a tile
    static constexpr int GSM = 4 * LM, GSN = 4 * LN;          // between a thread's 4-row groups
    // 4 floats of padding: rows stay 16-byte aligned for the 16-byte copies and LDS.128, and the
    // row stride is 4 words mod 32, so the transposing 4-byte copies (lane = k + BK*mn) write
    // bank 4k + mn: distinct banks for BK = 8, 2-way for BK = 16, 4-way for BK = 32.
    static constexpr int PAD = ABLATE & FG_NO_PAD ? 0 : 4;
    static constexpr int LDA_S = BM + PAD, LDB_S = BN + PAD;
    static constexpr int A_STAGE = BK * LDA_S, B_STAGE = BK * LDB_S; // floats
    // NN runs as the TT of the transposed problem (swaps_nn) on tiles wider than tall whose warps
    // store 32 columns a pass (store_tile_t); its staging, a warp's 32 columns of WM + 4 floats,
    // reuses the stages' shared memory.
    static constexpr bool SWAP_NN = BN > BM && WARP_TILE && 4 * LN == 32 && !(FEAT & FG_NO_SWAP) && KG == 1;
    static constexpr int STAGING_BYTES = SWAP_NN ? WARPS_M * WARPS_N * 32 * (WM + 4) * (int)sizeof(float) : 0;
    static constexpr int STAGE_BYTES_ALL = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float);
    // store_tile_s: where C rules out 16-byte stores, each warp stages GSN columns of its warp
    // tile at a time (WM + 4 floats each) in the stages' shared memory, where they fit.
    static constexpr int STAGED_C_BYTES = WARPS_M * WARPS_N * GSN * (WM + 4) * (int)sizeof(float);
    static constexpr bool STAGED_C = WARP_TILE && STAGED_C_BYTES <= STAGE_BYTES_ALL;
    // FG_K_GROUPS: the groups past the first leave their sums in shared memory (reduce_groups),
    // PARTIAL_BYTES from float PARTIAL_AT, past store_tile_s's staging.
    static constexpr int PARTIAL_BYTES = (KG - 1) * GROUP_THREADS * TM * TN * (int)sizeof(float);
    static constexpr int PARTIAL_AT = STAGED_C ? STAGED_C_BYTES / (int)sizeof(float) : 0;
    static constexpr int PARTIAL_END = PARTIAL_AT * (int)sizeof(float) + PARTIAL_BYTES;
    static constexpr int SMEM_BYTES_1 = STAGE_BYTES_ALL > STAGING_BYTES ? STAGE_BYTES_ALL : STAGING_BYTES;
    static constexpr int SMEM_BYTES = SMEM_BYTES_1 > PARTIAL_END ? SMEM_BYTES_1 : PARTIAL_END;
    // Blocks of 256 threads with 8x8 per thread need about 128 registers: held to that, two
    // blocks fit an SM (the fast loop alone takes one more); FG_K_GROUPS ones of 8x8, 512
    // threads an SM. Else no minimum (0).
    static constexpr int MIN_BLOCKS = TM * TN <= 64 && (THREADS == 256 || KG > 1) ? 512 / THREADS : 0;
    static_assert(LM * LN == (WARP_TILE ? 32 : THREADS), "the threads tile the tile, TM x TN each");
    static_assert(KG == 1 || (WARP_TILE && REG_CACHE), "k-groups are groups of warp tiles");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles tile the block tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "a thread's rows (columns) are groups of 4");
    static_assert(STAGES >= 1 && STAGES <= 8, "1 (load, then compute) to 8 pipeline stages");
    static_assert(BK % 4 == 0 && BK <= 32, "BK from 4 to 32");
    static_assert(!SPREAD || (FAST_LOOP && STAGES >= 2), "copies are spread in the fast loop");
    static_assert(SMEM_BYTES <= 227 * 1024, "shared memory of one block on sm_90");
};

// A configuration of the library's tables and the tuner's candidates: tuning choices only.
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int TM = 8, int TN = 8, int FEAT = 0>
struct SimtConfig : SimtTraits<BM, BN, BK, WM, WN, STAGES, TM, TN, FEAT, 0> {};

#ifdef FG_ABLATION
// A configuration with ablation switches (perf/ablate.cu).
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int TM, int TN, int FEAT, int ABLATE>
struct SimtAblated : SimtTraits<BM, BN, BK, WM, WN, STAGES, TM, TN, FEAT, ABLATE> {};
#endif

// A lane's first row and column in the block tile.
template <class Cfg>
__device__ __forceinline__ void lane_origin(int tid, int &row_s, int &col_s)
{
    if (Cfg::WARP_TILE) {
        // the warp in its k-group (tid % GROUP_THREADS only with k-groups: ptxas does not know
        // that tid < THREADS, and the modulo would cost the other configurations instructions)
        const int warp = (Cfg::KG > 1 ? tid % Cfg::GROUP_THREADS : tid) / 32, lane = tid % 32;
        const int wm = warp % Cfg::WARPS_M, wn = warp / Cfg::WARPS_M;
        row_s = wm * Cfg::WM + lane % Cfg::LM * 4, col_s = wn * Cfg::WN + lane / Cfg::LM * 4;
    } else {
        row_s = tid % Cfg::LM * 4, col_s = tid / Cfg::LM * 4;
    }
}

// The block's TM x TN accumulators per lane over the tile at (m0, n0) and the k range of a and
// b (k long, from where they point).
template <class Cfg, bool TA, bool TB, bool ELEM>
__device__ __forceinline__ void tile_product(float (&acc)[Cfg::TM][Cfg::TN], int64_t m, int64_t n,
                                             int64_t k, const float *__restrict__ a, int64_t lda,
                                             const float *__restrict__ b, int64_t ldb, int64_t m0,
                                             int64_t n0, bool vec_a, bool vec_b, int row_s, int col_s)
{
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
    constexpr int STAGES = Cfg::STAGES, THREADS = Cfg::THREADS;
    constexpr int GSM = Cfg::GSM, GSN = Cfg::GSN;
    extern __shared__ __align__(16) float smem[];
    float *as = smem, *bs = smem + STAGES * Cfg::A_STAGE;
    const int tid = threadIdx.x;
    const int64_t ktiles = (k + BK - 1) / BK;

    TileLoader<float, BM, BK, THREADS, Cfg::LDA_S, !TA, Cfg::SYNC> load_a;
    TileLoader<float, BN, BK, THREADS, Cfg::LDB_S, TB, Cfg::SYNC> load_b;
    load_a.template init<ELEM>(a, lda, m0, m, vec_a && !ELEM, tid, /*pin=*/true);
    load_b.template init<ELEM>(b, ldb, n0, n, vec_b && !ELEM, tid, /*pin=*/true);
    // Tiles are loaded in order, one per call: the k-positions left shrink by BK each time.
    // FG_FAST_LOOP: interior blocks (with 16-byte copies where the operand is mn-contiguous, or
    // element copies in the ELEM instance) load their whole tiles with neither predicates nor
    // branches, in a main loop of their own (a second copy of the k-tile's code; it raises the
    // registers of some configurations).
    int64_t k_left = k;
    const int64_t kfast =
        Cfg::FAST_LOOP && load_a.template fast<ELEM>() && load_b.template fast<ELEM>() ? k / BK : 0;
    auto load_fast = [&](int stage) {
        load_a.template load_fast<ELEM>(as + stage * Cfg::A_STAGE);
        load_b.template load_fast<ELEM>(bs + stage * Cfg::B_STAGE);
        k_left -= BK;
    };
    auto load_stage = [&](int stage) {
        load_a.load(as + stage * Cfg::A_STAGE, a, k_left);
        load_b.load(bs + stage * Cfg::B_STAGE, b, k_left);
        k_left -= BK;
    };

#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.f;

    // The outer products of one k-tile: row i of the thread is row_s + (i/4)*GSM + i%4.
    // hook(kk) runs at the start of the group's step kk (FG_SPREAD's copies).
    // FG_K_GROUPS: the thread's k-group takes KSTEPS of the BK steps, from kg0.
    const int kg0 = Cfg::KG > 1 ? tid / Cfg::GROUP_THREADS * Cfg::KSTEPS : 0;
    auto compute = [&](int stage, auto &&hook) {
        const float *a_s = as + stage * Cfg::A_STAGE + kg0 * Cfg::LDA_S + row_s;
        const float *b_s = bs + stage * Cfg::B_STAGE + kg0 * Cfg::LDB_S + col_s;
        // A thread's operands of step kk: TM/4 and TN/4 LDS.128.
        auto fragments = [&](int kk, float *ra, float *rb) {
#pragma unroll
            for (int g = 0; g < TM / 4; g++) {
                const float4 v = *reinterpret_cast<const float4 *>(a_s + kk * Cfg::LDA_S + g * GSM);
                ra[4 * g] = v.x, ra[4 * g + 1] = v.y, ra[4 * g + 2] = v.z, ra[4 * g + 3] = v.w;
            }
#pragma unroll
            for (int g = 0; g < TN / 4; g++) {
                const float4 v = *reinterpret_cast<const float4 *>(b_s + kk * Cfg::LDB_S + g * GSN);
                rb[4 * g] = v.x, rb[4 * g + 1] = v.y, rb[4 * g + 2] = v.z, rb[4 * g + 3] = v.w;
            }
        };
        float ra[2][TM], rb[2][TN]; // with FG_PREFETCH: step kk in [kk % 2], kk + 1 in the other
        if (Cfg::PREFETCH && Cfg::REG_CACHE) fragments(0, ra[0], rb[0]);
#pragma unroll
        for (int kk = 0; kk < Cfg::KSTEPS; kk++) {
            hook(kk);
            if (Cfg::REG_CACHE) {
                const int cur = Cfg::PREFETCH ? kk % 2 : 0;
                if (!Cfg::PREFETCH) fragments(kk, ra[0], rb[0]);
                else if (kk + 1 < Cfg::KSTEPS) fragments(kk + 1, ra[cur ^ 1], rb[cur ^ 1]);
                // FG_SERPENTINE: odd rows right to left, so rb[j] carries over the row's turn
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int jj = 0; jj < TN; jj++) {
                        const int j = Cfg::SERPENTINE && i % 2 ? TN - 1 - jj : jj;
                        acc[i][j] = fmaf(ra[cur][i], rb[cur][j], acc[i][j]);
                    }
            } else { // ablation: both operands of every FFMA come from shared memory
                const volatile float *va = a_s + kk * Cfg::LDA_S, *vb = b_s + kk * Cfg::LDB_S;
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++)
                        acc[i][j] = fmaf(va[i / 4 * GSM + i % 4], vb[j / 4 * GSN + j % 4], acc[i][j]);
            }
        }
    };

    auto compute_tile = [&](int stage) { compute(stage, [](int) {}); };
    // FG_SPREAD: the next tile's N copies (op(A)'s, then op(B)'s) in groups of 4, group g at
    // step g * BK / groups, so that no k-step issues a burst of them (16-24 element copies a
    // tile where an operand is k-contiguous: a burst fills the memory-instruction queue, and the
    // fragment loads behind it wait). Groups, not single copies: ptxas puts three idle
    // instructions before each run of copies that follows shared-memory loads.
    auto spread = [&](int stage, int next) {
        using LA = decltype(load_a);
        using LB = decltype(load_b);
        constexpr int NA = LA::template fast_copies<ELEM>, N = NA + LB::template fast_copies<ELEM>;
        constexpr int G = 4, GROUPS = (N + G - 1) / G;
        compute(stage, [&](int kk) {
#pragma unroll
            for (int c = 0; c < N; c++) {
                if (c / G * Cfg::KSTEPS / GROUPS != kk) continue;
                if (c < NA) load_a.template copy_fast<ELEM>(as + next * Cfg::A_STAGE, c);
                else load_b.template copy_fast<ELEM>(bs + next * Cfg::B_STAGE, c - NA);
            }
        });
        k_left -= BK;
    };
    if constexpr (Cfg::SPREAD) pipeline<STAGES>(ktiles, kfast, load_fast, load_stage, compute_tile, spread);
    else pipeline<STAGES>(ktiles, kfast, load_fast, load_stage, compute_tile);
}

// Where a tile starts along a dimension of `size`, MNT long, whose first tile-aligned origin is
// t0: the last tile, where it would cross the edge, moves back to end at the edge, so that its
// blocks copy whole tiles and run the fast loop (a block on the edge otherwise runs the general
// loop for all of k). Its overlap with the tile before is computed again but stored only by that
// tile (store_tile's lower bounds, t0). It stays where the dimension is shorter than a tile, and
// where the operand takes 16-byte copies along it (vec16) and the move would misalign them.
template <int MNT>
__host__ __device__ __forceinline__ int64_t inside_origin(int64_t t0, int64_t size, bool vec16)
{
    const int64_t last = size - MNT;
    return t0 > last && last >= 0 && !(vec16 && last % 4 != 0) ? last : t0;
}

// Pass p of a warp's staging (store_tile_s, store_tile_t): the lane's group p of 4 columns (c_w +
// q of the pass) and its rows (r_w + h GSM, 4 each), times alpha, into ws column-major, ld floats
// a column, 16 bytes a write.
template <class Cfg>
__device__ __forceinline__ void stage_pass(const float (&acc)[Cfg::TM][Cfg::TN], int p, float *ws, int ld,
                                           int r_w, int c_w, float alpha)
{
#pragma unroll
    for (int q = 0; q < 4; q++)
#pragma unroll
        for (int h = 0; h < Cfg::TM / 4; h++)
            *reinterpret_cast<float4 *>(ws + (c_w + q) * ld + r_w + h * Cfg::GSM) =
                make_float4(alpha * acc[h * 4 + 0][p * 4 + q], alpha * acc[h * 4 + 1][p * 4 + q],
                            alpha * acc[h * 4 + 2][p * 4 + q], alpha * acc[h * 4 + 3][p * 4 + q]);
}

// A barrier of the threads that store C: the block's, or with FG_K_GROUPS the first k-group's
// (the others have left, reduce_groups).
template <class Cfg>
__device__ __forceinline__ void storers_sync()
{
    if constexpr (Cfg::KG == 1) __syncthreads();
    else bar_sync<1, Cfg::GROUP_THREADS>();
}

// FG_K_GROUPS: the k-groups past the first leave their sums in shared memory and are done
// (false); the first adds them to its own (true) and stores the tile. A thread's sum (i, j)
// goes to [(i * TN + j) * GROUP_THREADS] past its place in the group: a warp's writes and reads
// are whole lines.
template <class Cfg>
__device__ __forceinline__ bool reduce_groups(float (&acc)[Cfg::TM][Cfg::TN])
{
    constexpr int TM = Cfg::TM, TN = Cfg::TN, GT = Cfg::GROUP_THREADS;
    extern __shared__ __align__(16) float smem[];
    const int g = threadIdx.x / GT;
    float *p = smem + Cfg::PARTIAL_AT + threadIdx.x % GT;
    __syncthreads(); // every group's last fragments read: the partials overwrite the stages
    if (g > 0) {
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++) p[((g - 1) * TM * TN + i * TN + j) * GT] = acc[i][j];
    }
    __syncthreads();
    if (g > 0) return false;
#pragma unroll
    for (int h = 1; h < Cfg::KG; h++)
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++) acc[i][j] += p[((h - 1) * TM * TN + i * TN + j) * GT];
    return true;
}

// store_tile where C rules out 16-byte stores (STAGED_C): a lane's 4 consecutive rows of a column
// would go as 4-byte stores 16 bytes apart, 8 lanes a column spanning 128 bytes for 32 stored.
// Instead each warp stages the GSN columns of its warp tile that its lanes hold one group of 4
// of (a pass; TN / 4 passes) in shared memory, column-major with WM + 4 floats a column
// (stage_pass: a quarter-warp's 16-byte writes fall on one column's consecutive rows, or on two
// columns 16 banks apart), and reads them back 32 consecutive entries a store: each warp store is
// one coalesced 128-byte run of a column of C (two runs of 64 bytes where WM = 16).
template <class Cfg>
__device__ __forceinline__ void store_tile_s(const float (&acc)[Cfg::TM][Cfg::TN], int64_t m, int64_t n,
                                             int64_t m0, int64_t n0, int64_t m_lo, int64_t n_lo, int row_s,
                                             int col_s, float alpha, float beta, float *__restrict__ c,
                                             int64_t ldc)
{
    constexpr int TN = Cfg::TN, WM = Cfg::WM;
    constexpr int COLS = Cfg::GSN, LD = WM + 4, PER_LANE = COLS * WM / 32;
    static_assert(Cfg::STAGED_C && (COLS * WM) % 32 == 0, "SimtTraits' STAGED_C");
    extern __shared__ __align__(16) float smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = warp % Cfg::WARPS_M * WM, wn0 = warp / Cfg::WARPS_M * Cfg::WN;
    float *ws = smem + warp * COLS * LD;
    const int r_w = row_s - wm0, c_w = col_s - wn0; // the lane's first row, its first column of a pass
    storers_sync<Cfg>(); // the last k-tile's fragments read by every warp
#pragma unroll
    for (int p = 0; p < TN / 4; p++) {
        stage_pass<Cfg>(acc, p, ws, LD, r_w, c_w, alpha);
        __syncwarp();
#pragma unroll 4
        for (int it = 0; it < PER_LANE; it++) {
            const int e = it * 32 + lane, row = e % WM, col = e / WM;
            const int64_t gm = m0 + wm0 + row, gn = n0 + wn0 + p * COLS + col;
            if (gm < m_lo || gm >= m || gn < n_lo || gn >= n) continue;
            float *cp = c + gm + gn * ldc;
            const float r = ws[col * LD + row];
            *cp = beta != 0.f ? r + beta * *cp : r;
        }
        __syncwarp();
    }
    storers_sync<Cfg>(); // a next piece (stream-K) copies into the stages
}

// Epilogue: C = alpha*acc + beta*C over the tile at (m0, n0), its rows from m_lo and its columns
// from n_lo (inside_origin), 4 consecutive rows of a column per store (16 bytes where C and m0
// allow it); beta = 0 never reads C.
template <class Cfg>
__device__ __forceinline__ void store_tile(const float (&acc)[Cfg::TM][Cfg::TN], int64_t m, int64_t n,
                                           int64_t m0, int64_t n0, int64_t m_lo, int64_t n_lo, int row_s,
                                           int col_s, float alpha, float beta, float *__restrict__ c,
                                           int64_t ldc, bool vec_c)
{
    constexpr int TM = Cfg::TM, TN = Cfg::TN, GSM = Cfg::GSM, GSN = Cfg::GSN;
    const bool vec = vec_c && m0 % 4 == 0;
    if constexpr (Cfg::STAGED_C) {
        if (!vec) { // the block's choice: vec_c and m0 are the block's
            store_tile_s<Cfg>(acc, m, n, m0, n0, m_lo, n_lo, row_s, col_s, alpha, beta, c, ldc);
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < TN; j++) {
        const int64_t gn = n0 + col_s + j / 4 * GSN + j % 4;
        if (gn >= n || gn < n_lo) continue;
#pragma unroll
        for (int h = 0; h < TM / 4; h++) {
            const int64_t gm = m0 + row_s + h * GSM;
            float *cp = c + gm + gn * ldc;
            const float r[4] = {alpha * acc[h * 4 + 0][j], alpha * acc[h * 4 + 1][j],
                                alpha * acc[h * 4 + 2][j], alpha * acc[h * 4 + 3][j]};
            if (vec && gm >= m_lo && gm + 3 < m) {
                float4 out = make_float4(r[0], r[1], r[2], r[3]);
                if (beta != 0.f) {
                    const float4 old = *reinterpret_cast<const float4 *>(cp);
                    out.x += beta * old.x;
                    out.y += beta * old.y;
                    out.z += beta * old.z;
                    out.w += beta * old.w;
                }
                *reinterpret_cast<float4 *>(cp) = out;
            } else {
#pragma unroll
                for (int i = 0; i < 4; i++)
                    if (gm + i >= m_lo && gm + i < m) cp[i] = beta != 0.f ? r[i] + beta * cp[i] : r[i];
            }
        }
    }
}

// store_tile of a kernel that computes C^T (CT, swaps_nn): the tile's rows are columns of C. Each
// warp stages its warp tile in shared memory, 32 of its columns at a time, with store_tile's
// 16-byte stores (so the accumulators keep the registers they have in the other instances: the
// main loop's code depends on them), and reads it back along the rows of C, 4 of them a lane.
template <class Cfg>
__device__ __forceinline__ void store_tile_t(const float (&acc)[Cfg::TM][Cfg::TN], int64_t m, int64_t n,
                                             int64_t m0, int64_t n0, int64_t m_lo, int64_t n_lo, int row_s,
                                             int col_s, float alpha, float beta, float *__restrict__ c,
                                             int64_t ldc, bool vec_c)
{
    constexpr int TN = Cfg::TN, GSN = Cfg::GSN, WM = Cfg::WM;
    constexpr int COLS = GSN; // a pass: the warp tile's columns of one group of 4 a lane
    constexpr int LD = WM + 4; // 16-byte rows; the two column halves of a quarter-warp 16 banks apart
    static_assert(Cfg::SWAP_NN && COLS == 32 && Cfg::STAGING_BYTES == Cfg::WARPS_M * Cfg::WARPS_N * COLS * LD * 4,
                  "SimtConfig's staging");
    extern __shared__ __align__(16) float smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = warp % Cfg::WARPS_M * WM, wn0 = warp / Cfg::WARPS_M * Cfg::WN;
    float *ws = smem + warp * COLS * LD;
    const int r_w = row_s - wm0, c_w = col_s - wn0; // the lane's first row and column in its warp tile
    const bool vec = vec_c && n0 % 4 == 0;
    __syncthreads(); // the last k-tile's fragments read by every warp
#pragma unroll
    for (int p = 0; p < TN / 4; p++) {
        stage_pass<Cfg>(acc, p, ws, LD, r_w, c_w, alpha);
        __syncwarp();
        // Lane: 4 consecutive columns of the pass (rows of C), row (column of C) lane / 8 + 4 it.
        const int jq = lane % 8 * 4;
        const int64_t gn = n0 + wn0 + p * COLS + jq; // the first of its 4 rows of C
#pragma unroll 4
        for (int it = 0; it < WM / 4; it++) {
            const int ii = it * 4 + lane / 8;
            const int64_t gm = m0 + wm0 + ii; // a column of C
            if (gm >= m || gm < m_lo) continue;
            float r[4];
#pragma unroll
            for (int t = 0; t < 4; t++) r[t] = ws[(jq + t) * LD + ii];
            float *cp = c + gn + gm * ldc;
            if (vec && gn >= n_lo && gn + 3 < n) {
                float4 out = make_float4(r[0], r[1], r[2], r[3]);
                if (beta != 0.f) {
                    const float4 old = *reinterpret_cast<const float4 *>(cp);
                    out = make_float4(out.x + beta * old.x, out.y + beta * old.y, out.z + beta * old.z,
                                      out.w + beta * old.w);
                }
                *reinterpret_cast<float4 *>(cp) = out;
            } else {
#pragma unroll
                for (int t = 0; t < 4; t++)
                    if (gn + t >= n_lo && gn + t < n) cp[t] = beta != 0.f ? r[t] + beta * cp[t] : r[t];
            }
        }
        __syncwarp();
    }
    __syncthreads(); // a next piece (stream-K) copies into the stages
}

// ELEM (FG_SPREAD configurations): the instance for an mn-contiguous operand that cannot take
// 16-byte copies; its fast loop copies such operands element by element (sgemm_simt_launch.cuh).
template <class Cfg, bool TA, bool TB, bool ELEM = false, bool CT = false>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    sgemm_simt(int64_t m, int64_t n, int64_t k, int64_t kslice, float alpha,
               const float *__restrict__ a, int64_t lda, const float *__restrict__ b, int64_t ldb,
               float beta, float *__restrict__ c, int64_t ldc, int64_t c_slice, bool vec_a,
               bool vec_b, bool vec_c)
{
    fg_kern::tl_stamp(0, blockIdx.x, 0); // FG_TIMELINE's (none without it)
    int64_t bm, bn;
    block_tile<Cfg::RASTER>((m + Cfg::BM - 1) / Cfg::BM, (n + Cfg::BN - 1) / Cfg::BN, bm, bn);
    const int64_t m_lo = bm * Cfg::BM, n_lo = bn * Cfg::BN;
    const int64_t m0 = inside_origin<Cfg::BM>(m_lo, m, !TA && vec_a && !ELEM);
    const int64_t n0 = inside_origin<Cfg::BN>(n_lo, n, TB && vec_b && !ELEM);
    // Split-K: this block's slice of K, and its own partial C.
    {
        const int64_t k0 = blockIdx.z * kslice;
        k = k - k0 < kslice ? k - k0 : kslice;
        a += TA ? k0 : k0 * lda;
        b += TB ? k0 * ldb : k0;
        c += blockIdx.z * c_slice;
    }
    int row_s, col_s;
    lane_origin<Cfg>(threadIdx.x, row_s, col_s);
    float acc[Cfg::TM][Cfg::TN];
    tile_product<Cfg, TA, TB, ELEM>(acc, m, n, k, a, lda, b, ldb, m0, n0, vec_a, vec_b, row_s, col_s);
    if constexpr (Cfg::KG > 1)
        if (!reduce_groups<Cfg>(acc)) return;
    if constexpr (CT) store_tile_t<Cfg>(acc, m, n, m0, n0, m_lo, n_lo, row_s, col_s, alpha, beta, c, ldc, vec_c);
    else store_tile<Cfg>(acc, m, n, m0, n0, m_lo, n_lo, row_s, col_s, alpha, beta, c, ldc, vec_c);
    fg_kern::tl_stamp(0, blockIdx.x, 2);
}

// The stream-K part of a launch (StreamK, launch_streamk): ctas blocks, each over its run of
// k-tiles of the last tiles (ELEM: as sgemm_simt's).
template <class Cfg, bool TA, bool TB, bool CT = false, bool ELEM = false>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    sgemm_simt_sk(int64_t m, int64_t n, int64_t k, float alpha, const float *__restrict__ a,
                  int64_t lda, const float *__restrict__ b, int64_t ldb, float beta,
                  float *__restrict__ c, int64_t ldc, bool vec_a, bool vec_b, bool vec_c, StreamK sk)
{
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
    constexpr int THREADS = Cfg::THREADS;
    static_assert(Cfg::KG == 1, "stream-K's pieces are whole blocks' sums");
    int row_s, col_s;
    lane_origin<Cfg>(threadIdx.x, row_s, col_s);
    float acc[TM][TN];
    // A thread's partial sums: element i * TN + j of slot s at [(s * TM * TN + i * TN + j) *
    // THREADS], so that a warp's accesses are whole lines.
    auto partials = [&](int64_t slot) { return static_cast<float *>(sk.partials) + slot * (THREADS * TM * TN) + threadIdx.x; };
    // Tile `tile`'s origin (m0, n0) and the bounds of what it stores (m_lo, n_lo): inside_origin.
    auto origin = [&](int64_t tile, int64_t &m0, int64_t &n0, int64_t &m_lo, int64_t &n_lo) {
        block_tile<Cfg::RASTER>((m + BM - 1) / BM, (n + BN - 1) / BN, m_lo, n_lo, sk.first + tile);
        m_lo *= BM, n_lo *= BN;
        m0 = inside_origin<BM>(m_lo, m, !TA && vec_a && !ELEM), n0 = inside_origin<BN>(n_lo, n, TB && vec_b && !ELEM);
    };
    streamk_run(
        sk,
        [&](int64_t tile, int64_t kt0, int64_t kt1) {
            int64_t m0, n0, m_lo, n_lo;
            origin(tile, m0, n0, m_lo, n_lo);
            const int64_t k0 = kt0 * BK, k1 = kt1 * BK < k ? kt1 * BK : k;
            tile_product<Cfg, TA, TB, ELEM>(acc, m, n, k1 - k0, a + (TA ? k0 : k0 * lda), lda,
                                             b + (TB ? k0 * ldb : k0), ldb, m0, n0, vec_a, vec_b,
                                             row_s, col_s);
        },
        [&](int64_t slot) {
            float *p = partials(slot);
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) p[(i * TN + j) * THREADS] = acc[i][j];
        },
        [&](int64_t slot, auto first) {
            const float *p = partials(slot);
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) {
                    const float v = __ldcg(p + (i * TN + j) * THREADS);
                    acc[i][j] = decltype(first)::value ? v : acc[i][j] + v;
                }
        },
        [&](int64_t tile) {
            int64_t m0, n0, m_lo, n_lo;
            origin(tile, m0, n0, m_lo, n_lo);
            if constexpr (CT)
                store_tile_t<Cfg>(acc, m, n, m0, n0, m_lo, n_lo, row_s, col_s, alpha, beta, c, ldc, vec_c);
            else store_tile<Cfg>(acc, m, n, m0, n0, m_lo, n_lo, row_s, col_s, alpha, beta, c, ldc, vec_c);
        });
}

} // namespace fg_simt
