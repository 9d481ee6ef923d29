/* hostbench.c: wall time of sgemm_/dgemm_ on matrices in pageable host memory (the LD_PRELOAD
 * user's case) for any BLAS libraries: libfastgemm (in auto or gpu mode), NVBLAS
 * (NVBLAS_CONFIG_FILE set), OpenBLAS. perf/run_hostbench.sh runs the four in one process
 * and writes the CSV.
 *
 *   fastgemm-hostbench [--lib-env VAR=VALUE] --lib [LABEL=]PATH[@MODE] [--lib ...] [--label NAME]
 *                      [--prec s|d|sd] [--shapes all|square|LIST] [--max-n N] [--min-time S]
 *                      [--rounds R] [--align BYTES]
 *
 * Each --lib is loaded privately (RTLD_LOCAL); @MODE (auto, gpu, cpu) sets a libfastgemm's mode
 * with fastgemm_set_mode before each of its calls. --lib-env (up to four before one --lib) sets
 * VAR only while the next --lib is loaded and its mode first set, which is when libfastgemm reads its settings: a second
 * copy of libfastgemm (another file: dlopen shares one path's instance) can so run with other
 * settings in the same process, e.g. FASTGEMM_LEARN=1 against the default. --label names a
 * single --lib without LABEL=.
 * With several libraries, every shape's calls are interleaved: after one untimed call of each
 * (checked at 64 random entries of C against dot products in long double), R rounds (default:
 * three times as many as libraries, six times for an odd count) in which each library in turn
 * makes its share of the timed calls. So the host's drifts, which move copy-bound calls by tens
 * of percent from one minute to the next, fall on all of them alike. (With one pass of the
 * square, 4 rounds for 4 libraries, the auto and forced-GPU columns, the same code at most GPU
 * points, still differed by more than 5% at 4-7 of 36 points in each H100 run; perf/NOTES.md.)
 * The orders of the rounds form a balanced Latin square (Williams): over each pass of it every
 * library comes at each place once and right after each other library once, so none follows
 * OpenBLAS (or NVBLAS) more often than another. (With an order that only rotated, the auto
 * column came after OpenBLAS in every round but one and after the first untimed calls, and took
 * 5-15% longer than the forced-GPU column at some shapes where both ran the same code.)
 * Between two libraries the process sleeps 0.25 s: OpenBLAS's threads spin for 2^28 cycles
 * (~0.1 s) after a call, and take the cores from whatever runs next (with 0.1 s, libfastgemm in
 * auto mode, which came after OpenBLAS in three rounds of four, ran its GPU calls up to 2.2x
 * slower than the forced-GPU column). After the pause, a share of calls under 0.1 s starts
 * with one more untimed call: the first call after a sleep wakes the BLAS's threads (0.1 ms for
 * OpenBLAS at n = 128 on the build machine), which a program calling in a loop does not pay,
 * and which a share of 1-2 calls would count often.
 * A library makes as many timed calls as fill --min-time seconds (default 1), at least 3 and
 * at most 20 (or as many as fill 0.5 s, at most 50000, when calls are shorter than 25 ms), or
 * a single one when its untimed call took over 2 s; the count comes from the fastest of the
 * untimed calls: three, or as many as fill 20 ms after the first (at most 200). A library's
 * first calls on a shape can be slow (libfastgemm probes the GPU and reads its profile at the
 * first call that needs them), and with three of them at 6 ms one H100 run gave auto 83 calls
 * of sgemm_ 128, 7 a share, where OpenBLAS made 15612 (perf/NOTES.md). With 20 ms of untimed
 * calls, the learning copy of a later run still had all of them at 5.5 ms or more at sgemm_ 320
 * (90 calls; its median 0.195 ms). So a share whose median call takes under half the untimed
 * calls' best sets the count again from that median, for the rounds left.
 * The median goes to stdout as a CSV row: label,prec,m,n,k,ms,gflops,max_rel_err,p25_ms,
 * p75_ms,calls (the quartiles show a spread the median hides). A wrong result prints FAIL and
 * exits 1.
 * The matrices are aligned to --align bytes (default 4096; 0: plain malloc). With malloc their
 * placement depends on the process's heap history (what each library allocated before, glibc's
 * moving mmap threshold), and OpenBLAS's time at n = 128-256 with it: up to 1.6x between two
 * processes calling the same OpenBLAS on the same sizes (perf/NOTES.md). */
