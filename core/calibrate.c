/* calibrate.c: measures this machine for the cost model (core/model.c): square calls of the
 * calibration's sizes on the CPU BLAS and on the GPU path (host operands, the whole call timed),
 * the GPU's fixed cost and copy rate, and the kernels' rate on device memory. Run in full by
 * fastgemm_calibrate() (the fastgemm-calibrate tool), or in short by the GPU's start
 * (core/start.c) where a process finds no stored profile. */
#define _GNU_SOURCE
#include "backends/backend.h"
#include "core/dispatch.h"
#include "core/model.h"
#include "core/settings.h"

#include <fastgemm.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUICK_NPTS 9 /* the first-use run stops at 1024 and times each point twice */

/* One measurement at a time: the tool's waits for a background one. */
static pthread_mutex_t measuring = PTHREAD_MUTEX_INITIALIZER;

/* A measurement beside the program's own calls (the GPU's start measures while the program
 * runs) lets them go first: before each of its calls it waits, up to 20 ms, until none of the
 * program's calls is in progress, so that a program call waits at most for one of its calls
 * (the GPU path is shared) and its samples are taken in the program's gaps. */
static void let_calls_go_first(const atomic_int *stop)
{
    for (int ms = 0; ms < 20 && fg_active_calls() > 0 && !(stop && atomic_load(stop)); ms++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/* The best of `reps` timed calls after one untimed, or of as many as fill 10 ms (at most 200)
 * when that is more: a few calls of a small size catch the CPU BLAS's threads waking up. A
 * sample that a program call shared counts only when no sample was alone. -1 when the GPU
 * failed or the measurement is stopped. */
static double best_time(const fg_settings *s, const fg_gemm_args *g, int gpu, int device, int reps,
                        const atomic_int *stop)
{
    const fg_call call = {g, {FG_MEM_HOST, FG_MEM_HOST, FG_MEM_HOST, -1, NULL}, device, s, 0,
                          fg_cpu_gemm, fg_active_calls};
    char why[256];
    double best = INFINITY, best_shared = INFINITY, spent = 0;
    for (int r = 0; r <= reps || (spent < 0.01 && r <= 200); r++) {
        let_calls_go_first(stop);
        if (stop && atomic_load(stop)) return -1;
        const unsigned begun = fg_calls_begun();
        const int alone = fg_active_calls() == 0;
        double t = fg_now_s();
        if (gpu) {
            if (fg_gpu_gemm(&call, why, sizeof why) != FG_OK) return -1;
        } else {
            fg_cpu_gemm(g);
        }
        t = fg_now_s() - t;
        if (r == 0) continue;
        spent += t;
        if (alone && fg_calls_begun() == begun && fg_active_calls() == 0) best = fmin(best, t);
        else best_shared = fmin(best_shared, t);
    }
    return isfinite(best) ? best : best_shared;
}

/* best_time of the square call n^3 (dt 0: sgemm_, 1: dgemm_) on the calibration's matrices. */
static double square_time(const fg_settings *s, const fg_measure *how, int dt, int64_t n, int gpu,
                          int reps, void *a, void *b, void *c)
{
    fg_gemm_args g = {dt ? FG_F64 : FG_F32, 'N', 'N', n, n, n, n, n, n, 1.0, 0.0, a, b, c, "calibrate",
                      how->abi};
    return best_time(s, &g, gpu, how->device, reps, how->stop);
}

static int measure(const fg_settings *s, fg_profile *p, const fg_measure *how, int verbose)
{
    const int quick = how->quick;
    const int npts = quick ? QUICK_NPTS : FG_PROFILE_NPTS, reps = quick ? 2 : 5;
    const int64_t nmax = fg_profile_sizes[npts - 1], big = 8192;
    /* A and B: nmax^2 doubles; C: the copy-rate call's big x big floats, more than nmax^2. */
    double *a = malloc(sizeof(double) * nmax * nmax), *b = malloc(sizeof(double) * nmax * nmax);
    float *c = malloc(sizeof(float) * big * big);
    int rc = -1;
    if (!a || !b || !c) goto out;
    for (int64_t i = 0; i < nmax * nmax; i++) a[i] = b[i] = 1e-3 * (double)(i % 17);
    memset(c, 0, sizeof(float) * big * big);
    memset(p, 0, sizeof *p);
    /* Every GPU point first, then every CPU point: a CPU BLAS's threads keep spinning for a
     * while after a call, and GPU calls timed right after CPU ones would share the cores with
     * them. */
    for (int gpu = 1; gpu >= 0; gpu--)
        for (int dt = 0; dt < 2; dt++)
            for (int i = 0; i < npts; i++) {
                double t = square_time(s, how, dt, fg_profile_sizes[i], gpu, reps, a, b, c);
                if (t < 0) goto out;
                (gpu ? p->gpu : p->cpu)[dt][i] = t;
            }
    /* Points no machine gives (fg_profile_suspects), measured again (the best of both), up to
     * three passes: the GPU ones first, after the CPU BLAS's threads have stopped spinning. A
     * point that measures the same again (within 10%) is what this machine does and is kept. */
    int kept[2][2][FG_PROFILE_NPTS] = {{{0}}};
    for (int pass = 0; pass < 3; pass++) {
        int again = 0;
        for (int gpu = 1; gpu >= 0; gpu--)
            for (int dt = 0; dt < 2; dt++) {
                double *row = (gpu ? p->gpu : p->cpu)[dt];
                int flag[FG_PROFILE_NPTS];
                if (!fg_profile_suspects(row, npts, flag)) continue;
                for (int i = 0; i < npts; i++) {
                    if (!flag[i] || kept[gpu][dt][i]) continue;
                    if (gpu && !again) nanosleep(&(struct timespec){0, 200000000}, NULL); /* 0.2 s */
                    again = 1;
                    double t = square_time(s, how, dt, fg_profile_sizes[i], gpu, reps, a, b, c);
                    if (t < 0) goto out;
                    kept[gpu][dt][i] = t >= 0.9 * row[i] && t <= 1.1 * row[i];
                    if (verbose)
                        printf("%cgemm_ %lld on the %s again: %.4f ms (was %.4f)\n", dt ? 'd' : 's',
                               (long long)fg_profile_sizes[i], gpu ? "GPU" : "CPU", t * 1e3, row[i] * 1e3);
                    row[i] = fmin(row[i], t);
                }
            }
        if (!again) break;
    }
    for (int dt = 0; dt < 2; dt++) {
        p->t0[dt] = p->gpu[dt][0]; /* a 32^3 call: all fixed cost */
        if (!verbose) continue;
        printf("%s: %6s %12s %12s\n", dt ? "dgemm_" : "sgemm_", "n", "cpu ms", "gpu ms");
        for (int i = 0; i < npts; i++)
            printf("        %6lld %12.4f %12.4f  %s\n", (long long)fg_profile_sizes[i], p->cpu[dt][i] * 1e3,
                   p->gpu[dt][i] * 1e3, p->cpu[dt][i] <= p->gpu[dt][i] ? "cpu" : "gpu");
    }
    /* The copy rate: C (big x big floats) comes out, A and B are thin. */
    fg_gemm_args g = {FG_F32, 'N', 'N', big, big, 16, big, 16, big, 1.0, 0.0, a, b, c, "calibrate",
                      how->abi};
    double t = best_time(s, &g, 1, how->device, reps, how->stop);
    if (t < 0) goto out;
    double bytes = 4.0 * (double)(big * big + 2 * big * 16);
    p->bw = bytes / fmax(t - p->t0[0], 1e-6);
    for (int dt = 0; dt < 2; dt++) {
        let_calls_go_first(how->stop);
        if ((p->kernel[dt] = fg_gpu_kernel_rate(s, how->device, dt ? FG_F64 : FG_F32, 4096)) <= 0) goto out;
    }
    if (verbose)
        printf("GPU fixed cost per call: %.3f ms (sgemm_), %.3f ms (dgemm_); copy rate %.1f GB/s;\n"
               "kernels at n = 4096 on device memory: %.1f TFLOP/s (sgemm), %.1f TFLOP/s (dgemm)\n",
               p->t0[0] * 1e3, p->t0[1] * 1e3, p->bw * 1e-9, p->kernel[0] * 1e-12, p->kernel[1] * 1e-12);
    rc = 0;
out:
    free(a);
    free(b);
    free(c);
    return rc;
}

int fg_measure_profile(const fg_settings *s, const fg_measure *how, fg_profile *p)
{
    pthread_mutex_lock(&measuring);
    const int rc = measure(s, p, how, 0);
    pthread_mutex_unlock(&measuring);
    return rc;
}

FG_EXPORT int fastgemm_calibrate(int verbose)
{
    const fg_settings *s = fg_settings_get();
    int device = fg_default_device(s);
    if (!fg_gpu_usable(&device)) {
        if (verbose) printf("no usable CUDA device: nothing to calibrate (every call runs on the CPU)\n");
        return -1;
    }
    char path[1200];
    fg_profile_path(s, device, FG_ABI_BLAS, path, sizeof path);
    pthread_mutex_lock(&measuring);
    fg_profile p;
    const fg_measure how = {device, 0, FG_ABI_BLAS, NULL};
    int rc = measure(s, &p, &how, verbose);
    if (rc == 0) {
        fg_profile_set(&p);
        if (fg_profile_save(&p, path) != 0) {
            fg_warn("the GPU/CPU cost profile cannot be written to %s", path[0] ? path : "(no cache directory)");
            rc = -1;
        } else if (verbose) {
            printf("profile: %s\n", path);
        }
    }
    pthread_mutex_unlock(&measuring);
    return rc;
}
