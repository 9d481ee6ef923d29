// ozaki.cu: SGEMM by the Ozaki scheme II on the INT8 tensor cores (kernels.h; the method and its
// error analysis: cpu_ref/ozaki.h and perf/notes/tensor-core-sgemm.md).
//
// C = alpha op(A) op(B) + beta C in four passes on the stream; the first two prepare each
// operand's side (kernels.h), once, for every product that reads it:
//   scan     each row of op(A) and column of op(B): the power of two that puts its largest
//            entry just under 2^beta, its sum of magnitudes, and whether any entry is Inf or NaN;
//   split    the rows and columns as integers of at most beta bits, and their residues modulo
//            each of the t moduli as int8, k-contiguous and padded with zeros to whole k-tiles;
//            then a plane of their magnitudes rounded down to 7 bits;
//   products one int8 GEMM per modulus (ozaki_wgmma.cuh, ozaki_int8.cuh), exact in int32, each
//            entry kept as its residue, a byte; then the magnitudes' product, whose epilogue is
//            the guard (ozaki_guard.cuh): it flags the entries whose error bound it certifies
//            within SGEMM's, and counts the others;
//   crt      per certified entry, the integer from its t residues (Chinese remainder theorem,
//            exact in 64-bit halves, crt_value), times the row's and column's powers of two,
//            in double, then alpha, beta and the rounding to float; the others summed in float.
// crt writes C only where the status (kernels.h) accepts the call; elsewhere (inputs the scheme
// cannot carry, too many entries the guard does not certify) C stays untouched, and the caller,
// which reads the status back, has the SIMT kernels run the call instead.
#include "common/launch.cuh"
#include "kernels.h"
#include "ozaki_guard.cuh"
#include "ozaki_int8.cuh"
#include "ozaki_moduli.cuh"
#include "ozaki_wgmma.cuh"

#include <math.h>

