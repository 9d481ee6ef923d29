// ozaki_passes.cuh: the Ozaki scheme's first passes (ozaki.cu), which prepare an operand's side:
// scan (each vector's largest magnitude, sum of magnitudes, Inf or NaN), exponents, and split
// (the integers' residues as int8 planes, and the guard's 7-bit magnitudes), for float and
// double inputs.
#pragma once

#include "ozaki_guard.cuh"
#include "ozaki_moduli.cuh"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <utility>

namespace fg_ozaki {

// The scan's k-blocks: SCAN_K entries of every vector each.
constexpr int SCAN_K = 256;

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
    // round(x 2^e), and the guard's magnitude floor(|x| 2^(e + 7 - beta))
    __device__ static Int to_int(float x, int e) { return round(scaled(x, e)); }
    __device__ static unsigned magnitude(float x, int e, int beta)
    {
        return (unsigned)floor(scaled(fabsf(x), e + 7 - beta));
    }
};
// An integer below 2^62 in magnitude as x2 2^42 + x1 2^21 + x0, each chunk in [-2^20, 2^20]: its
// residues then take 32-bit arithmetic (residue's overload below).
struct Chunks {
    int x2, x1, x0;
};
// a + b rounded toward -Inf (the device's dadd.rm; on the host, for the unit test, the sum
// rounded to nearest and stepped down where TwoSum says it was rounded up).
__host__ __device__ __forceinline__ double add_down(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rd(a, b);
#else
    const double s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
    return err < 0 ? nextafter(s, -INFINITY) : s;
#endif
}
// The low 32 bits of v + 1.5 2^52, an integer-valued v with |v| < 2^31: v as an int, since the
// sum's unit is 1 and 1.5 2^52's low bits are zeros. The conversion runs in the FP64 adder (a
// conversion instruction between double and integer runs at a quarter of the adder's rate).
__host__ __device__ __forceinline__ int low_int(double v_plus_magic)
{
    unsigned long long bits;
    memcpy(&bits, &v_plus_magic, sizeof bits);
    return (int)(unsigned)bits;
}
constexpr double MAGIC = 0x1.8p52;
// The chunks of rint(x 2^e) (|x 2^e| < 2^62, x 2^e exact: two products by powers of two, e up to
// 1135 for a vector of subnormals), in double arithmetic only: z's nearest multiple of 2^42 (the
// rounding of a sum whose unit is 2^42), then the remainder's nearest multiple of 2^21, then the
// last remainder, within 2^20, rounded to nearest even. Each remainder is exact: its bits lie
// within z's. rint(z) is the sum of the three, the first two even.
__host__ __device__ __forceinline__ Chunks chunks_of_scaled(double x, int e)
{
    const double z = x * pow2(e / 2) * pow2(e - e / 2);
    const double h2 = (z + 0x1.8p94) - 0x1.8p94, r2 = z - h2;
    const double h1 = (r2 + 0x1.8p73) - 0x1.8p73, r1 = r2 - h1;
    return {low_int(h2 * 0x1p-42 + MAGIC), low_int(h1 * 0x1p-21 + MAGIC), low_int(r1 + MAGIC)};
}
// floor(|x| 2^(e + 7 - beta)), below 128 (the guard's magnitudes), rounded down in the adder.
__host__ __device__ __forceinline__ unsigned magnitude_of_scaled(double x, int e, int beta)
{
    const int s = e + 7 - beta;
    return (unsigned)low_int(add_down(fabs(x) * pow2(s / 2) * pow2(s - s / 2), MAGIC));
}
template <> struct Precision<double> {
    using Bits = unsigned long long;
    using Int = Chunks;
    static constexpr double MAX = 1.7976931348623157e308;
    __device__ static Bits bits(double x) { return (Bits)__double_as_longlong(x); }
    __device__ static int ilog(Bits b) { return ilogb(__longlong_as_double((long long)b)); }
    __device__ static Int to_int(double x, int e) { return chunks_of_scaled(x, e); }
    __device__ static unsigned magnitude(double x, int e, int beta) { return magnitude_of_scaled(x, e, beta); }
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
__host__ __device__ __forceinline__ int residue(int x)
{
    constexpr int h = M == 256 ? 128 : (M - 1) / 2;
    constexpr unsigned K = ((1u << 30) / M + 1) * M + h; // a multiple of M above 2^30, and h
    return (int)(((unsigned)x + K) % (unsigned)M) - h;
}

// 2^e mod m.
__host__ __device__ constexpr int pow2_mod(int e, int m)
{
    int r = 1;
    for (int i = 0; i < e; i++) r = r * 2 % m;
    return r;
}

// The same for an integer in chunks: x2 (2^42 mod M) + x1 (2^21 mod M) + x0, within 2^29 (each
// chunk within 2^20), plus K, a multiple of M above 2^29 and h more, lies in [0, 2^31); its
// unsigned remainder less h is the symmetric residue, in [-h, M - 1 - h].
template <int M>
__host__ __device__ __forceinline__ int residue(const Chunks &c)
{
    constexpr int c42 = pow2_mod(42, M), c21 = pow2_mod(21, M), h = M == 256 ? 128 : (M - 1) / 2;
    constexpr unsigned K = ((1u << 29) / M + 1) * M + h;
    const unsigned v = (unsigned)(c.x2 * c42 + c.x1 * c21 + c.x0) + K;
    return (int)(v % (unsigned)M) - h;
}

// The low bytes of a, b, c, d as one word, a's lowest: three byte permutes.
__device__ __forceinline__ uint32_t bytes4(int a, int b, int c, int d)
{
    return __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
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
    for (int i = 0; i < 16; i++) ints[i] = P::to_int(tile[row][at(kq + i)], e[v]);
    int8_t *out = R + v * kp + p0 + kq;
    each_of(
        [&](auto plane_l) {
            constexpr int l = decltype(plane_l)::value, M = modulus(l);
            if (l >= t) return;
            int r[16];
#pragma unroll
            for (int i = 0; i < 16; i++) r[i] = residue<M>(ints[i]);
            *reinterpret_cast<uint4 *>(out + l * plane) = make_uint4(
                bytes4(r[0], r[1], r[2], r[3]), bytes4(r[4], r[5], r[6], r[7]), bytes4(r[8], r[9], r[10], r[11]),
                bytes4(r[12], r[13], r[14], r[15]));
        },
        std::make_integer_sequence<int, TMAX>());
    uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
    for (int i = 0; i < 16; i++)
        words[i / 4] |= P::magnitude(tile[row][at(kq + i)], e[v], beta) << (8 * (i % 4));
    *reinterpret_cast<uint4 *>(out + t * plane) = make_uint4(words[0], words[1], words[2], words[3]);
}

} // namespace fg_ozaki
