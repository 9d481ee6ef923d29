/* test_ozaki_ref.c: the CPU Ozaki scheme II of cpu_ref/ozaki.c, the reference for issue 51's
 * tensor-core SGEMM path. Checks:
 *   - the moduli are pairwise coprime and beta is the largest with 2k 2^(2 beta) < M;
 *   - integer inputs come out exact (the residues, int32 sums and CRT lose nothing);
 *   - on every input class of perf/accuracy.cu (uniform, normal, wide, cancel, rows), every
 *     entry lies within the error analysis's bound (ozaki.h): the roundings of the scaling,
 *     the conversion to double, and the reference's own error (long double sums);
 *   - with 8 moduli at k = 1024 the float results are at least as accurate as an SGEMM that
 *     sums in float with FMA (as the SIMT kernels do), in max and median componentwise error,
 *     on the classes uniform, normal, cancel and rows; the wide class is printed only (the
 *     guard's case: its small entries keep few of their bits), and so is a class of denormal A
 *     (the scaling makes them integers like any other).
 *   - the guard (fg_ozaki_certify): on every class, and on two built to defeat the scheme
 *     ("pairs": k = 2, each row's large entry meets the column's small one; "peaked": one entry
 *     of each row 10^6 against 10^-6 in each column), every certified entry lies within SGEMM's
 *     classical bound k u (|A||B|)_ij, and the result, uncertified entries summed in float with
 *     FMA, lies within test_gemm's tolerance 2 (k+2) eps (|A||B|)_ij everywhere; the share
 *     certified is printed.
 * The same for double inputs (fg_ozaki_dgemm, fg_ozaki_dcertify: the DGEMM path's reference):
 *   - integers up to 2^50 come out exact with 16 moduli;
 *   - every entry of every class (the double classes of make_d) within the bound, for 14 to 16
 *     moduli at k = 1024 and for 16 at k = 8192;
 *   - with 15 and 16 moduli (the GPU takes 15 up to k of about 28000), max and median
 *     componentwise error no larger than those of a DGEMM that sums in double with FMA, on
 *     uniform, normal, cancel and rows, at k = 1024 and 8192;
 *   - the guard at DGEMM's typical error (fg_ozaki_dguard): every certified entry within
 *     (floor(sqrt(k)) + 2) u (|A||B|)_ij, u = 2^-53, and the result, uncertified entries summed
 *     in double with FMA, within 2 (k+2) eps (|A||B|)_ij; 15 moduli at k = 1024 and 8192.
 * CPU only, no GPU. */
#include "cpu_ref/ozaki.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

