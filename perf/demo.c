/* demo.c: the README's main job. Runs sgemm_ and dgemm_ on ordinary host matrices through
 * libfastgemm, as a drop-in user would, and prints for each call which backend ran it and its
 * rate; spot-checks entries of C against a sum in long double. Usage: fastgemm-demo [n ...] */
#include "tools/cli.h"

#include <fastgemm.h>

#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *, size_t, size_t);
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *, size_t, size_t);

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Max relative error of 16 entries of C = A*B, each against a long double dot product. */
#define SPOT_CHECK(T, a, b, c, n)                                                              \
    ({                                                                                         \
        double worst = 0;                                                                      \
        for (int s = 0; s < 16; s++) {                                                         \
            long i = (s * 7919L) % n, j = (s * 104729L) % n;                                   \
            long double ref = 0, mag = 0;                                                      \
            for (long p = 0; p < n; p++) {                                                     \
                ref += (long double)a[i + p * n] * b[p + j * n];                               \
                mag += fabsl((long double)a[i + p * n] * b[p + j * n]);                        \
            }                                                                                  \
            double e = (double)(fabsl((long double)c[i + j * n] - ref) / (mag > 0 ? mag : 1)); \
            if (!(e <= worst)) worst = e; /* NaN propagates */                                 \
        }                                                                                      \
        worst;                                                                                 \
    })

#define RUN(T, GEMM, NAME, EPS)                                                                \
    do {                                                                                       \
        T *a = malloc(sizeof(T) * nn), *b = malloc(sizeof(T) * nn), *c = malloc(sizeof(T) * nn); \
        if (!a || !b || !c) {                                                                  \
            fprintf(stderr, "out of memory at n=%d\n", n);                                     \
            return 1;                                                                          \
        }                                                                                      \
        for (size_t i = 0; i < nn; i++) {                                                      \
            a[i] = (T)(rand() / (double)RAND_MAX - 0.5);                                       \
            b[i] = (T)(rand() / (double)RAND_MAX - 0.5);                                       \
            c[i] = (T)NAN; /* beta = 0: never read */                                          \
        }                                                                                      \
        T one = 1, zero = 0;                                                                   \
        double best = 1e30;                                                                    \
        for (int rep = 0; rep < 3; rep++) { /* the first call also pays for CUDA start-up */   \
            double t0 = now_s();                                                               \
            GEMM("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);                \
            double dt = now_s() - t0;                                                          \
            if (dt < best) best = dt;                                                          \
        }                                                                                      \
        double err = SPOT_CHECK(T, a, b, c, n);                                                \
        int ok = err <= (EPS); /* the worst-case bound n*eps */                                                             \
        failures += !ok;                                                                       \
        printf("%-7s n=%-6d backend=%-13s %9.3f ms %9.1f GFLOP/s  max rel err %.1e %s\n",      \
               NAME, n, fastgemm_backend_name(fastgemm_last_backend()), best * 1e3,            \
               2.0 * n * n * (double)n / best * 1e-9, err, ok ? "ok" : "WRONG");               \
        free(a);                                                                               \
        free(b);                                                                               \
        free(c);                                                                               \
    } while (0)

#define PROG "fastgemm-demo"

static int help(void)
{
    printf("Usage: " PROG " [n ...]\n"
           "Runs C = A*B with sgemm_ and dgemm_ on n x n matrices in host memory through\n"
           "libfastgemm, as a program that calls the BLAS would, for each size n (default\n"
           "256 1024 2048 4096): the best of 3 calls, which backend ran it (cpu, gpu,\n"
           "cpu-fallback, omp), its time and GFLOP/s, and 16 entries of C checked against sums\n"
           "in long double.\n"
           "\n"
           "  -h, --help     print this help and exit\n"
           "  -V, --version  print the version and exit\n"
           "\n"
           "Environment (all of libfastgemm's settings apply; see its README):\n"
           "  FASTGEMM_MODE     auto (the cost model picks CPU or GPU), gpu or cpu\n"
           "  FASTGEMM_TRACE    1: a line per GEMM on stderr; a path: appended to that file\n"
           "  FASTGEMM_BACKEND  the GPU side: cuda or omp\n"
           "  FASTGEMM_DEVICE   the CUDA device of the calls\n"
           "\n"
           "Exit status: 0 every result right, 1 a wrong result or out of memory, 2 a bad\n"
           "command line.\n");
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {{"help", no_argument, 0, 'h'},
                                            {"version", no_argument, 0, 'V'},
                                            {0, 0, 0, 0}};
    opterr = 0; /* fg_cli_option_error says it in one line */
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, fastgemm_version());
        default: /* -5 is a size, though not a valid one */
            if (isdigit((unsigned char)argv[at][1])) {
                long long n;
                fg_cli_number(PROG, "size", argv[at], 1, INT_MAX, &n);
                return 2;
            }
            return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    /* Every size is checked before the first GEMM. */
    int default_sizes[] = {256, 1024, 2048, 4096}, *sizes = default_sizes, count = 4, failures = 0;
    if (optind < argc) {
        count = argc - optind;
        sizes = malloc(sizeof *sizes * (size_t)count);
        if (!sizes) return 1;
        for (int i = 0; i < count; i++) {
            long long n;
            if (fg_cli_number(PROG, "size", argv[optind + i], 1, INT_MAX, &n)) return 2;
            sizes[i] = (int)n;
        }
    }
    printf("libfastgemm %s: C = A*B, n x n, host matrices, best of 3 calls\n", fastgemm_version());
    for (int s = 0; s < count; s++) {
        int n = sizes[s];
        size_t nn = (size_t)n * n;
        RUN(float, sgemm_, "sgemm_", 6e-8 * n);
        RUN(double, dgemm_, "dgemm_", 1.2e-16 * n);
    }
    if (sizes != default_sizes) free(sizes);
    return failures ? 1 : 0;
}