#define _GNU_SOURCE
#include "../cpu_ref/ref.h"
#include "tools/cli.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef ref_sgemm_fn sgemm_fn;
typedef ref_dgemm_fn dgemm_fn;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static double urand(void) /* [-1, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* A matrix: malloc'd (align 0), or aligned to `align` bytes (a power of two). */
static void *host_alloc(size_t bytes, size_t align)
{
    void *p = NULL;
    if (!align) return malloc(bytes);
    return posix_memalign(&p, align, bytes) ? NULL : p;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The q-quantile of n sorted values, interpolated between neighbours (q = 0.5: the median). */
static double quantile(const double *v, int n, double q)
{
    const double x = q * (n - 1);
    const int i = (int)x;
    return i + 1 < n ? v[i] + (x - i) * (v[i + 1] - v[i]) : v[n - 1];
}

typedef struct { long m, n, k; } shape_t;

/* The most timed calls of one library on one shape (calls under 25 ms make more than 20). */
#define MAX_CALLS 50000

typedef struct {
    const char *label, *mode;
    sgemm_fn sg;
    dgemm_fn dg;
    int (*set_mode)(const char *);
    double first, worst, times[MAX_CALLS];
    int want, reps;
} lib_t;

/* The timed calls of a library whose fastest call takes L->first (never fewer than planned
 * before): as many as fill min_time seconds, at least 3, or one above 2 s; at most 20, or as
 * many as fill 0.5 s. With 20 calls of 10-100 us (5 a round, each round after a 0.25 s pause)
 * the medians of libraries that ran the same OpenBLAS code differed by 10-20%, and with 50 ms
 * of them still by 5-8% at n = 64-256 on the H100 host (perf/NOTES.md). */
static void plan_calls(lib_t *L, double min_time)
{
    int want = L->first > 2.0 ? 1 : L->first * 3 >= min_time ? 3 : (int)(min_time / L->first);
    int most = L->first * 20 >= 0.5 ? 20 : (int)(0.5 / L->first);
    if (most > MAX_CALLS) most = MAX_CALLS;
    if (want > most) want = most;
    if (want > L->want) L->want = want;
}

/* --lib [LABEL=]PATH[@MODE] */
static int load_lib_now(lib_t *l, char *spec, const char *label)
{
    char *eq = strchr(spec, '='), *at = strrchr(spec, '@');
    l->label = label;
    if (eq) *eq = 0, l->label = spec, spec = eq + 1;
    l->mode = NULL;
    if (at && at > spec) *at = 0, l->mode = at + 1;
    void *h = dlopen(spec, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "hostbench: %s\n", dlerror());
        return -1;
    }
    l->sg = (sgemm_fn)dlsym(h, "sgemm_");
    l->dg = (dgemm_fn)dlsym(h, "dgemm_");
    *(void **)&l->set_mode = dlsym(h, "fastgemm_set_mode");
    if (!l->sg || !l->dg || (l->mode && !l->set_mode)) {
        fprintf(stderr, "hostbench: %s has no sgemm_/dgemm_%s\n", spec, l->mode ? " or fastgemm_set_mode" : "");
        return -1;
    }
    if (l->mode && l->set_mode(l->mode) != 0) {
        fprintf(stderr, "hostbench: mode %s refused\n", l->mode);
        return -1;
    }
    return 0;
}

/* --lib [LABEL=]PATH[@MODE], with env[0..nenv) (VAR=VALUE) set while it loads */
static int load_lib(lib_t *l, char *spec, const char *label, char **env, int nenv)
{
    char *old[4] = {NULL};
    for (int e = 0; e < nenv; e++) {
        char *eqv = strchr(env[e], '=');
        *eqv = 0;
        if (getenv(env[e])) old[e] = strdup(getenv(env[e]));
        setenv(env[e], eqv + 1, 1);
        *eqv = '=';
    }
    const int rc = load_lib_now(l, spec, label);
    for (int e = nenv - 1; e >= 0; e--) { /* as it was for the other libraries */
        char *eqv = strchr(env[e], '=');
        *eqv = 0;
        old[e] ? setenv(env[e], old[e], 1) : unsetenv(env[e]);
        free(old[e]);
        *eqv = '=';
    }
    return rc;
}

