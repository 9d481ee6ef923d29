/* omp_gemm.c: FASTGEMM_BACKEND=omp, a GEMM written with OpenMP target directives alone, for any
 * GPU an OpenMP compiler offloads to. Built into the module libfastgemm_omp.so by a compiler
 * with OpenMP offload (GCC: -fopenmp -foffload=nvptx-none), loaded by blas/omp_backend.c.
 *
 * The kernel: a team per 64x64 tile of C (teams as thread blocks); per step of 16 along K the
 * team's 256 threads copy a 64x16 tile of op(A) and a 16x64 tile of op(B) into team-shared
 * arrays (each operand read along its stored columns, whatever its transpose), then each thread
 * accumulates a 4x4 register tile of C from them. A team given another number of threads
 * computes its tile element by element instead. GCC runs an OpenMP thread of an NVIDIA GPU as
 * a warp (its lanes serve simd loops), and gives a team 8 of them: on a GPU the element-by-
 * element form runs today; the host (OpenMP without a device) runs the tiled one. perf/NOTES.md
 * has the measurements and the step tried next.
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
#define BK 16
#define NT 256 /* threads per team: 16 x 16, each a 4x4 tile of the 64x64 tile */

/* op(A)(i, l) and op(B)(l, j) of column-major A and B. */
#define OP_A(i, l) (at ? a[(l) + (i) * lda] : a[(i) + (l) * lda])
#define OP_B(l, j) (bt ? b[(j) + (l) * ldb] : b[(l) + (j) * ldb])

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
        _Pragma("omp target teams num_teams(teams) thread_limit(NT) device(dev) is_device_ptr(a, b, c) map(from: team_threads)") \
        {                                                                                      \
            T as[BK][BM], bs[BK][BN]; /* shared by the team's threads */                      \
            _Pragma("omp distribute")                                                          \
            for (int64_t t = 0; t < tiles; t++) {                                              \
                const int64_t i0 = (t % tm) * BM, j0 = (t / tm) * BN;                          \
                _Pragma("omp parallel num_threads(NT)")                                        \
                {                                                                              \
                    const int nth = omp_get_num_threads(), tid = omp_get_thread_num();         \
                    if (t == 0 && tid == 0) team_threads = nth;                                \
                    if (nth == NT) {                                                           \
                        const int tx = tid % 16, ty = tid / 16;                                \
                        T acc[4][4];                                                           \
                        for (int r = 0; r < 4; r++)                                            \
                            for (int q = 0; q < 4; q++) acc[r][q] = 0;                         \
                        for (int64_t k0 = 0; k0 < k; k0 += BK) {                               \
                            for (int e = tid; e < BM * BK; e += NT) {                          \
                                /* consecutive threads, consecutive addresses */               \
                                const int ii = at ? e / BK : e % BM, l = at ? e % BK : e / BM; \
                                const int64_t gi = i0 + ii, gl = k0 + l;                       \
                                as[l][ii] = gi < m && gl < k ? OP_A(gi, gl) : (T)0;            \
                            }                                                                  \
                            for (int e = tid; e < BK * BN; e += NT) {                          \
                                const int jj = bt ? e % BN : e / BK, l = bt ? e / BN : e % BK; \
                                const int64_t gj = j0 + jj, gl = k0 + l;                       \
                                bs[l][jj] = gj < n && gl < k ? OP_B(gl, gj) : (T)0;            \
                            }                                                                  \
                            _Pragma("omp barrier")                                             \
                            for (int l = 0; l < BK; l++) {                                     \
                                T x[4], y[4];                                                  \
                                for (int r = 0; r < 4; r++) x[r] = as[l][tx + 16 * r];         \
                                for (int q = 0; q < 4; q++) y[q] = bs[l][ty + 16 * q];         \
                                for (int r = 0; r < 4; r++)                                    \
                                    for (int q = 0; q < 4; q++) acc[r][q] += x[r] * y[q];      \
                            }                                                                  \
                            _Pragma("omp barrier")                                             \
                        }                                                                      \
                        for (int q = 0; q < 4; q++)                                            \
                            for (int r = 0; r < 4; r++) {                                      \
                                const int64_t i = i0 + tx + 16 * r, j = j0 + ty + 16 * q;      \
                                if (i < m && j < n) {                                          \
                                    T *p = &c[i + j * ldc];                                    \
                                    *p = beta == 0 ? alpha * acc[r][q]                         \
                                                   : alpha * acc[r][q] + beta * *p;            \
                                }                                                              \
                            }                                                                  \
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
