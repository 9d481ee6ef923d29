// pack.cu: operands that rule out the kernels' 16-byte copies (a pointer or a leading dimension
// that is not a multiple of 16 bytes) copied first (kernels/copy_matrix.cu) into a workspace of
// the device's pool whose leading dimension is, so that the aligned instances run (the SIMT
// kernels' fast loop and stream-K, the DMMA kernels' TMA): O(mk + kn) memory traffic against
// O(mnk) work.
#include "backends/cuda/cuda_backend.h"
#include "kernels/kernels.h"

#include <stdint.h>

namespace {

// The most that copies by the model (FASTGEMM_PACK=1) take of workspace in one call.
constexpr double pack_max_bytes = (double)((size_t)1 << 30);

bool aligned16(const void *p, int64_t ld, size_t es)
{
    return (reinterpret_cast<uintptr_t>(p) % 16) == 0 && (ld * (int64_t)es) % 16 == 0;
}

// The leading dimension of a copy of `rows` rows: rounded up to 16 bytes.
int64_t packed_ld(int64_t rows, size_t es)
{
    const int64_t per16 = 16 / (int64_t)es;
    return (rows + per16 - 1) / per16 * per16;
}

// The rows x cols column-major matrix at src (leading dimension ld) into a fresh workspace
// block of ld' = rows rounded up to 16 bytes: 0 with *dst, *dld; an error where no workspace
// could be had (nothing was copied then).
cudaError_t pack(const void *src, int64_t ld, int64_t rows, int64_t cols, size_t es, cudaStream_t s,
                 void **dst, int64_t *dld)
{
    const int64_t ld2 = packed_ld(rows, es);
    void *w = nullptr;
    cudaError_t err = fg_pool_alloc(&w, (size_t)ld2 * (size_t)cols * es, s);
    if (err != cudaSuccess) return err;
    err = fg_kernel_copy_matrix(src, ld, rows, cols, es, w, ld2, s);
    if (err != cudaSuccess) {
        cudaFreeAsync(w, s);
        return err;
    }
    *dst = w, *dld = ld2;
    return cudaSuccess;
}

} // namespace

void fg_pack_operands(const fg_settings *set, const fg_gemm_args *g, bool dmma, fg_packed *p, cudaStream_t s)
{
    const size_t es = g->dt == FG_F64 ? 8 : 4;
    p->ws_a = p->ws_b = nullptr;
    bool pack_a = !aligned16(p->a, p->lda, es), pack_b = !aligned16(p->b, p->ldb, es);
    // Unset: DGEMM where it pays, SGEMM never. The DMMA kernels' fastest path (TMA) needs
    // aligned operands, so the copies pay wherever the model says; the SIMT kernels read the
    // operands along k element by element whatever their alignment, and packing by the model
    // gains them nothing overall on random problems (perf/notes/kernel-choice.md).
    const int mode = set->pack >= 0 ? set->pack : g->dt == FG_F64 ? 1 : 0;
    if (mode == 0 || !(pack_a || pack_b)) return;
    // op(A) is m x k: A is m x k (N) or k x m (T); op(B) is k x n: B is k x n or n x k.
    const int64_t ar = g->ta == 'N' ? g->m : g->k, ac = g->ta == 'N' ? g->k : g->m;
    const int64_t br = g->tb == 'N' ? g->k : g->n, bc = g->tb == 'N' ? g->n : g->k;
    // Where it pays (1): the kernel layer's model weighs the copies against the faster kernels.
    if (mode == 1) {
        fg_kernel_pack(g, p->a, p->lda, p->b, p->ldb, dmma, &pack_a, &pack_b);
        // The workspace goes back to the library's pool, which keeps up to a quarter of the
        // device's memory after the call (pool.cu): so the copies are bounded, as the kernels'
        // own workspace is (runtime.cu), and larger operands run as they are.
        const double bytes = ((pack_a ? (double)packed_ld(ar, es) * (double)ac : 0) +
                              (pack_b ? (double)packed_ld(br, es) * (double)bc : 0)) * (double)es;
        if (bytes > pack_max_bytes) return;
    }
    void *w;
    int64_t ld;
    if (pack_a) {
        if (pack(p->a, p->lda, ar, ac, es, s, &w, &ld) != cudaSuccess) {
            cudaGetLastError(); // no room: the operands as they are
            return;
        }
        p->ws_a = w, p->a = w, p->lda = ld;
    }
    if (pack_b) {
        if (pack(p->b, p->ldb, br, bc, es, s, &w, &ld) != cudaSuccess) {
            cudaGetLastError(); // no room: the operands as they are
            p->a = p->a0, p->lda = p->lda0;
            fg_unpack(p, s);
            return;
        }
        p->ws_b = w, p->b = w, p->ldb = ld;
    }
}

cudaError_t fg_unpack(fg_packed *p, cudaStream_t s)
{
    cudaError_t err = cudaSuccess;
    for (void **w : {&p->ws_a, &p->ws_b})
        if (*w) {
            const cudaError_t e = cudaFreeAsync(*w, s);
            if (err == cudaSuccess) err = e;
            *w = nullptr;
        }
    return err;
}
