/* dispatch.c: one hop between the ABI layer and the backends. Reads the settings once, applies
 * the BLAS quick return, picks CPU or GPU for each call, falls back to the CPU when the GPU
 * fails, and writes the trace line. */
#include "fg.h"

#include <fastgemm.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static fg_config config;
static int (*omp_default_device)(void);
static int trace_fd = -1;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static _Thread_local fastgemm_backend last_backend = FASTGEMM_BACKEND_NONE;
static atomic_int warned_no_device;
static atomic_int active_calls;

int fg_active_calls(void) { return atomic_load(&active_calls); }

void fg_warn(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (len < 0) return;
    if (len > (int)sizeof line - 2) len = (int)sizeof line - 2;
    line[len++] = '\n';
    fprintf(stderr, "fastgemm: %.*s", len, line);
}

/* The integer in environment variable `name`, if it lies in [lo, hi]; else `dflt`, with a
 * warning when the variable is set ("FASTGEMM_X='v' is not <what>"). */
static long long env_int(const char *name, long long lo, long long hi, long long dflt,
                         const char *what)
{
    const char *s = getenv(name);
    if (!s || !*s) return dflt;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fg_warn("%s='%s' is not %s", name, s, what);
        return dflt;
    }
    return v;
}

/* "auto", "gpu" or "cpu" (any case): the mode, else -1. */
static int parse_mode(const char *s)
{
    if (!strcasecmp(s, "auto")) return FG_MODE_AUTO;
    if (!strcasecmp(s, "gpu")) return FG_MODE_GPU;
    if (!strcasecmp(s, "cpu")) return FG_MODE_CPU;
    return -1;
}

