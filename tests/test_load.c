/* test_load.c: loading libfastgemm makes no CUDA call, and neither does a GEMM that stays on the
 * CPU: the CUDA driver is not in the process after either (a process with no GPU or no driver
 * pays nothing). Usage: test_load path/to/libfastgemm.so */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *,
                         const float *, const float *, const int *, const float *, const int *,
                         const float *, float *, const int *, size_t, size_t);

static int driver_loaded(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    if (driver_loaded()) {
        printf("the CUDA driver is loaded before the library: cannot test\n");
        return 1;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    int fails = 0;
    if (driver_loaded()) {
        printf("FAIL: loading libfastgemm loaded the CUDA driver\n");
        fails++;
    }
    sgemm_fn sgemm = (sgemm_fn)dlsym(lib, "sgemm_");
    float a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, b[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, c[9];
    float one = 1, zero = 0;
    int three = 3;
    sgemm("N", "N", &three, &three, &three, &one, a, &three, b, &three, &zero, c, &three, 1, 1);
    for (int i = 0; i < 9; i++)
        if (c[i] != a[i]) {
            printf("FAIL: wrong result\n");
            fails++;
            break;
        }
    if (driver_loaded()) {
        printf("FAIL: a small CPU GEMM loaded the CUDA driver\n");
        fails++;
    }
    printf("test_load: %s\n", fails ? "FAILED" : "ok");
    return fails != 0;
}
