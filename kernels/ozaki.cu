// ozaki.cu: SGEMM and DGEMM by the Ozaki scheme II on the INT8 tensor cores (kernels.h; the method
// and its error analysis: cpu_ref/ozaki.h and perf/notes/tensor-core-sgemm.md).
//
// C = alpha op(A) op(B) + beta C in four passes on the stream; the first two prepare each
// operand's side (kernels.h), once, for every product that reads it:
//   scan     each row of op(A) and column of op(B): the power of two that puts its largest
//            entry just under 2^beta, its sum of magnitudes, and whether any entry is Inf or NaN;
//   split    the rows and columns as integers of at most beta bits (int32 for float, int64 for
//            double), and their residues modulo each of the t moduli as int8, k-contiguous and
//            padded with zeros to whole k-tiles; then a plane of their magnitudes rounded down
//            to 7 bits;
//   products one int8 GEMM per modulus (ozaki_wgmma.cuh, ozaki_int8.cuh), exact in int32, each
//            entry kept as its residue, a byte; then the magnitudes' product, whose epilogue is
//            the guard (ozaki_guard.cuh): it flags the entries whose error bound it certifies
//            within the precision's GEMM's, and counts the others;
//   crt      per certified entry, the integer from its t residues (Chinese remainder theorem,
//            exact, ozaki_crt.cuh), times the row's and column's powers of two, then alpha, beta
//            (and for SGEMM the rounding to float); the others summed as SGEMM or DGEMM does.
// SGEMM takes T_S = 8 moduli, DGEMM T_D - 1 = 15 or T_D = 16 (ozaki_moduli.cuh,
// fg_kernel_ozaki_moduli).
// crt writes C only where the status (kernels.h) accepts the call; elsewhere (inputs the scheme
// cannot carry, too many entries the guard does not certify) C stays untouched, and the caller,
// which reads the status back, has the SIMT kernels run the call instead.
#include "common/launch.cuh"
#include "kernels.h"
#include "ozaki_crt.cuh"
#include "ozaki_guard.cuh"
#include "ozaki_int8.cuh"
#include "ozaki_moduli.cuh"
#include "ozaki_wgmma.cuh"

#include <math.h>

#include <utility>

