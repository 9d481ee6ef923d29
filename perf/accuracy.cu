// accuracy.cu: how accurate each SGEMM (or, with --prec d, DGEMM) is, on the same inputs
// (issue 51's harness). For each input class it makes A (m x k) and B (k x n) on the host.
// SGEMM: C = A B with cuBLAS SGEMM (CUBLAS_COMPUTE_32F), cuBLAS in TF32
// (CUBLAS_COMPUTE_32F_FAST_TF32) and libfastgemm (fastgemm_sgemm on device pointers, the
// settings of the environment: the SIMT kernels, or another path a setting selects), against an
// FP64 reference: cuBLAS DGEMM of the same float inputs, exact in double, whose own error
// (k 2^-53 |A||B|) is far below any float product's. DGEMM: cuBLAS DGEMM and libfastgemm
// (fastgemm_dgemm, FASTGEMM_OZAKI_D among its settings); no wider GEMM exists on the GPU, so the
// reference is computed on the host for a sample of entries (the same for both methods), each
// summed in double-double (products split exactly by FMA, sums by two-sum: about k 2^-104
// sum|ab| of error, far below any double product's). Per method and class (over the sample for
// DGEMM): the normwise error max|C - Cref| / max|Cref|, and the componentwise error
// |C - Cref|_ij / (|A||B|)_ij, its median and its maximum (entries whose |A||B| is 0 must be
// exact and are counted apart). Input classes (in double: the exponents' and scales' ranges
// doubled and more, to a double's 53 bits):
//   uniform  U(-1, 1)
//   normal   N(0, 1)
//   wide     signs at random, exponents uniform in [-24, 24] ([-53, 53]) entry by entry (within
//            rows and columns)
//   cancel   A = [X, X(1 + d)], B = [Y; -Y] with X, Y in U(-1, 1), d in U(-1e-3, 1e-3): every
//            entry of C cancels to about 1e-3 of its terms
//   rows     U(-1, 1), A's rows scaled by 2^s and B's columns by 2^t, s, t uniform in [-30, 30]
//            ([-60, 60])
// Writes a CSV (class,method,m,n,k,normwise,comp_median,comp_max,zero_exact,zero_count; for
// DGEMM class,method,m,n,k,samples,normwise,comp_median,comp_max) and prints a table.
// Usage: fastgemm-accuracy [--prec s|d] [--shape MxNxK] [--classes C,C,...] [--samples S]
//                          [--seed S] [--csv FILE]
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

template <class T>
Errors errors(const std::vector<T> &c, const std::vector<double> &ref, const std::vector<double> &scale)
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

void make_inputs_d(const std::string &cls, long m, long n, long k, unsigned long long seed, std::vector<double> &a,
                   std::vector<double> &b)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::normal_distribution<double> nd(0.0, 1.0);
    a.assign((size_t)m * k, 0), b.assign((size_t)k * n, 0);
    if (cls == "normal") {
        for (double &x : a) x = nd(rng);
        for (double &x : b) x = nd(rng);
    } else if (cls == "wide") {
        std::uniform_int_distribution<int> e(-53, 53);
        for (double &x : a) x = std::ldexp(0.5 + 0.5 * std::fabs(u(rng)), e(rng)) * (u(rng) < 0 ? -1 : 1);
        for (double &x : b) x = std::ldexp(0.5 + 0.5 * std::fabs(u(rng)), e(rng)) * (u(rng) < 0 ? -1 : 1);
    } else if (cls == "cancel") {
        const long h = k / 2;
        for (double &x : a) x = u(rng);
        for (double &x : b) x = u(rng);
        for (long p = 0; p < h; p++)
            for (long i = 0; i < m; i++) a[(size_t)(p + h) * m + i] = a[(size_t)p * m + i] * (1.0 + 1e-3 * u(rng));
        for (long j = 0; j < n; j++)
            for (long p = 0; p < h; p++) b[(size_t)j * k + p + h] = -b[(size_t)j * k + p];
    } else { // uniform, rows
        for (double &x : a) x = u(rng);
        for (double &x : b) x = u(rng);
        if (cls == "rows") {
            std::uniform_int_distribution<int> e(-60, 60);
            for (long i = 0; i < m; i++) {
                const int s = e(rng);
                for (long p = 0; p < k; p++) a[(size_t)p * m + i] = std::ldexp(a[(size_t)p * m + i], s);
            }
            for (long j = 0; j < n; j++) {
                const int s = e(rng);
                for (long p = 0; p < k; p++) b[(size_t)j * k + p] = std::ldexp(b[(size_t)j * k + p], s);
            }
        }
    }
}

// sum_p a_ip b_pj in double-double (rounded to double at the end), and sum_p |a_ip b_pj|.
void reference_entry(const std::vector<double> &a, const std::vector<double> &b, long m, long k, long i, long j,
                     double *ref, double *scale)
{
    double hi = 0, lo = 0, abs_sum = 0;
    for (long p = 0; p < k; p++) {
        const double x = a[(size_t)p * m + i], y = b[(size_t)j * k + p];
        const double ph = x * y, pl = std::fma(x, y, -ph); // x y = ph + pl exactly
        const double s = hi + ph, bb = s - hi, e = (hi - (s - bb)) + (ph - bb); // two-sum
        lo += e + pl;
        hi = s + lo, lo = lo - (hi - s); // renormalise
        abs_sum += std::fabs(ph);
    }
    *ref = hi + lo, *scale = abs_sum;
}

