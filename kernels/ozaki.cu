// ozaki.cu: SGEMM and DGEMM by the Ozaki scheme II on the INT8 tensor cores (kernels.h; the method
// and its error analysis: cpu_ref/ozaki.h and perf/notes/tensor-core-sgemm.md).
//
// C = alpha op(A) op(B) + beta C in four passes on the stream; the first two (ozaki_passes.cuh)
// prepare each operand's side (kernels.h), once, for every product that reads it:
//   scan     each row of op(A) and column of op(B): the power of two that puts its largest
//            entry just under 2^beta, its sum of magnitudes, and whether any entry is Inf or NaN;
//   split    the rows and columns as integers of at most beta bits (int32 for float; for double
//            up to 2^62, in 21-bit chunks), and their residues modulo each of the t moduli as
//            int8, k-contiguous and padded with zeros to whole k-tiles; then a plane of their
//            magnitudes rounded down to 7 bits;
//   products one int8 GEMM per modulus (ozaki_wgmma.cuh, ozaki_int8.cuh), exact in int32, each
//            entry kept as its residue, a byte; then the magnitudes' product, whose epilogue is
//            the guard (ozaki_guard.cuh): it flags the entries whose error bound it certifies
//            within the precision's GEMM's, and counts the others;
//   crt      per certified entry, the integer from its t residues (Chinese remainder theorem,
//            exact, ozaki_crt.cuh), times the row's and column's powers of two, then alpha, beta
//            (and for SGEMM the rounding to float); the others summed as SGEMM or DGEMM does.
// SGEMM takes T_S = 8 moduli, DGEMM T_D - 1 = 15 or T_D = 16 (ozaki_moduli.cuh,
// fg_kernel_ozaki_moduli).
// crt writes C only where the status (kernels.h) accepts the call; elsewhere (inputs the scheme
// cannot carry, too many entries the guard does not certify) C stays untouched, and the caller,
// which reads the status back, has the SIMT (DMMA) kernels run the call instead.
#include "common/launch.cuh"
#include "kernels.h"
#include "ozaki_crt.cuh"
#include "ozaki_guard.cuh"
#include "ozaki_int8.cuh"
#include "ozaki_moduli.cuh"
#include "ozaki_passes.cuh"
#include "ozaki_wgmma.cuh"

#include <math.h>

namespace fg_ozaki {

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The scan's k-blocks: SCAN_K entries of every vector each.
int64_t scan_blocks(int64_t k) { return (k + SCAN_K - 1) / SCAN_K; }

// Parts of a workspace, each 256-byte aligned.
struct Layout {
    size_t total = 0;
    size_t take(size_t bytes)
    {
        const size_t at = total;
        total += (bytes + 255) / 256 * 256;
        return at;
    }
};

// A side (kernels.h): the exponents (the largest magnitudes' bits until exponents() converts
// them), the sums of magnitudes and their parts per k-block (summed in order: the same sums,
// and so the same guard's flags, on every run), then t + 1 planes of `stride` rows of kp bytes,
// and WG_BN rows more: a product whose vectors begin inside the side reads whole tiles, up to
// WG_BN - 1 rows past the side's last (mma.sync reads them; TMA reads zeros past its map).
struct SideParts {
    size_t e, sum, part, planes, total;
    int64_t stride, kp;
};
SideParts side_parts(int64_t count, int64_t k, int t)
{
    SideParts p;
    Layout l;
    p.stride = round_up(count, WG_BN), p.kp = round_up(k, WG_BK);
    p.e = l.take(sizeof(int) * (size_t)p.stride);
    p.sum = l.take(sizeof(double) * (size_t)p.stride);
    p.part = l.take(sizeof(double) * (size_t)(scan_blocks(k) * count));
    p.planes = l.take((size_t)((t + 1) * p.stride + WG_BN) * (size_t)p.kp);
    p.total = l.total;
    return p;
}

// A product's workspace: its status (kernels.h), the t residues of each entry of its m x n
// (padded to mp x np: whole tiles of both residue GEMMs, mp of WG_BN, np of WG_BM), and the
// guard's flags.
struct ProductParts {
    size_t status, prod, cert, total;
    int64_t mp, np;
};
ProductParts product_parts(int64_t m, int64_t n, int t)
{
    ProductParts p;
    Layout l;
    p.mp = round_up(m, WG_BN), p.np = round_up(n, WG_BM);
    p.status = l.take(sizeof(fg_ozaki_status));
    p.prod = l.take((size_t)t * (size_t)(p.mp * p.np));
    p.cert = l.take((size_t)(p.mp * p.np));
    p.total = l.total;
    return p;
}

// The largest beta with 2 k 2^(2 beta) < M: at most 30 for float (the split's integers are
// int32), 62 for double (int64). M < 2^126 and k < 2^17 keep the shifts below 2^128.
int beta_for(int t, int64_t k, bool f64)
{
    const unsigned __int128 M = moduli_product(t);
    for (int b = f64 ? 62 : 30; b >= 1; b--)
        if (2 * b + 18 <= 128 && ((unsigned __int128)(2 * k) << (2 * b)) < M) return b;
    return -1;
}

// op(A)'s rows and op(B)'s columns as vectors along k: (sv, sp).
void a_strides(const fg_gemm_args *g, int64_t lda, int64_t *sv, int64_t *sp)
{
    const bool ta = g->ta != 'N';
    *sv = ta ? lda : 1, *sp = ta ? 1 : lda;
}
void b_strides(const fg_gemm_args *g, int64_t ldb, int64_t *sv, int64_t *sp)
{
    const bool tb = g->tb != 'N';
    *sv = tb ? 1 : ldb, *sp = tb ? ldb : 1;
}

} // namespace fg_ozaki