static void check(const char *what, int ok)
{
    printf("%-72s %s\n", what, ok ? "ok" : "FAIL");
    fails += !ok;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform(void) /* U(-1, 1), splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}
static double normal(void)
{
    double u1 = 0.5 * (uniform() + 1.0), u2 = uniform();
    if (u1 <= 0) u1 = 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(M_PI * u2);
}

static int64_t gcd(int64_t x, int64_t y)
{
    while (y) {
        const int64_t r = x % y;
        x = y, y = r;
    }
    return x;
}

/* The class "rows": each row of A and column of B scaled by 2^s, s drawn from [0, spread), of
 * float a and b or, where a is NULL, of double ad and bd. */
static void scale_rows(int64_t m, int64_t n, int64_t k, double spread, float *a, float *b, double *ad, double *bd)
{
    for (int64_t i = 0; i < m; i++) {
        const int s = (int)(uniform() * spread);
        for (int64_t p = 0; p < k; p++)
            if (a) a[i + p * m] = ldexpf(a[i + p * m], s);
            else ad[i + p * m] = ldexp(ad[i + p * m], s);
    }
    for (int64_t j = 0; j < n; j++) {
        const int s = (int)(uniform() * spread);
        for (int64_t p = 0; p < k; p++)
            if (a) b[p + j * k] = ldexpf(b[p + j * k], s);
            else bd[p + j * k] = ldexp(bd[p + j * k], s);
    }
}

/* A (m x k) and B (k x n) of a class, as perf/accuracy.cu makes them. */
static void make(const char *cls, int64_t m, int64_t n, int64_t k, float *a, float *b)
{
    if (!strcmp(cls, "cancel")) {
        const int64_t h = k / 2;
        for (int64_t p = 0; p < h; p++)
            for (int64_t i = 0; i < m; i++) {
                const double x = uniform();
                a[i + p * m] = (float)x;
                a[i + (p + h) * m] = (float)(x * (1.0 + 1e-3 * uniform()));
            }
        for (int64_t j = 0; j < n; j++)
            for (int64_t p = 0; p < h; p++) {
                const float y = (float)uniform();
                b[p + j * k] = y, b[p + h + j * k] = -y;
            }
        return;
    }
    for (int64_t q = 0; q < m * k; q++) a[q] = (float)uniform();
    for (int64_t q = 0; q < k * n; q++) b[q] = (float)uniform();
    if (!strcmp(cls, "normal")) {
        for (int64_t q = 0; q < m * k; q++) a[q] = (float)normal();
        for (int64_t q = 0; q < k * n; q++) b[q] = (float)normal();
    } else if (!strcmp(cls, "wide")) {
        for (int64_t q = 0; q < m * k; q++) a[q] = ldexpf(0.5f + 0.5f * fabsf(a[q]), (int)(uniform() * 24.5)) * (uniform() < 0 ? -1 : 1);
        for (int64_t q = 0; q < k * n; q++) b[q] = ldexpf(0.5f + 0.5f * fabsf(b[q]), (int)(uniform() * 24.5)) * (uniform() < 0 ? -1 : 1);
    } else if (!strcmp(cls, "denormal")) { /* A's entries below FLT_MIN (2^-126) */
        for (int64_t q = 0; q < m * k; q++) a[q] = ldexpf(a[q], -130);
    } else if (!strcmp(cls, "rows")) {
        scale_rows(m, n, k, 30.5, a, b, NULL, NULL);
    }
}

/* A (m x k) and B (k x n) of a class in double: the float classes' shapes, with the spreads
 * of double (wide: exponents over 53 bits; rows: scales over 60; denormal: A below 2^-1022). */
static void make_d(const char *cls, int64_t m, int64_t n, int64_t k, double *a, double *b)
{
    const int64_t h = k / 2;
    for (int64_t q = 0; q < m * k; q++) a[q] = !strcmp(cls, "normal") ? normal() : uniform();
    for (int64_t q = 0; q < k * n; q++) b[q] = !strcmp(cls, "normal") ? normal() : uniform();
    for (int64_t p = 0; p < h && !strcmp(cls, "cancel"); p++) /* sums of x y - x (1 + 1e-3 r) y */
        for (int64_t i = 0; i < m; i++) a[i + (p + h) * m] = a[i + p * m] * (1.0 + 1e-3 * uniform());
    for (int64_t j = 0; j < n && !strcmp(cls, "cancel"); j++)
        for (int64_t p = 0; p < h; p++) b[p + h + j * k] = -b[p + j * k];
    if (!strcmp(cls, "wide")) {
        for (int64_t q = 0; q < m * k; q++) a[q] = ldexp(0.5 + 0.5 * fabs(a[q]), (int)(uniform() * 53.5)) * (uniform() < 0 ? -1 : 1);
        for (int64_t q = 0; q < k * n; q++) b[q] = ldexp(0.5 + 0.5 * fabs(b[q]), (int)(uniform() * 53.5)) * (uniform() < 0 ? -1 : 1);
    } else if (!strcmp(cls, "denormal")) {
        for (int64_t q = 0; q < m * k; q++) a[q] = ldexp(a[q], -1030);
    } else if (!strcmp(cls, "rows")) {
        scale_rows(m, n, k, 60.5, NULL, NULL, a, b);
    } else if (!strcmp(cls, "pairs")) { /* row i: (x, 2^-27 y); column j: (2^-27 z, w) */
        for (int64_t i = 0; i < m; i++) a[i + m] = ldexp(a[i + m], -27);
        for (int64_t j = 0; j < n; j++) b[j * k] = ldexp(b[j * k], -27);
    } else if (!strcmp(cls, "peaked")) { /* one entry of each row 10^12 against 10^-12 */
        for (int64_t i = 0; i < m; i++) a[i] = a[i] < 0 ? -1e12 : 1e12;
        for (int64_t j = 0; j < n; j++) b[j * k] *= 1e-12;
    }
}

static int cmp_double(const void *x, const void *y)
{
    const double u = *(const double *)x, v = *(const double *)y;
    return (u > v) - (u < v);
}

/* Componentwise errors |c - ref| / (|A||B|) of a float result c, or of a double one cd where c is
 * NULL: their max and median. */
static void comp_errors(int64_t m, int64_t n, const float *c, const double *cd, const long double *ref,
                        const long double *absab, double *max, double *median)
{
    double *e = malloc(sizeof(double) * (size_t)(m * n));
    int64_t cnt = 0;
    for (int64_t q = 0; q < m * n; q++)
        if (absab[q] > 0) e[cnt++] = (double)(fabsl((c ? (long double)c[q] : (long double)cd[q]) - ref[q]) / absab[q]);
    qsort(e, (size_t)cnt, sizeof(double), cmp_double);
    *max = cnt ? e[cnt - 1] : 0, *median = cnt ? e[cnt / 2] : 0;
    free(e);
}

/* Each entry of A B: in long double (ref), its sum of magnitudes (absab), and summed with FMA
 * in the inputs' precision, as the SIMT kernels (float) or a DGEMM (double) do (fma or fma_d).
 * The inputs are float (a, b) or, where a is NULL, double (ad, bd). */
static void reference(int64_t m, int64_t n, int64_t k, const float *a, const float *b, const double *ad,
                      const double *bd, long double *ref, long double *absab, float *fma_f, double *fma_d)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            long double s = 0, sa = 0;
            float f = 0;
            double fd = 0;
            for (int64_t p = 0; p < k; p++) {
                const double x = a ? a[i + p * m] : ad[i + p * m], y = a ? b[p + j * k] : bd[p + j * k];
                s += (long double)x * y;
                sa += fabsl((long double)x * y);
                if (a) f = fmaf((float)x, (float)y, f);
                else fd = fma(x, y, fd);
            }
            ref[i + j * m] = s, absab[i + j * m] = sa;
            if (a) fma_f[i + j * m] = f;
            else fma_d[i + j * m] = fd;
        }
}

