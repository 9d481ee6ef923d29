/* ozaki.c: the Ozaki scheme II on the CPU (ozaki.h says what and why). Plain loops, exact
 * integer arithmetic (int8 residues, int32 sums as the tensor cores keep them, __int128 for the
 * Chinese remainder theorem), for the tests: small problems only. Float inputs are widened to
 * double (exactly) and take the double path's steps. */
#include "ozaki.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const int fg_ozaki_moduli[FG_OZAKI_MAX_MODULI] = {256, 255, 253, 251, 247, 241, 239, 233,
                                                  229, 227, 223, 217, 211, 199, 197, 193};

static __int128 product_of_moduli(int t)
{
    __int128 M = 1;
    for (int l = 0; l < t; l++) M *= fg_ozaki_moduli[l];
    return M;
}

int fg_ozaki_beta(int t, int64_t k)
{
    if (t < 1 || t > FG_OZAKI_MAX_MODULI || k < 1) return -1;
    const __int128 M = product_of_moduli(t); /* below 2^126 */
    int bits = 0;                           /* 2k < 2^bits */
    while (bits < 64 && ((uint64_t)2 * (uint64_t)k) >> bits) bits++;
    /* 2k 2^(2 beta) < M; where bits + 2 beta > 126 the left side is at least 2^126 > M (and the
     * shift would overflow). */
    for (int beta = 62; beta >= 1; beta--)
        if (bits + 2 * beta <= 126 && ((__int128)(2 * k) << (2 * beta)) < M) return beta;
    return -1;
}

/* The inverse of x modulo m (x and m coprime), by the extended Euclidean algorithm. */
static int64_t inverse_mod(int64_t x, int64_t m)
{
    int64_t r0 = m, r1 = ((x % m) + m) % m, s0 = 0, s1 = 1;
    while (r1 != 0) {
        const int64_t q = r0 / r1, r2 = r0 - q * r1, s2 = s0 - q * s1;
        r0 = r1, r1 = r2, s0 = s1, s1 = s2;
    }
    return ((s0 % m) + m) % m;
}

/* x mod m in the symmetric range of an int8: [-(m-1)/2, (m-1)/2] for odd m, [-128, 127] for 256. */
static int8_t residue(int64_t x, int m)
{
    int64_t r = ((x % m) + m) % m;
    if (r > (m - 1) / 2) r -= m;
    return (int8_t)r;
}

/* The largest magnitude of a row of A or column of B (len entries, step apart), and their sum. */
static double max_and_sum(const double *x, int64_t step, int64_t len, double *sum)
{
    double xmax = 0, s = 0;
    for (int64_t p = 0; p < len; p++) {
        xmax = fmax(xmax, fabs(x[p * step]));
        s += fabs(x[p * step]);
    }
    *sum = s;
    return xmax;
}

/* One row of A or column of B (len entries, step apart) as integers on its own power of two:
 * e with 2^e max|x| < 2^beta, so that the rounded integers are at most 2^beta; out[p * out_step]
 * = round(2^e x_p); *unit = 2^-e (0 for a vector of zeros, whose integers are 0). Returns e. */
static int to_integers(const double *x, int64_t step, int64_t len, int beta, int64_t *out, int64_t out_step,
                       double *unit)
{
    double sum;
    const double xmax = max_and_sum(x, step, len, &sum);
    const int e = xmax > 0 ? beta - 1 - ilogb(xmax) : 0;
    *unit = xmax > 0 ? ldexp(1.0, -e) : 0.0;
    for (int64_t p = 0; p < len; p++) out[p * out_step] = (int64_t)nearbyint(ldexp(x[p * step], e));
    return e;
}

