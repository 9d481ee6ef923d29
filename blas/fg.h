/* fg.h: what the layers of libfastgemm share (private; never installed).
 * One GEMM request travels as an fg_gemm_args from the ABI layer (blas/gemm.c) through the
 * dispatcher (blas/dispatch.c) to a backend (cpu_ref/cpu_blas.c or cuda/runtime.cu). */
#ifndef FG_H
#define FG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FG_HIDDEN __attribute__((visibility("hidden")))
#define FG_EXPORT __attribute__((visibility("default")))

typedef enum { FG_F32 = 0, FG_F64 = 1 } fg_dtype;

/* A column-major GEMM, arguments already checked: ta, tb are 'N' or 'T'. alpha and beta are
 * held as double (exact for float values). */
typedef struct {
    fg_dtype dt;
    char ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    const void *a, *b;
    void *c;
    const char *name; /* the entry point, for the trace: "sgemm_", "cblas_dgemm", ... */
} fg_gemm_args;

static inline size_t fg_elem_size(fg_dtype dt) { return dt == FG_F32 ? 4 : 8; }
/* op(A) is m x k; A as stored has rows_a(g) rows and cols_a(g) columns. Same for B (k x n). */
static inline int64_t fg_rows_a(const fg_gemm_args *g) { return g->ta == 'N' ? g->m : g->k; }
static inline int64_t fg_cols_a(const fg_gemm_args *g) { return g->ta == 'N' ? g->k : g->m; }
static inline int64_t fg_rows_b(const fg_gemm_args *g) { return g->tb == 'N' ? g->k : g->n; }
static inline int64_t fg_cols_b(const fg_gemm_args *g) { return g->tb == 'N' ? g->n : g->k; }
/* The reference BLAS's rules, in one place: a quick return touches nothing; otherwise A and B
 * are read only when alpha != 0 and k > 0 (else C = beta*C), and C only when beta != 0. */
static inline int fg_quick_return(const fg_gemm_args *g)
{
    return g->m == 0 || g->n == 0 || ((g->alpha == 0 || g->k == 0) && g->beta == 1);
}
static inline int fg_reads_ab(const fg_gemm_args *g) { return g->alpha != 0 && g->k > 0; }
/* Below this many flops (a 128^3 call) the CPU is always faster than a GPU call's fixed cost:
 * in auto mode such calls on host operands go to the CPU BLAS with no model and no CUDA. */
#define FG_MODEL_MIN_FLOPS 4e6
static inline int fg_small_call(const fg_gemm_args *g)
{
    return 2.0 * (double)g->m * (double)g->n * (double)g->k < FG_MODEL_MIN_FLOPS;
}

/* blas/gemm.c: the Fortran BLAS argument check; returns the first bad argument's position or 0. */
FG_HIDDEN int fg_check_args(char ta, char tb, int64_t m, int64_t n, int64_t k, int64_t lda,
                            int64_t ldb, int64_t ldc);
/* Normalises a valid transpose character to 'N' or 'T'. */
FG_HIDDEN char fg_norm_trans(char t);

/* blas/dispatch.c: runs a checked GEMM on the right backend. Returns 0, or -1 when C could not
 * be computed (only when device operands became unreadable). */
FG_HIDDEN int fg_gemm(const fg_gemm_args *g);
/* The stream form of the C API: returns 0 or FASTGEMM_ERROR_FAILED. */
FG_HIDDEN int fg_gemm_async(const fg_gemm_args *g, void *stream);
/* Records that the calling thread's last call was rejected (fastgemm_last_backend: none). */
FG_HIDDEN void fg_gemm_rejected(void);
FG_HIDDEN void fg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Where an operand lives, as the CUDA driver sees it. */
typedef enum { FG_MEM_HOST = 0, FG_MEM_DEVICE = 1, FG_MEM_MANAGED = 2 } fg_mem_kind;
typedef struct {
    fg_mem_kind a, b, c;
    int device; /* the ordinal of the device operands, -1 when there are none */
    /* Their CUDA context (a CUcontext) when it is one, else NULL: the primary context of the
     * device for cudaMalloc memory, an OpenMP runtime's own for omp_target_alloc memory. */
    void *context;
} fg_operands;

/* cpu_ref/cpu_blas.c: the CPU side, on host (or managed) memory. */
FG_HIDDEN void fg_cpu_gemm(const fg_gemm_args *g);
FG_HIDDEN void fg_host_scale_c(const fg_gemm_args *g); /* C = beta*C; beta = 0 writes zeros */
FG_HIDDEN const char *fg_cpu_blas_name(void); /* the file the CPU BLAS came from */
/* The next definition of a symbol after libfastgemm in the process (never our own), or NULL. */
FG_HIDDEN void *fg_next_symbol(const char *name);