static void read_config(void)
{
    const char *s = getenv("FASTGEMM_MODE");
    config.mode = FG_MODE_AUTO;
    if (s && *s) {
        int m = parse_mode(s);
        if (m >= 0) config.mode = (fg_mode)m;
        else fg_warn("FASTGEMM_MODE='%s' is not auto, gpu or cpu; using auto", s);
    }

    s = getenv("FASTGEMM_BACKEND");
    config.backend = FG_GPU_CUDA;
    if (s && *s) {
        if (!strcasecmp(s, "omp")) config.backend = FG_GPU_OMP;
        else if (strcasecmp(s, "cuda") != 0)
            fg_warn("FASTGEMM_BACKEND='%s' is not cuda or omp; using cuda", s);
    }
    config.device = (int)env_int("FASTGEMM_DEVICE", 0, 1024, -1, "a device number; using the default");
    /* OpenMP's default device, when the process has an OpenMP runtime: looked up, never loaded. */
    *(void **)&omp_default_device = dlsym(RTLD_DEFAULT, "omp_get_default_device");
    s = getenv("FASTGEMM_KERNEL"); /* checked against the kernel names at the first GPU call */
    config.kernel = s && *s ? s : NULL;
    config.split_k = (int)env_int("FASTGEMM_SPLIT_K", 1, 64, 0, "a number from 1 to 64; using the table");
    config.stream_k = (int)env_int("FASTGEMM_STREAM_K", 0, 2, 1, "0, 1 or 2; using 1");
    config.pinned_kb = env_int("FASTGEMM_PINNED_KB", 16, (long long)16 << 20, 128 << 10,
                               "a size from 16 to 16777216 (KB); using 131072");
    config.slot_kb = env_int("FASTGEMM_SLOT_KB", 4, 1 << 20, 16 << 10,
                             "a size from 4 to 1048576 (KB); using 16384");
    config.block = env_int("FASTGEMM_BLOCK", 16, 1 << 20, 0, "a block size from 16 to 1048576; using the default");
    config.tail_rows = env_int("FASTGEMM_TAIL_ROWS", 0, 1 << 30, 512, "a row count from 0 to 2^30; using 512");
    config.device_mb = env_int("FASTGEMM_DEVICE_MEMORY_MB", 1, (long long)1 << 40, 0,
                               "a size in MB; no cap");
    config.fault_after = (long)env_int("FASTGEMM_FAULT_AFTER", 1, 1L << 30, 0, "a positive number; ignored");
    config.learn = (int)env_int("FASTGEMM_LEARN", 0, 1, 0, "0 or 1; using 0");

    s = getenv("FASTGEMM_TRACE");
    if (s && *s && strcmp(s, "0") != 0) {
        if (!strcmp(s, "1")) {
            trace_fd = STDERR_FILENO;
        } else {
            trace_fd = open(s, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (trace_fd < 0)
                fg_warn("FASTGEMM_TRACE='%s' cannot be opened (%s); tracing is off", s,
                        strerror(errno));
        }
    }
}

int fg_tracing(void) { return trace_fd >= 0; }

int fg_default_device(void)
{
    const fg_config *cfg = fg_get_config();
    if (cfg->device >= 0) return cfg->device;
    int d = omp_default_device ? omp_default_device() : 0;
    return d >= 0 ? d : 0;
}

const fg_config *fg_get_config(void)
{
    pthread_once(&config_once, read_config);
    return &config;
}

double fg_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The cost model's predictions for the call (negative: none), for its trace line. */
static _Thread_local double pred_cpu = -1, pred_gpu = -1;

static void finish(const fg_gemm_args *g, fastgemm_backend b, const char *why, double t0)
{
    last_backend = b;
    if (trace_fd < 0) return;
    double dt = fg_now_s() - t0;
    double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    double gflops = (b == FASTGEMM_BACKEND_NONE || dt <= 0) ? 0.0 : flops / dt * 1e-9;
    char line[640], pred[96] = "";
    if (pred_cpu >= 0)
        snprintf(pred, sizeof pred, " predicted cpu=%.3f ms gpu=%.3f ms", pred_cpu * 1e3, pred_gpu * 1e3);
    int len = snprintf(line, sizeof line,
                       "fastgemm: %s %c%c m=%lld n=%lld k=%lld backend=%s time=%.3f ms "
                       "%.1f GFLOP/s%s%s%s%s\n",
                       g->name, g->ta, g->tb, (long long)g->m, (long long)g->n, (long long)g->k,
                       fastgemm_backend_name(b), dt * 1e3, gflops, pred, why ? " (" : "",
                       why ? why : "", why ? ")" : "");
    if (len > (int)sizeof line - 1) {
        len = (int)sizeof line - 1;
        line[len - 1] = '\n';
    }
    /* One write per line: lines from concurrent calls do not interleave. */
    ssize_t w = write(trace_fd, line, (size_t)len);
    (void)w;
}

void fg_gemm_rejected(void) { last_backend = FASTGEMM_BACKEND_NONE; }

static int gemm(const fg_gemm_args *g, const fg_config *cfg, double t0);

int fg_gemm(const fg_gemm_args *g)
{
    const fg_config *cfg = fg_get_config();
    double t0 = trace_fd >= 0 ? fg_now_s() : 0; /* for the trace line only */
    pred_cpu = pred_gpu = -1;
    if (fg_quick_return(g)) {
        finish(g, FASTGEMM_BACKEND_NONE, NULL, t0);
        return 0;
    }
    atomic_fetch_add(&active_calls, 1);
    int rc = gemm(g, cfg, t0);
    atomic_fetch_sub(&active_calls, 1);
    return rc;
}

static int gemm(const fg_gemm_args *g, const fg_config *cfg, double t0)
{
    const fg_mode mode = __atomic_load_n(&cfg->mode, __ATOMIC_RELAXED); /* fastgemm_set_mode */

    fg_operands ops;
    fg_gpu_classify(g, &ops);
    int on_device = ops.a == FG_MEM_DEVICE || ops.b == FG_MEM_DEVICE || ops.c == FG_MEM_DEVICE;
    int managed = ops.a == FG_MEM_MANAGED || ops.b == FG_MEM_MANAGED || ops.c == FG_MEM_MANAGED;

    /* A small call on host operands outside gpu mode: the CPU BLAS, with nothing to decide (the
     * model keeps every such call on the CPU). Tracing takes the long way, for the predictions. */
    if (!on_device && !managed && mode != FG_MODE_GPU && fg_small_call(g) && trace_fd < 0) {
        fg_cpu_gemm(g);
        last_backend = FASTGEMM_BACKEND_CPU;
        return 0;
    }

    int device = ops.device >= 0 ? ops.device : fg_default_device();
    /* Device operands cannot be read by the CPU BLAS: they go to the GPU in every mode. Host
     * operands in auto mode go where the cost model (blas/model.c) predicts the shorter time. */
    int want_gpu = on_device || mode == FG_MODE_GPU || (mode == FG_MODE_AUTO && managed);
    fg_learn_ticket learn = {-1, 0}; /* FASTGEMM_LEARN: the class this call's time goes to */
    int track = 0;  /* FASTGEMM_LEARN: the call is reported to the model (fg_model_ran) */
    if (!want_gpu && mode == FG_MODE_AUTO) {
        want_gpu = fg_model_wants_gpu(g, &ops, device, &pred_cpu, &pred_gpu,
                                      cfg->learn ? &learn : NULL);
        track = cfg->learn;
    } else if (trace_fd >= 0) {
        fg_model_predict(g, &ops, &pred_cpu, &pred_gpu);
    }
    /* For the trace: a side the model did not predict faster, taken to time it or as learned. */
    const char *learned =
        learn.slot >= 0 && want_gpu != (pred_gpu < pred_cpu) ? "learning: not the model's side" : NULL;
    const char *fallback = NULL;
    char why[400] = "";

    int use_cuda = cfg->backend == FG_GPU_CUDA;
    if (want_gpu && ops.device == -2) {
        fallback = "operands on different devices";
        want_gpu = 0;
    }
    if (want_gpu && !use_cuda) {
        /* The OpenMP device: the device operands' (OpenMP's device n is CUDA device n), or
         * FASTGEMM_DEVICE, or OpenMP's own default. */
        int rc = fg_omp_gemm(g, &ops, ops.device >= 0 ? ops.device : cfg->device, why, sizeof why);
        if (rc == 0) {
            finish(g, FASTGEMM_BACKEND_OMP, why, t0);
            return 0;
        }
        if (rc == -1) fallback = why; /* C untouched */
        use_cuda = rc == -2;          /* no module: our CUDA kernels instead */
    }
    if (want_gpu && use_cuda) {
        if (fg_gpu_usable(&device)) {
            const double tl = track ? fg_now_s() : 0;
            int rc = fg_gpu_gemm(g, &ops, device, why, sizeof why);
            if (rc == FG_GPU_OK && track) fg_model_ran(learn, g, 1, tl, fg_now_s());
            if (rc == FG_GPU_OK) { /* the device, and what the GPU side reports, if anything */
                char where[440] = "";
                if (trace_fd >= 0)
                    snprintf(where, sizeof where, "device %d%s%s%s%s", device, why[0] ? "; " : "",
                             why, learned ? "; " : "", learned ? learned : "");
                finish(g, FASTGEMM_BACKEND_GPU, where, t0);
                return 0;
            }
            if (rc == FG_GPU_FINISHED_ON_CPU) {
                finish(g, FASTGEMM_BACKEND_CPU_FALLBACK, why, t0);
                return 0;
            }
            if (rc == FG_GPU_FAILED_C_WRITTEN && g->beta != 0) {
                /* C was partly overwritten and its old values are needed: nothing can redo it. */
                fg_warn("%s: the GPU failed after C was partly written (%s); C is not valid",
                        g->name, why);
                finish(g, FASTGEMM_BACKEND_NONE, why, t0);
                return -1;
            }
            fallback = why;
        } else if (mode == FG_MODE_GPU || on_device) {
            fallback = "no usable CUDA device";
            if (!atomic_exchange(&warned_no_device, 1))
                fg_warn("no usable CUDA device; GEMMs run on the CPU");
        }
    }

    if (on_device) {
        char why2[256] = "";
        if (fg_gpu_staged_cpu_gemm(g, &ops, why2, sizeof why2) != 0) {
            fg_warn("%s: the GPU failed (%s) and the device operands cannot be read (%s); "
                    "C is not computed",
                    g->name, fallback ? fallback : "?", why2);
            finish(g, FASTGEMM_BACKEND_NONE, "failed", t0);
            return -1;
        }
    } else {
        const double tl = track ? fg_now_s() : 0;
        fg_cpu_gemm(g);
        if (track) fg_model_ran(fallback ? (fg_learn_ticket){-1, 0} : learn, g, 0, tl, fg_now_s());
    }
    finish(g, fallback ? FASTGEMM_BACKEND_CPU_FALLBACK : FASTGEMM_BACKEND_CPU,
           fallback ? fallback : learned, t0);
    return 0;
}

int fg_gemm_async(const fg_gemm_args *g, void *stream)
{
    fg_get_config(); /* the settings (the trace among them) before the first trace line */
    double t0 = fg_now_s();
    pred_cpu = pred_gpu = -1;
    if (fg_quick_return(g)) {
        finish(g, FASTGEMM_BACKEND_NONE, NULL, t0);
        return 0;
    }
    /* A host operand would fault the kernel and with it the whole CUDA context: refused. */
    fg_operands ops;
    fg_gpu_classify(g, &ops);
    if ((fg_reads_ab(g) && (ops.a == FG_MEM_HOST || ops.b == FG_MEM_HOST)) || ops.c == FG_MEM_HOST) {
        fg_warn("%s: an operand is host memory (the stream form takes device or managed memory); "
                "nothing was enqueued", g->name);
        finish(g, FASTGEMM_BACKEND_NONE, "host operand", t0);
        return -1;
    }
    int device = fg_gpu_stream_device(stream);
    if (device < 0) device = fg_default_device();
    char why[256] = "no usable CUDA device";
    if (fg_gpu_usable(&device) && fg_gpu_gemm_async(g, device, stream, why, sizeof why) == 0) {
        finish(g, FASTGEMM_BACKEND_GPU, "enqueued", t0);
        return 0;
    }
    fg_warn("%s: %s; nothing was enqueued", g->name, why);
    finish(g, FASTGEMM_BACKEND_NONE, why, t0);
    return -1;
}

FG_EXPORT int fastgemm_set_mode(const char *mode)
{
    int m = mode ? parse_mode(mode) : -1;
    if (m < 0) return -1;
    fg_get_config();
    __atomic_store_n(&config.mode, (fg_mode)m, __ATOMIC_RELAXED);
    return 0;
}

FG_EXPORT const char *fastgemm_version(void) { return FASTGEMM_VERSION_STRING; }

FG_EXPORT fastgemm_backend fastgemm_last_backend(void) { return last_backend; }

FG_EXPORT const char *fastgemm_backend_name(fastgemm_backend b)
{
    switch (b) {
    case FASTGEMM_BACKEND_CPU: return "cpu";
    case FASTGEMM_BACKEND_GPU: return "gpu";
    case FASTGEMM_BACKEND_CPU_FALLBACK: return "cpu-fallback";
    case FASTGEMM_BACKEND_OMP: return "omp";
    default: return "none";
    }
}
