// runtime.cu: the GPU side of the dispatcher. Classifies operands through the CUDA driver the
// process already has, probes the devices once, runs a GEMM on the GPU (device operands in
// place; host operands through the pipeline of cuda/offload.cu), and stages device operands
// through the host when the GPU fails.
// Nothing here runs before the first GEMM that needs it: loading the library makes no CUDA call.
// A child forked after the parent used CUDA cannot use it (CUDA does not survive fork()): its
// GEMMs run on the CPU.
#include "kernels.h"

#include <cuda.h> // driver types only: the driver is never linked, only looked up when loaded
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
// searches the file system: 2-20 microseconds, more than a small GEMM. So it is done again only
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

// The calling thread's current CUDA context, put back when a call leaves the library.
// cudaSetDevice makes the device's primary context current; an OpenMP runtime (libgomp) runs
// its target regions in a context of its own that it expects to find current, and its next
// kernel launch fails ("invalid resource handle") when it finds the primary one instead.
class KeepCallerContext {
  public:
    KeepCallerContext()
    {
        const Driver *d = driver();
        known_ = !d || d->ctx_get(&saved_) == CUDA_SUCCESS; // no driver: no context is current
    }
    ~KeepCallerContext()
    {
        const Driver *d = driver();
        CUcontext now = nullptr;
        if (known_ && d && d->ctx_get(&now) == CUDA_SUCCESS && now != saved_) d->ctx_set(saved_);
    }
    KeepCallerContext(const KeepCallerContext &) = delete;
    KeepCallerContext &operator=(const KeepCallerContext &) = delete;

  private:
    CUcontext saved_ = nullptr;
    bool known_ = false;
};

// Makes ctx current instead of the primary context that cudaSetDevice made current, when the
// operands belong to another context of the device (OpenMP's): their producers' work is
// synchronised there and the kernels run there.
cudaError_t use_context(void *ctx)
{
    const Driver *d = driver();
    CUcontext primary = nullptr;
    if (!ctx || !d || d->ctx_get(&primary) != CUDA_SUCCESS || primary == ctx) return cudaSuccess;
    return d->ctx_set(static_cast<CUcontext>(ctx)) == CUDA_SUCCESS ? cudaSuccess
                                                                   : cudaErrorInvalidResourceHandle;
}

// The start of the brk heap (malloc's main arena), from /proc/self/maps at the first look: 1 if
// it cannot be read. Memory between it and the current break is ordinary host memory, never
// device or managed memory, so its pointers need no driver query (3 x 0.15 us a call, about 10%
// of a 64^3 sgemm_ on the H100 host).
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

constexpr int MAX_DEVICES = 64;
pthread_once_t probe_once = PTHREAD_ONCE_INIT;
int device_count = 0;
std::atomic<bool> device_broken[MAX_DEVICES];
std::atomic<bool> warned_device_range{false};

std::atomic<bool> forked_child{false};
void child_after_fork() { forked_child = true; }

void probe()
{
    pthread_atfork(nullptr, nullptr, child_after_fork);
    if (cudaGetDeviceCount(&device_count) != cudaSuccess) device_count = 0;
    cudaGetLastError();
    if (device_count > MAX_DEVICES) device_count = MAX_DEVICES;
}

// Errors after which the device will not work for this process.
bool permanent(cudaError_t e)
{
    return e == cudaErrorNoKernelImageForDevice || e == cudaErrorInsufficientDriver ||
           e == cudaErrorNoDevice || e == cudaErrorDevicesUnavailable ||
           e == cudaErrorInvalidDevice || e == cudaErrorInitializationError ||
           e == cudaErrorUnsupportedPtxVersion;
}

// The name of the failing call, for the one-line reason: "cudaMallocAsync(&b, ...)" -> its name.
void describe(char *why, size_t len, const char *call, cudaError_t e)
{
    int n = 0;
    while (call[n] && call[n] != '(') n++;
    snprintf(why, len, "%.*s: %s", n, call, cudaGetErrorString(e));
}

pthread_once_t kernel_once = PTHREAD_ONCE_INIT;
bool forced_tiled = false;
int forced_s = -1, forced_d = -1; // a configuration by FASTGEMM_KERNEL, or -1 (the table's)
bool dmma_ok[MAX_DEVICES];        // FP64 tensor cores (sm_80 and up)

void pick_forced_kernel()
{
    pthread_once(&probe_once, probe);
    for (int d = 0; d < device_count; d++) {
        int major = 0;
        dmma_ok[d] = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) ==
                         cudaSuccess && major >= 8;
    }
    cudaGetLastError();
    const char *name = fg_get_config()->kernel;
    if (!name) return;
    if (!strcmp(name, "tiled_64x64x16")) forced_tiled = true;
    else if ((forced_s = fg_cuda_sgemm_config(name)) < 0 && (forced_d = fg_cuda_dgemm_config(name)) < 0)
        fg_warn("FASTGEMM_KERNEL='%s' is no kernel of this build; using the table", name);
}

} // namespace

