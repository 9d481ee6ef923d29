// ozaki.cu: SGEMM by the Ozaki scheme II on the INT8 tensor cores (kernels.h; the method and its
// error analysis: cpu_ref/ozaki.h and perf/notes/tensor-core-sgemm.md).
//
// C = alpha op(A) op(B) + beta C in four passes on the stream:
//   scan     each row of op(A) and column of op(B): the power of two that puts its largest
//            entry just under 2^beta, and whether any entry is Inf or NaN (the status word);
//   split    the rows and columns as integers of at most beta bits, and their residues modulo
//            each of the t moduli as int8, k-contiguous and padded with zeros to whole tiles;
//   products one int8 GEMM per modulus (ozaki_wgmma.cuh, ozaki_int8.cuh), exact in int32, each
//            entry kept as its residue, a byte;
//   crt      per entry, the integer from its t residues (Chinese remainder theorem, exact in
//            128-bit arithmetic), times the row's and column's powers of two, in double, then
//            alpha, beta and the rounding to float.
// The caller reads the scan's status back between the scan (fg_kernel_ozaki_scan) and the rest
// (fg_kernel_ozaki_finish): inputs the scheme cannot carry go to the SIMT kernels instead.
#include "common/launch.cuh"
#include "kernels.h"
#include "ozaki_int8.cuh"
#include "ozaki_moduli.cuh"
#include "ozaki_wgmma.cuh"

#include <math.h>

namespace fg_ozaki {


struct Crt {
    unsigned long long w[MAX_T]; // (M / m_l) ((M / m_l)^-1 mod m_l) mod M
    unsigned long long M;        // the product of the t moduli
    double inv_M;                // 1 / M
    int t;
};

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The workspace's parts, each 256-byte aligned.
struct Parts {
    size_t status, ea, fb, ra, rb, prod, total;
    int64_t mp, np, kp;
};
Parts parts(int64_t m, int64_t n, int64_t k, int t)
{
    Parts p;
    // Whole tiles of both residue GEMMs: mp of 256 (the wgmma kernel's columns), kp of 128.
    p.mp = round_up(m, WG_BN), p.np = round_up(n, WG_BM), p.kp = round_up(k, WG_BK);
    auto take = [&p](size_t &at, size_t bytes) {
        at = p.total;
        p.total += (bytes + 255) / 256 * 256;
    };
    p.total = 0;
    take(p.status, sizeof(unsigned));
    take(p.ea, sizeof(int) * (size_t)p.mp);
    take(p.fb, sizeof(int) * (size_t)p.np);
    take(p.ra, (size_t)t * (size_t)(p.mp * p.kp));
    take(p.rb, (size_t)t * (size_t)(p.np * p.kp));
    take(p.prod, (size_t)t * (size_t)(p.mp * p.np));
    return p;
}

// 2^e as a double, for the exponents the scan gives (|e| < 1000).
__device__ __forceinline__ double pow2(int e) { return __longlong_as_double((long long)(e + 1023) << 52); }

// Vector v (a row of op(A) or a column of op(B)) has entries x[v sv + p sp], p < len. A block
// takes 64 vectors over SCAN_K of their entries and leaves the largest magnitude of each in
// amax[v] (atomicMax of the float's bits: non-negative floats order as their bits), zeroed
// before; *status |= 1 where an entry is Inf or NaN. Where the vectors are contiguous a thread
// follows one (4 threads per vector, along p); else a warp follows 8, reading along p.
constexpr int SCAN_K = 256;
__global__ void __launch_bounds__(256) scan(const float *__restrict__ x, int64_t sv, int64_t sp, int64_t count,
                                            int64_t len, unsigned *__restrict__ amax, unsigned *status)
{
    const int tid = threadIdx.x;
    const int64_t v0 = (int64_t)blockIdx.x * 64, p0 = (int64_t)blockIdx.y * SCAN_K;
    const int64_t p1 = p0 + SCAN_K < len ? p0 + SCAN_K : len;
    bool finite = true;
    if (sv == 1 && sp != 1) {
        const int64_t v = v0 + tid % 64;
        float mx = 0;
        if (v < count)
            for (int64_t p = p0 + tid / 64; p < p1; p += 4) {
                const float a = fabsf(x[v + p * sp]);
                finite &= a <= 3.402823466e38f; // false for Inf and NaN
                mx = fmaxf(mx, a);
            }
        if (v < count) atomicMax(&amax[v], __float_as_uint(mx));
    } else {
        const int lane = tid % 32;
        for (int r = 0; r < 8; r++) {
            const int64_t v = v0 + tid / 32 * 8 + r;
            if (v >= count) break; // the same for the whole warp
            float mx = 0;
            for (int64_t p = p0 + lane; p < p1; p += 32) {
                const float a = fabsf(x[v * sv + p * sp]);
                finite &= a <= 3.402823466e38f;
                mx = fmaxf(mx, a);
            }
            for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
            if (lane == 0) atomicMax(&amax[v], __float_as_uint(mx));
        }
    }
    if (!finite) atomicOr(status, 1u);
}

// In place, each vector's largest magnitude (its bits) becomes its exponent: e = beta - 1 -
// ilogb(max), so that 2^e max < 2^beta; 0 for a vector of zeros.
__global__ void exponents(unsigned *amax_to_e, int64_t count, int beta)
{
    const int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= count) return;
    const float mx = __uint_as_float(amax_to_e[v]);
    reinterpret_cast<int *>(amax_to_e)[v] = mx > 0 ? beta - 1 - ilogbf(mx) : 0;
}

