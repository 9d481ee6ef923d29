/* test_auto.c: FASTGEMM_MODE=auto's cost model (gpu label; XDG_CACHE_HOME points at an empty
 * folder of the build tree).
 *   test_auto calibrate   fastgemm_calibrate() writes the profile; then a small call runs on
 *                         the CPU, large ones on the GPU, all right, each traced with both
 *                         predictions.
 *   test_auto first-use   no profile: the first large call starts the GPU on a thread of its
 *                         own (the device, the pipeline, then a short profile) and runs on the
 *                         CPU meanwhile; once the GPU is set up, large calls run there on the
 *                         cautious default model while the profile is measured; once the
 *                         profile is stored, on its model.
 *   test_auto start-wait  (FASTGEMM_START_WAIT_MS=60000) no profile: a 1024^3 call starts the
 *                         GPU and runs on the CPU meanwhile (not large enough to wait); the
 *                         next call, 4096^3, is large: it waits for the start and runs on the GPU.
 *   (first-use runs with FASTGEMM_START_WAIT_MS=0: no call waits.)
 *   test_auto learn       (FASTGEMM_LEARN=1) calibrated; then 8 calls of each square shape
 *                         near the crossover (n = 256-768) on either side, all right; every
 *                         side the model did not predict faster says so in the trace.
 * FASTGEMM_TRACE names $XDG_CACHE_HOME/trace.txt: every call's line there has the predictions
 * (but first-use's calls made on the CPU before the GPU was set up). */
#include "../cpu_ref/ref.h"
#include "testutil.h"

#include <dirent.h>
#include <float.h>
#include <time.h>

static int profiles(void) /* files in $XDG_CACHE_HOME/fastgemm */
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/fastgemm", getenv("XDG_CACHE_HOME"));
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".profile") != NULL;
    if (d) closedir(d);
    return n;
}

/* want: the side the call must run on, or FASTGEMM_BACKEND_NONE for either. */
static int call(int64_t n, int dbl, fastgemm_backend want)
{
    size_t es = dbl ? 8 : 4, bytes = es * (size_t)(n * n);
    char *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes), *ref = malloc(bytes);
    rng_t r = {(uint64_t)n};
    for (int64_t i = 0; i < n * n; i++) {
        if (dbl) ((double *)a)[i] = rng_uniform(&r), ((double *)b)[i] = rng_uniform(&r);
        else ((float *)a)[i] = (float)rng_uniform(&r), ((float *)b)[i] = (float)rng_uniform(&r);
    }
    if (dbl) {
        ref_dgemm('N', 'N', n, n, n, 1, (double *)a, n, (double *)b, n, 0, (double *)ref, n);
        fastgemm_dgemm(FASTGEMM_OP_N, FASTGEMM_OP_N, n, n, n, 1, (double *)a, n, (double *)b, n, 0, (double *)c, n);
    } else {
        ref_sgemm('N', 'N', n, n, n, 1, (float *)a, n, (float *)b, n, 0, (float *)ref, n);
        fastgemm_sgemm(FASTGEMM_OP_N, FASTGEMM_OP_N, n, n, n, 1, (float *)a, n, (float *)b, n, 0, (float *)c, n);
    }
    fastgemm_backend got = fastgemm_last_backend();
    double worst = 0, tol = 2.0 * (n + 2) * (dbl ? DBL_EPSILON : FLT_EPSILON) * n;
    for (int64_t i = 0; i < n * n; i++) {
        double e = dbl ? fabs(((double *)c)[i] - ((double *)ref)[i]) : fabs(((float *)c)[i] - ((float *)ref)[i]);
        if (!(e <= worst)) worst = e;
    }
    int ok = (want == FASTGEMM_BACKEND_NONE ? got == FASTGEMM_BACKEND_CPU || got == FASTGEMM_BACKEND_GPU
                                            : got == want) &&
             worst <= tol;
    printf("%cgemm n=%-5lld backend=%-4s (want %s) max err %.1e  %s\n", dbl ? 'd' : 's', (long long)n,
           fastgemm_backend_name(got), fastgemm_backend_name(want), worst, ok ? "ok" : "FAIL");
    free(a), free(b), free(c), free(ref);
    return !ok;
}

