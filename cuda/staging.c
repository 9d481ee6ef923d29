/* staging.c: parallel copies between pageable and pinned memory for the host-pointer pipeline
 * (cuda/offload.cu). A single pageable-to-pinned copy thread reaches ~10 GB/s on the device
 * machine, 16 reach ~45 GB/s, so the pipeline's staging runs on a pool of threads. The pool is
 * started at the first copy large enough to share, sized to the CPUs this process may use, and
 * runs one copy at a time: concurrent GEMM calls take turns rather than multiply the threads.
 * The pool's threads sleep when idle; after fork() the child starts a pool of its own.
 * Plain memcpy: non-temporal stores were slower here (H200 host: dgemm_ n = 8192 staged at
 * 50 GB/s with them, 64 GB/s without). */
#define _GNU_SOURCE
#include "staging.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Below this many bytes a copy stays on the calling thread: waking the pool costs more. */
#define FG_STAGE_SHARE_BYTES ((size_t)1 << 20)

static struct {
    pthread_mutex_t turn; /* one copy at a time */
    pthread_mutex_t lock; /* the fields below */
    pthread_cond_t work, done;
    fg_copy2d job;
    int parts, next, remaining;
    int limit, joined; /* the threads the copy may use, the caller included; those taking part */
    int threads; /* started, the caller not counted */
} pool = {.turn = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER,
          .work = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int cpus = 1;

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

/* Takes parts of the current copy until none is left; called with pool.lock held. */
static void take_parts(void)
{
    while (pool.next < pool.parts) {
        int p = pool.next++;
        fg_copy2d job = pool.job;
        int parts = pool.parts;
        pthread_mutex_unlock(&pool.lock);
        copy_part(&job, p, parts);
        pthread_mutex_lock(&pool.lock);
        if (--pool.remaining == 0) pthread_cond_signal(&pool.done);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.next >= pool.parts || pool.joined >= pool.limit) pthread_cond_wait(&pool.work, &pool.lock);
        pool.joined++;
        take_parts();
    }
    return NULL;
}

static void child_after_fork(void)
{
    /* The pool's threads did not come along: the child starts its own at its first copy. */
    pthread_mutex_init(&pool.turn, NULL);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.work, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.parts = pool.next = pool.remaining = pool.threads = pool.limit = pool.joined = 0;
    pool_once = PTHREAD_ONCE_INIT;
}
static void before_fork(void) { pthread_mutex_lock(&pool.turn); }
static void parent_after_fork(void) { pthread_mutex_unlock(&pool.turn); }

static void count_cpus(void)
{
    cpu_set_t set;
    cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    const char *s = getenv("FASTGEMM_STAGING_THREADS");
    if (s && *s) {
        int v = atoi(s);
        if (v >= 1 && v < cpus) cpus = v;
    }
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
    pthread_attr_destroy(&attr);
}

int fg_stage_threads(void)
{
    pthread_once(&pool_once, start_pool);
    int active = fg_active_calls();
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
    /* Four parts per thread, of at least 256 KB, taken in turn: a thread that runs late (on a
     * core it shares) leaves its later parts to the others instead of holding up the copy. */
    const int threads = fg_stage_threads();
    int parts = 4 * threads;
    if ((size_t)parts > total / (FG_STAGE_SHARE_BYTES / 4)) parts = (int)(total / (FG_STAGE_SHARE_BYTES / 4));
    if (threads <= 1 || parts <= 1) {
        copy_part(c, 0, 1);
        return;
    }
    pthread_mutex_lock(&pool.turn);
    pthread_mutex_lock(&pool.lock);
    pool.job = *c;
    pool.parts = parts;
    pool.next = 0;
    pool.remaining = parts;
    pool.limit = threads;
    pool.joined = 1;
    pthread_cond_broadcast(&pool.work);
    take_parts();
    while (pool.remaining > 0) pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.turn);
}
