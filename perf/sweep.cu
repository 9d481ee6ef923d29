// sweep.cu: libfastgemm against cuBLAS on device pointers, in one run. For each shape and
// transpose pair: fills inputs on the device, validates both libraries first (C poisoned with
// NaN beforehand, so every entry must be written and the rows past m, where ldc > m, must not
// be; 256 random entries checked against an FP64 dot product with the netlib gauge), warms up,
// then times each library with CUDA events over repeated calls that rotate through input sets
// larger than L2, in alternating rounds, and reports the medians. Writes a CSV and prints a
// table.
// A call the GPU runs faster than the host queues it is timed by the host: the GPU reaches the
// first event and waits for the kernels. --queued 1 holds the stream with a kernel until the
// host has queued the whole round, so the events time the GPU's work alone.
// --shapes random:COUNT:SEED[:LO:HI] runs COUNT seeded random problems (shapes.h), each with its
// own transposes (--trans does not apply), --gflop MIN:MAX keeping those of that many GFLOP; the
// run ends with a summary line per precision and flop class (geometric mean of the ratios, the
// lowest, the count below 0.90). --ld-extra N adds N to every leading dimension (default 0:
// leading dimensions = rows); --ld-multiple N then rounds each up to a multiple of N (4 for
// floats, 2 for doubles: every operand allows 16-byte copies; the same problems, aligned).
// Usage: fastgemm-sweep [--prec s|d|s,d] [--shapes square|irregular|all|MxNxK,...|random:COUNT:SEED[:LO:HI]]
//                       [--trans all|NN,TN,..] [--gflop MIN:MAX] [--ld-extra N]
//                       [--ld-multiple N] [--reps N]
//                       [--csv FILE] [--kernel NAME] [--queued 0|1]
#include "perf_util.cuh"
#include "shapes.h"
#include "tools/cli.h"

#include <fastgemm.h>

#include <cfloat>
#include <string>

template <typename T>
struct Lib;
template <>
struct Lib<float> : Cublas<float> {
    static int ours(cudaStream_t s, char ta, char tb, long m, long n, long k, const float *a,
                    long lda, const float *b, long ldb, float *c, long ldc)
    {
        return fastgemm_sgemm_stream(s, (fastgemm_op)ta, (fastgemm_op)tb, m, n, k, 1.f, a, lda, b,
                                     ldb, 0.f, c, ldc);
    }
};
template <>
struct Lib<double> : Cublas<double> {
    static int ours(cudaStream_t s, char ta, char tb, long m, long n, long k, const double *a,
                    long lda, const double *b, long ldb, double *c, long ldc)
    {
        return fastgemm_dgemm_stream(s, (fastgemm_op)ta, (fastgemm_op)tb, m, n, k, 1.0, a, lda, b,
                                     ldb, 0.0, c, ldc);
    }
};

static volatile int *queued_go; // --queued 1: the flag of hold() (perf_util.cuh), else null
static long ld_extra;           // --ld-extra
static long ld_multiple = 1;    // --ld-multiple

// A leading dimension of `rows` rows as the options make it.
static long ld_of(long rows) { return (rows + ld_extra + ld_multiple - 1) / ld_multiple * ld_multiple; }

// One problem's outcome: ratio 0 where it was not timed (does not fit).
struct Outcome {
    Case p;
    char prec;
    bool valid;
    double ratio;
};