int main(int argc, char **argv)
{
    if (!test_gpu_present()) {
        printf("no CUDA device: skipped\n");
        return TEST_SKIP;
    }
    if (argc < 2 || !getenv("XDG_CACHE_HOME") || ref_init()) return 2;
    int fails = 0, unpredicted_allowed = 0;
    if (profiles() != 0) {
        printf("FAIL: XDG_CACHE_HOME already holds a profile\n");
        return 1;
    }
    if (!strcmp(argv[1], "learn")) {
        if (fastgemm_calibrate(0) != 0) {
            printf("FAIL: fastgemm_calibrate\n");
            return 1;
        }
        for (int dbl = 0; dbl < 2; dbl++)
            for (int64_t n = 256; n <= 768; n += 128)
                for (int i = 0; i < 8; i++) fails += call(n, dbl, FASTGEMM_BACKEND_NONE);
    } else if (!strcmp(argv[1], "calibrate")) {
        if (fastgemm_calibrate(1) != 0) {
            printf("FAIL: fastgemm_calibrate\n");
            return 1;
        }
        fails += profiles() != 1;
        for (int dbl = 0; dbl < 2; dbl++) {
            fails += call(64, dbl, FASTGEMM_BACKEND_CPU);   /* below the model: CPU */
            fails += call(128, dbl, FASTGEMM_BACKEND_CPU);  /* the model: a GPU call costs more */
            fails += call(4096, dbl, FASTGEMM_BACKEND_GPU); /* the model: copies are paid for */
        }
    } else if (!strcmp(argv[1], "start-wait")) {
        fails += call(1024, 0, FASTGEMM_BACKEND_CPU); /* starts the GPU; too small to wait */
        fails += call(4096, 0, FASTGEMM_BACKEND_GPU); /* large: waits for the start */
        unpredicted_allowed = 1;
    } else {
        fails += call(4096, 0, FASTGEMM_BACKEND_CPU); /* the CPU while the GPU starts */
        printf("after the first call: %d profile(s) stored\n", profiles());
        int waited = 0, gpu_early = 0; /* tenths of a second, up to two minutes */
        while (profiles() == 0 && waited < 1200) {
            if (waited % 3 == 0) { /* either side, right; the GPU's before the profile counted */
                fails += call(4096, 0, FASTGEMM_BACKEND_NONE);
                gpu_early += fastgemm_last_backend() == FASTGEMM_BACKEND_GPU && profiles() == 0;
            }
            nanosleep(&(struct timespec){0, 100000000}, NULL);
            waited++;
        }
        printf("the profile came %.1f s later; %d call(s) ran on the GPU before it\n", waited / 10.0,
               gpu_early);
        if (profiles() != 1) printf("FAIL: no profile stored\n"), fails++;
        if (gpu_early == 0) printf("FAIL: no call ran on the GPU's default model\n"), fails++;
        fails += call(4096, 0, FASTGEMM_BACKEND_GPU);
        unpredicted_allowed = 1;
    }
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/trace.txt", getenv("XDG_CACHE_HOME"));
    FILE *f = fopen(path, "r");
    int lines = 0, learned = 0;
    int gpu_seen = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *pred = strstr(line, " predicted cpu="), *side = strstr(line, " backend=");
        if (!side) continue; /* not a call's line (the CPU BLAS's name) */
        lines++;
        gpu_seen |= !strncmp(side, " backend=gpu ", 13);
        double tc, tg;
        if (!pred || sscanf(pred, " predicted cpu=%lf ms gpu=%lf ms", &tc, &tg) != 2) {
            if (unpredicted_allowed && !gpu_seen) continue; /* first-use: before the GPU's start */
            printf("FAIL: a trace line without the predictions: %s", line);
            fails++;
            continue;
        }
        /* A side the model did not predict faster is one the learning took, and says so. */
        const int on_gpu = side && !strncmp(side, " backend=gpu ", 13);
        const int on_cpu = side && !strncmp(side, " backend=cpu ", 13);
        const int against = tg != tc && ((on_gpu && tg > tc) || (on_cpu && tg < tc)); /* as printed */
        const int says = strstr(line, "learning: not the model's side") != NULL;
        learned += says;
        if (tg != tc && against != says) {
            printf("FAIL: %s the model's side, %s: %s", against ? "not" : "on",
                   says ? "but says otherwise" : "and does not say so", line);
            fails++;
        }
    }
    if (f) fclose(f);
    if (lines == 0) printf("FAIL: no trace in %s\n", path), fails++;
    printf("%d of %d calls took the side the model did not predict faster\n", learned, lines);
    printf("test_auto %s: %s\n", argv[1], fails ? "FAIL" : "ok");
    return fails != 0;
}