namespace fg_ozaki {


struct Crt {
    uint32_t w_lo[MAX_T], w_hi[MAX_T]; // (M / m_l) ((M / m_l)^-1 mod m_l) mod M, in halves
    unsigned long long M;              // the product of the t moduli
    double inv_M;                      // 1 / M
};

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The scan's k-blocks: SCAN_K entries of every vector each.
constexpr int SCAN_K = 256;
int64_t scan_blocks(int64_t k) { return (k + SCAN_K - 1) / SCAN_K; }

// Parts of a workspace, each 256-byte aligned.
struct Layout {
    size_t total = 0;
    size_t take(size_t bytes)
    {
        const size_t at = total;
        total += (bytes + 255) / 256 * 256;
        return at;
    }
};

// A side (kernels.h): the exponents (the largest magnitudes' bits until exponents() converts
// them), the sums of magnitudes and their parts per k-block (summed in order: the same sums,
// and so the same guard's flags, on every run), then t + 1 planes of `stride` rows of kp bytes,
// and WG_BN rows more: a product whose vectors begin inside the side reads whole tiles, up to
// WG_BN - 1 rows past the side's last (mma.sync reads them; TMA reads zeros past its map).
struct SideParts {
    size_t e, sum, part, planes, total;
    int64_t stride, kp;
};
SideParts side_parts(int64_t count, int64_t k, int t)
{
    SideParts p;
    Layout l;
    p.stride = round_up(count, WG_BN), p.kp = round_up(k, WG_BK);
    p.e = l.take(sizeof(int) * (size_t)p.stride);
    p.sum = l.take(sizeof(double) * (size_t)p.stride);
    p.part = l.take(sizeof(double) * (size_t)(scan_blocks(k) * count));
    p.planes = l.take((size_t)((t + 1) * p.stride + WG_BN) * (size_t)p.kp);
    p.total = l.total;
    return p;
}

// A product's workspace: its status (kernels.h), the t residues of each entry of its m x n
// (padded to mp x np: whole tiles of both residue GEMMs, mp of WG_BN, np of WG_BM), and the
// guard's flags.
struct ProductParts {
    size_t status, prod, cert, total;
    int64_t mp, np;
};
ProductParts product_parts(int64_t m, int64_t n, int t)
{
    ProductParts p;
    Layout l;
    p.mp = round_up(m, WG_BN), p.np = round_up(n, WG_BM);
    p.status = l.take(sizeof(fg_ozaki_status));
    p.prod = l.take((size_t)t * (size_t)(p.mp * p.np));
    p.cert = l.take((size_t)(p.mp * p.np));
    p.total = l.total;
    return p;
}

// Vector v (a row of op(A) or a column of op(B)) has entries x[v sv + p sp], p < len. A block
// takes 64 vectors over SCAN_K of their entries (k-block blockIdx.y) and leaves the largest
// magnitude of each in amax[v] (atomicMax of the float's bits: non-negative floats order as
// their bits), zeroed before, and the sum of magnitudes in part[blockIdx.y count + v]; *status
// |= 1 where an entry is Inf or NaN. Where the vectors are contiguous 4 threads follow one (along
// p); else a warp follows 8, reading along p.
__global__ void __launch_bounds__(256) scan(const float *__restrict__ x, int64_t sv, int64_t sp, int64_t count,
                                            int64_t len, unsigned *__restrict__ amax, double *__restrict__ part,
                                            unsigned *status)
{
    const int tid = threadIdx.x;
    const int64_t v0 = (int64_t)blockIdx.x * 64, p0 = (int64_t)blockIdx.y * SCAN_K;
    const int64_t p1 = p0 + SCAN_K < len ? p0 + SCAN_K : len;
    part += blockIdx.y * count;
    bool finite = true;
    if (sv == 1 && sp != 1) {
        __shared__ double sums[4][64];
        const int64_t v = v0 + tid % 64;
        float mx = 0;
        double sm = 0;
        if (v < count)
            for (int64_t p = p0 + tid / 64; p < p1; p += 4) {
                const float a = fabsf(x[v + p * sp]);
                finite &= a <= 3.402823466e38f; // false for Inf and NaN
                mx = fmaxf(mx, a);
                sm += a;
            }
        sums[tid / 64][tid % 64] = sm;
        __syncthreads();
        if (v < count) atomicMax(&amax[v], __float_as_uint(mx));
        if (tid < 64 && v < count) part[v] = sums[0][tid] + sums[1][tid] + sums[2][tid] + sums[3][tid];
    } else {
        const int lane = tid % 32;
        for (int r = 0; r < 8; r++) {
            const int64_t v = v0 + tid / 32 * 8 + r;
            if (v >= count) break; // the same for the whole warp
            float mx = 0;
            double sm = 0;
            for (int64_t p = p0 + lane; p < p1; p += 32) {
                const float a = fabsf(x[v * sv + p * sp]);
                finite &= a <= 3.402823466e38f;
                mx = fmaxf(mx, a);
                sm += a;
            }
            for (int o = 16; o > 0; o /= 2) {
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
                sm += __shfl_xor_sync(0xffffffffu, sm, o);
            }
            if (lane == 0) atomicMax(&amax[v], __float_as_uint(mx)), part[v] = sm;
        }
    }
    if (!finite) atomicOr(status, 1u);
}

// In place, each vector's largest magnitude (its bits) becomes its exponent: e = beta - 1 -
// ilogb(max), so that 2^e max < 2^beta; 0 for a vector of zeros. sum[v]: the scan's parts of
// vector v's sum of magnitudes, added in order.
__global__ void exponents(unsigned *amax_to_e, const double *__restrict__ part, int64_t blocks, double *sum,
                          int64_t count, int beta)
{
    const int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= count) return;
    const float mx = __uint_as_float(amax_to_e[v]);
    reinterpret_cast<int *>(amax_to_e)[v] = mx > 0 ? beta - 1 - ilogbf(mx) : 0;
    double s = 0;
    for (int64_t b = 0; b < blocks; b++) s += part[b * count + v];
    sum[v] = s;
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
// round(2^e[v] x(v, p)), zero past len; plane t: floor(2^(e[v] + 7 - beta) |x(v, p)|), below
// 128 (the guard's magnitudes). Rows from count on are not written: they are the next block's
// of a side, or padding whose products land only in entries past C. A block does 64 vectors x
// 64 k of every plane: the tile comes in through shared memory along x's contiguous side and
// goes out 16 bytes a thread along k.
__global__ void __launch_bounds__(256) split(const float *__restrict__ x, int64_t sv, int64_t sp, int64_t count,
                                             int64_t len, const int *__restrict__ e, int t, int beta,
                                             int8_t *__restrict__ R, int64_t kp, int64_t plane)
{
    // Column p of a tile row at p + 8 (p / 32), rows 73 floats apart: the stores (along a row or
    // down a column) and the reads (8 rows x 4 quarters of 16 per warp) meet 32 banks each.
    __shared__ float tile[64][73];
    auto at = [](int p) { return p + (p >> 5) * 8; };
    const int tid = threadIdx.x;
    const int64_t v0 = (int64_t)blockIdx.y * 64, p0 = (int64_t)blockIdx.x * 64;
    const bool v_contig = sv == 1 && sp != 1;
#pragma unroll 4
    for (int r = 0; r < 16; r++) {
        const int a = tid % 64, b = tid / 64 + 4 * r;
        const int vv = v_contig ? a : b, pp = v_contig ? b : a;
        const int64_t v = v0 + vv, p = p0 + pp;
        tile[vv][at(pp)] = v < count && p < len ? x[v * sv + p * sp] : 0.0f;
    }
    __syncthreads();
    // Thread tid: 16 k of row tid / 4, one 16-byte store per plane.
    const int row = tid / 4, kq = tid % 4 * 16;
    const int64_t v = v0 + row;
    if (v >= count) return;
    const double unit = pow2(e[v]);
    int ints[16];
#pragma unroll
    for (int i = 0; i < 16; i++) ints[i] = __double2int_rn((double)tile[row][at(kq + i)] * unit);
    int8_t *out = R + v * kp + p0 + kq;
#pragma unroll
    for (int l = 0; l < MAX_T; l++) {
        if (l >= t) break;
        uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < 16; i++) words[i / 4] |= (uint32_t)(residue(ints[i], modulus(l)) & 0xff) << (8 * (i % 4));
        *reinterpret_cast<uint4 *>(out + l * plane) = make_uint4(words[0], words[1], words[2], words[3]);
    }
    const double qunit = pow2(e[v] + 7 - beta);
    uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 16; i++)
        words[i / 4] |= (uint32_t)floor(fabs((double)tile[row][at(kq + i)]) * qunit) << (8 * (i % 4));
    *reinterpret_cast<uint4 *>(out + t * plane) = make_uint4(words[0], words[1], words[2], words[3]);
}

