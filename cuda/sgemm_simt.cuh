// sgemm_simt.cuh: the SIMT SGEMM kernel family (strict FP32, FFMA) as templates, for the
// library's own configurations (sgemm_simt.cu) and the tuner's candidates (perf/tune.cu).
// Block tiles of op(A) and op(B) are staged in shared memory by a cp.async pipeline of STAGES
// buffers; each warp computes a WM x WN warp tile as 8x8 outer products per thread with its
// operands cached in registers; blocks are rasterized in groups along M for L2 reuse.
// Any M, N, K, leading dimension, alignment and transpose pair.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

namespace fg_simt {

// Shared memory holds both operands k-major: xs[k][mn], a row of MNT (+ PAD) floats per k.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_>
struct SimtConfig {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int LM = WM / 8, LN = WN / 8;     // a warp's lanes along M and N
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    // 4 floats of padding: rows stay 16-byte aligned for the 16-byte copies and LDS.128, and the
    // row stride is 4 words mod 32, so the transposing 4-byte copies (lane = k + 8*mn) write
    // bank 4k + mn: 32 distinct banks for k < 8, mn < 4.
    static constexpr int PAD = 4;
    static constexpr int LDA_S = BM + PAD, LDB_S = BN + PAD;
    static constexpr int A_STAGE = BK * LDA_S, B_STAGE = BK * LDB_S; // floats
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float);
    static_assert(LM * LN == 32, "the lanes of a warp tile its warp tile, 8x8 each");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles tile the block tile");
    static_assert(WM % 16 == 0 && WN % 16 == 0, "a thread's 8 rows (columns) are 2 groups of 4");
    static_assert(STAGES >= 2, "the pipeline needs at least double buffering");
    static_assert((BM * BK) % (4 * THREADS) == 0 && (BN * BK) % (4 * THREADS) == 0,
                  "16-byte copies come out in whole rounds");
    static_assert(BK == 8 || BK == 16, "BK = 8: the transposing copies are conflict-free; 16: 2-way");
};

__device__ __forceinline__ void cp_async16(float *dst, const float *src, int src_bytes)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async4(float *dst, const float *src, int src_bytes)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// Copies k-tiles of one operand into xs[BK][LDS]. The operand's element (mn, k) is x[mn + k*ld]
// (MN_CONTIG: op(A) = A, op(B) = B^T) or x[k + mn*ld] (op(A) = A^T, op(B) = B). Each thread owns
// fixed (mn, k) slots of the tile and one pointer that advances a tile per call; out-of-range
// elements are zero-filled (src_bytes < copy size) and never read.
template <int MNT, int BK, int THREADS, int LDS, bool MN_CONTIG>
struct TileLoader {
    static constexpr int CHUNKS = MNT / 4;                 // 16-byte chunks along mn per k
    static constexpr int VEC_ROUNDS = MNT * BK / 4 / THREADS;
    static constexpr int ROUNDS = MNT * BK / THREADS;      // 4-byte copies per thread
    static constexpr int VEC_K_STEP = THREADS / CHUNKS;    // k between a thread's 16-byte chunks
    static constexpr int K_STEP = THREADS / MNT;           // k between its 4-byte copies (mn-contig)
    static constexpr int MN_STEP = THREADS / BK;           // mn between its copies (k-contig)
    static_assert(THREADS % CHUNKS == 0 && THREADS % MNT == 0 && THREADS % BK == 0,
                  "each thread keeps the same mn (k) position in every round");

    const float *x; // this thread's first element of the current k-tile
    int64_t step;   // distance between its copies in one tile
    int mn, k;      // its first slot in the tile
    int mn_left;    // valid elements along mn from its first slot (clamped)
    bool vec;

