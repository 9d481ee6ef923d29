/* settings.c: every setting of libfastgemm, read once from the environment at the first call.
 * An invalid value gets a one-line warning and the default. No other file reads the
 * environment: the settings travel down as an fg_settings (common/fg.h). */
#define _GNU_SOURCE
#include "core/settings.h"

#include "backends/backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* FASTGEMM_START_WAIT_MS's default: how long a large call waits for the GPU's start. */
#define FG_START_WAIT_MS 2000

static fg_settings settings;
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static int (*omp_default_device)(void); /* the OpenMP runtime's, when the process has one */

/* The variable's value, or NULL when it is unset or empty. */
static const char *env(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? s : NULL;
}

/* The integer in environment variable `name`, if it lies in [lo, hi]; else `dflt`, with a
 * warning when the variable is set ("FASTGEMM_X='v' is not <what>"). */
static long long env_int(const char *name, long long lo, long long hi, long long dflt,
                         const char *what)
{
    const char *s = env(name);
    if (!s) return dflt;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fg_warn("%s='%s' is not %s", name, s, what);
        return dflt;
    }
    return v;
}

/* Environment variable `name` as off (0, also when unset), on (1) or auto (2); any other value
 * warns and is off. */
static int env_off_on_auto(const char *name)
{
    const char *v = env(name);
    if (!v || !strcasecmp(v, "off")) return 0;
    if (!strcasecmp(v, "on")) return 1;
    if (!strcasecmp(v, "auto")) return 2;
    fg_warn("%s='%s' is not off, on or auto; using off", name, v);
    return 0;
}

int fg_parse_mode(const char *s)
{
    if (!strcasecmp(s, "auto")) return FG_MODE_AUTO;
    if (!strcasecmp(s, "gpu")) return FG_MODE_GPU;
    if (!strcasecmp(s, "cpu")) return FG_MODE_CPU;
    return -1;
}

