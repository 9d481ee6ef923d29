/* trace.h: FASTGEMM_TRACE's line per call (core/trace.c), and fastgemm_last_backend's record. */
#ifndef FG_TRACE_H
#define FG_TRACE_H

#include "common/fg.h"

#include <fastgemm.h>

/* What one call's trace line says beyond the request: the cost model's predicted seconds on
 * each side (negative: none) and, in its parentheses, where it ran or why it fell back. */
typedef struct {
    double t0;             /* when the call began (fg_now_s), for its time */
    double pred_cpu, pred_gpu;
} fg_trace;

/* Records backend b as the calling thread's last and, when the settings trace, writes the line
 * (one write: lines of concurrent calls do not interleave). */
FG_HIDDEN void fg_trace_end(const fg_settings *s, const fg_trace *t, const fg_gemm_args *g,
                            fastgemm_backend b, const char *why);
/* When the settings trace, writes "fastgemm: " and the formatted text, then " pid=..": a line
 * that is not a call's (the GPU's start, for one). */
FG_HIDDEN void fg_trace_note(const fg_settings *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The calling thread's last call was rejected by the argument check (backend none). */
FG_HIDDEN void fg_trace_rejected(void);

#endif