static void check_moduli(void)
{
    int coprime = 1;
    for (int x = 0; x < FG_OZAKI_MAX_MODULI; x++)
        for (int y = x + 1; y < FG_OZAKI_MAX_MODULI; y++)
            coprime &= gcd(fg_ozaki_moduli[x], fg_ozaki_moduli[y]) == 1 && fg_ozaki_moduli[x] <= 256;
    check("moduli: pairwise coprime, none above 256 (int8 residues)", coprime);
    int beta_ok = 1;
    for (int t = 2; t <= FG_OZAKI_MAX_MODULI; t++)
        for (int64_t k = 1; k < (1 << 17); k = k * 3 + 1) {
            const int beta = fg_ozaki_beta(t, k);
            unsigned __int128 M = 1; /* below 2^126: the shifts below stay under 2^128 */
            for (int l = 0; l < t; l++) M *= (unsigned)fg_ozaki_moduli[l];
            if (beta < 1) continue;
            beta_ok &= ((unsigned __int128)(2 * k) << (2 * beta)) < M &&
                       (beta == 62 || ((unsigned __int128)(2 * k) << (2 * beta + 2)) >= M);
        }
    check("beta: the largest with 2k 2^(2 beta) < M, for t = 2..16 and k up to 2^17", beta_ok);
    check("beta: 8 moduli at k = 1024 give 26 bits", fg_ozaki_beta(8, 1024) == 26);
    check("beta: 16 moduli give 57 bits at k = 1024, 55 at k = 8192",
          fg_ozaki_beta(16, 1024) == 57 && fg_ozaki_beta(16, 8192) == 55);
    double d, ua, ub;
    const float one = 1;
    check("k of 2^17 refused (int32 sums)", fg_ozaki_gemm(1, 1, 1 << 17, &one, 1, &one, 1 << 17, 8, &d, 1, &ua, &ub) == -1);
}

/* Integers up to 2^20 in float with 8 moduli, or up to 2^50 in double with 16: the scheme must
 * return the exact product, rounded once to double. */
