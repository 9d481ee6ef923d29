// test_shapes: the perf/ programs' seeded random problems (perf/shapes.h), host code only. A seed
// must give the same problems everywhere (results name their seed), inside the bounds and the
// flop window, with m, n, k log-uniform and every transpose pair drawn; malformed specs are refused.
#include "perf/shapes.h"

#include <cstdio>
#include <string>

static int failures;

static void check(bool ok, const char *what)
{
    if (!ok) {
        printf("FAILED: %s\n", what);
        failures++;
    }
}

int main()
{
    RandomSpec r;
    for (const char *bad : {"random:3", "random:0:1", "random:5:1:100:50", "random:5:1:100",
                            "random:5:1:0:10", "random:5:1:10:20:30", "rand:5:1", "random:x:1"})
        check(!parse_random_spec(bad, &r), bad);
    check(parse_random_spec("random:5:7", &r) && r.count == 5 && r.seed == 7 && r.lo == 64 &&
              r.hi == 12000,
          "random:5:7 with the default bounds");
    check(parse_random_spec("random:3000:11:10:20", &r) && r.lo == 10 && r.hi == 20,
          "random:3000:11:10:20");
    std::vector<Case> p = random_problems(r);
    bool inside = p.size() == 3000;
    for (const Case &q : p)
        inside &= q.m >= 10 && q.m <= 20 && q.n >= 10 && q.n <= 20 && q.k >= 10 && q.k <= 20;
    check(inside, "3000 problems, every dimension in [10, 20]");

    // Log-uniform in [64, 12000]: about half of the dimensions below the geometric middle, 876.
    check(parse_random_spec("random:4000:3", &r), "random:4000:3");
    p = random_problems(r);
    int below = 0, pairs[4] = {0, 0, 0, 0};
    for (const Case &q : p) {
        below += (q.m < 876) + (q.n < 876) + (q.k < 876);
        pairs[(q.ta == 'T') + 2 * (q.tb == 'T')]++;
    }
    const double frac = below / (3.0 * p.size());
    check(frac > 0.47 && frac < 0.53, "half of the dimensions below 876");
    for (int t = 0; t < 4; t++) check(pairs[t] > 900 && pairs[t] < 1100, "each transpose pair a quarter");

    // The same seed, the same problems; the flop window holds.
    check(parse_random_spec("random:24:101", &r), "random:24:101");
    const std::vector<Case> a = random_problems(r, 1, INFINITY), b = random_problems(r, 1, INFINITY);
    bool same = a.size() == 24 && b.size() == 24, big = true;
    for (size_t i = 0; same && i < a.size(); i++) {
        same &= a[i].m == b[i].m && a[i].n == b[i].n && a[i].k == b[i].k && a[i].ta == b[i].ta &&
                a[i].tb == b[i].tb;
        big &= 2e-9 * a[i].m * a[i].n * a[i].k >= 1;
    }
    check(same, "a seed gives the same problems twice");
    check(big, "--gflop 1: every problem of at least 1 GFLOP");
    // The first problems of seed 101 (perf/results/random_h200_seed101.csv): the generator's
    // arithmetic is its own, so this holds with any compiler and standard library.
    check(a[0].m == 5767 && a[0].n == 168 && a[0].k == 10262 && a[0].ta == 'N' && a[0].tb == 'N',
          "seed 101's first problem is NN 5767x168x10262");
    check(a[1].m == 7230 && a[1].n == 337 && a[1].k == 3956 && a[1].ta == 'T' && a[1].tb == 'T',
          "seed 101's second problem is TT 7230x337x3956");
    const std::vector<Case> small = random_problems(r, 0, 1);
    bool under = small.size() == 24;
    for (const Case &q : small) under &= 2e-9 * q.m * q.n * q.k < 1;
    check(under, "--gflop 0:1: every problem under 1 GFLOP");

    double lo = 0, hi = 0;
    check(parse_gflop_window("1:1e9", &lo, &hi) && lo == 1 && hi == 1e9, "--gflop 1:1e9");
    check(!parse_gflop_window("2:1", &lo, &hi) && !parse_gflop_window("1", &lo, &hi),
          "--gflop 2:1 and --gflop 1 refused");

    if (failures) return 1;
    printf("test_shapes: all checks passed\n");
    return 0;
}
