// gemm_table.cuh: the tuned tables (sgemm_simt.cu, dgemm_dmma.cu, each from its generated
// header) and the plan of one launch: a configuration by name, the measured problem nearest to
// a call, and what a configuration's launch will do on it (fg_kernel_plan): its slices, its
// stream-K part, its kernel instance and its workspace.
#pragma once

#include "choose.cuh"
#include "common/launch.cuh"
#include "common/splitk.cuh"
#include "common/streamk.cuh"
#include "kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

namespace fg_table {

// What the plan needs of a configuration; its family's launcher makes one per configuration
// (fg_simt::config, fg_dmma::config). Instances are the configuration's kernels for the
// transpose pairs and the operands' alignment.
template <class T>
struct Config {
    const char *name;
    int bm, bn, bk; // its block tile
    // The instance that runs g in `splits` slices (1: none).
    int (*instance)(const fg_kern::Gemm<T> &g, int splits);
    // The stream-K plan of an unsplit instance on g (no tiles: none; force: wherever it can
    // run, else where it pays); null where the configuration has no stream-K.
    fg_kern::StreamKPlan (*streamk)(int instance, const fg_kern::Gemm<T> &g, bool force);
    // Launches an instance on g: the stream-K plan sk where it has tiles, else `splits` slices;
    // ws: the plan's workspace.
    cudaError_t (*launch)(int instance, const fg_kern::Gemm<T> &g, int splits, const fg_kern::StreamKPlan &sk,
                          void *ws, cudaStream_t s);
};

// A problem the tuner measured, with its best configuration (an index) and split-K.
struct Entry {
    double m, n, k;
    int trans, config, splits; // trans: 1 A transposed, 2 B transposed
};

template <class T, size_t N>
int find(const Config<T> (&configs)[N], const char *name)
{
    for (size_t i = 0; i < N; i++)
        if (!strcmp(name, configs[i].name)) return (int)i;
    return -1;
}

// Whether a measured problem's operands allow 16-byte copies: both leading dimensions a
// multiple of 16 bytes (a call's: aligned16 of both, pointers too). The fast paths need it
// (the SIMT kernels' fast loop, the DMMA kernels' TMA); without it the same configuration runs
// its slower general copies, so a problem of the other kind measures another best configuration.
inline bool copies16(int64_t lda, int64_t ldb, size_t esize)
{
    return (lda * (int64_t)esize) % 16 == 0 && (ldb * (int64_t)esize) % 16 == 0;
}

// The measured problem nearest to g (distance: the sum of |log2| ratios of m, n and k) among
// those of g's transpose pair, or of any pair if the tuner measured none of g's. Of the same
// kind (copies16 for the measured problem, whose leading dimensions are its own m, n, k) where
// one lies within a factor of 2 (distance <= 1), else of either: 4095^3 takes a 4095^3 point
// where the tuner measured one, and 4000^3 the 4096^3 point rather than 4095^3's. distance, if
// given: the point's.
template <size_t N>
const Entry &lookup(const Entry (&table)[N], const fg_gemm_args *g, size_t esize, bool aligned,
                    double *distance = nullptr)
{
    const int trans = (g->ta == 'T') + 2 * (g->tb == 'T');
    bool have_trans = false;
    for (const Entry &e : table) have_trans |= e.trans == trans;
    const Entry *best = &table[0], *best_kind = nullptr;
    double best_d = INFINITY, best_kind_d = INFINITY;
    for (const Entry &e : table) {
        if (have_trans && e.trans != trans) continue;
        const double d = fabs(log2((double)g->m / e.m)) + fabs(log2((double)g->n / e.n)) +
                         fabs(log2((double)g->k / e.k));
        if (d < best_d) best_d = d, best = &e;
        const double lda = e.trans & 1 ? e.k : e.m, ldb = e.trans & 2 ? e.n : e.k;
        if (copies16((int64_t)lda, (int64_t)ldb, esize) == aligned && d < best_kind_d)
            best_kind_d = d, best_kind = &e;
    }
    const bool kind = best_kind && best_kind_d <= 1.0;
    if (distance) *distance = kind ? best_kind_d : best_d;
    return kind ? *best_kind : *best;
}

// How near a measured point (lookup's distance) a call must lie for the model's choice to take
// the point's measured best instead: the sum of the |log2| ratios at most 0.1 (7% off in one of
// m, n and k, or about 2% in each).
constexpr double measured_near = 0.1;

// g as the launchers take it, on the device pointers a and b (c: none yet).
template <class T>
fg_kern::Gemm<T> gemm_of(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb,
                         void *c = nullptr, int64_t ldc = 0)
{
    return {g->ta == 'T', g->tb == 'T', g->m, g->n, g->k, (T)g->alpha, static_cast<const T *>(a), lda,
            static_cast<const T *>(b), ldb, (T)g->beta, static_cast<T *>(c), ldc};
}

// The plan of configuration cfg on g with `splits` slices asked (made of whole k-tiles,
// k_slices). Unsplit, a configuration with stream-K runs the last waves that way (stream_k: 0
// never, 1 where it pays, 2 wherever it can run). The workspace is at most max_ws bytes:
// split-K that does not fit runs in one slice, stream-K that does not fit not at all. Sets
// everything but the plan's family and config.
template <class T>
void plan_config(const Config<T> &cfg, const fg_kern::Gemm<T> &g, int splits, int stream_k, size_t max_ws,
                 fg_kernel_plan *plan)
{
    int64_t kslice;
    splits = fg_kern::k_slices(g.k, cfg.bk, splits, &kslice);
    plan->splits = 1;
    plan->sk_first = plan->sk_tiles = 0;
    plan->sk_ctas = 0;
    plan->ws_bytes = 0;
    const int unsplit = cfg.instance(g, 1);
    if (splits == 1 && stream_k && cfg.streamk) {
        const fg_kern::StreamKPlan sk = cfg.streamk(unsplit, g, stream_k == 2);
        const size_t bytes = fg_kern::streamk_bytes(sk, cfg.bm, cfg.bn, (int)sizeof(T));
        if (bytes > 0 && bytes <= max_ws) {
            plan->sk_first = sk.first, plan->sk_tiles = sk.tiles, plan->sk_ctas = sk.ctas;
            plan->ws_bytes = bytes;
        }
    } else if (splits > 1) {
        // Each slice's partial products: m x n elements.
        const size_t most = max_ws / sizeof(T);
        const int64_t elems = most > (size_t)INT64_MAX ? INT64_MAX : (int64_t)most;
        if (g.m <= elems / splits / g.n) {
            plan->splits = splits;
            plan->ws_bytes = (size_t)(splits * g.m * g.n) * sizeof(T);
        }
    }
    plan->instance_unsplit = unsplit;
    plan->instance = plan->splits > 1 ? cfg.instance(g, plan->splits) : unsplit;
}

// Runs a plan of cfg on g (plan_config's) with its workspace ws.
template <class T>
cudaError_t launch_plan(const Config<T> &cfg, const fg_kernel_plan *plan, const fg_kern::Gemm<T> &g, void *ws,
                        cudaStream_t s)
{
    fg_kern::StreamKPlan sk;
    sk.first = plan->sk_first, sk.tiles = plan->sk_tiles, sk.ctas = plan->sk_ctas;
    return cfg.launch(plan->instance, g, plan->splits, sk, ws, s);
}

// Whether two names are the same string (for the model's check against the table).
constexpr bool same_name(const char *x, const char *y)
{
    return *x == *y && (*x == 0 || same_name(x + 1, y + 1));
}

// Whether a family's model (choose.cuh) covers its table's configurations, in their order.
template <class T, size_t N>
constexpr bool model_matches(const Config<T> (&configs)[N], const fg_choose::Cost (&costs)[N])
{
    for (size_t i = 0; i < N; i++)
        if (!same_name(configs[i].name, costs[i].name)) return false;
    return true;
}

// A family's plan: config, an index into configs or -1 for the family's choice; splits, the
// split-K slices asked or 0 for the choice's (a forced configuration runs unsplit unless told
// otherwise). The choice (FG_CHOICE_MODEL): a problem the tuner measured (within measured_near)
// takes its measured best, any other the cost model's pick over every configuration and split,
// and stream-K where the model weighs it and stream_k is not 0 (fg_choose::choose on costs and
// machine; stream-K then runs forced, or, where its workspace would exceed max_ws, the pick
// without it runs); FG_CHOICE_TABLE: the table's nearest point always.
template <class T, size_t NC, size_t NE>
void table_plan(const Config<T> (&configs)[NC], const Entry (&table)[NE], const fg_choose::Cost (&costs)[NC],
                const fg_choose::Machine &machine, int family, const fg_gemm_args *g, const void *a, int64_t lda,
                const void *b, int64_t ldb, int config, int splits, int stream_k, int choice, size_t max_ws,
                fg_kernel_plan *plan)
{
    if (config < 0 || config >= (int)NC) {
        const bool al_a = fg_kern::aligned16(a, lda, sizeof(T)), al_b = fg_kern::aligned16(b, ldb, sizeof(T));
        double d;
        const Entry &e = lookup(table, g, sizeof(T), al_a && al_b, &d);
        if (choice == FG_CHOICE_TABLE || d <= measured_near) {
            config = e.config;
            if (splits < 1) splits = e.splits;
        } else {
            const fg_kern::Gemm<T> gg = gemm_of<T>(g, a, lda, b, ldb);
            bool sk;
            fg_choose::choose(configs, costs, machine, gg, al_a, al_b, splits, stream_k != 0, &config, &splits, &sk);
            if (sk) { // stream-K forced, unless its workspace exceeds max_ws: then the choice without it
                plan_config(configs[config], gg, 1, 2, max_ws, plan);
                if (plan->sk_tiles > 0) {
                    plan->family = family, plan->config = config;
                    return;
                }
                fg_choose::choose(configs, costs, machine, gg, al_a, al_b, splits, false, &config, &splits, &sk);
            }
        }
    } else if (splits < 1) {
        splits = 1;
    }
    plan_config(configs[config], gemm_of<T>(g, a, lda, b, ldb), splits, stream_k, max_ws, plan);
    plan->family = family, plan->config = config;
}

// Which operands of g to copy aligned first (fg_choose::pack_choice on the family's model).
template <class T, size_t NC>
void table_pack(const Config<T> (&configs)[NC], const fg_choose::Cost (&costs)[NC], const fg_choose::Machine &machine,
                const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb, bool *pack_a,
                bool *pack_b)
{
    fg_choose::pack_choice(configs, costs, machine, gemm_of<T>(g, a, lda, b, ldb), fg_kern::aligned16(a, lda, sizeof(T)),
                           fg_kern::aligned16(b, ldb, sizeof(T)), pack_a, pack_b);
}

// Runs a plan of table_plan's.
template <class T, size_t NC>
cudaError_t table_launch(const Config<T> (&configs)[NC], const fg_kernel_plan *plan, const fg_gemm_args *g,
                         const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc, void *ws,
                         cudaStream_t s)
{
    if (plan->config < 0 || plan->config >= (int)NC) return cudaErrorInvalidValue;
    return launch_plan(configs[plan->config], plan, gemm_of<T>(g, a, lda, b, ldb, c, ldc), ws, s);
}

} // namespace fg_table

