/* model.c: FASTGEMM_MODE=auto's choice between the CPU BLAS and the GPU for host operands.
 *
 * A cost model of this machine, per precision:
 *     t_cpu = F / r_cpu(F)
 *     t_gpu = t0 + max(bytes / bw, F / r_gpu(F))
 * F: the call's flops (2mnk); bytes: what crosses PCIe (host A and B in, C out, and in too when
 * beta != 0); r_cpu, r_gpu: the rates of square calls measured on this machine (host operands,
 * the whole call timed, up to n = 2048), interpolated in log F; below the smallest the rate is
 * held, above the largest r_cpu is held and r_gpu is the kernels' own rate on device memory
 * (there the pipeline overlaps copies and kernels, which the max expresses); t0: the GPU
 * path's fixed cost per call; bw: the pipeline's copy rate, from a call that is nearly all
 * copying.
 *
 * The profile is measured by fastgemm_calibrate() (the fastgemm-calibrate tool), or, where
 * there is none, by a short run at the first call large enough to need it. It is kept in
 * $XDG_CACHE_HOME/fastgemm (else ~/.cache/fastgemm) under a name made of the GPU, the CPU, the
 * CPU BLAS and the CPUs the process may use, and read back by later processes. */
#define _GNU_SOURCE
#include "fg.h"

#include <fastgemm.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NPTS 11
static const int64_t sizes[NPTS] = {32, 64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};
#define QUICK_NPTS 9 /* the first-use run stops at 1024 and times each point twice */

typedef struct {
    double t0[2]; /* seconds */
    double bw;    /* bytes per second */
    double kernel[2]; /* flop/s of the kernels on device memory */
    double cpu[2][NPTS], gpu[2][NPTS]; /* seconds per call of sizes[i]^3; 0: not measured */
} profile_t;

static profile_t prof;
static int prof_state; /* 0: not yet, 1: ready, -1: none to be had (GPU failed) */
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- where the profile lives ---- */

static void append_key(char *key, size_t len, const char *part)
{
    size_t n = strlen(key);
    if (n && n + 1 < len) key[n++] = '_';
    for (; *part && n + 1 < len; part++) {
        char c = *part;
        if (!isalnum((unsigned char)c)) c = '-';
        if (c == '-' && n && (key[n - 1] == '-' || key[n - 1] == '_')) continue;
        key[n++] = c;
    }
    key[n] = 0;
}

/* "" when there is no cache directory to be had. */
static void profile_path(int device, char *path, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[1024];
    path[0] = 0;
    if (xdg && *xdg) snprintf(dir, sizeof dir, "%s/fastgemm", xdg);
    else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache/fastgemm", home);
    else return;

    char key[512] = "", gpu[256], cpu[256] = "cpu", line[512];
    fg_gpu_name(device, gpu, sizeof gpu);
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && colon) {
            snprintf(cpu, sizeof cpu, "%s", colon + 2);
            cpu[strcspn(cpu, "\n")] = 0;
            break;
        }
    }
    if (f) fclose(f);
    cpu_set_t set;
    int ncpu = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    char count[64];
    const char *threads = getenv("OPENBLAS_NUM_THREADS");
    snprintf(count, sizeof count, "%dcpus%s%s", ncpu, threads && *threads ? "-t" : "",
             threads && *threads ? threads : "");
    append_key(key, sizeof key, gpu[0] ? gpu : "gpu");
    append_key(key, sizeof key, cpu);
    append_key(key, sizeof key, fg_cpu_blas_name());
    append_key(key, sizeof key, count);
    snprintf(path, len, "%s/%s.profile", dir, key);
}

static int make_dirs(const char *path) /* every folder above path's last component */
{
    char p[1200];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    return 0;
}

