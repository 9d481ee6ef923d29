// runtime.cu: the CUDA backend's entry points. Probes the devices once, runs a GEMM on the GPU
// (device operands in place; host operands through the pipeline of offload.cu), launches the
// kernel the settings and the tables choose, and enqueues the stream form's calls.
// A child forked after the parent used CUDA cannot use it (CUDA does not survive fork()): its
// GEMMs run on the CPU.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/exit_gate.h"
#include "kernels/kernels.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <atomic>

namespace {

pthread_once_t probe_once = PTHREAD_ONCE_INIT;
int device_count = 0;
std::atomic<bool> device_broken[FG_MAX_DEVICES];
std::atomic<bool> warned_device_range{false};
std::atomic<bool> forked_child{false};
bool dmma_ok[FG_MAX_DEVICES]; // FP64 tensor cores (sm_80 and up)

void child_after_fork()
{
    forked_child = true;
    fg_driver_forked();
}

void probe()
{
    pthread_atfork(nullptr, nullptr, child_after_fork);
    if (cudaGetDeviceCount(&device_count) != cudaSuccess) device_count = 0;
    cudaGetLastError();
    if (device_count > 0) fg_exit_gate_arm(); // the CUDA runtime is set up: its exit handlers are in
    if (device_count > FG_MAX_DEVICES) device_count = FG_MAX_DEVICES;
    for (int d = 0; d < device_count; d++) {
        int major = 0;
        dmma_ok[d] = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) == cudaSuccess &&
                     major >= 8;
    }
    cudaGetLastError();
}

// Errors after which the device will not work for this process.
bool permanent(cudaError_t e)
{
    return e == cudaErrorNoKernelImageForDevice || e == cudaErrorInsufficientDriver ||
           e == cudaErrorNoDevice || e == cudaErrorDevicesUnavailable ||
           e == cudaErrorInvalidDevice || e == cudaErrorInitializationError ||
           e == cudaErrorUnsupportedPtxVersion;
}

// FASTGEMM_KERNEL, resolved once: a kernel family and configuration, or FG_FAMILY_ANY (the
// tables' choice).
pthread_once_t forced_once = PTHREAD_ONCE_INIT;
const char *forced_name;
int forced_family = FG_FAMILY_ANY, forced_config = -1;

void resolve_forced()
{
    if (forced_name && fg_kernel_find(forced_name, &forced_family, &forced_config) != 0) {
        forced_family = FG_FAMILY_ANY, forced_config = -1;
        fg_warn("FASTGEMM_KERNEL='%s' is no kernel of this build; using the table", forced_name);
    }
}

} // namespace

void fg_cuda_describe(char *why, size_t len, const char *call, cudaError_t e)
{
    int n = 0;
    while (call[n] && call[n] != '(') n++;
    snprintf(why, len, "%.*s: %s", n, call, cudaGetErrorString(e));
}

// The forced family (FASTGEMM_KERNEL) for g's type, or FG_FAMILY_ANY with *config -1. A forced
// configuration serves its type only; the tiled kernel serves both.
static int forced_for(const fg_settings *set, const fg_gemm_args *g, int *config)
{
    forced_name = set->kernel; // the same every call: the settings are read once
    pthread_once(&forced_once, resolve_forced);
    int family = forced_family;
    *config = forced_config;
    if ((family == FG_FAMILY_SIMT && g->dt != FG_F32) || (family == FG_FAMILY_DMMA && g->dt != FG_F64))
        family = FG_FAMILY_ANY, *config = -1;
    return family;
}

bool fg_ozaki_wanted(const fg_settings *set, const fg_gemm_args *g)
{
    int config;
    if (forced_for(set, g, &config) != FG_FAMILY_ANY) return false;
    const int mode = g->dt == FG_F64 ? set->ozaki_d : set->ozaki;
    return mode == 1 || (mode == 2 && fg_kernel_ozaki_pays(g));
}

cudaError_t fg_run_gemm(int dev, const fg_settings *set, const fg_gemm_args *g, const void *a,
                        int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc, cudaStream_t s,
                        bool ozaki, const char **note)
{
    if (note) *note = nullptr;
    fg_kernel_timeline_file = set->timeline_file;
    int config;
    const int family = forced_for(set, g, &config);
    if (ozaki && fg_ozaki_wanted(set, g)) { // FASTGEMM_OZAKI=on, or auto where it pays
        bool done = false;
        const char *said = nullptr;
        const cudaError_t e = fg_run_ozaki(g, a, lda, b, ldb, c, ldc, s, &done, &said);
        if (note) *note = said;
        if (e != cudaSuccess || done) return e;
    }
    const bool dmma = dev >= 0 && dev < FG_MAX_DEVICES && dmma_ok[dev];
    // Workspace for split-K partial products or stream-K's, at most this much (else neither).
    constexpr size_t max_ws = (size_t)256 << 20;
    // Operands that rule out 16-byte copies, copied aligned first where it pays (pack.cu).
    fg_packed p = {a, b, lda, ldb, a, b, lda, ldb, nullptr, nullptr};
    fg_pack_operands(set, g, dmma, &p, s);
    fg_kernel_plan plan;
    cudaError_t err = fg_kernel_plan_gemm(g, p.a, p.lda, p.b, p.ldb, family, config, set->split_k,
                                          set->stream_k, set->choice, dmma, max_ws, &plan);
    void *ws = nullptr;
    if (err == cudaSuccess && plan.ws_bytes > 0 && fg_pool_alloc(&ws, plan.ws_bytes, s) != cudaSuccess) {
        cudaGetLastError(); // no room: the same kernel without workspace
        ws = nullptr;
        fg_kernel_plan_unsplit(&plan);
    }
    if (err == cudaSuccess) err = fg_kernel_launch(&plan, g, p.a, p.lda, p.b, p.ldb, c, ldc, ws, s);
    if (ws) {
        const cudaError_t freed = cudaFreeAsync(ws, s);
        if (err == cudaSuccess) err = freed;
    }
    const cudaError_t unpacked = fg_unpack(&p, s);
    return err == cudaSuccess ? unpacked : err;
}