// The kernel for one GEMM on device dev: a forced one where it applies (the tiled kernel serves
// both types, the others one), else by type and shape; DGEMM below sm_80 takes the tiled
// kernel (SIMT FP64).
cudaError_t fg_run_gemm(int dev, const fg_gemm_args *g, const void *a, int64_t lda, const void *b,
                        int64_t ldb, void *c, int64_t ldc, cudaStream_t s)
{
    pthread_once(&kernel_once, pick_forced_kernel);
    const int split = fg_get_config()->split_k;
    const bool dmma = dev >= 0 && dev < MAX_DEVICES && dmma_ok[dev];
    if (forced_tiled || (g->dt == FG_F64 && !dmma))
        return fg_cuda_gemm_tiled(g, a, lda, b, ldb, c, ldc, s);
    if (g->dt == FG_F64) return fg_cuda_dgemm_dmma(g, forced_d, split, a, lda, b, ldb, c, ldc, s);
    return fg_cuda_sgemm_simt(g, forced_s, split, a, lda, b, ldb, c, ldc, s);
}

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

int fg_gpu_usable(int *device)
{
    pthread_once(&probe_once, probe);
    if (device_count <= 0 || forked_child) return 0;
    if (*device >= device_count) {
        if (!warned_device_range.exchange(true))
            fg_warn("device %d (FASTGEMM_DEVICE, or OpenMP's default device) is not one of the "
                    "%d CUDA device(s) of the process; using 0", *device, device_count);
        *device = 0;
    }
    return !device_broken[*device].load();
}

#define FG_CUDA_TRY(call)                                                                       \
    do {                                                                                        \
        err = (call);                                                                           \
        if (err != cudaSuccess) {                                                               \
            failed_call = #call;                                                                \
            goto fail;                                                                          \
        }                                                                                       \
    } while (0)

int fg_gpu_gemm(const fg_gemm_args *g, const fg_operands *ops, int dev, char *why, size_t whylen)
{
    KeepCallerContext keep;
    cudaStream_t s = cudaStreamPerThread; // one stream per calling thread: no shared state
    const bool reads_ab = fg_reads_ab(g);
    const bool host_operand = (reads_ab && (ops->a == FG_MEM_HOST || ops->b == FG_MEM_HOST)) ||
                              ops->c == FG_MEM_HOST;
    cudaError_t err = cudaSuccess;
    const char *failed_call = "";
    bool c_written = false;

    FG_CUDA_TRY(cudaSetDevice(dev));
    // Device operands of another context than the primary one (an OpenMP runtime's): the work
    // that produced them is synchronised in that context, and a call on device operands alone
    // runs there.
    FG_CUDA_TRY(use_context(ops->context));
    // BLAS calls are synchronous: operands already on the device must be final before we read
    // them, whatever stream the application wrote them on.
    if (ops->a != FG_MEM_HOST || ops->b != FG_MEM_HOST || ops->c != FG_MEM_HOST)
        FG_CUDA_TRY(cudaDeviceSynchronize());
    if (host_operand) {
        // The pipeline's streams and buffers belong to the primary context; the kernels there
        // read device operands of another context of the same device in place.
        if (ops->context) FG_CUDA_TRY(cudaSetDevice(dev));
        bool broken = false;
        int rc = fg_offload_gemm(g, ops, dev, &broken, why, whylen);
        if (broken) device_broken[dev] = true;
        return rc;
    }
    c_written = true; // from the launch on, the caller's C may change
    if (reads_ab) FG_CUDA_TRY(fg_run_gemm(dev, g, g->a, g->lda, g->b, g->ldb, g->c, g->ldc, s));
    else FG_CUDA_TRY(fg_cuda_scale_c(g, g->c, g->ldc, s));
    FG_CUDA_TRY(cudaStreamSynchronize(s));
    return FG_GPU_OK;

fail:
    cudaGetLastError();
    // A sticky error (a kernel fault) also fails the next synchronisation: the device is lost
    // for this process, and later calls go to the CPU.
    if (permanent(err) || cudaStreamSynchronize(s) != cudaSuccess) device_broken[dev] = true;
    cudaGetLastError();
    describe(why, whylen, failed_call, err);
    return c_written ? FG_GPU_FAILED_C_WRITTEN : FG_GPU_FAILED;
}

