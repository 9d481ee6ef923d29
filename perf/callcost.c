/* callcost.c: what a small call costs. The wall time per call of dgemm_ at n = 4 to 128 through
 * any BLAS library (libfastgemm under its FASTGEMM_MODE, or OpenBLAS itself), the median of 31
 * batches of back-to-back calls; with --attrs, the cost of the one driver call libfastgemm makes
 * per operand to classify it (cuPointerGetAttributes on a host pointer). With --cuda the process
 * first initializes the CUDA driver, as a process that uses CUDA has: libfastgemm classifies
 * operands only where the driver is loaded.
 *
 *   fastgemm-callcost LIB LABEL [--cuda]   (CSV rows: label,routine,n,microseconds per call)
 *   fastgemm-callcost --attrs */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--attrs")) {
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
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIB LABEL [--cuda] | --attrs\n", argv[0]);
        return 2;
    }
    const char *lib = argv[1], *label = argv[2];
    if (argc > 3 && !strcmp(argv[3], "--cuda") && !cuda_context()) return 1;
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
