// powerbench.cu: libfastgemm against cuBLAS in sustained phases, with the GPU's clock, power and
// energy. The sweep's rounds last milliseconds at 4096^3, so both libraries run at the clock the
// power controller left (perf/NOTES.md, SGEMM item 21); here each library runs alone for
// --seconds at a time, so that each settles at its own clock, and the board's energy counter
// gives the joules a call. For each problem: both results validated (Bench::validate), then
// --rounds pairs of phases, cuBLAS first, 0.3 s idle before each. A phase's calls run one at a
// time on device pointers, each timed by events; NVML (loaded at run time) is read every 10 ms.
// Usage: fastgemm-powerbench [--seconds S] [--rounds R] [--csv FILE] s|d MxNxK|N NN|NT|TN|TT ...
#include "perf_util.cuh"
#include "tools/cli.h"

#include <fastgemm.h>

#include <atomic>
#include <cfloat>
#include <dlfcn.h>
#include <string>
#include <thread>

namespace {

// The few NVML calls used, from libnvidia-ml.so.1 (the driver's; nothing to link).
struct Nvml {
    void *dev = nullptr;
    int (*clock)(void *, int, unsigned *) = nullptr; // nvmlDeviceGetClockInfo, NVML_CLOCK_SM = 1
    int (*power)(void *, unsigned *) = nullptr;      // nvmlDeviceGetPowerUsage, milliwatts
    int (*energy)(void *, unsigned long long *) = nullptr; // nvmlDeviceGetTotalEnergyConsumption, mJ

    bool open()
    {
        void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
        if (!lib) return false;
        auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
        auto handle = reinterpret_cast<int (*)(unsigned, void **)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
        clock = reinterpret_cast<decltype(clock)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
        power = reinterpret_cast<decltype(power)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
        energy = reinterpret_cast<decltype(energy)>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
        int cuda_dev = 0;
        char bus[32] = "";
        cudaGetDevice(&cuda_dev);
        cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_dev);
        auto by_bus = reinterpret_cast<int (*)(const char *, void **)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
        if (!init || !clock || !power || !energy || init() != 0) return false;
        return (by_bus && by_bus(bus, &dev) == 0) || (handle && handle(0, &dev) == 0);
    }
};

// Means of the clock (MHz) and power (W) sampled every 10 ms while `on`.
struct Sampler {
    const Nvml &nv;
    std::atomic<bool> on{false}, stop{false};
    std::atomic<long> n{0};
    std::atomic<unsigned long long> mhz{0}, mw{0};
    std::thread th;

    explicit Sampler(const Nvml &nvml) : nv(nvml), th([this] { run(); }) {}
    ~Sampler()
    {
        stop = true;
        th.join();
    }
    void run()
    {
        while (!stop) {
            unsigned c = 0, p = 0;
            if (on && nv.clock(nv.dev, 1, &c) == 0 && nv.power(nv.dev, &p) == 0) mhz += c, mw += p, n++;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    void start() { n = 0, mhz = 0, mw = 0, on = true; }
    void end(double *clock_mhz, double *watts)
    {
        on = false;
        *clock_mhz = n ? (double)mhz / n : 0, *watts = n ? (double)mw / n * 1e-3 : 0;
    }
};

template <typename T>
int ours(cudaStream_t s, char ta, char tb, long m, long n, long k, const T *a, long lda, const T *b, long ldb,
         T *c)
{
    if constexpr (sizeof(T) == 4)
        return fastgemm_sgemm_stream(s, (fastgemm_op)ta, (fastgemm_op)tb, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, m);
    else
        return fastgemm_dgemm_stream(s, (fastgemm_op)ta, (fastgemm_op)tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, m);
}

template <typename T>
bool run(cublasHandle_t h, cudaStream_t s, const Nvml &nv, Sampler &smp, const char *prec, long m, long n,
         long k, char ta, char tb, double seconds, int rounds, FILE *csv)
{
    const long lda = ta == 'N' ? m : k, ldb = tb == 'N' ? k : n;
    T *a, *b, *c;
    CHECK_CUDA(cudaMalloc(&a, (size_t)m * k * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&b, (size_t)k * n * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&c, (size_t)m * n * sizeof(T)));
    fill_uniform<<<1024, 256, 0, s>>>(a, (size_t)m * k, 1);
    fill_uniform<<<1024, 256, 0, s>>>(b, (size_t)k * n, 2);
    const T one = 1, zero = 0;
    auto call = [&](int lib) {
        if (lib == 1) {
            if (ours<T>(s, ta, tb, m, n, k, a, lda, b, ldb, c) != 0) {
                fprintf(stderr, "libfastgemm failed\n");
                exit(1);
            }
            return;
        }
        CHECK_CUBLAS(cublasGemmEx(h, ta == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, tb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T,
                                  (int)m, (int)n, (int)k, &one, a, Cublas<T>::type, (int)lda, b, Cublas<T>::type,
                                  (int)ldb, &zero, c, Cublas<T>::type, (int)m, Cublas<T>::compute,
                                  CUBLAS_GEMM_DEFAULT));
    };
    Bench bench(s, 1);
    const double eps = sizeof(T) == 4 ? FLT_EPSILON : DBL_EPSILON;
    bool valid = true;
    for (int lib = 0; lib < 2; lib++)
        valid = bench.validate([&] { call(lib); }, a, lda, b, ldb, c, m, m, n, k, ta == 'T', tb == 'T', 77, eps) &&
                valid;
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    for (int r = 0; r < rounds && valid; r++)
        for (int lib = 0; lib < 2; lib++) {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            unsigned long long mj0 = 0, mj1 = 0;
            std::vector<float> ms;
            nv.energy(nv.dev, &mj0);
            smp.start();
            const auto t0 = std::chrono::steady_clock::now();
            do {
                CHECK_CUDA(cudaEventRecord(e0, s));
                call(lib);
                CHECK_CUDA(cudaEventRecord(e1, s));
                CHECK_CUDA(cudaEventSynchronize(e1));
                float t;
                CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
                ms.push_back(t);
            } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds);
            double mhz, watts;
            smp.end(&mhz, &watts);
            nv.energy(nv.dev, &mj1);
            const double med = median(ms);
            fprintf(csv, "%s,%c%c,%ld,%ld,%ld,%s,%d,%zu,%.3f,%.2f,%.0f,%.1f,%.3f\n", prec, ta, tb, m, n, k,
                    lib ? "libfastgemm" : "cublas", r, ms.size(), med, 2.0 * m * n * k / (med * 1e9), mhz, watts,
                    (double)(mj1 - mj0) * 1e-3 / ms.size());
            fflush(csv);
        }
    if (!valid) fprintf(stderr, "%s %c%c %ldx%ldx%ld: a result failed validation, not timed\n", prec, ta, tb, m, n, k);
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    cudaFree(a), cudaFree(b), cudaFree(c);
    return valid;
}

} // namespace

