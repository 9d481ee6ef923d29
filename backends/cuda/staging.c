/* staging.c: parallel copies between pageable and pinned memory for the host-pointer pipeline
 * (offload*.cu). One thread's pageable-to-pinned copies fall far short of what the PCIe link
 * takes, so the pipeline's staging runs on a pool of threads. The pool is started at the first
 * copy large enough to share, sized to the CPUs this process may use, and runs one copy at a
 * time: concurrent GEMM calls take turns rather than multiply the threads.
 *
 * A copy is cut into parts that the caller and the threads claim with an atomic ticket, with no
 * lock on the way (with a mutex taken per part the threads queue on it, and a shared copy runs
 * at the speed of one thread). Between copies the threads sleep, except while a call's pipeline
 * runs (fg_stage_begin to fg_stage_end) and no other GEMM call is in progress: then half of
 * them wait for its next copy spinning (yielding the core to anything else that wants it), for
 * up to FG_STAGE_SPIN_S at a time, because waking a sleeping thread takes as long as copying a
 * megabyte. After fork() the child starts a pool of its own.
 * Plain memcpy: non-temporal stores stage slower (perf/NOTES.md, issue 5). */
#define _GNU_SOURCE
#include "staging.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* Below this many bytes a copy stays on the calling thread. */
#define FG_STAGE_SHARE_BYTES ((size_t)1 << 20)
/* The smallest part of a shared copy. */
#define FG_STAGE_PART_BYTES ((size_t)64 << 10)
/* The longest a thread spins for the next copy of a running pipeline before it sleeps. */
#define FG_STAGE_SPIN_S 200e-6

static struct {
    pthread_mutex_t turn; /* one copy at a time */
    pthread_mutex_t lock; /* sleeping and waking */
    pthread_cond_t work, done;
    int sleepers; /* threads waiting on `work` (under lock) */
    /* The current copy, written by its caller before the ticket that posts it; read by a thread
     * only after it has claimed one of its parts (the caller then waits for that part). */
    fg_copy2d job;
    atomic_int parts, limit;  /* its parts; the threads it may use, the caller included */
    _Atomic uint64_t ticket;  /* its number << 32 | the next part to claim (none while it is set up) */
    atomic_int remaining;     /* its parts not yet copied */
    atomic_int joined;        /* threads taking part in it, the caller included */
    atomic_uint posted;       /* bumped by every copy and by fg_stage_begin (under lock) */
    atomic_int awake;         /* pipelines running that want the threads spinning */
    atomic_int spinning, max_spinning;
    int threads; /* started, the caller not counted */
} pool = {.turn = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER,
          .work = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int cpus = 1;
/* fg_stage_setup's: the cap on the threads (0: none) and the GEMM calls in progress. */
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static int setup_done, thread_cap;
static int (*active_calls)(void);

void fg_stage_setup(int cap, int (*active)(void))
{
    pthread_mutex_lock(&setup_lock);
    if (!setup_done) {
        setup_done = 1;
        thread_cap = cap;
        active_calls = active;
    }
    pthread_mutex_unlock(&setup_lock);
}

/* The GEMM calls in progress (1 before fg_stage_setup). */
static int calls_now(void) { return active_calls ? active_calls() : 1; }

/* Part p of P of the copy's bytes, in column-major order. */
static void copy_part(const fg_copy2d *c, int p, int parts)
{
    size_t total = c->width * c->cols; /* total * parts stays far below 2^64 */
    size_t lo = total * (size_t)p / (size_t)parts, hi = total * (size_t)(p + 1) / (size_t)parts;
    size_t col = lo / c->width, off = lo % c->width;
    while (lo < hi) {
        size_t n = c->width - off < hi - lo ? c->width - off : hi - lo;
        memcpy(c->dst + col * c->dld + off, c->src + col * c->sld + off, n);
        lo += n;
        col++;
        off = 0;
    }
}

/* Claims and copies parts of copy number `copy` until none is left. */
static void take_parts(uint32_t copy)
{
    uint64_t t = atomic_load_explicit(&pool.ticket, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(t >> 32) != copy || (uint32_t)t >= (uint32_t)atomic_load(&pool.parts)) return;
        if (!atomic_compare_exchange_weak(&pool.ticket, &t, t + 1)) continue;
        copy_part(&pool.job, (int)(uint32_t)t, atomic_load(&pool.parts));
        if (atomic_fetch_sub(&pool.remaining, 1) == 1) { /* the last part: the caller may sleep */
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
        t = atomic_load_explicit(&pool.ticket, memory_order_acquire);
    }
}

/* Spins (yielding) while `value` equals `seen` and the pool is wanted awake, for at most
 * FG_STAGE_SPIN_S; true if it changed. */
static int spin_while(atomic_uint *value, unsigned seen)
{
    const double until = fg_now_s() + FG_STAGE_SPIN_S;
    while (atomic_load_explicit(value, memory_order_acquire) == seen) {
        if (atomic_load_explicit(&pool.awake, memory_order_relaxed) <= 0 || fg_now_s() > until) return 0;
        sched_yield();
    }
    return 1;
}

/* Returns when a copy or fg_stage_begin has been posted since `seen`. */
static unsigned await_post(unsigned seen)
{
    int spin = atomic_load(&pool.awake) > 0 && calls_now() <= 1;
    if (spin && atomic_fetch_add(&pool.spinning, 1) >= atomic_load(&pool.max_spinning)) {
        atomic_fetch_sub(&pool.spinning, 1); /* enough threads spin already: this one sleeps */
        spin = 0;
    }
    if (spin) {
        const int changed = spin_while(&pool.posted, seen);
        atomic_fetch_sub(&pool.spinning, 1);
        if (changed) return atomic_load(&pool.posted);
    }
    pthread_mutex_lock(&pool.lock);
    pool.sleepers++;
    while (atomic_load(&pool.posted) == seen) pthread_cond_wait(&pool.work, &pool.lock);
    pool.sleepers--;
    seen = atomic_load(&pool.posted);
    pthread_mutex_unlock(&pool.lock);
    return seen;
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned seen = atomic_load(&pool.posted);
    for (;;) {
        seen = await_post(seen);
        const uint64_t t = atomic_load_explicit(&pool.ticket, memory_order_acquire);
        if ((uint32_t)t >= (uint32_t)atomic_load(&pool.parts)) continue; /* nothing left to take */
        if (atomic_fetch_add(&pool.joined, 1) >= atomic_load(&pool.limit)) continue;
        take_parts((uint32_t)(t >> 32));
    }
    return NULL;
}

/* Posts (under pool.lock): the threads that spin see it, those that sleep are woken. */
static void post(void)
{
    pthread_mutex_lock(&pool.lock);
    atomic_fetch_add_explicit(&pool.posted, 1, memory_order_release);
    if (pool.sleepers) pthread_cond_broadcast(&pool.work);
    pthread_mutex_unlock(&pool.lock);
}

static void child_after_fork(void)
{
    /* The pool's threads did not come along: the child starts its own at its first copy. */
    pthread_mutex_init(&pool.turn, NULL);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.work, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.threads = pool.sleepers = 0;
    atomic_store(&pool.parts, 0);
    atomic_store(&pool.remaining, 0);
    atomic_store(&pool.awake, 0);
    atomic_store(&pool.spinning, 0);
    pool_once = PTHREAD_ONCE_INIT;
}
static void before_fork(void) { pthread_mutex_lock(&pool.turn); }
static void parent_after_fork(void) { pthread_mutex_unlock(&pool.turn); }

static void count_cpus(void)
{
    cpu_set_t set;
    cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    if (thread_cap >= 1 && thread_cap < cpus) cpus = thread_cap;
#ifdef FG_STAGE_CPUS /* a build that fixes the pool's size whatever the machine (test_staging) */
    cpus = FG_STAGE_CPUS;
#endif
}

static void start_pool(void)
{
    static int atfork_done;
    if (!atfork_done) { /* once per process image; the child's pool_once is reset, not this */
        atfork_done = 1;
        pthread_atfork(before_fork, parent_after_fork, child_after_fork);
    }
    count_cpus();
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 << 10);
    for (int i = 0; i < cpus - 1; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker, NULL) != 0) break;
        pool.threads++;
    }
    atomic_store(&pool.max_spinning, (pool.threads + 1) / 2);
    pthread_attr_destroy(&attr);
}

