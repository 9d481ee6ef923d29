// accuracy.cu: how accurate each SGEMM is, on the same inputs (issue 51's harness). For each
// input class it makes A (m x k) and B (k x n) in float on the host, and computes C = A B with
// cuBLAS SGEMM (CUBLAS_COMPUTE_32F), cuBLAS in TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) and
// libfastgemm (fastgemm_sgemm on device pointers, the settings of the environment: the SIMT
// kernels, or another path a setting selects). The reference is FP64: cuBLAS DGEMM of the same
// float inputs, exact in double, whose own error (k 2^-53 |A||B|) is far below any float
// product's. Per method and class: the normwise error max|C - Cref| / max|Cref|, and the
// componentwise error |C - Cref|_ij / (|A||B|)_ij, its median and its maximum (entries whose
// |A||B| is 0 must be exact and are counted apart). Input classes:
//   uniform  U(-1, 1)
//   normal   N(0, 1)
//   wide     signs at random, exponents uniform in [-24, 24] entry by entry (within rows and
//            columns)
//   cancel   A = [X, X(1 + d)], B = [Y; -Y] with X, Y in U(-1, 1), d in U(-1e-3, 1e-3): every
//            entry of C cancels to about 1e-3 of its terms
//   rows     U(-1, 1), A's rows scaled by 2^s and B's columns by 2^t, s, t uniform in [-30, 30]
// Writes a CSV (class,method,m,n,k,normwise,comp_median,comp_max,zero_exact,zero_count) and
// prints a table.
// Usage: fastgemm-accuracy [--shape MxNxK] [--classes C,C,...] [--seed S] [--csv FILE]
#include "perf_util.cuh"
#include "tools/cli.h"

#include <fastgemm.h>

#include <random>
#include <string>

#define PROG "fastgemm-accuracy"

namespace {

struct Inputs {
    std::vector<float> a, b; // column-major, lda = m, ldb = k
};

Inputs make_inputs(const std::string &cls, long m, long n, long k, unsigned long long seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::normal_distribution<double> nd(0.0, 1.0);
    Inputs in{std::vector<float>((size_t)m * k), std::vector<float>((size_t)k * n)};
    auto fill = [&](std::vector<float> &x, auto &&gen) {
        for (float &v : x) v = (float)gen();
    };
    if (cls == "uniform") {
        fill(in.a, [&] { return u(rng); });
        fill(in.b, [&] { return u(rng); });
    } else if (cls == "normal") {
        fill(in.a, [&] { return nd(rng); });
        fill(in.b, [&] { return nd(rng); });
    } else if (cls == "wide") {
        std::uniform_int_distribution<int> e(-24, 24);
        auto gen = [&] { return std::ldexp(0.5 + 0.5 * std::fabs(u(rng)), e(rng)) * (u(rng) < 0 ? -1 : 1); };
        fill(in.a, gen);
        fill(in.b, gen);
    } else if (cls == "cancel") {
        const long h = k / 2;
        for (long p = 0; p < h; p++)
            for (long i = 0; i < m; i++) {
                const double x = u(rng);
                in.a[(size_t)p * m + i] = (float)x;
                in.a[(size_t)(p + h) * m + i] = (float)(x * (1.0 + 1e-3 * u(rng)));
            }
        for (long i = 0; i < m; i++) // an odd k's last column: no partner
            if (k % 2) in.a[(size_t)(k - 1) * m + i] = (float)u(rng);
        for (long j = 0; j < n; j++) {
            for (long p = 0; p < h; p++) {
                const float y = (float)u(rng);
                in.b[(size_t)j * k + p] = y;
                in.b[(size_t)j * k + p + h] = -y;
            }
            if (k % 2) in.b[(size_t)j * k + k - 1] = (float)u(rng);
        }
    } else { // rows
        std::uniform_int_distribution<int> e(-30, 30);
        std::vector<int> s(m), t(n);
        for (int &x : s) x = e(rng);
        for (int &x : t) x = e(rng);
        for (long p = 0; p < k; p++)
            for (long i = 0; i < m; i++) in.a[(size_t)p * m + i] = (float)std::ldexp(u(rng), s[i]);
        for (long j = 0; j < n; j++)
            for (long p = 0; p < k; p++) in.b[(size_t)j * k + p] = (float)std::ldexp(u(rng), t[j]);
    }
    return in;
}

__global__ void to_double(const float *x, double *y, size_t count, bool absolute)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        y[i] = absolute ? fabs((double)x[i]) : (double)x[i];
}

