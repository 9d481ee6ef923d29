/* gpumem.c: device and managed memory for the tests (see testutil.h). */
#include "testutil.h"

#include <cuda_runtime.h>

int test_gpu_present(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

void *test_alloc(size_t bytes, int managed)
{
    void *p = NULL;
    cudaError_t e = managed ? cudaMallocManaged(&p, bytes, cudaMemAttachGlobal) : cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        fprintf(stderr, "test: cudaMalloc%s(%zu): %s\n", managed ? "Managed" : "", bytes,
                cudaGetErrorString(e));
        return NULL;
    }
    return p;
}

void test_free(void *p) { cudaFree(p); }

int test_copy(void *dst, const void *src, size_t bytes)
{
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
    if (e != cudaSuccess) fprintf(stderr, "test: cudaMemcpy: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}

int test_sync(void) { return cudaDeviceSynchronize() != cudaSuccess; }
