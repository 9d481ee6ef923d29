// dgemm_dmma.cuh: the DGEMM kernel family on the FP64 tensor cores (mma.sync with f64
// operands: m16n8k16 on sm_90, the same 16x8x16 step as eight m8n8k4 on sm_80), as templates for
// the library's configurations (dgemm_dmma.cu, from the tuner's generated table) and for the
// tuner's candidates (perf/).
// Block tiles of op(A) and op(B) are staged in shared memory by the cp.async pipeline and the
// tile loaders of gemm_common.cuh, each operand in the layout it has in memory (k-major rows
// when its columns run along M or N, mn-major rows when they run along K), so every copy can
// be 16 bytes. Each warp computes a WM x WN warp tile as (WM/16) x (WN/8) accumulator
// fragments. The MMA's rows are mapped to the tile's in an order that pairs a lane's rows
// (Layout): the fragment loads of op(A) in k-major rows are 16 bytes, and so are the stores of C
// in blocks inside the matrix. The padding of each layout keeps the fragment loads free of bank
// conflicts. Blocks are rasterized in groups for L2 reuse; gridDim.z slices K when the table
// asks for it. On sm_90, configurations with FG_TMA run dgemm_tma instead where the operands
// allow: the same warp tiles and epilogue, the tiles copied by the tensor memory accelerator;
// their last wave of a large problem runs as stream-K (dgemm_tma_sk, gemm_common.cuh's StreamK).
// Where they do not, they run dgemm_dmma with prefetched fragments (FG_PREFETCH).
// Any M, N, K, leading dimension, alignment and transpose pair.
#pragma once

#include "gemm_common.cuh"

#include <type_traits>