    __device__ __forceinline__ void init(const float *base, int64_t ld, int64_t mn0, int64_t mn_size,
                                         bool vec16, int tid)
    {
        vec = MN_CONTIG && vec16;
        if (MN_CONTIG && vec) {
            mn = (tid % CHUNKS) * 4, k = tid / CHUNKS, step = VEC_K_STEP * ld;
        } else if (MN_CONTIG) {
            mn = tid % MNT, k = tid / MNT, step = K_STEP * ld;
        } else {
            k = tid % BK, mn = tid / BK, step = MN_STEP * ld;
        }
        const int64_t left = mn_size - (mn0 + mn);
        mn_left = left > (1 << 30) ? (1 << 30) : (int)left;
        x = base + (MN_CONTIG ? mn0 + mn + k * ld : k + (mn0 + mn) * ld);
    }

    // Loads the next k-tile, of which k_left k-positions exist (k_left may exceed BK).
    __device__ __forceinline__ void load(float *xs, const float *any_valid, int64_t k_left, int64_t ld)
    {
        if (MN_CONTIG && vec) {
#pragma unroll
            for (int i = 0; i < VEC_ROUNDS; i++) {
                const int kk = k + i * VEC_K_STEP;
                const int valid = kk < k_left ? (mn_left >= 4 ? 4 : mn_left > 0 ? mn_left : 0) : 0;
                cp_async16(&xs[kk * LDS + mn], valid ? x + i * step : any_valid, valid * 4);
            }
        } else if (MN_CONTIG) {
#pragma unroll
            for (int i = 0; i < ROUNDS; i++) {
                const int kk = k + i * K_STEP;
                const bool ok = kk < k_left && mn_left > 0;
                cp_async4(&xs[kk * LDS + mn], ok ? x + i * step : any_valid, ok ? 4 : 0);
            }
        } else {
#pragma unroll
            for (int i = 0; i < ROUNDS; i++) {
                const bool ok = k < k_left && mn_left > i * MN_STEP;
                cp_async4(&xs[k * LDS + mn + i * MN_STEP], ok ? x + i * step : any_valid, ok ? 4 : 0);
            }
        }
        x += MN_CONTIG ? BK * ld : BK;
    }
};

// Grouped rasterization: GROUP_M consecutive block rows sweep the block columns together, so
// the B panels they share stay in L2.
__device__ __forceinline__ void block_tile(int64_t mtiles, int64_t ntiles, int64_t &bm, int64_t &bn)
{
    constexpr int64_t GROUP_M = 8;
    const int64_t pid = blockIdx.x, width = GROUP_M * ntiles;
    const int64_t first = pid / width * GROUP_M;
    const int64_t rows = mtiles - first < GROUP_M ? mtiles - first : GROUP_M;
    bm = first + (pid % width) % rows;
    bn = (pid % width) / rows;
}

