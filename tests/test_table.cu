// test_table.cu: the tuned tables' choice of a measured problem for a call (cuda/gemm_table.cuh),
// host code only: the nearest point of the call's transpose pair, of the same kind (16-byte
// copies possible or not) where one lies within a factor of 2, else of either kind.
#include "../cuda/gemm_table.cuh"

#include <stdio.h>

static int fails;

static void check(const char *what, int got, int want)
{
    printf("%-64s %d (want %d)%s\n", what, got, want, got == want ? "" : "  FAIL");
    fails += got != want;
}

// A table as the tuner writes them: 4095^3 measured beside 4096^3 for NN only.
static const fg_table::Entry table[] = {
    {1024, 1024, 1024, 0, 2, 1}, {4095, 4095, 4095, 0, 1, 1}, {4096, 4096, 4096, 0, 0, 1},
    {4096, 4096, 4096, 1, 3, 1}, {8192, 8192, 128, 0, 4, 1},
};
// One with no unaligned point, as the tables were before.
static const fg_table::Entry aligned_only[] = {{1024, 1024, 1024, 0, 2, 1}, {4096, 4096, 4096, 0, 0, 1}};

static int pick(const fg_table::Entry (&t)[5], char ta, char tb, int64_t m, int64_t n, int64_t k,
                int64_t lda, int64_t ldb, size_t esize)
{
    fg_gemm_args g = {};
    g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k, g.lda = lda, g.ldb = ldb, g.ldc = m;
    return fg_table::lookup(t, &g, esize, fg_table::copies16(lda, ldb, esize)).config;
}

int main()
{
    // The kinds: 16 bytes are 4 floats or 2 doubles.
    check("copies16: float lda 4096, ldb 1000", fg_table::copies16(4096, 1000, 4), 1);
    check("copies16: float lda 4095", fg_table::copies16(4095, 4096, 4), 0);
    check("copies16: float ldb 1002 (not 4 floats)", fg_table::copies16(4096, 1002, 4), 0);
    check("copies16: double ldb 1002 (2 doubles)", fg_table::copies16(4096, 1002, 8), 1);
    check("copies16: double lda 4095", fg_table::copies16(4095, 4096, 8), 0);

    struct Case {
        const char *what;
        char ta, tb;
        int64_t m, n, k, lda, ldb;
        size_t esize;
        int want;
    };
    const Case cases[] = {
        {"4095^3 NN, lda 4095: the 4095^3 point", 'N', 'N', 4095, 4095, 4095, 4095, 4095, 4, 1},
        {"4095^3 NN, lda 4096 (padded): the 4096^3 point", 'N', 'N', 4095, 4095, 4095, 4096, 4096, 4, 0},
        {"4000^3 NN (aligned): 4096^3, not the nearer 4095^3", 'N', 'N', 4000, 4000, 4000, 4000, 4000, 4, 0},
        {"4001^3 NN double (unaligned): 4095^3", 'N', 'N', 4001, 4001, 4001, 4001, 4001, 8, 1},
        {"5000x5000x4999 NN double, ldb 4999: 4095^3 (distance < 1)", 'N', 'N', 5000, 5000, 4999, 5000, 4999, 8, 1},
        {"1023^3 NN (unaligned, 4095^3 too far): nearest, 1024^3", 'N', 'N', 1023, 1023, 1023, 1023, 1023, 4, 2},
        {"8191x8191x127 NN (unaligned, 4095^3 too far): 8192x8192x128", 'N', 'N', 8191, 8191, 127, 8191, 127, 4, 4},
        {"4095^3 TN: its pair's only point, 4096^3 TN", 'T', 'N', 4095, 4095, 4095, 4095, 4095, 4, 3},
        {"4095^3 NT: no NT point, the nearest of any pair, of its kind", 'N', 'T', 4095, 4095, 4095, 4095, 4095, 4, 1},
    };
    for (const Case &c : cases) check(c.what, pick(table, c.ta, c.tb, c.m, c.n, c.k, c.lda, c.ldb, c.esize), c.want);

    // Without unaligned points every call takes the nearest, whatever its kind.
    fg_gemm_args g = {};
    g.ta = g.tb = 'N', g.m = g.n = g.k = 4095;
    check("no unaligned points: 4095^3 takes 4096^3", fg_table::lookup(aligned_only, &g, 4, false).config, 0);
    g.m = g.n = g.k = 1000;
    check("no unaligned points: 1000^3 takes 1024^3", fg_table::lookup(aligned_only, &g, 4, true).config, 2);

    printf("%s\n", fails ? "FAILED" : "all passed");
    return fails != 0;
}