static int save(const profile_t *p, const char *path)
{
    if (!path[0] || make_dirs(path) != 0) return -1;
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    fprintf(f, "fastgemm-profile 2\nt0 %.9g %.9g\nbw %.9g\nkernel %.9g %.9g\n", p->t0[0], p->t0[1],
            p->bw, p->kernel[0], p->kernel[1]);
    static const char *const names[4] = {"cpu_s", "cpu_d", "gpu_s", "gpu_d"};
    for (int r = 0; r < 4; r++) {
        const double *t = r < 2 ? p->cpu[r] : p->gpu[r - 2];
        fprintf(f, "%s", names[r]);
        for (int i = 0; i < NPTS; i++) fprintf(f, " %.9g", t[i]);
        fputc('\n', f);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int load(profile_t *p, const char *path)
{
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    if (!f) return -1;
    char word[32];
    int version = 0, got = 0;
    if (fscanf(f, "%31s %d", word, &version) != 2 || strcmp(word, "fastgemm-profile") || version != 2) {
        fclose(f);
        return -1;
    }
    while (fscanf(f, "%31s", word) == 1) {
        double *dst = NULL;
        int count = NPTS;
        if (!strcmp(word, "t0")) dst = p->t0, count = 2;
        else if (!strcmp(word, "bw")) dst = &p->bw, count = 1;
        else if (!strcmp(word, "kernel")) dst = p->kernel, count = 2;
        else if (!strcmp(word, "cpu_s")) dst = p->cpu[0];
        else if (!strcmp(word, "cpu_d")) dst = p->cpu[1];
        else if (!strcmp(word, "gpu_s")) dst = p->gpu[0];
        else if (!strcmp(word, "gpu_d")) dst = p->gpu[1];
        if (!dst) break;
        for (int i = 0; i < count; i++)
            if (fscanf(f, "%lf", &dst[i]) != 1 || !(dst[i] >= 0)) goto out;
        got++;
    }
out:
    fclose(f);
    return got == 7 && p->bw > 0 && p->kernel[0] > 0 && p->kernel[1] > 0 && p->t0[0] > 0 && p->t0[1] > 0 ? 0 : -1;
}

/* ---- measuring it ---- */

/* The best of `reps` timed calls after one untimed, or of as many as fill 10 ms (at most 200)
 * when that is more. With 5 calls, one H100 host's profile had sgemm_ 256 at 0.17 ms on the
 * CPU, where the hostbench in the same run measured OpenBLAS at 0.11 ms: the model sent it to
 * the GPU path (0.14 ms). -1 when the GPU failed. */
static double best_time(const fg_gemm_args *g, int gpu, int device, int reps)
{
    fg_operands ops = {FG_MEM_HOST, FG_MEM_HOST, FG_MEM_HOST, -1, NULL};
    char why[256];
    double best = INFINITY, spent = 0;
    for (int r = 0; r <= reps || (spent < 0.01 && r <= 200); r++) {
        double t = fg_now_s();
        if (gpu) {
            if (fg_gpu_gemm(g, &ops, device, why, sizeof why) != FG_GPU_OK) return -1;
        } else {
            fg_cpu_gemm(g);
        }
        t = fg_now_s() - t;
        if (r > 0) spent += t;
        if (r > 0 && t < best) best = t;
    }
    return best;
}

/* The points of one row of the profile (times t of sizes[0..npts-1]) that no machine gives, to
 * be measured again: a call slower than the next larger one by more than 1.2x, or one whose
 * time per flop is 1.25x the next smaller one's (both rates grow with n or stay). A stretch of
 * OpenBLAS at 1.78 ms for sgemm_ 128 (its 192 took 0.067) sent sgemm_ 128 to the GPU path at
 * 2.8x OpenBLAS's time, and a slow stretch of the GPU path (dgemm_ 768-1536 at 2.3 ms where
 * 768 takes 0.71) sent dgemm_ 768 to the CPU at 2.7x (H100 hosts, perf/NOTES.md). Returns how
 * many it flagged. */
int fg_profile_suspects(const double *t, int npts, int *flag)
{
    int count = 0;
    for (int i = 0; i < npts; i++) {
        const double f = (double)sizes[i] * (double)sizes[i] * (double)sizes[i];
        const double fb = i ? (double)sizes[i - 1] * (double)sizes[i - 1] * (double)sizes[i - 1] : 0;
        flag[i] = (i + 1 < npts && t[i] > 1.2 * t[i + 1]) || (i && t[i] / f > 1.25 * t[i - 1] / fb);
        count += flag[i];
    }
    return count;
}

/* best_time of the square call n^3 (dt 0: sgemm_, 1: dgemm_) on the calibration's matrices. */
static double square_time(int dt, int64_t n, int gpu, int device, int reps, void *a, void *b, void *c)
{
    fg_gemm_args g = {dt ? FG_F64 : FG_F32, 'N', 'N', n, n, n, n, n, n, 1.0, 0.0, a, b, c, "calibrate"};
    return best_time(&g, gpu, device, reps);
}

static int measure(profile_t *p, int device, int quick, int verbose)
{
    const int npts = quick ? QUICK_NPTS : NPTS, reps = quick ? 2 : 5;
    const int64_t nmax = sizes[npts - 1], big = 8192;
    /* A and B: nmax^2 doubles; C: the copy-rate call's big x big floats, more than nmax^2. */
    double *a = malloc(sizeof(double) * nmax * nmax), *b = malloc(sizeof(double) * nmax * nmax);
    float *c = malloc(sizeof(float) * big * big);
    int rc = -1;
    if (!a || !b || !c) goto out;
    for (int64_t i = 0; i < nmax * nmax; i++) a[i] = b[i] = 1e-3 * (double)(i % 17);
    memset(c, 0, sizeof(float) * big * big);
    memset(p, 0, sizeof *p);
    /* Every GPU point first, then every CPU point. OpenBLAS's threads keep spinning for a while
     * after a call, and GPU calls timed right after CPU ones share the cores with them: so
     * measured, the GPU path took 1.3-2x its own time at n = 384-1024 (H100 host), enough to
     * send sgemm_ and dgemm_ at n = 512 to the slower side. */
    for (int gpu = 1; gpu >= 0; gpu--)
        for (int dt = 0; dt < 2; dt++)
            for (int i = 0; i < npts; i++) {
                double t = square_time(dt, sizes[i], gpu, device, reps, a, b, c);
                if (t < 0) goto out;
                (gpu ? p->gpu : p->cpu)[dt][i] = t;
            }
    /* Points no machine gives, measured again (the best of both), up to three passes: the GPU
     * ones first, after OpenBLAS's threads have stopped spinning. A point that measures the
     * same again (within 10%) is what this machine does (sgemm_ 768 takes longer than 1024 on
     * the GPU of an H100) and is kept. In a VM's first minutes OpenBLAS ran sgemm_ 192-1536 at
     * 10-30x its time for seconds; the second pass mended most of those points (H100 host). */
    int kept[2][2][NPTS] = {{{0}}};
    for (int pass = 0; pass < 3; pass++) {
        int again = 0;
        for (int gpu = 1; gpu >= 0; gpu--)
            for (int dt = 0; dt < 2; dt++) {
                double *row = (gpu ? p->gpu : p->cpu)[dt];
                int flag[NPTS];
                if (!fg_profile_suspects(row, npts, flag)) continue;
                for (int i = 0; i < npts; i++) {
                    if (!flag[i] || kept[gpu][dt][i]) continue;
                    if (gpu && !again) nanosleep(&(struct timespec){0, 200000000}, NULL); /* 0.2 s */
                    again = 1;
                    double t = square_time(dt, sizes[i], gpu, device, reps, a, b, c);
                    if (t < 0) goto out;
                    kept[gpu][dt][i] = t >= 0.9 * row[i] && t <= 1.1 * row[i];
                    if (verbose)
                        printf("%cgemm_ %lld on the %s again: %.4f ms (was %.4f)\n", dt ? 'd' : 's',
                               (long long)sizes[i], gpu ? "GPU" : "CPU", t * 1e3, row[i] * 1e3);
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
            printf("        %6lld %12.4f %12.4f  %s\n", (long long)sizes[i], p->cpu[dt][i] * 1e3,
                   p->gpu[dt][i] * 1e3, p->cpu[dt][i] <= p->gpu[dt][i] ? "cpu" : "gpu");
    }
    /* The copy rate: C (big x big floats) comes out, A and B are thin. */
    fg_gemm_args g = {FG_F32, 'N', 'N', big, big, 16, big, 16, big, 1.0, 0.0, a, b, c, "calibrate"};
    double t = best_time(&g, 1, device, reps);
    if (t < 0) goto out;
    double bytes = 4.0 * (double)(big * big + 2 * big * 16);
    p->bw = bytes / fmax(t - p->t0[0], 1e-6);
    for (int dt = 0; dt < 2; dt++)
        if ((p->kernel[dt] = fg_gpu_kernel_rate(device, dt ? FG_F64 : FG_F32, 4096)) <= 0) goto out;
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

/* Loads the profile, or measures and saves it; with the lock held. */
static int ready(int device, int quick, int verbose)
{
    if (prof_state != 0) return prof_state;
    char path[1200];
    profile_path(device, path, sizeof path);
    if (load(&prof, path) == 0) return prof_state = 1;
    if (measure(&prof, device, quick, verbose) != 0) return prof_state = -1;
    if (save(&prof, path) != 0 && path[0])
        fg_warn("the GPU/CPU cost profile cannot be written to %s", path);
    return prof_state = 1;
}

/* ---- using it ---- */

/* The rate at F flops from the times of the square calls (less `fixed`), interpolated in
 * log-log between measured points and held at the ends. */
static double rate(const double *t, double fixed, double F, double above)
{
    double lf0 = 0, lr0 = 0;
    int have = 0;
    for (int i = 0; i < NPTS; i++) {
        if (!(t[i] > 0)) continue;
        double f = 2.0 * (double)sizes[i] * (double)sizes[i] * (double)sizes[i];
        double lf = log(f), lr = log(f / fmax(t[i] - fixed, 1e-7));
        if (!have) {
            if (F <= f) return exp(lr);
        } else if (F <= f) {
            return exp(lr0 + (lr - lr0) * (log(F) - lf0) / (lf - lf0));
        }
        lf0 = lf, lr0 = lr, have = 1;
    }
    return above > 0 ? above : have ? exp(lr0) : 0;
}

static void predict(const fg_gemm_args *g, const fg_operands *ops, double *tc, double *tg)
{
    const int dt = g->dt == FG_F64;
    const double es = (double)fg_elem_size(g->dt), m = (double)g->m, n = (double)g->n, k = (double)g->k;
    const int ab = fg_reads_ab(g);
    const double F = ab ? 2 * m * n * k : m * n;
    double bytes = 0;
    if (ab && ops->a == FG_MEM_HOST) bytes += es * m * k;
    if (ab && ops->b == FG_MEM_HOST) bytes += es * k * n;
    if (ops->c == FG_MEM_HOST) bytes += es * m * n * (g->beta != 0 ? 2 : 1);
    *tc = F / rate(prof.cpu[dt], 0, F, 0);
    *tg = prof.t0[dt] + fmax(bytes / prof.bw, F / rate(prof.gpu[dt], prof.t0[dt], F, prof.kernel[dt]));
}

/* ---- learning from the calls (FASTGEMM_LEARN=1; off by default) ----
 * The profile's CPU time for a call moves by up to 2x with where the matrices lie and with the
 * host's state while it was measured, and a slow stretch of the GPU path during the calibration
 * can make its GPU times 3x too long (perf/NOTES.md). So where the two predictions lie within
 * LEARN_WINDOW of each other, the calls of a class (precision, transposes, beta = 0 or not, m, n
 * and k to half an octave) are timed: first on the model's side, then on the other, LEARN_SAMPLES
 * clean samples each, then the side with the better best time per flop. A sample is clean when
 * its side was settled. OpenBLAS's threads sleep after ~0.1 s without work and are slow to wake
 * (dgemm_ 192's first two CPU calls after GPU ones took 0.248 and 0.183 ms against 0.065); they
 * spin for ~0.1 s after a call, taking the cores from the GPU path's host copies; and a class's
 * first GPU calls set up its buffers (sgemm_ 512: 194, 0.43 and 0.31 ms, then 0.24). So a sample
 * needs two calls on its side right before it, must not be the class's first there, and on the
 * GPU must come LEARN_SPIN_S after the last CPU call. A side's sampling, first or recheck, ends
 * after LEARN_EXPLORE_S seconds of its calls with what it has (their time, not the clock's: a
 * program that does other work between must not cut it short). The slower side is timed again
 * after LEARN_FIRST_GAP seconds, then twice as long each time up to LEARN_MAX_GAP: by the clock,
 * since a CPU call every 64th call of dgemm_ 768 kept OpenBLAS's threads spinning and cost the
 * GPU calls 12%. The GPU side is tried against the model only where its pipeline is already set
 * up, or once the class's CPU calls have taken LEARN_COLD_S: a first GPU call pays for the pinned
 * buffers (~0.2 s). A side's first call counts neither as a sample nor towards its time. */
#define LEARN_WINDOW 3.0
#define LEARN_SAMPLES 2
#define LEARN_SPIN_S 0.15
#define LEARN_EXPLORE_S 0.2
#define LEARN_COLD_S 2.0 /* the CPU time after which a cold GPU is tried */
#define LEARN_GIVE_UP_S 10.0 /* by the clock: a side whose calls fail or stop coming */
#define LEARN_FIRST_GAP 2.0
#define LEARN_MAX_GAP 64.0
#define LEARN_SLOTS 64

typedef struct {
    uint32_t key; /* 0: free */
    fg_learned s;
} learn_t;
static learn_t learned[LEARN_SLOTS];
static struct {
    int side;      /* the side of the last call the model placed, -1 before the first */
    long calls;    /* calls on that side in a row */
    double cpu_end; /* when the last CPU call ended */
} last_run = {-1, 0, -1e300};
static pthread_mutex_t learn_lock = PTHREAD_MUTEX_INITIALIZER;

void fg_learn_init(fg_learned *s)
{
    *s = (fg_learned){{0, 0}, {0, 0}, {INFINITY, INFINITY}, {INFINITY, INFINITY}, {-1, -1},
                      {0, 0}, {-1e300, -1e300}, -1, -1, 0, 0};
}

/* The side has its samples: LEARN_SAMPLES clean ones, or as many of any kind and the time. */
static int sampled(const fg_learned *s, int x, double now)
{
    return s->n[x] >= LEARN_SAMPLES ||
           (s->tried[x] >= LEARN_SAMPLES && s->spent[x] >= LEARN_EXPLORE_S) ||
           (s->since[x] >= 0 && now - s->since[x] >= LEARN_GIVE_UP_S);
}

static double best_of(const fg_learned *s, int x) { return s->n[x] ? s->best[x] : s->any[x]; }

int fg_learn_pick(fg_learned *s, double now, int model_gpu, int gpu_ok)
{
    for (int i = 0; i < 2; i++) {
        const int x = i ? !model_gpu : model_gpu;
        if (sampled(s, x, now)) continue;
        if (x && i && !gpu_ok && s->spent[0] < LEARN_COLD_S) return 0; /* cold: not yet */
        if (s->since[x] < 0) s->since[x] = now;
        return x;
    }
    if (s->checking >= 0) { /* a recheck: until a clean sample, as long as sampled() allows */
        const int x = s->checking;
        if (s->clean_at[x] < s->since[x] && s->spent[x] < LEARN_EXPLORE_S &&
            now - s->since[x] < LEARN_GIVE_UP_S && (!x || gpu_ok))
            return x;
        s->checking = -1;
    }
    const int faster = best_of(s, 1) < best_of(s, 0);
    if (faster != s->side) { /* the first decision, or the other side won a recheck */
        s->side = faster;
        s->gap = LEARN_FIRST_GAP;
        s->due = now + s->gap;
        return faster;
    }
    if (now < s->due || (!faster && !gpu_ok)) return faster;
    s->gap = fmin(2 * s->gap, LEARN_MAX_GAP);
    s->due = now + s->gap;
    s->checking = !faster;
    s->since[!faster] = now;
    s->spent[!faster] = 0;
    return !faster;
}

void fg_learn_sample(fg_learned *s, int gpu, double seconds, double per_flop, int settled,
                     double now)
{
    const int clean = settled && s->tried[gpu] > 0;
    if (s->tried[gpu]++ > 0) s->spent[gpu] += seconds;
    s->any[gpu] = fmin(s->any[gpu], per_flop);
    if (!clean) return;
    s->n[gpu]++;
    s->best[gpu] = fmin(s->best[gpu], per_flop);
    s->clean_at[gpu] = now;
}

static uint32_t class_key(const fg_gemm_args *g)
{
    const int64_t dims[3] = {g->m, g->n, g->k};
    uint32_t key = 1u << 31 | (uint32_t)(g->dt == FG_F64) << 30 | (uint32_t)(g->ta != 'N') << 29 |
                   (uint32_t)(g->tb != 'N') << 28 | (uint32_t)(g->beta != 0) << 27;
    for (int i = 0; i < 3; i++) key |= (uint32_t)(2.0 * log2((double)dims[i])) << (18 - 9 * i);
    return key;
}

/* The side the class's calls so far pick, and its ticket in *t (slot -1: the model decides). */
static int learn_side(const fg_gemm_args *g, int device, double t_cpu, double t_gpu, fg_learn_ticket *t)
{
    const int model_gpu = t_gpu < t_cpu;
    t->slot = -1;
    if (fmax(t_cpu, t_gpu) > LEARN_WINDOW * fmin(t_cpu, t_gpu)) return model_gpu;
    const uint32_t key = class_key(g);
    const int gpu_ok = fg_gpu_warm(device);
    const double now = fg_now_s();
    pthread_mutex_lock(&learn_lock);
    int i = (int)(key * 2654435761u >> 26) % LEARN_SLOTS;
    learn_t *e = &learned[i];
    if (e->key != key) { /* a new class */
        e->key = key;
        fg_learn_init(&e->s);
    }
    const int side = fg_learn_pick(&e->s, now, model_gpu, gpu_ok);
    pthread_mutex_unlock(&learn_lock);
    t->slot = i;
    t->key = key;
    return side;
}

void fg_model_ran(fg_learn_ticket learn, const fg_gemm_args *g, int gpu, double t_start, double t_end)
{
    pthread_mutex_lock(&learn_lock);
    const int settled = last_run.side == gpu && last_run.calls >= 2 &&
                        (!gpu || t_start - last_run.cpu_end >= LEARN_SPIN_S);
    if (last_run.side == gpu) {
        last_run.calls++;
    } else {
        last_run.side = gpu;
        last_run.calls = 1;
    }
    if (!gpu) last_run.cpu_end = t_end;
    const double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    const int slot = learn.slot;
    if (slot >= 0 && slot < LEARN_SLOTS && learned[slot].key == learn.key) /* still its class */
        fg_learn_sample(&learned[slot].s, gpu, t_end - t_start, (t_end - t_start) / flops, settled,
                        t_end);
    pthread_mutex_unlock(&learn_lock);
}

int fg_model_wants_gpu(const fg_gemm_args *g, const fg_operands *ops, int device, double *t_cpu,
                       double *t_gpu, fg_learn_ticket *learn)
{
    *t_cpu = *t_gpu = -1;
    if (learn) learn->slot = -1;
    /* Small calls, and C = beta*C, stay on the CPU: predicted only if a profile is at hand. */
    if (!fg_reads_ab(g) || fg_small_call(g)) {
        if (fg_tracing()) fg_model_predict(g, ops, t_cpu, t_gpu);
        return 0;
    }
    if (!fg_gpu_usable(&device)) return 0;
    pthread_mutex_lock(&prof_lock);
    int ok = ready(device, 1, 0) == 1;
    pthread_mutex_unlock(&prof_lock);
    if (!ok) return 0;
    predict(g, ops, t_cpu, t_gpu);
    if (learn) return learn_side(g, device, *t_cpu, *t_gpu, learn);
    return *t_gpu < *t_cpu;
}

int fg_model_predict(const fg_gemm_args *g, const fg_operands *ops, double *t_cpu, double *t_gpu)
{
    *t_cpu = *t_gpu = -1;
    pthread_mutex_lock(&prof_lock);
    int ok = prof_state == 1;
    pthread_mutex_unlock(&prof_lock);
    if (ok) predict(g, ops, t_cpu, t_gpu);
    return ok ? 0 : -1;
}

FG_EXPORT int fastgemm_calibrate(int verbose)
{
    int device = fg_default_device();
    if (!fg_gpu_usable(&device)) {
        if (verbose) printf("no usable CUDA device: nothing to calibrate (every call runs on the CPU)\n");
        return -1;
    }
    char path[1200];
    profile_path(device, path, sizeof path);
    pthread_mutex_lock(&prof_lock);
    profile_t p;
    int rc = measure(&p, device, 0, verbose);
    if (rc == 0) {
        prof = p;
        prof_state = 1;
        if (save(&p, path) != 0) {
            fg_warn("the GPU/CPU cost profile cannot be written to %s", path[0] ? path : "(no cache directory)");
            rc = -1;
        } else if (verbose) {
            printf("profile: %s\n", path);
        }
    }
    pthread_mutex_unlock(&prof_lock);
    return rc;
}
