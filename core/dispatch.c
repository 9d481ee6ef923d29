/* dispatch.c: the one hop between the ABI layer and the backends. For each call: the quick
 * return, where the operands live, the policy that orders the backends to try (the GPU's
 * first when the call wants the GPU, the CPU's last), and a loop that tries them in that order
 * until one computes C: a failed GPU falls back to the next entry. Then the trace line. */
#include "core/dispatch.h"

#include "backends/backend.h"
#include "core/model.h"
#include "core/settings.h"
#include "core/trace.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int active_calls;
static atomic_uint calls_begun;
static atomic_int warned_no_device;

int fg_active_calls(void) { return atomic_load(&active_calls); }
unsigned fg_calls_begun(void) { return atomic_load(&calls_begun); }

void fg_gemm_rejected(void) { fg_trace_rejected(); }

/* ---- the backends, each with the same face ---- */

typedef struct {
    const char *name;
    fastgemm_backend id; /* what the trace and fastgemm_last_backend say when it computes C */
    int gpu;             /* a GPU side (for the learning's record) */
    /* 1 when it can take the call; else 0, with a reason for the trace in *why (NULL: none) */
    int (*usable)(fg_call *call, const char **why);
    int (*gemm)(const fg_call *call, char *why, size_t whylen); /* an FG_* code */
} backend;

static int cpu_usable(fg_call *call, const char **why)
{
    (void)why;
    return !fg_on_device(&call->ops); /* the CPU BLAS cannot read device memory */
}
static int cpu_gemm(const fg_call *call, char *why, size_t whylen)
{
    (void)why, (void)whylen;
    fg_cpu_gemm(call->g);
    return FG_OK;
}
static int staged_usable(fg_call *call, const char **why)
{
    (void)why;
    return fg_on_device(&call->ops);
}
static int cuda_usable(fg_call *call, const char **why)
{
    if (call->ops.device == -2) {
        *why = "operands on different devices";
        return 0;
    }
    if (fg_gpu_usable(&call->device)) return 1;
    const fg_settings *s = call->set;
    if (fg_settings_mode(s) == FG_MODE_GPU || fg_on_device(&call->ops)) {
        *why = "no usable CUDA device";
        if (!atomic_exchange(&warned_no_device, 1)) fg_warn("no usable CUDA device; GEMMs run on the CPU");
    }
    return 0;
}
static int omp_usable(fg_call *call, const char **why)
{
    if (call->ops.device != -2) return 1; /* fg_omp_usable was asked by the policy */
    *why = "operands on different devices";
    return 0;
}
static int omp_gemm(const fg_call *call, char *why, size_t whylen)
{
    /* The OpenMP device: the device operands' (OpenMP's device n is CUDA device n), or
     * FASTGEMM_DEVICE, or OpenMP's own default (-1). */
    fg_call c = *call;
    c.device = call->ops.device >= 0 ? call->ops.device : call->set->device;
    return fg_omp_gemm(&c, why, whylen);
}

static const backend cpu = {"cpu", FASTGEMM_BACKEND_CPU, 0, cpu_usable, cpu_gemm};
/* Device operands after a GPU failure: copied through the host to the CPU BLAS. */
static const backend cpu_staged = {"cpu-staged", FASTGEMM_BACKEND_CPU, 0, staged_usable,
                                   fg_gpu_staged_cpu_gemm};
static const backend cuda = {"cuda", FASTGEMM_BACKEND_GPU, 1, cuda_usable, fg_gpu_gemm};
static const backend omp = {"omp", FASTGEMM_BACKEND_OMP, 1, omp_usable, omp_gemm};

/* ---- the policy ---- */

/* A call the default model puts at this many seconds on the CPU or more is large: while the GPU
 * starts it waits for it (up to FASTGEMM_START_WAIT_MS) rather than run on the CPU beside the
 * start, which slows both. */
#define FG_START_WAIT_FROM_S 0.05

/* FASTGEMM_MODE=auto on host operands: 1 when the cost model predicts the GPU faster. Its
 * predictions go to the trace; with FASTGEMM_LEARN, *learn is the call's class. The first such
 * call starts the GPU (core/start.c): until it is set up the CPU, or for a large call the GPU
 * once it is (a bounded wait); then, until the machine's profile is ready, the cautious default
 * model. */