namespace fg_dmma {

using namespace fg_kern;

template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int FEAT_ = 0>
struct DmmaConfig {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int FEAT = FEAT_;
    static constexpr bool SYNC = FEAT & FG_SYNC_LOADS, RASTER = !(FEAT & FG_NO_RASTER);
    // FG_PREFETCH: m16n8k8 steps with fragments double-buffered in registers across k-steps and
    // stages (as cuBLAS's sm90 DGEMM kernels do); else m16n8k16 steps loaded, then used.
    static constexpr bool PREFETCH = FEAT & FG_PREFETCH;
    static constexpr bool TMA = FEAT & FG_TMA; // dgemm_tma on sm_90 (launch)
    static constexpr bool RING = FEAT & FG_RING;
    static constexpr int KI = PREFETCH ? 8 : 16; // k of one MMA step
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int MT = WM / 16, NT = WN / 8; // accumulator fragments of a warp
    // The padding of a row (in doubles) for each operand's layout and transpose pair, from
    // Layout<Cfg, TA, TB> in the kernel; a stage is sized for the largest (4).
    static constexpr bool PAD = !(FEAT & FG_NO_PAD);
    static constexpr int A_STAGE = BK * (BM + 4) > BM * (BK + 4) ? BK * (BM + 4) : BM * (BK + 4);
    static constexpr int B_STAGE = BK * (BN + 4) > BN * (BK + 4) ? BK * (BN + 4) : BN * (BK + 4);
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(double);
    // Blocks per SM the registers should allow (__launch_bounds__), from an estimate of a
    // thread's registers: accumulators, fragments, addresses; at most 3 (the 32-wide tiles'
    // estimate of 128 asked for 4, and ptxas's cap of 128 registers spilled up to 116 bytes).
    static constexpr int REGS = 8 * MT * NT + (PREFETCH ? 2 * (4 * MT + 4 * NT) : 8 * NT + 16) + 48;
    static constexpr int MIN_BLOCKS_R = 65536 / (THREADS * REGS);
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_R < 1 ? 1 : MIN_BLOCKS_R > 3 ? 3 : MIN_BLOCKS_R;
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles tile the block tile");
    static_assert(WM % 16 == 0 && WN % 8 == 0, "a warp tile is made of 16 x 8 fragments");
    static_assert(BK % 16 == 0 && BK <= 64, "BK: whole k-steps of 16");
    static_assert(STAGES >= 2 && STAGES <= 8, "2 (double buffering) to 8 pipeline stages");
    static_assert(!RING || (TMA && !PREFETCH), "FG_RING: the m16n8k16 TMA kernel");
    static_assert(SMEM_BYTES <= 227 * 1024 || TMA, "shared memory of one block on sm_90");
    // Where dgemm_tma cannot run (launch): dgemm_dmma with as many of the stages as fit.
    static constexpr int STAGE_BYTES = (A_STAGE + B_STAGE) * (int)sizeof(double);
    static constexpr int FALLBACK_STAGES = SMEM_BYTES <= 227 * 1024 ? STAGES : 227 * 1024 / STAGE_BYTES;
};

__device__ __forceinline__ double2 lds2(const double *p) { return *reinterpret_cast<const double2 *>(p); }

// How a transpose pair's tiles lie in shared memory (g = lane/4, t = lane%4). op(A) is
// m-contiguous unless TA, op(B) n-contiguous if TB: such an operand is stored xs[k][mn] (k-major
// rows of LD_MN), the other xs[mn][k] (mn-major rows of LD_K). Row g + 8h of the MMA's A fragment
// i is row 16i + 2g + h of the warp tile: a lane's two A rows are then neighbours in k-major rows,
// one 16-byte load for the two registers the MMA wants side by side, and so are its two rows of
// a column of C in the epilogue. (Pairing k positions too, so that op(B)'s mn-major rows also
// give 16-byte loads for NN, measured no faster on the H100.)
// Padding: 16-byte loads are served a quarter-warp (g = 0..1, t = 0..3) at a time, 8-byte loads
// a half-warp (g = 0..3); the strides give each phase distinct banks (in doubles, mod 16):
// k-major rows of A 4t + 2g (stride 4 mod 16), mn-major rows of A 4g + t (stride 2), of B
// 4g + t (stride 4), k-major rows of B 4t + g (stride 4).
template <class Cfg, bool TA, bool TB>
struct Layout {
    static constexpr bool A_KROWS = !TA, B_KROWS = TB;
    static constexpr int LD_MN_A = Cfg::BM + (Cfg::PAD ? 4 : 0), LD_K_A = Cfg::BK + (Cfg::PAD ? 2 : 0);
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

// Epilogue: C = alpha*acc + beta*C; beta = 0 never reads C. acc[i][j][h + 2v] is C(row0 + 16i
// + v, col0 + 8j + h) (a lane's rows v = 0, 1 side by side), or with PAIR_N (columns paired as
// rows are: fragment column d of j is column 16 (j / 2) + 2d + j % 2 of the warp tile, col0 at
// d = 2t) C(row0 + 16i + v, col0 + 16 (j / 2) + 2h + j % 2). In a block whose tile lies inside C,
// when C allows it (vec: inside and aligned16), both go in one 16-byte access, and a warp's
// access covers whole 128-byte rows of C; edge blocks store element by element. (A 16-byte path
// in edge blocks too costs registers that the main loop then spills.)
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
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0;

    // A lane's fragments start at (mn, k) = (2g, t) of its warp tile for A, (g, t) for B;
    // a[r] = A(MMA row g + 8(r%2), k t + 4(r/2)), b[q] = B(k t + 4q, column g).
    const int a_lane = (wm0 + 2 * g) * A_MN + t * A_K, b_lane = (wn0 + g) * B_MN + t * B_K;
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
#pragma unroll
                    for (int h = 0; h < 2; h++) af[i][2 * p + h] = a_s[(16 * i + h) * A_MN + 4 * p];
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

