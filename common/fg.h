/* fg.h: the types every layer of libfastgemm shares (private; never installed).
 * A GEMM request travels as an fg_gemm_args from the ABI layer (blas/) through the dispatcher
 * (core/) to a backend (backends/), and as an fg_call, with where its operands live and the
 * settings, from the dispatcher down. common/util.c holds the warning and the clock. */
#ifndef FG_H
#define FG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FG_HIDDEN __attribute__((visibility("hidden")))
#define FG_EXPORT __attribute__((visibility("default")))

/* The most CUDA devices a process's tables are sized for; devices past it are not used. */
#define FG_MAX_DEVICES 64

typedef enum { FG_F32 = 0, FG_F64 = 1 } fg_dtype;

/* The family of BLAS names a call came in through; its CPU side goes on to the same family's
 * next definition (backends/cpu/cpu_blas.c), so that a pip wheel's calls reach the wheel's own
 * OpenBLAS. */
typedef enum {
    FG_ABI_BLAS = 0,  /* sgemm_, dgemm_, sgemm_64_, dgemm_64_, cblas_*gemm, cblas_*gemm64_ */
    FG_ABI_SCIPY,     /* SciPy's wheels (LP64): scipy_sgemm_, scipy_cblas_sgemm, ... */
    FG_ABI_SCIPY64,   /* NumPy's wheels (ILP64): scipy_sgemm_64_, scipy_cblas_sgemm64_, ... */
    FG_ABI_COUNT
} fg_abi;

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
    fg_abi abi;
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
static inline double fg_flops(const fg_gemm_args *g)
{
    return 2.0 * (double)g->m * (double)g->n * (double)g->k;
}

/* Where an operand lives, as the CUDA driver sees it. */
typedef enum { FG_MEM_HOST = 0, FG_MEM_DEVICE = 1, FG_MEM_MANAGED = 2 } fg_mem_kind;
typedef struct {
    fg_mem_kind a, b, c;
    int device; /* the ordinal of the device operands, -1 when there are none, -2 when they are
                 * on different devices */
    /* Their CUDA context (a CUcontext) when it is one, else NULL: the primary context of the
     * device for cudaMalloc memory, an OpenMP runtime's own for omp_target_alloc memory. */
    void *context;
} fg_operands;

static inline int fg_on_device(const fg_operands *o)
{
    return o->a == FG_MEM_DEVICE || o->b == FG_MEM_DEVICE || o->c == FG_MEM_DEVICE;
}
static inline int fg_managed(const fg_operands *o)
{
    return o->a == FG_MEM_MANAGED || o->b == FG_MEM_MANAGED || o->c == FG_MEM_MANAGED;
}

/* The settings, read once from the environment by core/settings.c and handed down. */
typedef enum { FG_MODE_AUTO = 0, FG_MODE_GPU, FG_MODE_CPU } fg_mode;
typedef enum { FG_GPU_CUDA = 0, FG_GPU_OMP } fg_gpu_backend;
/* How a tuned kernel family chooses its configuration and split-K for a call: its cost model over
 * every configuration and split (kernels/choose.cuh), or its table's nearest measured problem. */