// The symmetric residue of x (|x| <= 2^30) modulo m: in [-128, 127] for 256, else within
// +-(m - 1) / 2.
__device__ __forceinline__ int residue(int x, int m)
{
    int r = x % m;
    const int hi = m == 256 ? 127 : (m - 1) / 2;
    if (r > hi) r -= m;
    else if (r < -hi - (m == 256)) r += m;
    return r;
}

// R[l][v][p] (int8, rows kp apart, planes `plane` apart) = the residue modulo modulus(l) of
// round(2^e[v] x(v, p)), zero past count and len. A block does 64 vectors x 64 k of every
// plane: the tile comes in through shared memory along x's contiguous side and goes out 16
// bytes a thread along k.
__global__ void __launch_bounds__(256) split(const float *__restrict__ x, int64_t sv, int64_t sp, int64_t count,
                                             int64_t len, const int *__restrict__ e, int t, int8_t *__restrict__ R,
                                             int64_t kp, int64_t plane)
{
    __shared__ float tile[64][65];
    const int tid = threadIdx.x;
    const int64_t v0 = (int64_t)blockIdx.y * 64, p0 = (int64_t)blockIdx.x * 64;
    const bool v_contig = sv == 1 && sp != 1;
#pragma unroll 4
    for (int r = 0; r < 16; r++) {
        const int a = tid % 64, b = tid / 64 + 4 * r;
        const int vv = v_contig ? a : b, pp = v_contig ? b : a;
        const int64_t v = v0 + vv, p = p0 + pp;
        tile[vv][pp] = v < count && p < len ? x[v * sv + p * sp] : 0.0f;
    }
    __syncthreads();
    // Thread tid: 16 k of row tid / 4, one 16-byte store per plane.
    const int row = tid / 4, kq = tid % 4 * 16;
    const int64_t v = v0 + row;
    const double unit = pow2(v < count ? e[v] : 0);
    int ints[16];
#pragma unroll
    for (int i = 0; i < 16; i++) ints[i] = __double2int_rn((double)tile[row][kq + i] * unit);
    int8_t *out = R + v * kp + p0 + kq;
#pragma unroll
    for (int l = 0; l < MAX_T; l++) {
        if (l >= t) break;
        uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < 16; i++) words[i / 4] |= (uint32_t)(residue(ints[i], modulus(l)) & 0xff) << (8 * (i % 4));
        *reinterpret_cast<uint4 *>(out + l * plane) = make_uint4(words[0], words[1], words[2], words[3]);
    }
}

// C[i + j ldc] = alpha 2^-(ea[i] + fb[j]) X_ij + beta C (C not read when beta = 0), X_ij the
// integer in (-M/2, M/2] whose residues are P[l][j][i] (bytes, rows mp apart).
__global__ void crt(const uint8_t *__restrict__ P, int64_t mp, int64_t plane, Crt c, const int *__restrict__ ea,
                    const int *__restrict__ fb, int64_t m, int64_t n, float alpha, float beta, float *C, int64_t ldc)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
        unsigned __int128 x = 0;
