/* test_threads.c: concurrent callers, and fork().
 *   test_threads threads  (gpu) 16 threads at once, each a run of sgemm_/dgemm_ calls of mixed
 *                         shapes, transposes and operand places (host, device, and mixes such
 *                         as A on the device with B and C on the host), each checked against
 *                         OpenBLAS and for the backend that ran.
 *   test_threads fork     (gpu) a GEMM on the GPU, then fork(): the child's GEMMs are right
 *                         (on the CPU: CUDA does not survive fork), the parent's next GEMM runs
 *                         on the GPU again, and both processes exit cleanly.
 *   test_threads fork-inflight  (gpu) fork() while another thread is inside a GEMM on the GPU
 *                         (sgemm_ 4096^3 on host operands, back to back):
 *                         fork returns, the child's GEMMs are right (on the CPU), the child
 *                         ends through exit() (the exit handlers it inherited run, the one that
 *                         waits for GEMMs on the GPU among them), the other thread's GEMMs are
 *                         right, and both processes exit cleanly.
 *   test_threads exit-inflight  (gpu) main returns while another thread is inside a GEMM on the
 *                         GPU (the thread's last: it starts no other), in 16 fresh processes,
 *                         each at another moment of the GEMM (from 0 to 20 ms into it: its
 *                         copies in, its kernels, its copies out): each exits with main's
 *                         status (0), without hanging or crashing (CTest's timeout catches a
 *                         hang).
 *   test_threads omp      the same calls from the 16 threads of the program's own OpenMP
 *                         parallel region (host operands only where there is no GPU; the backend
 *                         expected is the GPU, except for host operands under FASTGEMM_MODE=cpu,
 *                         where it is the CPU: device operands go to the GPU in every mode); the
 *                         process's peak thread count stays within the callers, one staging pool
 *                         and one CPU BLAS pool (plus the CUDA runtime's few). */
#include "../cpu_ref/ref.h"
#include "testutil.h"

#include <float.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { THREADS = 16, CALLS = 6 };
static pthread_mutex_t ref_lock = PTHREAD_MUTEX_INITIALIZER; /* the reference runs one at a time */
static fastgemm_backend expected = FASTGEMM_BACKEND_GPU;
static int gpu = 1; /* operands may be placed on the device */

typedef struct {
    int id, fails;
} worker_t;

