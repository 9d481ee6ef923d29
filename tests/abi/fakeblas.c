/* fakeblas.c: stands in for a program's own BLAS with its own error handlers (and the reference
 * CBLAS's RowMajorStrg), to check that a preloaded libfastgemm leaves its handlers to its own
 * routines and hands it the GEMM calls with invalid arguments, unchanged. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

int RowMajorStrg;
char fake_name[32];
int fake_info, fake_calls, fake_row_major_seen;

void xerbla_(const char *srname, const int *info, size_t len)
{
    snprintf(fake_name, sizeof fake_name, "%.*s", (int)len, srname);
    fake_info = *info;
    fake_calls++;
}

void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    (void)form;
    snprintf(fake_name, sizeof fake_name, "%s", rout);
    fake_info = info;
    fake_row_major_seen = RowMajorStrg;
    fake_calls++;
}

/* One of this BLAS's own routines, reporting a bad third argument. */
void fake_routine_(void)
{
    int info = 3;
    xerbla_("FAKE  ", &info, 6);
}

/* Its GEMMs record what they were given (the test makes only invalid calls). */
int fake_gemm_calls, fake_lda, fake_m, fake_layout;
void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
            const float *beta, float *c, const int *ldc, size_t lta, size_t ltb)
{
    (void)ta, (void)tb, (void)n, (void)k, (void)alpha, (void)a, (void)b, (void)ldb, (void)beta;
    (void)c, (void)ldc, (void)lta, (void)ltb;
    fake_gemm_calls++;
    fake_m = *m;
    fake_lda = *lda;
}
void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    (void)ta, (void)tb, (void)n, (void)k, (void)alpha, (void)a, (void)b, (void)ldb, (void)beta;
    (void)c, (void)ldc;
    fake_gemm_calls++;
    fake_layout = layout;
    fake_m = m;
    fake_lda = lda;
}
