// tune_candidate.cuh: one candidate configuration of fastgemm-tune, compiled in a translation
// unit of its own (CMake writes one per line of tune_candidates.txt and tune_candidates_d.txt)
// so they build in parallel.
#pragma once

#include "../kernels/dgemm_dmma_launch.cuh"
#include "../kernels/sgemm_simt_launch.cuh"

#include <string>

template <class T>
struct Candidate {
    std::string name;   // as the library names it: simt_BMxBNxBK_wWMxWN_tTMxTN_sS[_fF],
                        // dmma_BMxBNxBK_wWMxWN_sS[_fF]
    std::string params; // its configuration macro's numbers, "BM, BN, ..." (for --emit)
    // The configuration as the library's plan sees it (fg_table::plan_config, launch_plan):
    // the tuner plans and launches it as the library does. Its name there: none.
    fg_table::Config<T> config;
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
                #BM ", " #BN ", " #BK ", " #WM ", " #WN ", " #S ", " #TM ", " #TN ", " #F,      \
                FG_SIMT_CONFIG(nullptr, fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>)}; \
    }
// DMMA DGEMM: BM BN BK WM WN STAGES FEATURES
#define FG_TUNE_CANDIDATE_D(I, BM, BN, BK, WM, WN, S, F)                                        \
    Candidate<double> fg_tune_candidate_d_##I()                                                 \
    {                                                                                           \
        return {candidate_name("dmma", BM, BN, BK, WM, WN, "", S, F),                           \
                #BM ", " #BN ", " #BK ", " #WM ", " #WN ", " #S ", " #F,                        \
                FG_DMMA_CONFIG(nullptr, fg_dmma::DmmaConfig<BM, BN, BK, WM, WN, S, F>)};        \
    }
