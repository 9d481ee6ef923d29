// tune.cu: the SGEMM tuner. Builds candidate configurations of the SIMT kernel family (block
// tile, BK, warp tile, stages; the seed blog's tuning parameters), validates each on every
// problem (C poisoned, FP64 spot check with the netlib gauge), times it with CUDA events against
// cuBLAS in the same run, and prints the table with the best candidate per problem.
// Built on the device machine only (perf/), never part of the library.
// Usage: fastgemm-tune [--shapes MxNxK,...] [--trans NN,TN,...] [--reps N] [--csv FILE]
#include "../cuda/sgemm_simt.cuh"
#include "perf_util.cuh"

#include <cfloat>
#include <string>

// Candidates: BM, BN, BK, WM, WN, STAGES (8x8 outputs per thread, 32 lanes per warp tile).
#define FG_TUNE_CANDIDATES(X)                                                                   \
    X(128, 128, 8, 32, 64, 4)                                                                   \
    X(128, 128, 8, 64, 32, 4)                                                                   \
    X(128, 128, 8, 32, 64, 3)                                                                   \
    X(128, 128, 16, 32, 64, 3)                                                                  \
    X(128, 128, 16, 64, 32, 3)                                                                  \
    X(128, 128, 16, 32, 64, 4)                                                                  \
    X(128, 256, 16, 32, 64, 3)                                                                  \
    X(256, 128, 16, 64, 32, 3)                                                                  \
    X(64, 128, 8, 32, 64, 4)                                                                    \
    X(128, 64, 8, 64, 32, 4)                                                                    \
    X(64, 64, 8, 32, 64, 4)

struct Candidate {
    const char *name;
    cudaError_t (*run)(bool, bool, int64_t, int64_t, int64_t, float, const float *, int64_t,
                       const float *, int64_t, float, float *, int64_t, cudaStream_t);
};

#define FG_STR2(x) #x
#define FG_STR(x) FG_STR2(x)
#define FG_CANDIDATE(BM, BN, BK, WM, WN, S)                                                     \
    {"simt_" FG_STR(BM) "x" FG_STR(BN) "x" FG_STR(BK) "_w" FG_STR(WM) "x" FG_STR(WN) "_s" FG_STR(S), \
     fg_simt::launch_any<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S>>},
static const Candidate candidates[] = {FG_TUNE_CANDIDATES(FG_CANDIDATE)};

