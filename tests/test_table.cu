// test_table.cu: the tuned tables' choice of a measured problem for a call and the plan of a
// launch (kernels/gemm_table.cuh), host code only: the nearest point of the call's transpose
// pair, of the same kind (16-byte copies possible or not) where one lies within a factor of 2,
// else of either kind; the plan's slices, stream-K part, instances and workspace within a
// limit, on a configuration of stand-ins; the cost model's choice (choose.cuh) between two,
// with stream-K or not, and its packing rule.
#include "../kernels/gemm_table.cuh"

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

// A configuration of stand-ins, 64 x 32 x 16 tiles: instance 8 unsplit (as the SIMT family's NN
// swap), 0 in slices; a stream-K plan where forced or m >= 1000.
static int fake_instance(const fg_kern::Gemm<float> &, int splits) { return splits > 1 ? 0 : 8; }
static bool forced_seen;
static fg_kern::StreamKPlan fake_streamk(int, const fg_kern::Gemm<float> &g, bool force)
{
    forced_seen = force;
    fg_kern::StreamKPlan p;
    if (force || g.m >= 1000) p.first = 5, p.tiles = 10, p.ctas = 4;
    return p;
}
static cudaError_t fake_launch(int, const fg_kern::Gemm<float> &, int, const fg_kern::StreamKPlan &, void *,
                               cudaStream_t)
{
    return cudaSuccess;
}
static const fg_table::Config<float> fake = {"fake", 64, 32, 16, fake_instance, fake_streamk, fake_launch};
static const fg_table::Config<float> fake_no_sk = {"fake", 64, 32, 16, fake_instance, nullptr, fake_launch};

static fg_kernel_plan plan_of(const fg_table::Config<float> &cfg, int64_t m, int64_t n, int64_t k, int splits,
                              int stream_k, size_t max_ws)
{
    const fg_kern::Gemm<float> g = {false, false, m, n, k, 1.f, nullptr, m, nullptr, k, 0.f, nullptr, m};
    fg_kernel_plan p;
    fg_table::plan_config(cfg, g, splits, stream_k, max_ws, &p);
    return p;
}

static void check_plans()
{
    const size_t big = (size_t)256 << 20;
    fg_kernel_plan p = plan_of(fake, 500, 300, 1024, 4, 1, big);
    check("plan: 4 slices asked of 64 k-tiles", p.splits, 4);
    check("plan: their workspace, 4 m x n floats", p.ws_bytes == (size_t)4 * 500 * 300 * 4, 1);
    check("plan: the sliced instance", p.instance, 0);
    check("plan: the unsplit instance", p.instance_unsplit, 8);
    check("plan: no stream-K in slices", (int)p.sk_tiles, 0);
    p = plan_of(fake, 500, 300, 40, 8, 1, big);
    check("plan: 8 slices asked of 3 k-tiles make 3", p.splits, 3);
    p = plan_of(fake, 500, 300, 1024, 4, 1, (size_t)4 * 500 * 300 * 4 - 1);
    check("plan: slices over the limit: one", p.splits, 1);
    check("plan: and no workspace", (int)p.ws_bytes, 0);
    check("plan: and the unsplit instance", p.instance, 8);
    p = plan_of(fake, 2000, 300, 1024, 1, 1, big);
    check("plan: unsplit, stream-K where it pays", (int)p.sk_tiles, 10);
    check("plan: its first tiles and blocks", (int)p.sk_first * 100 + p.sk_ctas, 504);
    check("plan: stream-K's workspace", p.ws_bytes == fg_kern::streamk_bytes({5, 10, 4}, 64, 32, 4), 1);
    check("plan: stream-K's rule (FASTGEMM_STREAM_K=1) not forced", forced_seen, 0);
    check("plan: stream-K's instance", p.instance, 8);
    p = plan_of(fake, 500, 300, 1024, 1, 1, big);
    check("plan: unsplit, stream-K where it does not pay: none", (int)p.sk_tiles + (int)p.ws_bytes, 0);
    p = plan_of(fake, 500, 300, 1024, 1, 2, big);
    check("plan: FASTGEMM_STREAM_K=2 forces it", (int)p.sk_tiles * forced_seen, 10);
    p = plan_of(fake, 2000, 300, 1024, 1, 0, big);
    check("plan: FASTGEMM_STREAM_K=0: none", (int)p.sk_tiles + (int)p.ws_bytes, 0);
    p = plan_of(fake, 2000, 300, 1024, 1, 1, fg_kern::streamk_bytes({5, 10, 4}, 64, 32, 4) - 1);
    check("plan: stream-K over the limit: none", (int)p.sk_tiles + (int)p.ws_bytes, 0);
    p = plan_of(fake_no_sk, 2000, 300, 1024, 1, 2, big);
    check("plan: a configuration without stream-K", (int)p.sk_tiles + (int)p.ws_bytes, 0);

    // The table's choice: its configuration and split-K, unless a configuration or slices are forced.
    const fg_table::Config<float> configs[2] = {fake_no_sk, fake_no_sk};
    const fg_table::Entry entries[] = {{1024, 1024, 1024, 0, 1, 4}};
    const fg_choose::Cost costs[2] = {{"fake", 40, 2, 1, 1, 4, 1}, {"fake", 40, 2, 1, 1, 4, 1}};
    const fg_choose::Machine machine = {132, 4e-6, 2.5e12, 13e-6, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, false};
    fg_gemm_args g = {};
    g.dt = FG_F32, g.ta = g.tb = 'N', g.m = g.n = g.k = 1024, g.alpha = 1;
    fg_kernel_plan t;
    fg_table::table_plan(configs, entries, costs, machine, 7, &g, nullptr, 1024, nullptr, 1024, -1, 0, 1,
                         FG_CHOICE_TABLE, big, &t);
    check("table plan: the entry's configuration and family", t.config * 10 + t.family, 17);
    check("table plan: the entry's slices", t.splits, 4);
    fg_table::table_plan(configs, entries, costs, machine, 7, &g, nullptr, 1024, nullptr, 1024, -1, 2, 1,
                         FG_CHOICE_TABLE, big, &t);
    check("table plan: FASTGEMM_SPLIT_K over the entry's", t.splits, 2);
    fg_table::table_plan(configs, entries, costs, machine, 7, &g, nullptr, 1024, nullptr, 1024, 0, 0, 1,
                         FG_CHOICE_TABLE, big, &t);
    check("table plan: a forced configuration, unsplit", t.config * 10 + t.splits, 1);
}

