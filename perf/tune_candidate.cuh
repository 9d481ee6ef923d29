// tune_candidate.cuh: one candidate configuration of fastgemm-tune, compiled in a translation
// unit of its own (CMake writes one per line of tune_candidates.txt and tune_candidates_d.txt)
// so they build in parallel.
#pragma once

#include "../cuda/dgemm_dmma.cuh"
#include "../cuda/sgemm_simt.cuh"

#include <string>

template <class T>
struct Candidate {
    std::string name;   // as the library names it: simt_BMxBNxBK_wWMxWN_tTMxTN_sS[_fF],
                        // dmma_BMxBNxBK_wWMxWN_sS[_fF]
    std::string params; // its configuration macro's numbers, "BM, BN, ..." (for --emit)
    int bm, bn, bk;
    fg_kern::LaunchFn<T> run;
    // Its stream-K workspace on a problem (0: it runs without), as the library's table has it
    // (fg_table::Config::streamk); null: the configuration has no stream-K.
    size_t (*streamk)(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
                      int64_t ldb, bool force);
};

inline std::string candidate_name(const char *family, int bm, int bn, int bk, int wm, int wn,
                                   const std::string &thread_tile, int s, int f)
{
    std::string n = std::string(family) + "_" + std::to_string(bm) + "x" + std::to_string(bn) +
                    "x" + std::to_string(bk) + "_w" + std::to_string(wm) + "x" +
                    std::to_string(wn) + thread_tile + "_s" + std::to_string(s);
    return f ? n + "_f" + std::to_string(f) : n;
}

// SIMT SGEMM: BM BN BK WM WN STAGES TM TN FEATURES
#define FG_TUNE_CANDIDATE_S(I, BM, BN, BK, WM, WN, S, TM, TN, F)                               \
    Candidate<float> fg_tune_candidate_s_##I()                                                  \
    {                                                                                           \
        return {candidate_name("simt", BM, BN, BK, WM, WN,                                      \
                               "_t" + std::to_string(TM) + "x" + std::to_string(TN), S, F),     \
                #BM ", " #BN ", " #BK ", " #WM ", " #WN ", " #S ", " #TM ", " #TN ", " #F, BM, BN, BK, \
                fg_simt::launch_any<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>>,     \
                fg_simt::has_streamk<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>>()    \
                    ? fg_simt::streamk_bytes<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>> \
                    : nullptr};                                                                 \
    }
// DMMA DGEMM: BM BN BK WM WN STAGES FEATURES
#define FG_TUNE_CANDIDATE_D(I, BM, BN, BK, WM, WN, S, F)                                        \
    Candidate<double> fg_tune_candidate_d_##I()                                                 \
    {                                                                                           \
        return {candidate_name("dmma", BM, BN, BK, WM, WN, "", S, F),                           \
                #BM ", " #BN ", " #BK ", " #WM ", " #WN ", " #S ", " #F, BM, BN, BK,            \
                fg_dmma::launch<fg_dmma::DmmaConfig<BM, BN, BK, WM, WN, S, F>>,                 \
                fg_dmma::DmmaConfig<BM, BN, BK, WM, WN, S, F>::TMA                              \
                    ? fg_dmma::streamk_bytes<fg_dmma::DmmaConfig<BM, BN, BK, WM, WN, S, F>>     \
                    : nullptr};                                                                 \
    }
