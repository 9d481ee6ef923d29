// cuda_backend.h: the pieces of the CUDA backend (private to backends/cuda/).
#ifndef FG_CUDA_BACKEND_H
#define FG_CUDA_BACKEND_H

#include "backends/backend.h"
#include "common/fg.h"
#include "kernels/kernels.h"

#include <cuda_runtime.h>

// One CUDA error check for the backend: evaluates `call` (a cudaError_t); on failure records
// the error and the call's text in (err, failed_call) and jumps to `fail`.
#define FG_CUDA_TRY(call)                                                                       \
    do {                                                                                        \
        err = (call);                                                                           \
        if (err != cudaSuccess) {                                                               \
            failed_call = #call;                                                                \
            goto fail;                                                                          \
        }                                                                                       \
    } while (0)

// "name: error string" for a failed call: the call's text up to its '(' (runtime.cu).
FG_HIDDEN void fg_cuda_describe(char *why, size_t len, const char *call, cudaError_t e);

// runtime.cu: one GEMM on device pointers on stream s of device dev (current), alpha != 0 and
// k > 0: with ozaki, SGEMM (DGEMM) by the Ozaki scheme where FASTGEMM_OZAKI (FASTGEMM_OZAKI_D)
// asks for it and it can take the call (ozaki.cu; it synchronises s), else the operands packed
// where FASTGEMM_PACK says (pack.cu), then the kernel the settings (FASTGEMM_KERNEL, _SPLIT_K,
// _STREAM_K) and the tables choose, its workspace from the pool. *note (where note is not
// null): what the Ozaki setting did, for the trace, or NULL.
FG_HIDDEN cudaError_t fg_run_gemm(int dev, const fg_settings *set, const fg_gemm_args *g,
                                  const void *a, int64_t lda, const void *b, int64_t ldb, void *c,
                                  int64_t ldc, cudaStream_t s, bool ozaki = false,
                                  const char **note = nullptr);
// ozaki.cu: C = alpha op(A) op(B) + beta C by the Ozaki scheme on the INT8 tensor cores
// (kernels.h), on stream s of the current device.
// fg_run_ozaki, for device operands, queues it all and synchronises s: *done false, with C
// untouched, where the scheme did not take the call (k too deep, an Inf or NaN in A or B, too
// many entries its guard cannot certify, no workspace): the SIMT (DMMA) kernels then run it.
// *note: which, for the trace.
FG_HIDDEN cudaError_t fg_run_ozaki(const fg_gemm_args *g, const void *a, int64_t lda, const void *b,
                                   int64_t ldb, void *c, int64_t ldc, cudaStream_t s, bool *done,
                                   const char **note);
// Its pieces, which wait for nothing. The sides of g's operands (op(A)'s m rows, op(B)'s n
// columns) and the word their prepares set where an input is Inf or NaN, in one allocation of
// the pool: fg_ozaki_sides_alloc (*ok false, nothing allocated, where the scheme cannot take
// depth k or there is no memory: *note says which). fg_ozaki_prepare_a: op(A)'s rows [r0, r1)
// from a, which points at row r0 (fg_ozaki_prepare_b: op(B)'s columns [c0, c1), b at c0).
// fg_ozaki_queue: the product of the m x n x k call g whose rows of op(A) begin at row r0 of the
// sides and whose columns of op(B) at column c0, from a and b as fg_run_gemm gets them, into c;
// it writes C only where its status accepts the call (fg_ozaki_accepts), the status copied to
// *status (pinned, for the copy not to wait); *queued false, nothing queued, where it could
// get no workspace. fg_ozaki_outcome: the trace's words for a status that has come back, of a
// product over t moduli.
typedef struct {
    void *mem;
    fg_ozaki_side a, b;
    unsigned *inputs;
} fg_ozaki_sides;
FG_HIDDEN cudaError_t fg_ozaki_sides_alloc(const fg_gemm_args *g, fg_ozaki_sides *sd, cudaStream_t s, bool *ok,
                                           const char **note);