// op(A) and op(B) for the entries the guard does not certify: op(A)(i, p) = a[i asv + p asp],
// op(B)(p, j) = b[j bsv + p bsp].
struct Operands {
    const float *a, *b;
    int64_t asv, asp, bsv, bsp;
};

// X_ij, the integer of (-M/2, M/2] with residues res[l] modulo modulus(l): sum_l w_l r_l (below
// 2^75) as S_hi 2^32 + S_lo, each half summed exactly in 64 bits; the quotient by M rounded from
// doubles (within 2^-40 of the exact one, so the remainder lies within M/2 (1 + 2^-39) < 2^63);
// the remainder in 64-bit arithmetic modulo 2^64, which is exact there, then moved into
// (-M/2, M/2] where the rounding put it just outside.
__device__ __forceinline__ long long crt_value(const Crt &c, const uint8_t (&res)[MAX_T])
{
    unsigned long long s_lo = 0, s_hi = 0;
#pragma unroll
    for (int l = 0; l < MAX_T; l++) {
        s_lo += (unsigned long long)c.w_lo[l] * res[l];
        s_hi += (unsigned long long)c.w_hi[l] * res[l];
    }
    const double x = fma((double)s_hi, 4294967296.0, (double)s_lo);
    const unsigned long long q = (unsigned long long)rint(x * c.inv_M);
    const unsigned long long u = s_lo + (s_hi << 32) - q * c.M; // M may exceed 2^63: unsigned
    const long long r = (long long)u, half = (long long)(c.M / 2);
    return r > half ? (long long)(u - c.M) : r <= -half ? (long long)(u + c.M) : r;
}