template <typename T>
static Outcome run_shape(cublasHandle_t h, cudaStream_t s, const Case &pr, int reps, FILE *csv,
                         const char *prec)
{
    const long m = pr.m, n = pr.n, k = pr.k;
    const char ta = pr.ta, tb = pr.tb;
    const long lda = ld_of(ta == 'N' ? m : k), ldb = ld_of(tb == 'N' ? k : n);
    const long ldc = ld_of(m);
    const size_t na = (size_t)lda * (ta == 'N' ? k : m), nb = (size_t)ldb * (tb == 'N' ? n : k);
    const size_t nc = (size_t)ldc * n, set_bytes = (na + nb + nc) * sizeof(T);
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (set_bytes + nc * sizeof(T) > free_b * 9 / 10) {
        printf("%s %c%c %ldx%ldx%ld: does not fit in device memory, skipped\n", prec, ta, tb, m, n, k);
        return {pr, prec[0], true, 0};
    }
    InputSets<T> in(na, nb, nc, 1000, s);
    const int sets = in.count;
    const std::vector<T *> &A = in.a, &B = in.b, &C = in.c;
    T *c_ref;
    double *ratio;
    unsigned long long *bad;
    const int spots = 256;
    CHECK_CUDA(cudaMalloc(&c_ref, nc * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&ratio, spots * sizeof(double)));
    CHECK_CUDA(cudaMalloc(&bad, sizeof *bad));
    const T one = 1, zero = 0;
    const cublasOperation_t oa = ta == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
    const cublasOperation_t ob = tb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T;
    auto ours = [&](int i) {
        if (Lib<T>::ours(s, ta, tb, m, n, k, A[i], lda, B[i], ldb, C[i], ldc) != 0) {
            fprintf(stderr, "libfastgemm failed\n");
            exit(1);
        }
    };
    auto cublas = [&](int i, T *c) {
        CHECK_CUBLAS(cublasGemmEx(h, oa, ob, (int)m, (int)n, (int)k, &one, A[i], Lib<T>::type,
                                  (int)lda, B[i], Lib<T>::type, (int)ldb, &zero, c, Lib<T>::type,
                                  (int)ldc, Lib<T>::compute, CUBLAS_GEMM_DEFAULT));
    };

    // Validate both on set 0, C poisoned first.
    const double eps = sizeof(T) == 4 ? FLT_EPSILON : DBL_EPSILON;
    double worst[2] = {0, 0};
    unsigned long long nonfinite[2] = {0, 0};
    for (int lib = 0; lib < 2; lib++) {
        T *c = lib == 0 ? C[0] : c_ref;
        fill_nan<<<1024, 256, 0, s>>>(c, nc);
        if (lib == 0) ours(0);
        else cublas(0, c_ref);
        CHECK_CUDA(cudaMemsetAsync(bad, 0, sizeof *bad, s));
        count_nonfinite<<<1024, 256, 0, s>>>(c, m, n, ldc, bad);
        spot_check<<<spots, 256, 0, s>>>(A[0], lda, B[0], ldb, c, ldc, m, n, k, ta == 'T', tb == 'T',
                                         77, eps, ratio);
        std::vector<double> r(spots);
        CHECK_CUDA(cudaMemcpyAsync(r.data(), ratio, spots * sizeof(double), cudaMemcpyDeviceToHost, s));
        CHECK_CUDA(cudaMemcpyAsync(&nonfinite[lib], bad, sizeof *bad, cudaMemcpyDeviceToHost, s));
        CHECK_CUDA(cudaStreamSynchronize(s));
        for (double x : r)
            if (!(x <= worst[lib])) worst[lib] = x; // NaN sticks
    }
    const bool valid = worst[0] <= 1 && nonfinite[0] == 0;

    // Warm up, then alternate rounds of each library; events around every call.
    const int rounds = 2, per_round = std::max(1, reps / rounds);
    std::vector<float> t_ours, t_cublas;
    std::vector<cudaEvent_t> ev(2 * per_round);
    for (auto &e : ev) CHECK_CUDA(cudaEventCreate(&e));
    int w = 0;
    warm(s, [&] { // both libraries, for 0.1 s (at least 8 calls of each)
        ours(w % sets);
        cublas(w % sets, C[w % sets]);
        w++;
    }, 0.1);
    double host_s[2] = {0, 0}; // the time the host took to queue each library's calls
    for (int r = 0; r < rounds; r++)
        for (int lib = 0; lib < 2; lib++) {
            if (queued_go) {
                *queued_go = 0;
                hold<<<1, 1, 0, s>>>(queued_go);
            }
            const auto h0 = std::chrono::steady_clock::now();
            for (int i = 0; i < per_round; i++) {
                CHECK_CUDA(cudaEventRecord(ev[2 * i], s));
                if (lib == 0) ours(i % sets);
                else cublas(i % sets, C[i % sets]);
                CHECK_CUDA(cudaEventRecord(ev[2 * i + 1], s));
            }
            host_s[lib] += std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count();
            if (queued_go) *queued_go = 1;
            CHECK_CUDA(cudaStreamSynchronize(s));
            for (int i = 0; i < per_round; i++) {
                float ms = 0;
                CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
                (lib == 0 ? t_ours : t_cublas).push_back(ms);
            }
        }
    const double mo = median(t_ours), mc = median(t_cublas);
    const double flop = 2.0 * m * n * k;
    const double to = flop / mo * 1e-9, tc = flop / mc * 1e-9;
    printf("%s %c%c %6ld x %6ld x %6ld  fastgemm %8.3f ms %6.2f TFLOP/s  cuBLAS %8.3f ms %6.2f TFLOP/s"
           "  ratio %5.3f  check %s (err/bound %.2g, cuBLAS %.2g)  host us/call %.1f, cuBLAS %.1f\n",
           prec, ta, tb, m, n, k, mo, to, mc, tc, tc > 0 ? to / tc : 0, valid ? "ok" : "FAILED",
           worst[0], worst[1], 1e6 * host_s[0] / (rounds * per_round),
           1e6 * host_s[1] / (rounds * per_round));
    fprintf(csv, "%s,%c%c,%ld,%ld,%ld,%.6f,%.6f,%.4f,%.4f,%.4f,%s,%.3g,%d,%.2f,%.2f,%s,%ld,%ld,%ld\n",
            prec, ta, tb, m, n, k, mo, mc, to, tc, to / tc, valid ? "ok" : "FAILED", worst[0], sets,
            1e6 * host_s[0] / (rounds * per_round), 1e6 * host_s[1] / (rounds * per_round),
            queued_go ? "queued" : "events", lda, ldb, ldc);
    fflush(csv);
    fflush(stdout);
    for (auto &e : ev) cudaEventDestroy(e);
    cudaFree(c_ref);
    cudaFree(ratio);
    cudaFree(bad);
    return {pr, prec[0], valid, tc > 0 ? to / tc : 0};
}