FG_HIDDEN cudaError_t fg_ozaki_sides_free(fg_ozaki_sides *sd, cudaStream_t s);
FG_HIDDEN cudaError_t fg_ozaki_prepare_a(const fg_gemm_args *g, fg_ozaki_sides *sd, int64_t r0, int64_t r1,
                                         const void *a, int64_t lda, cudaStream_t s);
FG_HIDDEN cudaError_t fg_ozaki_prepare_b(const fg_gemm_args *g, fg_ozaki_sides *sd, int64_t c0, int64_t c1,
                                         const void *b, int64_t ldb, cudaStream_t s);
FG_HIDDEN cudaError_t fg_ozaki_queue(const fg_gemm_args *g, const fg_ozaki_sides *sd, int64_t r0, int64_t c0,
                                     const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                                     cudaStream_t s, fg_ozaki_status *status, bool *queued, const char **note);
FG_HIDDEN const char *fg_ozaki_outcome(const fg_ozaki_status *st, int64_t m, int64_t n, int t);
// FASTGEMM_OZAKI asks for the scheme on this SGEMM call (on; auto where fg_kernel_ozaki_pays), or
// FASTGEMM_OZAKI_D on this DGEMM call (the same), and no forced kernel stands against it
// (runtime.cu).
FG_HIDDEN bool fg_ozaki_wanted(const fg_settings *set, const fg_gemm_args *g);
// C = beta*C over g->m x g->n on the device (beta = 0 writes zeros without reading C).
FG_HIDDEN cudaError_t fg_run_scale_c(const fg_gemm_args *g, void *c, int64_t ldc, cudaStream_t s);

// pack.cu: a GEMM's operands on the device as its kernel reads them: the caller's (a0, lda0;
// b0, ldb0), or copies in workspaces of the pool (ws_a, ws_b) with leading dimensions of a
// multiple of 16 bytes.
typedef struct {
    const void *a, *b;
    int64_t lda, ldb;
    const void *a0, *b0;
    int64_t lda0, ldb0;
    void *ws_a, *ws_b;
} fg_packed;
// Copies the operands that rule out the kernels' 16-byte copies (pointer or leading dimension)
// into aligned workspaces on stream s, as FASTGEMM_PACK says (0 never; 1 where the kernel
// layer's cost model says the copies pay, fg_kernel_pack, dmma as its; 2 always; unset: 1 for
// DGEMM, 0 for SGEMM), and points p at them. Where no workspace can be had, p stays at the
// caller's operands.
FG_HIDDEN void fg_pack_operands(const fg_settings *set, const fg_gemm_args *g, bool dmma, fg_packed *p,
                                cudaStream_t s);
// Frees p's workspaces on s (after the kernel that reads them is queued).
FG_HIDDEN cudaError_t fg_unpack(fg_packed *p, cudaStream_t s);

// pool.cu: device dev's memory pool, for the pipeline's buffers and the kernels' workspaces: a
// pool of our own (the application's default pool keeps its settings) that keeps up to a
// quarter of the device's memory between calls. Null where none could be made.
FG_HIDDEN cudaMemPool_t fg_cuda_pool(int dev);
// bytes from the current device's pool on stream s (freed with cudaFreeAsync).
FG_HIDDEN cudaError_t fg_pool_alloc(void **p, size_t bytes, cudaStream_t s);

// offload.cu: the call (an operand in host memory) through the pipelined host-operand path on
// device dev (the current device). Returns an FG_* code; *broken: the device is lost.
FG_HIDDEN int fg_offload_gemm(const fg_call *call, int dev, bool *broken, char *why,
                              size_t whylen);
// 1 when device dev's pipeline is set up (its pinned ring allocated).
FG_HIDDEN int fg_offload_warm(int dev);

#endif
