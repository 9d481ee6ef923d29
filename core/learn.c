/* learn.c: FASTGEMM_LEARN=1 (off by default), the auto mode learning from its calls.
 * A profile's time for a call moves with where the matrices lie and with the machine's state
 * while it was measured. So where the model's two predictions lie within LEARN_WINDOW of each
 * other, the calls of a class (precision, transposes, beta = 0 or not, m, n and k to half an
 * octave) are timed: first on the model's side, then on the other, LEARN_SAMPLES clean samples
 * each, then the side with the better best time per flop wins.
 * A sample is clean when its side was settled. A CPU BLAS's threads sleep after a while without
 * work and are slow to wake, and spin for a while after a call, taking the cores from the GPU
 * path's host copies; a class's first GPU calls set up its buffers. So a sample needs two calls
 * on its side right before it, must not be the class's first there, and on the GPU must come
 * LEARN_SPIN_S after the last CPU call. A side's sampling, first or recheck, ends after
 * LEARN_EXPLORE_S seconds of its calls with what it has (their time, not the clock's: a program
 * that does other work between must not cut it short). The slower side is timed again after
 * LEARN_FIRST_GAP seconds, then twice as long each time up to LEARN_MAX_GAP, by the clock, so
 * that the rechecks stay rare. The GPU side is tried against the model only where its pipeline
 * is already set up, or once the class's CPU calls have taken LEARN_COLD_S: a first GPU call
 * pays for the pinned buffers. A side's first call counts neither as a sample nor towards its
 * time. perf/notes/ holds the measurements behind these numbers. */
#include "core/model.h"

#include <math.h>
#include <pthread.h>

#define LEARN_WINDOW 3.0
#define LEARN_SAMPLES 2
#define LEARN_SPIN_S 0.15
#define LEARN_EXPLORE_S 0.2
#define LEARN_COLD_S 2.0 /* the CPU time after which a cold GPU is tried */
#define LEARN_GIVE_UP_S 10.0 /* by the clock: a side whose calls fail or stop coming */
#define LEARN_FIRST_GAP 2.0
#define LEARN_MAX_GAP 64.0
#define LEARN_SLOTS 64

typedef struct {
    uint32_t key; /* 0: free */
    fg_learned s;
} learn_t;
static learn_t classes[LEARN_SLOTS];
static struct {
    int side;      /* the side of the last call the model placed, -1 before the first */
    long calls;    /* calls on that side in a row */
    double cpu_end; /* when the last CPU call ended */
} last_run = {-1, 0, -1e300};
static pthread_mutex_t learn_lock = PTHREAD_MUTEX_INITIALIZER;

void fg_learn_init(fg_learned *s)
{
    *s = (fg_learned){{0, 0}, {0, 0}, {INFINITY, INFINITY}, {INFINITY, INFINITY}, {-1, -1},
                      {0, 0}, {-1e300, -1e300}, -1, -1, 0, 0};
}

/* The side has its samples: LEARN_SAMPLES clean ones, or as many of any kind and the time. */
static int sampled(const fg_learned *s, int x, double now)
{
    return s->n[x] >= LEARN_SAMPLES ||
           (s->tried[x] >= LEARN_SAMPLES && s->spent[x] >= LEARN_EXPLORE_S) ||
           (s->since[x] >= 0 && now - s->since[x] >= LEARN_GIVE_UP_S);
}

static double best_of(const fg_learned *s, int x) { return s->n[x] ? s->best[x] : s->any[x]; }