// The summary of one precision's timed problems of one flop class.
static void summarize(const std::vector<Outcome> &all, char prec, bool big)
{
    double log_sum = 0;
    int count = 0, below = 0;
    const Outcome *lowest = nullptr;
    for (const Outcome &o : all) {
        if (o.prec != prec || o.ratio <= 0 || (2e-9 * o.p.m * o.p.n * o.p.k >= 1) != big) continue;
        log_sum += std::log(o.ratio);
        count++;
        below += o.ratio < 0.90;
        if (!lowest || o.ratio < lowest->ratio) lowest = &o;
    }
    if (!count) return;
    printf("summary %c %s 1 GFLOP: %d shapes, geometric mean %.3f, lowest %.3f (%c%c %ldx%ldx%ld), "
           "below 0.90: %d\n", prec, big ? ">=" : "<", count, std::exp(log_sum / count), lowest->ratio,
           lowest->p.ta, lowest->p.tb, lowest->p.m, lowest->p.n, lowest->p.k, below);
}

#define PROG "fastgemm-sweep"

static int help()
{
    printf("Usage: " PROG " [OPTION...]\n"
           "libfastgemm against cuBLAS (cublasGemmEx) on device pointers, in one run: for each\n"
           "problem both are validated (C poisoned with NaN; 256 entries against FP64 dot products),\n"
           "then timed with CUDA events over input sets larger than L2, in alternating rounds.\n"
           "Writes a CSV, prints a table, and for random shapes a summary line per precision and\n"
           "flop class. Exit status 1 when a result is wrong.\n"
           "\n"
           "      --prec s|d|s,d   the precisions (default s)\n"
           "      --shapes square|irregular|all|MxNxK,...|random:COUNT:SEED[:LO:HI]\n"
           "                       the problems (default all); random: COUNT seeded problems, m, n,\n"
           "                       k log-uniform in [64, 12000] (or [LO, HI]), transposes at random\n"
           "      --trans all|NN,TN,...  the transpose pairs of the listed shapes (default all)\n"
           "      --gflop MIN:MAX  keep the random problems of MIN to MAX GFLOP\n"
           "      --ld-extra N     add N to every leading dimension (default 0)\n"
           "      --ld-multiple N  then round each up to a multiple of N (default 1)\n"
           "      --reps N         timed calls a problem and library (default 20)\n"
           "      --csv FILE       the CSV (default sweep.csv)\n"
           "      --kernel NAME    force libfastgemm's kernel (sets FASTGEMM_KERNEL)\n"
           "      --queued 0|1     1: hold the stream until a round is queued, so that the events\n"
           "                       time the GPU's work alone (default 0)\n"
           "  -h, --help           print this help and exit\n"
           "  -V, --version        print the version and exit\n"
           "\n"
           "Environment: libfastgemm's settings (FASTGEMM_KERNEL, FASTGEMM_SPLIT_K, FASTGEMM_STREAM_K,\n"
           "...); CUDA_VISIBLE_DEVICES (device 0 is used).\n");
    return 0;
}

