/* test_model.c: the auto mode's cost model, its pure parts (core/model.c, core/learn.c): which points of a
 * calibration are measured again, and the learning rule (FASTGEMM_LEARN=1): which samples
 * count (clean ones), which side a class's next call takes from them, and when the slower side
 * is timed again. Linked against the static library, whose hidden functions it calls. */
#include "../core/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* The flags of a profile row (sizes 32 ... 2048) as a string of 0s and 1s. */
static void suspects(const char *what, const double *ms, const char *want)
{
    double t[11];
    int flag[11];
    char got[12] = "";
    for (int i = 0; i < 11; i++) t[i] = ms[i] * 1e-3;
    fg_profile_suspects(t, 11, flag);
    for (int i = 0; i < 11; i++) got[i] = (char)('0' + flag[i]);
    printf("%-66s %s (want %s)%s\n", what, got, want, strcmp(got, want) ? "  FAIL" : "");
    fails += strcmp(got, want) != 0;
}

int main(void)
{
    /* Calibration rows of H100 hosts, ms at n = 32, 64, ..., 2048. */
    static const double cpu_s[11] = {0.0037, 0.0134, 0.0367, 0.0534, 0.0995, 0.2518, 0.4151,
                                     1.2357, 2.6500, 7.9593, 18.1204};
    suspects("a host's sgemm_ on the cpu: nothing", cpu_s, "00000000000");
    static const double cpu_s_slow[11] = {0.0032, 0.0125, 1.7792, 0.0672, 0.1040, 0.2490, 0.4724,
                                          2.0261, 3.2169, 10.3592, 21.1185};
    suspects("sgemm_ 128 at 1.78 ms (192: 0.067): 128; 768 at 1.27x 512's time a flop", cpu_s_slow,
             "00100001000");
    static const double gpu_d_slow[11] = {0.054, 0.058, 0.081, 0.145, 0.252, 0.260, 0.361, 2.380,
                                          2.290, 2.290, 2.275};
    suspects("dgemm_ 768-1536 on the gpu in a slow stretch: 768 (1024 next pass)", gpu_d_slow,
             "00000001000");

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
    expect("199 ms of them after the first: more gpu", &s, 5.305, 0, 1, 1);
    sample(&s, 1, 0.5e-12, 0, 5.305);
    expect("200 ms: sampled; their best is faster: gpu", &s, 5.31, 0, 1, 1);
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
    /* A cold GPU: tried once the class's CPU calls have taken 2 s. */
    fg_learn_init(&s);
    sample(&s, 0, 1e-12, 0, 0);
    for (int i = 0; i < 1999; i++) sample(&s, 0, 1e-12, 1, 1e-3 * i);
    expect("model cpu, sampled, 1.999 s of cpu calls, gpu cold: the cpu", &s, 2, 0, 0, 0);
    fg_learn_sample(&s, 0, 2e-3, 1e-12, 1, 2);
    expect("2 s of cpu calls, gpu cold: try the gpu", &s, 2, 0, 0, 1);
    fg_learn_sample(&s, 1, 0.2, 1e-9, 0, 2.2);
    check("the side's first call (0.2 s) does not count towards its time",
          s.spent[1] == 0 && s.tried[1] == 1 && s.n[1] == 0);
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
    printf("test_model: %s\n", fails ? "FAIL" : "ok");
    return fails != 0;
}
