// ozaki_crt.cuh: the Ozaki scheme's last pass (ozaki.cu): C from the residues of its products by
// the Chinese remainder theorem, entry by entry, where the guard certified the entry; the others
// summed as the precision's GEMM sums them. SGEMM's t = T_S moduli (M below 2^64: 64-bit
// halves), DGEMM's T_D - 1 or T_D (M below 2^126: 128-bit integers).
#pragma once

#include "kernels.h"
#include "ozaki_guard.cuh"
#include "ozaki_moduli.cuh"

#include <math.h>
#include <stdint.h>

// #pragma unroll where the device compiler reads it; nothing for the host compiler (these
// functions are also host code, for the unit test test_ozaki_crt).
#ifdef __CUDA_ARCH__
#define FG_OZAKI_UNROLL _Pragma("unroll")
#else
#define FG_OZAKI_UNROLL
#endif

namespace fg_ozaki {

struct Crt {
    uint32_t w_lo[T_S], w_hi[T_S]; // (M / m_l) ((M / m_l)^-1 mod m_l) mod M, in halves
    unsigned long long M;           // the product of the t moduli
    double inv_M;                   // 1 / M
};

// op(A) and op(B) for the entries the guard does not certify: op(A)(i, p) = a[i asv + p asp],
// op(B)(p, j) = b[j bsv + p bsp].
template <class T>
struct Operands {
    const T *a, *b;
    int64_t asv, asp, bsv, bsp;
};

// X_ij, the integer of (-M/2, M/2] with residues res[l] modulo modulus(l): sum_l w_l r_l (below
// 2^75) as S_hi 2^32 + S_lo, each half summed exactly in 64 bits; the quotient by M rounded from
// doubles (within 2^-40 of the exact one, so the remainder lies within M/2 (1 + 2^-39) < 2^63);
// the remainder in 64-bit arithmetic modulo 2^64, which is exact there, then moved into
// (-M/2, M/2] where the rounding put it just outside.
__host__ __device__ __forceinline__ long long crt_value(const Crt &c, const uint8_t (&res)[T_S])
{
    unsigned long long s_lo = 0, s_hi = 0;
FG_OZAKI_UNROLL
    for (int l = 0; l < T_S; l++) {
        s_lo += (unsigned long long)c.w_lo[l] * res[l];
        s_hi += (unsigned long long)c.w_hi[l] * res[l];
    }
    const double x = fma((double)s_hi, 4294967296.0, (double)s_lo);
    const unsigned long long q = (unsigned long long)rint(x * c.inv_M);
    const unsigned long long u = s_lo + (s_hi << 32) - q * c.M; // M may exceed 2^63: unsigned
    const long long r = (long long)u, half = (long long)(c.M / 2);
    return r > half ? (long long)(u - c.M) : r <= -half ? (long long)(u + c.M) : r;
}

// DGEMM's constants for t moduli: w_l = (M / m_l) ((M / m_l)^-1 mod m_l) mod M in four 32-bit
// limbs, w_l / M in float (for the quotient), M in two 64-bit words.
struct Crt128 {
    uint32_t w[T_D][4];
    float frac[T_D];
    unsigned long long M_lo, M_hi;
};

// X_ij, the integer of (-M/2, M/2] with residues res[l] modulo modulus(l): S = sum_l w_l r_l
// modulo 2^128 (its exact value is below 2^138), limb by limb (each limb's sum below 2^44, in 64
// bits), then the limbs' carries; the quotient q by M rounded from
// sum_l r_l (w_l / M) in floats (within 2^-7 of the exact one, below 2^12, so q is off by at
// most one); X = S - q M modulo 2^128, exact as a signed value since |X| < 3M/2 < 2^127, then
// moved into (-M/2, M/2].
template <int T>
__host__ __device__ __forceinline__ __int128 crt_value128(const Crt128 &c, const uint8_t (&res)[T])
{
    unsigned long long s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    float q = 0;
FG_OZAKI_UNROLL
    for (int l = 0; l < T; l++) {
        const uint32_t r = res[l];
        s0 += (unsigned long long)c.w[l][0] * r;
        s1 += (unsigned long long)c.w[l][1] * r;
        s2 += (unsigned long long)c.w[l][2] * r;
        s3 += (unsigned long long)c.w[l][3] * r;
        q = fmaf((float)r, c.frac[l], q);
    }
    const unsigned __int128 s = (unsigned __int128)s0 + ((unsigned __int128)s1 << 32) +
                                ((unsigned __int128)s2 << 64) + ((unsigned __int128)s3 << 96);
    const unsigned __int128 M = ((unsigned __int128)c.M_hi << 64) | c.M_lo;
    const unsigned long long qi = (unsigned long long)rintf(q); // below 2^12
    const unsigned __int128 qM = ((unsigned __int128)(c.M_hi * qi) << 64) + (unsigned __int128)c.M_lo * qi;
    __int128 x = (__int128)(s - qM);
    const __int128 half = (__int128)(M >> 1);
    if (x > half) x -= (__int128)M;
    else if (x <= -half) x += (__int128)M;
    return x;
}

// x as a double, rounded once (to nearest): below 2^64 by the hardware's conversion; above, the
// top 64 bits with a sticky bit for those below, then scaled back.
__host__ __device__ __forceinline__ double to_double(__int128 x)
{
    const bool neg = x < 0;
    const unsigned __int128 mag = neg ? (unsigned __int128)(-x) : (unsigned __int128)x;
    const unsigned long long hi = (unsigned long long)(mag >> 64);
    double d;
    if (hi == 0) {
        d = (double)(unsigned long long)mag;
    } else {
#ifdef __CUDA_ARCH__
        const int shift = 64 - __clzll((long long)hi);
#else
        const int shift = 64 - __builtin_clzll(hi);
#endif
        const unsigned long long top = (unsigned long long)(mag >> shift) |
                                       ((mag & (((unsigned __int128)1 << shift) - 1)) != 0);
        d = (double)top * pow2(shift); // shift <= 63: exact
    }
    return neg ? -d : d;
}

// The constants (host code). M, the product of the first t moduli.
inline unsigned __int128 moduli_product(int t)
{
    unsigned __int128 M = 1;
    for (int l = 0; l < t; l++) M *= (unsigned)modulus(l);
    return M;
}

// (M / m_l)^-1 mod m_l, by trial (m_l <= 256).
inline int inverse_of(unsigned __int128 Ml, int l)
{
    int y = 1;
    while (Ml * (unsigned)y % (unsigned)modulus(l) != 1) y++;
    return y;
}

inline Crt crt_constants()
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

inline Crt128 crt_constants_d(int t)
{
    Crt128 c = {};
    const unsigned __int128 M = moduli_product(t);
    c.M_lo = (unsigned long long)M, c.M_hi = (unsigned long long)(M >> 64);
    for (int l = 0; l < t; l++) {
        const unsigned __int128 Ml = M / (unsigned)modulus(l);
        const unsigned __int128 w = Ml * (unsigned)inverse_of(Ml, l) % M; // below M, so 2^126
        for (int q = 0; q < 4; q++) c.w[l][q] = (uint32_t)(w >> (32 * q));
        c.frac[l] = (float)((double)w / (double)M);
    }
    return c;
}

// An entry's integer X_ij from its residues, times 2^sc, in double: exact for SGEMM (2^sc lies
// within 2^-356 and 2^196, X_ij below 2^63); for DGEMM the integer rounded once, the scaling in
// two exact steps (2^sc may lie past a double's range, the entry not), exact but where the
// entry underflows or overflows.
__device__ __forceinline__ double entry_value(const Crt &c, const uint8_t (&res)[T_S], int sc)
{
    return (double)crt_value(c, res) * pow2(sc);
}
template <int NT>
__device__ __forceinline__ double entry_value(const Crt128 &c, const uint8_t (&res)[NT], int sc)
{
    return to_double(crt_value128<NT>(c, res)) * pow2_any(sc / 2) * pow2_any(sc - sc / 2);
}

// 4 entries of C at p (16-byte aligned).
__device__ __forceinline__ void load4(const float *p, float (&o)[4])
{
    const float4 v = *reinterpret_cast<const float4 *>(p);
    o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
}
__device__ __forceinline__ void load4(const double *p, double (&o)[4])
{
    const double2 v0 = *reinterpret_cast<const double2 *>(p), v1 = *reinterpret_cast<const double2 *>(p + 2);
    o[0] = v0.x, o[1] = v0.y, o[2] = v1.x, o[3] = v1.y;
}
__device__ __forceinline__ void store4(float *p, const float (&o)[4])
{
    *reinterpret_cast<float4 *>(p) = make_float4(o[0], o[1], o[2], o[3]);
}
__device__ __forceinline__ void store4(double *p, const double (&o)[4])
{
    *reinterpret_cast<double2 *>(p) = make_double2(o[0], o[1]);
    *reinterpret_cast<double2 *>(p + 2) = make_double2(o[2], o[3]);
}

// Where the status accepts the call (fg_ozaki_accepts; else nothing):
// C[i + j ldc] = alpha 2^-(ea[i] + fb[j]) X_ij + beta C (C not read when beta = 0), X_ij from
// its NT residues P[l][j][i] (bytes, rows mp apart), where the guard certified the entry
// (cert[j mp + i]); alpha and beta applied in double, then (SGEMM) the rounding to float.
// Elsewhere the entry is summed in T with FMA, as SGEMM (DGEMM) does: k steps for one entry,
// which the caller allows only for few entries. A thread takes 4 entries of a column (mp is a
// multiple of 4, so their bytes come 4 at a time, every plane's load issued before the first is
// used); C moves 16 bytes at a time where it is aligned for it. ea and fb point into the sides,
// at the product's first row and column. T float: NT = T_S, Crt; double: NT = T_D - 1 or T_D,
// Crt128.
template <class T, int NT, class Constants>
__global__ void crt(const fg_ozaki_status *st, const uint8_t *__restrict__ P, int64_t mp, int64_t plane,
                    Constants c, const int *__restrict__ ea, const int *__restrict__ fb,
                    const uint8_t *__restrict__ cert, Operands<T> op, int64_t m, int64_t n, int64_t k, T alpha,
                    T beta, T *C, int64_t ldc)
{
    if (!fg_ozaki_accepts(st, m, n)) return;
    const int64_t i0 = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (i0 >= m) return;
    const int count = m - i0 < 4 ? (int)(m - i0) : 4;
    const bool vec = count == 4 && ldc % (16 / (int)sizeof(T)) == 0 && reinterpret_cast<uintptr_t>(C) % 16 == 0;
    int e_a[4] = {0, 0, 0, 0};
    for (int e = 0; e < count; e++) e_a[e] = ea[i0 + e];
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
        uint32_t v[NT];
#pragma unroll
        for (int l = 0; l < NT; l++) v[l] = *reinterpret_cast<const uint32_t *>(P + l * plane + j * mp + i0);
        const uint32_t ok = *reinterpret_cast<const uint32_t *>(cert + j * mp + i0);
        const int e_b = fb[j];
        T *cj = C + j * ldc + i0;
        T out[4] = {0, 0, 0, 0};
        if (beta != 0) {
            if (vec) load4(cj, out);
            else
                for (int e = 0; e < count; e++) out[e] = cj[e];
        }
#pragma unroll
        for (int e = 0; e < 4; e++) {
            if (e >= count) break;
            if (ok >> (8 * e) & 0xff) {
                uint8_t res[NT];
#pragma unroll
                for (int l = 0; l < NT; l++) res[l] = (uint8_t)(v[l] >> (8 * e));
                double d = (double)alpha * entry_value(c, res, -(e_a[e] + e_b));
                if (beta != 0) d += (double)beta * (double)out[e];
                out[e] = (T)d;
            } else {
                const int64_t i = i0 + e;
                T f = 0;
                for (int64_t p = 0; p < k; p++)
                    f = fma(op.a[i * op.asv + p * op.asp], op.b[j * op.bsv + p * op.bsp], f);
                out[e] = beta != 0 ? alpha * f + beta * out[e] : alpha * f;
            }
        }
        if (vec) store4(cj, out);
        else
            for (int e = 0; e < count; e++) cj[e] = out[e];
    }
}

} // namespace fg_ozaki