using namespace fg_ozaki;

// Any k below 2^17 (the int32 sums): the guard in the CRT pass holds every entry to SGEMM's
// (DGEMM's) error (ozaki_guard.cuh). DGEMM takes 15 moduli where they give beta >= 51 (k up to
// about 28000; 8192 and 16384 measured), else 16 (beta 54): the guard, held to DGEMM's typical
// error, certifies uniform and normal inputs at beta 51 with room, and leaves inputs with wider
// exponents within rows and columns to the double sums or the DMMA kernels
// (perf/notes/tensor-core-sgemm.md).
int fg_kernel_ozaki_moduli(int64_t k, int f64)
{
    if (k >= ((int64_t)1 << 17)) return 0;
    if (!f64) return beta_for(T_S, k, false) >= 1 ? T_S : 0;
    return beta_for(T_D - 1, k, true) >= 51 ? T_D - 1 : beta_for(T_D, k, true) >= 1 ? T_D : 0;
}

// SGEMM: the bounds come from random problems of at least 1 GFLOP on the H200 (perf/notes/
// tensor-core-sgemm.md): below k = 3072 the scheme lost to the SIMT kernels on most problems,
// and with m or n below 512 (whose padding to whole tiles wastes much of the residue GEMMs) on
// some; from k = 2048 it won where m and n are both 1024 or more. Below 2^20 entries of C its
// 9 GEMMs have too few tiles to fill the GPU in whole waves (each tile runs all of k, with no
// split), and it lost at m, n near 600 even with deep k.
// DGEMM: the passes' time relative to the residue GEMMs', 640 / k (crt, per entry of C) + 400 / m
// + 400 / n (the split, per entry of A and B), from their kernel times at 8192^3 on the H200,
// below 0.20, where the scheme beat the DMMA kernels on every problem of three seeds' random
// shapes (perf/notes/tensor-core-sgemm.md, seventh session); the DMMA kernels run about 1.26
// times the residue GEMMs' time.
int fg_kernel_ozaki_pays(const fg_gemm_args *g)
{
    if (g->dt == FG_F64) return 640.0 / g->k + 400.0 / g->m + 400.0 / g->n < 0.20;
    if (g->m * g->n < ((int64_t)1 << 20)) return 0;
    return (g->k >= 3072 && g->m >= 512 && g->n >= 512) || (g->k >= 2048 && g->m >= 1024 && g->n >= 1024);
}

size_t fg_kernel_ozaki_side_bytes(int64_t count, int64_t k, int t) { return side_parts(count, k, t).total; }

fg_ozaki_side fg_kernel_ozaki_side(void *mem, int64_t count, int64_t k, int t, int f64)
{
    const SideParts p = side_parts(count, k, t);
    char *w = static_cast<char *>(mem);
    fg_ozaki_side side;
    side.planes = reinterpret_cast<int8_t *>(w + p.planes);
    side.stride = p.stride, side.kp = p.kp, side.k = k;
    side.e = reinterpret_cast<int *>(w + p.e);
    side.sum = reinterpret_cast<double *>(w + p.sum);
    side.part = reinterpret_cast<double *>(w + p.part);
    side.t = t, side.beta = beta_for(t, k, f64), side.f64 = f64;
    return side;
}

