// gemm_tiled.cu: a plain shared-memory tiled kernel for float and double (FASTGEMM_KERNEL's
// tiled_64x64x16, and DGEMM on GPUs without FP64 tensor cores). Correct for any M, N, K,
// leading dimension and transpose pair; the fast kernel families are separate files. Also the
// C = beta*C kernel used when alpha = 0 or k = 0.
#include "families.h"
#include "kernels.h"

namespace {

constexpr int BM = 64, BN = 64, BK = 16; // block tile
constexpr int TX = 16, TY = 16;          // 256 threads, each owning a 4x4 strided sub-tile
constexpr int TM = BM / TX, TN = BN / TY;
constexpr int THREADS = TX * TY;
static_assert(BM * BK % THREADS == 0 && BN * BK % THREADS == 0, "tiles load in whole rounds");
static_assert(THREADS % BM == 0 && THREADS % BK == 0, "loader index maps need these");

// op(A)(i, p) of a column-major A, as stored (TA = false) or transposed (TA = true).
template <typename T, bool TRANS>
__device__ __forceinline__ T load_op(const T *x, int64_t ld, int64_t i, int64_t p)
{
    return TRANS ? x[p + i * ld] : x[i + p * ld];
}

// Thread t owns rows tx + 16*i and columns ty + 16*j of the block's C tile, so a warp reads
// 16 consecutive words of an As row (no bank conflict) and 2 broadcast words of a Bs row, and
// writes C in 16-element column runs.
template <typename T, bool TA, bool TB>
__global__ void __launch_bounds__(THREADS)
    gemm_tiled_64x64x16(int64_t m, int64_t n, int64_t k, T alpha, const T *__restrict__ a,
                        int64_t lda, const T *__restrict__ b, int64_t ldb, T beta,
                        T *__restrict__ c, int64_t ldc)
{
    // One column of padding: the loaders that walk k across consecutive threads (op(A) = A^T,
    // op(B) = B) store with a stride of 65 words, which is odd, so 32 threads hit 32 banks.
    __shared__ T as[BK][BM + 1];
    __shared__ T bs[BK][BN + 1];
    const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    const int64_t col0 = (int64_t)blockIdx.x * BN;
    const int64_t mtiles = (m + BM - 1) / BM;

    // Rows beyond gridDim.y * BM (m over four million) are covered by striding.
    for (int64_t tile = blockIdx.y; tile < mtiles; tile += gridDim.y) {
        const int64_t row0 = tile * BM;
        T acc[TM][TN] = {};
        for (int64_t k0 = 0; k0 < k; k0 += BK) {
            // Consecutive threads walk the stored matrix's leading dimension: coalesced reads.
#pragma unroll
            for (int l = 0; l < BM * BK / THREADS; l++) {
                const int r = TA ? tid / BK + l * (THREADS / BK) : tid % BM;
                const int p = TA ? tid % BK : tid / BM + l * (THREADS / BM);
                const int64_t gi = row0 + r, gp = k0 + p;
                as[p][r] = (gi < m && gp < k) ? load_op<T, TA>(a, lda, gi, gp) : T(0);
            }
#pragma unroll
            for (int l = 0; l < BN * BK / THREADS; l++) {
                const int cc = TB ? tid % BN : tid / BK + l * (THREADS / BK);
                const int p = TB ? tid / BN + l * (THREADS / BN) : tid % BK;
                const int64_t gj = col0 + cc, gp = k0 + p;
                // op(B)(p, j): B(p, j) as stored, or B(j, p) when TB.
                bs[p][cc] = (gj < n && gp < k) ? load_op<T, TB>(b, ldb, gp, gj) : T(0);
            }
            __syncthreads();
#pragma unroll
            for (int p = 0; p < BK; p++) {
                T ra[TM], rb[TN];
#pragma unroll
                for (int i = 0; i < TM; i++) ra[i] = as[p][tx + i * TX];
#pragma unroll
                for (int j = 0; j < TN; j++) rb[j] = bs[p][ty + j * TY];
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++) acc[i][j] += ra[i] * rb[j];
            }
            __syncthreads();
        }
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int64_t gj = col0 + ty + j * TY;
#pragma unroll
            for (int i = 0; i < TM; i++) {
                const int64_t gi = row0 + tx + i * TX;
                if (gi < m && gj < n) {
                    T *cij = &c[gi + gj * ldc];
                    // beta = 0: C is write-only, so NaN or Inf already in C never propagates.
                    *cij = beta == T(0) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *cij;
                }
            }
        }
    }
}

