/* abi_handlers.c: run with LD_PRELOAD=libfastgemm.so over fakeblas, a BLAS with its own
 * xerbla_ and cblas_xerbla. libfastgemm's handlers shadow them in the search order, so they must
 * pass errors on: the fake BLAS's own routines still reach its handler. An invalid GEMM call goes
 * to the fake BLAS's GEMM, with the caller's arguments unchanged, and libfastgemm reports
 * nothing itself. */
#include <stdio.h>
#include <string.h>

extern char fake_name[32];
extern int fake_info, fake_calls, fake_gemm_calls, fake_lda, fake_m, fake_layout, RowMajorStrg;
void fake_routine_(void);
void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *, size_t, size_t);
void cblas_sgemm(int, int, int, int, int, int, float, const float *, int, const float *, int,
                 float, float *, int);

static int fails;
static void check(const char *what, int ok)
{
    printf("%-52s %s\n", what, ok ? "ok" : "WRONG");
    fails += !ok;
}

int main(void)
{
    fake_routine_();
    check("the program BLAS's own error reaches its handler",
          fake_calls == 1 && !strcmp(fake_name, "FAKE  ") && fake_info == 3);
    float a[4] = {0}, b[4] = {0}, c[4] = {0}, one = 1;
    int two = 2, bad = 1;
    sgemm_("N", "N", &two, &two, &two, &one, a, &bad, b, &two, &one, c, &two, 1, 1);
    check("sgemm_ with lda < m goes to its sgemm_, unchanged",
          fake_gemm_calls == 1 && fake_m == 2 && fake_lda == 1 && fake_calls == 1);
    cblas_sgemm(101, 111, 111, -1, 2, 2, 1, a, 2, b, 2, 1, c, 2); /* row-major, M < 0 */
    check("cblas_sgemm row-major, M < 0 goes to its cblas_sgemm",
          fake_gemm_calls == 2 && fake_layout == 101 && fake_m == -1 && fake_lda == 2 && fake_calls == 1);
    check("RowMajorStrg untouched", RowMajorStrg == 0);
    return fails != 0;
}
