/* test_learn.c: the auto mode's learning rule (FASTGEMM_LEARN=1, blas/model.c), the pure part:
 * which samples count (clean ones), which side a class's next call takes from them, and when
 * the slower side is timed again. Linked against the static library, whose hidden functions it
 * calls. */
#include "../blas/fg.h"

#include <math.h>
#include <stdio.h>

static int fails;

static void expect(const char *what, fg_learned *s, double now, int model_gpu, int gpu_ok, int want)
{
    const int got = fg_learn_pick(s, now, model_gpu, gpu_ok);
    printf("%-66s %s (want %s)%s\n", what, got ? "gpu" : "cpu", want ? "gpu" : "cpu",
           got == want ? "" : "  FAIL");
    fails += got != want;
}

static void check(const char *what, int ok)
{
    printf("%-66s %s\n", what, ok ? "ok" : "FAIL");
    fails += !ok;
}

/* A call of 1 ms on a settled side at this time per flop. */
static void sample(fg_learned *s, int gpu, double per_flop, int settled, double now)
{
    fg_learn_sample(s, gpu, 1e-3, per_flop, settled, now);
}

/* A class with two clean samples of each side at these best times per flop. */
static fg_learned both(double cpu, double gpu)
{
    fg_learned s;
    fg_learn_init(&s);
    for (int i = 0; i < 3; i++) sample(&s, 0, cpu, 1, 0), sample(&s, 1, gpu, 1, 0);
    return s;
}

int main(void)
{
    fg_learned s;
    /* The model's side first, until two clean samples. */
    fg_learn_init(&s);
    expect("new class, model cpu", &s, 0, 0, 1, 0);
    fg_learn_init(&s);
    expect("new class, model gpu", &s, 0, 1, 1, 1);
    fg_learn_init(&s);
    sample(&s, 0, 1e-12, 1, 0.00);
    sample(&s, 0, 3e-12, 0, 0.01);
    sample(&s, 0, 1e-12, 1, 0.02);
    check("the class's first call on a side is not clean, even settled",
          s.n[0] == 1 && s.tried[0] == 3);
    expect("model cpu: one clean cpu sample: more cpu", &s, 0.03, 0, 1, 0);
    sample(&s, 0, 1e-12, 1, 0.03);
    /* Then the other side: the GPU only with its pipeline set up. */
    expect("two clean cpu samples, gpu cold: stay on the cpu", &s, 0.04, 0, 0, 0);
    expect("two clean cpu samples, gpu warm: try the gpu", &s, 0.04, 0, 1, 1);
    for (int i = 0; i < 100; i++) sample(&s, 1, 0.5e-12, 0, 0.05 + 1e-3 * i);
    expect("100 ms of unsettled gpu calls: more gpu", &s, 0.16, 0, 1, 1);
    expect("(whatever the clock says: 5 s later)", &s, 5.16, 0, 1, 1);
    for (int i = 0; i < 100; i++) sample(&s, 1, 0.5e-12, 0, 5.2 + 1e-3 * i);
    expect("200 ms of them: sampled; their best is faster: gpu", &s, 5.31, 0, 1, 1);
    check("that was the first decision: the cpu again 2 s later", fabs(s.due - 7.31) < 1e-9);
    /* A clean best outranks an unclean one of the same side. */
    sample(&s, 1, 2e-12, 1, 5.4);
    expect("a clean gpu sample slower than the cpu: the cpu", &s, 5.41, 0, 1, 0);

    /* Rechecks: the slower side again at 2 s, then 4, 8, ... 64; each until a clean sample or
     * 0.2 s of its calls. */
    s = both(1e-12, 2e-12);
    expect("both sampled, cpu faster, model gpu", &s, 10, 1, 1, 0);
    expect("11 s: the cpu", &s, 11, 1, 1, 0);
    expect("12 s: recheck the gpu", &s, 12, 1, 1, 1);
    check("the next recheck 4 s later", fabs(s.due - 16) < 1e-9 && s.gap == 4);
    sample(&s, 1, 3e-12, 0, 12.05);
    expect("12.1 s, no clean gpu sample yet: the gpu", &s, 12.1, 1, 1, 1);
    sample(&s, 1, 3e-12, 1, 12.15);
    expect("a clean gpu sample, slower: back to the cpu", &s, 12.16, 1, 1, 0);
    expect("16 s, gpu cold: no recheck", &s, 16, 1, 0, 0);
    expect("16.5 s, gpu warm: recheck", &s, 16.5, 1, 1, 1);
    for (int i = 0; i < 200; i++) sample(&s, 1, 3e-12, 0, 16.5 + 1e-3 * i);
    expect("200 ms of unsettled gpu calls, none clean: the cpu", &s, 16.71, 1, 1, 0);
    expect("18 s, no gpu call has come back since 16.71: the cpu", &s, 18, 1, 1, 0);
    expect("24.5 s: recheck", &s, 24.5, 1, 1, 1);
    expect("34 s, no gpu sample came back: still the recheck", &s, 34, 1, 1, 1);
    expect("34.5 s, 10 s since the recheck began: given up, the cpu", &s, 34.5, 1, 1, 0);
    fg_learn_init(&s);
    sample(&s, 0, 1e-12, 1, 0), sample(&s, 0, 1e-12, 1, 0), sample(&s, 0, 1e-12, 1, 0);
    expect("model cpu, sampled: try the gpu", &s, 1, 0, 1, 1);
    expect("10 s and no gpu sample (its calls failed): the cpu", &s, 11, 0, 1, 0);
    s = both(1e-12, 2e-12);
    for (double t = 0; t < 1000; t += 70)
        fg_learn_pick(&s, t, 1, 1), fg_learn_pick(&s, t + 11, 1, 1);
    check("the gap stops doubling at 64 s", s.gap == 64);
    /* A recheck that wins: the other side, and the schedule starts again. */
    s = both(2e-12, 1e-12);
    expect("both sampled, gpu faster, model cpu", &s, 0, 0, 1, 1);
    expect("2 s: recheck the cpu (always possible)", &s, 2, 0, 0, 0);
    sample(&s, 0, 0.5e-12, 1, 2.01);
    expect("the cpu won the recheck: the cpu", &s, 2.02, 0, 1, 0);
    check("the gpu again 2 s later", fabs(s.due - 4.02) < 1e-9);
    printf("test_learn: %s\n", fails ? "FAIL" : "ok");
    return fails != 0;
}
