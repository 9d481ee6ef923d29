/* test_omp_interop.c: an OpenMP offload program (built with -fopenmp -foffload=nvptx-none) that
 * hands libfastgemm the device copies of its own data, the four ways such a program has them:
 *   1. sgemm_ on arrays mapped by `target data`, through use_device_ptr;
 *   2. dgemm_ on arrays mapped by `target data`, through use_device_addr;
 *   3. cblas_sgemm (row-major) on omp_target_alloc memory, with beta = 0 and NaN in C;
 *   4. dgemm_ with A in omp_target_alloc memory and B, C on the host (a mix);
 *   5. sgemm_ with alpha = 0 on omp_target_alloc memory (C = beta*C, A and B NaN);
 *   6. sgemm_ on host memory.
 * After each GEMM on device data an OpenMP target region reads C on the device: the result must
 * be visible there, and the OpenMP runtime must still launch its kernels (libfastgemm leaves
 * the thread's CUDA context as it found it). Every result is checked against OpenBLAS.
 * With an OpenMP device, every GEMM must run on the GPU (FASTGEMM_MODE=gpu for the host one)
 * and on the right one, as the trace line says: the device operands' OpenMP device (OpenMP
 * device n is CUDA device n), and for host operands FASTGEMM_DEVICE or else OpenMP's default.
 * With several devices the cases run once per device made OpenMP's default, and then the
 * program runs itself again with FASTGEMM_DEVICE set to the last device. Without a device,
 * OpenMP runs the target regions on the host and the GEMMs get host memory (the CPU path under
 * FASTGEMM_MODE=cpu). */
#include "../cpu_ref/ref.h"
#include "testutil.h"

#include <float.h>
#include <omp.h>
#include <unistd.h>

static int failures, on_device;
static char trace_path[] = "/tmp/fg_omp_interop_XXXXXX";

#define FAIL(...)                                                                              \
    do {                                                                                       \
        fprintf(stderr, "FAIL: " __VA_ARGS__);                                                 \
        fputc('\n', stderr);                                                                   \
        failures++;                                                                            \
    } while (0)

/* The netlib error gauge on a column-major m x n result: |C - ref| <= 2 (k+2) eps
 * (|alpha| |A| |B| + |beta| |C0|), in double; abs_ab holds |alpha| |op(A)| |op(B)|. */
static void check(const char *what, int64_t m, int64_t n, int64_t k, double eps, const double *got,
                  const double *ref, const double *abs_ab, const double *c0, double beta)
{
    int bad = 0;
    for (int64_t i = 0; i < m * n; i++) {
        double bound = 2.0 * (double)(k + 2) * eps * (abs_ab[i] + fabs(beta) * (c0 ? fabs(c0[i]) : 0));
        if (!(fabs(got[i] - ref[i]) <= bound)) {
            if (!bad) FAIL("%s: C[%lld] = %g, expected %g", what, (long long)i, got[i], ref[i]);
            bad = 1;
        }
    }
}

/* The last call's trace line. */
static void last_trace_line(char *last, size_t len)
{
    FILE *f = fopen(trace_path, "r");
    char line[1024];
    last[0] = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "fastgemm: ", 10)) snprintf(last, len, "%s", line);
    if (f) fclose(f);
}

enum operands { ON_DEVICE, MIXED, ON_HOST };

/* On an OpenMP device, the GPU: for device operands OpenMP's default device (where each case
 * puts them), for host operands FASTGEMM_DEVICE or else that default; operands all on the
 * device are used in place (the trace shows no host copies). Otherwise the operands are host
 * memory, and the CPU when FASTGEMM_MODE=cpu, else either side (auto mode's choice). */
