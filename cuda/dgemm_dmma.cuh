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
// asks for it.
// Any M, N, K, leading dimension, alignment and transpose pair.
#pragma once

#include "gemm_common.cuh"

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
    // thread's registers: accumulators, fragments, addresses.
    static constexpr int REGS = 8 * MT * NT + (PREFETCH ? 2 * (4 * MT + 4 * NT) : 8 * NT + 16) + 48;
    static constexpr int MIN_BLOCKS_R = 65536 / (THREADS * REGS);
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_R < 1 ? 1 : MIN_BLOCKS_R > 4 ? 4 : MIN_BLOCKS_R;
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles tile the block tile");
    static_assert(WM % 16 == 0 && WN % 8 == 0, "a warp tile is made of 16 x 8 fragments");
    static_assert(BK % 16 == 0 && BK <= 64, "BK: whole k-steps of 16");
    static_assert(STAGES >= 2 && STAGES <= 8, "2 (double buffering) to 8 pipeline stages");
    static_assert(SMEM_BYTES <= 227 * 1024, "shared memory of one block on sm_90");
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

    // Epilogue: C = alpha*acc + beta*C; beta = 0 never reads C. acc[i][j][h + 2v] is C(row
    // 16i + 2g + v, column 8j + 2t + h) of the warp tile: rows v = 0, 1 side by side. In a block
    // whose tile lies inside C, when C allows it (vec_c), both go in one 16-byte access, and a
    // warp's access covers whole 128-byte rows of C; edge blocks store element by element. (A
    // 16-byte path in edge blocks too costs registers that the main loop then spills.)
    const int64_t row0 = m0 + wm0 + 2 * g, col0 = n0 + wn0 + 2 * t;
    if (vec_c && m0 + BM <= m && n0 + BN <= n) {
        double *c_lane = c + row0 + col0 * ldc;
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    double2 *cp = reinterpret_cast<double2 *>(c_lane + 16 * i + (8 * j + h) * ldc);
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
                const int64_t gn = col0 + 8 * j + r % 2;
                if (gm < m && gn < n) {
                    double *cp = c + gm + gn * ldc;
                    *cp = beta != 0.0 ? alpha * acc[i][j][r] + beta * *cp : alpha * acc[i][j][r];
                }
            }
}

using LaunchFn = fg_kern::LaunchFn<double>;
FG_LAUNCH_ANY(double, dgemm_dmma)

} // namespace fg_dmma