/* cuda/runtime.cu: the GPU side. Nothing here touches CUDA until called. */
/* Fills ops from the CUDA driver's pointer attributes; all host when the process has not loaded
 * the driver (then no pointer can be device memory). ops->device: the device operands' ordinal,
 * -1 when there are none, -2 when they are on different devices. */
FG_HIDDEN void fg_gpu_classify(const fg_gemm_args *g, fg_operands *ops);
/* Probes the devices once. 1 when *device (out of range: replaced by 0) is usable. */
FG_HIDDEN int fg_gpu_usable(int *device);
/* 1 when the host-operand pipeline of `device` is set up (its pinned buffers allocated). */
FG_HIDDEN int fg_gpu_warm(int device);
/* Runs g on the GPU `device`. 0 on success; otherwise a one-line reason in why and
 * FG_GPU_FAILED (C untouched: any backend may redo the call), FG_GPU_FAILED_C_WRITTEN (C may
 * have been partly written: only a call with beta = 0 can be redone) or FG_GPU_FINISHED_ON_CPU
 * (the GPU failed midway and the CPU BLAS computed the part of C it had not written: C is
 * right). */
enum { FG_GPU_OK = 0, FG_GPU_FAILED = 1, FG_GPU_FAILED_C_WRITTEN = 2, FG_GPU_FINISHED_ON_CPU = 3 };
FG_HIDDEN int fg_gpu_gemm(const fg_gemm_args *g, const fg_operands *ops, int device, char *why,
                          size_t whylen);
/* Enqueues g (device or managed operands) on a CUDA stream of `device`, without waiting:
 * 0, or nonzero with a one-line reason (nothing was enqueued). */
FG_HIDDEN int fg_gpu_gemm_async(const fg_gemm_args *g, int device, void *stream, char *why,
                                size_t whylen);
/* The GEMM kernels' rate on device memory (flop/s, an n^3 call, best of 3), or -1. */
FG_HIDDEN double fg_gpu_kernel_rate(int device, fg_dtype dt, int64_t n);
/* The name of device `device` (cudaDeviceProp.name), or "" */
FG_HIDDEN void fg_gpu_name(int device, char *name, size_t len);
/* The device a stream belongs to (-1: the NULL stream, or unknown). */
FG_HIDDEN int fg_gpu_stream_device(void *stream);
/* After a GPU failure with device operands: copies them to the host, runs the CPU BLAS, and
 * copies C back. Returns 0, or -1 when the device memory cannot be read any more. */
FG_HIDDEN int fg_gpu_staged_cpu_gemm(const fg_gemm_args *g, const fg_operands *ops, char *why,
                                     size_t whylen);

/* blas/omp_backend.c: FASTGEMM_BACKEND=omp, the OpenMP-target GEMM of the module
 * libfastgemm_omp.so (omp/omp_gemm.c), loaded at its first use. Runs g on OpenMP device
 * `device` (-1: OpenMP's default; the host when OpenMP has no device). Returns 0 (why: where
 * it ran), -1 (failed, C untouched; why: the reason), or -2 (the module cannot be loaded). */
FG_HIDDEN int fg_omp_gemm(const fg_gemm_args *g, const fg_operands *ops, int device, char *why,
                          size_t whylen);
/* The module's entry points, and the version of this interface it must report. */
#define FG_OMP_ABI 2
typedef int (*fg_omp_abi_fn)(void);
/* Runs g with the module's kernel named `kernel` (NULL: its default). Returns 0, -1 (failed, C
 * untouched; why: the reason), or -3 (no kernel of that name; why: the names). */
typedef int (*fg_omp_gemm_fn)(const fg_gemm_args *g, int a_on_device, int b_on_device,
                              int c_on_device, int device, const char *kernel, char *why,
                              size_t whylen);

/* A call's class in the learning's table: its slot (-1: none) and key. */
typedef struct {
    int slot;
    uint32_t key;
} fg_learn_ticket;
/* blas/model.c: FASTGEMM_MODE=auto's cost model for host operands. Fills the predicted
 * seconds on each side (negative: no prediction; a call too small for the model is predicted
 * only when traced) and returns 1 when the GPU should run g. With learn (NULL: FASTGEMM_LEARN
 * is off), where the two predictions are close, the side comes from the times of earlier calls
 * of g's class: *learn is then its ticket (else slot -1). */
FG_HIDDEN int fg_model_wants_gpu(const fg_gemm_args *g, const fg_operands *ops, int device,
                                 double *t_cpu, double *t_gpu, fg_learn_ticket *learn);
/* With FASTGEMM_LEARN=1, every call the model placed reports its side and times here (learn:
 * fg_model_wants_gpu's ticket, or slot -1), so that the learning knows which samples are clean. */