double fg_gpu_kernel_rate(int dev, fg_dtype dt, int64_t n)
{
    KeepCallerContext keep;
    const size_t bytes = fg_elem_size(dt) * (size_t)(n * n);
    void *a = nullptr, *b = nullptr, *c = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    float ms = -1, best = 1e30f;
    fg_gemm_args g = {dt, 'N', 'N', n, n, n, n, n, n, 1.0, 0.0, nullptr, nullptr, nullptr, "calibrate"};
    cudaStream_t s = cudaStreamPerThread;
    bool ok = cudaSetDevice(dev) == cudaSuccess && cudaMalloc(&a, bytes) == cudaSuccess &&
              cudaMalloc(&b, bytes) == cudaSuccess && cudaMalloc(&c, bytes) == cudaSuccess &&
              cudaMemset(a, 0, bytes) == cudaSuccess && cudaMemset(b, 0, bytes) == cudaSuccess &&
              cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess;
    for (int r = 0; ok && r < 4; r++) { // the first is a warm-up
        ok = cudaEventRecord(e0, s) == cudaSuccess && fg_run_gemm(dev, &g, a, n, b, n, c, n, s) == cudaSuccess &&
             cudaEventRecord(e1, s) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
             cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
        if (r > 0 && ms < best) best = ms;
    }
    cudaFree(a), cudaFree(b), cudaFree(c);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaGetLastError();
    return ok ? 2.0 * (double)n * (double)n * (double)n / (best * 1e-3) : -1;
}

void fg_gpu_name(int device, char *name, size_t len)
{
    KeepCallerContext keep;
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        cudaGetLastError();
        snprintf(name, len, "%s", "");
        return;
    }
    snprintf(name, len, "%s", p.name);
}

int fg_gpu_stream_device(void *stream)
{
    int dev = -1;
    if (stream && cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &dev) != cudaSuccess) {
        cudaGetLastError();
        dev = -1;
    }
    return dev;
}

int fg_gpu_gemm_async(const fg_gemm_args *g, int dev, void *stream, char *why, size_t whylen)
{
    KeepCallerContext keep;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t err = cudaSetDevice(dev);
    const char *failed_call = "cudaSetDevice";
    // A stream of another context (an OpenMP runtime's, or one made with the driver API):
    // launched in that context.
    const Driver *d = driver();
    CUcontext ctx = nullptr;
    if (err == cudaSuccess && s && d && d->stream_ctx(static_cast<CUstream>(s), &ctx) == CUDA_SUCCESS)
        err = use_context(ctx);
    if (err == cudaSuccess) {
        failed_call = "kernel launch";
        err = fg_reads_ab(g) ? fg_run_gemm(dev, g, g->a, g->lda, g->b, g->ldb, g->c, g->ldc, s)
                                        : fg_cuda_scale_c(g, g->c, g->ldc, s);
    }
    if (err == cudaSuccess) return 0;
    cudaGetLastError();
    if (permanent(err)) device_broken[dev] = true;
    describe(why, whylen, failed_call, err);
    return 1;
}

#undef FG_CUDA_TRY
#define FG_CUDA_TRY(call)                                                                       \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            describe(why, whylen, #call, e_);                                                   \
            goto out;                                                                           \
        }                                                                                       \
    } while (0)

int fg_gpu_staged_cpu_gemm(const fg_gemm_args *g, const fg_operands *ops, char *why,
                           size_t whylen)
{
    const size_t es = fg_elem_size(g->dt);
    const bool reads_ab = fg_reads_ab(g), reads_c = g->beta != 0;
    const int64_t m = g->m, n = g->n;
    const int64_t ra = fg_rows_a(g), ca = fg_cols_a(g), rb = fg_rows_b(g), cb = fg_cols_b(g);
    fg_gemm_args h = *g;
    void *ha = nullptr, *hb = nullptr, *hc = nullptr;
    int rc = -1;
    KeepCallerContext keep;

    if (ops->device >= 0 && cudaSetDevice(ops->device) == cudaSuccess) use_context(ops->context);
    cudaDeviceSynchronize(); // managed operands are read in place by the CPU: settle them first
    cudaGetLastError();
    if (reads_ab && ops->a == FG_MEM_DEVICE) {
        if (!(ha = malloc((size_t)(ra * ca) * es))) goto oom;
        FG_CUDA_TRY(cudaMemcpy2D(ha, ra * es, g->a, g->lda * es, ra * es, ca, cudaMemcpyDefault));
        h.a = ha;
        h.lda = ra;
    }
    if (reads_ab && ops->b == FG_MEM_DEVICE) {
        if (!(hb = malloc((size_t)(rb * cb) * es))) goto oom;
        FG_CUDA_TRY(cudaMemcpy2D(hb, rb * es, g->b, g->ldb * es, rb * es, cb, cudaMemcpyDefault));
        h.b = hb;
        h.ldb = rb;
    }
    if (ops->c == FG_MEM_DEVICE) {
        if (!(hc = malloc((size_t)(m * n) * es))) goto oom;
        if (reads_c)
            FG_CUDA_TRY(cudaMemcpy2D(hc, m * es, g->c, g->ldc * es, m * es, n, cudaMemcpyDefault));
        h.c = hc;
        h.ldc = m;
    }
    fg_cpu_gemm(&h);
    if (hc) FG_CUDA_TRY(cudaMemcpy2D(g->c, g->ldc * es, hc, m * es, m * es, n, cudaMemcpyDefault));
    rc = 0;
    goto out;
oom:
    snprintf(why, whylen, "out of host memory");
out:
    cudaGetLastError();
    free(ha);
    free(hb);
    free(hc);
    return rc;
}
