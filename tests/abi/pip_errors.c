/* pip_errors.c LIB FAMILY CASE: loads a pip wheel's OpenBLAS (LIB) into a local scope, as Python
 * loads an extension module's, binds the wheel's GEMM names as that module does (the process's
 * global definition first: libfastgemm's when preloaded, else the wheel's own), makes one call
 * with an invalid argument and prints C. FAMILY: scipy64 (NumPy's wheel: scipy_sgemm_64_,
 * scipy_cblas_sgemm64_, 64-bit integers) or scipy (SciPy's: scipy_sgemm_, scipy_cblas_sgemm).
 * run_pip_errors.sh compares each case's output and exit status alone and preloaded; the file
 * PIP_ERRORS_WHO names (when set) gets the path of the library each name was bound to. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *h;
static void *bind(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f) f = dlsym(h, name);
    Dl_info info;
    const char *who = getenv("PIP_ERRORS_WHO");
    FILE *out = who ? fopen(who, "a") : NULL;
    if (out && f && dladdr(f, &info)) fprintf(out, "%s %s\n", name, info.dli_fname);
    if (out) fclose(out);
    return f;
}

/* The cases of one family: INT its integer type, F77 and CBLAS its names. */
#define CASES(INT, F77, CBLAS)                                                                  \
    {                                                                                          \
        void (*f77)(const char *, const char *, const INT *, const INT *, const INT *,          \
                    const float *, const float *, const INT *, const float *, const INT *,      \
                    const float *, float *, const INT *, size_t, size_t) = bind(F77);           \
        void (*cblas)(int, int, int, INT, INT, INT, float, const float *, INT, const float *,  \
                      INT, float, float *, INT) = bind(CBLAS);                                  \
        if (!f77 || !cblas) {                                                                  \
            fprintf(stderr, "pip_errors: %s or %s not found\n", F77, CBLAS);                   \
            return 2;                                                                          \
        }                                                                                      \
        float a[8] = {1, 2, 3, 4}, b[8] = {5, 6, 7, 8}, c[8] = {9, 10, 11, 12}, one = 1;        \
        INT two = 2, one_i = 1, neg = -3;                                                      \
        if (!strcmp(w, "ta")) f77("X", "N", &two, &two, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "m")) f77("N", "N", &neg, &two, &two, &one, a, &two, b, &two, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "lda")) f77("N", "N", &two, &two, &two, &one, a, &one_i, b, &two, &one, c, &two, 1, 1); \
        else if (!strcmp(w, "ldc")) f77("N", "T", &two, &two, &two, &one, a, &two, b, &two, &one, c, &one_i, 1, 1); \
        else if (!strcmp(w, "c_layout")) cblas(7, 111, 111, 2, 2, 2, 1, a, 2, b, 2, 1, c, 2); \
        else if (!strcmp(w, "c_tb")) cblas(102, 111, 42, 2, 2, 2, 1, a, 2, b, 2, 1, c, 2);    \
        else if (!strcmp(w, "c_m")) cblas(102, 111, 111, -3, 2, 2, 1, a, 2, b, 2, 1, c, 2);   \
        else if (!strcmp(w, "c_row_lda")) cblas(101, 111, 111, 2, 2, 2, 1, a, 1, b, 2, 1, c, 2); \
        else {                                                                                 \
            fprintf(stderr, "pip_errors: unknown case %s\n", w);                               \
            return 2;                                                                          \
        }                                                                                      \
        printf("returned; C = %g %g %g %g\n", c[0], c[1], c[2], c[3]);                         \
        return 0;                                                                              \
    }

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: pip_errors LIB scipy|scipy64 CASE\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!(h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "pip_errors: %s\n", dlerror());
        return 2;
    }
    const char *w = argv[3];
    if (!strcmp(argv[2], "scipy64")) CASES(int64_t, "scipy_sgemm_64_", "scipy_cblas_sgemm64_")
    if (!strcmp(argv[2], "scipy")) CASES(int, "scipy_sgemm_", "scipy_cblas_sgemm")
    fprintf(stderr, "pip_errors: unknown family %s\n", argv[2]);
    return 2;
}