// Where the status accepts the call (fg_ozaki_accepts; else nothing):
// C[i + j ldc] = alpha 2^-(ea[i] + fb[j]) X_ij + beta C (C not read when beta = 0), X_ij from
// its residues P[l][j][i] (bytes, rows mp apart), where the guard certified the entry
// (cert[j mp + i]). Elsewhere the entry is summed in float with FMA, as SGEMM does: k steps for
// one entry, which the caller allows only for few entries. A thread takes 4 entries of a
// column (mp is a multiple of 4, so their bytes come 4 at a time, every plane's load issued
// before the first is used); C moves 16 bytes at a time where it is aligned for it. ea and fb
// point into the sides, at the product's first row and column.
__global__ void crt(const fg_ozaki_status *st, const uint8_t *__restrict__ P, int64_t mp, int64_t plane, Crt c,
                    const int *__restrict__ ea, const int *__restrict__ fb, const uint8_t *__restrict__ cert,
                    Operands op, int64_t m, int64_t n, int64_t k, float alpha, float beta, float *C, int64_t ldc)
{
    if (!fg_ozaki_accepts(st, m, n)) return;
    const int64_t i0 = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i0 >= m) return;
    const int count = m - i0 < 4 ? (int)(m - i0) : 4;
    const bool vec = count == 4 && ldc % 4 == 0 && reinterpret_cast<uintptr_t>(C) % 16 == 0;
    int e_a[4] = {0, 0, 0, 0};
    for (int e = 0; e < count; e++) e_a[e] = ea[i0 + e];
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
        uint32_t v[MAX_T];
#pragma unroll
        for (int l = 0; l < MAX_T; l++) v[l] = *reinterpret_cast<const uint32_t *>(P + l * plane + j * mp + i0);
        const uint32_t ok = *reinterpret_cast<const uint32_t *>(cert + j * mp + i0);
        const int e_b = fb[j];
        float *cj = C + j * ldc + i0;
        float out[4] = {0, 0, 0, 0};
        if (beta != 0) {
            if (vec) {
                const float4 o = *reinterpret_cast<const float4 *>(cj);
                out[0] = o.x, out[1] = o.y, out[2] = o.z, out[3] = o.w;
            } else {
                for (int e = 0; e < count; e++) out[e] = cj[e];
            }
        }
#pragma unroll
        for (int e = 0; e < 4; e++) {
            if (e >= count) break;
            if (ok >> (8 * e) & 0xff) {
                uint8_t res[MAX_T];
#pragma unroll
                for (int l = 0; l < MAX_T; l++) res[l] = (uint8_t)(v[l] >> (8 * e));
                // 2^-(ea + fb) lies within 2^-356 and 2^196: a normal double, the product exact.
                double d = (double)alpha * ((double)crt_value(c, res) * pow2(-(e_a[e] + e_b)));
                if (beta != 0) d += (double)beta * (double)out[e];
                out[e] = (float)d;
            } else {
                const int64_t i = i0 + e;
                float f = 0;
                for (int64_t p = 0; p < k; p++)
                    f = fmaf(op.a[i * op.asv + p * op.asp], op.b[j * op.bsv + p * op.bsp], f);
                out[e] = beta != 0 ? alpha * f + beta * out[e] : alpha * f;
            }
        }
        if (vec) {
            *reinterpret_cast<float4 *>(cj) = make_float4(out[0], out[1], out[2], out[3]);
        } else {
            for (int e = 0; e < count; e++) cj[e] = out[e];
        }
    }
}

// M, the product of the first t moduli.
unsigned __int128 moduli_product(int t)
{
    unsigned __int128 M = 1;
    for (int l = 0; l < t; l++) M *= (unsigned)modulus(l);
    return M;
}

// The largest beta (at most 30: the split's integers are int32) with 2 k 2^(2 beta) < M.
int beta_for(int t, int64_t k)
{
    const unsigned __int128 M = moduli_product(t);
    for (int b = 30; b >= 1; b--)
        if (((unsigned __int128)(2 * k) << (2 * b)) < M) return b;
    return -1;
}

