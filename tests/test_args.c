/* test_args.c: the reference-BLAS corner cases, through every entry point.
 * - each invalid argument gives xerbla_ (Fortran names), cblas_xerbla (CBLAS) or a status (C API)
 *   with the reference's position, the first bad one when several are, and leaves C untouched;
 * - quick returns (m = 0, n = 0, alpha = 0 or k = 0 with beta = 1) touch nothing, not even A or B;
 * - beta = 0 with NaN in C, alpha = 0 with NaN in A and B, k = 0: exact results.
 * This program defines its own xerbla_ and cblas_xerbla, as the netlib testers do: the library's
 * calls must reach them. Run under FASTGEMM_MODE=gpu it also checks that the GPU ran. */
#include "../cpu_ref/ref.h"
#include "testutil.h"

static int fails, checks;
#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        checks++;                                                                               \
        if (!(cond)) {                                                                          \
            fails++;                                                                            \
            fprintf(stderr, "FAIL line %d: ", __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fprintf(stderr, "\n");                                                              \
        }                                                                                       \
    } while (0)

/* ---- the application's error handlers ---- */
static char err_name[32];
static long err_info;
static int err_calls;

void xerbla_(const char *srname, const int *info, size_t len)
{
    snprintf(err_name, sizeof err_name, "%.*s", (int)len, srname);
    err_info = *info;
    err_calls++;
}

void xerbla_64_(const char *srname, const int64_t *info, size_t len)
{
    snprintf(err_name, sizeof err_name, "%.*s/64", (int)len, srname);
    err_info = (long)*info;
    err_calls++;
}

void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    (void)form;
    snprintf(err_name, sizeof err_name, "%s", rout);
    err_info = info;
    err_calls++;
}

static void reset_err(void)
{
    err_name[0] = 0;
    err_info = 0;
    err_calls = 0;
}

/* ---- one bad call ---- */
typedef struct {
    char ta, tb;
    int m, n, k, lda, ldb, ldc;
    int f77_info; /* the Fortran position of the first bad argument */
} bad_case;

/* The reference SGEMM's checks in order; nrowa = m or k, nrowb = k or n by transpose. */
static const bad_case bad_cases[] = {
    {'/', 'N', 0, 0, 0, 1, 1, 1, 1},   {'N', '/', 0, 0, 0, 1, 1, 1, 2},
    {'N', 'N', -1, 0, 0, 1, 1, 1, 3},  {'N', 'N', 0, -1, 0, 1, 1, 1, 4},
    {'N', 'N', 0, 0, -1, 1, 1, 1, 5},  {'N', 'N', 2, 0, 0, 1, 1, 2, 8},
    {'T', 'N', 0, 0, 2, 1, 2, 1, 8},   {'N', 'N', 0, 0, 2, 1, 1, 1, 10},
    {'N', 'T', 0, 2, 0, 1, 1, 1, 10},  {'N', 'N', 2, 0, 0, 2, 1, 1, 13},
    {'N', 'N', 0, 0, 0, 0, 1, 1, 8},   {'N', 'N', 0, 0, 0, 1, 0, 1, 10},
    {'N', 'N', 0, 0, 0, 1, 1, 0, 13},  {'x', 'y', -1, -1, -1, 0, 0, 0, 1}, /* first one wins */
    {'N', 'N', -1, -1, 0, 0, 0, 0, 3}, {'n', 't', 4, 4, 4, 3, 3, 3, 8},
    {'C', 'c', 3, 3, 3, 2, 3, 3, 8},   {'t', 'n', 3, 3, 3, 3, 2, 3, 10},
};

