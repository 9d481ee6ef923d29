/* callcost.c: what a small call costs. The wall time per call of dgemm_ at n = 4 to 128 through
 * any BLAS library (libfastgemm under its FASTGEMM_MODE, or OpenBLAS itself), the median of 31
 * batches of back-to-back calls; with --attrs, the cost of the one driver call libfastgemm makes
 * per operand to classify it (cuPointerGetAttributes on a host pointer). With --cuda the process
 * first initializes the CUDA driver, as a process that uses CUDA has: libfastgemm classifies
 * operands only where the driver is loaded.
 *
 *   fastgemm-callcost LIB LABEL [--cuda]   (CSV rows: label,routine,n,microseconds per call)
 *   fastgemm-callcost --attrs */
#include "tools/cli.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef void (*dg_t)(const char *, const char *, const int *, const int *, const int *, const double *,
                     const double *, const int *, const double *, const int *, const double *, double *,
                     const int *, size_t, size_t);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
/* The CUDA driver loaded and device 0's primary context current: the driver's handle, or NULL. */
static void *cuda_context(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL), *ctx = NULL;
    int (*init)(unsigned) = h ? dlsym(h, "cuInit") : NULL;
    int (*retain)(void **, int) = h ? dlsym(h, "cuDevicePrimaryCtxRetain") : NULL;
    int (*setc)(void *) = h ? dlsym(h, "cuCtxSetCurrent") : NULL;
    if (!init || !retain || !setc || init(0) || retain(&ctx, 0) || setc(ctx)) {
        fprintf(stderr, "callcost: no CUDA driver or device\n");
        return NULL;
    }
    return h;
}

#define PROG "fastgemm-callcost"

static int help(void)
{
    printf("Usage: " PROG " LIB LABEL [--cuda]\n"
           "       " PROG " --attrs\n"
           "What a small call costs: the wall time per call of back-to-back dgemm_ at n = 4, 16,\n"
           "32, 64 and 128 through the BLAS library LIB (a path for dlopen: libfastgemm, OpenBLAS\n"
           "...), the median of 31 batches, as CSV rows on stdout: LABEL,dgemm_,n,microseconds.\n"
           "\n"
           "      --cuda     initialise the CUDA driver first (device 0's primary context), as a\n"
           "                 CUDA program has: libfastgemm classifies operands only where the\n"
           "                 driver is loaded\n"
           "      --attrs    instead, the cost of the one driver call libfastgemm makes per\n"
           "                 operand (cuPointerGetAttributes on a host pointer)\n"
           "  -h, --help     print this help and exit\n"
           "  -V, --version  print the version and exit\n"
           "\n"
           "Environment: a libfastgemm LIB's settings (FASTGEMM_MODE: where its calls run).\n");
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {{"cuda", no_argument, 0, 'c'},
                                            {"attrs", no_argument, 0, 'a'},
                                            {"help", no_argument, 0, 'h'},
                                            {"version", no_argument, 0, 'V'},
                                            {0, 0, 0, 0}};
    const char *lib = NULL, *label = NULL;
    int cuda = 0, attrs_only = 0;
    opterr = 0; /* fg_cli_option_error says it in one line */
    for (;;) { /* "-": LIB and LABEL come as 1, in their places among the options */
        const int at = optind, c = getopt_long(argc, argv, "-:hV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case 1:
            if (label) return fg_cli_usage_error(PROG, "unexpected argument '%s'", optarg);
            *(lib ? &label : &lib) = optarg;
            break;
        case 'c': cuda = 1; break;
        case 'a': attrs_only = 1; break;
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, FASTGEMM_VERSION_STRING);
        default: return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    if (optind < argc) return fg_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    if (attrs_only) {
        void *h = cuda_context();
        int (*attrs)(unsigned, int *, void **, unsigned long long) = h ? dlsym(h, "cuPointerGetAttributes") : NULL;
        if (!attrs) return 1;
        double *p = malloc(1 << 20);
        unsigned type = 0, managed = 0; int dev = -1; void *c = 0;
        int at[4] = {2 /*MEMORY_TYPE*/, 8 /*IS_MANAGED*/, 9 /*DEVICE_ORDINAL*/, 1 /*CONTEXT*/};
        void *data[4] = {&type, &managed, &dev, &c};
        double best[31];
        for (int b = 0; b < 31; b++) {
            double t0 = now();
            for (int i = 0; i < 10000; i++) attrs(4, at, data, (unsigned long long)(uintptr_t)(p + (i & 1023)));
            best[b] = (now() - t0) / 10000;
        }
        qsort(best, 31, sizeof *best, cmp);
        printf("cuPointerGetAttributes (4 attributes, host pointer): %.3f us\n", best[15] * 1e6);
        return 0;
    }
    if (!label) return fg_cli_usage_error(PROG, "LIB and LABEL are needed");
    if (cuda && !cuda_context()) return 1;
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    dg_t dg = (dg_t)dlsym(h, "dgemm_");
    static const int sizes[] = {4, 16, 32, 64, 128};
    for (int s = 0; s < 5; s++) {
        const int n = sizes[s], reps = n <= 32 ? 2000 : n <= 64 ? 500 : 100;
        double *a = calloc(n * n, 8), *b = calloc(n * n, 8), *c = calloc(n * n, 8), one = 1, zero = 0;
        for (int i = 0; i < n * n; i++) a[i] = b[i] = 1.0 / (1 + i % 7);
        double t[31];
        for (int w = 0; w < 50; w++) dg("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
        for (int bt = 0; bt < 31; bt++) {
            double t0 = now();
            for (int i = 0; i < reps; i++) dg("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
            t[bt] = (now() - t0) / reps;
        }
        qsort(t, 31, sizeof *t, cmp);
        printf("%s,dgemm_,%d,%.3f\n", label, n, t[15] * 1e6);
        free(a), free(b), free(c);
    }
    return 0;
}
