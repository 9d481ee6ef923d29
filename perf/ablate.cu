// ablate.cu: the ablation table in the seed blog's style. The library's first (largest)
// SGEMM configuration, then the same kernel with one feature switched off at a time (padding,
// cp.async, the pipeline's stages, spreading the copies, warp tiling, the FFMAs' serpentine
// order, register caching, rasterization, NN run as the TT of the transposed problem), and the
// plain shared-memory tiled kernel, each timed against cuBLAS in the same run on square NN
// problems; every result is validated first. Built on the GPU machine only
// (-DFASTGEMM_BUILD_TUNER=ON).
// Usage: fastgemm-ablate [--sizes 2048,4096] [--reps N] [--csv FILE]
#include "../kernels/families.h"
#include "../kernels/sgemm_simt_launch.cuh"
#include "../kernels/sgemm_table.gen.h"
#include "perf_util.cuh"

#include <cfloat>
#include <string>

#ifndef FG_ABLATION
#error "perf/ablate.cu builds the kernels with ablation switches: define FG_ABLATION"
#endif

namespace {

using namespace fg_kern;

struct Variant {
    std::string name;
    cudaError_t (*run)(long, long, long, const float *, const float *, float *, cudaStream_t);
};

// C = A B (NN) on one configuration, unsplit and without stream-K, as the library plans it.
template <class Cfg>
cudaError_t run_simt(long m, long n, long k, const float *a, const float *b, float *c, cudaStream_t s)
{
    const fg_table::Config<float> cfg = FG_SIMT_CONFIG(nullptr, Cfg);
    const Gemm<float> g = {false, false, m, n, k, 1.f, a, m, b, k, 0.f, c, m};
    fg_kernel_plan plan;
    fg_table::plan_config(cfg, g, 1, 0, 0, &plan);
    return fg_table::launch_plan(cfg, &plan, g, nullptr, s);
}

cudaError_t run_tiled(long m, long n, long k, const float *a, const float *b, float *c, cudaStream_t s)
{
    fg_gemm_args g{};
    g.dt = FG_F32;
    g.ta = g.tb = 'N';
    g.m = m, g.n = n, g.k = k, g.lda = m, g.ldb = k, g.ldc = m;
    g.alpha = 1, g.beta = 0;
    return fg_tiled_gemm(&g, a, m, b, k, c, m, s);
}

// The library's first configuration (FG_SGEMM_FIRST) as Ablated<F, X>: with tuning choices F and
// ablation switches X.
#define FG_VARIANTS(name, BM, BN, BK, WM, WN, S, TM, TN, F)                                      \
    template <int FEAT, int ABLATE>                                                             \
    using Ablated = fg_simt::SimtAblated<BM, BN, BK, WM, WN, S, TM, TN, FEAT, ABLATE>;          \
    const Variant variants[] = {                                                                \
        {std::string(name) + " (final)", run_simt<Ablated<F, 0>>},                              \
        {"no padding", run_simt<Ablated<F, FG_NO_PAD>>},                                        \
        {"synchronous loads (no cp.async)", run_simt<Ablated<F, FG_SYNC_LOADS>>},               \
        {"one stage", run_simt<fg_simt::SimtConfig<BM, BN, BK, WM, WN, 1, TM, TN, F & ~FG_SPREAD>>}, \
        {"copies issued at the tile's start (no FG_SPREAD)", run_simt<Ablated<F & ~FG_SPREAD, 0>>}, \
        {"no warp tiling (nor the swap: its epilogue needs warp tiles)",                        \
         run_simt<Ablated<F, FG_NO_WARP_TILE>>},                                                \
        {"FFMAs row by row (no FG_SERPENTINE order)", run_simt<Ablated<F & ~FG_SERPENTINE, 0>>}, \
        {"no register caching", run_simt<Ablated<F, FG_NO_REG_CACHE>>},                         \
        {"no rasterization", run_simt<Ablated<F | FG_COLUMN_ORDER, 0>>},                        \
        {"NN computed as NN (no swap to the transposed TT)", run_simt<Ablated<F | FG_NO_SWAP, 0>>}, \
        {"plain tiled kernel (tiled_64x64x16)", run_tiled},                                     \
    };
FG_SGEMM_FIRST(FG_VARIANTS)

} // namespace

int main(int argc, char **argv)
{
    std::string sizes = "2048,4096", csv_path = "ablate.csv";
    int reps = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--sizes")) sizes = argv[i + 1];
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--csv")) csv_path = argv[i + 1];
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("GPU: %s\n", prop.name);
    cudaStream_t s;
    cublasHandle_t h;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_CUBLAS(cublasCreate(&h));
    CHECK_CUBLAS(cublasSetStream(h, s));
    Bench bench(s, reps);
    FILE *csv = fopen(csv_path.c_str(), "w");
    if (!csv) return 2;
    fprintf(csv, "n,variant,ms,tflops,cublas_tflops,ratio,check\n");
    int failures = 0;
    for (const char *p = sizes.c_str(); p && *p;) {
        const long n = atol(p);
        p = strchr(p, ',');
        if (p) p++;
        const size_t nn = (size_t)n * n;
        float *a, *b, *c;
        CHECK_CUDA(cudaMalloc(&a, nn * 4));
        CHECK_CUDA(cudaMalloc(&b, nn * 4));
        CHECK_CUDA(cudaMalloc(&c, nn * 4));
        fill_uniform<<<1024, 256, 0, s>>>(a, nn, 21);
        fill_uniform<<<1024, 256, 0, s>>>(b, nn, 22);
        const double flop = 2.0 * n * n * n;
        const float one = 1, zero = 0;
        const double cublas_ms = bench.time_ms([&] {
            CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, a,
                                      CUDA_R_32F, (int)n, b, CUDA_R_32F, (int)n, &zero, c,
                                      CUDA_R_32F, (int)n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        });
        const double cublas_tf = flop / cublas_ms * 1e-9;
        printf("\nn = %ld, NN; cuBLAS %.1f TFLOP/s\n\n| kernel | TFLOP/s | of cuBLAS |\n| --- | --- | --- |\n",
               n, cublas_tf);
        for (const Variant &v : variants) {
            auto run = [&] { CHECK_CUDA(v.run(n, n, n, a, b, c, s)); };
            const bool ok = bench.validate(run, a, n, b, n, c, n, n, n, n, false, false, 7,
                                           (double)FLT_EPSILON);
            failures += !ok;
            const double ms = bench.time_ms(run);
            const double tf = flop / ms * 1e-9;
            printf("| %s | %.1f | %.0f%%%s |\n", v.name.c_str(), tf, 100 * tf / cublas_tf,
                   ok ? "" : " (FAILED validation)");
            fprintf(csv, "%ld,%s,%.5f,%.3f,%.3f,%.4f,%s\n", n, v.name.c_str(), ms, tf, cublas_tf,
                    tf / cublas_tf, ok ? "ok" : "FAILED");
        }
        fflush(stdout);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
    }
    fclose(csv);
    return failures != 0;
}