static void check_exact(int dbl)
{
    const int64_t m = 17, n = 13, k = 300;
    const double top = dbl ? 0x1p50 : 0x1p20;
    double *a = malloc(sizeof(double) * m * k), *b = malloc(sizeof(double) * k * n);
    float *af = malloc(sizeof(float) * m * k), *bf = malloc(sizeof(float) * k * n);
    double *d = malloc(sizeof(double) * m * n), ua[17], ub[13];
    for (int64_t q = 0; q < m * k; q++) a[q] = (double)(int64_t)(uniform() * top);
    for (int64_t q = 0; q < k * n; q++) b[q] = (double)(int64_t)(uniform() * top);
    a[0] = top - 1, b[0] = -(top - 1); /* the largest magnitudes */
    for (int64_t p = 0; p < k; p++) a[3 + p * m] = 0, b[p + 5 * k] = 0; /* A's row 3, B's column 5 */
    for (int64_t q = 0; q < m * k; q++) af[q] = (float)a[q]; /* exact below 2^24 */
    for (int64_t q = 0; q < k * n; q++) bf[q] = (float)b[q];
    int exact = (dbl ? fg_ozaki_dgemm(m, n, k, a, m, b, k, 16, d, m, ua, ub)
                     : fg_ozaki_gemm(m, n, k, af, m, bf, k, 8, d, m, ua, ub)) == 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            __int128 s = 0;
            for (int64_t p = 0; p < k; p++) s += (__int128)(int64_t)a[i + p * m] * (int64_t)b[p + j * k];
            exact &= d[i + j * m] == (double)s;
        }
    check(dbl ? "double: integers up to 2^50, 17x13x300, 16 moduli: the exact product"
              : "integers up to 2^20, 17x13x300, 8 moduli: the exact product",
          exact);
    check(dbl ? "double: a row of zeros and a column of zeros: unit 0"
              : "a row of zeros and a column of zeros: unit 0",
          ua[3] == 0 && ub[5] == 0 && ua[0] > 0);
    free(a), free(b), free(af), free(bf), free(d);
}

/* One class: the bound on every entry for each t, and (t = 8) the accuracy against SGEMM. */
static void check_class(const char *cls, int assert_vs_sgemm)
{
    const int64_t m = 48, n = 40, k = 1024;
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
    float *cs = malloc(sizeof(float) * m * n), *co = malloc(sizeof(float) * m * n);
    double *d = malloc(sizeof(double) * m * n), ua[48], ub[40];
    long double *ref = malloc(sizeof(long double) * m * n), *absab = malloc(sizeof(long double) * m * n);
    make(cls, m, n, k, a, b);
    reference(m, n, k, a, b, NULL, NULL, ref, absab, cs, NULL);
    double smax, smed;
    comp_errors(m, n, cs, NULL, ref, absab, &smax, &smed);
    for (int t = 6; t <= 8; t++) {
        int within = fg_ozaki_gemm(m, n, k, a, m, b, k, t, d, m, ua, ub) == 0;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                /* |AB - A~B~| <= sum_p ua/2 |b| + (|a| + ua/2) ub/2; D rounds A~B~ to double
                 * (2^-53); the long double reference errs by at most k 2^-64 sum |ab|. */
                long double bound = 0;
                for (int64_t p = 0; p < k; p++)
                    bound += 0.5L * ua[i] * fabsl((long double)b[p + j * k]) +
                             (fabsl((long double)a[i + p * m]) + 0.5L * ua[i]) * 0.5L * ub[j];
                bound += 0x1p-53L * fabsl((long double)d[i + j * m]) * (1 + 0x1p-52L) +
                         1.01L * k * 0x1p-64L * absab[i + j * m];
                within &= fabsl((long double)d[i + j * m] - ref[i + j * m]) <= bound;
                co[i + j * m] = (float)d[i + j * m];
            }
        double omax, omed;
        comp_errors(m, n, co, NULL, ref, absab, &omax, &omed);
        printf("%-8s t=%d beta=%2d  componentwise error max %.3e median %.3e; SGEMM (FMA in float) %.3e %.3e\n",
               cls, t, fg_ozaki_beta(t, k), omax, omed, smax, smed);
        char what[128];
        snprintf(what, sizeof what, "%s, %d moduli: every entry within the error bound", cls, t);
        check(what, within);
        if (t == 8 && assert_vs_sgemm) {
            snprintf(what, sizeof what, "%s, 8 moduli, float results: max and median error <= SGEMM's", cls);
            check(what, omax <= smax && omed <= smed);
        }
    }
    free(a), free(b), free(cs), free(co), free(d), free(ref), free(absab);
}