int fg_ozaki_dgemm(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b,
                   int64_t ldb, int t, double *d, int64_t ldd, double *unit_a, double *unit_b)
{
    const int beta = fg_ozaki_beta(t, k);
    if (beta < 1 || k >= ((int64_t)1 << 17) || m < 0 || n < 0) return -1;
    int64_t *ai = malloc(sizeof(int64_t) * (size_t)(m * k + 1)), *bi = malloc(sizeof(int64_t) * (size_t)(k * n + 1));
    int *ea = malloc(sizeof(int) * (size_t)(m + 1)), *fb = malloc(sizeof(int) * (size_t)(n + 1));
    int8_t *ar = malloc((size_t)(m * k + 1)), *br = malloc((size_t)(k * n + 1));
    int32_t *cr = malloc(sizeof(int32_t) * (size_t)(m * n + 1));
    __int128 *x = calloc((size_t)(m * n + 1), sizeof(__int128));
    int rc = -1;
    if (!ai || !bi || !ea || !fb || !ar || !br || !cr || !x) goto out;

    /* 1. The integers: A's rows and B's columns, each on its own power of two. */
    for (int64_t i = 0; i < m; i++) ea[i] = to_integers(a + i, lda, k, beta, ai + i, m, &unit_a[i]);
    for (int64_t j = 0; j < n; j++) fb[j] = to_integers(b + j * ldb, 1, k, beta, bi + j * k, 1, &unit_b[j]);

    /* 2 and 3. Per modulus: the int8 residues, their product in int32, its residue, and its
     * share of the CRT sum x = sum_l (c_l y_l mod m_l) M_l (mod M). */
    const __int128 M = product_of_moduli(t);
    for (int l = 0; l < t; l++) {
        const int ml = fg_ozaki_moduli[l];
        const __int128 Ml = M / ml;
        const int64_t yl = inverse_mod((int64_t)(Ml % ml), ml);
        for (int64_t q = 0; q < m * k; q++) ar[q] = residue(ai[q], ml);
        for (int64_t q = 0; q < k * n; q++) br[q] = residue(bi[q], ml);
        memset(cr, 0, sizeof(int32_t) * (size_t)(m * n));
        for (int64_t j = 0; j < n; j++)
            for (int64_t p = 0; p < k; p++) {
                const int32_t bv = br[p + j * k];
                for (int64_t i = 0; i < m; i++) cr[i + j * m] += (int32_t)ar[i + p * m] * bv;
            }
        for (int64_t q = 0; q < m * n; q++) {
            const int64_t c = ((int64_t)cr[q] % ml + ml) % ml;
            x[q] = (x[q] + (__int128)((c * yl) % ml) * Ml) % M;
        }
    }

    /* 4. The integer in (-M/2, M/2], to double, on the row's and column's units. */
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            __int128 v = x[i + j * m];
            if (v > M / 2) v -= M;
            d[i + j * ldd] = ldexp((double)v, -ea[i] - fb[j]);
        }
    rc = 0;
out:
    free(ai), free(bi), free(ea), free(fb), free(ar), free(br), free(cr), free(x);
    return rc;
}

/* fg_ozaki_certify and fg_ozaki_dcertify, for the bound s_u (|A||B|)_ij (s_u: s u, an integer s
 * times a power of two u, exact). */