static void check_errors(void)
{
    float a[64], b[64], c[64], c_before[64];
    for (int i = 0; i < 64; i++) a[i] = b[i] = c[i] = c_before[i] = (float)i;
    const float alpha = 1, beta = 0;

    for (size_t t = 0; t < sizeof bad_cases / sizeof *bad_cases; t++) {
        const bad_case *bc = &bad_cases[t];
        int64_t m64 = bc->m, n64 = bc->n, k64 = bc->k, lda64 = bc->lda, ldb64 = bc->ldb,
                ldc64 = bc->ldc;

        reset_err();
        sgemm_(&bc->ta, &bc->tb, &bc->m, &bc->n, &bc->k, &alpha, a, &bc->lda, b, &bc->ldb,
               &beta, c, &bc->ldc, 1, 1);
        CHECK(err_calls == 1 && !strcmp(err_name, "SGEMM ") && err_info == bc->f77_info,
              "case %zu sgemm_: xerbla calls %d name '%s' info %ld, want SGEMM info %d", t,
              err_calls, err_name, err_info, bc->f77_info);
        CHECK(!memcmp(c, c_before, sizeof c), "case %zu sgemm_: C changed", t);
        CHECK(fastgemm_last_backend() == FASTGEMM_BACKEND_NONE, "case %zu: backend after error", t);

        reset_err();
        double da[64] = {0}, db[64] = {0}, dc[64], dc_before[64];
        for (int i = 0; i < 64; i++) dc[i] = dc_before[i] = i;
        const double dalpha = 1, dbeta = 0;
        dgemm_64_(&bc->ta, &bc->tb, &m64, &n64, &k64, &dalpha, da, &lda64, db, &ldb64, &dbeta, dc,
                  &ldc64, 1, 1);
        CHECK(err_calls == 1 && !strcmp(err_name, "DGEMM /64") && err_info == bc->f77_info,
              "case %zu dgemm_64_: xerbla calls %d name '%s' info %ld, want DGEMM/64 info %d", t,
              err_calls, err_name, err_info, bc->f77_info);
        CHECK(!memcmp(dc, dc_before, sizeof dc), "case %zu dgemm_64_: C changed", t);

        reset_err();
        int st = fastgemm_sgemm((fastgemm_op)bc->ta, (fastgemm_op)bc->tb, m64, n64, k64, alpha, a,
                                lda64, b, ldb64, beta, c, ldc64);
        CHECK(st == -bc->f77_info && err_calls == 0, "case %zu fastgemm_sgemm: status %d, want %d",
              t, st, -bc->f77_info);
        CHECK(!memcmp(c, c_before, sizeof c), "case %zu fastgemm_sgemm: C changed", t);

        /* CBLAS, column-major: the Fortran position + 1. Only transposes it knows are valid. */
        if (bc->ta != '/' && bc->tb != '/' && bc->ta != 'x') {
            reset_err();
            cblas_sgemm(CblasColMajor, cblas_op(bc->ta), cblas_op(bc->tb), bc->m, bc->n, bc->k,
                        alpha, a, bc->lda, b, bc->ldb, beta, c, bc->ldc);
            CHECK(err_calls == 1 && !strcmp(err_name, "cblas_sgemm") &&
                      err_info == bc->f77_info + 1,
                  "case %zu cblas col: calls %d '%s' info %ld, want %d", t, err_calls, err_name,
                  err_info, bc->f77_info + 1);
            CHECK(!memcmp(c, c_before, sizeof c), "case %zu cblas col: C changed", t);
        }
    }

    /* CBLAS's own checks: layout 1, TransA 2, TransB 3 (in row-major too). */
    struct { int layout, ta, tb, info; } cb[] = {
        {0, CblasNoTrans, CblasNoTrans, 1},           {CblasColMajor, 0, CblasNoTrans, 2},
        {CblasColMajor, CblasNoTrans, 999, 3},        {CblasRowMajor, 0, CblasNoTrans, 2},
        {CblasRowMajor, CblasNoTrans, -1, 3},         {CblasRowMajor, 5, 7, 2},
    };
    for (size_t t = 0; t < sizeof cb / sizeof *cb; t++) {
        reset_err();
        cblas_sgemm(cb[t].layout, cb[t].ta, cb[t].tb, 1, 1, 1, alpha, a, 1, b, 1, beta, c, 1);
        CHECK(err_calls == 1 && err_info == cb[t].info && !strcmp(err_name, "cblas_sgemm"),
              "cblas case %zu: info %ld want %d", t, err_info, cb[t].info);
    }
    /* Row-major: the checks run on the column-major problem it becomes (A<->B, M<->N), and
     * report positions that cblas_xerbla maps back when RowMajorStrg is set: M bad gives 5,
     * N bad 4, lda bad 11, ldb bad 9, as the reference CBLAS passes them. */
    struct { int m, n, k, lda, ldb, ldc, info; } rm[] = {
        {-1, 0, 0, 1, 1, 1, 5}, {0, -1, 0, 1, 1, 1, 4}, {0, 0, -1, 1, 1, 1, 6},
        {0, 0, 2, 1, 1, 1, 11}, /* A is 0 x 2 row-major: lda >= 2 */
        {0, 2, 0, 1, 1, 1, 9},  /* B is 0 x 2: ldb >= 2 */
        {0, 2, 0, 1, 2, 1, 14}, /* C is 0 x 2: ldc >= 2 */
    };
    for (size_t t = 0; t < sizeof rm / sizeof *rm; t++) {
        reset_err();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rm[t].m, rm[t].n, rm[t].k, 1.0,
                    (double *)a, rm[t].lda, (double *)b, rm[t].ldb, 0.0, (double *)c, rm[t].ldc);
        CHECK(err_calls == 1 && err_info == rm[t].info && !strcmp(err_name, "cblas_dgemm"),
              "row-major case %zu: calls %d info %ld want %d", t, err_calls, err_info, rm[t].info);
    }
}

