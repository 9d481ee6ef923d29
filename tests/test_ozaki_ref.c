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
        for (int64_t i = 0; i < m; i++) {
            const int s = (int)(uniform() * 30.5);
            for (int64_t p = 0; p < k; p++) a[i + p * m] = ldexpf(a[i + p * m], s);
        }
        for (int64_t j = 0; j < n; j++) {
            const int s = (int)(uniform() * 30.5);
            for (int64_t p = 0; p < k; p++) b[p + j * k] = ldexpf(b[p + j * k], s);
        }
    }
}

static int cmp_double(const void *x, const void *y)
{
    const double u = *(const double *)x, v = *(const double *)y;
    return (u > v) - (u < v);
}

/* Componentwise errors |c - ref| / (|A||B|) of a float result: their max and median. */
static void comp_errors(int64_t m, int64_t n, const float *c, const long double *ref, const long double *absab,
                        double *max, double *median)
{
    double *e = malloc(sizeof(double) * (size_t)(m * n));
    int64_t cnt = 0;
    for (int64_t q = 0; q < m * n; q++)
        if (absab[q] > 0) e[cnt++] = (double)(fabsl((long double)c[q] - ref[q]) / absab[q]);
    qsort(e, (size_t)cnt, sizeof(double), cmp_double);
    *max = cnt ? e[cnt - 1] : 0, *median = cnt ? e[cnt / 2] : 0;
    free(e);
}

/* Each entry of A B: in long double (ref), its sum of magnitudes (absab), and summed in float
 * with FMA, as the SIMT kernels do (fma). */
static void reference(int64_t m, int64_t n, int64_t k, const float *a, const float *b, long double *ref,
                      long double *absab, float *fma)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            long double s = 0, sa = 0;
            float f = 0;
            for (int64_t p = 0; p < k; p++) {
                s += (long double)a[i + p * m] * b[p + j * k];
                sa += fabsl((long double)a[i + p * m] * b[p + j * k]);
                f = fmaf(a[i + p * m], b[p + j * k], f);
            }
            ref[i + j * m] = s, absab[i + j * m] = sa, fma[i + j * m] = f;
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
            __int128 M = 1;
            for (int l = 0; l < t; l++) M *= fg_ozaki_moduli[l];
            if (beta < 1) continue;
            beta_ok &= ((__int128)(2 * k) << (2 * beta)) < M && ((__int128)(2 * k) << (2 * beta + 2)) >= M;
        }
    check("beta: the largest with 2k 2^(2 beta) < M, for t = 2..12 and k up to 2^17", beta_ok);
    check("beta: 8 moduli at k = 1024 give 26 bits", fg_ozaki_beta(8, 1024) == 26);
    double d, ua, ub;
    const float one = 1;
    check("k of 2^17 refused (int32 sums)", fg_ozaki_gemm(1, 1, 1 << 17, &one, 1, &one, 1 << 17, 8, &d, 1, &ua, &ub) == -1);
}

/* Integers up to 2^20: the scheme must return the exact product, rounded once to double. */
static void check_exact(void)
{
    const int64_t m = 17, n = 13, k = 300;
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
    double *d = malloc(sizeof(double) * m * n), ua[17], ub[13];
    for (int64_t q = 0; q < m * k; q++) a[q] = (float)(int64_t)(uniform() * 1048576.0);
    for (int64_t q = 0; q < k * n; q++) b[q] = (float)(int64_t)(uniform() * 1048576.0);
    a[0] = 1048575.f, b[0] = -1048575.f; /* the largest magnitudes */
    for (int64_t p = 0; p < k; p++) a[3 + p * m] = 0, b[p + 5 * k] = 0; /* A's row 3, B's column 5 */
    int exact = fg_ozaki_gemm(m, n, k, a, m, b, k, 8, d, m, ua, ub) == 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            __int128 s = 0;
            for (int64_t p = 0; p < k; p++) s += (__int128)(int64_t)a[i + p * m] * (int64_t)b[p + j * k];
            exact &= d[i + j * m] == (double)s;
        }
    check("integers up to 2^20, 17x13x300, 8 moduli: the exact product", exact);
    check("a row of zeros and a column of zeros: unit 0", ua[3] == 0 && ub[5] == 0 && ua[0] > 0);
    free(a), free(b), free(d);
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
    reference(m, n, k, a, b, ref, absab, cs);
    double smax, smed;
    comp_errors(m, n, cs, ref, absab, &smax, &smed);
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
        comp_errors(m, n, co, ref, absab, &omax, &omed);
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