/* The guard's checks on one class: every certified entry of the scheme's D within s_u
 * (|A||B|)_ij (the guard's bound: k u for float, fg_ozaki_dguard(k) u for double), and the
 * result (certified entries from D, rounded to float where the FMA sums are float, cf; else
 * double, cd) within test_gemm's tolerance 2 (k+2) eps (|A||B|)_ij, eps = 2u. */
static void guard_verdict(const char *prefix, const char *cls, int64_t m, int64_t n, int64_t k, int64_t certified,
                          int ran, const unsigned char *ok, const double *d, const float *cf, const double *cd,
                          const long double *ref, const long double *absab, double u, double s_u)
{
    int sound = ran, within = 1;
    for (int64_t q = 0; q < m * n; q++) {
        const long double ref_err = 1.01L * k * 0x1p-64L * absab[q]; /* the long double sum's own */
        if (ok[q]) sound &= fabsl((long double)d[q] - ref[q]) <= (long double)s_u * absab[q] + ref_err;
        const long double c = ok[q] ? (cf ? (long double)(float)d[q] : (long double)d[q])
                                    : (cf ? (long double)cf[q] : (long double)cd[q]);
        within &= fabsl(c - ref[q]) <= 4.0L * (k + 2) * (long double)u * absab[q] + ref_err;
    }
    printf("%s%-8s k=%4lld: %lld of %lld entries certified\n", prefix, cls, (long long)k, (long long)certified,
           (long long)(m * n));
    char what[128];
    snprintf(what, sizeof what, "%sguard, %s, k = %lld: every certified entry within %g u (|A||B|)", prefix, cls,
             (long long)k, s_u / u);
    check(what, sound);
    snprintf(what, sizeof what, "%sguard, %s, k = %lld: the result within 2 (k+2) eps (|A||B|)", prefix, cls,
             (long long)k);
    check(what, within);
}

/* The guard on one class (make's, or "pairs" and "peaked"), 8 moduli; dbl: make_d's class in
 * double, t moduli. */
static void check_guard(const char *cls, int64_t k, int dbl, int t)
{
    const int64_t m = 48, n = 40;
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n), *c = malloc(sizeof(float) * m * n);
    double *ad = malloc(sizeof(double) * m * k), *bd = malloc(sizeof(double) * k * n);
    double *cd = malloc(sizeof(double) * m * n), *d = malloc(sizeof(double) * m * n), ua[48], ub[40];
    unsigned char *ok = malloc((size_t)(m * n));
    long double *ref = malloc(sizeof(long double) * m * n), *absab = malloc(sizeof(long double) * m * n);
    int64_t certified;
    int ran;
    if (dbl) {
        make_d(cls, m, n, k, ad, bd);
        certified = fg_ozaki_dcertify(m, n, k, ad, m, bd, k, t, ok);
        ran = certified >= 0 && fg_ozaki_dgemm(m, n, k, ad, m, bd, k, t, d, m, ua, ub) == 0;
        reference(m, n, k, NULL, NULL, ad, bd, ref, absab, NULL, cd);
    } else {
        make(!strcmp(cls, "pairs") || !strcmp(cls, "peaked") ? "uniform" : cls, m, n, k, a, b);
        if (!strcmp(cls, "pairs")) /* row i: (x, 2^-11 y); column j: (2^-11 z, w) */
            for (int64_t q = 0; q < m; q++) a[q + m] = ldexpf(a[q + m], -11);
        if (!strcmp(cls, "pairs"))
            for (int64_t j = 0; j < n; j++) b[j * k] = ldexpf(b[j * k], -11);
        if (!strcmp(cls, "peaked")) {
            for (int64_t i = 0; i < m; i++) a[i] = a[i] < 0 ? -1e6f : 1e6f;
            for (int64_t j = 0; j < n; j++) b[j * k] *= 1e-6f;
        }
        certified = fg_ozaki_certify(m, n, k, a, m, b, k, t, ok);
        ran = certified >= 0 && fg_ozaki_gemm(m, n, k, a, m, b, k, t, d, m, ua, ub) == 0;
        reference(m, n, k, a, b, NULL, NULL, ref, absab, c, NULL);
    }
    guard_verdict(dbl ? "double " : "", cls, m, n, k, certified, ran, ok, d, dbl ? NULL : c, dbl ? cd : NULL, ref,
                  absab, dbl ? 0x1p-53 : 0x1p-24, dbl ? fg_ozaki_dguard(k) * 0x1p-53 : (double)k * 0x1p-24);
    free(a), free(b), free(c), free(ad), free(bd), free(cd), free(d), free(ok), free(ref), free(absab);
}

