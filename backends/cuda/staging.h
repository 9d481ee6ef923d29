// staging.h: the host threads that copy between the caller's pageable memory and pinned
// staging buffers (staging.c). One pool for the process, started at the first copy large
// enough to share; a copy runs on the calling thread and the pool's threads together.
#ifndef FG_STAGING_H
#define FG_STAGING_H

#include "common/fg.h"

#ifdef __cplusplus
extern "C" {
#endif

// `cols` columns of `width` bytes each, from src (columns sld bytes apart) to dst (dld apart).
typedef struct {
    char *dst;
    size_t dld;
    const char *src;
    size_t sld;
    size_t width;
    size_t cols;
} fg_copy2d;

// Before the first copy (later calls change nothing): the pool's size, the CPUs this process
// may run on, capped by thread_cap when it is 1 or more (set->staging_threads); and the
// function that counts the GEMM calls in progress (call->active_calls), among which the
// threads are shared.
FG_HIDDEN void fg_stage_setup(int thread_cap, int (*active_calls)(void));
FG_HIDDEN void fg_stage_copy(const fg_copy2d *c);
// The threads a copy may use now: the pool's, shared among the GEMM calls running at the
// moment.
FG_HIDDEN int fg_stage_threads(void);
// A pipeline whose host operands are at most `largest` bytes each begins: if its copies will
// be shared, the pool's threads wake and wait for them spinning until fg_stage_end, which takes
// what fg_stage_begin returned.
FG_HIDDEN int fg_stage_begin(size_t largest);
FG_HIDDEN void fg_stage_end(int began);

#ifdef __cplusplus
}
#endif
#endif