/* Quick returns: nothing is read or written; NULL A, B (and C where m or n is 0) would crash. */
static void check_quick_returns(void)
{
    float c[4] = {1, 2, 3, 4}, one = 1, zero = 0;
    int z = 0, two = 2, one_i = 1;
    reset_err();
    sgemm_("N", "N", &z, &two, &two, &one, NULL, &one_i, NULL, &two, &zero, NULL, &one_i, 1, 1);
    sgemm_("N", "N", &two, &z, &two, &one, NULL, &two, NULL, &two, &zero, NULL, &two, 1, 1);
    CHECK(err_calls == 0, "m = 0 / n = 0 raised an error");
    CHECK(fastgemm_last_backend() == FASTGEMM_BACKEND_NONE, "m = 0: backend");
    sgemm_("N", "N", &two, &two, &two, &zero, NULL, &two, NULL, &two, &one, c, &two, 1, 1);
    CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4, "alpha = 0, beta = 1 changed C");
    CHECK(fastgemm_last_backend() == FASTGEMM_BACKEND_NONE, "alpha = 0, beta = 1: backend");
    sgemm_("N", "N", &two, &two, &z, &one, NULL, &two, NULL, &one_i, &one, c, &two, 1, 1);
    CHECK(c[0] == 1 && c[3] == 4, "k = 0, beta = 1 changed C");
    int64_t z64 = 0, two64 = 2;
    double dc[4] = {1, 2, 3, 4}, done = 1;
    dgemm_64_("T", "T", &two64, &two64, &z64, &done, NULL, &two64, NULL, &two64, &done, dc,
              &two64, 1, 1);
    CHECK(dc[0] == 1 && dc[3] == 4, "dgemm_64_ k = 0, beta = 1 changed C");
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 0, 5, 5, 1, NULL, 1, NULL, 5, 0, NULL, 5);
    CHECK(err_calls == 0, "cblas quick return raised an error");
}

static int expect_gpu(void) { return mode_is("gpu"); }

