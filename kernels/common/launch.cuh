// launch.cuh: what the launches of every kernel family share: the kernels' signature, their
// shared memory, the launch over the block tiles (with split-K's slices) and the launch of a
// stream-K plan.
#pragma once

#include "splitk.cuh"
#include "streamk.cuh"
#include "timeline.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>

namespace fg_kern {

// One GEMM as a kernel family's launcher takes it: C = alpha op(A) op(B) + beta C on device
// pointers (alpha != 0, k > 0), op(A) m x k (A^T where ta), op(B) k x n (B^T where tb). The
// plan reads only op(A) and op(B).
template <class T>
struct Gemm {
    bool ta, tb;
    int64_t m, n, k;
    T alpha;
    const T *a;
    int64_t lda;
    const T *b;
    int64_t ldb;
    T beta;
    T *c;
    int64_t ldc;
};

// Whether p and ld allow 16-byte accesses to a column of elem-byte elements.
inline bool aligned16(const void *p, int64_t ld, int elem)
{
    return (uintptr_t)p % 16 == 0 && ld % (16 / elem) == 0;
}

// Every kernel of the families: C = alpha op(A) op(B) + beta C over the block tiles of
// gridDim.x and the K slices of gridDim.z (kslice long; slice z writes to c + z*c_slice);
// vec_a, vec_b, vec_c: the operand allows 16-byte accesses (aligned16).
template <class T>
using GemmKernel = void (*)(int64_t m, int64_t n, int64_t k, int64_t kslice, T alpha, const T *a,
                            int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc,
                            int64_t c_slice, bool vec_a, bool vec_b, bool vec_c);

// The kernel allowed its shared memory (allow_smem) on each device: the host stub it was done
// for, by device. Keyed by the stub, not a flag: nvcc 13 gives every translation unit a stub of
// its own for a __global__ template instance (-static-global-template-stub, on by default),
// while this record, a static of an inline template, is one for the program. Where two
// translation units hold the same instance (the tuner's candidates, each built on its own: two
// TMA configurations with one fallback), a flag set through the first stub would leave the
// second without the attribute, and its launch would fail (invalid argument).
struct SmemAsked {
    std::atomic<const void *> stub[64] = {};
};

// Lets `kernel` use smem_bytes of dynamic shared memory on the current device (above 48 KB a
// kernel must ask, once per device and stub; racing threads may both ask: harmless).
template <class Kernel>
cudaError_t allow_smem(Kernel kernel, SmemAsked &asked, int smem_bytes)
{
    int dev = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    const void *stub = reinterpret_cast<const void *>(kernel);
    if (dev < 64 && asked.stub[dev].load(std::memory_order_acquire) == stub) return cudaSuccess;
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (err == cudaSuccess && dev < 64) asked.stub[dev].store(stub, std::memory_order_release);
    return err;
}

// What every launch shares (alpha != 0, k > 0): `kernel` may use smem_bytes of shared memory
// (allow_smem), and its bm x bn block tiles go over the K range cut into
// `splits` slices of whole bk tiles. go(grid, kslice, alpha, beta, c, ldc, c_slice, vec_c)
// launches the kernel: over C itself with one slice; with more, each slice writes its partial
// products to ws (splits * m * n elements, from the caller) and splitk_reduce adds them up in
// order.
template <class T, class Kernel, class Go>
cudaError_t launch_sliced(Kernel kernel, SmemAsked &asked, int smem_bytes, int bm,
                          int bn, int bk, int64_t m, int64_t n, int64_t k, T alpha, T beta, T *c,
                          int64_t ldc, int splits, T *ws, cudaStream_t s, Go &&go)
{
    cudaError_t err = allow_smem(kernel, asked, smem_bytes);
    if (err != cudaSuccess) return err;
    const int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
    if (tiles > 0x7fffffff) return cudaErrorInvalidConfiguration;
    int64_t kslice;
    splits = k_slices(k, bk, ws ? splits : 1, &kslice);
    const int E = sizeof(T);
    const dim3 grid((unsigned)tiles, 1, (unsigned)splits);
    if (splits == 1) {
        go(grid, kslice, alpha, beta, c, ldc, int64_t(0), aligned16(c, ldc, E));
    } else {
        go(grid, kslice, T(1), T(0), ws, m, m * n, aligned16(ws, m, E));
        const int64_t blocks = (m * n + 255) / 256;
        splitk_reduce<T><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, s>>>(
            m, n, splits, ws, alpha, beta, c, ldc);
    }
    return cudaGetLastError();
}

// Launches a GemmKernel (launch_sliced).
template <class T>
cudaError_t launch_tiles(GemmKernel<T> kernel, SmemAsked &asked, int threads,
                         int smem_bytes, int bm, int bn, int bk, int64_t m, int64_t n, int64_t k,
                         T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
                         int64_t ldc, int splits, T *ws, cudaStream_t s)
{
    const bool va = aligned16(a, lda, sizeof(T)), vb = aligned16(b, ldb, sizeof(T));
    return launch_sliced(kernel, asked, smem_bytes, bm, bn, bk, m, n, k, alpha, beta, c, ldc, splits, ws, s,
                         [&](dim3 grid, int64_t kslice, T al, T be, T *cs, int64_t ldcs, int64_t slice, bool vc) {
                             kernel<<<grid, threads, smem_bytes, s>>>(m, n, k, kslice, al, a, lda, b, ldb, be, cs,
                                                                      ldcs, slice, va, vb, vc);
                         });
}

// How many blocks of `kernel` (threads, smem_bytes) run at once on the current device: its SMs
// times the blocks one holds; 0 if unknown. Asked once per device (cache: per kernel).
template <class Kernel>
int resident_blocks(Kernel kernel, SmemAsked &asked, std::atomic<int> (&cache)[64],
                    int threads, int smem_bytes)
{
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev >= 64) return 0;
    if (int known = cache[dev].load(std::memory_order_relaxed)) return known;
    if (allow_smem(kernel, asked, smem_bytes) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes) != cudaSuccess) {
        cudaGetLastError(); // no plan, no error left for the launch to report
        return 0;
    }
    cache[dev].store(sms * per_sm, std::memory_order_relaxed);
    return sms * per_sm;
}