Crt crt_constants(int t)
{
    Crt c = {};
    const unsigned __int128 M = moduli_product(t);
    c.M = (unsigned long long)M;
    c.inv_M = 1.0 / (double)c.M;
    for (int l = 0; l < t; l++) {
        const unsigned long long Ml = c.M / (unsigned)modulus(l);
        int y = 1; // (M / m_l)^-1 mod m_l, by trial: m_l <= 256
        while ((unsigned __int128)Ml * (unsigned)y % (unsigned)modulus(l) != 1) y++;
        const unsigned long long w = (unsigned long long)((unsigned __int128)Ml * (unsigned)y % M);
        c.w_lo[l] = (uint32_t)w, c.w_hi[l] = (uint32_t)(w >> 32);
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

// Any k below 2^17 (the int32 sums): the guard in the CRT pass holds every entry to SGEMM's
// error bound.
int fg_kernel_ozaki_moduli(int64_t k) { return k < ((int64_t)1 << 17) && beta_for(MAX_T, k) >= 1 ? MAX_T : 0; }

// The bounds come from random problems of at least 1 GFLOP on the H200 (perf/notes/
// tensor-core-sgemm.md): below k = 3072 the scheme lost to the SIMT kernels on most problems,
// and with m or n below 512 (whose padding to whole tiles wastes much of the residue GEMMs) on
// some; from k = 2048 it won where m and n are both 1024 or more. Below 2^20 entries of C its
// 9 GEMMs have too few tiles to fill the GPU in whole waves (each tile runs all of k, with no
// split), and it lost at m, n near 600 even with deep k.
int fg_kernel_ozaki_pays(const fg_gemm_args *g)
{
    if (g->m * g->n < ((int64_t)1 << 20)) return 0;
    return (g->k >= 3072 && g->m >= 512 && g->n >= 512) || (g->k >= 2048 && g->m >= 1024 && g->n >= 1024);
}

size_t fg_kernel_ozaki_side_bytes(int64_t count, int64_t k, int t) { return side_parts(count, k, t).total; }

fg_ozaki_side fg_kernel_ozaki_side(void *mem, int64_t count, int64_t k, int t)
{
    const SideParts p = side_parts(count, k, t);
    char *w = static_cast<char *>(mem);
    fg_ozaki_side side;
    side.planes = reinterpret_cast<int8_t *>(w + p.planes);
    side.stride = p.stride, side.kp = p.kp, side.k = k;
    side.e = reinterpret_cast<int *>(w + p.e);
    side.sum = reinterpret_cast<double *>(w + p.sum);
    side.part = reinterpret_cast<double *>(w + p.part);
    side.t = t, side.beta = beta_for(t, k);
    return side;
}

cudaError_t fg_kernel_ozaki_prepare(const fg_ozaki_side *side, int64_t v0, int64_t count, const float *x, int64_t ld,
                                    int k_contiguous, unsigned *inputs, cudaStream_t s)
{
    const int64_t k = side->k, blocks = scan_blocks(k);
    const int64_t sv = k_contiguous ? ld : 1, sp = k_contiguous ? 1 : ld;
    unsigned *e = reinterpret_cast<unsigned *>(side->e + v0); // the largest magnitudes, then exponents
    double *part = side->part + v0 * blocks;
    cudaError_t err = cudaMemsetAsync(e, 0, sizeof(unsigned) * (size_t)count, s);
    if (err != cudaSuccess) return err;
    scan<<<dim3((unsigned)((count + 63) / 64), (unsigned)blocks), 256, 0, s>>>(x, sv, sp, count, k, e, part, inputs);
    exponents<<<(unsigned)((count + 255) / 256), 256, 0, s>>>(e, part, blocks, side->sum + v0, count, side->beta);
    split<<<dim3((unsigned)(side->kp / 64), (unsigned)((count + 63) / 64)), 256, 0, s>>>(
        x, sv, sp, count, k, side->e + v0, side->t, side->beta, side->planes + v0 * side->kp, side->kp,
        side->stride * side->kp);
    return cudaGetLastError();
}

size_t fg_kernel_ozaki_ws(int64_t m, int64_t n, int t) { return product_parts(m, n, t).total; }

cudaError_t fg_kernel_ozaki_multiply(const fg_gemm_args *g, const fg_ozaki_side *sa, int64_t a0,
                                     const fg_ozaki_side *sb, int64_t b0, const unsigned *inputs, const void *a,
                                     int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc, void *ws,
                                     cudaStream_t s)
{
    const int t = sa->t;
    if (t != MAX_T || sb->t != t || sa->k != g->k || sb->k != g->k)
        return cudaErrorInvalidValue; // crt reads MAX_T planes (fg_kernel_ozaki_moduli)
    static const Crt constants = crt_constants(MAX_T); // the same for every call
    const ProductParts p = product_parts(g->m, g->n, t);
    char *w = static_cast<char *>(ws);
    fg_ozaki_status *status = reinterpret_cast<fg_ozaki_status *>(w + p.status);
    cudaError_t err = cudaMemsetAsync(status, 0, sizeof *status, s);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&status->inputs, inputs, sizeof *inputs, cudaMemcpyDeviceToDevice, s);
    if (err != cudaSuccess) return err;
    uint8_t *prod = reinterpret_cast<uint8_t *>(w + p.prod), *cert = reinterpret_cast<uint8_t *>(w + p.cert);
    const int8_t *ra = sa->planes + a0 * sa->kp, *rb = sb->planes + b0 * sb->kp;
    const GuardArgs guard = {&status->inputs, sa->e + a0,  sb->e + b0, sa->sum + a0, sb->sum + b0, cert,
                             &status->uncertified, g->m, g->n, g->k, p.mp, sa->beta, t};
    // Out[j][i] = sum_p B'(j, p) A'(i, p): the products come out m-contiguous, as C is; t + 1
    // products, the last the magnitudes', whose epilogue is the guard's. Hopper: wgmma from
    // tensor maps over the sides' stacked planes; else, or where no map can be made, mma.sync.
    int dev = 0, major = 0;
    err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (err != cudaSuccess) return err;
    CUtensorMap mx, my;
    bool hopper = false;
#ifdef FG_OZAKI_WGMMA
    hopper = major == 9;
#endif
    if (hopper && fg_kern::tma_map(&mx, sb->planes, sb->kp, (t + 1) * sb->stride, sb->kp, 1, WG_BK, WG_BM, true) &&
        fg_kern::tma_map(&my, sa->planes, sa->kp, (t + 1) * sa->stride, sa->kp, 1, WG_BK, WG_BN, true)) {
        static fg_kern::SmemAsked asked;
        err = fg_kern::allow_smem(int8_gemm_wgmma, asked, WG_SMEM);
        if (err != cudaSuccess) return err;
        int8_gemm_wgmma<<<dim3((unsigned)(p.mp / WG_BN), (unsigned)(p.np / WG_BM), (unsigned)(t + 1)), WG_THREADS,
                          WG_SMEM, s>>>(mx, my, prod, guard, sa->kp, p.mp, sb->stride, b0, sa->stride, a0,
                                        p.mp * p.np);
    } else {
        static fg_kern::SmemAsked asked;
        err = fg_kern::allow_smem(int8_gemm, asked, GEMM_SMEM);
        if (err != cudaSuccess) return err;
        int8_gemm<<<dim3((unsigned)(p.mp / TILE), (unsigned)(p.np / TILE), (unsigned)(t + 1)), THREADS, GEMM_SMEM, s>>>(
            rb, ra, prod, guard, sa->kp, p.mp, sb->stride * sb->kp, sa->stride * sa->kp, p.mp * p.np);
    }
    Operands op = {static_cast<const float *>(a), static_cast<const float *>(b), 0, 0, 0, 0};
    a_strides(g, lda, &op.asv, &op.asp);
    b_strides(g, ldb, &op.bsv, &op.bsp);
    const unsigned rows = (unsigned)(g->n < 65535 ? g->n : 65535);
    crt<<<dim3((unsigned)((g->m + 511) / 512), rows), 128, 0, s>>>(status, prod, p.mp, p.mp * p.np, constants,
                                                                    sa->e + a0, sb->e + b0, cert, op, g->m, g->n,
                                                                    g->k, (float)g->alpha, (float)g->beta,
                                                                    static_cast<float *>(c), ldc);
    return cudaGetLastError();
}