typedef enum { FG_CHOICE_MODEL = 0, FG_CHOICE_TABLE } fg_choice;
typedef struct {
    fg_mode mode;           /* FASTGEMM_MODE (fastgemm_set_mode changes it: read it atomically) */
    fg_gpu_backend backend; /* FASTGEMM_BACKEND: our CUDA kernels (cuda) or OpenMP target (omp) */
    int device;             /* FASTGEMM_DEVICE, or -1 when unset */
    const char *kernel;     /* FASTGEMM_KERNEL: a kernel forced by name, or NULL */
    int split_k;            /* FASTGEMM_SPLIT_K: split-K slices forced (1-64), or 0 (the table's) */
    int stream_k;           /* FASTGEMM_STREAM_K: stream-K for the last waves: 0 never, 1 where it
                             * pays (the default), 2 wherever it can run (tests) */
    fg_choice choice;       /* FASTGEMM_CHOICE: model (the default) or table */
    int pack;               /* FASTGEMM_PACK: operands that rule out 16-byte copies copied
                             * aligned first: 0 never, 1 where it pays, 2 always; -1 (unset):
                             * 1 for DGEMM, 0 for SGEMM (backends/cuda/pack.cu) */
    int ozaki;              /* FASTGEMM_OZAKI: SGEMM on device operands by the Ozaki scheme on
                             * the INT8 tensor cores: 0 off (the default), 1 on, 2 auto (where
                             * the shape says it is the faster path) */
    int ozaki_d;            /* FASTGEMM_OZAKI_D: DGEMM on device operands by the Ozaki scheme:
                             * 0 off (the default), 1 on, 2 auto */
    /* The host-operand pipeline (backends/cuda/offload*): */
    int64_t pinned_kb; /* FASTGEMM_PINNED_KB: the pinned staging ring */
    int64_t slot_kb;   /* FASTGEMM_SLOT_KB: one slot of the ring (a copy's chunk) */
    int64_t block;     /* FASTGEMM_BLOCK: rows/columns of its blocks, or 0 (by size) */
    int64_t tail_rows; /* FASTGEMM_TAIL_ROWS: the rows of its last kernels, or 0 (as the rest) */
    int64_t device_mb; /* FASTGEMM_DEVICE_MEMORY_MB: a cap on its device memory, or 0 */
    long fault_after;  /* FASTGEMM_FAULT_AFTER (tests): its Nth kernel launch fails, or 0 */
    int staging_threads; /* FASTGEMM_STAGING_THREADS: a cap on the staging threads, or 0 */
    int learn;         /* FASTGEMM_LEARN: the auto mode learns from its calls */
    int start_wait_ms; /* FASTGEMM_START_WAIT_MS: how long a large call waits for the GPU's start */
    int trace_fd;      /* FASTGEMM_TRACE: where trace lines go, or -1 */
    const char *cpu_blas; /* FASTGEMM_CPU_BLAS: the CPU BLAS's path, or NULL */
    const char *omp_lib;  /* FASTGEMM_OMP_LIB: the OpenMP module's path, or NULL */
    /* The cost profile's folder ($XDG_CACHE_HOME/fastgemm or $HOME/.cache/fastgemm; "" when
     * neither is set), and OPENBLAS_NUM_THREADS (part of a profile's name), or "". */
    char profile_dir[1024];
    const char *blas_threads;
    const char *timeline_file; /* FG_TIMELINE_FILE (developer builds with FG_TIMELINE), or NULL */
} fg_settings;

/* One GEMM as the dispatcher hands it to a backend. */
typedef struct {
    const fg_gemm_args *g;
    fg_operands ops;
    int device;              /* the CUDA (or OpenMP) device the call runs on */
    const fg_settings *set;
    int traced;              /* a trace line will be written: report the details in `why` */
    /* The CPU BLAS, for a GPU backend that finishes C on the CPU after a failure. */
    void (*cpu_gemm)(const fg_gemm_args *g);
    /* The GEMM calls in progress in the process (the staging threads are shared among them). */
    int (*active_calls)(void);
} fg_call;

/* What a backend's gemm returns. FG_FAILED: C untouched, any backend may redo the call;
 * FG_FAILED_C_WRITTEN: C may have been partly written (only a call with beta = 0 can be redone);
 * FG_FINISHED_ON_CPU: the GPU failed midway and the CPU BLAS computed the part of C it had not
 * written (C is right). */
enum { FG_OK = 0, FG_FAILED = 1, FG_FAILED_C_WRITTEN = 2, FG_FINISHED_ON_CPU = 3 };

/* common/util.c */
/* A one-line message on stderr, "fastgemm: " first. */
FG_HIDDEN void fg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Seconds on the monotonic clock. */
FG_HIDDEN double fg_now_s(void);

/* common/symbols.c */
/* The program's own definition of a BLAS name: the next one after libfastgemm in the global
 * search order, else the first in any loaded object (a Python extension's bundled BLAS lives in
 * a local scope), never one of libfastgemm or of another copy of it; NULL when there is none.
 * *skipped (when not NULL) names a copy of libfastgemm that defines it, if one was passed over. */
FG_HIDDEN void *fg_next_symbol(const char *name, const char **skipped);
/* 1 when a dlopen handle is a libfastgemm (this copy or another). */
FG_HIDDEN int fg_handle_is_fastgemm(void *handle);

#ifdef __cplusplus
}
#endif
#endif /* FG_H */
