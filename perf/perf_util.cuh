// perf_util.cuh: what the perf/ programs share: error checks, device-side random fill and NaN
// poison, the rotating input sets of timed calls, a count of non-finite entries, the FP64 spot
// check with the netlib gauge, medians, and the hold that times the GPU's work alone.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK_CUDA(x)                                                                           \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)
#define CHECK_CUBLAS(x)                                                                         \
    do {                                                                                        \
        cublasStatus_t s_ = (x);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_);  \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

struct Shape {
    long m, n, k;
};

// cuBLAS's names for an element type: strict FP32 (no TF32) and FP64.
template <typename T>
struct Cublas;
template <>
struct Cublas<float> {
    static constexpr cudaDataType_t type = CUDA_R_32F;
    static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};
template <>
struct Cublas<double> {
    static constexpr cudaDataType_t type = CUDA_R_64F;
    static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
};

template <typename T>
__global__ void fill_uniform(T *x, size_t count, unsigned long long seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        x[i] = (T)((double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

// The input sets that timed calls rotate through: enough copies of A, B and C that one pass
// over them exceeds twice the L2, so that the inputs come from memory, as in a program, and not
// from a warm L2; at most 8, and no more than half the free memory holds. A and B of set i are
// filled with uniform values from seeds seed + 2i and seed + 2i + 1.
template <typename T>
struct InputSets {
    std::vector<T *> a, b, c;
    int count = 1;

    InputSets(size_t na, size_t nb, size_t nc, unsigned long long seed, cudaStream_t s)
    {
        int dev = 0, l2 = 0;
        size_t free_b = 0, total_b = 0;
        CHECK_CUDA(cudaGetDevice(&dev));
        CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
        CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
        const size_t set_bytes = (na + nb + nc) * sizeof(T);
        count = (int)std::min<size_t>(8, std::max<size_t>(1, 2 * (size_t)l2 / set_bytes + 1));
        while (count > 1 && count * set_bytes > free_b / 2) count--;
        a.assign(count, nullptr), b.assign(count, nullptr), c.assign(count, nullptr);
        for (int i = 0; i < count; i++) {
            CHECK_CUDA(cudaMalloc(&a[i], na * sizeof(T)));
            CHECK_CUDA(cudaMalloc(&b[i], nb * sizeof(T)));
            CHECK_CUDA(cudaMalloc(&c[i], nc * sizeof(T)));
            fill_uniform<<<1024, 256, 0, s>>>(a[i], na, seed + 2 * i);
            fill_uniform<<<1024, 256, 0, s>>>(b[i], nb, seed + 2 * i + 1);
        }
    }
    ~InputSets()
    {
        for (int i = 0; i < count; i++) cudaFree(a[i]), cudaFree(b[i]), cudaFree(c[i]);
    }
    InputSets(const InputSets &) = delete;
    InputSets &operator=(const InputSets &) = delete;
};

template <typename T>
__global__ void fill_nan(T *x, size_t count)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        x[i] = (T)NAN;
}

// Counts what is wrong in C (m x n, leading dimension ldc) after a GEMM on C poisoned with NaN:
// its entries that are not finite (never written, or broken), and the rows between m and ldc,
// which are no entries and must keep their poison, where they do not (written past the matrix).
template <typename T>
__global__ void count_nonfinite(const T *c, long m, long n, long ldc, unsigned long long *bad)
{
    unsigned long long mine = 0;
    const size_t count = (size_t)ldc * n;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        const double x = (double)c[i];
        mine += (long)(i % ldc) < m ? !isfinite(x) : !isnan(x);
    }
    if (mine) atomicAdd(bad, mine);
}

// One block per checked entry (i, j): the FP64 dot product and the gauge sum |a||b|; records
// |C - ref| / ((k+2) eps gauge) for it (<= 1 passes; NaN counts as failing).
template <typename T>
__global__ void spot_check(const T *a, long lda, const T *b, long ldb, const T *c, long ldc,
                           long m, long n, long k, bool ta, bool tb, unsigned long long seed,
                           double eps, double *ratio)
{
    unsigned long long z = (blockIdx.x + 1) * 0x9e3779b97f4a7c15ull ^ seed;
    z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
    const long i = (long)(z % (unsigned long long)m), j = (long)((z >> 32) % (unsigned long long)n);
    double s = 0, g = 0;
    for (long p = threadIdx.x; p < k; p += blockDim.x) {
        const double x = ta ? a[p + i * lda] : a[i + p * lda];
        const double y = tb ? b[j + p * ldb] : b[p + j * ldb];
        s += x * y;
        g += fabs(x * y);
    }
    __shared__ double ss[256], gg[256];
    ss[threadIdx.x] = s;
    gg[threadIdx.x] = g;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) {
            ss[threadIdx.x] += ss[threadIdx.x + w];
            gg[threadIdx.x] += gg[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        const double err = fabs((double)c[i + j * ldc] - ss[0]);
        const double tol = (double)(k + 2) * eps * gg[0];
        ratio[blockIdx.x] = tol > 0 ? err / tol : (err == 0 ? 0 : INFINITY);
        if (!(err == err)) ratio[blockIdx.x] = NAN;
    }
}

static inline double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}


