// offload_ring.cu: the devices' staging rings (offload_ring.h).
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/offload_ring.h"

namespace fg_offload {

// Made once and never destroyed: a GEMM of another thread may still use its device's ring
// while the process exits.
Context &context(int dev)
{
    static Context *const contexts = new Context[FG_MAX_DEVICES];
    return contexts[dev];
}

cudaError_t Context::init(size_t pinned_bytes, size_t slot_max)
{
    if (ready) return cudaSuccess;
    // Slots of up to slot_max (a full-speed DMA), at least four of them.
    slot_bytes = std::min<size_t>(slot_max, pinned_bytes / 4) & ~(size_t)4095;
    if (slot_bytes < 4096) slot_bytes = 4096;
    const size_t n = std::max<size_t>(4, pinned_bytes / slot_bytes);
    char *ring = nullptr;
    cudaError_t err;
    [[maybe_unused]] const char *failed_call; // FG_CUDA_TRY's; the caller reports the error alone
    FG_CUDA_TRY(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    FG_CUDA_TRY(cudaStreamCreateWithFlags(&comp, cudaStreamNonBlocking));
    FG_CUDA_TRY(cudaStreamCreateWithFlags(&comp2, cudaStreamNonBlocking));
    FG_CUDA_TRY(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    FG_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void **>(&ring), n * slot_bytes, cudaHostAllocDefault));
    for (size_t i = 0; i < n; i++) {
        Slot s = {ring + i * slot_bytes, nullptr, -1, 0};
        FG_CUDA_TRY(cudaEventCreateWithFlags(&s.ev, cudaEventDisableTiming));
        slots.push_back(s);
    }
    ready = true;
    return cudaSuccess;
fail:
    for (Slot &t : slots) cudaEventDestroy(t.ev);
    slots.clear();
    if (ring) cudaFreeHost(ring);
    for (cudaStream_t *s : {&down, &comp2, &comp, &up})
        if (*s) {
            cudaStreamDestroy(*s);
            *s = nullptr;
        }
    return err;
}

cudaError_t Context::reserve_events(size_t n)
{
    while (events.size() < n) {
        cudaEvent_t e;
        cudaError_t err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
        if (err != cudaSuccess) return err;
        events.push_back(e);
    }
    return cudaSuccess;
}

cudaError_t Context::reserve_statuses(size_t n)
{
    if (n <= status_count) return cudaSuccess;
    n = std::max<size_t>(n, 64);
    void *p = nullptr;
    const cudaError_t err = cudaHostAlloc(&p, n * sizeof(fg_ozaki_status), cudaHostAllocDefault);
    if (err != cudaSuccess) return err;
    if (statuses) cudaFreeHost(statuses);
    statuses = static_cast<fg_ozaki_status *>(p);
    status_count = n;
    return cudaSuccess;
}

} // namespace fg_offload