static void expect_backend(const char *what, enum operands where)
{
    fastgemm_backend got = fastgemm_last_backend();
    int ok = on_device ? got == FASTGEMM_BACKEND_GPU
                       : got == FASTGEMM_BACKEND_CPU || (!mode_is("cpu") && got == FASTGEMM_BACKEND_GPU);
    if (!ok) FAIL("%s ran on %s", what, fastgemm_backend_name(got));
    if (!on_device || !ok) return;
    char line[1024];
    last_trace_line(line, sizeof line);
    const char *env = getenv("FASTGEMM_DEVICE"), *p = strstr(line, "device ");
    const int want = where == ON_HOST && env && *env ? atoi(env) : omp_get_default_device();
    const int dev = p && p[7] >= '0' && p[7] <= '9' ? atoi(p + 7) : -1;
    if (dev != want) FAIL("%s ran on device %d, expected %d", what, dev, want);
    if (where == ON_DEVICE && strstr(line, "host copies"))
        FAIL("%s copied operands through the host: %s", what, line);
}

static void fill(rng_t *r, double *x, int64_t len)
{
    for (int64_t i = 0; i < len; i++) x[i] = rng_uniform(r);
}

/* |alpha| |A| |B| and alpha A B + beta C0 for column-major A (m x k, lda), B (k x n, ldb), no
 * transposes, in double through OpenBLAS's dgemm. */
static void reference(int64_t m, int64_t n, int64_t k, double alpha, const double *a, int64_t lda,
                      const double *b, int64_t ldb, double beta, const double *c0, double *ref,
                      double *abs_ab)
{
    double *aa = malloc(sizeof(double) * (size_t)(lda * k)), *ab = malloc(sizeof(double) * (size_t)(ldb * n));
    for (int64_t i = 0; i < lda * k; i++) aa[i] = fabs(a[i]);
    for (int64_t i = 0; i < ldb * n; i++) ab[i] = fabs(b[i]);
    for (int64_t i = 0; i < m * n; i++) ref[i] = c0 ? c0[i] : 0;
    ref_dgemm('N', 'N', m, n, k, alpha, a, lda, b, ldb, c0 ? beta : 0, ref, m);
    ref_dgemm('N', 'N', m, n, k, fabs(alpha), aa, lda, ab, ldb, 0, abs_ab, m);
    free(aa);
    free(ab);
}

/* 1. sgemm_ through use_device_ptr. */
static void mapped_sgemm(void)
{
    const int m = 300, n = 170, k = 230, lda = 307, ldb = 233, ldc = 301;
    const float alpha = 0.75f, beta = -1.25f;
    rng_t r = {1};
    float *a = malloc(sizeof(float) * lda * k), *b = malloc(sizeof(float) * ldb * n);
    float *c = malloc(sizeof(float) * ldc * n), *twice = malloc(sizeof(float) * ldc * n);
    double *da = malloc(sizeof(double) * lda * k), *db = malloc(sizeof(double) * ldb * n);
    double *c0 = malloc(sizeof(double) * m * n), *ref = malloc(sizeof(double) * m * n);
    double *abs_ab = malloc(sizeof(double) * m * n), *got = malloc(sizeof(double) * m * n);
    fill(&r, da, (int64_t)lda * k);
    fill(&r, db, (int64_t)ldb * n);
    for (int i = 0; i < lda * k; i++) da[i] = a[i] = (float)da[i];
    for (int i = 0; i < ldb * n; i++) db[i] = b[i] = (float)db[i];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ldc; i++) {
            c[i + j * ldc] = (float)rng_uniform(&r);
            if (i < m) c0[i + j * m] = c[i + j * ldc];
        }

#pragma omp target data map(to: a[0:lda * k], b[0:ldb * n]) map(tofrom: c[0:ldc * n]) map(from: twice[0:ldc * n])
    {
#pragma omp target data use_device_ptr(a, b, c)
        sgemm_("N", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
        expect_backend("sgemm_ on use_device_ptr", ON_DEVICE);
        /* The next target region sees the result. */
#pragma omp target teams distribute parallel for
        for (int i = 0; i < ldc * n; i++) twice[i] = 2 * c[i];
    }
    reference(m, n, k, alpha, da, lda, db, ldb, beta, c0, ref, abs_ab);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) got[i + j * m] = c[i + j * ldc];
    check("sgemm_ (use_device_ptr)", m, n, k, FLT_EPSILON, got, ref, abs_ab, c0, beta);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) got[i + j * m] = twice[i + j * ldc] / 2;
    check("the target region after sgemm_", m, n, k, FLT_EPSILON, got, ref, abs_ab, c0, beta);
    free(a), free(b), free(c), free(twice), free(da), free(db), free(c0), free(ref), free(abs_ab), free(got);
}

