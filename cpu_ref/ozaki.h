/* ozaki.h: the Ozaki scheme II on the CPU, in its simplest exact form: the method of issue 51's
 * tensor-core SGEMM path (perf/notes/tensor-core-sgemm.md) and of its DGEMM path to come, kept
 * here as the reference their kernels are checked against (not part of the library).
 *
 * D = A B for float or double A (m x k) and B (k x n), column-major, no transposes:
 *   1. Each row i of A is scaled by 2^e_i and each column j of B by 2^f_j, then rounded to
 *      integers A', B' with |A'|, |B'| <= 2^beta (beta from the moduli and k: fg_ozaki_beta).
 *   2. For each modulus m_l (pairwise coprime, at most 256), A' and B' mod m_l fit int8
 *      (symmetric residues), and A'_l B'_l is an int8 GEMM with int32 sums, exact while
 *      k 128^2 < 2^31.
 *   3. The Chinese remainder theorem gives A'B' exactly from its t residues, since
 *      |A'B'| <= k 2^(2 beta) < M / 2, M = prod m_l.
 *   4. D = 2^(-e_i - f_j) (A'B')_ij, in double.
 * The only errors are the roundings of step 1, |a_ip - 2^-e_i a'_ip| <= 2^(-e_i - 1) (and b's
 * alike), and the conversion of the exact integer to double (2^-53): fg_ozaki_gemm returns the
 * units 2^-e_i and 2^-f_j from which the tests bound the error entry by entry. */
#ifndef FG_OZAKI_REF_H
#define FG_OZAKI_REF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 16 moduli: M below 2^126, so that the exact CRT sums fit a signed __int128. */
#define FG_OZAKI_MAX_MODULI 16

/* The moduli, pairwise coprime, largest first (256 and odd numbers below it). */
extern const int fg_ozaki_moduli[FG_OZAKI_MAX_MODULI];

/* The largest beta with 2 k 2^(2 beta) < prod of the first t moduli (the integers' bits), at
 * most 62 (int64 integers), or -1 where none is at least 1. */
int fg_ozaki_beta(int t, int64_t k);

/* D = A B by the scheme with the first t moduli (1 to FG_OZAKI_MAX_MODULI), d column-major
 * (ldd); unit_a[i] = 2^-e_i and unit_b[j] = 2^-f_j (0 for a row or column of zeros), each of m
 * and n entries. Returns 0, or -1 where t is out of range, k is 2^17 or more (the int32 sums of
 * step 2 could overflow) or beta would be below 1; A and B must be finite. */
int fg_ozaki_gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, int t, double *d, int64_t ldd, double *unit_a, double *unit_b);

/* The guard's test (perf/notes/tensor-core-sgemm.md) for fg_ozaki_gemm's D with the same t:
 * entry (i, j) is certified, ok[i + j m] = 1, where the scheme's error bound
 *   E_ij = 2^(-e_i - 1) sum_p |b_pj| + 2^(-f_j - 1) (sum_p |a_ip| + k 2^(-e_i - 1))
 * with the conversion to double is at most SGEMM's classical bound k u (|A||B|)_ij (u = 2^-24),
 * proven with a lower bound of (|A||B|)_ij: |A| and |B| rounded down to 7-bit integers on each
 * row's and column's scale, whose product is one exact int8 GEMM on the GPU. An uncertified entry
 * is to be computed as SGEMM would. Returns how many are certified, or -1 (fg_ozaki_gemm's
 * conditions). */
int64_t fg_ozaki_certify(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                         int64_t ldb, int t, unsigned char *ok);

/* The same for double A and B (the DGEMM path): the same steps, the integers up to 2^beta in
 * int64 (16 moduli give beta = 57 at k = 1024, 55 at k = 8192). */
int fg_ozaki_dgemm(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b,
                   int64_t ldb, int t, double *d, int64_t ldd, double *unit_a, double *unit_b);

/* fg_ozaki_certify for fg_ozaki_dgemm's D, at DGEMM's typical error rather than its worst case:
 * E_ij with the conversion of D to double (2^-53 |D|) within s u (|A||B|)_ij, u = 2^-53 and
 * s = fg_ozaki_dguard(k) = floor(sqrt(k)) + 2 (Higham and Mary's probabilistic bound lambda
 * sqrt(k) u, lambda = 1, and the conversion's unit). DGEMM's actual error on inputs whose
 * exponents spread within rows and columns lies far below its bound k u (|A||B|)_ij, and the
 * scheme's with 15 moduli (beta 51 at k = 8192) would exceed it there within that bound. Where D
 * underflows its absolute error of 2^-1075 is outside this bound, as it is outside DGEMM's. An
 * uncertified entry is to be computed as DGEMM would. */
double fg_ozaki_dguard(int64_t k);
int64_t fg_ozaki_dcertify(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b,
                          int64_t ldb, int t, unsigned char *ok);

#ifdef __cplusplus
}
#endif

#endif