int main(int argc, char **argv)
{
    enum { PREC = 256, SHAPES, TRANS, REPS, CSV, KERNEL, QUEUED, LD_EXTRA, LD_MULTIPLE, GFLOP };
    static const struct option options[] = {
        {"prec", required_argument, 0, PREC},         {"shapes", required_argument, 0, SHAPES},
        {"trans", required_argument, 0, TRANS},       {"reps", required_argument, 0, REPS},
        {"csv", required_argument, 0, CSV},           {"kernel", required_argument, 0, KERNEL},
        {"queued", required_argument, 0, QUEUED},     {"ld-extra", required_argument, 0, LD_EXTRA},
        {"ld-multiple", required_argument, 0, LD_MULTIPLE},
        {"gflop", required_argument, 0, GFLOP},       {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},             {0, 0, 0, 0}};
    std::string prec = "s", shapes = "all", trans = "all", csv_path = "sweep.csv";
    int reps = 20, queued = 0;
    double gflop_min = 0, gflop_max = INFINITY;
    long long v;
    opterr = 0; // fg_cli_option_error says it in one line
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case PREC: prec = optarg; break;
        case SHAPES: shapes = optarg; break;
        case TRANS: trans = optarg; break;
        case REPS:
            if (fg_cli_number(PROG, "--reps", optarg, 1, 1000000, &v)) return 2;
            reps = (int)v;
            break;
        case CSV: csv_path = optarg; break;
        case KERNEL: setenv("FASTGEMM_KERNEL", optarg, 1); break;
        case QUEUED:
            if (fg_cli_number(PROG, "--queued", optarg, 0, 1, &v)) return 2;
            queued = (int)v;
            break;
        case LD_EXTRA:
            if (fg_cli_number(PROG, "--ld-extra", optarg, 0, 1 << 30, &v)) return 2;
            ld_extra = (long)v;
            break;
        case LD_MULTIPLE:
            if (fg_cli_number(PROG, "--ld-multiple", optarg, 1, 1 << 20, &v)) return 2;
            ld_multiple = (long)v;
            break;
        case GFLOP:
            if (!parse_gflop_window(optarg, &gflop_min, &gflop_max)) return 2;
            break;
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, fastgemm_version());
        default: return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    if (optind < argc) return fg_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    std::vector<Shape> list;
    const std::vector<Shape> square = {{256, 256, 256},    {512, 512, 512},    {1024, 1024, 1024},
                                       {2048, 2048, 2048}, {3072, 3072, 3072}, {4096, 4096, 4096},
                                       {6144, 6144, 6144}, {8192, 8192, 8192}, {12288, 12288, 12288},
                                       {16384, 16384, 16384}};
    const std::vector<Shape> irregular = {{4095, 4095, 4095}, {1000, 1000, 1000},
                                          {8192, 8192, 128},  {8192, 128, 8192},
                                          {128, 8192, 8192},  {16384, 16384, 1024},
                                          {2048, 2048, 32768}, {3000, 5000, 700}};
    std::vector<Case> problems;
    RandomSpec rnd;
    const bool random = shapes.compare(0, 7, "random:") == 0;
    if (random) {
        if (!parse_random_spec(shapes, &rnd)) return 2;
        problems = random_problems(rnd, gflop_min, gflop_max);
    }
    if (shapes == "square" || shapes == "all") list.insert(list.end(), square.begin(), square.end());
    if (shapes == "irregular" || shapes == "all")
        list.insert(list.end(), irregular.begin(), irregular.end());
    if (list.empty() && !random) { // MxNxK,MxNxK,...
        for (const char *p = shapes.c_str(); *p;) {
            Shape sh;
            if (sscanf(p, "%ldx%ldx%ld", &sh.m, &sh.n, &sh.k) != 3) {
                fprintf(stderr, "bad shape list %s\n", shapes.c_str());
                return 2;
            }
            list.push_back(sh);
            p = strchr(p, ',');
            if (!p) break;
            p++;
        }
    }
    std::vector<std::pair<char, char>> pairs;
    for (const char *tp : {"NN", "NT", "TN", "TT"})
        if (trans == "all" || trans.find(tp) != std::string::npos) pairs.push_back({tp[0], tp[1]});
    for (const Shape &sh : list)
        for (auto tp : pairs) problems.push_back({sh.m, sh.n, sh.k, tp.first, tp.second});
    std::vector<char> precs;
    for (char c : prec)
        if (c == 's' || c == 'd') precs.push_back(c);
        else if (c != ',') {
            fprintf(stderr, "bad --prec %s: s, d or s,d\n", prec.c_str());
            return 2;
        }

    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("GPU: %s, %d SMs, L2 %d MB; libfastgemm %s; kernel %s; timing %s\n", prop.name,
           prop.multiProcessorCount, prop.l2CacheSize >> 20, fastgemm_version(),
           getenv("FASTGEMM_KERNEL") ? getenv("FASTGEMM_KERNEL") : "(table)",
           queued ? "queued (the GPU's work alone)" : "events");
    if (random)
        printf("random shapes: %ld, seed %llu, m, n, k log-uniform in [%ld, %ld], %g-%g GFLOP, "
               "leading dimensions rows + %ld, rounded up to a multiple of %ld\n", rnd.count,
               (unsigned long long)rnd.seed, rnd.lo, rnd.hi, gflop_min, gflop_max, ld_extra, ld_multiple);
    if (queued) queued_go = hold_flag();
    cublasHandle_t h;
    cudaStream_t s;
    CHECK_CUBLAS(cublasCreate(&h));
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_CUBLAS(cublasSetStream(h, s));
    FILE *csv = fopen(csv_path.c_str(), "w");
    if (!csv) {
        perror(csv_path.c_str());
        return 1;
    }
    fprintf(csv, "prec,trans,m,n,k,fastgemm_ms,cublas_ms,fastgemm_tflops,cublas_tflops,ratio,check,"
                 "err_over_bound,input_sets,host_us,cublas_host_us,timing,lda,ldb,ldc\n");
    bool all_valid = true;
    std::vector<Outcome> outcomes;
    for (char p : precs)
        for (const Case &pr : problems) {
            outcomes.push_back(p == 'd' ? run_shape<double>(h, s, pr, reps, csv, "d")
                                        : run_shape<float>(h, s, pr, reps, csv, "s"));
            all_valid &= outcomes.back().valid;
        }
    fclose(csv);
    for (char p : precs)
        for (bool big : {true, false}) summarize(outcomes, p, big);
    cublasDestroy(h);
    return all_valid ? 0 : 1;
}