// The cost model's choice (choose.cuh) between a large and a small tile: the large one unsplit
// on a large square, slices where the tiles are few and k deep, the slices asked where they are
// fixed, and the plan's use of it under FG_CHOICE_MODEL (off the measured points).
static void check_choice()
{
    const fg_table::Config<float> big = {"big", 128, 128, 16, fake_instance, nullptr, fake_launch};
    const fg_table::Config<float> small = {"small", 32, 32, 32, fake_instance, nullptr, fake_launch};
    const fg_table::Config<float> configs[2] = {big, small};
    fg_choose::Cost costs[2] = {{"big", 40, 2, 1, 1, 2, 1}, {"small", 15, 3, 3, 1, 8, 1}};
    // Unaligned operands (classes 0-11) at 0.8 of the aligned rate (12-15).
    const fg_choose::Machine machine = {132, 4e-6, 2.5e12, 13e-6, {.8, .8, .8, .8, .8, .8, .8, .8, .8, .8, .8, .8, 1, 1, 1, 1}, false};
    static_assert(fg_table::same_name("big", "big") && !fg_table::same_name("big", "bigger"), "same_name");
    auto pick = [&](int64_t m, int64_t n, int64_t k, int splits, int *c, int *s) {
        const fg_kern::Gemm<float> g = {false, false, m, n, k, 1.f, nullptr, m, nullptr, k, 0.f, nullptr, m};
        bool sk;
        fg_choose::choose(configs, costs, machine, g, true, true, splits, true, c, s, &sk);
    };
    int c = -1, s = -1;
    pick(8192, 8192, 8192, 0, &c, &s);
    check("choice: 8192^3 takes the large tile", c, 0);
    check("choice: unsplit", s, 1);
    pick(256, 256, 8192, 0, &c, &s);
    check("choice: 256x256x8192 (4 large tiles) in slices", s > 1, 1);
    pick(256, 256, 8192, 3, &c, &s);
    check("choice: FASTGEMM_SPLIT_K=3 kept", s, 3);
    pick(64, 64, 64, 0, &c, &s);
    check("choice: 64^3 (one large tile, 4 small ones) takes the small tile", c, 1);
    check("choice: k too short to split", s, 1);
    // A tile longer than m or n runs at its short_tile factor of the rate: m = 100 under the
    // large tile's 128 rows, m = 200 over them.
    pick(100, 8192, 8192, 0, &c, &s);
    check("choice: 100x8192x8192 at the full rate takes the large tile", c, 0);
    costs[0].short_tile = 0.2;
    pick(100, 8192, 8192, 0, &c, &s);
    check("choice: 100x8192x8192 with the large tile at 0.2 of its rate takes the small one", c, 1);
    pick(200, 8192, 8192, 0, &c, &s);
    check("choice: 200x8192x8192 (m past the large tile) is not slowed by it", c, 0);
    costs[0].short_tile = 1;
    // A configuration's factor by transpose pair (ta + 2 tb): the large tile at 0.2 of its rate in
    // NN alone.
    costs[0].trans[0] = 0.2;
    pick(8192, 8192, 8192, 0, &c, &s);
    check("choice: 8192^3 NN with the large tile at 0.2 of its rate in NN takes the small one", c, 1);
    const fg_kern::Gemm<float> tn = {true, false, 8192, 8192, 8192, 1.f, nullptr, 8192, nullptr, 8192, 0.f, nullptr, 8192};
    bool sk;
    fg_choose::choose(configs, costs, machine, tn, true, true, 0, true, &c, &s, &sk);
    check("choice: 8192^3 TN keeps the large tile", c, 0);
    costs[0].trans[0] = 1;
    // The wave groups: the busiest SM's units 1, 2, 3-4, 5-8, more, plus 5 where split; a group's
    // factor scales the rate of the launches in it and no other.
    check("wave group: 1 unit an SM, unsplit", fg_choose::wave_group(1, 1), 0);
    check("wave group: 4 units, unsplit", fg_choose::wave_group(4, 1), 2);
    check("wave group: 5 units, split", fg_choose::wave_group(5, 3), 8);
    check("wave group: 100 units, split", fg_choose::wave_group(100, 2), 9);
    // 4096^3 in 128 x 128 tiles: 1024 units on 132 SMs, 8 on the busiest (group 3).
    fg_choose::Machine waves = machine;
    const double t4096 = fg_choose::time(costs[0], machine, 128, 128, 16, 4096, 4096, 4096, 1, 12, 132, 4);
    waves.wave[2] = 0.5;
    check("wave factor: another group's leaves 4096^3's time",
          fg_choose::time(costs[0], waves, 128, 128, 16, 4096, 4096, 4096, 1, 12, 132, 4) == t4096, 1);
    waves.wave[3] = 0.5;
    const double half = fg_choose::time(costs[0], waves, 128, 128, 16, 4096, 4096, 4096, 1, 12, 132, 4);
    check("wave factor: 0.5 for 5-8 units an SM doubles 4096^3's time but the launch",
          half > 1.9 * t4096 && half < 2.0 * t4096, 1);
    // Packing: where the copies cost less than the rate they win; only the unaligned operand.
    bool pa = true, pb = true;
    fg_kern::Gemm<float> g8 = {false, false, 8192, 8192, 8192, 1.f, nullptr, 8191, nullptr, 8192, 0.f, nullptr, 8192};
    fg_choose::pack_choice(configs, costs, machine, g8, false, true, &pa, &pb);
    check("pack: 8192^3 with A unaligned: A copied, B not", pa * 10 + pb, 10);
    g8.n = 16; // the copy of A (8192^2) costs more than 16 columns of C win
    fg_choose::pack_choice(configs, costs, machine, g8, false, true, &pa, &pb);
    check("pack: 8192x16x8192 with A unaligned: nothing copied", pa * 10 + pb, 0);
    fg_choose::pack_choice(configs, costs, machine, g8, true, true, &pa, &pb);
    check("pack: aligned operands: nothing copied", pa * 10 + pb, 0);
    // A copy's fixed cost (pack_s) against the few microseconds a small problem can win.
    fg_kern::Gemm<float> g256 = {false, false, 256, 256, 256, 1.f, nullptr, 255, nullptr, 256, 0.f, nullptr, 256};
    fg_choose::pack_choice(configs, costs, machine, g256, false, true, &pa, &pb);
    check("pack: 256^3 with A unaligned: the copy's fixed cost outweighs the gain", pa * 10 + pb, 0);
    fg_choose::Machine free_copy = machine;
    free_copy.pack_s = 0;
    fg_choose::pack_choice(configs, costs, free_copy, g256, false, true, &pa, &pb);
    check("pack: 256^3 with A unaligned, copies without fixed cost: A copied", pa * 10 + pb, 10);
    g256.m = g256.n = g256.k = 64; // 64^3 takes less time than one copy's fixed cost
    g256.lda = 63;
    fg_choose::pack_choice(configs, costs, machine, g256, false, true, &pa, &pb);
    check("pack: 64^3 with A unaligned: nothing copied", pa * 10 + pb, 0);
    // k_free (the SIMT family): an operand read along k stays as it is; NN with A aligned (class
    // 4) runs at the aligned rate.
    fg_choose::Machine kf = machine;
    kf.k_free = true;
    kf.factor[4] = 1;
    g8.n = 8192;
    fg_choose::pack_choice(configs, costs, kf, g8, false, false, &pa, &pb);
    check("pack, k_free: NN, both unaligned: A copied (read along m), B not", pa * 10 + pb, 10);
    g8.ta = true;
    fg_choose::pack_choice(configs, costs, kf, g8, false, false, &pa, &pb);
    check("pack, k_free: TN, both unaligned: nothing copied", pa * 10 + pb, 0);
    // Through the plan: the model's choice unless the table's is asked.
    const fg_table::Entry entries[] = {{256, 256, 8192, 0, 0, 1}};
    fg_gemm_args g = {};
    g.dt = FG_F32, g.ta = g.tb = 'N', g.m = 64, g.n = 64, g.k = 64, g.alpha = 1;
    fg_kernel_plan t;
    fg_table::table_plan(configs, entries, costs, machine, 1, &g, nullptr, 64, nullptr, 64, -1, 0, 1,
                         FG_CHOICE_MODEL, (size_t)256 << 20, &t);
    check("model plan: the model's configuration", t.config, 1);
    fg_table::table_plan(configs, entries, costs, machine, 1, &g, nullptr, 64, nullptr, 64, -1, 0, 1,
                         FG_CHOICE_TABLE, (size_t)256 << 20, &t);
    check("table plan (FASTGEMM_CHOICE=table): the entry's configuration", t.config, 0);
    g.m = 260, g.n = 256, g.k = 8192; // within 2% of the measured point
    fg_table::table_plan(configs, entries, costs, machine, 1, &g, nullptr, 260, nullptr, 8192, -1, 0, 1,
                         FG_CHOICE_MODEL, (size_t)256 << 20, &t);
    check("model plan: a measured problem takes its measured best", t.config * 10 + t.splits, 1);
}