// The entries of tuned family F (families.h) over its configurations and table
// (costs, machine: its cost model, which must name the configurations in their order).
#define FG_TABLE_FAMILY(F, FAMILY, configs, table, costs, machine)                              \
    static_assert(fg_table::model_matches(configs, costs),                                      \
                  "the cost model's configurations are not the table's: run fit_model.py");    \
    int fg_##F##_find(const char *name) { return fg_table::find(configs, name); }               \
    void fg_##F##_plan(const fg_gemm_args *g, const void *a, int64_t lda, const void *b,         \
                       int64_t ldb, int config, int splits, int stream_k, int choice,           \
                       size_t max_ws, fg_kernel_plan *plan)                                     \
    {                                                                                           \
        fg_table::table_plan(configs, table, costs, machine, FAMILY, g, a, lda, b, ldb, config, \
                             splits, stream_k, choice, max_ws, plan);                           \
    }                                                                                           \
    void fg_##F##_pack(const fg_gemm_args *g, const void *a, int64_t lda, const void *b,         \
                       int64_t ldb, bool *pack_a, bool *pack_b)                                 \
    {                                                                                           \
        fg_table::table_pack(configs, costs, machine, g, a, lda, b, ldb, pack_a, pack_b);       \
    }                                                                                           \
    cudaError_t fg_##F##_launch(const fg_kernel_plan *plan, const fg_gemm_args *g,              \
                                const void *a, int64_t lda, const void *b, int64_t ldb, void *c, \
                                int64_t ldc, void *ws, cudaStream_t s)                          \
    {                                                                                           \
        return fg_table::table_launch(configs, plan, g, a, lda, b, ldb, c, ldc, ws, s);         \
    }