cudaError_t fg_run_scale_c(const fg_gemm_args *g, void *c, int64_t ldc, cudaStream_t s)
{
    return fg_kernel_scale_c(g, c, ldc, s);
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

int fg_gpu_warm(int device) { return fg_offload_warm(device); }

int fg_gpu_kernel_known(const char *name)
{
    int family, config;
    return fg_kernel_find(name, &family, &config) == 0;
}

// The process is exiting: the call goes to the CPU (exit_gate.h).
static int exiting(char *why, size_t whylen)
{
    snprintf(why, whylen, "the process is exiting");
    return FG_FAILED;
}

int fg_gpu_gemm(const fg_call *call, char *why, size_t whylen)
{
    ExitGate gate;
    if (!gate.open()) return exiting(why, whylen);
    KeepCallerContext keep;
    const fg_gemm_args *g = call->g;
    const fg_operands *ops = &call->ops;
    const int dev = call->device;
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
    FG_CUDA_TRY(fg_use_context(ops->context));
    // BLAS calls are synchronous: operands already on the device must be final before we read
    // them, whatever stream the application wrote them on.
    if (ops->a != FG_MEM_HOST || ops->b != FG_MEM_HOST || ops->c != FG_MEM_HOST)
        FG_CUDA_TRY(cudaDeviceSynchronize());
    if (host_operand) {
        // The pipeline's streams and buffers belong to the primary context; the kernels there
        // read device operands of another context of the same device in place.
        if (ops->context) FG_CUDA_TRY(cudaSetDevice(dev));
        bool broken = false;
        const int rc = fg_offload_gemm(call, dev, &broken, why, whylen);
        if (broken) device_broken[dev] = true;
        if (rc == FG_OK) fg_exit_gate_arm(); // again, now that a GEMM has set up everything
        return rc;
    }
    c_written = true; // from the launch on, the caller's C may change
    if (reads_ab) {
        const char *note = nullptr;
        FG_CUDA_TRY(fg_run_gemm(dev, call->set, g, g->a, g->lda, g->b, g->ldb, g->c, g->ldc, s, true, &note));
        if (note) snprintf(why, whylen, "%s", note);
    } else {
        FG_CUDA_TRY(fg_run_scale_c(g, g->c, g->ldc, s));
    }
    FG_CUDA_TRY(cudaStreamSynchronize(s));
    fg_exit_gate_arm(); // again, now that a GEMM has set up everything the runtime makes
    return FG_OK;

fail:
    cudaGetLastError();
    // A sticky error (a kernel fault) also fails the next synchronisation: the device is lost
    // for this process, and later calls go to the CPU.
    if (permanent(err) || cudaStreamSynchronize(s) != cudaSuccess) device_broken[dev] = true;
    cudaGetLastError();
    fg_cuda_describe(why, whylen, failed_call, err);
    return c_written ? FG_FAILED_C_WRITTEN : FG_FAILED;
}

int fg_gpu_gemm_async(const fg_call *call, void *stream, char *why, size_t whylen)
{
    ExitGate gate;
    if (!gate.open()) {
        exiting(why, whylen);
        return 1;
    }
    KeepCallerContext keep;
    const fg_gemm_args *g = call->g;
    const int dev = call->device;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t err = cudaSuccess;
    const char *failed_call = "";
    FG_CUDA_TRY(cudaSetDevice(dev));
    // A stream of another context (an OpenMP runtime's, or one made with the driver API):
    // launched in that context.
    FG_CUDA_TRY(fg_use_context(fg_stream_context(s)));
    if (fg_reads_ab(g)) FG_CUDA_TRY(fg_run_gemm(dev, call->set, g, g->a, g->lda, g->b, g->ldb, g->c, g->ldc, s, true));
    else FG_CUDA_TRY(fg_run_scale_c(g, g->c, g->ldc, s));
    return 0;
fail:
    cudaGetLastError();
    if (permanent(err)) device_broken[dev] = true;
    fg_cuda_describe(why, whylen, failed_call, err);
    return 1;
}

double fg_gpu_kernel_rate(const fg_settings *set, int dev, fg_dtype dt, int64_t n)
{
    ExitGate gate;
    if (!gate.open()) return -1;
    KeepCallerContext keep;
    const size_t bytes = fg_elem_size(dt) * (size_t)(n * n);
    void *a = nullptr, *b = nullptr, *c = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    float ms = -1, best = 1e30f;
    fg_gemm_args g = {dt, 'N', 'N', n, n, n, n, n, n, 1.0, 0.0, nullptr, nullptr, nullptr, "calibrate", FG_ABI_BLAS};
    cudaStream_t s = cudaStreamPerThread;
    bool ok = cudaSetDevice(dev) == cudaSuccess && cudaMalloc(&a, bytes) == cudaSuccess &&
              cudaMalloc(&b, bytes) == cudaSuccess && cudaMalloc(&c, bytes) == cudaSuccess &&
              cudaMemset(a, 0, bytes) == cudaSuccess && cudaMemset(b, 0, bytes) == cudaSuccess &&
              cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess;
    for (int r = 0; ok && r < 4; r++) { // the first is a warm-up
        ok = cudaEventRecord(e0, s) == cudaSuccess &&
             fg_run_gemm(dev, set, &g, a, n, b, n, c, n, s) == cudaSuccess &&
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