FG_HIDDEN void fg_model_ran(fg_learn_ticket learn, const fg_gemm_args *g, int gpu, double t_start,
                            double t_end);
/* What a class's calls have taught so far. A sample is clean when its side was settled: not
 * the class's first call on that side, after two calls on the same side, and for the GPU
 * 0.15 s after the last CPU call. */
typedef struct {
    int n[2];           /* clean samples of the CPU [0] and the GPU [1] */
    int tried[2];       /* samples, clean or not */
    double best[2];     /* the best seconds per flop of the clean samples */
    double any[2];      /* ... of all samples */
    double since[2];    /* when the side's sampling (first or recheck) began; -1: not yet */
    double spent[2];    /* seconds of its calls since then (never its first call) */
    double clean_at[2]; /* when its last clean sample came */
    int side;           /* the faster side at the last decision, or -1 before the first */
    int checking;       /* the slower side while it is timed again, or -1 */
    double due;         /* when the slower side is timed again */
    double gap;         /* the gap before that, doubled at each recheck */
} fg_learned;
FG_HIDDEN void fg_learn_init(fg_learned *s);
/* The side (1: GPU) of a class's next call at time `now`; gpu_ok: the GPU may be tried. */
FG_HIDDEN int fg_learn_pick(fg_learned *s, double now, int model_gpu, int gpu_ok);
/* One call of `gpu`'s side that took `seconds` (per_flop a flop), ending at `now`; settled:
 * the side's calls before it make it clean (fg_model_ran's test). */
FG_HIDDEN void fg_learn_sample(fg_learned *s, int gpu, double seconds, double per_flop, int settled,
                               double now);
/* The points of a profile row (times of the calibration's square sizes) to measure again:
 * flag[i] = 1 where no machine gives such a time. Returns how many. */
FG_HIDDEN int fg_profile_suspects(const double *t, int npts, int *flag);
/* The predictions alone, from a profile already loaded (no calibration): 0, or -1. */
FG_HIDDEN int fg_model_predict(const fg_gemm_args *g, const fg_operands *ops, double *t_cpu,
                               double *t_gpu);

/* blas/dispatch.c: the settings, read once from the environment. */
typedef enum { FG_MODE_AUTO = 0, FG_MODE_GPU, FG_MODE_CPU } fg_mode;
typedef enum { FG_GPU_CUDA = 0, FG_GPU_OMP } fg_gpu_backend;
typedef struct {
    fg_mode mode;
    fg_gpu_backend backend; /* FASTGEMM_BACKEND: our CUDA kernels (cuda) or OpenMP target (omp) */
    int device;         /* FASTGEMM_DEVICE, or -1 when unset */
    const char *kernel; /* FASTGEMM_KERNEL: a kernel forced by name, or NULL */
    int split_k;        /* FASTGEMM_SPLIT_K: split-K slices forced (1-64), or 0 (the table's) */
    int stream_k;       /* FASTGEMM_STREAM_K: stream-K for the last waves: 0 never, 1 where it
                         * pays (the default), 2 wherever it can run (tests) */
    /* The host-pointer pipeline (cuda/offload.cu): */
    int64_t pinned_kb; /* FASTGEMM_PINNED_KB: the pinned staging ring, default 128 MB */
    int64_t slot_kb;   /* FASTGEMM_SLOT_KB: one slot of the ring (a copy's chunk), default 16 MB */
    int64_t block;     /* FASTGEMM_BLOCK: rows/columns of its blocks, or 0 (by size) */
    int64_t tail_rows; /* FASTGEMM_TAIL_ROWS: the rows of its last kernel, or 0 (as the rest) */
    int64_t device_mb; /* FASTGEMM_DEVICE_MEMORY_MB: a cap on its device memory, or 0 */
    long fault_after;  /* FASTGEMM_FAULT_AFTER (tests): its Nth kernel launch fails, or 0 */
    int learn;         /* FASTGEMM_LEARN: the auto mode learns from its calls (blas/model.c) */
} fg_config;
FG_HIDDEN const fg_config *fg_get_config(void);
/* The device of calls without device operands: FASTGEMM_DEVICE, else the OpenMP runtime's
 * default device when the process has one (its device n is CUDA device n), else 0. */
FG_HIDDEN int fg_default_device(void);
/* Seconds on the monotonic clock. */
FG_HIDDEN double fg_now_s(void);
/* 1 when FASTGEMM_TRACE writes trace lines. */
FG_HIDDEN int fg_tracing(void);
/* The GEMM calls in progress in the process (the staging threads are shared among them). */
FG_HIDDEN int fg_active_calls(void);

#ifdef __cplusplus
}
#endif
#endif /* FG_H */
