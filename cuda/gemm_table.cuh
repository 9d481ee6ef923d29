// gemm_table.cuh: what the library's tuned tables share (sgemm_simt.cu, dgemm_dmma.cu, each from
// its generated header): configurations by name, the nearest measured problem, and the launch
// with its split-K workspace.
#pragma once

#include "gemm_common.cuh"
#include "kernels.h"

#include <math.h>
#include <string.h>

namespace fg_table {

template <class T>
struct Config {
    const char *name;
    fg_kern::LaunchFn<T> run;
    int bk;
    // The workspace of stream-K for the last waves on this problem, or 0 where it does not pay
    // (force: wherever it can run); null: the configuration has none.
    size_t (*streamk)(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,
                      const T *b, int64_t ldb, bool force);
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
// where the tuner measured one, and 4000^3 the 4096^3 point rather than 4095^3's.
template <size_t N>
const Entry &lookup(const Entry (&table)[N], const fg_gemm_args *g, size_t esize, bool aligned)
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
    return best_kind && best_kind_d <= 1.0 ? *best_kind : *best;
}

// Workspace for split-K partial products or stream-K's, at most this many bytes (else neither).
constexpr int64_t max_workspace = (int64_t)256 << 20;

// C = alpha op(A) op(B) + beta C (alpha != 0, k > 0) on device pointers. config: an index into
// configs, or -1 for the table's choice; splits: the split-K slices, or 0 for the table's (a
// forced configuration runs unsplit unless told otherwise). Unsplit, a configuration with
// stream-K instances runs the last waves of a large problem that way (FASTGEMM_STREAM_K: 0
// never, 1 where it pays, 2 wherever it can).
template <class T, size_t NC, size_t NE>
cudaError_t run(const Config<T> (&configs)[NC], const Entry (&table)[NE], const fg_gemm_args *g,
                int config, int splits, const void *a, int64_t lda, const void *b, int64_t ldb,
                void *c, int64_t ldc, cudaStream_t s)
{
    if (config < 0 || config >= (int)NC) {
        const bool aligned =
            fg_kern::aligned16(a, lda, sizeof(T)) && fg_kern::aligned16(b, ldb, sizeof(T));
        const Entry &e = lookup(table, g, sizeof(T), aligned);
        config = e.config;
        if (splits < 1) splits = e.splits;
    } else if (splits < 1) {
        splits = 1;
    }
    const Config<T> &cfg = configs[config];
    // The slices the kernel will make, and their workspace.
    int64_t kslice;
    splits = fg_kern::k_slices(g->k, cfg.bk, splits, &kslice);
    T *ws = nullptr;
    const int streamk = fg_get_config()->stream_k; // FASTGEMM_STREAM_K
    size_t sk_bytes = 0;
    if (splits == 1 && streamk && cfg.streamk &&
        (sk_bytes = cfg.streamk(g->ta == 'T', g->tb == 'T', g->m, g->n, g->k, static_cast<const T *>(a), lda,
                                static_cast<const T *>(b), ldb, streamk == 2)) > 0) {
        if (sk_bytes <= (size_t)max_workspace &&
            fg_pool_alloc(reinterpret_cast<void **>(&ws), sk_bytes, s) == cudaSuccess)
            splits = 0; // stream-K (the launcher's splits = 0)
        else
            cudaGetLastError(), ws = nullptr;
    } else if (splits > 1) {
        const bool fits = g->m <= max_workspace / (int64_t)sizeof(T) / splits / g->n;
        if (!fits || fg_pool_alloc(reinterpret_cast<void **>(&ws),
                                   (size_t)(splits * g->m * g->n) * sizeof(T), s) != cudaSuccess) {
            cudaGetLastError(); // no room: one slice, straight into C
            ws = nullptr;
            splits = 1;
        }
    }
    cudaError_t err = cfg.run(g->ta == 'T', g->tb == 'T', g->m, g->n, g->k, (T)g->alpha,
                              static_cast<const T *>(a), lda, static_cast<const T *>(b), ldb,
                              (T)g->beta, static_cast<T *>(c), ldc, splits, ws, s);
    if (ws) {
        const cudaError_t freed = cudaFreeAsync(ws, s);
        if (err == cudaSuccess) err = freed;
    }
    return err;
}

} // namespace fg_table
