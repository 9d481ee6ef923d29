// sgemm_simt.cu: the SIMT SGEMM configurations the library is built with and the table that
// picks one per problem, both from sgemm_table.gen.h (written by perf/tune.cu on the GPU it
// tuned; only the configurations the table uses are compiled). The kernels are in
// sgemm_simt.cuh.
#include "kernels.h"
#include "sgemm_simt.cuh"
#include "sgemm_table.gen.h"

#include <math.h>
#include <string.h>

namespace {

struct Config {
    const char *name;
    fg_simt::LaunchFn run;
    int bk;
};
#define FG_CONFIG(name, BM, BN, BK, WM, WN, S, TM, TN, F)                                       \
    {name, fg_simt::launch_any<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>>, BK},
const Config configs[] = {FG_SGEMM_CONFIGS(FG_CONFIG)};
constexpr int n_configs = sizeof configs / sizeof configs[0];

struct Entry {
    double m, n, k;
    int trans, config, splits;
};
#define FG_ENTRY(m, n, k, trans, config, splits) {m, n, k, trans, config, splits},
const Entry table[] = {FG_SGEMM_TABLE(FG_ENTRY)};

// The measured problem nearest to g (distance: the sum of |log2| ratios of m, n and k) among
// those of g's transpose pair, or of any pair if the tuner measured none of g's.
const Entry &lookup(const fg_gemm_args *g)
{
    const int trans = (g->ta == 'T') + 2 * (g->tb == 'T');
    bool have_trans = false;
    for (const Entry &e : table) have_trans |= e.trans == trans;
    const Entry *best = &table[0];
    double best_d = INFINITY;
    for (const Entry &e : table) {
        if (have_trans && e.trans != trans) continue;
        const double d = fabs(log2((double)g->m / e.m)) + fabs(log2((double)g->n / e.n)) +
                         fabs(log2((double)g->k / e.k));
        if (d < best_d) best_d = d, best = &e;
    }
    return *best;
}

// Workspace for split-K partial products, at most this many bytes (else no split).
constexpr int64_t max_workspace = (int64_t)256 << 20;

} // namespace

int fg_cuda_sgemm_config(const char *name)
{
    for (int i = 0; i < n_configs; i++)
        if (!strcmp(name, configs[i].name)) return i;
    return -1;
}

cudaError_t fg_cuda_sgemm_simt(const fg_gemm_args *g, int config, int splits, const void *a,
                               int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
                               cudaStream_t s)
{
    if (config < 0 || config >= n_configs) { // the table's choice
        const Entry &e = lookup(g);
        config = e.config;
        if (splits < 1) splits = e.splits;
    } else if (splits < 1) { // a forced configuration runs unsplit unless told otherwise
        splits = 1;
    }
    const Config &cfg = configs[config];
    // The slices the kernel will make, and their workspace.
    int64_t kslice;
    splits = fg_kern::k_slices(g->k, cfg.bk, splits, &kslice);
    float *ws = nullptr;
    if (splits > 1) {
        const bool fits = g->m <= max_workspace / (int64_t)sizeof(float) / splits / g->n;
        if (!fits || cudaMallocAsync(reinterpret_cast<void **>(&ws),
                                     (size_t)(splits * g->m * g->n) * sizeof(float), s) != cudaSuccess) {
            cudaGetLastError(); // no room: one slice, straight into C
            ws = nullptr;
            splits = 1;
        }
    }
    cudaError_t err = cfg.run(g->ta == 'T', g->tb == 'T', g->m, g->n, g->k, (float)g->alpha,
                              static_cast<const float *>(a), lda, static_cast<const float *>(b),
                              ldb, (float)g->beta, static_cast<float *>(c), ldc, splits, ws, s);
    if (ws) {
        const cudaError_t freed = cudaFreeAsync(ws, s);
        if (err == cudaSuccess) err = freed;
    }
    return err;
}