/* One double class at depth k: the bound on every entry for t = t0..16, and (t = 15 and 16) the
 * accuracy against DGEMM. */
static void check_class_d(const char *cls, int64_t k, int t0, int assert_vs_dgemm)
{
    const int64_t m = 48, n = 40;
    double *a = malloc(sizeof(double) * m * k), *b = malloc(sizeof(double) * k * n);
    double *cd = malloc(sizeof(double) * m * n), *d = malloc(sizeof(double) * m * n), ua[48], ub[40];
    long double *ref = malloc(sizeof(long double) * m * n), *absab = malloc(sizeof(long double) * m * n);
    make_d(cls, m, n, k, a, b);
    reference(m, n, k, NULL, NULL, a, b, ref, absab, NULL, cd);
    double dmax, dmed;
    comp_errors(m, n, NULL, cd, ref, absab, &dmax, &dmed);
    for (int t = t0; t <= 16; t++) {
        int within = fg_ozaki_dgemm(m, n, k, a, m, b, k, t, d, m, ua, ub) == 0;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) { /* check_class's bound */
                long double bound = 0;
                for (int64_t p = 0; p < k; p++)
                    bound += 0.5L * ua[i] * fabsl((long double)b[p + j * k]) +
                             (fabsl((long double)a[i + p * m]) + 0.5L * ua[i]) * 0.5L * ub[j];
                /* the conversion to double: 2^-53 |D|, or half the least denormal (2^-1075) */
                bound = bound * (1 + 0x1p-60L) + 0x1p-53L * fabsl((long double)d[i + j * m]) * (1 + 0x1p-52L) +
                        0x1p-1075L + 1.01L * k * 0x1p-64L * absab[i + j * m];
                within &= fabsl((long double)d[i + j * m] - ref[i + j * m]) <= bound;
            }
        double omax, omed;
        comp_errors(m, n, NULL, d, ref, absab, &omax, &omed);
        printf("double %-8s k=%4lld t=%d beta=%2d  componentwise error max %.3e median %.3e; DGEMM (FMA) %.3e %.3e\n",
               cls, (long long)k, t, fg_ozaki_beta(t, k), omax, omed, dmax, dmed);
        char what[128];
        snprintf(what, sizeof what, "double %s, k = %lld, %d moduli: every entry within the error bound", cls,
                 (long long)k, t);
        check(what, within);
        if (t >= 15 && assert_vs_dgemm) {
            snprintf(what, sizeof what, "double %s, k = %lld, %d moduli: max and median error <= DGEMM's", cls,
                     (long long)k, t);
            check(what, omax <= dmax && omed <= dmed);
        }
    }
    free(a), free(b), free(cd), free(d), free(ref), free(absab);
}

int main(void)
{
    check_moduli();
    check_exact(0);
    check_class("uniform", 1);
    check_class("normal", 1);
    check_class("cancel", 1);
    check_class("rows", 1);
    check_class("wide", 0);
    check_class("denormal", 0);
    const char *guarded[] = {"uniform", "normal", "cancel", "rows", "wide", "denormal", "peaked"};
    for (int i = 0; i < 7; i++) check_guard(guarded[i], 1024, 0, 8);
    check_guard("pairs", 2, 0, 8);

    check_exact(1);
    const char *classes_d[] = {"uniform", "normal", "cancel", "rows", "wide", "denormal"};
    for (int i = 0; i < 6; i++) check_class_d(classes_d[i], 1024, 14, i < 4);
    check_class_d("uniform", 8192, 15, 1);
    check_class_d("normal", 8192, 15, 1);
    check_class_d("wide", 8192, 15, 0);
    const char *guarded_d[] = {"uniform", "normal", "cancel", "rows", "wide", "denormal", "peaked", "pairs"};
    for (int i = 0; i < 8; i++) check_guard(guarded_d[i], 1024, 1, 15);
    check_guard("pairs", 16, 1, 15);
    const char *deep_d[] = {"uniform", "normal", "wide"};
    for (int i = 0; i < 3; i++) check_guard(deep_d[i], 8192, 1, 15);
    printf("%s\n", fails ? "FAILED" : "all passed");
    return fails != 0;
}
