/* omp_gemm.c: FASTGEMM_BACKEND=omp, a GEMM written with OpenMP target directives alone, for any
 * GPU an OpenMP compiler offloads to. Built into the module libfastgemm_omp.so by a compiler
 * with OpenMP offload (GCC: -fopenmp -foffload=nvptx-none), loaded by backends/omp/omp_backend.c.
 *
 * Two kernels (FASTGEMM_KERNEL picks one), both with a 4x4 tile of C in registers per worker:
 * - omp_direct (the default): `teams distribute parallel for simd` over the tiles, each SIMD
 *   lane one tile, its operands read from global memory through the caches.
 * - omp_team: teams as thread blocks, a team per 64x64 tile of C, 64-deep team-shared panels
 *   of op(A) and op(B), and 256 workers (the team's threads, each running its share as SIMD
 *   lanes) computing the register tiles from the panels.
 * GCC runs an OpenMP thread of an NVIDIA GPU as a warp and its simd loops on the warp's 32
 * lanes, and keeps a team's shared arrays in global memory (the soft stack: no .shared in the
 * PTX), so the team panels are a copy from global memory to global memory and omp_direct is
 * the faster with it (perf/RESULTS.md). omp_team is the form for a compiler that puts team
 * arrays on chip.
 * Operands on the device are used in place; host ones are copied to the device for the call
 * (C only when beta != 0), packed to their own rows. BLAS rules: beta = 0 never reads C,
 * alpha = 0 or k = 0 never reads A or B. */
#include "backends/backend.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BM 64 /* omp_team: the team's tile of C */
#define BN 64
#define KC 64  /* omp_team: the depth of the team-shared panels */
#define NW 256 /* omp_team: workers per team, 16 x 16 */

/* A worker's 4x4 tile of C as 16 named accumulators: GCC 12 computes wrong results with an
 * array private to a SIMD lane of an NVIDIA GPU (perf/NOTES.md). TILE_EACH(F) applies
 * F(r, q, accumulator) to each; TILE_FMA adds x y^T for x0..x3, y0..y3 in scope. */
#define TILE_DECL(T)                                                                           \
    T c00 = 0, c01 = 0, c02 = 0, c03 = 0, c10 = 0, c11 = 0, c12 = 0, c13 = 0, c20 = 0, c21 = 0, \
      c22 = 0, c23 = 0, c30 = 0, c31 = 0, c32 = 0, c33 = 0
#define TILE_ROW(F, r) F(r, 0, c##r##0) F(r, 1, c##r##1) F(r, 2, c##r##2) F(r, 3, c##r##3)
#define TILE_EACH(F) TILE_ROW(F, 0) TILE_ROW(F, 1) TILE_ROW(F, 2) TILE_ROW(F, 3)
#define FMA_XY(r, q, acc) acc += x##r * y##q;
#define TILE_FMA TILE_EACH(FMA_XY)

/* The stores of a tile: omp_direct's rows i0 + 32 r, columns j0 + q; omp_team's rows
 * i0 + tx + 16 r, columns j0 + ty + 16 q, added to C after the first panel. */
#define PUT_DIRECT(r, q, acc)                                                                  \
    if (i0 + 32 * r < m && j0 + q < n) {                                                       \
        const int64_t e = i0 + 32 * r + (j0 + q) * ldc;                                        \
        c[e] = beta == 0 ? alpha * acc : alpha * acc + beta * c[e];                            \
    }
#define PUT_TEAM(r, q, acc)                                                                    \
    if (i0 + tx + 16 * r < m && j0 + ty + 16 * q < n) {                                        \
        const int64_t e = i0 + tx + 16 * r + (j0 + ty + 16 * q) * ldc;                         \
        c[e] = k0 > 0 ? c[e] + alpha * acc : beta == 0 ? alpha * acc : alpha * acc + beta * c[e]; \
    }

