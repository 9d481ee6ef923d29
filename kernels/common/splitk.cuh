// splitk.cuh: split-K: the slices of k and the reduction of their partial products.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

namespace fg_kern {

// Split-K: slice z of the k range holds its partial products at ws + z*m*n (ld m). C = alpha *
// (the slices summed in order) + beta*C: the same bits on every run. beta = 0 never reads C.
template <class T>
__global__ void splitk_reduce(int64_t m, int64_t n, int splits, const T *__restrict__ ws, T alpha,
                              T beta, T *__restrict__ c, int64_t ldc)
{
    const int64_t mn = m * n;
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < mn;
         idx += (int64_t)gridDim.x * blockDim.x) {
        T s = ws[idx];
        for (int z = 1; z < splits; z++) s += ws[z * mn + idx];
        T *cij = c + idx % m + idx / m * ldc;
        *cij = beta == T(0) ? alpha * s : alpha * s + beta * *cij;
    }
}

// Split-K: `splits` slices asked of k, made of whole k-tiles of bk and none empty. Returns the
// slices made (what a workspace must hold) and sets the k-length of each (the last may be short).
inline int k_slices(int64_t k, int bk, int splits, int64_t *kslice)
{
    const int64_t ktiles = (k + bk - 1) / bk;
    if (splits > ktiles) splits = (int)ktiles;
    if (splits < 1) splits = 1;
    *kslice = (ktiles + splits - 1) / splits * bk;
    return (int)((k + *kslice - 1) / *kslice);
}

} // namespace fg_kern
