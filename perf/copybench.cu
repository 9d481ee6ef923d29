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

// Each block copies tiles of ROWS rows, CHUNKS 16-byte chunks a row, 128 threads a round (a
// warp: 32 / CHUNKS rows), into the stage it % 3.
template <class T, int CHUNKS, int ROWS>
__global__ void rows(const T *g, long ld, int lds, int iters)
{
    extern __shared__ __align__(16) unsigned char smem[];
    constexpr int E = 16 / sizeof(T), STEP = 128 / CHUNKS;
    const int row = threadIdx.x / CHUNKS, col = (threadIdx.x % CHUNKS) * E;
    for (int it = 0; it < iters; it++) {
        const T *base = g + (size_t)((blockIdx.x * 37 + it * 101) % 2048) * ROWS * ld;
        T *s = reinterpret_cast<T *>(smem) + (it % 3) * ROWS * lds;
#pragma unroll
        for (int r = 0; r < ROWS / STEP; r++)
            copy16(s + (row + STEP * r) * lds + col, base + (row + STEP * r) * ld + col);
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
    cudaFuncSetAttribute(rows<double, 8, 64>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(rows<float, 16, 16>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
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
            const float ms = timed([&] { rows<double, 8, 64><<<blocks, 128, smem>>>((const double *)g, ld, lds, 400); });
            printf("k  ld=%ld lds=%d %.3f ms %s\n", ld, lds, ms, cudaGetErrorString(cudaGetLastError()));
        }
    for (long ld : {1024L, 1028L})
        for (int lds : {64, 68, 72, 76}) {
            const float ms = timed([&] { rows<float, 16, 16><<<blocks, 128, smem>>>((const float *)g, ld, lds, 800); });
            printf("mn ld=%ld lds=%d %.3f ms %s\n", ld, lds, ms, cudaGetErrorString(cudaGetLastError()));
        }
    return 0;
}
