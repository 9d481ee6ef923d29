/* test_fallback.c: a GPU failure falls back to the CPU and still returns the right C.
 *   test_fallback nodevice  (FASTGEMM_MODE=gpu, no device visible): the CPU computes, the trace
 *                           says cpu-fallback.
 *   test_fallback oom       (gpu): with nearly all device memory taken, a host-pointer GEMM and
 *                           a mixed one (A on the device, B and C on the host) fall back; once the
 *                           memory is free again the GPU runs the next call.
 *   test_fallback midway    (gpu, FASTGEMM_FAULT_AFTER=N, FASTGEMM_BLOCK small): a pipelined
 *                           host-pointer call fails at its Nth kernel launch, after parts of C
 *                           were written back; the CPU computes the rest (beta = 0 and beta != 0,
 *                           host operands and A on the device). */
#include "../cpu_ref/ref.h"
#include "testutil.h"

#include <cuda_runtime.h>
#include <float.h>

static int fails;

/* A call through the C API, whose status must be success. */
#define SGEMM(...)                                                                              \
    do {                                                                                        \
        if (fastgemm_sgemm(__VA_ARGS__) != 0) {                                                 \
            printf("FAIL: fastgemm_sgemm returned an error (line %d)\n", __LINE__);             \
            fails++;                                                                            \
        }                                                                                       \
    } while (0)

static int check(const char *what, int64_t n, const float *c, const float *want,
                 fastgemm_backend want_backend)
{
    fastgemm_backend got = fastgemm_last_backend();
    /* Entries of A and B lie in [-1, 1): the netlib gauge of every entry is at most n. */
    double worst = 0, tol = 2.0 * (double)(n + 2) * FLT_EPSILON * (double)n;
    for (int64_t i = 0; i < n * n; i++) {
        double e = fabs((double)c[i] - want[i]);
        if (!(e <= worst)) worst = e;
    }
    int ok = got == want_backend && worst <= tol;
    printf("%-28s backend=%-13s max abs err %.2e (bound %.2e)  %s\n", what,
           fastgemm_backend_name(got), worst, tol, ok ? "ok" : "FAIL");
    fails += !ok;
    return ok;
}

int main(int argc, char **argv)
{
    int oom = argc > 1 && !strcmp(argv[1], "oom");
    int midway = argc > 1 && !strcmp(argv[1], "midway");
    if ((oom || midway) && !test_gpu_present()) {
        printf("no CUDA device: skipped\n");
        return TEST_SKIP;
    }
    if (ref_init()) return 1;
    /* oom: 3 x 64 MB of operands, more than is left free; midway: many blocks */
    const int64_t n = oom ? 4096 : midway ? 1000 : 300;
    size_t bytes = sizeof(float) * (size_t)(n * n);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *want = malloc(bytes);
    rng_t r = {42};
    for (int64_t i = 0; i < n * n; i++) {
        a[i] = (float)rng_uniform(&r);
        b[i] = (float)rng_uniform(&r);
    }
    ref_sgemm('N', 'T', n, n, n, 1, a, n, b, n, 0, want, n);

    if (!oom && !midway) {
        SGEMM(FASTGEMM_OP_N, FASTGEMM_OP_T, n, n, n, 1, a, n, b, n, 0, c, n);
        check("no device, FASTGEMM_MODE=gpu", n, c, want, FASTGEMM_BACKEND_CPU_FALLBACK);
        return fails != 0;
    }

    if (midway) {
        float *c0 = malloc(bytes), *want2 = malloc(bytes);
        for (int64_t i = 0; i < n * n; i++) c0[i] = (float)rng_uniform(&r);
        memcpy(want2, c0, bytes);
        ref_sgemm('N', 'T', n, n, n, 1, a, n, b, n, 0.5f, want2, n);
        for (int64_t i = 0; i < n * n; i++) c[i] = NAN;
        SGEMM(FASTGEMM_OP_N, FASTGEMM_OP_T, n, n, n, 1, a, n, b, n, 0, c, n);
        check("fault midway, beta = 0", n, c, want, FASTGEMM_BACKEND_CPU_FALLBACK);
        memcpy(c, c0, bytes);
        SGEMM(FASTGEMM_OP_N, FASTGEMM_OP_T, n, n, n, 1, a, n, b, n, 0.5f, c, n);
        check("fault midway, beta = 0.5", n, c, want2, FASTGEMM_BACKEND_CPU_FALLBACK);
        float *da = test_alloc(bytes, 0);
        if (!da || test_copy(da, a, bytes)) return 1;
        memcpy(c, c0, bytes);
        SGEMM(FASTGEMM_OP_N, FASTGEMM_OP_T, n, n, n, 1, da, n, b, n, 0.5f, c, n);
        check("fault midway, A on device", n, c, want2, FASTGEMM_BACKEND_CPU_FALLBACK);
        test_free(da);
        return fails != 0;
    }

    float *da = test_alloc(bytes, 0);
    if (!da || test_copy(da, a, bytes)) return 1;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    void *hog = NULL;
    size_t hog_bytes = free_b > (64u << 20) ? free_b - (64u << 20) : 0;
    if (cudaMalloc(&hog, hog_bytes) != cudaSuccess) {
        printf("could not take the device memory for the test\n");
        return 1;
    }
    printf("device memory taken: %.1f GB of %.1f GB, %d MB left\n", hog_bytes / 1e9,
           total_b / 1e9, 64);

    for (int64_t i = 0; i < n * n; i++) c[i] = NAN;
    SGEMM(FASTGEMM_OP_N, FASTGEMM_OP_T, n, n, n, 1, a, n, b, n, 0, c, n);
    check("out of memory, host", n, c, want, FASTGEMM_BACKEND_CPU_FALLBACK);
    for (int64_t i = 0; i < n * n; i++) c[i] = NAN;
    SGEMM(FASTGEMM_OP_N, FASTGEMM_OP_T, n, n, n, 1, da, n, b, n, 0, c, n);
    check("out of memory, A on device", n, c, want, FASTGEMM_BACKEND_CPU_FALLBACK);

    cudaFree(hog);
    for (int64_t i = 0; i < n * n; i++) c[i] = NAN;
    SGEMM(FASTGEMM_OP_N, FASTGEMM_OP_T, n, n, n, 1, da, n, b, n, 0, c, n);
    check("memory free again", n, c, want, FASTGEMM_BACKEND_GPU);
    test_free(da);
    return fails != 0;
}
