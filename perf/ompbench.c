/* ompbench.c: the GPU side of libfastgemm through its BLAS names on device memory, next to
 * cuBLAS on the same buffers, in one process: for FASTGEMM_BACKEND=omp (the OpenMP-target GEMM)
 * and for our CUDA kernels (the default backend); the backend is read once per process, so
 * perf/ RESULTS runs this once per backend in one script.
 *
 *   fastgemm-ompbench --label NAME [--sizes 1024,4096,8192] [--prec sd] [--min-time S]
 *
 * Each n: A, B random on the device, C = A B (alpha 1, beta 0) once by cuBLAS and once through
 * sgemm_/dgemm_, the two compared (max |C - C_cublas| / max |C_cublas|, printed); then each is
 * timed by the host clock around synchronous calls (cuBLAS followed by a device synchronisation)
 * until --min-time seconds (default 1), at least 3 calls; the medians go to stdout as CSV rows:
 * label,prec,n,library,ms,tflops,max_rel_diff. */
#include "tools/cli.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fastgemm.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

#define CHECK(x)                                                                               \
    do {                                                                                       \
        if (!(x)) {                                                                            \
            fprintf(stderr, "ompbench: %s failed (line %d)\n", #x, __LINE__);                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static cublasHandle_t handle;

/* One call of library `lib` (0: cuBLAS, 1: libfastgemm), synchronous. */
static void call(int lib, int dbl, int n, const void *a, const void *b, void *c)
{
    if (dbl) {
        const double one = 1, zero = 0;
        if (lib) dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
        else CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n) == 0);
    } else {
        const float one = 1, zero = 0;
        if (lib) sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
        else CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n) == 0);
    }
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
}

static double median_ms(int lib, int dbl, int n, const void *a, const void *b, void *c, double min_time)
{
    double t[64];
    int reps = 0;
    double start = now_s();
    while (reps < 64 && (reps < 3 || now_s() - start < min_time)) {
        double t0 = now_s();
        call(lib, dbl, n, a, b, c);
        t[reps++] = (now_s() - t0) * 1e3;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    return t[reps / 2];
}

#define PROG "fastgemm-ompbench"

static int help(void)
{
    printf("Usage: " PROG " --label NAME [--sizes 1024,4096,8192] [--prec sd] [--min-time S]\n"
           "libfastgemm's GPU side through sgemm_/dgemm_ on device memory, next to cuBLAS on the\n"
           "same buffers (the results compared), for the backend FASTGEMM_BACKEND names: each timed\n"
           "by the host clock around synchronous calls for S seconds, at least 3 calls. CSV rows\n"
           "on stdout: label,prec,n,library,ms,tflops,max_rel_diff (medians).\n"
           "\n"
           "      --label NAME     the rows' label (default fastgemm)\n"
           "      --sizes N,...    the square sizes (default 1024,4096,8192)\n"
           "      --prec s|d|sd    the precisions (default sd)\n"
           "      --min-time S     seconds of calls a size and library (default 1)\n"
           "  -h, --help           print this help and exit\n"
           "  -V, --version        print the version and exit\n"
           "\n"
           "Environment: FASTGEMM_BACKEND (cuda or omp: read once a process), FASTGEMM_KERNEL,\n"
           "OMP_TARGET_OFFLOAD; the GPU is CUDA device 0.\n");
    return 0;
}

int main(int argc, char **argv)
{
    enum { LABEL = 256, SIZES, PREC, MIN_TIME };
    static const struct option options[] = {
        {"label", required_argument, 0, LABEL},       {"sizes", required_argument, 0, SIZES},
        {"prec", required_argument, 0, PREC},         {"min-time", required_argument, 0, MIN_TIME},
        {"help", no_argument, 0, 'h'},                {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    const char *label = "fastgemm", *sizes = "1024,4096,8192", *prec = "sd";
    double min_time = 1.0;
    opterr = 0; /* fg_cli_option_error says it in one line */
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case LABEL: label = optarg; break;
        case SIZES: sizes = optarg; break;
        case PREC: prec = optarg; break;
        case MIN_TIME:
            if (fg_cli_real(PROG, "--min-time", optarg, 0, 1e6, &min_time)) return 2;
            break;
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, fastgemm_version());
        default: return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    if (optind < argc) return fg_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    CHECK(cublasCreate(&handle) == 0);
    printf("label,prec,n,library,ms,tflops,max_rel_diff\n");
    for (const char *p = prec; *p; p++) {
        const int dbl = *p == 'd';
        const size_t es = dbl ? 8 : 4;
        for (const char *s = sizes; *s;) {
            const int n = atoi(s);
            const size_t len = (size_t)n * (size_t)n;
            void *a, *b, *c, *ref;
            CHECK(cudaMalloc(&a, len * es) == 0 && cudaMalloc(&b, len * es) == 0);
            CHECK(cudaMalloc(&c, len * es) == 0 && cudaMalloc(&ref, len * es) == 0);
            double *h = malloc(len * sizeof(double)), *h2 = malloc(len * sizeof(double));
            CHECK(h && h2);
            unsigned long long x = 88172645463325252ull + (unsigned long long)n;
            for (int which = 0; which < 2; which++) {
                for (size_t i = 0; i < len; i++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    double v = (double)(x >> 11) * (2.0 / 9007199254740992.0) - 1.0;
                    if (dbl) h[i] = v;
                    else ((float *)h)[i] = (float)v;
                }
                CHECK(cudaMemcpy(which ? b : a, h, len * es, cudaMemcpyHostToDevice) == 0);
            }
            call(0, dbl, n, a, b, ref);
            call(1, dbl, n, a, b, c);
            CHECK(cudaMemcpy(h, ref, len * es, cudaMemcpyDeviceToHost) == 0);
            CHECK(cudaMemcpy(h2, c, len * es, cudaMemcpyDeviceToHost) == 0);
            double diff = 0, scale = 0;
            for (size_t i = 0; i < len; i++) {
                double r = dbl ? h[i] : ((float *)h)[i], o = dbl ? h2[i] : ((float *)h2)[i];
                if (!(fabs(o - r) <= diff)) diff = isnan(o) ? INFINITY : fabs(o - r);
                if (fabs(r) > scale) scale = fabs(r);
            }
            const double rel = diff / scale, flops = 2.0 * n * (double)n * n;
            const char *backend = fastgemm_backend_name(fastgemm_last_backend());
            for (int lib = 0; lib < 2; lib++) {
                double ms = median_ms(lib, dbl, n, a, b, lib ? c : ref, min_time);
                printf("%s,%c,%d,%s,%.3f,%.2f,%.2e\n", label, *p, n, lib ? backend : "cublas", ms,
                       flops / (ms * 1e-3) * 1e-12, lib ? rel : 0.0);
                fflush(stdout);
            }
            cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ref);
            free(h), free(h2);
            s = strchr(s, ',');
            s = s ? s + 1 : "";
        }
    }
    cublasDestroy(handle);
    return 0;
}