// Stream-K as the model weighs it (choose.cuh's time_streamk): a 128 x 128 configuration whose
// plan is the library's (streamk_plan, 132 slots) against a 32 x 32 one; 133 tiles of 1024
// k-tiles (unsplit a wave and a tile, 3.55 ms; at best 2.12 ms in 6 slices; 1.81 ms with
// stream-K) take stream-K where the cost has it, and only there.
static fg_kern::StreamKPlan plan132(int, const fg_kern::Gemm<float> &g, bool force)
{
    return fg_kern::streamk_plan(((g.m + 127) / 128) * ((g.n + 127) / 128), (g.k + 15) / 16, 132, 12, force);
}

static void check_streamk_choice()
{
    const fg_table::Config<float> big = {"big", 128, 128, 16, fake_instance, plan132, fake_launch};
    const fg_table::Config<float> small = {"small", 32, 32, 32, fake_instance, nullptr, fake_launch};
    const fg_table::Config<float> configs[2] = {big, small};
    fg_choose::Cost costs[2] = {{"big", 40, 2, 1, 1, 2, 1}, {"small", 15, 3, 3, 1, 8, 1}};
    fg_choose::Machine machine = {132, 4e-6, 2.5e12, 13e-6, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, false, 16};
    auto pick = [&](int64_t m, int64_t k, int splits, int *c, int *s) {
        const fg_kern::Gemm<float> g = {true, false, m, 128, k, 1.f, nullptr, k, nullptr, k, 0.f, nullptr, m};
        bool sk = true;
        fg_choose::choose(configs, costs, machine, g, true, true, splits, true, c, s, &sk);
        return (int)sk;
    };
    int c = -1, s = -1;
    check("stream-K: not weighed where the cost has none (sk_rate 0)", pick(133 * 128, 16384, 0, &c, &s), 0);
    costs[0].sk_fixed = 4, costs[0].sk_rate = 1, costs[0].sk_bytes_per_s = 200e9;
    check("stream-K: 133 tiles of 1024 k-tiles take it", pick(133 * 128, 16384, 0, &c, &s), 1);
    check("stream-K: with the configuration that has it, unsplit", c * 10 + s, 1);
    check("stream-K: not with FASTGEMM_SPLIT_K=3", pick(133 * 128, 16384, 3, &c, &s), 0);
    check("stream-K: not under sk_min_ktiles (15 k-tiles)", pick(133 * 128, 240, 0, &c, &s), 0);
    costs[0].sk_rate = 0.5;
    check("stream-K: not at half the rate", pick(133 * 128, 16384, 0, &c, &s), 0);
    costs[0].sk_rate = 1;
    machine.sk_margin = 0.5; // predicted 1.81 ms against 2.1 ms in 6 slices: less than half below
    check("stream-K: not where it wins by less than sk_margin", pick(133 * 128, 16384, 0, &c, &s), 0);
    machine.sk_margin = 0.1;
    check("stream-K: where it wins by more", pick(133 * 128, 16384, 0, &c, &s), 1);
    // The plan: 0 tiles one a block, 133 over 132 blocks of 1031.8 k-tiles each, in 2.008 pieces
    // of 2 + 4 k-tiles; a tile's last block adds 2 blocks' sums of 128 x 128 floats at 200 GB/s.
    const fg_kern::StreamKPlan p = plan132(0, {true, false, 133 * 128, 128, 16384, 1.f, nullptr, 16384, nullptr, 16384, 0.f, nullptr, 1}, true);
    check("stream-K: the plan, 133 tiles on 132 blocks", (int)(p.first * 1000000 + p.tiles * 1000 + p.ctas), 133132);
    const double run = 133.0 * 1024 / 132, ktile_s = 2.0 * 128 * 128 * 16 / (40e12 / 132);
    const double want = 2 * 4e-6 + (run + (1 + run / 1024) * 6) * ktile_s + 2.0 * 128 * 128 * 4 / 200e9;
    const double got = fg_choose::time_streamk(costs[0], machine, 128, 128, 16, 133 * 128, 128, 16384, p, 1, 132, 4);
    check("stream-K: time_streamk is the model's sum (to 1e-9)", fabs(got / want - 1) < 1e-9, 1);
    // Through the plan: forced where chosen, none with FASTGEMM_STREAM_K=0.
    const fg_table::Entry entries[] = {{64, 64, 64, 0, 1, 1}};
    fg_gemm_args g = {};
    g.dt = FG_F32, g.ta = 'T', g.tb = 'N', g.m = 133 * 128, g.n = 128, g.k = 16384, g.alpha = 1;
    fg_kernel_plan t;
    fg_table::table_plan(configs, entries, costs, machine, 1, &g, nullptr, 16384, nullptr, 16384, -1, 0, 1,
                         FG_CHOICE_MODEL, (size_t)256 << 20, &t);
    check("stream-K plan: the model's choice runs it", (int)t.sk_tiles, 133);
    fg_table::table_plan(configs, entries, costs, machine, 1, &g, nullptr, 16384, nullptr, 16384, -1, 0, 0,
                         FG_CHOICE_MODEL, (size_t)256 << 20, &t);
    check("stream-K plan: not with FASTGEMM_STREAM_K=0", (int)t.sk_tiles, 0);
    // Where stream-K's workspace exceeds the limit, the pick without it: the small tile at the
    // large one's rate (1.88 ms unsplit, against 1.81 with stream-K and 2.12 for the large tile
    // in 6 slices), not the large tile unsplit without stream-K (3.55 ms).
    costs[1].tflops = 40, costs[1].fixed = 2, costs[1].jsat = 1;
    machine.sk_margin = 0;
    fg_table::table_plan(configs, entries, costs, machine, 1, &g, nullptr, 16384, nullptr, 16384, -1, 0, 1,
                         FG_CHOICE_MODEL, (size_t)256 << 20, &t);
    check("stream-K plan: the large tile with stream-K where its workspace fits", t.config * 1000 + (int)t.sk_tiles, 133);
    fg_table::table_plan(configs, entries, costs, machine, 1, &g, nullptr, 16384, nullptr, 16384, -1, 0, 1,
                         FG_CHOICE_MODEL, (size_t)1 << 20, &t);
    check("stream-K plan: its workspace over the limit: the small tile, unsplit", t.config * 1000 + t.splits * 100 + (int)t.sk_tiles, 1100);
    check("stream-K plan: and no workspace", (int)t.ws_bytes, 0);
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

    check_plans();
    check_choice();
    check_streamk_choice();

    printf("%s\n", fails ? "FAILED" : "all passed");
    return fails != 0;
}
