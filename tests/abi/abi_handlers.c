/* abi_handlers.c: run with LD_PRELOAD=libfastgemm.so over fakeblas, a BLAS with its own
 * xerbla_ and cblas_xerbla. libfastgemm's handlers shadow them in the search order, so they must
 * pass errors on: the fake BLAS's own routines still reach its handler, and so do libfastgemm's
 * GEMM errors (CBLAS row-major ones with RowMajorStrg set, as the reference CBLAS does). */
#include <stdio.h>
#include <string.h>

extern char fake_name[32];
extern int fake_info, fake_calls, fake_row_major_seen, fake_gemm_calls, RowMajorStrg;
void fake_routine_(void);
void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *, size_t, size_t);
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

static int fails;
static void expect(const char *what, const char *name, int info, int row)
{
    int ok = fake_calls == 1 && !strcmp(fake_name, name) && fake_info == info &&
             (row < 0 || fake_row_major_seen == row);
    printf("%-34s handler got '%s' info %d (calls %d): %s\n", what, fake_name, fake_info,
           fake_calls, ok ? "ok" : "WRONG");
    fails += !ok;
    fake_calls = 0;
}

int main(void)
{
    fake_routine_();
    expect("the program BLAS's own error", "FAKE  ", 3, -1);
    float a[4] = {0}, b[4] = {0}, c[4] = {0}, one = 1;
    int two = 2, bad = 1;
    sgemm_("N", "N", &two, &two, &two, &one, a, &bad, b, &two, &one, c, &two, 1, 1);
    expect("sgemm_ with lda < m", "SGEMM ", 8, -1);
    cblas_sgemm(101, 111, 111, -1, 2, 2, 1, a, 2, b, 2, 1, c, 2); /* row-major, M < 0 */
    expect("cblas_sgemm row-major, M < 0", "cblas_sgemm", 5, 1);
    printf("RowMajorStrg after the call: %d\n", RowMajorStrg);
    fails += RowMajorStrg != 0;
    printf("GEMM calls that reached the fake BLAS: %d\n", fake_gemm_calls);
    fails += fake_gemm_calls != 0;
    return fails != 0;
}