/* One call: random shape and transposes; `where` bit 0/1/2: A/B/C on the device. */
static int one_call(rng_t *r, int dbl, int where, int64_t m, int64_t n, int64_t k, const char *tag)
{
    const size_t es = dbl ? 8 : 4;
    char ta = rng_below(r, 2) ? 'T' : 'N', tb = rng_below(r, 2) ? 'T' : 'N';
    int64_t lda = (ta == 'N' ? m : k) + rng_below(r, 3), ldb = (tb == 'N' ? k : n) + rng_below(r, 3);
    int64_t ldc = m + rng_below(r, 3);
    int64_t na = lda * (ta == 'N' ? k : m), nb = ldb * (tb == 'N' ? n : k), nc = ldc * n;
    double alpha = 0.5 + rng_uniform(r), beta = rng_below(r, 2) ? 0.0 : 0.7;
    char *a = malloc(na * es), *b = malloc(nb * es), *c = malloc(nc * es), *want = malloc(nc * es);
    for (int64_t i = 0; i < na; i++) dbl ? (((double *)a)[i] = rng_uniform(r)) : (((float *)a)[i] = (float)rng_uniform(r));
    for (int64_t i = 0; i < nb; i++) dbl ? (((double *)b)[i] = rng_uniform(r)) : (((float *)b)[i] = (float)rng_uniform(r));
    for (int64_t i = 0; i < nc; i++) dbl ? (((double *)c)[i] = rng_uniform(r)) : (((float *)c)[i] = (float)rng_uniform(r));
    memcpy(want, c, nc * es);
    pthread_mutex_lock(&ref_lock);
    if (dbl) ref_dgemm(ta, tb, m, n, k, alpha, (double *)a, lda, (double *)b, ldb, beta, (double *)want, ldc);
    else ref_sgemm(ta, tb, m, n, k, (float)alpha, (float *)a, lda, (float *)b, ldb, (float)beta, (float *)want, ldc);
    pthread_mutex_unlock(&ref_lock);

    void *pa = a, *pb = b, *pc = c;
    if (where & 1) { pa = test_alloc(na * es, 0); test_copy(pa, a, na * es); }
    if (where & 2) { pb = test_alloc(nb * es, 0); test_copy(pb, b, nb * es); }
    if (where & 4) { pc = test_alloc(nc * es, 0); test_copy(pc, c, nc * es); }
    int im = (int)m, in = (int)n, ik = (int)k, ilda = (int)lda, ildb = (int)ldb, ildc = (int)ldc;
    if (dbl) dgemm_(&ta, &tb, &im, &in, &ik, &alpha, pa, &ilda, pb, &ildb, &beta, pc, &ildc, 1, 1);
    else {
        float fa = (float)alpha, fb = (float)beta;
        sgemm_(&ta, &tb, &im, &in, &ik, &fa, pa, &ilda, pb, &ildb, &fb, pc, &ildc, 1, 1);
    }
    fastgemm_backend be = fastgemm_last_backend();
    if (where & 4) test_copy(c, pc, nc * es);
    if (where & 1) test_free(pa);
    if (where & 2) test_free(pb);
    if (where & 4) test_free(pc);

    /* The netlib gauge: |error| <= (k + 2) eps (|alpha| k + |beta|), entries in [-1, 1). */
    double eps = dbl ? DBL_EPSILON : FLT_EPSILON, tol = 2 * (k + 2) * eps * (fabs(alpha) * k + 1), worst = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            int64_t x = i + j * ldc;
            double got = dbl ? ((double *)c)[x] : ((float *)c)[x];
            double ref = dbl ? ((double *)want)[x] : ((float *)want)[x];
            double e = fabs(got - ref);
            if (!(e <= worst)) worst = e;
        }
    /* Rows m..ldc-1 of C are never written. */
    int pad_ok = 1;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = m; i < ldc; i++)
            pad_ok &= !memcmp(c + (i + j * ldc) * es, want + (i + j * ldc) * es, es);
    /* Under FASTGEMM_MODE=cpu, device operands still go to the GPU (the CPU cannot read them). */
    const fastgemm_backend want_be = where && expected == FASTGEMM_BACKEND_CPU ? FASTGEMM_BACKEND_GPU : expected;
    int ok = worst <= tol && pad_ok && be == want_be;
    if (!ok)
        printf("FAIL %s: %cgemm %c%c m=%lld n=%lld k=%lld where=%d err %.2e (bound %.2e) pad %s backend %s\n",
               tag, dbl ? 'd' : 's', ta, tb, (long long)m, (long long)n, (long long)k, where, worst, tol,
               pad_ok ? "ok" : "written", fastgemm_backend_name(be));
    free(a), free(b), free(c), free(want);
    return !ok;
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    rng_t r = {1000 + (uint64_t)w->id};
    static const int64_t sizes[] = {1, 37, 128, 300, 513, 777};
    for (int i = 0; i < CALLS; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "thread %d call %d", w->id, i);
        int64_t m = sizes[rng_below(&r, 6)], n = sizes[rng_below(&r, 6)], k = sizes[rng_below(&r, 6)];
        w->fails += one_call(&r, rng_below(&r, 2), gpu ? (w->id + i) % 8 : 0, m, n, k, tag);
    }
    return NULL;
}

/* The process's thread count, from /proc/self/status (0 when unknown). */
static int thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    if (f) fclose(f);
    return n;
}

static atomic_int sampling, peak_threads;
static void *sampler(void *arg)
{
    (void)arg;
    while (atomic_load(&sampling)) {
        int n = thread_count();
        if (n > atomic_load(&peak_threads)) atomic_store(&peak_threads, n);
        usleep(500);
    }
    return NULL;
}

static int omp_callers(void)
{
#ifdef _OPENMP
    worker_t w[THREADS];
    int fails = 0, before = thread_count();
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    pthread_t s;
    atomic_store(&sampling, 1);
    pthread_create(&s, NULL, sampler, NULL);
#pragma omp parallel num_threads(THREADS)
    {
        int id = omp_get_thread_num();
        w[id] = (worker_t){id, 0};
        worker(&w[id]);
    }
    atomic_store(&sampling, 0);
    pthread_join(s, NULL);
    for (int i = 0; i < THREADS; i++) fails += w[i].fails;
    /* The callers (the region's threads), one staging pool and one CPU BLAS pool of at most a
     * thread per CPU each, the sampler, and the CUDA runtime's own few. */
    const int bound = before + THREADS + 2 * (int)cpus + 1 + 16, peak = atomic_load(&peak_threads);
    printf("test_threads omp: %d OpenMP threads x %d calls, %d failed; threads: %d before, peak %d "
           "(bound %d)\n", THREADS, CALLS, fails, before, peak, bound);
    if (peak > bound) {
        printf("FAIL: %d threads at the peak\n", peak);
        fails++;
    }
    return fails != 0;
#else
    printf("FAIL: built without OpenMP\n");
    return 1;
#endif
}