#pragma unroll
        for (int l = 0; l < MAX_T; l++) {
            if (l >= c.t) break;
            x += (unsigned __int128)c.w[l] * P[l * plane + j * mp + i];
        }
        // x mod M: the quotient from doubles is off by at most one either way.
        const double xd = (double)(unsigned long long)(x >> 64) * 18446744073709551616.0 + (double)(unsigned long long)x;
        const unsigned long long qt = (unsigned long long)(xd * c.inv_M);
        __int128 rem = (__int128)x - (__int128)qt * c.M;
        while (rem < 0) rem += c.M;
        while (rem >= (__int128)c.M) rem -= c.M;
        const long long s = rem > (__int128)(c.M / 2) ? (long long)(rem - c.M) : (long long)rem;
        // 2^-(ea + fb) lies within 2^-356 and 2^196: a normal double, the product exact.
        double d = (double)alpha * ((double)s * pow2(-(ea[i] + fb[j])));
        if (beta != 0) d += (double)beta * (double)C[i + j * ldc];
        C[i + j * ldc] = (float)d;
    }
}

// The largest beta (at most 30: the split's integers are int32) with 2 k 2^(2 beta) < M.
int beta_for(int t, int64_t k)
{
    unsigned __int128 M = 1;
    for (int l = 0; l < t; l++) M *= (unsigned)modulus(l);
    for (int b = 30; b >= 1; b--)
        if (((unsigned __int128)(2 * k) << (2 * b)) < M) return b;
    return -1;
}

Crt crt_constants(int t)
{
    Crt c = {};
    c.t = t;
    unsigned __int128 M = 1;
    for (int l = 0; l < t; l++) M *= (unsigned)modulus(l);
    c.M = (unsigned long long)M;
    c.inv_M = 1.0 / (double)c.M;
    for (int l = 0; l < t; l++) {
        const unsigned long long Ml = c.M / (unsigned)modulus(l);
        int y = 1; // (M / m_l)^-1 mod m_l, by trial: m_l <= 256
        while ((unsigned __int128)Ml * (unsigned)y % (unsigned)modulus(l) != 1) y++;
        c.w[l] = (unsigned long long)((unsigned __int128)Ml * (unsigned)y % M);
    }
    return c;
}

// op(A)'s rows and op(B)'s columns as vectors along k: (sv, sp).
void a_strides(const fg_gemm_args *g, int64_t lda, int64_t *sv, int64_t *sp)
{
    const bool ta = g->ta != 'N';
    *sv = ta ? lda : 1, *sp = ta ? 1 : lda;
}
void b_strides(const fg_gemm_args *g, int64_t ldb, int64_t *sv, int64_t *sp)
{
    const bool tb = g->tb != 'N';
    *sv = tb ? 1 : ldb, *sp = tb ? ldb : 1;
}

} // namespace fg_ozaki

using namespace fg_ozaki;

// Below k = 16 the SIMT kernels: SGEMM's error bound, 2 (k + 2) eps (|A| |B|)_ij, is tightest
// there, and the scheme's, 2^-beta (max_p |a_ip| sum_p |b_pj| + max_p |b_pj| sum_p |a_ip|),
// exceeds it where a row's large entries meet a column's small ones (the guard against that
// at any k is not built: perf/notes/tensor-core-sgemm.md).
int fg_kernel_ozaki_moduli(int64_t k)
{
    return k >= 16 && k < ((int64_t)1 << 17) && beta_for(MAX_T, k) >= 1 ? MAX_T : 0;
}

// The bounds come from random problems of at least 1 GFLOP on the H200 (perf/notes/
// tensor-core-sgemm.md): below k = 3072 the scheme lost to the SIMT kernels on most problems,
// and with m or n below 512 (whose padding to whole tiles wastes much of the residue GEMMs) on
// some.
int fg_kernel_ozaki_pays(const fg_gemm_args *g) { return g->k >= 3072 && g->m >= 512 && g->n >= 512; }

size_t fg_kernel_ozaki_ws(const fg_gemm_args *g, int t) { return parts(g->m, g->n, g->k, t).total; }

