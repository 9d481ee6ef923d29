// ptx.cuh: the PTX instructions the kernels issue by hand: the copies from global to shared
// memory (cp.async with zero-fill, or plain loads and stores for the ablation) and their
// groups, the shared-memory mbarriers that the tensor memory accelerator's copies complete on
// (tma.cuh), and named barriers of part of a block.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

namespace fg_kern {

// An opaque move: ptxas can no longer recompute v from the kernel parameters (a loader's `pin`).
__device__ __forceinline__ void keep_in_register(int64_t &v) { asm volatile("mov.b64 %0, %0;" : "+l"(v)); }
__device__ __forceinline__ void keep_in_register(int &v) { asm volatile("mov.b32 %0, %0;" : "+r"(v)); }

// A barrier of the block's first THREADS threads (a multiple of 32), on hardware barrier ID
// (1-15; __syncthreads is 0), for code that the other threads have left.
template <int ID, int THREADS>
__device__ __forceinline__ void bar_sync()
{
    static_assert(ID >= 1 && ID <= 15 && THREADS % 32 == 0, "a named barrier of whole warps");
    asm volatile("bar.sync %0, %1;" ::"n"(ID), "n"(THREADS) : "memory");
}

template <int BYTES>
struct CopyVec;
template <>
struct CopyVec<16> { using type = int4; };
template <>
struct CopyVec<8> { using type = int2; };
template <>
struct CopyVec<4> { using type = int; };

// Copies BYTES from global src to shared dst; only the first src_bytes are read, the rest is
// zero (cp.async's zero-fill). SYNC: the same with a plain load and store.
template <int BYTES, bool SYNC>
__device__ __forceinline__ void copy_zfill(void *dst, const void *src, int src_bytes)
{
    if (SYNC) {
        using V = typename CopyVec<BYTES>::type;
        if (src_bytes == BYTES) {
            *static_cast<V *>(dst) = *static_cast<const V *>(src);
        } else {
            for (int i = 0; i < BYTES / 4; i++)
                static_cast<int *>(dst)[i] = 4 * i < src_bytes ? static_cast<const int *>(src)[i] : 0;
        }
        return;
    }
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"(BYTES),
                     "r"(src_bytes));
}

// The same without zero-fill: all BYTES are read.
template <int BYTES, bool SYNC>
__device__ __forceinline__ void copy_full(void *dst, const void *src)
{
    if (SYNC) {
        using V = typename CopyVec<BYTES>::type;
        *static_cast<V *>(dst) = *static_cast<const V *>(src);
        return;
    }
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"(BYTES));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// The shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// mbarriers. The transaction counts and the waits are sm_90's: on other architectures they
// compile to a trap, and the launchers never run a kernel that reaches them there.

__device__ __forceinline__ void mbar_init(uint64_t *bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}

// Makes the barriers' initialization visible to the tensor memory accelerator.
__device__ __forceinline__ void mbar_init_fence()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

// The calling thread's arrival, announcing `bytes` still to come from the copies.
__device__ __forceinline__ void mbar_expect_bytes(uint64_t *bar, uint32_t bytes)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
                 "r"(bytes) : "memory");
#else
    __trap();
#endif
}

// Waits for the phase of the given parity (0 for the first) to complete.
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred done;\n"
                 "WAIT_%=:\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra WAIT_%=;\n}\n" ::"r"(smem_addr(bar)), "r"(parity) : "memory");
#else
    __trap();
#endif
}

} // namespace fg_kern
