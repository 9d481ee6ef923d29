// driver.cu: the CUDA driver the process already has, and what it tells about pointers.
// Loading the library makes no CUDA call, and neither does a call whose operands cannot be
// device memory: the driver is looked up only once the process has loaded it.
#include "backends/backend.h"
#include "backends/cuda/driver.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

namespace {

// The driver functions we use, from the driver the process already has.
struct Driver {
    CUresult (*attrs)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
    CUresult (*ctx_get)(CUcontext *);
    CUresult (*ctx_set)(CUcontext);
    CUresult (*stream_ctx)(CUstream, CUcontext *);
};
Driver driver_fns;
std::atomic<const Driver *> driver_ready{nullptr};

// How many objects the process has loaded so far (glibc's dlpi_adds), or 0 where the C library
// does not say.
unsigned long long objects_loaded()
{
    unsigned long long adds = 0;
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t size, void *out) -> int {
            if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
                *static_cast<unsigned long long *>(out) = info->dlpi_adds;
            return 1; // the first object says it
        },
        &adds);
    return adds;
}
// The count at the last time the driver was looked for and not found.
std::atomic<unsigned long long> looked_at{0};

// The driver, if it is already loaded. Loading it ourselves would be a CUDA call, and without
// it no pointer of this process can be device memory anyway. Looking (dlopen with RTLD_NOLOAD)
// searches the file system, which takes longer than a small GEMM. So it is done again only
// when objects were loaded since it last failed.
const Driver *driver()
{
    const Driver *d = driver_ready.load(std::memory_order_acquire);
    if (d) return d;
    const unsigned long long adds = objects_loaded();
    if (adds != 0 && adds == looked_at.load(std::memory_order_relaxed)) return nullptr;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) {
        looked_at.store(adds, std::memory_order_relaxed);
        return nullptr;
    }
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!driver_ready.load()) {
        driver_fns.attrs = reinterpret_cast<decltype(Driver::attrs)>(dlsym(h, "cuPointerGetAttributes"));
        driver_fns.ctx_get = reinterpret_cast<decltype(Driver::ctx_get)>(dlsym(h, "cuCtxGetCurrent"));
        driver_fns.ctx_set = reinterpret_cast<decltype(Driver::ctx_set)>(dlsym(h, "cuCtxSetCurrent"));
        driver_fns.stream_ctx = reinterpret_cast<decltype(Driver::stream_ctx)>(dlsym(h, "cuStreamGetCtx"));
        if (driver_fns.attrs && driver_fns.ctx_get && driver_fns.ctx_set && driver_fns.stream_ctx)
            driver_ready.store(&driver_fns, std::memory_order_release);
    }
    pthread_mutex_unlock(&lock);
    return driver_ready.load(); // the handle stays open: the driver is never unloaded under us
}

std::atomic<bool> forked_child{false};

} // namespace

KeepCallerContext::KeepCallerContext()
{
    const Driver *d = driver();
    known_ = !d || d->ctx_get(&saved_) == CUDA_SUCCESS; // no driver: no context is current
}

KeepCallerContext::~KeepCallerContext()
{
    const Driver *d = driver();
    CUcontext now = nullptr;
    if (known_ && d && d->ctx_get(&now) == CUDA_SUCCESS && now != saved_) d->ctx_set(saved_);
}

cudaError_t fg_use_context(void *ctx)
{
    const Driver *d = driver();
    CUcontext primary = nullptr;
    if (!ctx || !d || d->ctx_get(&primary) != CUDA_SUCCESS || primary == ctx) return cudaSuccess;
    return d->ctx_set(static_cast<CUcontext>(ctx)) == CUDA_SUCCESS ? cudaSuccess
                                                                   : cudaErrorInvalidResourceHandle;
}

void *fg_stream_context(cudaStream_t s)
{
    const Driver *d = driver();
    CUcontext ctx = nullptr;
    if (s && d && d->stream_ctx(static_cast<CUstream>(s), &ctx) == CUDA_SUCCESS) return ctx;
    return nullptr;
}