static void sleep_s(double s)
{
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}

#define PROG "fastgemm-hostbench"

static int help(void)
{
    printf("Usage: " PROG " [--lib-env VAR=VALUE] --lib [LABEL=]PATH[@MODE] [--lib ...] [OPTION...]\n"
           "Wall time of sgemm_/dgemm_ on matrices in pageable host memory through up to 8 BLAS\n"
           "libraries in one process (libfastgemm, NVBLAS with NVBLAS_CONFIG_FILE, OpenBLAS),\n"
           "their calls interleaved shape by shape in rounds of a balanced Latin square, after a\n"
           "checked untimed call of each. CSV rows on stdout: label,prec,m,n,k,ms,gflops,\n"
           "max_rel_err,p25_ms,p75_ms,calls (medians); a wrong result prints FAIL and exits 1.\n"
           "perf/run_hostbench.sh runs the README's four libraries.\n"
           "\n"
           "      --lib [LABEL=]PATH[@MODE]  a library, loaded privately; @MODE (auto, gpu, cpu)\n"
           "                   sets a libfastgemm's mode before each of its calls\n"
           "      --lib-env VAR=VALUE  VAR set while the next --lib is loaded and its mode first\n"
           "                   set (a second copy of libfastgemm with other settings); up to 4\n"
           "      --label NAME the label of a single --lib without LABEL= (default lib)\n"
           "      --prec s|d|sd  the precisions (default sd)\n"
           "      --shapes all|square|MxNxK,...  the problems (default all)\n"
           "      --max-n N    skip problems with m or n above N, or k above 4N (default 16384)\n"
           "      --min-time S each library's timed calls fill S seconds a shape (default 1)\n"
           "      --rounds R   rounds a shape (default 0: three passes of the square)\n"
           "      --align BYTES  the matrices' alignment, a power of two (default 4096; 0: malloc)\n"
           "  -h, --help       print this help and exit\n"
           "  -V, --version    print the version and exit\n"
           "\n"
           "Environment: each libfastgemm's settings (FASTGEMM_*; see --lib-env), NVBLAS_CONFIG_FILE.\n");
    return 0;
}