static int64_t certify(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b,
                       int64_t ldb, int t, double s_u, unsigned char *ok)
{
    const int beta = fg_ozaki_beta(t, k);
    if (beta < 1 || k >= ((int64_t)1 << 17) || m < 0 || n < 0) return -1;
    double *half_a = malloc(sizeof(double) * (size_t)(m + 1)), *half_b = malloc(sizeof(double) * (size_t)(n + 1));
    double *sum_a = malloc(sizeof(double) * (size_t)(m + 1)), *sum_b = malloc(sizeof(double) * (size_t)(n + 1));
    int *qe_a = malloc(sizeof(int) * (size_t)(m + 1)), *qe_b = malloc(sizeof(int) * (size_t)(n + 1));
    int8_t *qa = malloc((size_t)(m * k + 1)), *qb = malloc((size_t)(k * n + 1));
    int64_t certified = -1;
    if (!half_a || !half_b || !sum_a || !sum_b || !qe_a || !qe_b || !qa || !qb) goto out;

    /* Per row (column): half the scheme's unit, 2^(-e - 1) (to_integers' e), the sum of
     * magnitudes, and the magnitudes rounded down to integers below 128 on 2^qe. */
    for (int64_t i = 0; i < m; i++) {
        const double xmax = max_and_sum(a + i, lda, k, &sum_a[i]);
        half_a[i] = xmax > 0 ? ldexp(1.0, ilogb(xmax) - beta) : 0;
        qe_a[i] = xmax > 0 ? 6 - ilogb(xmax) : 0;
        for (int64_t p = 0; p < k; p++) qa[i + p * m] = (int8_t)floor(ldexp(fabs(a[i + p * lda]), qe_a[i]));
    }
    for (int64_t j = 0; j < n; j++) {
        const double xmax = max_and_sum(b + j * ldb, 1, k, &sum_b[j]);
        half_b[j] = xmax > 0 ? ldexp(1.0, ilogb(xmax) - beta) : 0;
        qe_b[j] = xmax > 0 ? 6 - ilogb(xmax) : 0;
        for (int64_t p = 0; p < k; p++) qb[p + j * k] = (int8_t)floor(ldexp(fabs(b[p + j * ldb]), qe_b[j]));
    }
    certified = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            int32_t q = 0; /* the int8 GEMM's exact sum */
            for (int64_t p = 0; p < k; p++) q += (int32_t)qa[i + p * m] * qb[p + j * k];
            const double lower = ldexp((double)q, -qe_a[i] - qe_b[j]); /* <= (|A||B|)_ij */
            const double e = half_a[i] * sum_b[j] + half_b[j] * (sum_a[i] + (double)k * half_a[i]);
            /* D's conversion to double adds 2^-53 |D| <= 2^-53 ((|A||B|)_ij + E), so E (1 + 2^-53)
             * <= (s u - 2^-53) (|A||B|)_ij suffices, and 2^-52 covers it; the factor 1 + (k + 2)
             * 2^-52 covers the rounding of the double sums in e; lower and s u - 2^-52 are exact
             * (k < 2^17). */
            const int c = e * (1 + (double)(k + 2) * 0x1p-52) <= (s_u - 0x1p-52) * lower;
            ok[i + j * m] = (unsigned char)c;
            certified += c;
        }
out:
    free(half_a), free(half_b), free(sum_a), free(sum_b), free(qe_a), free(qe_b), free(qa), free(qb);
    return certified;
}

/* Whether fg_ozaki_dgemm would take the call: t moduli give beta >= 1 at k, k < 2^17. */
static int takes(int64_t m, int64_t n, int64_t k, int t)
{
    return m >= 0 && n >= 0 && k < ((int64_t)1 << 17) && fg_ozaki_beta(t, k) >= 1;
}

/* A (rows x cols, ld) widened to double, dense (leading dimension rows); NULL on failure. */
static double *widen(const float *x, int64_t ld, int64_t rows, int64_t cols)
{
    double *w = malloc(sizeof(double) * (size_t)(rows * cols + 1));
    if (w)
        for (int64_t j = 0; j < cols; j++)
            for (int64_t i = 0; i < rows; i++) w[i + j * rows] = x[i + j * ld];
    return w;
}

int fg_ozaki_gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, int t, double *d, int64_t ldd, double *unit_a, double *unit_b)
{
    if (!takes(m, n, k, t)) return -1;
    double *aw = widen(a, lda, m, k), *bw = widen(b, ldb, k, n);
    const int rc = aw && bw ? fg_ozaki_dgemm(m, n, k, aw, m, bw, k, t, d, ldd, unit_a, unit_b) : -1;
    free(aw), free(bw);
    return rc;
}

int64_t fg_ozaki_certify(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                         int64_t ldb, int t, unsigned char *ok)
{
    if (!takes(m, n, k, t)) return -1;
    double *aw = widen(a, lda, m, k), *bw = widen(b, ldb, k, n);
    const int64_t rc = aw && bw ? certify(m, n, k, aw, m, bw, k, t, (double)k * 0x1p-24, ok) : -1;
    free(aw), free(bw);
    return rc;
}

double fg_ozaki_dguard(int64_t k)
{
    return floor(sqrt((double)k)) + 2;
}

int64_t fg_ozaki_dcertify(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda, const double *b,
                          int64_t ldb, int t, unsigned char *ok)
{
    return certify(m, n, k, a, lda, b, ldb, t, fg_ozaki_dguard(k) * 0x1p-53, ok);
}