namespace fg_ozaki {

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

// What the passes need of the input type: the largest magnitude kept as its bits (non-negative
// floats and doubles order as their bits, so atomicMax finds it), the largest finite value,
// and the integers of at most beta bits (int32 for float's beta <= 30, int64 for double's).
template <class T> struct Precision;
template <> struct Precision<float> {
    using Bits = unsigned;
    using Int = int;
    static constexpr float MAX = 3.402823466e38f;
    __device__ static Bits bits(float x) { return __float_as_uint(x); }
    __device__ static int ilog(Bits b) { return ilogbf(__uint_as_float(b)); }
    __device__ static Int round(double x) { return __double2int_rn(x); }
    // x 2^e (|e| < 400 here: exact in one product)
    __device__ static double scaled(float x, int e) { return (double)x * pow2(e); }
};
// An integer below 2^62 in magnitude as x2 2^42 + x1 2^21 + x0 (x1, x0 in [0, 2^21)): its residues
// then take 32-bit arithmetic (residue's overload below).
struct Chunks {
    int x2, x1, x0;
};
template <> struct Precision<double> {
    using Bits = unsigned long long;
    using Int = Chunks;
    static constexpr double MAX = 1.7976931348623157e308;
    __device__ static Bits bits(double x) { return (Bits)__double_as_longlong(x); }
    __device__ static int ilog(Bits b) { return ilogb(__longlong_as_double((long long)b)); }
    // The chunks of round(x): each step's difference is an integer below 2^42 (2^21), so exact.
    __device__ static Int round(double x)
    {
        const double y = rint(x);
        const int x2 = (int)floor(y * 0x1p-42);
        const double r = y - (double)x2 * 0x1p42;
        const int x1 = (int)floor(r * 0x1p-21);
        return {x2, x1, (int)(r - (double)x1 * 0x1p21)};
    }
    // x 2^e in two exact steps: e reaches 1135 for a vector of subnormals, past a double's 2^e
    __device__ static double scaled(double x, int e) { return x * pow2(e / 2) * pow2(e - e / 2); }
};

// Vector v (a row of op(A) or a column of op(B)) has entries x[v sv + p sp], p < len. A block
// takes 64 vectors over SCAN_K of their entries (k-block blockIdx.y) and leaves the largest
// magnitude of each in amax[v] (atomicMax of its bits), zeroed before, and the sum of magnitudes
// in part[blockIdx.y count + v]; *status |= 1 where an entry is Inf or NaN. Where the vectors
// are contiguous 4 threads follow one (along p); else a warp follows 8, reading along p.
template <class T>
__global__ void __launch_bounds__(256) scan(const T *__restrict__ x, int64_t sv, int64_t sp, int64_t count,
                                            int64_t len, typename Precision<T>::Bits *__restrict__ amax,
                                            double *__restrict__ part, unsigned *status)
{
    using P = Precision<T>;
    const int tid = threadIdx.x;
    const int64_t v0 = (int64_t)blockIdx.x * 64, p0 = (int64_t)blockIdx.y * SCAN_K;
    const int64_t p1 = p0 + SCAN_K < len ? p0 + SCAN_K : len;
    part += blockIdx.y * count;
    bool finite = true;
    if (sv == 1 && sp != 1) {
        __shared__ double sums[4][64];
        const int64_t v = v0 + tid % 64;
        T mx = 0;
        double sm = 0;
        if (v < count)
            for (int64_t p = p0 + tid / 64; p < p1; p += 4) {
                const T a = fabs(x[v + p * sp]);
                finite &= a <= P::MAX; // false for Inf and NaN
                mx = fmax(mx, a);
                sm += a;
            }
        sums[tid / 64][tid % 64] = sm;
        __syncthreads();
        if (v < count) atomicMax(&amax[v], P::bits(mx));
        if (tid < 64 && v < count) part[v] = sums[0][tid] + sums[1][tid] + sums[2][tid] + sums[3][tid];
    } else {
        const int lane = tid % 32;
        for (int r = 0; r < 8; r++) {
            const int64_t v = v0 + tid / 32 * 8 + r;
            if (v >= count) break; // the same for the whole warp
            T mx = 0;
            double sm = 0;
            for (int64_t p = p0 + lane; p < p1; p += 32) {
                const T a = fabs(x[v * sv + p * sp]);
                finite &= a <= P::MAX;
                mx = fmax(mx, a);
                sm += a;
            }
            for (int o = 16; o > 0; o /= 2) {
                mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, o));
                sm += __shfl_xor_sync(0xffffffffu, sm, o);
            }
            if (lane == 0) atomicMax(&amax[v], P::bits(mx)), part[v] = sm;
        }
    }
    if (!finite) atomicOr(status, 1u);
}

// Each vector's largest magnitude (its bits, amax[v]) becomes its exponent e[v] = beta - 1 -
// ilogb(max), so that 2^e max < 2^beta; 0 for a vector of zeros. sum[v]: the scan's parts of
// vector v's sum of magnitudes, added in order. (amax may share e's memory, or sum's: each
// thread reads its own entry before it writes it.)
template <class T>
__global__ void exponents(const typename Precision<T>::Bits *amax, int *e, const double *__restrict__ part,
                          int64_t blocks, double *sum, int64_t count, int beta)
{
    const int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= count) return;
    const typename Precision<T>::Bits mx = amax[v];
    double s = 0;
    for (int64_t b = 0; b < blocks; b++) s += part[b * count + v];
    e[v] = mx != 0 ? beta - 1 - Precision<T>::ilog(mx) : 0;
    sum[v] = s;
}

