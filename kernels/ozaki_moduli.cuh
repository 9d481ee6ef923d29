// ozaki_moduli.cuh: the Ozaki scheme's moduli (ozaki.cu), shared by its passes and its residue
// GEMMs: cpu_ref/ozaki.c's list, pairwise coprime. SGEMM takes the first T_S (their product
// below 2^64), DGEMM the first T_D (below 2^126).
#pragma once

#include <stdint.h>

namespace fg_ozaki {

constexpr int T_S = 8, T_D = 16, MAX_T = T_D;

// Modulus l (< MAX_T): 256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197,
// 193 (a chain of selects, not a table: indexed at run time, a table would live in local memory).
__host__ __device__ constexpr int modulus(int l)
{
    return l == 0 ? 256 : l == 1 ? 255 : l == 2 ? 253 : l == 3 ? 251 : l == 4 ? 247 : l == 5 ? 241 : l == 6 ? 239
         : l == 7 ? 233 : l == 8 ? 229 : l == 9 ? 227 : l == 10 ? 223 : l == 11 ? 217 : l == 12 ? 211
         : l == 13 ? 199 : l == 14 ? 197 : 193;
}

// A residue GEMM's int32 sum x as its residue in [0, m), a byte, which is all the CRT needs, for
// the modulus m <= 256 of the batch entry the block computes (known only at run time: one copy of
// the epilogue serves every modulus). |x| <= k 2^14 <= 2^31 - 2^14 (k < 2^17 products of residues
// within [-128, 128]), so u = x + off, off the first multiple of m from 2^31, lies in [0, 2^32),
// and u mod m = u - m q with q = floor(u magic / 2^40), magic = floor(2^40 / m) + 1: magic exceeds
// 2^40 / m by at most 1, so u magic / 2^40 exceeds u / m by less than 2^-8 <= 1/m and its floor is
// floor(u / m).
struct Residue {
    uint32_t m, off;
    uint64_t magic; // floor(2^40 / m) + 1, times 2^24: the quotient is the high word of u magic

    __host__ __device__ explicit Residue(int modulus)
        : m((uint32_t)modulus), off((uint32_t)(((1ull << 31) + modulus - 1) / modulus * modulus)),
          magic(((1ull << 40) / (uint64_t)modulus + 1) << 24)
    {
    }
    __host__ __device__ __forceinline__ uint8_t operator()(int32_t x) const
    {
        const uint32_t u = (uint32_t)x + off; // exact: x + off is within [0, 2^32)
#ifdef __CUDA_ARCH__
        const uint32_t q = (uint32_t)__umul64hi(u, magic);
#else
        const uint32_t q = (uint32_t)(((unsigned __int128)u * magic) >> 64);
#endif
        return (uint8_t)(u - m * q);
    }
};

} // namespace fg_ozaki
