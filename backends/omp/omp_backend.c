/* omp_backend.c: FASTGEMM_BACKEND=omp. The OpenMP-target GEMM lives in a module of its own,
 * libfastgemm_omp.so (backends/omp/omp_gemm.c), built by a compiler with OpenMP offload:
 * libfastgemm itself never depends on an offloading OpenMP runtime. The module is loaded at the
 * first call that wants it, from FASTGEMM_OMP_LIB or else fastgemm/libfastgemm_omp.so in the
 * folder libfastgemm was loaded from (<libdir>/fastgemm when installed, build/fastgemm in the
 * build tree: a private folder, out of the linker's and ldconfig's way). */
#define _GNU_SOURCE /* dladdr */
#include "backends/backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *lib_path; /* FASTGEMM_OMP_LIB, for load() */
static fg_omp_gemm_fn omp_gemm;
static int kernel_unknown; /* FASTGEMM_KERNEL names no kernel of the module: its default runs */

static void load(void)
{
    char path[PATH_MAX];
    Dl_info self;
    if (lib_path) {
        snprintf(path, sizeof path, "%s", lib_path);
    } else if (dladdr((void *)fg_omp_gemm, &self) && self.dli_fname && strchr(self.dli_fname, '/')) {
        int dir = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
        snprintf(path, sizeof path, "%.*s/fastgemm/libfastgemm_omp.so", dir, self.dli_fname);
    } else {
        snprintf(path, sizeof path, "libfastgemm_omp.so"); /* the loader's search path */
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fg_warn("FASTGEMM_BACKEND=omp: %s; GEMMs run on the CUDA kernels", dlerror());
        return;
    }
    fg_omp_abi_fn abi = (fg_omp_abi_fn)dlsym(h, "fastgemm_omp_abi");
    fg_omp_gemm_fn fn = (fg_omp_gemm_fn)dlsym(h, "fastgemm_omp_gemm");
    if (!abi || !fn || abi() != FG_OMP_ABI) {
        fg_warn("FASTGEMM_BACKEND=omp: %s is not a module of this libfastgemm; GEMMs run on "
                "the CUDA kernels", path);
        return; /* the handle stays open: its constructors have run */
    }
    omp_gemm = fn;
}

int fg_omp_usable(const fg_settings *set)
{
    lib_path = set->omp_lib; /* the same every call: the settings are read once */
    pthread_once(&load_once, load);
    return omp_gemm != NULL;
}

int fg_omp_gemm(const fg_call *call, char *why, size_t whylen)
{
    if (!fg_omp_usable(call->set)) return FG_FAILED;
    /* Managed memory is used in place too: every device and the host can read it. */
    const fg_operands *ops = &call->ops;
    const int a = ops->a != FG_MEM_HOST, b = ops->b != FG_MEM_HOST, c = ops->c != FG_MEM_HOST;
    const char *kernel = __atomic_load_n(&kernel_unknown, __ATOMIC_RELAXED) ? NULL : call->set->kernel;
    int rc = omp_gemm(call->g, a, b, c, call->device, kernel, why, whylen);
    if (rc == -3) {
        if (!__atomic_exchange_n(&kernel_unknown, 1, __ATOMIC_RELAXED))
            fg_warn("%s; using the default", why);
        rc = omp_gemm(call->g, a, b, c, call->device, NULL, why, whylen);
    }
    return rc == 0 ? FG_OK : FG_FAILED;
}