// The symmetric residue of x (|x| <= 2^30) modulo M: in [-128, 127] for 256, else within
// +-(M - 1) / 2.
template <int M>
__device__ __forceinline__ int residue(int x)
{
    int r = x % M;
    constexpr int hi = M == 256 ? 127 : (M - 1) / 2;
    if (r > hi) r -= M;
    else if (r < -hi - (M == 256)) r += M;
    return r;
}

// 2^e mod m.
__host__ __device__ constexpr int pow2_mod(int e, int m)
{
    int r = 1;
    for (int i = 0; i < e; i++) r = r * 2 % m;
    return r;
}

// The same for an integer in chunks, as its low byte (all the plane keeps): x2 (2^42 mod M) +
// x1 (2^21 mod M) + x0 + O, O a multiple of M above 2^28 (|x2| <= 2^20), lies in [0, 2^31):
// its remainder unsigned, then moved into the symmetric range, which for the byte means adding
// 256 - M above (M - 1) / 2.
template <int M>
__device__ __forceinline__ int residue(const Chunks &c)
{
    constexpr int c42 = pow2_mod(42, M), c21 = pow2_mod(21, M), O = ((1 << 28) / M + 1) * M;
    const unsigned u = (unsigned)(c.x2 * c42 + c.x1 * c21 + c.x0 + O) % (unsigned)M;
    return M == 256 ? (int)u : (int)(u + (u > (M - 1) / 2 ? 256 - M : 0));
}

// f(std::integral_constant<int, L>()) for L = 0 .. N - 1, in order.
template <class F, int... L>
__device__ __forceinline__ void each_of(F &&f, std::integer_sequence<int, L...>)
{
    (f(std::integral_constant<int, L>()), ...);
}

// R[l][v][p] (int8, rows kp apart, planes `plane` apart) = the residue modulo modulus(l) of
// round(2^e[v] x(v, p)), zero past len, for l < t (t <= TMAX); plane t: floor(2^(e[v] + 7 -
// beta) |x(v, p)|), below 128 (the guard's magnitudes). Rows from count on are not written: they
// are the next block's of a side, or padding whose products land only in entries past C. A block
// does 64 vectors x 64 k of every plane: the tile comes in through shared memory along x's
// contiguous side and goes out 16 bytes a thread along k.
template <class T, int TMAX>
__global__ void __launch_bounds__(256) split(const T *__restrict__ x, int64_t sv, int64_t sp, int64_t count,
                                             int64_t len, const int *__restrict__ e, int t, int beta,
                                             int8_t *__restrict__ R, int64_t kp, int64_t plane)
{
    using P = Precision<T>;
    // Column p of a tile row at p + 8 (p / 32), rows 73 entries apart: the stores (along a row or
    // down a column) and the reads (8 rows x 4 quarters of 16 per warp) meet 32 banks each
    // (for doubles, each 8-byte access two).
    __shared__ T tile[64][73];
    auto at = [](int p) { return p + (p >> 5) * 8; };
    const int tid = threadIdx.x;
    const int64_t v0 = (int64_t)blockIdx.y * 64, p0 = (int64_t)blockIdx.x * 64;
    const bool v_contig = sv == 1 && sp != 1;
#pragma unroll 4
    for (int r = 0; r < 16; r++) {
        const int a = tid % 64, b = tid / 64 + 4 * r;
        const int vv = v_contig ? a : b, pp = v_contig ? b : a;
        const int64_t v = v0 + vv, p = p0 + pp;
        tile[vv][at(pp)] = v < count && p < len ? x[v * sv + p * sp] : T(0);
    }
    __syncthreads();
    // Thread tid: 16 k of row tid / 4, one 16-byte store per plane.
    const int row = tid / 4, kq = tid % 4 * 16;
    const int64_t v = v0 + row;
    if (v >= count) return;
    typename P::Int ints[16];
#pragma unroll
    for (int i = 0; i < 16; i++) ints[i] = P::round(P::scaled(tile[row][at(kq + i)], e[v]));
    int8_t *out = R + v * kp + p0 + kq;
    each_of(
        [&](auto plane_l) {
            constexpr int l = decltype(plane_l)::value, M = modulus(l);
            if (l >= t) return;
            uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
            for (int i = 0; i < 16; i++) words[i / 4] |= (uint32_t)(residue<M>(ints[i]) & 0xff) << (8 * (i % 4));
            *reinterpret_cast<uint4 *>(out + l * plane) = make_uint4(words[0], words[1], words[2], words[3]);
        },
        std::make_integer_sequence<int, TMAX>());
    uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 16; i++)
        words[i / 4] |= (uint32_t)floor(P::scaled(fabs(tile[row][at(kq + i)]), e[v] + 7 - beta)) << (8 * (i % 4));
    *reinterpret_cast<uint4 *>(out + t * plane) = make_uint4(words[0], words[1], words[2], words[3]);
}

