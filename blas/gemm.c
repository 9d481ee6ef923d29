/* gemm.c: the ABI layer. sgemm_/dgemm_ (gfortran ABI), the ILP64 sgemm_64_/dgemm_64_,
 * cblas_sgemm/cblas_dgemm and their ILP64 cblas_*gemm64_, the names of pip's NumPy and SciPy
 * wheels (scipy_*), and fastgemm_sgemm/dgemm: each checks its arguments in netlib order and
 * hands a column-major request to the dispatcher (core/dispatch.c). An invalid call goes to the
 * program's own BLAS, the next definition of the same name, so that the program sees that
 * BLAS's message and exit behaviour, as without libfastgemm; where there is none, it is
 * reported the way its convention says (xerbla.c). */
#define _GNU_SOURCE
#include "common/fg.h"
#include "core/dispatch.h"

#include <fastgemm.h>

#include <dlfcn.h>

/* Error handlers: the application's own definitions take precedence (see xerbla.c). */
void xerbla_(const char *srname, const int *info, size_t len);
void xerbla_64_(const char *srname, const int64_t *info, size_t len);
void cblas_xerbla(int info, const char *rout, const char *form, ...);
FG_HIDDEN extern _Thread_local int fg_cblas_row_major; /* for our default cblas_xerbla */