/* FASTGEMM_TRACE: "1" is stderr, "0" off, a path (a value with a '/') a file appended to. */
static int open_trace(void)
{
    const char *s = env("FASTGEMM_TRACE");
    if (!s || !strcmp(s, "0")) return -1;
    if (!strcmp(s, "1")) return STDERR_FILENO;
    if (!strchr(s, '/')) {
        fg_warn("FASTGEMM_TRACE='%s' is not 0, 1 or a path (a path holds a '/': ./%s); tracing is off",
                s, s);
        return -1;
    }
    int fd = open(s, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        fg_warn("FASTGEMM_TRACE='%s' cannot be opened (%s); tracing is off", s, strerror(errno));
    return fd;
}

static void read_settings(void)
{
    fg_settings *s = &settings;
    const char *v = env("FASTGEMM_MODE");
    s->mode = FG_MODE_AUTO;
    if (v) {
        int m = fg_parse_mode(v);
        if (m >= 0) s->mode = (fg_mode)m;
        else fg_warn("FASTGEMM_MODE='%s' is not auto, gpu or cpu; using auto", v);
    }
    v = env("FASTGEMM_BACKEND");
    s->backend = FG_GPU_CUDA;
    if (v) {
        if (!strcasecmp(v, "omp")) s->backend = FG_GPU_OMP;
        else if (strcasecmp(v, "cuda") != 0)
            fg_warn("FASTGEMM_BACKEND='%s' is not cuda or omp; using cuda", v);
    }
    s->device = (int)env_int("FASTGEMM_DEVICE", 0, 1024, -1, "a device number; using the default");
    s->kernel = env("FASTGEMM_KERNEL");
    /* The CUDA kernels' names are known here; the OpenMP module checks its own (omp_*) when it
     * is loaded. */
    if (s->kernel && (s->backend == FG_GPU_OMP ? strncmp(s->kernel, "omp_", 4) != 0
                                               : !fg_gpu_kernel_known(s->kernel))) {
        fg_warn("FASTGEMM_KERNEL='%s' is no %s kernel of this build; using the table's", s->kernel,
                s->backend == FG_GPU_OMP ? "OpenMP" : "CUDA");
        s->kernel = NULL;
    }
    s->split_k = (int)env_int("FASTGEMM_SPLIT_K", 1, 64, 0, "a number from 1 to 64; using the table");
    s->stream_k = (int)env_int("FASTGEMM_STREAM_K", 0, 2, 1, "0, 1 or 2; using 1");
    v = env("FASTGEMM_CHOICE");
    s->choice = FG_CHOICE_MODEL;
    if (v) {
        if (!strcasecmp(v, "table")) s->choice = FG_CHOICE_TABLE;
        else if (strcasecmp(v, "model") != 0) fg_warn("FASTGEMM_CHOICE='%s' is not model or table; using model", v);
    }
    s->pack = (int)env_int("FASTGEMM_PACK", 0, 2, -1, "0, 1 or 2; using the default");
    s->ozaki = env_off_on_auto("FASTGEMM_OZAKI");
    s->ozaki_d = env_off_on_auto("FASTGEMM_OZAKI_D");
    s->pinned_kb = env_int("FASTGEMM_PINNED_KB", 16, (long long)16 << 20, 128 << 10,
                           "a size from 16 to 16777216 (KB); using 131072");
    s->slot_kb = env_int("FASTGEMM_SLOT_KB", 4, 1 << 20, 16 << 10,
                         "a size from 4 to 1048576 (KB); using 16384");
    s->block = env_int("FASTGEMM_BLOCK", 16, 1 << 20, 0, "a block size from 16 to 1048576; using the default");
    s->tail_rows = env_int("FASTGEMM_TAIL_ROWS", 0, 1 << 30, 512, "a row count from 0 to 2^30; using 512");
    s->device_mb = env_int("FASTGEMM_DEVICE_MEMORY_MB", 1, (long long)1 << 40, 0, "a size in MB; no cap");
    s->fault_after = (long)env_int("FASTGEMM_FAULT_AFTER", 1, 1L << 30, 0, "a positive number; ignored");
    s->staging_threads = (int)env_int("FASTGEMM_STAGING_THREADS", 1, 1 << 16, 0,
                                      "a thread count from 1 to 65536; using the CPUs");
    s->learn = (int)env_int("FASTGEMM_LEARN", 0, 1, 0, "0 or 1; using 0");
    s->start_wait_ms = (int)env_int("FASTGEMM_START_WAIT_MS", 0, 60000, FG_START_WAIT_MS,
                                    "milliseconds from 0 to 60000; using the default");
    s->trace_fd = open_trace();
    s->cpu_blas = env("FASTGEMM_CPU_BLAS");
    s->omp_lib = env("FASTGEMM_OMP_LIB");
    const char *xdg = env("XDG_CACHE_HOME"), *home = env("HOME");
    if (xdg) snprintf(s->profile_dir, sizeof s->profile_dir, "%s/fastgemm", xdg);
    else if (home) snprintf(s->profile_dir, sizeof s->profile_dir, "%s/.cache/fastgemm", home);
    v = env("OPENBLAS_NUM_THREADS");
    s->blas_threads = v ? v : "";
    s->timeline_file = env("FG_TIMELINE_FILE");
    /* OpenMP's default device, when the process has an OpenMP runtime: looked up, never loaded. */
    *(void **)&omp_default_device = dlsym(RTLD_DEFAULT, "omp_get_default_device");
    fg_cpu_setup(s->cpu_blas);
}

const fg_settings *fg_settings_get(void)
{
    pthread_once(&settings_once, read_settings);
    return &settings;
}

void fg_settings_set_mode(fg_mode mode)
{
    fg_settings_get();
    __atomic_store_n(&settings.mode, mode, __ATOMIC_RELAXED);
}

fg_mode fg_settings_mode(const fg_settings *s) { return __atomic_load_n(&s->mode, __ATOMIC_RELAXED); }

int fg_default_device(const fg_settings *s)
{
    if (s->device >= 0) return s->device;
    int d = omp_default_device ? omp_default_device() : 0;
    return d >= 0 ? d : 0;
}