template <typename T>
__global__ void scale_c(int64_t m, int64_t n, T beta, T *c, int64_t ldc)
{
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y)
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (int64_t)gridDim.x * blockDim.x)
            c[i + j * ldc] = beta == T(0) ? T(0) : beta * c[i + j * ldc];
}

template <typename T, bool TA, bool TB>
void launch_tiled(int64_t m, int64_t n, int64_t k, T alpha, const T *a, int64_t lda, const T *b,
                  int64_t ldb, T beta, T *c, int64_t ldc, cudaStream_t s)
{
    const int64_t mtiles = (m + BM - 1) / BM, ntiles = (n + BN - 1) / BN;
    dim3 grid((unsigned)ntiles, (unsigned)(mtiles < 65535 ? mtiles : 65535));
    gemm_tiled_64x64x16<T, TA, TB><<<grid, THREADS, 0, s>>>(m, n, k, alpha, a, lda, b, ldb,
                                                            beta, c, ldc);
}

template <typename T>
cudaError_t gemm_tiled(const fg_gemm_args *g, const void *a, int64_t lda, const void *b,
                       int64_t ldb, void *c, int64_t ldc, cudaStream_t s)
{
    if ((g->n + BN - 1) / BN > 0x7fffffff) return cudaErrorInvalidConfiguration;
    auto *pa = static_cast<const T *>(a);
    auto *pb = static_cast<const T *>(b);
    auto *pc = static_cast<T *>(c);
    const T alpha = (T)g->alpha, beta = (T)g->beta;
    const bool ta = g->ta == 'T', tb = g->tb == 'T';
    if (!ta && !tb) launch_tiled<T, false, false>(g->m, g->n, g->k, alpha, pa, lda, pb, ldb, beta, pc, ldc, s);
    else if (!ta && tb) launch_tiled<T, false, true>(g->m, g->n, g->k, alpha, pa, lda, pb, ldb, beta, pc, ldc, s);
    else if (ta && !tb) launch_tiled<T, true, false>(g->m, g->n, g->k, alpha, pa, lda, pb, ldb, beta, pc, ldc, s);
    else launch_tiled<T, true, true>(g->m, g->n, g->k, alpha, pa, lda, pb, ldb, beta, pc, ldc, s);
    return cudaGetLastError();
}

template <typename T>
cudaError_t scale(const fg_gemm_args *g, void *c, int64_t ldc, cudaStream_t s)
{
    const int64_t xblocks = (g->m + 255) / 256;
    dim3 grid((unsigned)(xblocks < 1024 ? xblocks : 1024), (unsigned)(g->n < 65535 ? g->n : 65535));
    scale_c<T><<<grid, 256, 0, s>>>(g->m, g->n, (T)g->beta, static_cast<T *>(c), ldc);
    return cudaGetLastError();
}

} // namespace

cudaError_t fg_tiled_gemm(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb,
                          void *c, int64_t ldc, cudaStream_t s)
{
    return g->dt == FG_F32 ? gemm_tiled<float>(g, a, lda, b, ldb, c, ldc, s)
                           : gemm_tiled<double>(g, a, lda, b, ldb, c, ldc, s);
}

cudaError_t fg_kernel_scale_c(const fg_gemm_args *g, void *c, int64_t ldc, cudaStream_t s)
{
    return g->dt == FG_F32 ? scale<float>(g, c, ldc, s) : scale<double>(g, c, ldc, s);
}