static int model_wants_gpu(fg_call *call, fg_trace *t, fg_learn_ticket *learn)
{
    const fg_settings *s = call->set;
    const fg_gemm_args *g = call->g;
    fg_profile p;
    if (!fg_reads_ab(g) || fg_small_call(g)) { /* the CPU; predicted only if a profile is at hand */
        if (call->traced && fg_profile_get(s, call->device, 0, g->abi, &p))
            fg_model_predict(&p, g, &call->ops, &t->pred_cpu, &t->pred_gpu);
        return 0;
    }
    if (!fg_profile_get(s, call->device, 1, g->abi, &p)) {
        double tc, tg;
        fg_model_predict_default(g, &call->ops, &tc, &tg);
        if (!fg_gpu_started() && !(tg < tc && tc >= FG_START_WAIT_FROM_S && s->start_wait_ms > 0 &&
                                   fg_gpu_start_wait(1e-3 * s->start_wait_ms)))
            return 0; /* the CPU while the GPU starts: no prediction */
        if (!fg_profile_get(s, call->device, 0, g->abi, &p)) {
            t->pred_cpu = tc, t->pred_gpu = tg;
            return tg < tc;
        }
    }
    fg_model_predict(&p, g, &call->ops, &t->pred_cpu, &t->pred_gpu);
    if (s->learn) return fg_learn_side(g, fg_gpu_warm(call->device), t->pred_cpu, t->pred_gpu, learn);
    return t->pred_gpu < t->pred_cpu;
}

/* The backends to try for the call, in order; returns how many. Device operands go to the GPU
 * in every mode (the CPU BLAS cannot read them); host operands in auto mode go where the cost
 * model predicts the shorter time; managed ones to the GPU. */
static int policy(fg_call *call, fg_trace *t, fg_learn_ticket *learn, int *model_placed,
                  const backend **order)
{
    const fg_settings *s = call->set;
    const fg_mode mode = fg_settings_mode(s);
    const int on_device = fg_on_device(&call->ops);
    int want_gpu = on_device || mode == FG_MODE_GPU || (mode == FG_MODE_AUTO && fg_managed(&call->ops));
    *model_placed = !want_gpu && mode == FG_MODE_AUTO;
    if (*model_placed) {
        want_gpu = model_wants_gpu(call, t, s->learn ? learn : NULL);
    } else if (call->traced) {
        fg_profile p;
        if (fg_profile_get(s, call->device, 0, call->g->abi, &p))
            fg_model_predict(&p, call->g, &call->ops, &t->pred_cpu, &t->pred_gpu);
    }
    int n = 0;
    if (want_gpu) order[n++] = s->backend == FG_GPU_OMP && fg_omp_usable(s) ? &omp : &cuda;
    order[n++] = on_device ? &cpu_staged : &cpu;
    return n;
}

/* ---- the call ---- */

static int gemm(fg_call *call, fg_trace *t)
{
    const fg_gemm_args *g = call->g;
    const fg_settings *s = call->set;
    fg_learn_ticket learn = {-1, 0};
    int model_placed;
    const backend *order[2];
    const int count = policy(call, t, &learn, &model_placed, order);
    const int track = model_placed && s->learn; /* FASTGEMM_LEARN: the call's time is reported */
    /* For the trace: a side the model did not predict faster, taken to time it or as learned. */
    const char *off_model = learn.slot >= 0 && (order[0]->gpu != (t->pred_gpu < t->pred_cpu))
                              ? "learning: not the model's side"
                              : NULL;
    char why[512], fell[512] = ""; /* fell: why the last backend tried did not compute C */
    for (int i = 0; i < count; i++) {
        const backend *b = order[i];
        const char *unusable = NULL;
        if (!b->usable(call, &unusable)) {
            if (unusable) snprintf(fell, sizeof fell, "%s", unusable);
            continue;
        }
        why[0] = 0;
        const double t_start = track ? fg_now_s() : 0;
        const int rc = b->gemm(call, why, sizeof why);
        if (rc == FG_OK) {
            if (track) fg_learn_ran(fell[0] ? (fg_learn_ticket){-1, 0} : learn, g, b->gpu, t_start, fg_now_s());
            char where[600] = "";
            fastgemm_backend id = b->id;
            if (fell[0]) { /* computed on the CPU after the GPU could not */
                id = FASTGEMM_BACKEND_CPU_FALLBACK;
                snprintf(where, sizeof where, "%s", fell);
            } else if (b == &cuda && call->traced) {
                snprintf(where, sizeof where, "device %d%s%s%s%s", call->device, why[0] ? "; " : "", why,
                         off_model ? "; " : "", off_model ? off_model : "");
            } else {
                snprintf(where, sizeof where, "%s", b == &omp ? why : off_model ? off_model : "");
            }
            fg_trace_end(s, t, g, id, where);
            return 0;
        }
        if (rc == FG_FINISHED_ON_CPU) {
            fg_trace_end(s, t, g, FASTGEMM_BACKEND_CPU_FALLBACK, why);
            return 0;
        }
        if (b == &cpu_staged) {
            fg_warn("%s: the GPU failed (%s) and the device operands cannot be read (%s); "
                    "C is not computed", g->name, fell[0] ? fell : "?", why);
            fg_trace_end(s, t, g, FASTGEMM_BACKEND_NONE, "failed");
            return -1;
        }
        if (rc == FG_FAILED_C_WRITTEN && g->beta != 0) {
            /* C was partly overwritten and its old values are needed: nothing can redo it. */
            fg_warn("%s: the GPU failed after C was partly written (%s); C is not valid", g->name, why);
            fg_trace_end(s, t, g, FASTGEMM_BACKEND_NONE, why);
            return -1;
        }
        snprintf(fell, sizeof fell, "%s", why);
    }
    fg_trace_end(s, t, g, FASTGEMM_BACKEND_NONE, fell);
    return -1;
}

