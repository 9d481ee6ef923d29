// ozaki_guard.cuh: the Ozaki scheme's accuracy guard (ozaki.cu; the reference: cpu_ref/ozaki.h,
// fg_ozaki_certify and fg_ozaki_dcertify), run in the epilogue of the last residue GEMM, the
// product of the 7-bit magnitudes.
//
// Entry (i, j) is certified where the scheme's error bound, with its integer result's conversion
// to double, lies within s u (|A||B|)_ij. SGEMM: s = k, u = 2^-24 (SGEMM's classical bound).
// DGEMM: s = floor(sqrt(k)) + 2, u = 2^-53, DGEMM's typical error (Higham and Mary's
// probabilistic bound lambda sqrt(k) u, lambda = 1) rather than its worst case: on inputs whose
// exponents spread within rows and columns DGEMM's actual error lies far below k u (|A||B|)_ij,
// and the scheme's with 15 moduli would exceed it there. With
//   bound = h_a sum_p |b_pj| + h_b (sum_p |a_ip| + k h_a),  h_a = 2^-(ea_i + 1), h_b = 2^-(fb_j + 1)
// (the half units of the rounding to integers; 0 for a vector of zeros, which is exact), and
// (|A||B|)_ij from below by lower_ij 2^(2 beta - 14 - ea_i - fb_j), lower_ij the int8 GEMM of the
// magnitudes rounded down to 7 bits. 1 + (k + 2) 2^-52 covers the double sums of magnitudes.
#pragma once

#include "ozaki_moduli.cuh"

#include <math.h>
#include <stdint.h>
#include <string.h>

namespace fg_ozaki {

// 2^e as a double, for a normal one (|e| < 1000: float inputs' exponents, halves of double's).
__host__ __device__ __forceinline__ double pow2(int e)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)(e + 1023) << 52);
#else
    const unsigned long long bits = (unsigned long long)(e + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
#endif
}

// 2^e for any e, as ldexp(1, e) gives it (0 or Inf where it underflows or overflows; double
// inputs' exponents reach +-1100, their sums twice that): two normal powers whose product rounds
// once, to the power itself wherever a double holds it.
__device__ __forceinline__ double pow2_any(int e)
{
    e = max(-2044, min(2044, e)); // beyond, 2^e is 0 or Inf all the same
    return pow2(e / 2) * pow2(e - e / 2);
}

struct GuardArgs {
    const unsigned *inputs;    // the status's inputs: nonzero, the residue GEMMs return at once
    const int *ea, *fb;        // the rows' and columns' exponents (the scan's)
    const double *sa, *sb;     // their sums of magnitudes
    uint8_t *cert;             // 1 where entry (i, j) is certified, at cert[j ld + i]
    unsigned long long *count; // += the entries of C not certified
    int64_t m, n, k, ld;
    int beta;
    int t;                     // the magnitudes' plane (ozaki_int8.cuh: its blockIdx.z)
    double slack, limit;       // the test: bound slack <= limit lower bound (guard_slack, guard_limit)
};

// 1 + (k + 2) 2^-52 covers the double sums of magnitudes.
inline double guard_slack(int64_t k) { return 1 + (double)(k + 2) * 0x1p-52; }

// s u - 2^-52: DGEMM's entries (f64) are held to (floor(sqrt(k)) + 2) 2^-53, SGEMM's to
// k 2^-24, and 2^-52 leaves room for D's conversion to double (2^-53 |D|).
inline double guard_limit(int64_t k, bool f64)
{
    return (f64 ? (floor(sqrt((double)k)) + 2) * 0x1p-53 : (double)k * 0x1p-24) - 0x1p-52;
}

// A row of A's or a column of B's terms of the bound: its exponent, its sum of magnitudes and
// its half unit (0 for a vector of zeros, and for one past C's edge, which nothing reads).
struct GuardSide {
    int e;
    double sum, h;
};

// F64: DGEMM's inputs, whose exponents need pow2_any; else SGEMM's.
template <bool F64>
__device__ __forceinline__ GuardSide guard_side(const int *e, const double *sum, int64_t i, int64_t count)
{
    if (i >= count) return {0, 0.0, 0.0};
    const int ei = e[i];
    const double si = sum[i];
    return {ei, si, si > 0 ? (F64 ? pow2_any(-ei - 1) : pow2(-ei - 1)) : 0.0};
}

// DGEMM's (F64) huge products may make the lower bound Inf: then nothing is certified.
template <bool F64>
__device__ __forceinline__ bool certified(const GuardArgs &g, const GuardSide &a, const GuardSide &b, int32_t lower)
{
    const double bound = a.h * b.sum + b.h * (a.sum + (double)g.k * a.h);
    const int e = 2 * g.beta - 14 - a.e - b.e;
    const double low = (double)lower * (F64 ? pow2_any(e) : pow2(e));
    return bound * g.slack <= g.limit * low && (!F64 || low < INFINITY);
}

// Entries (i, j) and (i + 1, j) for j = j0 and j1 (i even, so each pair is 2-byte aligned),
// lower[0] to lower[3] theirs of the magnitudes' product in the order (i, j0), (i + 1, j0),
// (i, j1), (i + 1, j1), b0 and b1 the columns' terms: their flags, and in *bad how many of
// those inside C fail. Rows i and i + 1 are loaded once for both columns.
template <bool F64>
__device__ __forceinline__ void guard_quad(const GuardArgs &g, int64_t i, int64_t j0, int64_t j1, const GuardSide &b0,
                                           const GuardSide &b1, const int32_t (&lower)[4], unsigned *bad)
{
    const GuardSide a0 = guard_side<F64>(g.ea, g.sa, i, g.m), a1 = guard_side<F64>(g.ea, g.sa, i + 1, g.m);
    const bool in0 = i < g.m, in1 = i + 1 < g.m;
    const int64_t j[2] = {j0, j1};
    const GuardSide *b[2] = {&b0, &b1};
#pragma unroll
    for (int c = 0; c < 2; c++) {
        bool ok0 = false, ok1 = false;
        if (j[c] < g.n) {
            if (in0) ok0 = certified<F64>(g, a0, *b[c], lower[2 * c]), *bad += !ok0;
            if (in1) ok1 = certified<F64>(g, a1, *b[c], lower[2 * c + 1]), *bad += !ok1;
        }
        *reinterpret_cast<uchar2 *>(g.cert + j[c] * g.ld + i) = make_uchar2(ok0, ok1);
    }
}

// The warp's count of entries not certified, added once (every lane calls it).
__device__ __forceinline__ void guard_count(const GuardArgs &g, unsigned bad)
{
    bad = __reduce_add_sync(0xffffffffu, bad);
    if (threadIdx.x % 32 == 0 && bad) atomicAdd(g.count, (unsigned long long)bad);
}

} // namespace fg_ozaki