/* The GEMMs in flight: sgemm_ calls of 4096^3 on host operands (on the GPU under
 * FASTGEMM_MODE=gpu), back to back until `stop`, each checked at 256 entries against one
 * reference computed first. inflight_inside is 1 from just before a call until it returns. */
enum { INFLIGHT_N = 4096 };
static atomic_int inflight_inside, inflight_stop, inflight_calls;
static void *inflight_worker(void *arg)
{
    worker_t *w = arg;
    const int n = INFLIGHT_N;
    const size_t count = (size_t)n * n;
    float *a = malloc(count * 4), *b = malloc(count * 4), *c = malloc(count * 4), *want = malloc(count * 4);
    rng_t r = {99};
    for (size_t i = 0; i < count; i++) a[i] = (float)rng_uniform(&r), b[i] = (float)rng_uniform(&r);
    ref_sgemm('N', 'N', n, n, n, 1, a, n, b, n, 0, want, n);
    const float one = 1, zero = 0;
    while (!atomic_load(&inflight_stop)) {
        atomic_store(&inflight_inside, 1);
        sgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
        atomic_store(&inflight_inside, 0);
        int bad = 0;
        for (int s = 0; s < 256; s++) {
            const size_t i = ((size_t)s * 2654435761u + (size_t)atomic_load(&inflight_calls)) % count;
            bad += !(fabs(c[i] - want[i]) <= 2.0 * (n + 2) * FLT_EPSILON * n);
        }
        if (bad) printf("FAIL: GEMM %d in flight: %d of 256 entries wrong\n", atomic_load(&inflight_calls), bad);
        w->fails += bad != 0;
        atomic_fetch_add(&inflight_calls, 1);
    }
    free(a), free(b), free(c), free(want);
    return NULL;
}

/* A child with CUDA unusable: three small GEMMs, right and computed on the CPU. */
static int child_gemms(rng_t *r)
{
    int cf = 0;
    for (int i = 0; i < 3; i++) {
        float a[64 * 64], b[64 * 64], c[64 * 64], want[64 * 64];
        for (int j = 0; j < 64 * 64; j++) a[j] = (float)rng_uniform(r), b[j] = (float)rng_uniform(r);
        memset(want, 0, sizeof want);
        ref_sgemm('N', 'N', 64, 64, 64, 1, a, 64, b, 64, 0, want, 64);
        fastgemm_sgemm(FASTGEMM_OP_N, FASTGEMM_OP_N, 64, 64, 64, 1, a, 64, b, 64, 0, c, 64);
        for (int j = 0; j < 64 * 64; j++) cf += !(fabs(c[j] - want[j]) <= 1e-4);
        cf += fastgemm_last_backend() != FASTGEMM_BACKEND_CPU_FALLBACK;
    }
    printf("child: %s\n", cf ? "FAIL" : "ok");
    fflush(stdout);
    return cf;
}

/* Starts the in-flight worker and waits until it has made one GEMM (the GPU is set up) and is
 * inside another, delay_us into it (a call takes several ms). */
static void start_inflight(pthread_t *t, worker_t *w, long delay_us)
{
    *w = (worker_t){0, 0};
    pthread_create(t, NULL, inflight_worker, w);
    while (atomic_load(&inflight_calls) < 1 || !atomic_load(&inflight_inside))
        nanosleep(&(struct timespec){0, 200000}, NULL);
    nanosleep(&(struct timespec){delay_us / 1000000, delay_us % 1000000 * 1000}, NULL);
}