#define DEFINE_OMP_GEMM(T, SUF)                                                                \
    static void scale_##SUF(int dev, int64_t m, int64_t n, T beta, T *c, int64_t ldc)          \
    {                                                                                          \
        _Pragma("omp target teams distribute parallel for collapse(2) device(dev) is_device_ptr(c)") \
        for (int64_t j = 0; j < n; j++)                                                        \
            for (int64_t i = 0; i < m; i++)                                                    \
                c[i + j * ldc] = beta == 0 ? (T)0 : beta * c[i + j * ldc];                     \
    }                                                                                          \
                                                                                               \
    /* omp_direct: C = alpha op(A) op(B) + beta C, where lane w of a 128 x 4 block of C        \
     * computes its rows w + 32 r (r < 4) in the block's 4 columns, so that a warp reads 32    \
     * consecutive rows of A. Rows and columns past the edges read the last one (no tests in   \
     * the loop) and are not stored. Returns the threads a team had. */                        \
    static int direct_##SUF(int dev, int at, int bt, int64_t m, int64_t n, int64_t k, T alpha, \
                            const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,    \
                            int64_t ldc)                                                       \
    {                                                                                          \
        const int64_t rb = (m + 127) / 128 * 32, items = rb * ((n + 3) / 4);                   \
        const int64_t ai = at ? lda : 1, al = at ? 1 : lda; /* op(A)(i, l): a[i ai + l al] */  \
        const int64_t bl = bt ? ldb : 1, bj = bt ? 1 : ldb; /* op(B)(l, j): b[l bl + j bj] */  \
        int threads = 0;                                                                       \
        _Pragma("omp target teams distribute parallel for simd thread_limit(256) device(dev) is_device_ptr(a, b, c) map(from: threads)") \
        for (int64_t it = 0; it < items; it++) {                                               \
            const int64_t i0 = (it % rb) / 32 * 128 + it % 32, j0 = it / rb * 4;              \
            const T *a0 = a + (i0 < m ? i0 : m - 1) * ai;                                      \
            const T *a1 = a + (i0 + 32 < m ? i0 + 32 : m - 1) * ai;                            \
            const T *a2 = a + (i0 + 64 < m ? i0 + 64 : m - 1) * ai;                            \
            const T *a3 = a + (i0 + 96 < m ? i0 + 96 : m - 1) * ai;                            \
            const T *b0 = b + (j0 < n ? j0 : n - 1) * bj;                                      \
            const T *b1 = b + (j0 + 1 < n ? j0 + 1 : n - 1) * bj;                              \
            const T *b2 = b + (j0 + 2 < n ? j0 + 2 : n - 1) * bj;                              \
            const T *b3 = b + (j0 + 3 < n ? j0 + 3 : n - 1) * bj;                              \
            TILE_DECL(T);                                                                      \
            for (int64_t l = 0; l < k; l++) {                                                  \
                const int64_t oa = l * al, ob = l * bl;                                        \
                const T x0 = a0[oa], x1 = a1[oa], x2 = a2[oa], x3 = a3[oa];                    \
                const T y0 = b0[ob], y1 = b1[ob], y2 = b2[ob], y3 = b3[ob];                    \
                TILE_FMA                                                                       \
            }                                                                                  \
            TILE_EACH(PUT_DIRECT)                                                              \
            if (it == 0) threads = omp_get_num_threads();                                      \
        }                                                                                      \
        return threads;                                                                        \
    }                                                                                          \
                                                                                               \
    /* omp_team: per panel of KC along K, each thread copies its share of the 64 x KC panel of \
     * op(A) and the KC x 64 panel of op(B) (each operand read along its stored columns) into  \
     * the team arrays as SIMD lanes; after a barrier each worker adds the panels' product to  \
     * its tile of C: rows tx + 16 r, columns ty + 16 q. The lanes' accumulators do not        \
     * outlive a simd loop, nor can a barrier be inside one, so C is updated per panel (the    \
     * first applies beta, and never reads C when beta = 0). Returns the threads a team had. */ \
    static int team_##SUF(int dev, int at, int bt, int64_t m, int64_t n, int64_t k, T alpha,   \
                          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,      \
                          int64_t ldc)                                                         \
    {                                                                                          \
        const int64_t tm = (m + BM - 1) / BM, tiles = tm * ((n + BN - 1) / BN);                \
        const int teams = tiles < 65535 ? (int)tiles : 65535;                                  \
        int threads = 0;                                                                       \
        _Pragma("omp target teams num_teams(teams) device(dev) is_device_ptr(a, b, c) map(from: threads)") \
        {                                                                                      \
            T as[KC * BM], bs[KC * BN]; /* shared by the team's threads */                    \
            _Pragma("omp distribute")                                                          \
            for (int64_t t = 0; t < tiles; t++) {                                              \
                const int64_t i0 = (t % tm) * BM, j0 = (t / tm) * BN;                          \
                _Pragma("omp parallel")                                                        \
                {                                                                              \
                    const int nth = omp_get_num_threads(), tid = omp_get_thread_num();         \
                    if (t == 0 && tid == 0) threads = nth;                                     \
                    /* a contiguous share of the panel elements and of the workers each */     \
                    const int xs = (BM * KC + nth - 1) / nth, x0 = tid * xs;                   \
                    const int x1 = x0 + xs < BM * KC ? x0 + xs : BM * KC;                      \
                    const int ws = (NW + nth - 1) / nth, w0 = tid * ws;                        \
                    const int w1 = w0 + ws < NW ? w0 + ws : NW;                                \
                    for (int64_t k0 = 0; k0 < k; k0 += KC) {                                   \
                        _Pragma("omp simd")                                                    \
                        for (int x = x0; x < x1; x++) { /* consecutive lanes, addresses */     \
                            const int ii = at ? x / KC : x % BM, la = at ? x % KC : x / BM;    \
                            const int64_t gi = i0 + ii, gla = k0 + la;                         \
                            as[la * BM + ii] = gi < m && gla < k                               \
                                ? a[at ? gla + gi * lda : gi + gla * lda] : (T)0;              \
                            const int jj = bt ? x % BN : x / KC, lb = bt ? x / BN : x % KC;    \
                            const int64_t gj = j0 + jj, glb = k0 + lb;                         \
                            bs[lb * BN + jj] = gj < n && glb < k                               \
                                ? b[bt ? gj + glb * ldb : glb + gj * ldb] : (T)0;              \
                        }                                                                      \
                        _Pragma("omp barrier")                                                 \
                        _Pragma("omp simd")                                                    \
                        for (int w = w0; w < w1; w++) {                                        \
                            const int tx = w % 16, ty = w / 16;                                \
                            const T *pa = as + tx, *pb = bs + ty;                              \
                            TILE_DECL(T);                                                      \
                            for (int l = 0; l < KC; l++, pa += BM, pb += BN) {                 \
                                const T x0 = pa[0], x1 = pa[16], x2 = pa[32], x3 = pa[48];     \
                                const T y0 = pb[0], y1 = pb[16], y2 = pb[32], y3 = pb[48];     \
                                TILE_FMA                                                       \
                            }                                                                  \
                            TILE_EACH(PUT_TEAM)                                                \
                        }                                                                      \
                        _Pragma("omp barrier")                                                 \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return threads;                                                                        \
    }

DEFINE_OMP_GEMM(float, s)
DEFINE_OMP_GEMM(double, d)

/* Packing a host matrix for the device (and unpacking C) is split among the host's OpenMP
 * threads from this size on (inside a caller's parallel region OpenMP runs it on one thread). */
#define PACK_PARALLEL ((size_t)4 << 20)

/* A rows x cols host matrix (leading dimension ld) in new memory of device dev, packed to
 * leading dimension rows; NULL when that memory cannot be had. */
static void *to_device(const void *h, int64_t rows, int64_t cols, int64_t ld, size_t es, int dev,
                       int host)
{
    const size_t bytes = (size_t)(rows * cols) * es;
    void *d = omp_target_alloc(bytes ? bytes : es, dev), *packed = NULL;
    const void *src = h;
    if (!d) return NULL;
    if (ld != rows) {
        if (!(packed = malloc(bytes))) goto fail;
#pragma omp parallel for if (bytes >= PACK_PARALLEL)
        for (int64_t j = 0; j < cols; j++)
            memcpy((char *)packed + (size_t)(j * rows) * es, (const char *)h + (size_t)(j * ld) * es,
                   (size_t)rows * es);
        src = packed;
    }
    if (omp_target_memcpy(d, src, bytes, 0, 0, dev, host) != 0) goto fail;
    free(packed);
    return d;
fail:
    free(packed);
    omp_target_free(d, dev);
    return NULL;
}

/* Copies the packed m x n result back into C (leading dimension ldc): its rows alone. */
static int from_device(void *c, int64_t ldc, const void *d, int64_t m, int64_t n, size_t es,
                       int dev, int host)
{
    const size_t bytes = (size_t)(m * n) * es;
    if (ldc == m) return omp_target_memcpy(c, d, bytes, 0, 0, host, dev);
    void *packed = malloc(bytes);
    if (!packed || omp_target_memcpy(packed, d, bytes, 0, 0, host, dev) != 0) {
        free(packed);
        return -1;
    }
#pragma omp parallel for if (bytes >= PACK_PARALLEL)
    for (int64_t j = 0; j < n; j++)
        memcpy((char *)c + (size_t)(j * ldc) * es, (char *)packed + (size_t)(j * m) * es,
               (size_t)m * es);
    free(packed);
    return 0;
}

__attribute__((visibility("default"))) int fastgemm_omp_abi(void) { return FG_OMP_ABI; }

__attribute__((visibility("default"))) int
fastgemm_omp_gemm(const fg_gemm_args *g, int a_on_device, int b_on_device, int c_on_device,
                  int device, const char *kernel, char *why, size_t whylen)
{
    const int team = kernel && !strcmp(kernel, "omp_team");
    if (kernel && !team && strcmp(kernel, "omp_direct") != 0) {
        snprintf(why, whylen, "FASTGEMM_KERNEL='%s' is no kernel of the OpenMP backend "
                 "(omp_direct, omp_team)", kernel);
        return -3;
    }
    const int host = omp_get_initial_device(), ndev = omp_get_num_devices();
    const int reads_ab = fg_reads_ab(g), at = g->ta != 'N', bt = g->tb != 'N';
    const size_t es = fg_elem_size(g->dt);
    int dev = device >= 0 ? device : omp_get_default_device();
    if (dev < 0 || dev >= ndev) { /* OpenMP's own rule: no such device, the host runs it */
        if ((reads_ab && (a_on_device || b_on_device)) || c_on_device) {
            snprintf(why, whylen, "OpenMP has no device %d for the device operands", dev);
            return -1;
        }
        dev = host;
    }
    /* On the host every operand is used in place; on a device, the host ones are copied. */
    const int copy_a = dev != host && reads_ab && !a_on_device;
    const int copy_b = dev != host && reads_ab && !b_on_device;
    const int copy_c = dev != host && !c_on_device;
    const void *a = g->a, *b = g->b;
    void *c = g->c;
    int64_t lda = g->lda, ldb = g->ldb, ldc = g->ldc;
    void *da = NULL, *db = NULL, *dc = NULL;
    int rc = -1, threads = 0;
    snprintf(why, whylen, "out of OpenMP device memory");
    if (copy_a) {
        if (!(da = to_device(a, fg_rows_a(g), fg_cols_a(g), lda, es, dev, host))) goto out;
        a = da, lda = fg_rows_a(g);
    }
    if (copy_b) {
        if (!(db = to_device(b, fg_rows_b(g), fg_cols_b(g), ldb, es, dev, host))) goto out;
        b = db, ldb = fg_rows_b(g);
    }
    if (copy_c) {
        dc = g->beta != 0 ? to_device(c, g->m, g->n, ldc, es, dev, host)
                          : omp_target_alloc((size_t)(g->m * g->n) * es, dev);
        if (!dc) goto out;
        c = dc, ldc = g->m;
    }
    if (g->dt == FG_F32) {
        const float alpha = (float)g->alpha, beta = (float)g->beta;
        if (!reads_ab) scale_s(dev, g->m, g->n, beta, c, ldc);
        else threads = (team ? team_s : direct_s)(dev, at, bt, g->m, g->n, g->k, alpha, a, lda,
                                                  b, ldb, beta, c, ldc);
    } else {
        if (!reads_ab) scale_d(dev, g->m, g->n, g->beta, c, ldc);
        else threads = (team ? team_d : direct_d)(dev, at, bt, g->m, g->n, g->k, g->alpha, a,
                                                  lda, b, ldb, g->beta, c, ldc);
    }
    if (copy_c && from_device(g->c, g->ldc, dc, g->m, g->n, es, dev, host) != 0) {
        snprintf(why, whylen, "copying C back from OpenMP device %d failed", dev);
        goto out;
    }
    rc = 0;
    char where[64] = "the host (no OpenMP device)";
    if (dev != host) snprintf(where, sizeof where, "device %d", dev);
    if (reads_ab)
        snprintf(why, whylen, "OpenMP target: %s, %s, %d threads a team", where,
                 team ? "omp_team" : "omp_direct", threads);
    else snprintf(why, whylen, "OpenMP target: %s, C = beta*C", where);
out:
    if (da) omp_target_free(da, dev);
    if (db) omp_target_free(db, dev);
    if (dc) omp_target_free(dc, dev);
    return rc;
}
