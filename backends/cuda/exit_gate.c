/* exit_gate.c: exit() waits for the GEMMs on the GPU (exit_gate.h).
 *
 * When main returns, or a thread calls exit(), while another thread is inside a GEMM on the
 * GPU, the exit handlers tear down the CUDA runtime and the library's static objects under
 * that GEMM: its copies into pinned memory and its CUDA calls then fault. So every piece of
 * work on the GPU runs inside a section, and an exit handler, registered after the CUDA
 * runtime's (so that it runs first), closes the gate to new sections and waits for those in
 * progress to end. A GEMM on the GPU ends in bounded time. Calls that come after the gate has
 * closed run on the CPU BLAS, as they would without this library, or, on device operands, are
 * reported as not computed. A child of fork() has none of its parent's sections. */
#include "exit_gate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static atomic_int inside;         /* sections in progress, each thread counted once */
static atomic_int closed;         /* the process is exiting */
static _Thread_local int depth;   /* this thread's nesting */
static atomic_int armed;          /* registrations made: two at most */

int fg_exit_gate_enter(void)
{
    if (depth > 0) {
        depth++;
        return 1;
    }
    /* Counted before the check: the exit handler closes, then waits, so that a section either
     * sees the gate closed or is waited for. */
    atomic_fetch_add(&inside, 1);
    if (atomic_load(&closed)) {
        atomic_fetch_sub(&inside, 1);
        return 0;
    }
    depth = 1;
    return 1;
}

void fg_exit_gate_leave(void)
{
    if (--depth == 0) atomic_fetch_sub(&inside, 1);
}

/* The exit handler. A thread that calls exit() from inside a section does not wait for itself. */
static void close_and_wait(void)
{
    atomic_store(&closed, 1);
    const int own = depth > 0;
    while (atomic_load(&inside) > own) nanosleep(&(struct timespec){0, 200000}, NULL);
}

/* The forking thread is the child's only one. */
static void child_after_fork(void) { atomic_store(&inside, depth > 0); }

void fg_exit_gate_arm(void)
{
    int n = atomic_load(&armed);
    while (n < 2 && !atomic_compare_exchange_weak(&armed, &n, n + 1)) {
    }
    if (n == 0) pthread_atfork(NULL, NULL, child_after_fork);
    if (n < 2) atexit(close_and_wait);
}