/* beta = 0 never reads C; alpha = 0 never reads A or B; k = 0 scales C. */
#define CHECK_SPECIAL(T, CALL, NAIVE)                                                           \
    do {                                                                                        \
        enum { M = 37, N = 29, K = 19 };                                                        \
        T a[M * K], b[K * N], c[M * N], want[M * N];                                            \
        rng_t r = {12345};                                                                      \
        for (api_t api = 0; api < API_COUNT; api++) {                                           \
            for (int i = 0; i < M * K; i++) a[i] = (T)rng_uniform(&r);                          \
            for (int i = 0; i < K * N; i++) b[i] = (T)rng_uniform(&r);                          \
            for (int i = 0; i < M * N; i++) c[i] = (T)NAN;                                      \
            for (int i = 0; i < M * N; i++) want[i] = 0;                                        \
            NAIVE('N', 'N', M, N, K, (T)1.5, a, M, b, K, (T)0, want, M);                        \
            CHECK(CALL(api, 'N', 'N', M, N, K, (T)1.5, a, M, b, K, (T)0, c, M) == 0, #T " %s: an error returned", api_names[api]); \
            int bad = 0;                                                                        \
            for (int i = 0; i < M * N; i++)                                                     \
                bad += !(fabs((double)c[i] - (double)want[i]) <= 1e-5 * (fabs((double)want[i]) + 1)); \
            CHECK(!bad, #T " %s beta = 0 with NaN in C: %d wrong entries", api_names[api], bad); \
            CHECK(!expect_gpu() || fastgemm_last_backend() == FASTGEMM_BACKEND_GPU,             \
                  #T " %s beta = 0: backend %s", api_names[api],                                \
                  fastgemm_backend_name(fastgemm_last_backend()));                              \
                                                                                                \
            for (int i = 0; i < M * K; i++) a[i] = (T)NAN;                                      \
            for (int i = 0; i < K * N; i++) b[i] = (T)NAN;                                      \
            for (int i = 0; i < M * N; i++) c[i] = want[i] = (T)rng_uniform(&r);                \
            CHECK(CALL(api, 'T', 'N', M, N, K, (T)0, a, K, b, K, (T)-1.25, c, M) == 0, #T " %s: an error returned", api_names[api]); \
            bad = 0;                                                                            \
            for (int i = 0; i < M * N; i++) bad += !(c[i] == (T)-1.25 * want[i]);               \
            CHECK(!bad, #T " %s alpha = 0 with NaN in A, B: %d wrong entries", api_names[api], bad); \
            CHECK(!expect_gpu() || fastgemm_last_backend() == FASTGEMM_BACKEND_GPU,             \
                  #T " %s alpha = 0: backend %s", api_names[api],                               \
                  fastgemm_backend_name(fastgemm_last_backend()));                              \
            for (int i = 0; i < M * N; i++) c[i] = (T)NAN;                                      \
            CHECK(CALL(api, 'N', 'T', M, N, K, (T)0, a, M, b, N, (T)0, c, M) == 0, #T " %s: an error returned", api_names[api]); \
            bad = 0;                                                                            \
            for (int i = 0; i < M * N; i++) bad += !(c[i] == 0);                                \
            CHECK(!bad, #T " %s alpha = 0, beta = 0, NaN everywhere: %d nonzero", api_names[api], bad); \
            for (int i = 0; i < M * N; i++) c[i] = want[i] = (T)rng_uniform(&r);                \
            CHECK(CALL(api, 'N', 'N', M, N, 0, (T)2, a, M, b, 1, (T)0.5, c, M) == 0, #T " %s: an error returned", api_names[api]); \
            bad = 0;                                                                            \
            for (int i = 0; i < M * N; i++) bad += !(c[i] == (T)0.5 * want[i]);                 \
            CHECK(!bad, #T " %s k = 0: %d wrong entries", api_names[api], bad);                 \
        }                                                                                       \
    } while (0)

/* fastgemm_*gemm_stream: argument errors as the C API; host operands refused with C untouched;
 * on a GPU, a right C on device memory once the stream is synchronized, and then from sgemm_. */
static void check_stream_api(void)
{
    enum { M = 70, N = 33, K = 129 };
    float a[M * K], b[K * N], c[M * N], want[M * N];
    rng_t r = {99};
    for (int i = 0; i < M * K; i++) a[i] = (float)rng_uniform(&r);
    for (int i = 0; i < K * N; i++) b[i] = (float)rng_uniform(&r);
    for (int i = 0; i < M * N; i++) c[i] = want[i] = (float)rng_uniform(&r);
    CHECK(fastgemm_sgemm_stream(NULL, FASTGEMM_OP_N, FASTGEMM_OP_N, M, N, K, 1, a, M - 1, b, K,
                                0, c, M) == -8,
          "stream API: bad lda");
    CHECK(fastgemm_dgemm_stream(NULL, (fastgemm_op)'x', FASTGEMM_OP_N, 1, 1, 1, 1, NULL, 1, NULL,
                                1, 0, NULL, 1) == -1,
          "stream API: bad transa");
    ref_naive_sgemm('N', 'N', M, N, K, 1.5f, a, M, b, K, -0.5f, want, M);
    /* Host operands are refused (with or without a GPU), C untouched. */
    float before[M * N];
    memcpy(before, c, sizeof c);
    int st = fastgemm_sgemm_stream(NULL, FASTGEMM_OP_N, FASTGEMM_OP_N, M, N, K, 1.5f, a, M, b, K,
                                   -0.5f, c, M);
    CHECK(st == FASTGEMM_ERROR_FAILED && !memcmp(before, c, sizeof c),
          "stream API on host memory: status %d, C %s", st,
          memcmp(before, c, sizeof c) ? "changed" : "untouched");
    if (!test_gpu_present()) return;
    float *da = test_alloc(sizeof a, 0), *db = test_alloc(sizeof b, 0), *dc = test_alloc(sizeof c, 0);
    if (!da || !db || !dc || test_copy(da, a, sizeof a) || test_copy(db, b, sizeof b) ||
        test_copy(dc, c, sizeof c)) {
        CHECK(0, "stream API: device memory");
        return;
    }
    st = fastgemm_sgemm_stream(NULL, FASTGEMM_OP_N, FASTGEMM_OP_N, M, N, K, 1.5f, da, M, db, K,
                               -0.5f, dc, M);
    CHECK(st == 0 && !test_sync() && !test_copy(c, dc, sizeof c), "stream API: status %d", st);
    int bad = 0;
    for (int i = 0; i < M * N; i++)
        bad += !(fabs((double)c[i] - want[i]) <= 2.0 * (K + 2) * 1.2e-7 * (1.5 * K + 0.5));
    CHECK(!bad, "stream API on the GPU: %d wrong entries", bad);
    CHECK(fastgemm_last_backend() == FASTGEMM_BACKEND_GPU, "stream API: backend %s",
          fastgemm_backend_name(fastgemm_last_backend()));
    /* sgemm_ on the same device memory, in place on the GPU in every mode. Under
     * FASTGEMM_MODE=cpu this process loaded CUDA only now (test_gpu_present), after the library
     * had seen host operands alone: the driver it looked for then must be found now. */
    const int m = M, n = N, k = K;
    const float alpha = 1.5f, beta = 0;
    sgemm_("N", "N", &m, &n, &k, &alpha, da, &m, db, &k, &beta, dc, &m, 1, 1);
    CHECK(fastgemm_last_backend() == FASTGEMM_BACKEND_GPU, "sgemm_ on device memory: backend %s",
          fastgemm_backend_name(fastgemm_last_backend()));
    for (int i = 0; i < M * N; i++) want[i] = 0;
    ref_naive_sgemm('N', 'N', M, N, K, 1.5f, a, M, b, K, 0, want, M);
    CHECK(!test_copy(c, dc, sizeof c), "sgemm_ on device memory: copy back");
    bad = 0;
    for (int i = 0; i < M * N; i++)
        bad += !(fabs((double)c[i] - want[i]) <= 2.0 * (K + 2) * 1.2e-7 * (1.5 * K));
    CHECK(!bad, "sgemm_ on device memory: %d wrong entries", bad);
    test_free(da);
    test_free(db);
    test_free(dc);
}

/* fastgemm_set_mode: a bad name changes nothing; "cpu" and "gpu" take effect at the next call
 * (the GPU, or the CPU after it on a machine without one); the environment's mode restored. */
static void check_set_mode(void)
{
    enum { N = 40 };
    float a[N * N], b[N * N], c[N * N], want[N * N];
    rng_t r = {777};
    for (int i = 0; i < N * N; i++) a[i] = (float)rng_uniform(&r), b[i] = (float)rng_uniform(&r);
    for (int i = 0; i < N * N; i++) want[i] = 0;
    ref_naive_sgemm('N', 'N', N, N, N, 1, a, N, b, N, 0, want, N);
    CHECK(fastgemm_set_mode("fastest") == -1 && fastgemm_set_mode(NULL) == -1, "set_mode accepted a bad name");
    const char *modes[] = {"cpu", "GPU"};
    for (int t = 0; t < 2; t++) {
        CHECK(fastgemm_set_mode(modes[t]) == 0, "set_mode(%s) refused", modes[t]);
        for (int i = 0; i < N * N; i++) c[i] = (float)NAN;
        CHECK(call_sgemm(API_F77, 'N', 'N', N, N, N, 1, a, N, b, N, 0, c, N) == 0, "set_mode: an error returned");
        int bad = 0;
        for (int i = 0; i < N * N; i++) bad += !(fabs(c[i] - want[i]) <= 1e-5 * (fabs(want[i]) + 1));
        const fastgemm_backend got = fastgemm_last_backend();
        const fastgemm_backend expect = t == 0 ? FASTGEMM_BACKEND_CPU
                                        : test_gpu_present() ? FASTGEMM_BACKEND_GPU
                                                             : FASTGEMM_BACKEND_CPU_FALLBACK;
        CHECK(!bad, "set_mode(%s): %d wrong entries", modes[t], bad);
        CHECK(got == expect, "set_mode(%s): backend %s", modes[t], fastgemm_backend_name(got));
    }
    const char *env = getenv("FASTGEMM_MODE");
    if (!env || fastgemm_set_mode(env) != 0) fastgemm_set_mode("auto");
}

int main(void)
{
    if (mode_is("gpu") && !test_gpu_present()) {
        printf("no CUDA device: skipped\n");
        return TEST_SKIP;
    }
    check_errors();
    check_quick_returns();
    CHECK_SPECIAL(float, call_sgemm, ref_naive_sgemm);
    CHECK_SPECIAL(double, call_dgemm, ref_naive_dgemm);
    check_stream_api();
    check_set_mode();
    printf("test_args: %d checks, %d failed\n", checks, fails);
    return fails ? 1 : 0;
}