/* 2. dgemm_ through use_device_addr, on arrays (the list items are the arrays themselves). */
enum { M2 = 129, N2 = 65, K2 = 257 };
static double a2[M2 * K2], b2[K2 * N2], c2[M2 * N2], sum2[N2];

static void mapped_dgemm(void)
{
    const int m = M2, n = N2, k = K2;
    const double alpha = -1.5, beta = 0.5;
    double *c0 = malloc(sizeof c2), *ref = malloc(sizeof c2), *abs_ab = malloc(sizeof c2);
    rng_t r = {2};
    fill(&r, a2, M2 * K2);
    fill(&r, b2, K2 * N2);
    fill(&r, c2, M2 * N2);
    memcpy(c0, c2, sizeof c2);
#pragma omp target data map(to: a2, b2) map(tofrom: c2) map(from: sum2)
    {
#pragma omp target data use_device_addr(a2, b2, c2)
        dgemm_("N", "N", &m, &n, &k, &alpha, a2, &m, b2, &k, &beta, c2, &m, 1, 1);
        expect_backend("dgemm_ on use_device_addr", ON_DEVICE);
#pragma omp target teams distribute parallel for
        for (int j = 0; j < N2; j++) {
            double s = 0;
            for (int i = 0; i < M2; i++) s += c2[i + j * M2];
            sum2[j] = s;
        }
    }
    reference(m, n, k, alpha, a2, m, b2, k, beta, c0, ref, abs_ab);
    check("dgemm_ (use_device_addr)", m, n, k, DBL_EPSILON, c2, ref, abs_ab, c0, beta);
    for (int j = 0; j < N2; j++) {
        double s = 0, bound = 0;
        for (int i = 0; i < M2; i++) {
            s += ref[i + j * M2];
            bound += 2.0 * (K2 + 2 + M2) * DBL_EPSILON * (abs_ab[i + j * M2] + fabs(beta * c0[i + j * M2]));
        }
        if (!(fabs(sum2[j] - s) <= bound)) {
            FAIL("the target region after dgemm_: column %d sums to %g, expected %g", j, sum2[j], s);
            break;
        }
    }
    free(c0), free(ref), free(abs_ab);
}

/* 3. cblas_sgemm, row-major, on omp_target_alloc memory; beta = 0 with NaN in C. */
static void allocated_cblas(void)
{
    const int m = 200, n = 333, k = 64, dev = omp_get_default_device(), host = omp_get_initial_device();
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n), *c = malloc(sizeof(float) * m * n);
    double *ad = malloc(sizeof(double) * m * k), *bd = malloc(sizeof(double) * k * n);
    double *ref = malloc(sizeof(double) * m * n), *abs_ab = malloc(sizeof(double) * m * n), *got = malloc(sizeof(double) * m * n);
    rng_t r = {3};
    /* Row-major A (m x k) and B (k x n) are column-major A^T and B^T: C^T = B^T A^T. */
    for (int i = 0; i < m * k; i++) ad[i] = a[i] = (float)rng_uniform(&r);
    for (int i = 0; i < k * n; i++) bd[i] = b[i] = (float)rng_uniform(&r);
    for (int i = 0; i < m * n; i++) c[i] = NAN;
    float *da = omp_target_alloc(sizeof(float) * m * k, dev), *db = omp_target_alloc(sizeof(float) * k * n, dev);
    float *dc = omp_target_alloc(sizeof(float) * m * n, dev);
    float *colsum = malloc(sizeof(float) * n);
    if (!da || !db || !dc) {
        FAIL("omp_target_alloc failed");
        return;
    }
    omp_target_memcpy(da, a, sizeof(float) * m * k, 0, 0, dev, host);
    omp_target_memcpy(db, b, sizeof(float) * k * n, 0, 0, dev, host);
    omp_target_memcpy(dc, c, sizeof(float) * m * n, 0, 0, dev, host);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 2.0f, da, k, db, n, 0.0f, dc, n);
    expect_backend("cblas_sgemm on omp_target_alloc memory", ON_DEVICE);
