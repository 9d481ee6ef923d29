// tma.cuh: Hopper's tensor memory accelerator (sm_90). One thread asks for a whole 2-D box of a
// matrix; the copy lands in shared memory (zeros where the box leaves the matrix) and counts its
// bytes on an mbarrier (ptx.cuh), which the threads that read the box wait on. The device side
// issues the copies; the host side encodes the maps that describe the matrices. The DMMA
// kernels with FG_TMA use them; on other architectures the device side compiles to a trap and
// the launchers never get there.
#pragma once

#include "ptx.cuh"

#include <cuda.h> // CUtensorMap
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

namespace fg_kern {

// The box at element (c0, c1) of the matrix `map` describes (c0 along its contiguous dimension)
// into dst, counted on bar.
__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0, int c1)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1),
                 "r"(smem_addr(bar)) : "memory");
#else
    __trap();
#endif
}

__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
#endif
}

// Host: the driver's cuTensorMapEncodeTiled (through the runtime, so nothing links libcuda), or
// null where the driver has none.
inline PFN_cuTensorMapEncodeTiled_v12000 tma_encoder()
{
    static std::atomic<PFN_cuTensorMapEncodeTiled_v12000> fn{nullptr};
    static std::atomic<bool> looked{false};
    if (!looked.load(std::memory_order_acquire)) {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                             &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            p = nullptr, cudaGetLastError();
        fn.store(reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p), std::memory_order_relaxed);
        looked.store(true, std::memory_order_release);
    }
    return fn.load(std::memory_order_relaxed);
}

// A map of the rows x cols column-major matrix x (leading dimension ld, rows contiguous) of
// doubles, floats or bytes (elem 8, 4 or 1) read in boxes of box_rows x box_cols, 128-byte
// swizzled (box_rows * elem must be 128 then) or not.
// False where the accelerator cannot take it: x and ld * elem must be multiples of 16 bytes.
inline bool tma_map(CUtensorMap *map, const void *x, int64_t rows, int64_t cols, int64_t ld,
                    int elem, int box_rows, int box_cols, bool swizzle)
{
    PFN_cuTensorMapEncodeTiled_v12000 encode = tma_encoder();
    if (!encode || (uintptr_t)x % 16 || ld * elem % 16 || rows > 0xffffffffLL ||
        cols > 0xffffffffLL || ld * elem >= (int64_t)1 << 40)
        return false;
    const cuuint64_t dims[2] = {(cuuint64_t)rows, (cuuint64_t)cols};
    const cuuint64_t strides[1] = {(cuuint64_t)(ld * elem)};
    const cuuint32_t box[2] = {(cuuint32_t)box_rows, (cuuint32_t)box_cols}, unit[2] = {1, 1};
    const CUtensorMapDataType type = elem == 8   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64
                                     : elem == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                                 : CU_TENSOR_MAP_DATA_TYPE_UINT8;
    return encode(map, type,
                  2, const_cast<void *>(x), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

} // namespace fg_kern
