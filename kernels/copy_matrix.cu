// copy_matrix.cu: a column-major matrix copied to another leading dimension (the packing of
// operands that rule out 16-byte copies, backends/cuda/pack.cu). Memory-bound: each warp copies
// 32 x U rows of one column, U loads in flight a lane before its stores, so that any alignment
// of the source keeps whole-line reads and the copy runs near the memory's rate even for short
// columns (cudaMemcpy2DAsync's rate falls with odd pitches).
#include "kernels.h"

#include <stdint.h>

namespace {

constexpr int WARPS = 8, U = 4;

template <typename T>
__global__ void __launch_bounds__(WARPS * 32)
    copy_matrix(const T *__restrict__ src, int64_t ld, int64_t rows, int64_t cols, T *__restrict__ dst,
                int64_t ld2)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t r0 = (int64_t)blockIdx.x * 32 * U + lane;
    for (int64_t c = (int64_t)blockIdx.y * WARPS + warp; c < cols; c += (int64_t)gridDim.y * WARPS) {
        const T *s = src + c * ld;
        T *d = dst + c * ld2;
        T v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (r0 + 32 * u < rows) v[u] = s[r0 + 32 * u];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (r0 + 32 * u < rows) d[r0 + 32 * u] = v[u];
    }
}

template <typename T>
cudaError_t copy(const void *src, int64_t ld, int64_t rows, int64_t cols, void *dst, int64_t ld2, cudaStream_t s)
{
    const int64_t bx = (rows + 32 * U - 1) / (32 * U), by = (cols + WARPS - 1) / WARPS;
    if (bx > 0x7fffffff) return cudaErrorInvalidValue;
    const dim3 grid((unsigned)bx, (unsigned)(by < 65535 ? by : 65535));
    copy_matrix<T><<<grid, WARPS * 32, 0, s>>>(static_cast<const T *>(src), ld, rows, cols, static_cast<T *>(dst),
                                               ld2);
    return cudaGetLastError();
}

} // namespace

cudaError_t fg_kernel_copy_matrix(const void *src, int64_t ld, int64_t rows, int64_t cols, size_t esize, void *dst,
                                  int64_t ld2, cudaStream_t s)
{
    if (rows <= 0 || cols <= 0) return cudaSuccess;
    return esize == 8 ? copy<double>(src, ld, rows, cols, dst, ld2, s) : copy<float>(src, ld, rows, cols, dst, ld2, s);
}