#pragma omp target teams distribute parallel for is_device_ptr(dc) map(from: colsum[0:n]) device(dev)
    for (int j = 0; j < n; j++) {
        float s = 0;
        for (int i = 0; i < m; i++) s += dc[i * n + j];
        colsum[j] = s;
    }
    omp_target_memcpy(c, dc, sizeof(float) * m * n, 0, 0, host, dev);
    reference(n, m, k, 2.0, bd, n, ad, k, 0, NULL, ref, abs_ab); /* C^T, n x m */
    for (int i = 0; i < m * n; i++) got[i] = c[i];
    check("cblas_sgemm (omp_target_alloc, beta = 0 over NaN)", n, m, k, FLT_EPSILON, got, ref, abs_ab, NULL, 0);
    for (int j = 0; j < n; j++) {
        double s = 0, bound = 0;
        for (int i = 0; i < m; i++) s += ref[j + i * n], bound += abs_ab[j + i * n];
        if (!(fabs(colsum[j] - s) <= 2.0 * (k + 2 + m) * FLT_EPSILON * bound)) {
            FAIL("the target region after cblas_sgemm: column %d sums to %g, expected %g", j, colsum[j], s);
            break;
        }
    }
    omp_target_free(da, dev), omp_target_free(db, dev), omp_target_free(dc, dev);
    free(a), free(b), free(c), free(ad), free(bd), free(ref), free(abs_ab), free(got), free(colsum);
}

/* 4. A in omp_target_alloc memory, B and C on the host. */
static void mixed_dgemm(void)
{
    const int m = 513, n = 257, k = 100, dev = omp_get_default_device(), host = omp_get_initial_device();
    const double alpha = 1.25, beta = -0.5;
    double *a = malloc(sizeof(double) * m * k), *b = malloc(sizeof(double) * k * n), *c = malloc(sizeof(double) * m * n);
    double *c0 = malloc(sizeof(double) * m * n), *ref = malloc(sizeof(double) * m * n), *abs_ab = malloc(sizeof(double) * m * n);
    rng_t r = {4};
    fill(&r, a, (int64_t)m * k);
    fill(&r, b, (int64_t)k * n);
    fill(&r, c, (int64_t)m * n);
    memcpy(c0, c, sizeof(double) * m * n);
    double *da = omp_target_alloc(sizeof(double) * m * k, dev);
    if (!da) {
        FAIL("omp_target_alloc failed");
        return;
    }
    omp_target_memcpy(da, a, sizeof(double) * m * k, 0, 0, dev, host);
    dgemm_("N", "N", &m, &n, &k, &alpha, da, &m, b, &k, &beta, c, &m, 1, 1);
    expect_backend("dgemm_ with A on the device, B and C on the host", MIXED);
    double first = -1;
#pragma omp target is_device_ptr(da) map(from: first) device(dev)
    first = da[0];
    if (first != a[0]) FAIL("the target region after the mixed dgemm_ read %g, expected %g", first, a[0]);
    reference(m, n, k, alpha, a, m, b, k, beta, c0, ref, abs_ab);
    check("dgemm_ (A on the device, B and C on the host)", m, n, k, DBL_EPSILON, c, ref, abs_ab, c0, beta);
    omp_target_free(da, dev);
    free(a), free(b), free(c), free(c0), free(ref), free(abs_ab);
}

/* 5. alpha = 0: C = beta*C on the device; A and B (NaN) are never read. */
static void scale_only(void)
{
    const int m = 77, n = 45, k = 30, dev = omp_get_default_device(), host = omp_get_initial_device();
    const float alpha = 0, beta = 3;
    float *ab = malloc(sizeof(float) * m * k), *c = malloc(sizeof(float) * m * n);
    for (int i = 0; i < m * k; i++) ab[i] = NAN;
    for (int i = 0; i < m * n; i++) c[i] = (float)i;
    float *da = omp_target_alloc(sizeof(float) * m * k, dev), *dc = omp_target_alloc(sizeof(float) * m * n, dev);
    if (!da || !dc) {
        FAIL("omp_target_alloc failed");
        return;
    }
    omp_target_memcpy(da, ab, sizeof(float) * m * k, 0, 0, dev, host);
    omp_target_memcpy(dc, c, sizeof(float) * m * n, 0, 0, dev, host);
    sgemm_("N", "T", &m, &n, &k, &alpha, da, &m, da, &n, &beta, dc, &m, 1, 1);
    expect_backend("sgemm_ with alpha = 0", ON_DEVICE);
    int wrong = 0;
#pragma omp target teams distribute parallel for is_device_ptr(dc) map(tofrom: wrong) reduction(+: wrong) device(dev)
    for (int i = 0; i < m * n; i++) wrong += dc[i] != 3.0f * (float)i;
    if (wrong) FAIL("sgemm_ with alpha = 0: %d elements of C are not 3 C", wrong);
    omp_target_free(da, dev), omp_target_free(dc, dev);
    free(ab), free(c);
}