    store_c<Cfg>(acc, m, n, m0 + wm0 + 2 * g, n0 + wn0 + 2 * t, m0 + BM <= m && n0 + BN <= n && vec_c,
                 alpha, beta, c, ldc);
}

using LaunchFn = fg_kern::LaunchFn<double>;
FG_LAUNCH_ANY(double, dgemm_dmma)

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
// k-tile issued is consumed before it returns, so a next call may refill any stage.
// (The plain kernel's code is byte for byte what it was as the body of dgemm_tma. Versions that
// returned the accumulators to the caller, or set the ring up apart, did not keep it: 8192^3 NN
// went from 20.5 to 22.6 ms on the H100.)
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
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.0;

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
            const int prev = LAG == 1 ? (st == 0 ? STAGES - 1 : st - 1) // NT's code as measured
                                      : st >= LAG ? st - LAG : st - LAG + STAGES;
            mbar_wait(&empty[prev], (uint32_t)((used + kt - LAG) / STAGES) & 1);
            issue(prev, kt - LAG + STAGES);
        }
    };

    if constexpr (!Cfg::PREFETCH) {
        // m16n8k16 steps, a tile's fragments loaded, then used (the registers allow no second
        // set): half the MMA instructions of m16n8k8 steps, each reading and writing its
        // accumulators once per 16 of k. At the H100's 700 W cap the clock follows the energy
        // per flop: cuBLAS's m16n8k16 kernel ran 16384^3 NT at 1.77 GHz where our m16n8k8 one
        // ran at 1.64. The 128x128 one with 32x64 warp tiles: 16384^3 NT 0.87 -> 0.93 of cuBLAS.
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
        // the stage of tile kt - LAG during tile kt, when every thread has long released it.
        // (With LAG = 1, thread 0's warp waited there for the slowest warp: the 128x128x16
        // 5-stage kernel measured 88.6% SM throughput at 8192^3 NN, 91.4% with LAG = 2.)
        // The refill's distance behind the tile computed; NT (both operands in padded k-major
        // rows) keeps every stage but the current one in flight.
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
    tma_product<Cfg, TA, TB, true>(map_a, map_b, m, n, (int)(bm * BM), (int)(bn * BN), k0, ktiles, 0, vec_c,
                                   [&](const auto &acc, int64_t row0, int64_t col0, bool inside) {
                                       store_c<Cfg, !TmaLayout<Cfg, TA, TB>::B_KROWS>(
                                           acc, m, n, row0, col0, inside, alpha, beta, c, ldc);
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

// The kernels of a transpose pair, with what their launches keep per device.
template <class Cfg, bool TA, bool TB>
struct TmaKernels {
    static inline fg_kern::SmemAsked asked, asked_sk;
    static inline std::atomic<int> slots[64];
};

// Stream-K for the last wave of a TMA launch (streamk_plan): after 4 whole waves or more
// (SGEMM asks 8), where the last wave leaves more than 2% of the slots' time idle and a tile has
// 128 k-tiles or more. Measured on the H100 against main's library (perf/NOTES.md, DGEMM):
// 3072^3 NT 5% faster, 6144^3 and 8192^3 0-3%, the rest unchanged; with k = 700 (44 k-tiles,
// 3000x5000x700) 1-5% slower in every pair, hence the k-tiles asked.
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

// The workspace a stream-K launch of Cfg needs for this problem (0: none, it runs without).
template <class Cfg>
size_t streamk_bytes(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                     const double *b, int64_t ldb, bool force)
{
    if constexpr (!Cfg::TMA) {
        return 0;
    } else {
        if (!tma_possible(m, n, k, Cfg::BM, Cfg::BN, a, lda, b, ldb)) return 0;
        using PlanFn = fg_kern::StreamKPlan (*)(int64_t, int64_t, int64_t, bool);
        const PlanFn plans[4] = {tma_plan<Cfg, false, false>, tma_plan<Cfg, true, false>,
                                 tma_plan<Cfg, false, true>, tma_plan<Cfg, true, true>};
        return fg_kern::streamk_bytes(plans[ta + 2 * tb](m, n, k, force), Cfg::BM, Cfg::BN, 8);
    }
}

// Launches dgemm_tma<Cfg> where the accelerator can read A and B (sm_90, both 16-byte aligned
// with even leading dimensions, sizes within its 32-bit coordinates); returns false, having
// launched nothing, where it cannot. splits = 0: stream-K for the last wave as streamk_bytes
// planned it, ws its workspace.
template <class Cfg, bool TA, bool TB>
bool launch_tma_pair(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
                     const double *b, int64_t ldb, double beta, double *c, int64_t ldc, int splits,
                     double *ws, cudaStream_t s, cudaError_t *err)
{
    using L = TmaLayout<Cfg, TA, TB>;
    using K = TmaKernels<Cfg, TA, TB>;
    CUtensorMap ma, mb;
    if (!tma_sizes(m, n, k, Cfg::BM, Cfg::BN)) return false;
    if (!(L::A_KROWS ? tma_map(&ma, a, m, k, lda, 8, L::LD_A, 16, false)
                     : tma_map(&ma, a, k, m, lda, 8, 16, Cfg::BM, true)) ||
        !(L::B_KROWS ? tma_map(&mb, b, n, k, ldb, 8, L::LD_B, 16, false)
                     : tma_map(&mb, b, k, n, ldb, 8, 16, Cfg::BN, true)))
        return false;
    constexpr int SMEM = TmaSmem<Cfg>::BYTES, THREADS = Cfg::THREADS;
    if (splits == 0) {
        const fg_kern::StreamKPlan p = ws ? tma_plan<Cfg, TA, TB>(m, n, k, true) : fg_kern::StreamKPlan{};
        if (p.tiles > 0) {
            *err = fg_kern::allow_smem(dgemm_tma<Cfg, TA, TB>, K::asked, SMEM);
            if (*err == cudaSuccess) *err = fg_kern::allow_smem(dgemm_tma_sk<Cfg, TA, TB>, K::asked_sk, SMEM);
            fg_kern::StreamK sk;
            if (*err == cudaSuccess) *err = fg_kern::streamk_args(sk, p, (k + 15) / 16, Cfg::BM, Cfg::BN, 8, ws, s);
            if (*err != cudaSuccess) return true;
            const bool vc = fg_kern::aligned16(c, ldc, 8);
            if (p.first > 0)
                dgemm_tma<Cfg, TA, TB><<<(unsigned)p.first, THREADS, SMEM, s>>>(ma, mb, m, n, k, k, alpha, beta, c,
                                                                                ldc, 0, vc);
            dgemm_tma_sk<Cfg, TA, TB><<<(unsigned)p.ctas, THREADS, SMEM, s>>>(ma, mb, m, n, alpha, beta, c, ldc,
                                                                             vc, sk);
            *err = cudaGetLastError();
            return true;
        }
        splits = 1, ws = nullptr;
    }
    *err = fg_kern::launch_sliced(
        dgemm_tma<Cfg, TA, TB>, K::asked, SMEM, Cfg::BM, Cfg::BN, Cfg::BK, m, n, k, alpha, beta, c, ldc, splits,
        ws, s, [&](dim3 grid, int64_t kslice, double al, double be, double *cs, int64_t ldcs, int64_t slice, bool vc) {
            dgemm_tma<Cfg, TA, TB><<<grid, THREADS, SMEM, s>>>(ma, mb, m, n, k, kslice, al, be, cs, ldcs, slice, vc);
        });
    return true;
}

// Cfg's launcher: dgemm_tma where Cfg asks for it (FG_TMA) and the GPU and operands allow it,
// else dgemm_dmma.
template <class Cfg>
cudaError_t launch(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double *a,
                   int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc,
                   int splits, double *ws, cudaStream_t s)
{
    if constexpr (Cfg::TMA) {
        if (tma_device()) {
            using Fn = bool (*)(int64_t, int64_t, int64_t, double, const double *, int64_t,
                                const double *, int64_t, double, double *, int64_t, int, double *,
                                cudaStream_t, cudaError_t *);
            const Fn pairs[4] = {launch_tma_pair<Cfg, false, false>, launch_tma_pair<Cfg, true, false>,
                                 launch_tma_pair<Cfg, false, true>, launch_tma_pair<Cfg, true, true>};
            cudaError_t err = cudaSuccess;
            if (pairs[ta + 2 * tb](m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, splits, ws, s, &err))
                return err;
        }
        cudaGetLastError();
    }
    // Cfg itself, or for a TMA configuration dgemm_dmma with its fragments prefetched
    // (FG_PREFETCH) whatever its own steps: at 4095^3 (strides not multiples of 16 bytes) the
    // 128x128 m16n8k16 TMA kernel's fallback without it ran 0.68-0.85 of cuBLAS where f288's,
    // with it, ran 0.93-1.09 (perf/NOTES.md, "FG_RING").
    constexpr int fallback_feat = Cfg::TMA ? (Cfg::FEAT & ~(FG_TMA | FG_RING)) | FG_PREFETCH : Cfg::FEAT;
    using Fallback = DmmaConfig<Cfg::BM, Cfg::BN, Cfg::BK, Cfg::WM, Cfg::WN, Cfg::FALLBACK_STAGES, fallback_feat>;
    return launch_any<Fallback>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, splits, ws, s);
}

} // namespace fg_dmma