int main(int argc, char **argv)
{
    enum { LIB = 256, LIB_ENV, LABEL, PREC, SHAPES, MAX_N, MIN_TIME, ROUNDS, ALIGN };
    static const struct option options[] = {
        {"lib", required_argument, 0, LIB},           {"lib-env", required_argument, 0, LIB_ENV},
        {"label", required_argument, 0, LABEL},       {"prec", required_argument, 0, PREC},
        {"shapes", required_argument, 0, SHAPES},     {"max-n", required_argument, 0, MAX_N},
        {"min-time", required_argument, 0, MIN_TIME}, {"rounds", required_argument, 0, ROUNDS},
        {"align", required_argument, 0, ALIGN},       {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},             {0, 0, 0, 0}};
    const char *prec = "sd", *which = "all", *label = "lib";
    char *specs[8], *envs[8][4], *next_env[4];
    int nlib = 0, rounds = 0, nenvs[8] = {0}, nnext = 0;
    long max_n = 16384;
    double min_time = 1.0;
    size_t align = 4096;
    long long v;
    opterr = 0; /* fg_cli_option_error says it in one line */
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case LIB:
            if (nlib == 8) return fg_cli_usage_error(PROG, "at most 8 --lib");
            for (int e = 0; e < nnext; e++) envs[nlib][e] = next_env[e];
            nenvs[nlib] = nnext, nnext = 0;
            specs[nlib++] = optarg;
            break;
        case LIB_ENV:
            if (!strchr(optarg, '=') || nnext == 4)
                return fg_cli_usage_error(PROG, "--lib-env %s: VAR=VALUE, at most 4 before one --lib", optarg);
            next_env[nnext++] = optarg;
            break;
        case LABEL: label = optarg; break;
        case PREC: prec = optarg; break;
        case SHAPES: which = optarg; break;
        case MAX_N:
            if (fg_cli_number(PROG, "--max-n", optarg, 1, LONG_MAX, &v)) return 2;
            max_n = (long)v;
            break;
        case MIN_TIME:
            if (fg_cli_real(PROG, "--min-time", optarg, 0, 1e6, &min_time)) return 2;
            break;
        case ROUNDS:
            if (fg_cli_number(PROG, "--rounds", optarg, 0, 1000000, &v)) return 2;
            rounds = (int)v;
            break;
        case ALIGN:
            if (fg_cli_number(PROG, "--align", optarg, 0, 1 << 30, &v)) return 2;
            if (v && ((v & (v - 1)) || v < (long long)sizeof(void *))) /* posix_memalign's rule */
                return fg_cli_usage_error(PROG, "--align %s is neither 0 nor a power of two from %zu",
                                          optarg, sizeof(void *));
            align = (size_t)v;
            break;
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, FASTGEMM_VERSION_STRING);
        default: return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    if (optind < argc) return fg_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    if (!nlib) return fg_cli_usage_error(PROG, "no --lib");
    static lib_t libs[8]; /* 400 KB of times each */
    for (int l = 0; l < nlib; l++)
        if (load_lib(&libs[l], specs[l], label, envs[l], nenvs[l]) != 0) return 2;
    /* The rounds' orders: row r of a Williams square, the first row 0, 1, n-1, 2, n-2, ... and
     * row r that plus r (mod n); for odd n, rows n..2n-1 are the first n reversed. */
    int nrows = nlib % 2 ? 2 * nlib : nlib, order[16][8];
    for (int r = 0; r < nrows; r++)
        for (int q = 0; q < nlib; q++) {
            const int pos = r < nlib ? q : nlib - 1 - q;
            const int first = pos % 2 ? (pos + 1) / 2 : (nlib - pos / 2) % nlib;
            order[r][q] = (first + r) % nlib;
        }
    if (rounds < 1) rounds = 3 * nrows; /* three passes of the square */

    shape_t shapes[64];
    int ns = 0;
    if (!strcmp(which, "all") || !strcmp(which, "square")) {
        static const long sq[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384};
        for (size_t i = 0; i < sizeof sq / sizeof *sq; i++) shapes[ns++] = (shape_t){sq[i], sq[i], sq[i]};
        if (!strcmp(which, "all")) {
            static const shape_t irr[] = {{4095, 4095, 4095}, {1000, 1000, 1000}, {8192, 8192, 128},
                                          {8192, 128, 8192},  {128, 8192, 8192},  {16384, 16384, 1024},
                                          {2048, 2048, 32768}, {3000, 5000, 700}};
            for (size_t i = 0; i < sizeof irr / sizeof *irr; i++) shapes[ns++] = irr[i];
        }
    } else {
        for (char *s = strdup(which), *tok = strtok(s, ","); tok && ns < 64; tok = strtok(NULL, ","))
            if (sscanf(tok, "%ldx%ldx%ld", &shapes[ns].m, &shapes[ns].n, &shapes[ns].k) == 3) ns++;
    }

    int bad = 0;
    for (const char *p = prec; *p; p++) {
        const int dbl = *p == 'd';
        const size_t es = dbl ? 8 : 4;
        for (int si = 0; si < ns; si++) {
            shape_t s = shapes[si];
            if (s.m > max_n || s.n > max_n || s.k > 4 * max_n) continue;
            char *a = host_alloc(es * s.m * s.k, align), *b = host_alloc(es * s.k * s.n, align),
                 *c = host_alloc(es * s.m * s.n, align);
            if (!a || !b || !c) {
                fprintf(stderr, "hostbench: out of memory at %ldx%ldx%ld\n", s.m, s.n, s.k);
                return 2;
            }
            for (long i = 0; i < s.m * s.k; i++) dbl ? (((double *)a)[i] = urand()) : (((float *)a)[i] = (float)urand());
            for (long i = 0; i < s.k * s.n; i++) dbl ? (((double *)b)[i] = urand()) : (((float *)b)[i] = (float)urand());
            const int m = (int)s.m, n = (int)s.n, k = (int)s.k;
            const float one_f = 1, zero_f = 0;
            const double one_d = 1, zero_d = 0;
            /* One call of library L; its wall time. */
#define CALL(L)                                                                                  \
    ((L)->mode ? (void)(L)->set_mode((L)->mode) : (void)0, t0 = now_s(),                         \
     dbl ? (L)->dg("N", "N", &m, &n, &k, &one_d, (double *)a, &m, (double *)b, &k, &zero_d,      \
                   (double *)c, &m, 1, 1)                                                        \
         : (L)->sg("N", "N", &m, &n, &k, &one_f, (float *)a, &m, (float *)b, &k, &zero_f,        \
                   (float *)c, &m, 1, 1),                                                        \
     now_s() - t0)
            double t0;
            for (int li = 0; li < nlib; li++) {
                lib_t *L = &libs[li];
                memset(c, 0, es * s.m * s.n);
                if (li) sleep_s(0.25);
                L->first = CALL(L);
                double spent = 0;
                for (int w = 0; L->first <= 2.0 && (w < 2 || (spent < 0.02 && w < 200)); w++) {
                    const double t = CALL(L);
                    spent += t;
                    if (t < L->first) L->first = t;
                }
                /* Check 64 entries against long-double dot products. */
                L->worst = 0;
                for (int t = 0; t < 64; t++) {
                    long i = (long)((urand() + 1) / 2 * s.m) % s.m, j = (long)((urand() + 1) / 2 * s.n) % s.n;
                    long double ref = 0, mag = 0;
                    for (long l = 0; l < s.k; l++) {
                        long double x = dbl ? ((double *)a)[i + l * s.m] : ((float *)a)[i + l * s.m];
                        long double y = dbl ? ((double *)b)[l + j * s.k] : ((float *)b)[l + j * s.k];
                        ref += x * y;
                        mag += fabsl(x * y);
                    }
                    double got = dbl ? ((double *)c)[i + j * s.m] : ((float *)c)[i + j * s.m];
                    double e = (double)(fabsl(got - ref) / (mag > 0 ? mag : 1));
                    if (!(e <= L->worst)) L->worst = e;
                }
                const double bound = 2 * (s.k + 2) * (dbl ? 1.1e-16 : 6e-8);
                if (!(L->worst <= bound)) {
                    printf("FAIL %s %cgemm %ldx%ldx%ld: relative error %.2e > %.2e\n", L->label, *p, s.m, s.n,
                           s.k, L->worst, bound);
                    bad = 1;
                }
                L->want = 0;
                plan_calls(L, min_time);
                L->reps = 0;
            }
            /* The timed calls: rounds of each library's share, in the orders of the square. */
            for (int r = 0; r < rounds; r++)
                for (int q = 0; q < nlib; q++) {
                    lib_t *L = &libs[order[r % nrows][q]];
                    const int upto = L->want * (r + 1) / rounds;
                    if (L->reps >= upto) continue;
                    if (nlib > 1) {
                        sleep_s(0.25);
                        if (L->first < 0.1) (void)CALL(L); /* wakes the threads, untimed */
                    }
                    const int from = L->reps;
                    while (L->reps < upto) L->times[L->reps++] = CALL(L);
                    /* A share's median under half the untimed calls' best: those were slow (the
                     * first calls on a shape), and the count comes from it for the rounds left. */
                    static double share[MAX_CALLS];
                    const int got = L->reps - from;
                    if (!got) continue;
                    memcpy(share, L->times + from, sizeof *share * (size_t)got);
                    qsort(share, (size_t)got, sizeof *share, cmp);
                    const double med = quantile(share, got, 0.5);
                    if (med < 0.5 * L->first) L->first = med, plan_calls(L, min_time);
                }
#undef CALL
            for (int li = 0; li < nlib; li++) {
                lib_t *L = &libs[li];
                qsort(L->times, L->reps, sizeof *L->times, cmp);
                const double med = quantile(L->times, L->reps, 0.5),
                             q1 = quantile(L->times, L->reps, 0.25),
                             q3 = quantile(L->times, L->reps, 0.75);
                printf("%s,%c,%ld,%ld,%ld,%.4f,%.1f,%.2e,%.4f,%.4f,%d\n", L->label, *p, s.m, s.n,
                       s.k, med * 1e3, 2.0 * s.m * s.n * s.k / med * 1e-9, L->worst, q1 * 1e3,
                       q3 * 1e3, L->reps);
            }
            fflush(stdout);
            free(a), free(b), free(c);
        }
    }
    return bad;
}
