/* coldstart.c: a one-off program of the kind issue 52 times from its start to its end: it
 * loads a BLAS (the file COLDSTART_BLAS names, as a program linked with it would have it),
 * makes CALLS sgemm_ calls of n^3 on fresh host matrices, checks an entry of each C against a
 * sum in double, and exits. Run alone it measures that BLAS; with LD_PRELOAD=libfastgemm.so,
 * libfastgemm with its cold start (perf/run_coldstart.sh times whole processes).
 * Usage: COLDSTART_BLAS=/path/libopenblas.so.0 fastgemm-coldstart N CALLS */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
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

static long number(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > 65536) {
        fprintf(stderr, "fastgemm-coldstart: %s '%s' is not a number from 1 to 65536\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    const char *lib = getenv("COLDSTART_BLAS");
    if (argc != 3 || !lib) {
        fprintf(stderr, "usage: COLDSTART_BLAS=/path/libopenblas.so.0 %s N CALLS\n", argv[0]);
        return 2;
    }
    const int n = (int)number(argv[1], "N"), calls = (int)number(argv[2], "CALLS");
    if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "fastgemm-coldstart: %s\n", dlerror());
        return 1;
    }
    sgemm_fn sgemm = (sgemm_fn)dlsym(RTLD_DEFAULT, "sgemm_"); /* libfastgemm's when preloaded */
    const size_t count = (size_t)n * (size_t)n;
    float *a = malloc(count * sizeof(float)), *b = malloc(count * sizeof(float)),
          *c = malloc(count * sizeof(float));
    if (!sgemm || !a || !b || !c) return 1;
    const float one = 1, zero = 0;
    int bad = 0;
    for (int call = 0; call < calls; call++) {
        for (size_t i = 0; i < count; i++) {
            a[i] = (float)((i * 7 + (size_t)call) % 13) * 0.1f;
            b[i] = (float)((i * 5 + (size_t)call) % 11) * 0.1f;
        }
        const double t = now_ms();
        sgemm("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
        const int i = (call * 7919) % n, j = (call * 104729) % n;
        double ref = 0, mag = 0;
        for (int p = 0; p < n; p++) {
            ref += (double)a[i + (size_t)p * n] * b[p + (size_t)j * n];
            mag += fabs((double)a[i + (size_t)p * n] * b[p + (size_t)j * n]);
        }
        const int ok = fabs(c[i + (size_t)j * n] - ref) <= 1e-5 * n * (mag > 0 ? mag / n : 1);
        bad += !ok;
        printf("call %d: %.1f ms%s\n", call + 1, now_ms() - t, ok ? "" : " WRONG");
    }
    free(a), free(b), free(c);
    return bad != 0;
}