/* The call as the backends take it, its operands classified (device set by the caller). */
static fg_call call_of(const fg_settings *s, const fg_gemm_args *g)
{
    fg_call call = {g, {FG_MEM_HOST, FG_MEM_HOST, FG_MEM_HOST, -1, NULL}, 0, s, s->trace_fd >= 0,
                    fg_cpu_gemm, fg_active_calls};
    fg_gpu_classify(g, &call.ops);
    return call;
}

int fg_gemm(const fg_gemm_args *g)
{
    const fg_settings *s = fg_settings_get();
    fg_trace t = {s->trace_fd >= 0 ? fg_now_s() : 0, -1, -1};
    if (fg_quick_return(g)) {
        fg_trace_end(s, &t, g, FASTGEMM_BACKEND_NONE, NULL);
        return 0;
    }
    fg_call call = call_of(s, g);
    /* A small call on host operands outside gpu mode: the CPU BLAS, with nothing to decide (the
     * model keeps every such call on the CPU). Tracing takes the long way, for the predictions. */
    if (!call.traced && !fg_on_device(&call.ops) && !fg_managed(&call.ops) &&
        fg_settings_mode(s) != FG_MODE_GPU && fg_small_call(g)) {
        fg_cpu_gemm(g);
        fg_trace_end(s, &t, g, FASTGEMM_BACKEND_CPU, NULL);
        return 0;
    }
    call.device = call.ops.device >= 0 ? call.ops.device : fg_default_device(s);
    atomic_fetch_add(&calls_begun, 1);
    atomic_fetch_add(&active_calls, 1);
    const int rc = gemm(&call, &t);
    atomic_fetch_sub(&active_calls, 1);
    return rc;
}

int fg_gemm_async(const fg_gemm_args *g, void *stream)
{
    const fg_settings *s = fg_settings_get();
    fg_trace t = {fg_now_s(), -1, -1};
    if (fg_quick_return(g)) {
        fg_trace_end(s, &t, g, FASTGEMM_BACKEND_NONE, NULL);
        return 0;
    }
    fg_call call = call_of(s, g);
    /* A host operand would fault the kernel and with it the whole CUDA context: refused. */
    const fg_operands *o = &call.ops;
    if ((fg_reads_ab(g) && (o->a == FG_MEM_HOST || o->b == FG_MEM_HOST)) || o->c == FG_MEM_HOST) {
        fg_warn("%s: an operand is host memory (the stream form takes device or managed memory); "
                "nothing was enqueued", g->name);
        fg_trace_end(s, &t, g, FASTGEMM_BACKEND_NONE, "host operand");
        return -1;
    }
    call.device = fg_gpu_stream_device(stream);
    if (call.device < 0) call.device = fg_default_device(s);
    char why[256] = "no usable CUDA device";
    if (fg_gpu_usable(&call.device) && fg_gpu_gemm_async(&call, stream, why, sizeof why) == 0) {
        fg_trace_end(s, &t, g, FASTGEMM_BACKEND_GPU, "enqueued");
        return 0;
    }
    fg_warn("%s: %s; nothing was enqueued", g->name, why);
    fg_trace_end(s, &t, g, FASTGEMM_BACKEND_NONE, why);
    return -1;
}

FG_EXPORT int fastgemm_set_mode(const char *mode)
{
    const int m = mode ? fg_parse_mode(mode) : -1;
    if (m < 0) return -1;
    fg_settings_set_mode((fg_mode)m);
    return 0;
}

FG_EXPORT const char *fastgemm_version(void) { return FASTGEMM_VERSION_STRING; }
