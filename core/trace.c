/* trace.c: the trace line of a call (FASTGEMM_TRACE) and fastgemm_last_backend. A line:
 *   fastgemm: sgemm_ NT m=.. n=.. k=.. lda=.. ldb=.. ldc=.. alpha=.. beta=.. backend=gpu
 *   time=.. ms .. GFLOP/s predicted cpu=.. ms gpu=.. ms pid=.. tid=.. (device 0; ...)
 * the predictions once the cost model has them, and in parentheses where the call ran or why it
 * fell back. The first call of a family of names (fg_abi) that runs on the CPU is preceded by
 * a line naming the CPU BLAS it went to:
 *   fastgemm: cpu-blas=/usr/lib/x86_64-linux-gnu/libopenblas.so.0 for sgemm_ pid=..
 * and the GPU's start (core/start.c) says how long each of its steps took:
 *   fastgemm: gpu-start device=0 probe=.. ms sgemm=.. ms dgemm=.. ms profile=loaded .. ms pid=.. */
#define _GNU_SOURCE
#include "core/trace.h"

#include "backends/backend.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static _Thread_local fastgemm_backend last_backend = FASTGEMM_BACKEND_NONE;

void fg_trace_rejected(void) { last_backend = FASTGEMM_BACKEND_NONE; }

/* Writes one line (a single write: lines of concurrent calls do not interleave). */
static void put(int fd, char *line, int len, size_t cap)
{
    if (len < 0) return;
    if (len > (int)cap - 1) {
        len = (int)cap - 1;
        line[len - 1] = '\n';
    }
    ssize_t w = write(fd, line, (size_t)len);
    (void)w;
}

void fg_trace_note(const fg_settings *s, const char *fmt, ...)
{
    if (s->trace_fd < 0) return;
    char line[400];
    int len = snprintf(line, sizeof line, "fastgemm: ");
    va_list ap;
    va_start(ap, fmt);
    len += vsnprintf(line + len, sizeof line - (size_t)len, fmt, ap);
    va_end(ap);
    if (len < (int)sizeof line)
        len += snprintf(line + len, sizeof line - (size_t)len, " pid=%ld\n", (long)getpid());
    put(s->trace_fd, line, len, sizeof line);
}

void fg_trace_end(const fg_settings *s, const fg_trace *t, const fg_gemm_args *g,
                  fastgemm_backend b, const char *why)
{
    last_backend = b;
    if (s->trace_fd < 0) return;
    double dt = fg_now_s() - t->t0;
    double gflops = (b == FASTGEMM_BACKEND_NONE || dt <= 0) ? 0.0 : fg_flops(g) / dt * 1e-9;
    char line[800], pred[96] = "";
    const long pid = (long)getpid(), tid = (long)gettid();
    static atomic_int named[FG_ABI_COUNT]; /* the family's CPU BLAS is named */
    if ((b == FASTGEMM_BACKEND_CPU || b == FASTGEMM_BACKEND_CPU_FALLBACK) &&
        (unsigned)g->abi < FG_ABI_COUNT && !atomic_exchange(&named[g->abi], 1))
        put(s->trace_fd, line,
            snprintf(line, sizeof line, "fastgemm: cpu-blas=%s for %s pid=%ld\n",
                     fg_cpu_blas_path(g->abi), g->name, pid),
            sizeof line);
    if (t->pred_cpu >= 0)
        snprintf(pred, sizeof pred, " predicted cpu=%.3f ms gpu=%.3f ms", t->pred_cpu * 1e3,
                 t->pred_gpu * 1e3);
    int has_why = why && why[0];
    int len = snprintf(line, sizeof line,
                       "fastgemm: %s %c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld "
                       "alpha=%.9g beta=%.9g backend=%s time=%.3f ms %.1f GFLOP/s%s pid=%ld "
                       "tid=%ld%s%s%s\n",
                       g->name, g->ta, g->tb, (long long)g->m, (long long)g->n, (long long)g->k,
                       (long long)g->lda, (long long)g->ldb, (long long)g->ldc, g->alpha, g->beta,
                       fastgemm_backend_name(b), dt * 1e3, gflops, pred, pid, tid,
                       has_why ? " (" : "", has_why ? why : "", has_why ? ")" : "");
    put(s->trace_fd, line, len, sizeof line);
}

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
