/* test_xerbla_default.c: with no error handler of the application's own, the library's print
 * the netlib messages (Fortran: the routine and position; CBLAS: the caller's position, row-major
 * mapped back) and return: the program goes on, C untouched. */
#include "testutil.h"

#include <unistd.h>

int main(void)
{
    char path[] = "/tmp/fastgemm_xerbla_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || !freopen(path, "w", stderr)) return 1;
    float a[4] = {0}, b[4] = {0}, c[4] = {1, 2, 3, 4}, one = 1;
    int two = 2, bad_ld = 1;
    sgemm_("N", "N", &two, &two, &two, &one, a, &bad_ld, b, &two, &one, c, &two, 1, 1);
    int64_t m64 = -3, two64 = 2;
    double done = 1;
    dgemm_64_("N", "N", &m64, &two64, &two64, &done, NULL, &two64, NULL, &two64, &done, NULL,
              &two64, 1, 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, -1, 2, 2, 1, a, 2, b, 2, 1, c, 2);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1, a, 1, b, 2, 1, c, 2);
    cblas_dgemm(CblasColMajor, CblasNoTrans, 42, 2, 2, 2, 1, NULL, 2, NULL, 2, 1, NULL, 2);
    fflush(stderr);

    FILE *f = fopen(path, "r");
    char text[4096] = {0};
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[len] = 0;
    unlink(path);
    static const char *const want[] = {
        " ** On entry to SGEMM parameter number  8 had an illegal value\n",
        " ** On entry to DGEMM parameter number  3 had an illegal value\n",
        "Parameter 4 to routine cblas_sgemm was incorrect\n",
        "Parameter 9 to routine cblas_sgemm was incorrect\n",
        "Parameter 3 to routine cblas_dgemm was incorrect\nIllegal TransB setting, 42\n",
    };
    int fails = 0;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(text, want[i])) {
            printf("missing: %s", want[i]);
            fails++;
        }
    if (c[0] != 1 || c[3] != 4) {
        printf("C changed\n");
        fails++;
    }
    printf("test_xerbla_default: %s\n--- what the library printed ---\n%s", fails ? "FAILED" : "ok",
           text);
    return fails != 0;
}