cudaError_t fg_kernel_ozaki_scan(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb,
                                 int t, void *ws, cudaStream_t s)
{
    const Parts p = parts(g->m, g->n, g->k, t);
    char *w = static_cast<char *>(ws);
    const int beta = beta_for(t, g->k);
    // The status word, then ea and fb (the largest magnitudes until exponents() converts them).
    cudaError_t err = cudaMemsetAsync(w, 0, p.ra, s);
    if (err != cudaSuccess) return err;
    unsigned *status = reinterpret_cast<unsigned *>(w + p.status);
    const unsigned k_blocks = (unsigned)((g->k + SCAN_K - 1) / SCAN_K);
    int64_t sv, sp;
    a_strides(g, lda, &sv, &sp);
    unsigned *ea = reinterpret_cast<unsigned *>(w + p.ea), *fb = reinterpret_cast<unsigned *>(w + p.fb);
    scan<<<dim3((unsigned)((g->m + 63) / 64), k_blocks), 256, 0, s>>>(static_cast<const float *>(a), sv, sp, g->m,
                                                                      g->k, ea, status);
    b_strides(g, ldb, &sv, &sp);
    scan<<<dim3((unsigned)((g->n + 63) / 64), k_blocks), 256, 0, s>>>(static_cast<const float *>(b), sv, sp, g->n,
                                                                      g->k, fb, status);
    exponents<<<(unsigned)((g->m + 255) / 256), 256, 0, s>>>(ea, g->m, beta);
    exponents<<<(unsigned)((g->n + 255) / 256), 256, 0, s>>>(fb, g->n, beta);
    return cudaGetLastError();
}

cudaError_t fg_kernel_ozaki_finish(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb,
                                   void *c, int64_t ldc, int t, void *ws, cudaStream_t s)
{
    const Parts p = parts(g->m, g->n, g->k, t);
    char *w = static_cast<char *>(ws);
    const int *ea = reinterpret_cast<const int *>(w + p.ea), *fb = reinterpret_cast<const int *>(w + p.fb);
    int8_t *ra = reinterpret_cast<int8_t *>(w + p.ra), *rb = reinterpret_cast<int8_t *>(w + p.rb);
    uint8_t *prod = reinterpret_cast<uint8_t *>(w + p.prod);
    int64_t sv, sp;
    a_strides(g, lda, &sv, &sp);
    split<<<dim3((unsigned)(p.kp / 64), (unsigned)(p.mp / 64)), 256, 0, s>>>(
        static_cast<const float *>(a), sv, sp, g->m, g->k, ea, t, ra, p.kp, p.mp * p.kp);
    b_strides(g, ldb, &sv, &sp);
    split<<<dim3((unsigned)(p.kp / 64), (unsigned)(p.np / 64)), 256, 0, s>>>(
        static_cast<const float *>(b), sv, sp, g->n, g->k, fb, t, rb, p.kp, p.np * p.kp);
    // Out[j][i] = sum_p B'(j, p) A'(i, p): the products come out m-contiguous, as C is. Hopper:
    // wgmma from tensor maps over the stacked planes; else, or where no map can be made, mma.sync.
    int dev = 0, major = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (err != cudaSuccess) return err;
    CUtensorMap mx, my;
    bool hopper = false;
#ifdef FG_OZAKI_WGMMA
    hopper = major == 9;
#endif
    if (hopper && fg_kern::tma_map(&mx, rb, p.kp, t * p.np, p.kp, 1, WG_BK, WG_BM, true) &&
        fg_kern::tma_map(&my, ra, p.kp, t * p.mp, p.kp, 1, WG_BK, WG_BN, true)) {
        static fg_kern::SmemAsked asked;
        err = fg_kern::allow_smem(int8_gemm_wgmma, asked, WG_SMEM);
        if (err != cudaSuccess) return err;
        int8_gemm_wgmma<<<dim3((unsigned)(p.mp / WG_BN), (unsigned)(p.np / WG_BM), (unsigned)t), WG_THREADS,
                          WG_SMEM, s>>>(mx, my, prod, p.kp, p.mp, p.np, p.mp, p.mp * p.np);
    } else {
        static fg_kern::SmemAsked asked;
        err = fg_kern::allow_smem(int8_gemm, asked, GEMM_SMEM);
        if (err != cudaSuccess) return err;
        int8_gemm<<<dim3((unsigned)(p.mp / TILE), (unsigned)(p.np / TILE), (unsigned)t), THREADS, GEMM_SMEM, s>>>(
            rb, ra, prod, p.kp, p.mp, p.np * p.kp, p.mp * p.kp, p.mp * p.np);
    }
    const unsigned rows = (unsigned)(g->n < 65535 ? g->n : 65535);
    crt<<<dim3((unsigned)((g->m + 127) / 128), rows), 128, 0, s>>>(prod, p.mp, p.mp * p.np, crt_constants(t), ea, fb,
                                                                     g->m, g->n, (float)g->alpha, (float)g->beta,
                                                                     static_cast<float *>(c), ldc);
    return cudaGetLastError();
}