int fg_stage_threads(void)
{
    pthread_once(&pool_once, start_pool);
    int active = calls_now();
    int t = (pool.threads + 1) / (active > 1 ? active : 1);
    return t < 1 ? 1 : t;
}

void fg_stage_copy(const fg_copy2d *c)
{
    size_t total = c->width * c->cols;
    if (total == 0) return;
    if (total < FG_STAGE_SHARE_BYTES) {
        copy_part(c, 0, 1);
        return;
    }
    /* Four parts per thread, of at least FG_STAGE_PART_BYTES, claimed in turn: a thread that
     * runs late (on a core it shares) leaves its later parts to the others instead of holding
     * up the copy. */
    const int threads = fg_stage_threads();
    int parts = 4 * threads;
    if ((size_t)parts > total / FG_STAGE_PART_BYTES) parts = (int)(total / FG_STAGE_PART_BYTES);
    if (threads <= 1 || parts <= 1) {
        copy_part(c, 0, 1);
        return;
    }
    pthread_mutex_lock(&pool.turn);
    /* The ticket takes the new copy's number with no part to claim before the copy is set up:
     * a thread still holding the last copy's ticket fails its claim instead of taking a part of
     * this one against the last one's count, which would end this copy one part early. */
    const uint32_t copy = (uint32_t)(atomic_load(&pool.ticket) >> 32) + 1;
    atomic_store(&pool.ticket, (uint64_t)copy << 32 | UINT32_MAX);
    pool.job = *c;
    atomic_store(&pool.parts, parts);
    atomic_store(&pool.limit, threads);
    atomic_store(&pool.remaining, parts);
    atomic_store(&pool.joined, 1);
    atomic_store_explicit(&pool.ticket, (uint64_t)copy << 32, memory_order_release);
    post();
    take_parts(copy);
    /* The others' last parts: spin briefly, then sleep until the last one signals. */
    const double until = fg_now_s() + FG_STAGE_SPIN_S;
    while (atomic_load_explicit(&pool.remaining, memory_order_acquire) > 0 && fg_now_s() < until) sched_yield();
    if (atomic_load(&pool.remaining) > 0) {
        pthread_mutex_lock(&pool.lock);
        while (atomic_load(&pool.remaining) > 0) pthread_cond_wait(&pool.done, &pool.lock);
        pthread_mutex_unlock(&pool.lock);
    }
    pthread_mutex_unlock(&pool.turn);
}

int fg_stage_begin(size_t largest)
{
    if (largest < FG_STAGE_SHARE_BYTES || fg_stage_threads() <= 1) return 0;
    atomic_fetch_add(&pool.awake, 1);
    post(); /* the sleeping threads up, to spin for the first copy */
    return 1;
}

void fg_stage_end(int began)
{
    if (began) atomic_fetch_sub(&pool.awake, 1);
}