int fg_learn_pick(fg_learned *s, double now, int model_gpu, int gpu_ok)
{
    for (int i = 0; i < 2; i++) {
        const int x = i ? !model_gpu : model_gpu;
        if (sampled(s, x, now)) continue;
        if (x && i && !gpu_ok && s->spent[0] < LEARN_COLD_S) return 0; /* cold: not yet */
        if (s->since[x] < 0) s->since[x] = now;
        return x;
    }
    if (s->checking >= 0) { /* a recheck: until a clean sample, as long as sampled() allows */
        const int x = s->checking;
        if (s->clean_at[x] < s->since[x] && s->spent[x] < LEARN_EXPLORE_S &&
            now - s->since[x] < LEARN_GIVE_UP_S && (!x || gpu_ok))
            return x;
        s->checking = -1;
    }
    const int faster = best_of(s, 1) < best_of(s, 0);
    if (faster != s->side) { /* the first decision, or the other side won a recheck */
        s->side = faster;
        s->gap = LEARN_FIRST_GAP;
        s->due = now + s->gap;
        return faster;
    }
    if (now < s->due || (!faster && !gpu_ok)) return faster;
    s->gap = fmin(2 * s->gap, LEARN_MAX_GAP);
    s->due = now + s->gap;
    s->checking = !faster;
    s->since[!faster] = now;
    s->spent[!faster] = 0;
    return !faster;
}

void fg_learn_sample(fg_learned *s, int gpu, double seconds, double per_flop, int settled,
                     double now)
{
    const int clean = settled && s->tried[gpu] > 0;
    if (s->tried[gpu]++ > 0) s->spent[gpu] += seconds;
    s->any[gpu] = fmin(s->any[gpu], per_flop);
    if (!clean) return;
    s->n[gpu]++;
    s->best[gpu] = fmin(s->best[gpu], per_flop);
    s->clean_at[gpu] = now;
}

static uint32_t class_key(const fg_gemm_args *g)
{
    const int64_t dims[3] = {g->m, g->n, g->k};
    uint32_t key = 1u << 31 | (uint32_t)(g->dt == FG_F64) << 30 | (uint32_t)(g->ta != 'N') << 29 |
                   (uint32_t)(g->tb != 'N') << 28 | (uint32_t)(g->beta != 0) << 27;
    for (int i = 0; i < 3; i++) key |= (uint32_t)(2.0 * log2((double)dims[i])) << (18 - 9 * i);
    return key;
}

int fg_learn_side(const fg_gemm_args *g, int gpu_ok, double t_cpu, double t_gpu, fg_learn_ticket *t)
{
    const int model_gpu = t_gpu < t_cpu;
    t->slot = -1;
    if (fmax(t_cpu, t_gpu) > LEARN_WINDOW * fmin(t_cpu, t_gpu)) return model_gpu;
    const uint32_t key = class_key(g);
    const double now = fg_now_s();
    pthread_mutex_lock(&learn_lock);
    int i = (int)(key * 2654435761u >> 26) % LEARN_SLOTS;
    learn_t *e = &classes[i];
    if (e->key != key) { /* a new class */
        e->key = key;
        fg_learn_init(&e->s);
    }
    const int side = fg_learn_pick(&e->s, now, model_gpu, gpu_ok);
    pthread_mutex_unlock(&learn_lock);
    t->slot = i;
    t->key = key;
    return side;
}

void fg_learn_ran(fg_learn_ticket learn, const fg_gemm_args *g, int gpu, double t_start, double t_end)
{
    pthread_mutex_lock(&learn_lock);
    const int settled = last_run.side == gpu && last_run.calls >= 2 &&
                        (!gpu || t_start - last_run.cpu_end >= LEARN_SPIN_S);
    if (last_run.side == gpu) {
        last_run.calls++;
    } else {
        last_run.side = gpu;
        last_run.calls = 1;
    }
    if (!gpu) last_run.cpu_end = t_end;
    const double flops = fg_flops(g);
    const int slot = learn.slot;
    if (slot >= 0 && slot < LEARN_SLOTS && classes[slot].key == learn.key) /* still its class */
        fg_learn_sample(&classes[slot].s, gpu, t_end - t_start, (t_end - t_start) / flops, settled,
                        t_end);
    pthread_mutex_unlock(&learn_lock);
}