static char upper(char c) { return (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c; }

static char norm_trans(char t) { return upper(t) == 'N' ? 'N' : 'T'; }

/* The checks of the reference SGEMM, in its order; the value is the argument's position. */
static int check_args(char ta, char tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                  int64_t ldc)
{
    ta = upper(ta);
    tb = upper(tb);
    int64_t nrowa = ta == 'N' ? m : k;
    int64_t nrowb = tb == 'N' ? k : n;
    if (ta != 'N' && ta != 'T' && ta != 'C') return 1;
    if (tb != 'N' && tb != 'T' && tb != 'C') return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (k < 0) return 5;
    if (lda < (nrowa > 1 ? nrowa : 1)) return 8;
    if (ldb < (nrowb > 1 ? nrowb : 1)) return 10;
    if (ldc < (m > 1 ? m : 1)) return 13;
    return 0;
}

/* Fortran ABI: every argument by reference, the lengths of the two CHARACTER arguments last. */
#define FG_F77_GEMM(NAME, SRNAME, T, INT, DT, XERBLA, ABI)                                        \
    FG_EXPORT void NAME(const char *ta, const char *tb, const INT *m, const INT *n, const INT *k, \
                        const T *alpha, const T *a, const INT *lda, const T *b, const INT *ldb,  \
                        const T *beta, T *c, const INT *ldc, size_t lta, size_t ltb)             \
    {                                                                                            \
        int info = check_args(*ta, *tb, *m, *n, *k, *lda, *ldb, *ldc);                           \
        if (info) {                                                                              \
            fg_gemm_rejected();                                                                  \
            void (*next)(const char *, const char *, const INT *, const INT *, const INT *,      \
                         const T *, const T *, const INT *, const T *, const INT *, const T *,   \
                         T *, const INT *, size_t, size_t) = fg_next_symbol(#NAME, NULL);        \
            if (next) {                                                                          \
                next(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, lta, ltb);            \
            } else {                                                                             \
                INT i = info;                                                                    \
                XERBLA(SRNAME, &i, 6);                                                           \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        fg_gemm_args g = {DT,   norm_trans(*ta), norm_trans(*tb), *m, *n, *k, *lda, *ldb,        \
                          *ldc, *alpha, *beta, a, b, c, #NAME, ABI};                             \
        fg_gemm(&g);                                                                             \
    }

FG_F77_GEMM(sgemm_, "SGEMM ", float, int, FG_F32, xerbla_, FG_ABI_BLAS)
FG_F77_GEMM(dgemm_, "DGEMM ", double, int, FG_F64, xerbla_, FG_ABI_BLAS)
FG_F77_GEMM(sgemm_64_, "SGEMM ", float, int64_t, FG_F32, xerbla_64_, FG_ABI_BLAS)
FG_F77_GEMM(dgemm_64_, "DGEMM ", double, int64_t, FG_F64, xerbla_64_, FG_ABI_BLAS)
FG_F77_GEMM(scipy_sgemm_, "SGEMM ", float, int, FG_F32, xerbla_, FG_ABI_SCIPY)
FG_F77_GEMM(scipy_dgemm_, "DGEMM ", double, int, FG_F64, xerbla_, FG_ABI_SCIPY)
FG_F77_GEMM(scipy_sgemm_64_, "SGEMM ", float, int64_t, FG_F32, xerbla_64_, FG_ABI_SCIPY64)
FG_F77_GEMM(scipy_dgemm_64_, "DGEMM ", double, int64_t, FG_F64, xerbla_64_, FG_ABI_SCIPY64)

/* CBLAS. Values of the reference cblas.h enums. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_COL_MAJOR = 102 };
enum { CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112, CBLAS_CONJ_TRANS = 113 };

/* The reference CBLAS's flag for its cblas_xerbla, if the process has one: set as the reference
 * cblas_sgemm sets it, so that a cblas_xerbla of the program's maps row-major positions back. */
static void set_row_major_strg(int row)
{
    int *flag = dlsym(RTLD_DEFAULT, "RowMajorStrg");
    if (flag) *flag = row;
}

static char cblas_trans(int t)
{
    return t == CBLAS_NO_TRANS ? 'N' : (t == CBLAS_TRANS || t == CBLAS_CONJ_TRANS) ? 'T' : 0;
}

/* As the reference CBLAS: layout is argument 1, TransA 2, TransB 3; the rest is checked on the
 * column-major problem the call becomes (A and B, M and N swapped for row-major) and reported as
 * its Fortran position + 1. Returns 0 and fills *g, or the position of the bad argument. */
static int cblas_request(fg_gemm_args *g, int layout, int transa, int transb)
{
    char ta = cblas_trans(transa), tb = cblas_trans(transb);
    if (layout == CBLAS_ROW_MAJOR) {
        fg_gemm_args col = *g;
        col.ta = tb, col.tb = ta, col.m = g->n, col.n = g->m, col.lda = g->ldb, col.ldb = g->lda;
        col.a = g->b, col.b = g->a;
        *g = col;
    } else {
        g->ta = ta, g->tb = tb;
    }
    if (layout != CBLAS_ROW_MAJOR && layout != CBLAS_COL_MAJOR) return 1;
    if (!ta) return 2;
    if (!tb) return 3;
    int info = check_args(g->ta, g->tb, g->m, g->n, g->k, g->lda, g->ldb, g->ldc);
    return info ? info + 1 : 0;
}

/* An invalid CBLAS call with no BLAS of the program's own to take it: cblas_xerbla, as the
 * reference reports it (cblas_xerbla turns the positions back for a row-major caller, from the
 * reference's RowMajorStrg, which is set as the reference sets it). */
static void cblas_report(int info, const char *rout, int layout, int transa, int transb)
{
    fg_cblas_row_major = layout == CBLAS_ROW_MAJOR;
    set_row_major_strg(fg_cblas_row_major);
    if (info == 1) cblas_xerbla(1, rout, "Illegal layout setting, %d\n", layout);
    else if (info == 2) cblas_xerbla(2, rout, "Illegal TransA setting, %d\n", transa);
    else if (info == 3) cblas_xerbla(3, rout, "Illegal TransB setting, %d\n", transb);
    else cblas_xerbla(info, rout, "");
    fg_cblas_row_major = 0;
    set_row_major_strg(0);
}

#define FG_CBLAS_GEMM(NAME, T, INT, DT, ABI)                                                    \
    FG_EXPORT void NAME(int layout, int transa, int transb, const INT m, const INT n,          \
                        const INT k, const T alpha, const T *a, const INT lda, const T *b,     \
                        const INT ldb, const T beta, T *c, const INT ldc)                      \
    {                                                                                          \
        fg_gemm_args g = {DT, 0, 0, m, n, k, lda, ldb, ldc, alpha, beta, a, b, c, #NAME, ABI}; \
        int info = cblas_request(&g, layout, transa, transb);                                  \
        if (!info) {                                                                           \
            fg_gemm(&g);                                                                       \
            return;                                                                            \
        }                                                                                      \
        fg_gemm_rejected();                                                                    \
        void (*next)(int, int, int, const INT, const INT, const INT, const T, const T *,       \
                     const INT, const T *, const INT, const T, T *, const INT) =               \
            fg_next_symbol(#NAME, NULL);                                                       \
        if (next) next(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);  \
        else cblas_report(info, #NAME, layout, transa, transb);                                \
    }

FG_CBLAS_GEMM(cblas_sgemm, float, int, FG_F32, FG_ABI_BLAS)
FG_CBLAS_GEMM(cblas_dgemm, double, int, FG_F64, FG_ABI_BLAS)
FG_CBLAS_GEMM(cblas_sgemm64_, float, int64_t, FG_F32, FG_ABI_BLAS)
FG_CBLAS_GEMM(cblas_dgemm64_, double, int64_t, FG_F64, FG_ABI_BLAS)
FG_CBLAS_GEMM(scipy_cblas_sgemm, float, int, FG_F32, FG_ABI_SCIPY)
FG_CBLAS_GEMM(scipy_cblas_dgemm, double, int, FG_F64, FG_ABI_SCIPY)
FG_CBLAS_GEMM(scipy_cblas_sgemm64_, float, int64_t, FG_F32, FG_ABI_SCIPY64)
FG_CBLAS_GEMM(scipy_cblas_dgemm64_, double, int64_t, FG_F64, FG_ABI_SCIPY64)

/* The C API: 64-bit sizes, a status instead of xerbla. */
static int c_gemm(fg_dtype dt, const char *name, void *stream, int async, fastgemm_op ta,
                  fastgemm_op tb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                  int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc)
{
    /* An enum outside the char range is no valid transpose: map it to a character that fails. */
    char cta = (ta == 'N' || ta == 'T' || ta == 'C' || ta == 'n' || ta == 't' || ta == 'c') ? (char)ta : '?';
    char ctb = (tb == 'N' || tb == 'T' || tb == 'C' || tb == 'n' || tb == 't' || tb == 'c') ? (char)tb : '?';
    int info = check_args(cta, ctb, m, n, k, lda, ldb, ldc);
    if (info) {
        fg_gemm_rejected();
        return -info;
    }
    fg_gemm_args g = {dt,  norm_trans(cta), norm_trans(ctb), m, n, k, lda, ldb, ldc,
                      alpha, beta, a, b, c, name, FG_ABI_BLAS};
    int rc = async ? fg_gemm_async(&g, stream) : fg_gemm(&g);
    return rc == 0 ? FASTGEMM_SUCCESS : FASTGEMM_ERROR_FAILED;
}

#define FG_C_GEMM(NAME, T, DT)                                                                  \
    FG_EXPORT int NAME(fastgemm_op transa, fastgemm_op transb, int64_t m, int64_t n, int64_t k,  \
                       T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,   \
                       int64_t ldc)                                                               \
    {                                                                                            \
        return c_gemm(DT, #NAME, NULL, 0, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta,  \
                      c, ldc);                                                                   \
    }                                                                                            \
    FG_EXPORT int NAME##_stream(void *stream, fastgemm_op transa, fastgemm_op transb, int64_t m,  \
                                int64_t n, int64_t k, T alpha, const T *a, int64_t lda,           \
                                const T *b, int64_t ldb, T beta, T *c, int64_t ldc)               \
    {                                                                                            \
        return c_gemm(DT, #NAME "_stream", stream, 1, transa, transb, m, n, k, alpha, a, lda, b, \
                      ldb, beta, c, ldc);                                                        \
    }
FG_C_GEMM(fastgemm_sgemm, float, FG_F32)
FG_C_GEMM(fastgemm_dgemm, double, FG_F64)