namespace {
// The scan, the exponents and the split of x's vectors [0, count) into the side's [v0, v0 +
// count); the largest magnitudes wait in e's memory (float) or sum's (double) until exponents.
template <class T, int TMAX>
cudaError_t prepare(const fg_ozaki_side *side, int64_t v0, int64_t count, const T *x, int64_t sv, int64_t sp,
                    unsigned *inputs, cudaStream_t s)
{
    using Bits = typename Precision<T>::Bits;
    const int64_t k = side->k, blocks = scan_blocks(k);
    Bits *amax = sizeof(Bits) == sizeof(int) ? reinterpret_cast<Bits *>(side->e + v0)
                                             : reinterpret_cast<Bits *>(side->sum + v0);
    double *part = side->part + v0 * blocks;
    cudaError_t err = cudaMemsetAsync(amax, 0, sizeof(Bits) * (size_t)count, s);
    if (err != cudaSuccess) return err;
    scan<T><<<dim3((unsigned)((count + 63) / 64), (unsigned)blocks), 256, 0, s>>>(x, sv, sp, count, k, amax, part,
                                                                                  inputs);
    exponents<T><<<(unsigned)((count + 255) / 256), 256, 0, s>>>(amax, side->e + v0, part, blocks, side->sum + v0,
                                                                 count, side->beta);
    split<T, TMAX><<<dim3((unsigned)(side->kp / 64), (unsigned)((count + 63) / 64)), 256, 0, s>>>(
        x, sv, sp, count, k, side->e + v0, side->t, side->beta, side->planes + v0 * side->kp, side->kp,
        side->stride * side->kp);
    return cudaGetLastError();
}
} // namespace

cudaError_t fg_kernel_ozaki_prepare(const fg_ozaki_side *side, int64_t v0, int64_t count, const void *x, int64_t ld,
                                    int k_contiguous, unsigned *inputs, cudaStream_t s)
{
    const int64_t sv = k_contiguous ? ld : 1, sp = k_contiguous ? 1 : ld;
    return side->f64 ? prepare<double, T_D>(side, v0, count, static_cast<const double *>(x), sv, sp, inputs, s)
                     : prepare<float, T_S>(side, v0, count, static_cast<const float *>(x), sv, sp, inputs, s);
}

size_t fg_kernel_ozaki_ws(int64_t m, int64_t n, int t) { return product_parts(m, n, t).total; }

