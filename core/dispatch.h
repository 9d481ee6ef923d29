/* dispatch.h: the dispatcher's face (core/dispatch.c), for the ABI layer (blas/). */
#ifndef FG_DISPATCH_H
#define FG_DISPATCH_H

#include "common/fg.h"

/* Runs a checked GEMM on the right backend. Returns 0, or -1 when C could not be computed
 * (only when device operands became unreadable, or the GPU failed after writing part of a C
 * whose old values were needed). */
FG_HIDDEN int fg_gemm(const fg_gemm_args *g);
/* The stream form of the C API (device or managed operands): 0, or -1 when nothing was
 * enqueued. */
FG_HIDDEN int fg_gemm_async(const fg_gemm_args *g, void *stream);
/* Records that the calling thread's last call was rejected by the argument check. */
FG_HIDDEN void fg_gemm_rejected(void);
/* The GEMM calls in progress in the process (those past the small-call path). */
FG_HIDDEN int fg_active_calls(void);
/* How many such calls have begun (wrapping): a measurement sees whether one came during it. */
FG_HIDDEN unsigned fg_calls_begun(void);

#endif
