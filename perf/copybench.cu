// copybench.cu: shared-memory wavefronts of 16-byte cp.async by the destination's row stride,
// the microbenchmark behind the padding of the DMMA kernels' mn-major rows
// (kernels/dgemm_dmma_common.cuh, Layout) and perf/notes/kernel-choice.md (eighteenth session).
// Two copy patterns, each block copying 64-row tiles from a buffer past the L2, three stages:
//   k: rows of 16 doubles along k (TileLoaderK's 16-byte mapping: a warp copies 4 rows x 8
//      chunks), source row stride ld doubles, destination stride lds;
//   mn: rows of 64 floats along m or n (SGEMM's TileLoader: a warp copies 2 rows x 16 chunks),
//      source stride ld floats, destination stride lds.
// It prints each case's time; the wavefronts come from ncu:
//   nvcc -O3 -arch=sm_90 -o copybench perf/copybench.cu
//   ncu --metrics smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,\
//       sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum ./copybench
// (two launches a case; the second is the one to read). Standalone: not part of the build.
#include <cstdio>
#include <cuda_runtime.h>

__device__ __forceinline__ void copy16(void *dst, const void *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
}

__device__ __forceinline__ void stage_done()
{
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 1;\n" ::);
    __syncthreads();
}

__global__ void rows_k(const double *g, long ld, int lds, int iters)
{
    extern __shared__ double sd[];
    const int row = threadIdx.x / 8, k = (threadIdx.x % 8) * 2;
    for (int it = 0; it < iters; it++) {
        const double *base = g + (size_t)((blockIdx.x * 37 + it * 101) % 2048) * 64 * ld;
        double *s = sd + (it % 3) * 64 * lds;
#pragma unroll
        for (int r = 0; r < 4; r++) copy16(s + (row + 16 * r) * lds + k, base + (row + 16 * r) * ld + k);
        stage_done();
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
}

__global__ void rows_mn(const float *g, long ld, int lds, int iters)
{
    extern __shared__ float sf[];
    const int mn = (threadIdx.x % 16) * 4, k = threadIdx.x / 16;
    for (int it = 0; it < iters; it++) {
        const float *base = g + (size_t)((blockIdx.x * 37 + it * 101) % 2048) * 16 * ld;
        float *s = sf + (it % 3) * 16 * lds;
#pragma unroll
        for (int r = 0; r < 2; r++) copy16(s + (k + 8 * r) * lds + mn, base + (k + 8 * r) * ld + mn);
        stage_done();
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
}

int main()
{
    void *g;
    const size_t bytes = (size_t)2048 * 64 * 648 * 8;
    if (cudaMalloc(&g, bytes) != cudaSuccess) return 1;
    cudaMemset(g, 0, bytes);
    const int smem = 3 * 64 * 36 * 8;
    cudaFuncSetAttribute(rows_k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(rows_mn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    const int blocks = 132 * 4;
    auto timed = [&](auto launch) {
        float ms = 0;
        for (int w = 0; w < 2; w++) {
            cudaEventRecord(a);
            launch();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            cudaEventElapsedTime(&ms, a, b);
        }
        return ms;
    };
    for (long ld : {600L, 608L})
        for (int lds : {16, 18, 20, 22, 24, 28, 36}) {
            const float ms = timed([&] { rows_k<<<blocks, 128, smem>>>((const double *)g, ld, lds, 400); });
            printf("k  ld=%ld lds=%d %.3f ms %s\n", ld, lds, ms, cudaGetErrorString(cudaGetLastError()));
        }
    for (long ld : {1024L, 1028L})
        for (int lds : {64, 68, 72, 76}) {
            const float ms = timed([&] { rows_mn<<<blocks, 128, smem>>>((const float *)g, ld, lds, 800); });
            printf("mn ld=%ld lds=%d %.3f ms %s\n", ld, lds, ms, cudaGetErrorString(cudaGetLastError()));
        }
    return 0;
}