// M, the product of the first t moduli.
unsigned __int128 moduli_product(int t)
{
    unsigned __int128 M = 1;
    for (int l = 0; l < t; l++) M *= (unsigned)modulus(l);
    return M;
}

// The largest beta with 2 k 2^(2 beta) < M: at most 30 for float (the split's integers are
// int32), 62 for double (int64). M < 2^126 and k < 2^17 keep the shifts below 2^128.
int beta_for(int t, int64_t k, bool f64)
{
    const unsigned __int128 M = moduli_product(t);
    for (int b = f64 ? 62 : 30; b >= 1; b--)
        if (2 * b + 18 <= 128 && ((unsigned __int128)(2 * k) << (2 * b)) < M) return b;
    return -1;
}

// (M / m_l)^-1 mod m_l, by trial (m_l <= 256).
int inverse_of(unsigned __int128 Ml, int l)
{
    int y = 1;
    while (Ml * (unsigned)y % (unsigned)modulus(l) != 1) y++;
    return y;
}

Crt crt_constants()
{
    const int t = T_S;
    Crt c = {};
    const unsigned __int128 M = moduli_product(t);
    c.M = (unsigned long long)M;
    c.inv_M = 1.0 / (double)c.M;
    for (int l = 0; l < t; l++) {
        const unsigned long long Ml = c.M / (unsigned)modulus(l);
        const unsigned long long w = (unsigned long long)((unsigned __int128)Ml * (unsigned)inverse_of(Ml, l) % M);
        c.w_lo[l] = (uint32_t)w, c.w_hi[l] = (uint32_t)(w >> 32);
    }
    return c;
}