// Runs the call on stream s, queued in batches of 8, for `seconds` of wall time: the H100 was
// measured at a third of its speed for the first ~30 ms of small calls after a pause.
template <class F>
void warm(cudaStream_t s, F &&call, double seconds)
{
    const auto t0 = std::chrono::steady_clock::now();
    do {
        for (int i = 0; i < 8; i++) call();
        CHECK_CUDA(cudaStreamSynchronize(s));
    } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds);
}

// Holds the stream until *go is set by the host (pinned, mapped memory), or a second has passed:
// queued behind it, a round of calls starts on the GPU only once the host has queued it all,
// so that events around each call time the GPU's work alone, not the host's queueing (a call
// the GPU runs faster than the host queues it).
static __global__ void hold(const volatile int *go)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (!*go && t - t0 < 1000000000ull);
}

// The flag of hold(), in pinned memory mapped for the device.
inline volatile int *hold_flag()
{
    void *go = nullptr;
    CHECK_CUDA(cudaHostAlloc(&go, sizeof(int), cudaHostAllocMapped));
    return static_cast<volatile int *>(go);
}

// Times and validates GEMM calls enqueued on one stream.
struct Bench {
    cudaStream_t s;
    int reps;
    double *ratio;
    unsigned long long *bad;
    volatile int *go = nullptr; // hold_rounds: each round of queued calls waits behind hold()

    Bench(cudaStream_t stream, int repetitions) : s(stream), reps(repetitions)
    {
        CHECK_CUDA(cudaMalloc(&ratio, 256 * sizeof(double)));
        CHECK_CUDA(cudaMalloc(&bad, sizeof *bad));
    }
    ~Bench()
    {
        cudaFree(ratio);
        cudaFree(bad);
        if (go) cudaFreeHost(const_cast<int *>(go));
    }
    // From now on each round of queued calls is timed on the GPU alone (hold).
    void hold_rounds()
    {
        if (!go) go = hold_flag();
    }

    // The median time in ms of `reps` calls queued back to back, as a caller runs them, after
    // two warm-up calls.
    template <class F>
    double time_ms(F &&call)
    {
        for (int w = 0; w < 2; w++) call();
        std::vector<float> t;
        queued(call, reps, t);
        return median(t);
    }

    // a and b timed next to each other, in two alternating rounds of n / 2 queued calls each
    // (as fastgemm-sweep times the two libraries): their median times in ms. Under the H100's
    // power cap the clock drifts, and times taken apart can differ by more than the kernels do.
    template <class F, class G>
    void time_pair_ms(F &&a, G &&b, int n, double *ms_a, double *ms_b)
    {
        for (int w = 0; w < 2; w++) a(), b();
        std::vector<float> ta, tb;
        const int per = n / 2 > 1 ? n / 2 : 1;
        for (int r = 0; r < 2; r++) queued(a, per, ta), queued(b, per, tb);
        *ms_a = median(ta), *ms_b = median(tb);
    }

    // n calls queued back to back, events around each, one synchronization; their times to t.
    template <class F>
    void queued(F &&call, int n, std::vector<float> &t)
    {
        std::vector<cudaEvent_t> ev(2 * n);
        for (cudaEvent_t &e : ev) CHECK_CUDA(cudaEventCreate(&e));
        if (go) {
            *go = 0;
            hold<<<1, 1, 0, s>>>(go);
        }
        for (int i = 0; i < n; i++) {
            CHECK_CUDA(cudaEventRecord(ev[2 * i], s));
            call();
            CHECK_CUDA(cudaEventRecord(ev[2 * i + 1], s));
        }
        if (go) *go = 1;
        CHECK_CUDA(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++) {
            float ms;
            CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            t.push_back(ms);
        }
        for (cudaEvent_t e : ev) cudaEventDestroy(e);
    }

    // Poisons C with NaN, runs the call, and checks that every entry of C is finite, that the
    // rows past m kept their poison, and that 256 random entries lie within the netlib gauge of
    // FP64 dot products (C = op(A) op(B)).
    template <class T, class F>
    bool validate(F &&call, const T *a, long lda, const T *b, long ldb, T *c, long ldc, long m,
                  long n, long k, bool ta, bool tb, unsigned long long seed, double eps)
    {
        const size_t nc = (size_t)ldc * n;
        fill_nan<<<1024, 256, 0, s>>>(c, nc);
        call();
        CHECK_CUDA(cudaMemsetAsync(bad, 0, sizeof *bad, s));
        count_nonfinite<<<1024, 256, 0, s>>>(c, m, n, ldc, bad);
        spot_check<<<256, 256, 0, s>>>(a, lda, b, ldb, c, ldc, m, n, k, ta, tb, seed, eps, ratio);
        std::vector<double> r(256);
        unsigned long long nonfinite = 0;
        CHECK_CUDA(cudaMemcpyAsync(r.data(), ratio, 256 * sizeof(double), cudaMemcpyDeviceToHost, s));
        CHECK_CUDA(cudaMemcpyAsync(&nonfinite, bad, sizeof nonfinite, cudaMemcpyDeviceToHost, s));
        CHECK_CUDA(cudaStreamSynchronize(s));
        double worst = 0;
        for (double x : r)
            if (!(x <= worst)) worst = x;
        return worst <= 1 && nonfinite == 0;
    }
};
