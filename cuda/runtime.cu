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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

namespace {

using get_attrs_fn = CUresult (*)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
std::atomic<get_attrs_fn> driver_get_attrs{nullptr};

// cuPointerGetAttributes of a driver that is already loaded. Loading it ourselves would be a
// CUDA call, and without it no pointer of this process can be device memory anyway.
get_attrs_fn driver_query()
{
    get_attrs_fn f = driver_get_attrs.load(std::memory_order_acquire);
    if (f) return f;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return nullptr;
    f = reinterpret_cast<get_attrs_fn>(dlsym(h, "cuPointerGetAttributes"));
    if (f) driver_get_attrs.store(f, std::memory_order_release);
    return f; // the handle stays open: the driver is never unloaded under us
}

fg_mem_kind kind_of(get_attrs_fn f, const void *p, int *ordinal)
{
    if (!p) return FG_MEM_HOST;
    unsigned type = 0, managed = 0;
    int dev = -1;
    CUpointer_attribute at[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data[3] = {&type, &managed, &dev};
    // Unknown (host) pointers succeed with zeroed attributes; an uninitialised driver fails.
    if (f(3, at, data, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS) return FG_MEM_HOST;
    if (managed) return FG_MEM_MANAGED;
    if (type == CU_MEMORYTYPE_DEVICE) {
        *ordinal = dev;
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
    get_attrs_fn f = forked_child ? nullptr : driver_query(); // no device memory in the child
    if (!f) return;
    int dev[3] = {-1, -1, -1};
    if (fg_reads_ab(g)) { // otherwise A and B are never read: not even classified
        ops->a = kind_of(f, g->a, &dev[0]);
        ops->b = kind_of(f, g->b, &dev[1]);
    }
    ops->c = kind_of(f, g->c, &dev[2]);
    for (int d : dev) {
        if (d < 0) continue;
        if (ops->device == -1) ops->device = d;
        else if (ops->device != d) ops->device = -2;
    }
}

int fg_gpu_usable(int *device)
{
    pthread_once(&probe_once, probe);
    if (device_count <= 0 || forked_child) return 0;
    if (*device >= device_count) {
        if (!warned_device_range.exchange(true))
            fg_warn("FASTGEMM_DEVICE=%d but the process sees %d CUDA device(s); using 0",
                    *device, device_count);
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
    cudaStream_t s = cudaStreamPerThread; // one stream per calling thread: no shared state
    const bool reads_ab = fg_reads_ab(g);
    cudaError_t err = cudaSuccess;
    const char *failed_call = "";
    bool c_written = false;

    FG_CUDA_TRY(cudaSetDevice(dev));
    // BLAS calls are synchronous: operands already on the device must be final before we read
    // them, whatever stream the application wrote them on.
    if (ops->a != FG_MEM_HOST || ops->b != FG_MEM_HOST || ops->c != FG_MEM_HOST)
        FG_CUDA_TRY(cudaDeviceSynchronize());
    if ((reads_ab && (ops->a == FG_MEM_HOST || ops->b == FG_MEM_HOST)) || ops->c == FG_MEM_HOST) {
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
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t err = cudaSetDevice(dev);
    const char *failed_call = "cudaSetDevice";
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