void fg_driver_forked() { forked_child = true; }

namespace {

// The start of the brk heap (malloc's main arena), from /proc/self/maps at the first look: 1 if
// it cannot be read. Memory between it and the current break is ordinary host memory, never
// device or managed memory, so its pointers need no driver query (a query per operand costs a
// noticeable part of a small GEMM).
std::atomic<uintptr_t> heap_start{0};

uintptr_t find_heap_start()
{
    uintptr_t start = 1;
    if (FILE *f = fopen("/proc/self/maps", "re")) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strstr(line, "[heap]")) {
                start = static_cast<uintptr_t>(strtoull(line, nullptr, 16));
                break;
            }
        fclose(f);
        if (start == 1) start = reinterpret_cast<uintptr_t>(sbrk(0)); // no heap yet: it starts there
    }
    return start == static_cast<uintptr_t>(-1) || start == 0 ? 1 : start;
}

// The brk heap as it is now: [lo, hi), empty when its start is not known.
struct BrkHeap {
    uintptr_t lo, hi;
    BrkHeap()
    {
        lo = heap_start.load(std::memory_order_relaxed);
        if (!lo) heap_start.store(lo = find_heap_start(), std::memory_order_relaxed);
        hi = lo > 1 ? reinterpret_cast<uintptr_t>(sbrk(0)) : lo;
    }
    bool holds(const void *p) const
    {
        const uintptr_t q = reinterpret_cast<uintptr_t>(p);
        return q >= lo && q < hi;
    }
};

fg_mem_kind kind_of(const Driver *d, const BrkHeap &heap, const void *p, int *ordinal, void **ctx)
{
    if (!p || heap.holds(p)) return FG_MEM_HOST;
    unsigned type = 0, managed = 0;
    int dev = -1;
    CUcontext c = nullptr;
    CUpointer_attribute at[4] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_CONTEXT};
    void *data[4] = {&type, &managed, &dev, &c};
    // Unknown (host) pointers succeed with zeroed attributes; an uninitialised driver fails.
    if (d->attrs(4, at, data, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS) return FG_MEM_HOST;
    if (managed) return FG_MEM_MANAGED;
    if (type == CU_MEMORYTYPE_DEVICE) {
        *ordinal = dev;
        *ctx = c; // NULL for stream-ordered (pool) allocations, which belong to no context
        return FG_MEM_DEVICE;
    }
    return FG_MEM_HOST; // pageable, or pinned host memory: copied like any host operand
}

} // namespace

void fg_gpu_classify(const fg_gemm_args *g, fg_operands *ops)
{
    ops->a = ops->b = ops->c = FG_MEM_HOST;
    ops->device = -1;
    ops->context = nullptr;
    const bool ab = fg_reads_ab(g); // otherwise A and B are never read: not even classified
    const BrkHeap heap;
    if (heap.holds(g->c) && (!ab || (heap.holds(g->a) && heap.holds(g->b)))) return; // no query
    const Driver *drv = forked_child ? nullptr : driver(); // no device memory in the child
    if (!drv) return;
    int dev[3] = {-1, -1, -1};
    void *ctx[3] = {nullptr, nullptr, nullptr};
    if (ab) {
        ops->a = kind_of(drv, heap, g->a, &dev[0], &ctx[0]);
        ops->b = kind_of(drv, heap, g->b, &dev[1], &ctx[1]);
    }
    ops->c = kind_of(drv, heap, g->c, &dev[2], &ctx[2]);
    bool one_context = true;
    for (int i = 0; i < 3; i++) {
        if (dev[i] < 0) continue;
        if (ops->device == -1) ops->device = dev[i];
        else if (ops->device != dev[i]) ops->device = -2;
        if (ctx[i] && ops->context && ctx[i] != ops->context) one_context = false;
        if (ctx[i] && !ops->context) ops->context = ctx[i];
    }
    if (!one_context) ops->context = nullptr; // several contexts of one device: the primary
}