struct Errors {
    double normwise, comp_median, comp_max;
    long zero_exact, zero_count;
};

Errors errors(const std::vector<float> &c, const std::vector<double> &ref, const std::vector<double> &scale)
{
    double max_ref = 0, max_err = 0, comp_max = 0;
    long zero_exact = 0, zero_count = 0;
    std::vector<double> comp;
    comp.reserve(c.size());
    for (size_t i = 0; i < c.size(); i++) {
        const double e = std::fabs((double)c[i] - ref[i]);
        max_ref = std::max(max_ref, std::fabs(ref[i]));
        max_err = std::isnan(e) ? INFINITY : std::max(max_err, e);
        if (scale[i] > 0) {
            const double r = std::isnan(e) ? INFINITY : e / scale[i];
            comp.push_back(r);
            comp_max = std::max(comp_max, r);
        } else {
            zero_count++;
            zero_exact += e == 0;
        }
    }
    double median = 0;
    if (!comp.empty()) {
        std::nth_element(comp.begin(), comp.begin() + comp.size() / 2, comp.end());
        median = comp[comp.size() / 2];
    }
    return {max_ref > 0 ? max_err / max_ref : max_err, median, comp_max, zero_exact, zero_count};
}

int help()
{
    printf("Usage: " PROG " [OPTION...]\n"
           "How accurate SGEMM is, on the same inputs: cuBLAS SGEMM (CUBLAS_COMPUTE_32F), cuBLAS\n"
           "in TF32 and libfastgemm (its settings from the environment), each against an FP64\n"
           "reference (cuBLAS DGEMM of the same float inputs), for the input classes uniform,\n"
           "normal, wide (exponents in [-24, 24]), cancel (products that cancel to 1e-3) and rows\n"
           "(rows of A and columns of B scaled by 2^-30 to 2^30). Prints and writes to the CSV the\n"
           "normwise error max|C - Cref| / max|Cref| and the median and largest componentwise\n"
           "error |C - Cref| / (|A||B|).\n"
           "\n"
           "      --shape MxNxK     the problem (default 2048x2048x2048)\n"
           "      --classes C,...   the input classes (default all five)\n"
           "      --seed S          the inputs' seed (default 1)\n"
           "      --csv FILE        the CSV (default accuracy.csv)\n"
           "  -h, --help            print this help and exit\n"
           "  -V, --version         print the version and exit\n");
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    static const struct option options[] = {{"shape", required_argument, 0, 's'},
                                            {"classes", required_argument, 0, 'c'},
                                            {"seed", required_argument, 0, 'e'},
                                            {"csv", required_argument, 0, 'o'},
                                            {"help", no_argument, 0, 'h'},
                                            {"version", no_argument, 0, 'V'},
                                            {0, 0, 0, 0}};
    long m = 2048, n = 2048, k = 2048;
    long long seed = 1;
    std::string classes = "uniform,normal,wide,cancel,rows", csv_path = "accuracy.csv";
    opterr = 0;
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case 's':
            if (sscanf(optarg, "%ldx%ldx%ld", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1)
                return fg_cli_usage_error(PROG, "--shape '%s' is not MxNxK", optarg);
            break;
        case 'c': classes = optarg; break;
        case 'e':
            if (fg_cli_number(PROG, "--seed", optarg, 0, (1LL << 62), &seed)) return 2;
            break;
        case 'o': csv_path = optarg; break;
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, fastgemm_version());
        default: return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    if (optind < argc) return fg_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    std::vector<std::string> list;
    for (size_t p = 0; p <= classes.size();) {
        const size_t q = std::min(classes.find(',', p), classes.size());
        const std::string name = classes.substr(p, q - p);
        if (name != "uniform" && name != "normal" && name != "wide" && name != "cancel" && name != "rows")
            return fg_cli_usage_error(PROG, "no input class '%s' (uniform, normal, wide, cancel, rows)", name.c_str());
        list.push_back(name);
        p = q + 1;
    }
    FILE *csv = fopen(csv_path.c_str(), "w");
    if (!csv) {
        fprintf(stderr, PROG ": %s cannot be written\n", csv_path.c_str());
        return 1;
    }
    fprintf(csv, "class,method,m,n,k,normwise,comp_median,comp_max,zero_exact,zero_count\n");
    cublasHandle_t h;
    CHECK_CUBLAS(cublasCreate(&h));
    const size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    float *a, *b, *c;
    double *a64, *b64, *c64;
    CHECK_CUDA(cudaMalloc(&a, na * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&b, nb * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&c, nc * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&a64, na * sizeof(double)));
    CHECK_CUDA(cudaMalloc(&b64, nb * sizeof(double)));
    CHECK_CUDA(cudaMalloc(&c64, nc * sizeof(double)));
    printf("%-8s %-16s %12s %12s %12s  (m n k = %ld %ld %ld, seed %lld)\n", "class", "method", "normwise",
           "comp median", "comp max", m, n, k, seed);
    std::vector<float> got(nc);
    std::vector<double> ref(nc), scale(nc);
    int status = 0;
    for (const std::string &cls : list) {
        const Inputs in = make_inputs(cls, m, n, k, (unsigned long long)seed);
        CHECK_CUDA(cudaMemcpy(a, in.a.data(), na * sizeof(float), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(b, in.b.data(), nb * sizeof(float), cudaMemcpyHostToDevice));
        const double one = 1, zero = 0;
        for (int absolute = 0; absolute < 2; absolute++) { // Cref, then |A||B|
            to_double<<<1024, 256>>>(a, a64, na, absolute);
            to_double<<<1024, 256>>>(b, b64, nb, absolute);
            CHECK_CUDA(cudaGetLastError());
            CHECK_CUBLAS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a64, m, b64, k, &zero, c64, m));
            CHECK_CUDA(cudaMemcpy(absolute ? scale.data() : ref.data(), c64, nc * sizeof(double),
                                  cudaMemcpyDeviceToHost));
        }
        const char *methods[] = {"cublas_sgemm", "cublas_tf32", "fastgemm"};
        for (int mth = 0; mth < 3; mth++) {
            const float onef = 1, zerof = 0;
            CHECK_CUDA(cudaMemset(c, 0xff, nc * sizeof(float))); // NaN: every entry must be written
            if (mth < 2) {
                CHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &onef, a, CUDA_R_32F, m, b,
                                          CUDA_R_32F, k, &zerof, c, CUDA_R_32F, m,
                                          mth ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT));
            } else if (fastgemm_sgemm(FASTGEMM_OP_N, FASTGEMM_OP_N, m, n, k, 1.f, a, m, b, k, 0.f, c, m) != 0) {
                fprintf(stderr, PROG ": fastgemm_sgemm failed\n");
                status = 1;
                continue;
            }
            CHECK_CUDA(cudaDeviceSynchronize());
            CHECK_CUDA(cudaMemcpy(got.data(), c, nc * sizeof(float), cudaMemcpyDeviceToHost));
            const Errors e = errors(got, ref, scale);
            printf("%-8s %-16s %12.3e %12.3e %12.3e", cls.c_str(), methods[mth], e.normwise, e.comp_median,
                   e.comp_max);
            if (e.zero_count) printf("  (%ld of %ld zero-scale entries exact)", e.zero_exact, e.zero_count);
            printf("\n");
            fprintf(csv, "%s,%s,%ld,%ld,%ld,%.6e,%.6e,%.6e,%ld,%ld\n", cls.c_str(), methods[mth], m, n, k,
                    e.normwise, e.comp_median, e.comp_max, e.zero_exact, e.zero_count);
        }
    }
    fclose(csv);
    cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(a64), cudaFree(b64), cudaFree(c64);
    cublasDestroy(h);
    return status;
}
