// int8rate.cu: the rate of the INT8 tensor cores next to SGEMM's, through cuBLAS, in one run:
// the budget of issue 51's Ozaki scheme II, whose work is t INT8 GEMMs (t moduli) plus passes
// over memory (perf/notes/tensor-core-sgemm.md). For each n: cublasGemmEx with int8 A and B and
// int32 C (CUBLAS_COMPUTE_32I; A^T B, the layout the integer tensor cores take) and cuBLAS SGEMM
// (CUBLAS_COMPUTE_32F, NN) timed in alternating rounds, each validated first: 64 entries of the
// int8 product exact against int64 dot products, 64 of SGEMM's within the bound k 2^-23 sum|ab|
// of a float sum. Prints the rates, their ratio, and the speedup over SGEMM that t residue GEMMs
// alone would leave (INT8 rate / (t SGEMM rate)), for t = 7 and 8: the ceiling of the scheme.
// Usage: fastgemm-int8rate [--sizes N,N,...] [--reps R] [--csv FILE]
#include "perf_util.cuh"
#include "tools/cli.h"

#include <fastgemm.h>

#include <cmath>
#include <random>
#include <string>

#define PROG "fastgemm-int8rate"

namespace {

int help()
{
    printf("Usage: " PROG " [OPTION...]\n"
           "The INT8 tensor cores' rate next to SGEMM's through cuBLAS, in one run: int8 A^T B\n"
           "with int32 C (CUBLAS_COMPUTE_32I) and SGEMM (CUBLAS_COMPUTE_32F) on n x n x n,\n"
           "alternating rounds, each validated first; with the speedup over SGEMM that the t\n"
           "residue GEMMs of the Ozaki scheme II alone would leave (t = 7, 8).\n"
           "\n"
           "      --sizes N,...     the sizes, multiples of 16 (default 4096,8192,16384)\n"
           "      --reps R          timed calls of each, per size (default 10)\n"
           "      --csv FILE        the CSV (default int8rate.csv)\n"
           "  -h, --help            print this help and exit\n"
           "  -V, --version         print the version and exit\n");
    return 0;
}

// 64 entries of C (int32, ld n) against int64 dot products of A (k x n, read as A^T) and B.
bool check_int8(const std::vector<int8_t> &a, const std::vector<int8_t> &b, const std::vector<int32_t> &c, long n)
{
    std::mt19937_64 rng(7);
    for (int e = 0; e < 64; e++) {
        const long i = (long)(rng() % n), j = (long)(rng() % n);
        int64_t s = 0;
        for (long p = 0; p < n; p++) s += (int64_t)a[p + i * n] * b[p + j * n];
        if (s != c[i + j * n]) return false;
    }
    return true;
}

// 64 entries of C (float, ld n) within a float sum's bound k 2^-23 sum |a||b| of the exact one.
bool check_sgemm(const std::vector<float> &a, const std::vector<float> &b, const std::vector<float> &c, long n)
{
    std::mt19937_64 rng(9);
    for (int e = 0; e < 64; e++) {
        const long i = (long)(rng() % n), j = (long)(rng() % n);
        long double s = 0, sa = 0;
        for (long p = 0; p < n; p++) {
            const long double x = (long double)a[i + p * n] * b[p + j * n];
            s += x, sa += fabsl(x);
        }
        if (!(fabsl((long double)c[i + j * n] - s) <= (long double)n * 0x1p-23L * sa)) return false;
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    static const struct option options[] = {{"sizes", required_argument, 0, 's'},
                                            {"reps", required_argument, 0, 'r'},
                                            {"csv", required_argument, 0, 'o'},
                                            {"help", no_argument, 0, 'h'},
                                            {"version", no_argument, 0, 'V'},
                                            {0, 0, 0, 0}};
    std::vector<long> sizes = {4096, 8192, 16384};
    long long reps = 10;
    std::string csv_path = "int8rate.csv";
    opterr = 0;
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case 's': {
            sizes.clear();
            for (const char *p = optarg; *p;) {
                char *end;
                const long v = strtol(p, &end, 10);
                if (end == p || v < 16 || v % 16 || v > 65536 || (*end && *end != ','))
                    return fg_cli_usage_error(PROG, "--sizes '%s' is not a list of multiples of 16", optarg);
                sizes.push_back(v);
                p = *end ? end + 1 : end;
            }
            break;
        }
        case 'r':
            if (fg_cli_number(PROG, "--reps", optarg, 2, 10000, &reps)) return 2;
            break;
        case 'o': csv_path = optarg; break;
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, fastgemm_version());
        default: return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    if (optind < argc) return fg_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    FILE *csv = fopen(csv_path.c_str(), "w");
    if (!csv) {
        fprintf(stderr, PROG ": %s cannot be written\n", csv_path.c_str());
        return 1;
    }
    fprintf(csv, "n,int8_ms,int8_tops,sgemm_ms,sgemm_tflops,ratio,ceiling_t7,ceiling_t8,valid\n");
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("GPU: %s, %d SMs\n%6s %10s %10s %10s %10s %8s %10s %10s\n", prop.name, prop.multiProcessorCount, "n",
           "int8 ms", "TOPS", "sgemm ms", "TFLOP/s", "ratio", "ceil t=7", "ceil t=8");
    cublasHandle_t h;
    CHECK_CUBLAS(cublasCreate(&h));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreate(&s));
    CHECK_CUBLAS(cublasSetStream(h, s));
    Bench bench(s, (int)reps);
    int status = 0;
    for (long n : sizes) {
        const size_t nn = (size_t)n * n;
        std::mt19937_64 rng(1);
        std::vector<int8_t> a8(nn), b8(nn);
        std::vector<float> af(nn), bf(nn);
        for (size_t q = 0; q < nn; q++) {
            a8[q] = (int8_t)(rng() & 0xff), b8[q] = (int8_t)(rng() & 0xff);
            af[q] = (float)((double)(rng() >> 11) * 0x1p-52 - 1.0), bf[q] = (float)((double)(rng() >> 11) * 0x1p-52 - 1.0);
        }
        int8_t *da8, *db8;
        int32_t *dc32;
        float *daf, *dbf, *dcf;
        CHECK_CUDA(cudaMalloc(&da8, nn));
        CHECK_CUDA(cudaMalloc(&db8, nn));
        CHECK_CUDA(cudaMalloc(&dc32, nn * 4));
        CHECK_CUDA(cudaMalloc(&daf, nn * 4));
        CHECK_CUDA(cudaMalloc(&dbf, nn * 4));
        CHECK_CUDA(cudaMalloc(&dcf, nn * 4));
        CHECK_CUDA(cudaMemcpy(da8, a8.data(), nn, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(db8, b8.data(), nn, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(daf, af.data(), nn * 4, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(dbf, bf.data(), nn * 4, cudaMemcpyHostToDevice));
        const int32_t one = 1, zero = 0;
        const float onef = 1, zerof = 0;
        const int ni = (int)n;
        auto int8 = [&] {
            CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, ni, ni, ni, &one, da8, CUDA_R_8I, ni, db8,
                                      CUDA_R_8I, ni, &zero, dc32, CUDA_R_32I, ni, CUBLAS_COMPUTE_32I,
                                      CUBLAS_GEMM_DEFAULT));
        };
        auto sgemm = [&] {
            CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &onef, daf, CUDA_R_32F, ni, dbf,
                                      CUDA_R_32F, ni, &zerof, dcf, CUDA_R_32F, ni, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT));
        };
        CHECK_CUDA(cudaMemset(dc32, 0xff, nn * 4));
        CHECK_CUDA(cudaMemset(dcf, 0xff, nn * 4));
        int8();
        sgemm();
        CHECK_CUDA(cudaStreamSynchronize(s));
        std::vector<int32_t> c32(nn);
        std::vector<float> cf(nn);
        CHECK_CUDA(cudaMemcpy(c32.data(), dc32, nn * 4, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(cf.data(), dcf, nn * 4, cudaMemcpyDeviceToHost));
        const bool valid = check_int8(a8, b8, c32, n) && check_sgemm(af, bf, cf, n);
        if (!valid) status = 1;
        double ms_i = 0, ms_s = 0;
        bench.time_pair_ms(int8, sgemm, (int)reps, &ms_i, &ms_s);
        const double ops = 2.0 * n * n * n, tops = ops / ms_i * 1e-9, tflops = ops / ms_s * 1e-9;
        printf("%6ld %10.3f %10.1f %10.3f %10.1f %8.2f %10.2f %10.2f%s\n", n, ms_i, tops, ms_s, tflops,
               tops / tflops, tops / (7 * tflops), tops / (8 * tflops), valid ? "" : "  FAILED validation");
        fprintf(csv, "%ld,%.4f,%.1f,%.4f,%.2f,%.3f,%.3f,%.3f,%s\n", n, ms_i, tops, ms_s, tflops, tops / tflops,
                tops / (7 * tflops), tops / (8 * tflops), valid ? "ok" : "FAILED");
        cudaFree(da8), cudaFree(db8), cudaFree(dc32), cudaFree(daf), cudaFree(dbf), cudaFree(dcf);
    }
    fclose(csv);
    cudaStreamDestroy(s);
    cublasDestroy(h);
    return status;
}
