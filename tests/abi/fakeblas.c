/* fakeblas.c: stands in for a program's own BLAS with its own error handlers (and the reference
 * CBLAS's RowMajorStrg), to check that a preloaded libfastgemm hands errors on to them. */
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

/* Its GEMMs: never reached while libfastgemm is preloaded (the program checks the count). */
int fake_gemm_calls;
void sgemm_(void) { fake_gemm_calls++; }
void cblas_sgemm(void) { fake_gemm_calls++; }
