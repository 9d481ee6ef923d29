/* model.h: FASTGEMM_MODE=auto's choice between the CPU BLAS and the GPU for host operands.
 *   model.c      the cost model: a pure function of a profile
 *   learn.c      the learning from the calls' own times (FASTGEMM_LEARN=1)
 *   profile.c    the profile's file: where it lives and its format
 *   calibrate.c  measuring the machine: the fastgemm-calibrate tool, and the GPU's start when a
 *                process finds no stored profile
 *   start.c      the GPU's start off the calling thread, at the first call that wants the GPU:
 *                the device, the host-operand pipeline, the kernels, then the profile */
#ifndef FG_MODEL_H
#define FG_MODEL_H

#include "common/fg.h"

#include <stdatomic.h>

/* The calibration's square sizes. */
#define FG_PROFILE_NPTS 11
FG_HIDDEN extern const int64_t fg_profile_sizes[FG_PROFILE_NPTS];

/* A machine's profile, per precision (0: float, 1: double). */
typedef struct {
    double t0[2];     /* seconds: the GPU path's fixed cost per call */
    double bw;        /* bytes per second: the pipeline's copy rate */
    double kernel[2]; /* flop/s of the kernels on device memory */
    double cpu[2][FG_PROFILE_NPTS], gpu[2][FG_PROFILE_NPTS]; /* seconds per call of size^3; 0:
                                                               * not measured */
} fg_profile;

/* Below this many flops (a 128^3 call) the CPU is always faster than a GPU call's fixed cost:
 * in auto mode such calls on host operands go to the CPU BLAS with no model and no CUDA. */
#define FG_MODEL_MIN_FLOPS 4e6
static inline int fg_small_call(const fg_gemm_args *g) { return fg_flops(g) < FG_MODEL_MIN_FLOPS; }

/* ---- model.c ---- */
/* The predicted seconds of g on the CPU BLAS and on the GPU path, from profile p. */
FG_HIDDEN void fg_model_predict(const fg_profile *p, const fg_gemm_args *g, const fg_operands *ops,
                                double *t_cpu, double *t_gpu);
/* The same from a cautious stand-in for a profile, for the calls while the machine's profile is
 * being measured: a fast CPU and a slow PCIe, so that only calls the GPU wins on any machine go
 * to it. */
FG_HIDDEN void fg_model_predict_default(const fg_gemm_args *g, const fg_operands *ops,
                                        double *t_cpu, double *t_gpu);
/* The points of a profile row (times of the calibration's square sizes) to measure again:
 * flag[i] = 1 where no machine gives such a time. Returns how many. */
FG_HIDDEN int fg_profile_suspects(const double *t, int npts, int *flag);

/* ---- profile.c ---- */
/* The profile's file for device `device` under s->profile_dir, named by the GPU, the CPU, the
 * CPU BLAS (of the family of names abi) and the CPUs the process may use; "" when there is no
 * cache folder. */
FG_HIDDEN void fg_profile_path(const fg_settings *s, int device, fg_abi abi, char *path, size_t len);
FG_HIDDEN int fg_profile_save(const fg_profile *p, const char *path); /* 0 or -1 */
FG_HIDDEN int fg_profile_load(fg_profile *p, const char *path);       /* 0 or -1 */

/* ---- calibrate.c ---- */
/* How a measurement runs: on `device`, in short (quick) or in full, with the CPU BLAS of abi's
 * names; it gives up when *stop is set (stop may be NULL). */
typedef struct {
    int device, quick;
    fg_abi abi;
    const atomic_int *stop;
} fg_measure;
/* Measures the machine's profile into *p: 0, or -1 (the GPU failed, or stopped). */
FG_HIDDEN int fg_measure_profile(const fg_settings *s, const fg_measure *how, fg_profile *p);

/* ---- start.c ---- */
/* The profile of this process, when one is loaded or measured, copied to *p: 1. Otherwise 0;
 * with start, the GPU's start begins (once) on a thread of its own: the device is probed, the
 * host-operand pipeline and the kernels are set up, and the profile is loaded from its file or,
 * where there is none, measured with the CPU BLAS of abi's names. */
FG_HIDDEN int fg_profile_get(const fg_settings *s, int device, int start, fg_abi abi, fg_profile *p);
/* 1 once the GPU's start has set up the GPU (the profile may still be being measured). */
FG_HIDDEN int fg_gpu_started(void);
/* Waits up to seconds for the GPU's start to set up the GPU: 1 when it has, 0 when it has not
 * (it failed, was never begun, or is still under way). */
FG_HIDDEN int fg_gpu_start_wait(double seconds);
/* The profile fastgemm_calibrate measured: this process's from now on. */
FG_HIDDEN void fg_profile_set(const fg_profile *p);

/* ---- learn.c ---- */
/* A call's class in the learning's table: its slot (-1: none) and key. */
typedef struct {
    int slot;
    uint32_t key;
} fg_learn_ticket;
/* The side (1: the GPU) of call g, whose predictions are t_cpu and t_gpu: the model's, or
 * where they lie close, what the class's earlier calls taught (*t: then the class's ticket,
 * else slot -1). gpu_warm: the GPU's pipeline is set up. */
FG_HIDDEN int fg_learn_side(const fg_gemm_args *g, int gpu_warm, double t_cpu, double t_gpu,
                            fg_learn_ticket *t);
/* Every call the model placed reports its side and times here (ticket slot -1: not a class
 * that learns), so that the learning knows which samples are clean. */
FG_HIDDEN void fg_learn_ran(fg_learn_ticket t, const fg_gemm_args *g, int gpu, double t_start,
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
 * the side's calls before it make it clean. */
FG_HIDDEN void fg_learn_sample(fg_learned *s, int gpu, double seconds, double per_flop, int settled,
                               double now);

#endif
