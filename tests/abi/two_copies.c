/* two_copies.c COPY: loads COPY (another file of libfastgemm) into the global scope, as a
 * program does that loads a module linked with an installed libfastgemm while a build's copy is
 * preloaded, then makes one sgemm_ and one dgemm_ call through the process's global names (the
 * preloaded copy's) and checks C. run_two_copies.sh checks the trace: one line a call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>

#include "blas_names.h"

int main(int argc, char **argv)
{
    if (argc != 2 || !dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "usage: two_copies COPY (%s)\n", argc == 2 ? dlerror() : "no COPY");
        return 2;
    }
    void (*s)() = dlsym(RTLD_DEFAULT, "sgemm_"), (*d)() = dlsym(RTLD_DEFAULT, "dgemm_");
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4], one = 1, zero = 0;
    double ad[4] = {1, 2, 3, 4}, bd[4] = {5, 6, 7, 8}, cd[4], oned = 1, zerod = 0;
    const int two = 2;
    s("N", "N", &two, &two, &two, &one, a, &two, b, &two, &zero, c, &two, (size_t)1, (size_t)1);
    d("N", "N", &two, &two, &two, &oned, ad, &two, bd, &two, &zerod, cd, &two, (size_t)1, (size_t)1);
    /* [1 3; 2 4] [5 7; 6 8] = [23 31; 34 46], column-major */
    const double want[4] = {23, 34, 31, 46};
    int bad = 0;
    for (int i = 0; i < 4; i++) bad += c[i] != want[i] || cd[i] != want[i];
    printf("two_copies: %s\n", bad ? "WRONG" : "ok");
    return bad != 0;
}
