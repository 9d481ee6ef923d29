/* test_learn.c: the auto mode's learning rule (FASTGEMM_LEARN=1, blas/model.c), the pure part:
 * which side a class's next call takes from the calls timed so far. Linked against the static
 * library, whose hidden functions it calls. */
#include "../blas/fg.h"

#include <math.h>
#include <stdio.h>

static int fails;

static void expect(const char *what, int n_cpu, int n_gpu, double b_cpu, double b_gpu, long calls,
                   int model_gpu, int gpu_ok, int want)
{
    const int n[2] = {n_cpu, n_gpu};
    const double best[2] = {b_cpu, b_gpu};
    const int got = fg_learn_pick(n, best, calls, model_gpu, gpu_ok);
    printf("%-58s %s (want %s)%s\n", what, got ? "gpu" : "cpu", want ? "gpu" : "cpu",
           got == want ? "" : "  FAIL");
    fails += got != want;
}

int main(void)
{
    const double inf = INFINITY;
    /* The first two calls of a class run on the model's side. */
    expect("new class, model cpu", 0, 0, inf, inf, 0, 0, 1, 0);
    expect("new class, model gpu", 0, 0, inf, inf, 0, 1, 1, 1);
    expect("one cpu call timed, model cpu", 1, 0, 1e-12, inf, 1, 0, 1, 0);
    /* Then two on the other side: the CPU always, the GPU only with its pipeline set up. */
    expect("model gpu, two gpu calls timed: try the cpu", 0, 2, inf, 1e-12, 2, 1, 0, 0);
    expect("model cpu, two cpu calls timed, gpu warm: try the gpu", 2, 0, 1e-12, inf, 2, 0, 1, 1);
    expect("model cpu, two cpu calls timed, gpu cold: stay", 2, 0, 1e-12, inf, 2, 0, 0, 0);
    expect("model cpu, one gpu call timed: the second", 2, 1, 1e-12, 2e-12, 3, 0, 1, 1);
    /* Then the faster by its best time. */
    expect("both timed, cpu faster, model gpu", 2, 2, 1e-12, 2e-12, 4, 1, 1, 0);
    expect("both timed, gpu faster, model cpu", 2, 2, 2e-12, 1e-12, 4, 0, 1, 1);
    /* Every 64th call goes to the other side again (to the GPU only when warm). */
    expect("cpu faster, call 63: recheck the gpu", 2, 2, 1e-12, 2e-12, 63, 1, 1, 1);
    expect("cpu faster, call 63, gpu cold: no recheck", 2, 2, 1e-12, 2e-12, 63, 1, 0, 0);
    expect("gpu faster, call 127: recheck the cpu", 2, 2, 2e-12, 1e-12, 127, 0, 1, 0);
    expect("gpu faster, call 128: the gpu", 2, 2, 2e-12, 1e-12, 128, 0, 1, 1);
    printf("test_learn: %s\n", fails ? "FAIL" : "ok");
    return fails != 0;
}
