/* trace.c: the trace line of a call (FASTGEMM_TRACE) and fastgemm_last_backend. A line:
 *   fastgemm: sgemm_ NT m=.. n=.. k=.. backend=gpu time=.. ms .. GFLOP/s predicted cpu=.. ms
 *   gpu=.. ms (device 0; ...)
 * the predictions once a cost profile is loaded, and in parentheses where the call ran or why it
 * fell back. */
#include "core/trace.h"

#include <stdio.h>
#include <unistd.h>

static _Thread_local fastgemm_backend last_backend = FASTGEMM_BACKEND_NONE;

void fg_trace_rejected(void) { last_backend = FASTGEMM_BACKEND_NONE; }

void fg_trace_end(const fg_settings *s, const fg_trace *t, const fg_gemm_args *g,
                  fastgemm_backend b, const char *why)
{
    last_backend = b;
    if (s->trace_fd < 0) return;
    double dt = fg_now_s() - t->t0;
    double gflops = (b == FASTGEMM_BACKEND_NONE || dt <= 0) ? 0.0 : fg_flops(g) / dt * 1e-9;
    char line[640], pred[96] = "";
    if (t->pred_cpu >= 0)
        snprintf(pred, sizeof pred, " predicted cpu=%.3f ms gpu=%.3f ms", t->pred_cpu * 1e3,
                 t->pred_gpu * 1e3);
    int has_why = why && why[0];
    int len = snprintf(line, sizeof line,
                       "fastgemm: %s %c%c m=%lld n=%lld k=%lld backend=%s time=%.3f ms "
                       "%.1f GFLOP/s%s%s%s%s\n",
                       g->name, g->ta, g->tb, (long long)g->m, (long long)g->n, (long long)g->k,
                       fastgemm_backend_name(b), dt * 1e3, gflops, pred, has_why ? " (" : "",
                       has_why ? why : "", has_why ? ")" : "");
    if (len > (int)sizeof line - 1) {
        len = (int)sizeof line - 1;
        line[len - 1] = '\n';
    }
    ssize_t w = write(s->trace_fd, line, (size_t)len);
    (void)w;
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