int main(int argc, char **argv)
{
    std::string shapes = "1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,"
                         "8192x128x8192,128x8192x8192,2048x2048x32768,3000x5000x700";
    std::string trans = "NN,TN";
    std::string csv_path = "tune.csv";
    int reps = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--shapes")) shapes = argv[i + 1];
        else if (!strcmp(argv[i], "--trans")) trans = argv[i + 1];
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--csv")) csv_path = argv[i + 1];
    }
    std::vector<Shape> list;
    for (const char *p = shapes.c_str(); p && *p;) {
        Shape sh;
        if (sscanf(p, "%ldx%ldx%ld", &sh.m, &sh.n, &sh.k) != 3) return 2;
        list.push_back(sh);
        p = strchr(p, ',');
        if (p) p++;
    }
    cudaStream_t s;
    cublasHandle_t h;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_CUBLAS(cublasCreate(&h));
    CHECK_CUBLAS(cublasSetStream(h, s));
    FILE *csv = fopen(csv_path.c_str(), "w");
    fprintf(csv, "trans,m,n,k,candidate,ms,tflops,cublas_tflops,ratio,check\n");
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    int failures = 0;

    for (const Shape &sh : list)
        for (const char *tp : {"NN", "NT", "TN", "TT"}) {
            if (trans.find(tp) == std::string::npos) continue;
            const bool ta = tp[0] == 'T', tb = tp[1] == 'T';
            const long m = sh.m, n = sh.n, k = sh.k;
            const long lda = ta ? k : m, ldb = tb ? n : k, ldc = m;
            const size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
            float *a, *b, *c;
            double *ratio;
            unsigned long long *bad;
            CHECK_CUDA(cudaMalloc(&a, na * 4));
            CHECK_CUDA(cudaMalloc(&b, nb * 4));
            CHECK_CUDA(cudaMalloc(&c, nc * 4));
            CHECK_CUDA(cudaMalloc(&ratio, 256 * sizeof(double)));
            CHECK_CUDA(cudaMalloc(&bad, sizeof *bad));
            fill_uniform<<<1024, 256, 0, s>>>(a, na, 11);
            fill_uniform<<<1024, 256, 0, s>>>(b, nb, 12);
            const double flop = 2.0 * m * n * k;
            auto time_it = [&](auto &&call) {
                std::vector<float> t;
                for (int w = 0; w < 2; w++) call();
                for (int r = 0; r < reps; r++) {
                    CHECK_CUDA(cudaEventRecord(e0, s));
                    call();
                    CHECK_CUDA(cudaEventRecord(e1, s));
                    CHECK_CUDA(cudaEventSynchronize(e1));
                    float ms;
                    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
                    t.push_back(ms);
                }
                return median(t);
            };
            const float one = 1, zero = 0;
            const double cublas_ms = time_it([&] {
                CHECK_CUBLAS(cublasGemmEx(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          tb ? CUBLAS_OP_T : CUBLAS_OP_N, (int)m, (int)n, (int)k,
                                          &one, a, CUDA_R_32F, (int)lda, b, CUDA_R_32F, (int)ldb,
                                          &zero, c, CUDA_R_32F, (int)ldc, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT));
            });
            const double cublas_tf = flop / cublas_ms * 1e-9;
            printf("%s %ldx%ldx%ld  cuBLAS %.2f TFLOP/s\n", tp, m, n, k, cublas_tf);
            const char *best = "";
            double best_tf = 0;
            for (const Candidate &cand : candidates) {
                // Validate first: C poisoned, every entry written, spot check within the gauge.
                fill_nan<<<1024, 256, 0, s>>>(c, nc);
                CHECK_CUDA(cand.run(ta, tb, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, s));
                CHECK_CUDA(cudaMemsetAsync(bad, 0, sizeof *bad, s));
                count_nonfinite<<<1024, 256, 0, s>>>(c, nc, bad);
                spot_check<<<256, 256, 0, s>>>(a, lda, b, ldb, c, ldc, m, n, k, ta, tb, 5,
                                               (double)FLT_EPSILON, ratio);
                std::vector<double> r(256);
                unsigned long long nonfinite = 0;
                CHECK_CUDA(cudaMemcpyAsync(r.data(), ratio, 256 * sizeof(double),
                                           cudaMemcpyDeviceToHost, s));
                CHECK_CUDA(cudaMemcpyAsync(&nonfinite, bad, sizeof nonfinite, cudaMemcpyDeviceToHost, s));
                CHECK_CUDA(cudaStreamSynchronize(s));
                double worst = 0;
                for (double x : r)
                    if (!(x <= worst)) worst = x;
                const bool ok = worst <= 1 && nonfinite == 0;
                failures += !ok;
                const double ms = time_it([&] {
                    CHECK_CUDA(cand.run(ta, tb, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, s));
                });
                const double tf = flop / ms * 1e-9;
                printf("   %-28s %7.2f TFLOP/s  %5.3f of cuBLAS  %s\n", cand.name, tf,
                       tf / cublas_tf, ok ? "ok" : "FAILED");
                fprintf(csv, "%s,%ld,%ld,%ld,%s,%.5f,%.3f,%.3f,%.4f,%s\n", tp, m, n, k, cand.name,
                        ms, tf, cublas_tf, tf / cublas_tf, ok ? "ok" : "FAILED");
                if (ok && tf > best_tf) best_tf = tf, best = cand.name;
            }
            printf("   best: %s, %.3f of cuBLAS\n", best, best_tf / cublas_tf);
            fflush(stdout);
            cudaFree(a);
            cudaFree(b);
            cudaFree(c);
            cudaFree(ratio);
            cudaFree(bad);
        }
    fclose(csv);
    return failures != 0;
}