cudaError_t fg_kernel_ozaki_multiply(const fg_gemm_args *g, const fg_ozaki_side *sa, int64_t a0,
                                     const fg_ozaki_side *sb, int64_t b0, const unsigned *inputs, const void *a,
                                     int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc, void *ws,
                                     cudaStream_t s)
{
    const int t = sa->t;
    const bool f64 = g->dt == FG_F64;
    if ((f64 ? t != T_D - 1 && t != T_D : t != T_S) || sb->t != t || sa->f64 != f64 || sb->f64 != f64 ||
        sa->k != g->k || sb->k != g->k)
        return cudaErrorInvalidValue; // crt takes these (fg_kernel_ozaki_moduli)
    const ProductParts p = product_parts(g->m, g->n, t);
    char *w = static_cast<char *>(ws);
    fg_ozaki_status *status = reinterpret_cast<fg_ozaki_status *>(w + p.status);
    cudaError_t err = cudaMemsetAsync(status, 0, sizeof *status, s);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(&status->inputs, inputs, sizeof *inputs, cudaMemcpyDeviceToDevice, s);
    if (err != cudaSuccess) return err;
    uint8_t *prod = reinterpret_cast<uint8_t *>(w + p.prod), *cert = reinterpret_cast<uint8_t *>(w + p.cert);
    const int8_t *ra = sa->planes + a0 * sa->kp, *rb = sb->planes + b0 * sb->kp;
    const GuardArgs guard = {&status->inputs, sa->e + a0, sb->e + b0, sa->sum + a0, sb->sum + b0, cert,
                             &status->uncertified, g->m, g->n, g->k, p.mp, sa->beta, t,
                             guard_slack(g->k), guard_limit(g->k, f64)};
    // Out[j][i] = sum_p B'(j, p) A'(i, p): the products come out m-contiguous, as C is; t + 1
    // products, the last the magnitudes', whose epilogue is the guard's. Hopper: wgmma from
    // tensor maps over the sides' stacked planes, the residues' products in one persistent
    // launch, the magnitudes' in another; else, or where no map can be made, mma.sync.
    int dev = 0, major = 0;
    err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (err != cudaSuccess) return err;
    CUtensorMap mx, my;
    bool hopper = false;
#ifdef FG_OZAKI_WGMMA
    hopper = major == 9;
#endif
    if (hopper && fg_kern::tma_map(&mx, sb->planes, sb->kp, (t + 1) * sb->stride, sb->kp, 1, WG_BK, WG_BM, true) &&
        fg_kern::tma_map(&my, sa->planes, sa->kp, (t + 1) * sa->stride, sa->kp, 1, WG_BK, WG_BN, true)) {
        static fg_kern::SmemAsked asked[4]; // per kernel
        auto residues = f64 ? int8_gemm_wgmma<T_D, false> : int8_gemm_wgmma<T_S, false>;
        auto magnitudes = f64 ? int8_gemm_wgmma<T_D, true> : int8_gemm_wgmma<T_S, true>;
        int sms = 0;
        err = fg_kern::allow_smem(residues, asked[f64], WG_SMEM);
        if (err == cudaSuccess) err = fg_kern::allow_smem(magnitudes, asked[2 + f64], WG_SMEM);
        if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (err != cudaSuccess) return err;
        const int tiles_x = (int)(p.mp / WG_BN), tiles_y = (int)(p.np / WG_BM), tiles = tiles_x * tiles_y;
        residues<<<(unsigned)(t * tiles < sms ? t * tiles : sms), WG_THREADS, WG_SMEM, s>>>(
            mx, my, prod, guard, sa->kp, p.mp, sb->stride, b0, sa->stride, a0, p.mp * p.np, tiles_x, tiles_y, 0, t,
            &status->next_tile);
        magnitudes<<<(unsigned)tiles, WG_THREADS, WG_SMEM, s>>>(mx, my, prod, guard, sa->kp, p.mp, sb->stride, b0,
                                                                sa->stride, a0, p.mp * p.np, tiles_x, tiles_y, t, 1,
                                                                nullptr);
    } else {
        static fg_kern::SmemAsked asked[2];
        auto kernel = f64 ? int8_gemm<T_D> : int8_gemm<T_S>;
        err = fg_kern::allow_smem(kernel, asked[f64], GEMM_SMEM);
        if (err != cudaSuccess) return err;
        kernel<<<dim3((unsigned)(p.mp / TILE), (unsigned)(p.np / TILE), (unsigned)(t + 1)), THREADS, GEMM_SMEM, s>>>(
            rb, ra, prod, guard, sa->kp, p.mp, sb->stride * sb->kp, sa->stride * sa->kp, p.mp * p.np);
    }
    const unsigned rows = (unsigned)(g->n < 65535 ? g->n : 65535);
    const dim3 grid((unsigned)((g->m + 511) / 512), rows);
    if (f64) {
        static const Crt128 constants[2] = {crt_constants_d(T_D - 1), crt_constants_d(T_D)}; // for every call
        Operands<double> op = {static_cast<const double *>(a), static_cast<const double *>(b), 0, 0, 0, 0};
        a_strides(g, lda, &op.asv, &op.asp);
        b_strides(g, ldb, &op.bsv, &op.bsp);
        auto kernel = t == T_D ? crt<double, T_D, Crt128> : crt<double, T_D - 1, Crt128>;
        kernel<<<grid, 128, 0, s>>>(status, prod, p.mp, p.mp * p.np, constants[t == T_D], sa->e + a0, sb->e + b0, cert,
                                    op, g->m, g->n, g->k, g->alpha, g->beta, static_cast<double *>(c), ldc);
    } else {
        static const Crt constants = crt_constants();
        Operands<float> op = {static_cast<const float *>(a), static_cast<const float *>(b), 0, 0, 0, 0};
        a_strides(g, lda, &op.asv, &op.asp);
        b_strides(g, ldb, &op.bsv, &op.bsp);
        crt<float, T_S, Crt><<<grid, 128, 0, s>>>(status, prod, p.mp, p.mp * p.np, constants, sa->e + a0, sb->e + b0,
                                                  cert, op, g->m, g->n, g->k, (float)g->alpha, (float)g->beta,
                                                  static_cast<float *>(c), ldc);
    }
    return cudaGetLastError();
}