#define PROG "fastgemm-powerbench"

static int help()
{
    printf("Usage: " PROG " [--seconds S] [--rounds R] [--csv FILE] s|d MxNxK|N NN|NT|TN|TT ...\n"
           "libfastgemm against cuBLAS in sustained phases, with the GPU's clock, power and energy:\n"
           "for each problem (precision, shape, transposes) both results are validated, then R pairs\n"
           "of phases, cuBLAS first, each library alone for S seconds, 0.3 s idle before each. CSV\n"
           "rows: the median call, the mean SM clock and board power, the joules a call (NVML).\n"
           "\n"
           "      --seconds S  the length of a phase (default 3)\n"
           "      --rounds R   pairs of phases a problem (default 2)\n"
           "      --csv FILE   the CSV (default stdout)\n"
           "  -h, --help       print this help and exit\n"
           "  -V, --version    print the version and exit\n"
           "\n"
           "Environment: libfastgemm's settings (FASTGEMM_KERNEL, ...); the GPU is CUDA device 0.\n");
    return 0;
}

int main(int argc, char **argv)
{
    enum { SECONDS = 256, ROUNDS, CSV };
    static const struct option options[] = {
        {"seconds", required_argument, 0, SECONDS}, {"rounds", required_argument, 0, ROUNDS},
        {"csv", required_argument, 0, CSV},         {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},           {0, 0, 0, 0}};
    double seconds = 3;
    int rounds = 2;
    long long v;
    FILE *csv = stdout;
    opterr = 0; // fg_cli_option_error says it in one line
    for (;;) { // the options, then the problems
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case SECONDS:
            if (fg_cli_real(PROG, "--seconds", optarg, 1e-3, 1e6, &seconds)) return 2;
            break;
        case ROUNDS:
            if (fg_cli_number(PROG, "--rounds", optarg, 1, 1000000, &v)) return 2;
            rounds = (int)v;
            break;
        case CSV:
            if (!(csv = fopen(optarg, "w"))) return perror(optarg), 2;
            break;
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, fastgemm_version());
        default: return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    int i = optind;
    if (i == argc || (argc - i) % 3 != 0)
        return fg_cli_usage_error(PROG, "the problems come in threes: s|d MxNxK|N NN|NT|TN|TT");
    Nvml nv;
    if (!nv.open()) return fprintf(stderr, "fastgemm-powerbench: NVML (libnvidia-ml.so.1) not usable\n"), 2;
    Sampler smp(nv);
    cublasHandle_t h;
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    CHECK_CUBLAS(cublasCreate(&h));
    CHECK_CUBLAS(cublasSetStream(h, s));
    fprintf(csv, "prec,trans,m,n,k,library,round,calls,median_ms,tflops,sm_mhz,watts,joules_per_call\n");
    bool ok = true;
    for (; i + 2 < argc; i += 3) {
        long m, n, k;
        if (sscanf(argv[i + 1], "%ldx%ldx%ld", &m, &n, &k) != 3) m = n = k = atol(argv[i + 1]);
        const char *t = argv[i + 2];
        if (m < 1 || n < 1 || k < 1 || strlen(t) != 2 || !strchr("NT", t[0]) || !strchr("NT", t[1]))
            return fprintf(stderr, "bad problem: %s %s %s\n", argv[i], argv[i + 1], t), 2;
        ok = (argv[i][0] == 'd' ? run<double>(h, s, nv, smp, "d", m, n, k, t[0], t[1], seconds, rounds, csv)
                                : run<float>(h, s, nv, smp, "s", m, n, k, t[0], t[1], seconds, rounds, csv)) &&
             ok;
    }
    cublasDestroy(h);
    if (csv != stdout) fclose(csv);
    return ok ? 0 : 1;
}