/* The guard on one class (make's, or "pairs" and "peaked"), 8 moduli. */
static void check_guard(const char *cls, int64_t k)
{
    const int64_t m = 48, n = 40;
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n), *c = malloc(sizeof(float) * m * n);
    double *d = malloc(sizeof(double) * m * n), ua[48], ub[40];
    unsigned char *ok = malloc((size_t)(m * n));
    long double *ref = malloc(sizeof(long double) * m * n), *absab = malloc(sizeof(long double) * m * n);
    make(!strcmp(cls, "pairs") || !strcmp(cls, "peaked") ? "uniform" : cls, m, n, k, a, b);
    if (!strcmp(cls, "pairs")) /* row i: (x, 2^-11 y); column j: (2^-11 z, w) */
        for (int64_t q = 0; q < m; q++) a[q + m] = ldexpf(a[q + m], -11);
    if (!strcmp(cls, "pairs"))
        for (int64_t j = 0; j < n; j++) b[j * k] = ldexpf(b[j * k], -11);
    if (!strcmp(cls, "peaked")) {
        for (int64_t i = 0; i < m; i++) a[i] = a[i] < 0 ? -1e6f : 1e6f;
        for (int64_t j = 0; j < n; j++) b[j * k] *= 1e-6f;
    }
    const int64_t certified = fg_ozaki_certify(m, n, k, a, m, b, k, 8, ok);
    int sound = certified >= 0 && fg_ozaki_gemm(m, n, k, a, m, b, k, 8, d, m, ua, ub) == 0, within = 1;
    reference(m, n, k, a, b, ref, absab, c);
    for (int64_t q = 0; q < m * n; q++) {
        const long double ref_err = 1.01L * k * 0x1p-64L * absab[q]; /* the long double sum's own */
        if (ok[q]) sound &= fabsl((long double)d[q] - ref[q]) <= k * 0x1p-24L * absab[q] + ref_err;
        if (ok[q]) c[q] = (float)d[q]; /* else the float sum stays */
        within &= fabsl((long double)c[q] - ref[q]) <= 2.0L * (k + 2) * 0x1p-23L * absab[q] + ref_err;
    }
    printf("%-8s k=%4lld: %lld of %lld entries certified\n", cls, (long long)k, (long long)certified,
           (long long)(m * n));
    char what[128];
    snprintf(what, sizeof what, "guard, %s: every certified entry within k u (|A||B|)", cls);
    check(what, sound);
    snprintf(what, sizeof what, "guard, %s: the result within test_gemm's tolerance everywhere", cls);
    check(what, within);
    free(a), free(b), free(c), free(d), free(ok), free(ref), free(absab);
}

int main(void)
{
    check_moduli();
    check_exact();
    check_class("uniform", 1);
    check_class("normal", 1);
    check_class("cancel", 1);
    check_class("rows", 1);
    check_class("wide", 0);
    check_class("denormal", 0);
    const char *guarded[] = {"uniform", "normal", "cancel", "rows", "wide", "denormal", "peaked"};
    for (int i = 0; i < 7; i++) check_guard(guarded[i], 1024);
    check_guard("pairs", 2);
    printf("%s\n", fails ? "FAILED" : "all passed");
    return fails != 0;
}
