// ozaki_moduli.cuh: the Ozaki scheme's moduli (ozaki.cu), shared by its passes and its residue
// GEMMs: cpu_ref/ozaki.c's list, pairwise coprime. SGEMM takes the first T_S (their product
// below 2^64), DGEMM the first T_D (below 2^126).
#pragma once

#include <stdint.h>

#include <type_traits>

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

// A residue GEMM's int32 sum as its residue in [0, m): a byte, which is all the CRT needs.
__device__ __forceinline__ uint8_t residue_u8(int32_t x, int m)
{
    const int r = x % m;
    return (uint8_t)(r < 0 ? r + m : r);
}

// f(std::integral_constant<int, modulus(l)>()): code that takes residues sees its modulus as a
// constant, whose remainder is a multiply and shifts instead of a division. first_eight takes
// l < 8, next_eight 8 <= l < 16; with_modulus<NT> the first NT (T_S: SGEMM's kernels keep a
// switch of 8).
template <class F> __device__ __forceinline__ void first_eight(int l, F &&f)
{
    switch (l) {
    case 0: f(std::integral_constant<int, modulus(0)>()); break;
    case 1: f(std::integral_constant<int, modulus(1)>()); break;
    case 2: f(std::integral_constant<int, modulus(2)>()); break;
    case 3: f(std::integral_constant<int, modulus(3)>()); break;
    case 4: f(std::integral_constant<int, modulus(4)>()); break;
    case 5: f(std::integral_constant<int, modulus(5)>()); break;
    case 6: f(std::integral_constant<int, modulus(6)>()); break;
    default: f(std::integral_constant<int, modulus(7)>()); break;
    }
}
template <class F> __device__ __forceinline__ void next_eight(int l, F &&f)
{
    switch (l) {
    case 8: f(std::integral_constant<int, modulus(8)>()); break;
    case 9: f(std::integral_constant<int, modulus(9)>()); break;
    case 10: f(std::integral_constant<int, modulus(10)>()); break;
    case 11: f(std::integral_constant<int, modulus(11)>()); break;
    case 12: f(std::integral_constant<int, modulus(12)>()); break;
    case 13: f(std::integral_constant<int, modulus(13)>()); break;
    case 14: f(std::integral_constant<int, modulus(14)>()); break;
    default: f(std::integral_constant<int, modulus(15)>()); break;
    }
}
template <int NT, class F> __device__ __forceinline__ void with_modulus(int l, F &&f)
{
    static_assert(NT == T_S || NT == T_D, "SGEMM's moduli or DGEMM's");
    if (NT == T_S || l < 8) first_eight(l, f);
    else next_eight(l, f);
}

} // namespace fg_ozaki