/* 6. sgemm_ on host memory: to OpenMP's default device unless FASTGEMM_DEVICE says otherwise. */
static void host_sgemm(void)
{
    const int m = 190, n = 120, k = 150;
    const float alpha = 1.5f, beta = 0.25f;
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n), *c = malloc(sizeof(float) * m * n);
    double *ad = malloc(sizeof(double) * m * k), *bd = malloc(sizeof(double) * k * n);
    double *c0 = malloc(sizeof(double) * m * n), *ref = malloc(sizeof(double) * m * n);
    double *abs_ab = malloc(sizeof(double) * m * n), *got = malloc(sizeof(double) * m * n);
    rng_t r = {6};
    for (int i = 0; i < m * k; i++) ad[i] = a[i] = (float)rng_uniform(&r);
    for (int i = 0; i < k * n; i++) bd[i] = b[i] = (float)rng_uniform(&r);
    for (int i = 0; i < m * n; i++) c0[i] = c[i] = (float)rng_uniform(&r);
    sgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &m, 1, 1);
    expect_backend("sgemm_ on host memory", ON_HOST);
    reference(m, n, k, alpha, ad, m, bd, k, beta, c0, ref, abs_ab);
    for (int i = 0; i < m * n; i++) got[i] = c[i];
    check("sgemm_ (host memory)", m, n, k, FLT_EPSILON, got, ref, abs_ab, c0, beta);
    free(a), free(b), free(c), free(ad), free(bd), free(c0), free(ref), free(abs_ab), free(got);
}

static void all_cases(void)
{
    mapped_sgemm();
    mapped_dgemm();
    allocated_cblas();
    mixed_dgemm();
    scale_only();
    host_sgemm();
}

int main(int argc, char **argv)
{
    (void)argc;
    if (ref_init()) return 1;
    int fd = mkstemp(trace_path); /* the trace says which device ran each call */
    if (fd < 0 || setenv("FASTGEMM_TRACE", trace_path, 1) != 0) {
        fprintf(stderr, "test_omp_interop: no trace file\n");
        return 1;
    }
    close(fd);
    const int ndev = omp_get_num_devices(), dev = omp_get_default_device();
    const char *fg_device = getenv("FASTGEMM_DEVICE");
    on_device = dev >= 0 && dev < ndev;
    printf("test_omp_interop: %d OpenMP device(s), default %d, FASTGEMM_DEVICE %s: %s\n", ndev, dev,
           fg_device ? fg_device : "unset",
           on_device ? "the GEMMs run on the GPU" : "no device: target regions and GEMMs run on the host");
    all_cases();
    for (int d = 0; on_device && d < ndev; d++) {
        if (d == dev) continue;
        printf("test_omp_interop: OpenMP's default device now %d\n", d);
        omp_set_default_device(d);
        all_cases();
    }
    unlink(trace_path);
    printf("test_omp_interop: %d failure(s)\n", failures);
    if (failures) return 1;
    if (on_device && ndev >= 2 && !fg_device) { /* the settings are read once: a new process */
        char last[16];
        snprintf(last, sizeof last, "%d", ndev - 1);
        setenv("FASTGEMM_DEVICE", last, 1);
        unsetenv("FASTGEMM_TRACE");
        fflush(stdout);
        execv("/proc/self/exe", argv);
        perror("test_omp_interop: execv");
        return 1;
    }
    return 0;
}
