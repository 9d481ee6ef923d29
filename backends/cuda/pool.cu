// pool.cu: the devices' memory pools (cuda_backend.h), for the pipeline's buffers and the
// kernels' workspaces, so that the hot path of a call makes no cudaMalloc.
#include "backends/cuda/cuda_backend.h"

#include <mutex>

namespace {
std::once_flag pool_once[FG_MAX_DEVICES];
cudaMemPool_t pools[FG_MAX_DEVICES];
} // namespace

// A pool of our own, so that the application's default pool keeps its settings. It keeps up to
// a quarter of the device's memory between calls (the rest goes back at synchronisation).
cudaMemPool_t fg_cuda_pool(int dev)
{
    if (dev < 0 || dev >= FG_MAX_DEVICES) return nullptr;
    std::call_once(pool_once[dev], [dev] {
        cudaMemPoolProps props = {};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        cudaMemPool_t p;
        size_t free_b = 0, total_b = 0;
        if (cudaMemPoolCreate(&p, &props) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
            cudaGetLastError();
            return;
        }
        uint64_t keep = total_b / 4;
        cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
        cudaGetLastError();
        pools[dev] = p;
    });
    return pools[dev];
}

cudaError_t fg_pool_alloc(void **p, size_t bytes, cudaStream_t s)
{
    int dev = -1;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    cudaMemPool_t pool = fg_cuda_pool(dev);
    return pool ? cudaMallocFromPoolAsync(p, bytes, pool, s) : cudaMallocAsync(p, bytes, s);
}