template <class Cfg, bool TA, bool TB>
__global__ void __launch_bounds__(Cfg::THREADS)
    sgemm_simt(int64_t m, int64_t n, int64_t k, float alpha, const float *__restrict__ a,
               int64_t lda, const float *__restrict__ b, int64_t ldb, float beta,
               float *__restrict__ c, int64_t ldc, bool vec_a, bool vec_b, bool vec_c)
{
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, WM = Cfg::WM, WN = Cfg::WN;
    constexpr int STAGES = Cfg::STAGES, THREADS = Cfg::THREADS;
    constexpr int LM = Cfg::LM;
    extern __shared__ __align__(16) float smem[];
    float *as = smem, *bs = smem + STAGES * Cfg::A_STAGE;

    int64_t bm, bn;
    block_tile((m + BM - 1) / BM, (n + BN - 1) / BN, bm, bn);
    const int64_t m0 = bm * BM, n0 = bn * BN;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp % Cfg::WARPS_M, wn = warp / Cfg::WARPS_M;
    // A thread's rows: wm*WM + lm*4 + {0..3} and the same + WM/2; columns likewise with WN/2.
    const int lm = lane % LM, ln = lane / LM;
    const int row_s = wm * WM + lm * 4, col_s = wn * WN + ln * 4;
    const int64_t ktiles = (k + BK - 1) / BK;

    TileLoader<BM, BK, THREADS, Cfg::LDA_S, !TA> load_a;
    TileLoader<BN, BK, THREADS, Cfg::LDB_S, TB> load_b;
    load_a.init(a, lda, m0, m, vec_a, tid);
    load_b.init(b, ldb, n0, n, vec_b, tid);
    // Tiles are loaded in order, one per call: the k-positions left shrink by BK each time.
    int64_t k_left = k;
    auto load_stage = [&](int stage) {
        load_a.load(as + stage * Cfg::A_STAGE, a, k_left, lda);
        load_b.load(bs + stage * Cfg::B_STAGE, b, k_left, ldb);
        k_left -= BK;
    };

    // Prologue: STAGES-1 tiles in flight. Every iteration commits one group, empty or not, so
    // that wait_group<STAGES-2> always means "the tile about to be used has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ktiles) load_stage(s);
        cp_async_commit();
    }

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.f;

    int stage = 0, next = STAGES - 1;
    for (int64_t kt = 0; kt < ktiles; kt++) {
        cp_async_wait<STAGES - 2>();
        __syncthreads(); // the tile of kt is visible to all; everyone is done with kt-1's buffer
        if (kt + STAGES - 1 < ktiles) load_stage(next);
        cp_async_commit();

        const float *a_s = as + stage * Cfg::A_STAGE + row_s;
        const float *b_s = bs + stage * Cfg::B_STAGE + col_s;
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            const float4 a0 = *reinterpret_cast<const float4 *>(a_s + kk * Cfg::LDA_S);
            const float4 a1 = *reinterpret_cast<const float4 *>(a_s + kk * Cfg::LDA_S + WM / 2);
            const float4 b0 = *reinterpret_cast<const float4 *>(b_s + kk * Cfg::LDB_S);
            const float4 b1 = *reinterpret_cast<const float4 *>(b_s + kk * Cfg::LDB_S + WN / 2);
            const float ra[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float rb[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
        stage = stage + 1 == STAGES ? 0 : stage + 1;
        next = next + 1 == STAGES ? 0 : next + 1;
    }
    cp_async_wait<0>();

    // Epilogue: C = alpha*acc + beta*C, 4 consecutive rows of a column per store; beta = 0
    // never reads C.
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int64_t gn = n0 + col_s + (j < 4 ? j : WN / 2 + j - 4);
        if (gn >= n) continue;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t gm = m0 + row_s + h * (WM / 2);
            float *cp = c + gm + gn * ldc;
            const float r[4] = {alpha * acc[h * 4 + 0][j], alpha * acc[h * 4 + 1][j],
                          alpha * acc[h * 4 + 2][j], alpha * acc[h * 4 + 3][j]};
            if (vec_c && gm + 3 < m) {
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
                    if (gm + i < m) cp[i] = beta != 0.f ? r[i] + beta * cp[i] : r[i];
            }
        }
    }
}

inline bool aligned16(const void *p, int64_t ld) { return ((uintptr_t)p % 16 == 0) && ld % 4 == 0; }

// Launches C = alpha op(A) op(B) + beta C (alpha != 0, k > 0) with configuration Cfg.
template <class Cfg, bool TA, bool TB>
cudaError_t launch(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                   const float *b, int64_t ldb, float beta, float *c, int64_t ldc, cudaStream_t s)
{
    auto kernel = sgemm_simt<Cfg, TA, TB>;
    // Above 48 KB of dynamic shared memory a kernel must ask; once per kernel.
    static const cudaError_t attr = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES);
    if (attr != cudaSuccess) return attr;
    const int64_t tiles = ((m + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
    if (tiles > 0x7fffffff) return cudaErrorInvalidConfiguration;
    kernel<<<(unsigned)tiles, Cfg::THREADS, Cfg::SMEM_BYTES, s>>>(
        m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, !TA && aligned16(a, lda),
        TB && aligned16(b, ldb), aligned16(c, ldc));
    return cudaGetLastError();
}

template <class Cfg>
cudaError_t launch_any(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc, cudaStream_t s)
{
    if (!ta && !tb) return launch<Cfg, false, false>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    if (!ta && tb) return launch<Cfg, false, true>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    if (ta && !tb) return launch<Cfg, true, false>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    return launch<Cfg, true, true>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
}

} // namespace fg_simt