Crt128 crt_constants_d(int t)
{
    Crt128 c = {};
    const unsigned __int128 M = moduli_product(t);
    c.M_lo = (unsigned long long)M, c.M_hi = (unsigned long long)(M >> 64);
    for (int l = 0; l < t; l++) {
        const unsigned __int128 Ml = M / (unsigned)modulus(l);
        const unsigned __int128 w = Ml * (unsigned)inverse_of(Ml, l) % M; // below 2^127
        for (int q = 0; q < 4; q++) c.w[l][q] = (uint32_t)(w >> (32 * q));
        c.frac[l] = (float)((double)w / (double)M);
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
// (DGEMM's) error bound. DGEMM takes 15 moduli where they give beta >= 53, a double's bits (k
// up to about 880), else 16 (beta 53 to 57): with fewer bits than the inputs' the scheme's error
// exceeds DGEMM's on inputs whose exponents spread within rows and columns, though within
// DGEMM's bound (perf/notes/tensor-core-sgemm.md).
int fg_kernel_ozaki_moduli(int64_t k, int f64)
{
    if (k >= ((int64_t)1 << 17)) return 0;
    if (!f64) return beta_for(T_S, k, false) >= 1 ? T_S : 0;
    return beta_for(T_D - 1, k, true) >= 53 ? T_D - 1 : beta_for(T_D, k, true) >= 1 ? T_D : 0;
}

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

fg_ozaki_side fg_kernel_ozaki_side(void *mem, int64_t count, int64_t k, int t, int f64)
{
    const SideParts p = side_parts(count, k, t);
    char *w = static_cast<char *>(mem);
    fg_ozaki_side side;
    side.planes = reinterpret_cast<int8_t *>(w + p.planes);
    side.stride = p.stride, side.kp = p.kp, side.k = k;
    side.e = reinterpret_cast<int *>(w + p.e);
    side.sum = reinterpret_cast<double *>(w + p.sum);
    side.part = reinterpret_cast<double *>(w + p.part);
    side.t = t, side.beta = beta_for(t, k, f64), side.f64 = f64;
    return side;
}

namespace {
// The scan, the exponents and the split of x's vectors [0, count) into the side's [v0, v0 +
// count); the largest magnitudes wait in e's memory (float) or sum's (double) until exponents.
template <class T, int TMAX>
cudaError_t prepare(const fg_ozaki_side *side, int64_t v0, int64_t count, const T *x, int64_t sv, int64_t sp,
                    unsigned *inputs, cudaStream_t s)
{
    using Bits = typename Precision<T>::Bits;
    const int64_t k = side->k, blocks = scan_blocks(k);
    Bits *amax = sizeof(Bits) == sizeof(int) ? reinterpret_cast<Bits *>(side->e + v0)
                                             : reinterpret_cast<Bits *>(side->sum + v0);
    double *part = side->part + v0 * blocks;
    cudaError_t err = cudaMemsetAsync(amax, 0, sizeof(Bits) * (size_t)count, s);
    if (err != cudaSuccess) return err;
    scan<T><<<dim3((unsigned)((count + 63) / 64), (unsigned)blocks), 256, 0, s>>>(x, sv, sp, count, k, amax, part,
                                                                                  inputs);
    exponents<T><<<(unsigned)((count + 255) / 256), 256, 0, s>>>(amax, side->e + v0, part, blocks, side->sum + v0,
                                                                 count, side->beta);
    split<T, TMAX><<<dim3((unsigned)(side->kp / 64), (unsigned)((count + 63) / 64)), 256, 0, s>>>(
        x, sv, sp, count, k, side->e + v0, side->t, side->beta, side->planes + v0 * side->kp, side->kp,
        side->stride * side->kp);
    return cudaGetLastError();
}
} // namespace

cudaError_t fg_kernel_ozaki_prepare(const fg_ozaki_side *side, int64_t v0, int64_t count, const void *x, int64_t ld,
                                    int k_contiguous, unsigned *inputs, cudaStream_t s)
{
    const int64_t sv = k_contiguous ? ld : 1, sp = k_contiguous ? 1 : ld;
    return side->f64 ? prepare<double, T_D>(side, v0, count, static_cast<const double *>(x), sv, sp, inputs, s)
                     : prepare<float, T_S>(side, v0, count, static_cast<const float *>(x), sv, sp, inputs, s);
}

size_t fg_kernel_ozaki_ws(int64_t m, int64_t n, int t) { return product_parts(m, n, t).total; }

cudaError_t fg_kernel_ozaki_multiply(const fg_gemm_args *g, const fg_ozaki_side *sa, int64_t a0,
                                     const fg_ozaki_side *sb, int64_t b0, const unsigned *inputs, const void *a,
                                     int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc, void *ws,
                                     cudaStream_t s)
{
    const int t = sa->t;
    const bool f64 = g->dt == FG_F64;
    if ((f64 ? t != T_D - 1 && t != T_D : t != T_S) || sb->t != t || sa->f64 != f64 || sb->f64 != f64 ||
        sa->k != g->k || sb->k != g->k)
        return cudaErrorInvalidValue; // crt takes these (fg_kernel_ozaki_moduli)
    const ProductParts p = product_parts(g->m, g->n, t);
    char *w = static_cast<char *>(ws);
    fg_ozaki_status *status = reinterpret_cast<fg_ozaki_status *>(w + p.status);
    cudaError_t err = cudaMemsetAsync(status, 0, sizeof *status, s);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&status->inputs, inputs, sizeof *inputs, cudaMemcpyDeviceToDevice, s);
    if (err != cudaSuccess) return err;
    uint8_t *prod = reinterpret_cast<uint8_t *>(w + p.prod), *cert = reinterpret_cast<uint8_t *>(w + p.cert);
    const int8_t *ra = sa->planes + a0 * sa->kp, *rb = sb->planes + b0 * sb->kp;
    const GuardArgs guard = {&status->inputs,      sa->e + a0, sb->e + b0, sa->sum + a0, sb->sum + b0, cert,
                             &status->uncertified, g->m,       g->n,       g->k,         p.mp,         sa->beta,
                             t,                    f64 ? 0x1p-53 : 0x1p-24};
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
        static fg_kern::SmemAsked asked[2]; // per kernel
        auto kernel = f64 ? int8_gemm_wgmma<T_D> : int8_gemm_wgmma<T_S>;
        err = fg_kern::allow_smem(kernel, asked[f64], WG_SMEM);
        if (err != cudaSuccess) return err;
        kernel<<<dim3((unsigned)(p.mp / WG_BN), (unsigned)(p.np / WG_BM), (unsigned)(t + 1)), WG_THREADS,
                          WG_SMEM, s>>>(mx, my, prod, guard, sa->kp, p.mp, sb->stride, b0, sa->stride, a0,
                                        p.mp * p.np);
    } else {
        static fg_kern::SmemAsked asked[2];
        auto kernel = f64 ? int8_gemm<T_D> : int8_gemm<T_S>;
        err = fg_kern::allow_smem(kernel, asked[f64], GEMM_SMEM);
        if (err != cudaSuccess) return err;
        kernel<<<dim3((unsigned)(p.mp / TILE), (unsigned)(p.np / TILE), (unsigned)(t + 1)), THREADS, GEMM_SMEM, s>>>(
            rb, ra, prod, guard, sa->kp, p.mp, sb->stride * sb->kp, sa->stride * sa->kp, p.mp * p.np);
    }
    const unsigned rows = (unsigned)(g->n < 65535 ? g->n : 65535);
    const dim3 grid((unsigned)((g->m + 511) / 512), rows);
    if (f64) {
        static const Crt128 constants[2] = {crt_constants_d(T_D - 1), crt_constants_d(T_D)}; // for every call
        Operands<double> op = {static_cast<const double *>(a), static_cast<const double *>(b), 0, 0, 0, 0};
        a_strides(g, lda, &op.asv, &op.asp);
        b_strides(g, ldb, &op.bsv, &op.bsp);
        auto kernel = t == T_D ? crt<double, T_D, Crt128> : crt<double, T_D - 1, Crt128>;
        kernel<<<grid, 128, 0, s>>>(status, prod, p.mp, p.mp * p.np, constants[t == T_D], sa->e + a0, sb->e + b0, cert,
                                    op, g->m, g->n, g->k, g->alpha, g->beta, static_cast<double *>(c), ldc);
    } else {
        static const Crt constants = crt_constants();
        Operands<float> op = {static_cast<const float *>(a), static_cast<const float *>(b), 0, 0, 0, 0};
        a_strides(g, lda, &op.asv, &op.asp);
        b_strides(g, ldb, &op.bsv, &op.bsp);
        crt<float, T_S, Crt><<<grid, 128, 0, s>>>(status, prod, p.mp, p.mp * p.np, constants, sa->e + a0, sb->e + b0,
                                                  cert, op, g->m, g->n, g->k, (float)g->alpha, (float)g->beta,
                                                  static_cast<float *>(c), ldc);
    }
    return cudaGetLastError();
}