static int fork_inflight(void)
{
    pthread_t t;
    worker_t w;
    rng_t r = {8};
    start_inflight(&t, &w, 2000);
    fflush(stdout);
    const int calls_before = atomic_load(&inflight_calls);
    pid_t pid = fork();
    if (pid == 0) exit(child_gemms(&r) != 0);
    int fails = 0, status = 0;
    printf("fork returned; the other thread had made %d GEMM(s) and was %s one\n", calls_before,
           calls_before == atomic_load(&inflight_calls) ? "inside" : "past");
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
        printf("FAIL: the child did not exit cleanly (status %d)\n", status);
        fails++;
    }
    while (atomic_load(&inflight_calls) < calls_before + 2) nanosleep(&(struct timespec){0, 1000000}, NULL);
    atomic_store(&inflight_stop, 1);
    pthread_join(t, NULL);
    fails += w.fails;
    printf("test_threads fork-inflight: %d GEMMs in the other thread, %d wrong: %s\n",
           atomic_load(&inflight_calls), w.fails, fails ? "FAIL" : "ok");
    return fails != 0;
}

/* One process's part: main returns delay_us into a GEMM of the other thread, its last. (A
 * thread that goes on calling the CPU BLAS while the process exits races the CPU BLAS's own
 * teardown, with or without this library.) */
static int exit_inflight_once(long delay_us)
{
    pthread_t t;
    static worker_t w; /* the worker still writes it while the process exits */
    start_inflight(&t, &w, delay_us);
    atomic_store(&inflight_stop, 1);
    const int inside = atomic_load(&inflight_inside);
    printf("%5.1f ms: main returns %s a GEMM (%d done before, %d wrong)\n", delay_us * 1e-3,
           inside ? "inside" : "between", atomic_load(&inflight_calls), w.fails);
    fflush(stdout);
    return w.fails != 0;
}

/* Each moment in a fresh process (exec'd: CUDA does not survive fork), whose exit status must
 * be 0. */
static int exit_inflight(void)
{
    static const long delays_us[] = {0,    250,  500,  1000, 1500,  2000,  3000,  4000,
                                     5000, 6000, 7000, 8000, 10000, 12000, 15000, 20000};
    const int count = (int)(sizeof delays_us / sizeof delays_us[0]);
    int fails = 0;
    for (int i = 0; i < count; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "%ld", delays_us[i]);
        fflush(stdout);
        const pid_t pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", "test_threads", "exit-inflight-once", arg, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
            if (pid > 0 && WIFSIGNALED(status))
                printf("FAIL: the process returning at %ld us died of signal %d\n", delays_us[i], WTERMSIG(status));
            else
                printf("FAIL: the process returning at %ld us did not exit with 0 (status %d)\n", delays_us[i], status);
            fails++;
        }
    }
    printf("test_threads exit-inflight: %d of %d processes exited cleanly: %s\n", count - fails, count,
           fails ? "FAIL" : "ok");
    return fails != 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "omp")) {
        gpu = test_gpu_present();
        if (mode_is("cpu")) expected = FASTGEMM_BACKEND_CPU;
        else if (!gpu) {
            printf("no CUDA device: skipped\n");
            return TEST_SKIP;
        }
        if (ref_init()) return 1;
        return omp_callers();
    }
    if (!test_gpu_present()) {
        printf("no CUDA device: skipped\n");
        return TEST_SKIP;
    }
    if (ref_init()) return 1;
    int fails = 0;
    if (argc > 1 && !strcmp(argv[1], "fork-inflight")) return fork_inflight();
    if (argc > 1 && !strcmp(argv[1], "exit-inflight")) return exit_inflight();
    if (argc > 2 && !strcmp(argv[1], "exit-inflight-once")) return exit_inflight_once(atol(argv[2]));
    if (argc > 1 && !strcmp(argv[1], "fork")) {
        rng_t r = {7};
        fails += one_call(&r, 0, 0, 700, 600, 500, "parent before fork");
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) _exit(child_gemms(&r) != 0); /* cpu-fallback under FASTGEMM_MODE=gpu */
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
            printf("FAIL: the child did not exit cleanly (status %d)\n", status);
            fails++;
        }
        fails += one_call(&r, 1, 0, 700, 600, 500, "parent after fork");
        printf("test_threads fork: %s\n", fails ? "FAIL" : "ok");
        return fails != 0;
    }
    pthread_t t[THREADS];
    worker_t w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker_t){i, 0};
        pthread_create(&t[i], NULL, worker, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        fails += w[i].fails;
    }
    printf("test_threads: %d threads x %d calls, %d failed\n", THREADS, CALLS, fails);
    return fails != 0;
}
