/* omp_gemm.c: FASTGEMM_BACKEND=omp, a GEMM written with OpenMP target directives alone, for any
 * GPU an OpenMP compiler offloads to. Built into the module libfastgemm_omp.so by a compiler
 * with OpenMP offload (GCC: -fopenmp -foffload=nvptx-none), loaded by blas/omp_backend.c.
 *
 * The kernel: a team per 64x64 tile of C (teams as thread blocks), team-shared panels of op(A)
 * and op(B), and 256 workers (the team's threads and their SIMD lanes) each computing a 4x4
 * register tile of C; gemm_s/gemm_d below say how.
 * Operands on the device are used in place; host ones are copied to the device for the call
 * (C only when beta != 0), packed to their own rows. BLAS rules: beta = 0 never reads C,
 * alpha = 0 or k = 0 never reads A or B. */
#include "../blas/fg.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BM 64
#define BN 64
#define KC 32  /* the depth of the team-shared panels */
#define NW 256 /* workers per team: 16 x 16, each a 4x4 register tile of the 64x64 tile */

/* op(A)(i, l) and op(B)(l, j) of column-major A and B. */
#define OP_A(i, l) (at ? a[(l) + (i) * lda] : a[(i) + (l) * lda])
#define OP_B(l, j) (bt ? b[(j) + (l) * ldb] : b[(l) + (j) * ldb])

/* The team's threads split the 256 workers evenly, each thread's as SIMD lanes (GCC runs an
 * OpenMP thread of an NVIDIA GPU as a warp and its simd loops on the warp's 32 lanes: 8 threads
 * of 32 lanes). Per panel of KC along K, the threads copy a 64 x KC panel of op(A) and a KC x 64
 * panel of op(B) into the team-shared arrays (each operand read along its stored columns), and
 * each worker adds the panels' product to its 4x4 tile of C held in registers, then to C (the
 * first panel applies beta, and never reads C when beta = 0). A team whose thread count does not
 * divide 256 computes its tile element by element instead.
 * Offloaded by GCC 12 to an NVIDIA GPU, the tiled form gave wrong results (H200: every random
 * case wrong, 8 threads a team; perf/NOTES.md), so there it is not used yet: a GPU runs the
 * element-by-element form, which passes every suite. The host (OpenMP without a device) runs
 * the tiled form. */