// Launches `kernel` (a GemmKernel, unsplit) over the first tiles of the plan and then sk_kernel
// over the rest, with the workspace ws of streamk_bytes(p, bm, bn, sizeof(T)).
template <class T, class SkKernel>
cudaError_t launch_streamk(GemmKernel<T> kernel, SmemAsked &asked, SkKernel sk_kernel,
                           SmemAsked &asked_sk, const StreamKPlan &p, int threads,
                           int smem_bytes, int bm, int bn, int bk, int64_t m, int64_t n, int64_t k,
                           T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
                           int64_t ldc, void *ws, cudaStream_t s)
{
    cudaError_t err = allow_smem(kernel, asked, smem_bytes);
    if (err == cudaSuccess) err = allow_smem(sk_kernel, asked_sk, smem_bytes);
    if (err != cudaSuccess) return err;
    const bool va = aligned16(a, lda, sizeof(T)), vb = aligned16(b, ldb, sizeof(T));
    const bool vc = aligned16(c, ldc, sizeof(T));
    if (p.first > 0)
        kernel<<<(unsigned)p.first, threads, smem_bytes, s>>>(m, n, k, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                                               0, va, vb, vc);
    StreamK sk;
    err = streamk_args(sk, p, (k + bk - 1) / bk, bm, bn, (int)sizeof(T), ws, s);
    if (err != cudaSuccess) return err;
    sk_kernel<<<(unsigned)p.ctas, threads, smem_bytes, s>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, va, vb,
                                                             vc, sk);
#ifdef FG_TIMELINE
    tl_write(p.first, p.tiles, p.ctas, sk.ktiles, s);
#endif
    return cudaGetLastError();
}

} // namespace fg_kern
