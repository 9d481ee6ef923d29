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

// 2^e for any e: ldexp outside a normal double's range (0 or Inf where it underflows or
// overflows; double inputs' exponents reach +-1100, their sums twice that).
__device__ __forceinline__ double pow2_any(int e)
{
    return e >= -1022 && e <= 1023 ? pow2(e) : ldexp(1.0, e);
}

struct GuardArgs {
    const unsigned *inputs;    // the status's inputs: nonzero, the residue GEMMs return at once
    const int *ea, *fb;        // the rows' and columns' exponents (the scan's)
    const double *sa, *sb;     // their sums of magnitudes
    uint8_t *cert;             // 1 where entry (i, j) is certified, at cert[j ld + i]
    unsigned long long *count; // += the entries of C not certified
    int64_t m, n, k, ld;
    int beta;
    int t;                     // the batch entry (blockIdx.z) of the magnitudes' product
};

// F64: DGEMM's inputs, held to (floor(sqrt(k)) + 2) 2^-53, whose exponents need pow2_any, and
// whose huge products may make the lower bound Inf (then nothing is certified); else SGEMM's,
// held to k 2^-24. s u - 2^-52 leaves room for D's conversion to double (2^-53 |D|).
template <bool F64>
__device__ __forceinline__ bool certified(const GuardArgs &g, int64_t i, int64_t j, int32_t lower)
{
    const int e_a = g.ea[i], e_b = g.fb[j];
    const double sa = g.sa[i], sb = g.sb[j];
    auto p2 = [](int e) { return F64 ? pow2_any(e) : pow2(e); };
    const double h_a = sa > 0 ? p2(-e_a - 1) : 0, h_b = sb > 0 ? p2(-e_b - 1) : 0;
    const double bound = h_a * sb + h_b * (sa + (double)g.k * h_a);
    const double low = (double)lower * p2(2 * g.beta - 14 - e_a - e_b);
    const double s_u = F64 ? (floor(sqrt((double)g.k)) + 2) * 0x1p-53 : (double)g.k * 0x1p-24;
    return bound * (1 + (double)(g.k + 2) * 0x1p-52) <= (s_u - 0x1p-52) * low && (!F64 || low < INFINITY);
}

// Entries (i, j) and (i + 1, j), lower_0 and lower_1 of the magnitudes' product: their flags
// (i even, so the pair is 2-byte aligned), and in *bad how many of those inside C fail.
template <bool F64>
__device__ __forceinline__ void guard_pair(const GuardArgs &g, int64_t i, int64_t j, int32_t lower_0, int32_t lower_1,
                                           unsigned *bad)
{
    bool c0 = false, c1 = false;
    if (j < g.n) {
        if (i < g.m) c0 = certified<F64>(g, i, j, lower_0), *bad += !c0;
        if (i + 1 < g.m) c1 = certified<F64>(g, i + 1, j, lower_1), *bad += !c1;
    }
    *reinterpret_cast<uchar2 *>(g.cert + j * g.ld + i) = make_uchar2(c0, c1);
}

// The warp's count of entries not certified, added once (every lane calls it).
__device__ __forceinline__ void guard_count(const GuardArgs &g, unsigned bad)
{
    bad = __reduce_add_sync(0xffffffffu, bad);
    if (threadIdx.x % 32 == 0 && bad) atomicAdd(g.count, (unsigned long long)bad);
}

} // namespace fg_ozaki