#define DEFINE_OMP_GEMM(T, SUF)                                                                \
    static void scale_##SUF(int dev, int64_t m, int64_t n, T beta, T *c, int64_t ldc)          \
    {                                                                                          \
        _Pragma("omp target teams distribute parallel for collapse(2) device(dev) is_device_ptr(c)") \
        for (int64_t j = 0; j < n; j++)                                                        \
            for (int64_t i = 0; i < m; i++)                                                    \
                c[i + j * ldc] = beta == 0 ? (T)0 : beta * c[i + j * ldc];                     \
    }                                                                                          \
                                                                                               \
    /* C = alpha op(A) op(B) + beta C; returns the threads a team had. */                      \
    static int gemm_##SUF(int dev, int at, int bt, int64_t m, int64_t n, int64_t k, T alpha,   \
                          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,      \
                          int64_t ldc)                                                         \
    {                                                                                          \
        const int64_t tm = (m + BM - 1) / BM, tiles = tm * ((n + BN - 1) / BN);                \
        const int teams = tiles < 65535 ? (int)tiles : 65535;                                  \
        int team_threads = 0;                                                                  \
        _Pragma("omp target teams num_teams(teams) device(dev) is_device_ptr(a, b, c) map(from: team_threads)") \
        {                                                                                      \
            T as[KC][BM], bs[KC][BN]; /* shared by the team's threads */                      \
            _Pragma("omp distribute")                                                          \
            for (int64_t t = 0; t < tiles; t++) {                                              \
                const int64_t i0 = (t % tm) * BM, j0 = (t / tm) * BN;                          \
                _Pragma("omp parallel")                                                        \
                {                                                                              \
                    const int nth = omp_get_num_threads(), tid = omp_get_thread_num();         \
                    if (t == 0 && tid == 0) team_threads = nth;                                \
                    if (NW % nth == 0 && omp_is_initial_device()) {                            \
                        const int per = NW / nth, w0 = tid * per;                              \
                        for (int64_t k0 = 0; k0 < k; k0 += KC) {                               \
                            _Pragma("omp simd")                                                \
                            for (int e = w0; e < w0 + per; e++)                                \
                                for (int x = e; x < BM * KC; x += NW) {                        \
                                    /* consecutive workers, consecutive addresses */           \
                                    const int ii = at ? x / KC : x % BM, l = at ? x % KC : x / BM; \
                                    const int64_t gi = i0 + ii, gl = k0 + l;                   \
                                    as[l][ii] = gi < m && gl < k ? OP_A(gi, gl) : (T)0;        \
                                    const int jj = bt ? x % BN : x / KC, l2 = bt ? x / BN : x % KC; \
                                    const int64_t gj = j0 + jj, gl2 = k0 + l2;                 \
                                    bs[l2][jj] = gj < n && gl2 < k ? OP_B(gl2, gj) : (T)0;     \
                                }                                                              \
                            _Pragma("omp barrier")                                             \
                            _Pragma("omp simd")                                                \
                            for (int e = w0; e < w0 + per; e++) {                              \
                                const int tx = e % 16, ty = e / 16;                            \
                                T acc[4][4];                                                   \
                                for (int r = 0; r < 4; r++)                                    \
                                    for (int q = 0; q < 4; q++) acc[r][q] = 0;                 \
                                for (int l = 0; l < KC; l++) {                                 \
                                    T x[4], y[4];                                              \
                                    for (int r = 0; r < 4; r++) x[r] = as[l][tx + 16 * r];     \
                                    for (int q = 0; q < 4; q++) y[q] = bs[l][ty + 16 * q];     \
                                    for (int r = 0; r < 4; r++)                                \
                                        for (int q = 0; q < 4; q++) acc[r][q] += x[r] * y[q];  \
                                }                                                              \
                                for (int q = 0; q < 4; q++)                                    \
                                    for (int r = 0; r < 4; r++) {                              \
                                        const int64_t i = i0 + tx + 16 * r, j = j0 + ty + 16 * q; \
                                        if (i >= m || j >= n) continue;                        \
                                        T *p = &c[i + j * ldc];                                \
                                        if (k0 > 0) *p += alpha * acc[r][q];                   \
                                        else if (beta == 0) *p = alpha * acc[r][q];            \
                                        else *p = alpha * acc[r][q] + beta * *p;               \
                                    }                                                          \
                            }                                                                  \
                            _Pragma("omp barrier")                                             \
                        }                                                                      \
                    } else {                                                                   \
                        for (int e = tid; e < BM * BN; e += nth) {                             \
                            const int64_t i = i0 + e % BM, j = j0 + e / BM;                    \
                            if (i >= m || j >= n) continue;                                    \
                            T s = 0;                                                           \
                            for (int64_t l = 0; l < k; l++) s += OP_A(i, l) * OP_B(l, j);      \
                            T *p = &c[i + j * ldc];                                            \
                            *p = beta == 0 ? alpha * s : alpha * s + beta * *p;                \
                        }                                                                      \
                    }                                                                          \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return team_threads;                                                                   \
    }

DEFINE_OMP_GEMM(float, s)
DEFINE_OMP_GEMM(double, d)

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
    for (int64_t j = 0; j < n; j++)
        memcpy((char *)c + (size_t)(j * ldc) * es, (char *)packed + (size_t)(j * m) * es,
               (size_t)m * es);
    free(packed);
    return 0;
}

__attribute__((visibility("default"))) int fastgemm_omp_abi(void) { return FG_OMP_ABI; }

__attribute__((visibility("default"))) int
fastgemm_omp_gemm(const fg_gemm_args *g, int a_on_device, int b_on_device, int c_on_device,
                  int device, char *why, size_t whylen)
{
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
        if (reads_ab)
            threads = gemm_s(dev, at, bt, g->m, g->n, g->k, (float)g->alpha, a, lda, b, ldb,
                             (float)g->beta, c, ldc);
        else
            scale_s(dev, g->m, g->n, (float)g->beta, c, ldc);
    } else {
        if (reads_ab)
            threads = gemm_d(dev, at, bt, g->m, g->n, g->k, g->alpha, a, lda, b, ldb, g->beta, c, ldc);
        else
            scale_d(dev, g->m, g->n, g->beta, c, ldc);
    }
    if (copy_c && from_device(g->c, g->ldc, dc, g->m, g->n, es, dev, host) != 0) {
        snprintf(why, whylen, "copying C back from OpenMP device %d failed", dev);
        goto out;
    }
    rc = 0;
    char where[64] = "the host (no OpenMP device)";
    if (dev != host) snprintf(where, sizeof where, "device %d", dev);
    if (reads_ab) snprintf(why, whylen, "OpenMP target: %s, %d threads a team", where, threads);
    else snprintf(why, whylen, "OpenMP target: %s, C = beta*C", where);
out:
    if (da) omp_target_free(da, dev);
    if (db) omp_target_free(db, dev);
    if (dc) omp_target_free(dc, dev);
    return rc;
}
