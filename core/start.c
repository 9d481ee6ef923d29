/* start.c: the GPU's start, off the calling thread. The first call in auto mode that may want
 * the GPU (host operands, not a small call) starts a thread that probes the devices, runs one
 * small GEMM of each precision through the host-operand pipeline (which sets up the CUDA
 * context, the pinned staging ring, the device memory pool, the staging threads and the
 * kernels), and then takes the cost profile from its file or, where there is none, measures it
 * (core/calibrate.c). Until the GPU is set up the calls go to the CPU BLAS, except large ones,
 * which may wait for it a bounded time (FASTGEMM_START_WAIT_MS; core/dispatch.c); from then until
 * the profile is ready a cautious default model decides (core/model.c). */
#define _GNU_SOURCE
#include "backends/backend.h"
#include "core/dispatch.h"
#include "core/model.h"
#include "core/settings.h"
#include "core/trace.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* prof, state, have_thread */
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER; /* started or state changed */
static fg_profile prof;
static enum { NONE, STARTING, READY, FAILED } state;
static atomic_int started; /* the GPU is set up */
static atomic_int stop;    /* the process is exiting: the start gives up at its next step */
static pthread_t thread;
static int have_thread; /* thread is this process's, and not yet joined */
static int start_device;
static fg_abi start_abi;

/* One 256^3 call of each precision on host operands, through the pipeline, each one's seconds
 * in ms[dt]: 0, or -1. */
static int warm_up(const fg_settings *s, int device, fg_abi abi, double ms[2])
{
    const int64_t n = 256;
    double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
           *c = malloc(sizeof(double) * n * n);
    int rc = a && b && c ? 0 : -1;
    for (int64_t i = 0; rc == 0 && i < n * n; i++) a[i] = b[i] = 1e-3 * (double)(i % 17);
    for (int dt = 0; rc == 0 && dt < 2 && !atomic_load(&stop); dt++) {
        fg_gemm_args g = {dt ? FG_F64 : FG_F32, 'N', 'N', n, n, n, n, n, n, 1.0, 0.0, a, b, c,
                          "warm-up", abi};
        fg_call call = {&g, {FG_MEM_HOST, FG_MEM_HOST, FG_MEM_HOST, -1, NULL}, device, s, 0,
                        fg_cpu_gemm, fg_active_calls};
        char why[256];
        const double t0 = fg_now_s();
        if (fg_gpu_gemm(&call, why, sizeof why) != FG_OK) rc = -1;
        ms[dt] = 1e3 * (fg_now_s() - t0);
    }
    free(a);
    free(b);
    free(c);
    return rc;
}

static void finish(int ok, const fg_profile *p)
{
    pthread_mutex_lock(&lock);
    if (ok && p) prof = *p;
    if (state == STARTING && (!ok || p)) state = ok ? READY : FAILED;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

/* At exit the start stops at its next step and is waited for: a thread still inside CUDA while
 * the process tears CUDA down would crash it. Registered twice: before the thread starts, and
 * again by the thread after its first CUDA call, so that it also runs before CUDA's own
 * teardown (exit handlers run in the reverse order of their registration). */
static void stop_start(void)
{
    atomic_store(&stop, 1);
    pthread_mutex_lock(&lock);
    const int join = have_thread && !pthread_equal(thread, pthread_self());
    have_thread = 0;
    pthread_mutex_unlock(&lock);
    if (join) pthread_join(thread, NULL);
}

static void *run(void *arg)
{
    (void)arg;
    const fg_settings *s = fg_settings_get();
    int device = start_device;
    const fg_abi abi = start_abi;
    const double t0 = fg_now_s();
    const int usable = fg_gpu_usable(&device);
    const double probe_ms = 1e3 * (fg_now_s() - t0);
    atexit(stop_start);
    double ms[2] = {0, 0};
    if (!usable || atomic_load(&stop) || warm_up(s, device, abi, ms) != 0) {
        finish(0, NULL);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    atomic_store(&started, 1);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    const double t1 = fg_now_s();
    char path[1200];
    fg_profile_path(s, device, abi, path, sizeof path);
    fg_profile p;
    const int loaded = fg_profile_load(&p, path) == 0;
    int ok = loaded;
    if (!loaded) {
        const fg_measure how = {device, 1, abi, &stop};
        ok = fg_measure_profile(s, &how, &p) == 0;
    }
    finish(ok, ok ? &p : NULL);
    fg_trace_note(s, "gpu-start device=%d probe=%.1f ms sgemm=%.1f ms dgemm=%.1f ms profile=%s %.1f ms",
                  device, probe_ms, ms[0], ms[1], loaded ? "loaded" : ok ? "measured" : "failed",
                  1e3 * (fg_now_s() - t1));
    if (loaded) return NULL;
    if (ok && fg_profile_save(&p, path) != 0 && path[0])
        fg_warn("the GPU/CPU cost profile cannot be written to %s", path);
    return NULL;
}

/* A child forked during the start has no such thread (and no CUDA). */
static void child_after_fork(void)
{
    have_thread = 0;
    if (state == STARTING) state = FAILED;
}

int fg_profile_get(const fg_settings *s, int device, int start, fg_abi abi, fg_profile *p)
{
    (void)s;
    pthread_mutex_lock(&lock);
    if (state == NONE && start) {
        static int registered;
        if (!registered) {
            registered = 1;
            atexit(stop_start);
            pthread_atfork(NULL, NULL, child_after_fork);
        }
        start_device = device;
        start_abi = abi;
        if (pthread_create(&thread, NULL, run, NULL) == 0) {
            have_thread = 1;
            state = STARTING;
        } else {
            state = FAILED;
        }
    }
    const int ready = state == READY;
    if (ready) *p = prof;
    pthread_mutex_unlock(&lock);
    return ready;
}

int fg_gpu_started(void) { return atomic_load(&started); }

int fg_gpu_start_wait(double seconds)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    const double end = (double)until.tv_sec + 1e-9 * (double)until.tv_nsec + seconds;
    until.tv_sec = (time_t)end;
    until.tv_nsec = (long)((end - (double)until.tv_sec) * 1e9);
    pthread_mutex_lock(&lock);
    while (state == STARTING && !atomic_load(&started))
        if (pthread_cond_timedwait(&changed, &lock, &until) == ETIMEDOUT) break;
    pthread_mutex_unlock(&lock);
    return atomic_load(&started);
}

void fg_profile_set(const fg_profile *p)
{
    pthread_mutex_lock(&lock);
    prof = *p;
    state = READY;
    pthread_mutex_unlock(&lock);
}