// The double harness (--prec d): cuBLAS DGEMM and fastgemm_dgemm on each class, against the
// double-double reference of `samples` entries (the same for every class and method). Returns 0,
// or 1 where a call failed.
int run_double(const std::vector<std::string> &list, long m, long n, long k, long long seed, long long samples,
               FILE *csv)
{
    fprintf(csv, "class,method,m,n,k,samples,normwise,comp_median,comp_max\n");
    cublasHandle_t h;
    CHECK_CUBLAS(cublasCreate(&h));
    const size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
    double *a, *b, *c;
    CHECK_CUDA(cudaMalloc(&a, na * sizeof(double)));
    CHECK_CUDA(cudaMalloc(&b, nb * sizeof(double)));
    CHECK_CUDA(cudaMalloc(&c, nc * sizeof(double)));
    std::mt19937_64 pick((unsigned long long)seed + 1);
    std::vector<long> si((size_t)samples), sj((size_t)samples);
    for (size_t s = 0; s < (size_t)samples; s++)
        si[s] = (long)(pick() % (unsigned long long)m), sj[s] = (long)(pick() % (unsigned long long)n);
    printf("%-8s %-14s %12s %12s %12s  (m n k = %ld %ld %ld, %lld entries, seed %lld)\n", "class", "method",
           "normwise", "comp median", "comp max", m, n, k, samples, seed);
    std::vector<double> ha, hb, got(nc), ref((size_t)samples), scale((size_t)samples);
    int status = 0;
    for (const std::string &cls : list) {
        make_inputs_d(cls, m, n, k, (unsigned long long)seed, ha, hb);
        CHECK_CUDA(cudaMemcpy(a, ha.data(), na * sizeof(double), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(b, hb.data(), nb * sizeof(double), cudaMemcpyHostToDevice));
        for (size_t s = 0; s < (size_t)samples; s++) reference_entry(ha, hb, m, k, si[s], sj[s], &ref[s], &scale[s]);
        const char *methods[] = {"cublas_dgemm", "fastgemm"};
        for (int mth = 0; mth < 2; mth++) {
            const double one = 1, zero = 0;
            CHECK_CUDA(cudaMemset(c, 0xff, nc * sizeof(double))); // NaN: every entry must be written
            if (mth == 0) {
                CHECK_CUBLAS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m));
            } else if (fastgemm_dgemm(FASTGEMM_OP_N, FASTGEMM_OP_N, m, n, k, 1.0, a, m, b, k, 0.0, c, m) != 0) {
                fprintf(stderr, PROG ": fastgemm_dgemm failed\n");
                status = 1;
                continue;
            }
            CHECK_CUDA(cudaDeviceSynchronize());
            CHECK_CUDA(cudaMemcpy(got.data(), c, nc * sizeof(double), cudaMemcpyDeviceToHost));
            std::vector<double> sample((size_t)samples);
            for (size_t s = 0; s < (size_t)samples; s++) sample[s] = got[(size_t)sj[s] * m + si[s]];
            const Errors e = errors(sample, ref, scale);
            printf("%-8s %-14s %12.3e %12.3e %12.3e\n", cls.c_str(), methods[mth], e.normwise, e.comp_median,
                   e.comp_max);
            fprintf(csv, "%s,%s,%ld,%ld,%ld,%lld,%.6e,%.6e,%.6e\n", cls.c_str(), methods[mth], m, n, k, samples,
                    e.normwise, e.comp_median, e.comp_max);
        }
    }
    cudaFree(a), cudaFree(b), cudaFree(c);
    cublasDestroy(h);
    return status;
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
           "error |C - Cref| / (|A||B|). --prec d: DGEMM, cuBLAS DGEMM and libfastgemm against\n"
           "double-double sums of a sample of entries, the classes' ranges widened for double.\n"
           "\n"
           "      --prec s|d        SGEMM (default) or DGEMM\n"
           "      --shape MxNxK     the problem (default 2048x2048x2048)\n"
           "      --classes C,...   the input classes (default all five)\n"
           "      --samples S       DGEMM: the entries of the sample (default 4096)\n"
           "      --seed S          the inputs' (and the sample's) seed (default 1)\n"
           "      --csv FILE        the CSV (default accuracy.csv)\n"
           "  -h, --help            print this help and exit\n"
           "  -V, --version         print the version and exit\n");
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    static const struct option options[] = {{"prec", required_argument, 0, 'p'},
                                            {"samples", required_argument, 0, 'n'},
                                            {"shape", required_argument, 0, 's'},
                                            {"classes", required_argument, 0, 'c'},
                                            {"seed", required_argument, 0, 'e'},
                                            {"csv", required_argument, 0, 'o'},
                                            {"help", no_argument, 0, 'h'},
                                            {"version", no_argument, 0, 'V'},
                                            {0, 0, 0, 0}};
    long m = 2048, n = 2048, k = 2048;
    long long seed = 1, samples = 4096;
    bool dbl = false;
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
        case 'p':
            if (strcmp(optarg, "s") && strcmp(optarg, "d"))
                return fg_cli_usage_error(PROG, "--prec '%s' is not s or d", optarg);
            dbl = optarg[0] == 'd';
            break;
        case 'n':
            if (fg_cli_number(PROG, "--samples", optarg, 1, 1 << 24, &samples)) return 2;
            break;
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
    if (dbl) {
        const int st = run_double(list, m, n, k, seed, samples, csv);
        fclose(csv);
        return st;
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
