/* coldstart.c: a one-off program of the kind issue 52 times from its start to its end: it
 * loads a BLAS (the file COLDSTART_BLAS names, as a program linked with it would have it),
 * fills two n x n host matrices, makes CALLS sgemm_ calls of n^3 with them (alpha changes from
 * call to call), checks an entry of each C against a sum in double, prints each call's time and
 * main's, and exits. Run alone it measures that BLAS; with LD_PRELOAD=libfastgemm.so,
 * libfastgemm with its cold start (perf/run_coldstart.sh times whole processes).
 * With COLDSTART_LAUNCH_NS (the launcher's `date +%s%N`) it also prints when main began and
 * returned, for the time before and after it.
 * Usage: COLDSTART_BLAS=/path/libopenblas.so.0 fastgemm-coldstart N CALLS */
#define _GNU_SOURCE
#include "tools/cli.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                         const float *, const float *, const int *, const float *, const int *,
                         const float *, float *, const int *, size_t, size_t);

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* Milliseconds since COLDSTART_LAUNCH_NS (the launcher's CLOCK_REALTIME in ns, as `date +%s%N`
 * gives it), or a negative number where it is not set. */
static double since_launch_ms(void)
{
    const char *t0 = getenv("COLDSTART_LAUNCH_NS");
    if (!t0) return -1;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec - 1e-6 * strtod(t0, NULL);
}

#define PROG "fastgemm-coldstart"

static int help(void)
{
    printf("Usage: " PROG " N CALLS  (with COLDSTART_BLAS=LIB in the environment)\n"
           "A one-off program for timing whole processes (perf/run_coldstart.sh): loads the BLAS\n"
           "library LIB (a path for dlopen, e.g. the system's libopenblas.so.0) as a program linked\n"
           "with it would have it, makes CALLS sgemm_ calls of N^3 on host matrices, checks an entry\n"
           "of each C, and prints each call's time and main's. Run it with LD_PRELOAD=libfastgemm.so to\n"
           "time libfastgemm's cold start over that BLAS. With COLDSTART_LAUNCH_NS (the launcher's\n"
           "`date +%%s%%N`) it also prints when main began and returned.\n"
           "\n"
           "  -h, --help     print this help and exit\n"
           "  -V, --version  print the version and exit\n");
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, 'V'}, {0, 0, 0, 0}};
    opterr = 0;
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        if (c == 'h') return help();
        if (c == 'V') return fg_cli_version(PROG, FASTGEMM_VERSION_STRING);
        return fg_cli_option_error(PROG, c, argv[at]);
    }
    const double entered = since_launch_ms(); /* exec, the loader, libraries' constructors */
    const char *lib = getenv("COLDSTART_BLAS");
    if (argc - optind != 2) return fg_cli_usage_error(PROG, "N and CALLS are needed");
    if (!lib) return fg_cli_usage_error(PROG, "COLDSTART_BLAS names no BLAS library");
    long long n64, calls64;
    if (fg_cli_number(PROG, "N", argv[optind], 1, 65536, &n64) ||
        fg_cli_number(PROG, "CALLS", argv[optind + 1], 1, 65536, &calls64))
        return 2;
    const int n = (int)n64, calls = (int)calls64;
    if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "fastgemm-coldstart: %s\n", dlerror());
        return 1;
    }
    sgemm_fn sgemm = (sgemm_fn)dlsym(RTLD_DEFAULT, "sgemm_"); /* libfastgemm's when preloaded */
    const size_t count = (size_t)n * (size_t)n;
    float *a = malloc(count * sizeof(float)), *b = malloc(count * sizeof(float)),
          *c = malloc(count * sizeof(float));
    if (!sgemm || !a || !b || !c) return 1;
    const double t_main = now_ms();
    uint32_t x = 12345; /* a quick generator: filling must not dominate the process */
    for (size_t i = 0; i < count; i++) {
        a[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) * 0x1p-24f;
        b[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) * 0x1p-24f;
    }
    const float zero = 0;
    int bad = 0;
    for (int call = 0; call < calls; call++) {
        const float alpha = 1.0f + 0.125f * (float)call;
        const double t = now_ms();
        sgemm("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &zero, c, &n, 1, 1);
        const double dt = now_ms() - t;
        const int i = (call * 7919) % n, j = (call * 104729) % n;
        double ref = 0, mag = 0;
        for (int p = 0; p < n; p++) {
            ref += (double)a[i + (size_t)p * n] * b[p + (size_t)j * n];
            mag += fabs((double)a[i + (size_t)p * n] * b[p + (size_t)j * n]);
        }
        ref *= alpha;
        const int ok = fabs(c[i + (size_t)j * n] - ref) <= 1e-5 * alpha * n * (mag > 0 ? mag / n : 1);
        bad += !ok;
        printf("call %d: %.1f ms%s\n", call + 1, dt, ok ? "" : " WRONG");
    }
    printf("main: %.1f ms from the first fill to the last check\n", now_ms() - t_main);
    free(a), free(b), free(c);
    if (entered >= 0)
        printf("launch: %.1f ms from the launch to main, %.1f ms to main's return\n", entered,
               since_launch_ms());
    return bad != 0;
}
