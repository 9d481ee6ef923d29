/* abi_errors.c CASE: makes one GEMM call with an invalid argument (CASE names the entry point
 * and the argument, e.g. f_s_lda: sgemm_ with lda < m), then prints C. run_errors.sh runs every
 * case with and without libfastgemm preloaded over the BLAS the program is linked with: the
 * program must print the same and exit the same way (that BLAS's own message and exit
 * behaviour), and C must stay as it was. */
#include "blas_names.h"

#include <stdio.h>
#include <string.h>

/* Every case of one precision: a 2x2x2 product with one argument made invalid. */
#define CASES(P, T, F77, CBLAS)                                                                 \
    {                                                                                          \
        T a[8] = {1, 2, 3, 4}, b[8] = {5, 6, 7, 8}, c[8] = {9, 10, 11, 12}, one = 1;            \
        int two = 2, one_i = 1, neg = -3;                                                      \
        const char *w = name + 1;                                                              \
        if (!strcmp(w, "_ta")) F77("X", "N", &two, &two, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "_tb")) F77("N", "?", &two, &two, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "_m")) F77("N", "N", &neg, &two, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "_k")) F77("N", "T", &two, &two, &neg, &one, a, &two, b, &two, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "_lda")) F77("N", "N", &two, &two, &two, &one, a, &one_i, b, &two, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "_ldb")) F77("T", "T", &two, &two, &two, &one, a, &two, b, &one_i, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "_ldc")) F77("N", "N", &two, &two, &two, &one, a, &two, b, &two, &one, c, &one_i, 1, 1); \
        else if (!strcmp(w, "_c_layout")) CBLAS(7, 111, 111, 2, 2, 2, 1, a, 2, b, 2, 1, c, 2); \
        else if (!strcmp(w, "_c_ta")) CBLAS(102, 42, 111, 2, 2, 2, 1, a, 2, b, 2, 1, c, 2);    \
        else if (!strcmp(w, "_c_m")) CBLAS(102, 111, 111, -3, 2, 2, 1, a, 2, b, 2, 1, c, 2);   \
        else if (!strcmp(w, "_c_row_m")) CBLAS(101, 111, 111, -3, 2, 2, 1, a, 2, b, 2, 1, c, 2); \
        else if (!strcmp(w, "_c_row_n")) CBLAS(101, 112, 111, 2, -1, 2, 1, a, 2, b, 2, 1, c, 2); \
        else if (!strcmp(w, "_c_row_lda")) CBLAS(101, 111, 111, 2, 2, 2, 1, a, 1, b, 2, 1, c, 2); \
        else if (!strcmp(w, "_c_ldc")) CBLAS(102, 111, 112, 2, 2, 2, 1, a, 2, b, 2, 1, c, 1);  \
        else {                                                                                 \
            fprintf(stderr, "abi_errors: unknown case %s\n", name);                            \
            return 2;                                                                          \
        }                                                                                      \
        printf("returned; C = %g %g %g %g\n", (double)c[0], (double)c[1], (double)c[2],         \
               (double)c[3]);                                                                  \
        return 0;                                                                              \
    }

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0); /* the order of stdout and stderr as the calls made it */
    if (!strncmp(name, "s_", 2)) CASES(s, float, sgemm_, cblas_sgemm)
    if (!strncmp(name, "d_", 2)) CASES(d, double, dgemm_, cblas_dgemm)
    fprintf(stderr, "usage: abi_errors {s|d}_{ta,tb,m,k,lda,ldb,ldc,c_layout,c_ta,c_m,c_row_m,c_row_n,c_row_lda,c_ldc}\n");
    return 2;
}
