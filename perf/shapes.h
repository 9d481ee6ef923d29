// shapes.h: GEMM cases (a shape and its transposes) for the perf/ programs, and seeded random
// ones (fastgemm-sweep's and fastgemm-tune's `--shapes random:COUNT:SEED[:LO:HI]`): m, n and k
// drawn log-uniformly from [LO, HI] (default [64, 12000]) and the transposes uniformly; cases
// outside a flop window are drawn again. The generator is splitmix64 with its own arithmetic, so
// a seed gives the same cases with any compiler and standard library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// C = op(A) op(B) with op(A) m x k and op(B) k x n; ta, tb: 'N' or 'T'.
struct Case {
    long m, n, k;
    char ta, tb;
};

class SplitMix64 {
  public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}
    uint64_t next()
    {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return (double)(next() >> 11) * 0x1.0p-53; } // [0, 1)

  private:
    uint64_t state_;
};

struct RandomSpec {
    long count = 0;
    uint64_t seed = 0;
    long lo = 64, hi = 12000;
};

// Parses "random:COUNT:SEED[:LO:HI]"; false (with a message) if spec is not of that form.
inline bool parse_random_spec(const std::string &spec, RandomSpec *r)
{
    if (spec.compare(0, 7, "random:") != 0) return false;
    unsigned long long seed = 0;
    long count = 0, lo = 64, hi = 12000;
    char tail = 0;
    const int got = sscanf(spec.c_str() + 7, "%ld:%llu:%ld:%ld%c", &count, &seed, &lo, &hi, &tail);
    if ((got != 2 && got != 4) || count < 1 || lo < 1 || hi < lo) {
        fprintf(stderr, "bad random shapes %s: random:COUNT:SEED[:LO:HI], 1 <= LO <= HI\n",
                spec.c_str());
        return false;
    }
    r->count = count, r->seed = seed, r->lo = lo, r->hi = hi;
    return true;
}

// Parses --gflop's "MIN:MAX" into [min, max); false (with a message) unless MIN < MAX.
inline bool parse_gflop_window(const char *arg, double *min, double *max)
{
    if (sscanf(arg, "%lf:%lf", min, max) == 2 && *min < *max) return true;
    fprintf(stderr, "bad --gflop %s: MIN:MAX\n", arg);
    return false;
}

// r.count problems whose 2mnk lies in [gflop_min, gflop_max) GFLOP (drawn again otherwise; at
// most 1000 draws a problem before giving up on the window).
inline std::vector<Case> random_problems(const RandomSpec &r, double gflop_min = 0,
                                            double gflop_max = INFINITY)
{
    SplitMix64 g(r.seed);
    const double llo = std::log((double)r.lo), lhi = std::log((double)r.hi + 1);
    auto dim = [&] {
        const long v = (long)std::floor(std::exp(llo + (lhi - llo) * g.uniform()));
        return v < r.lo ? r.lo : v > r.hi ? r.hi : v;
    };
    std::vector<Case> out;
    for (long i = 0; i < r.count; i++) {
        for (int tries = 0;; tries++) {
            Case p;
            p.m = dim(), p.n = dim(), p.k = dim();
            const uint64_t t = g.next() >> 62;
            p.ta = t & 1 ? 'T' : 'N', p.tb = t & 2 ? 'T' : 'N';
            const double gf = 2e-9 * p.m * p.n * p.k;
            if (gf >= gflop_min && gf < gflop_max) {
                out.push_back(p);
                break;
            }
            if (tries == 1000) {
                fprintf(stderr, "no random problem of %g-%g GFLOP in [%ld, %ld]\n", gflop_min,
                        gflop_max, r.lo, r.hi);
                exit(2);
            }
        }
    }
    return out;
}
