// tune_candidate.cuh: one candidate configuration of fastgemm-tune, compiled in a translation
// unit of its own (CMake writes one per line of tune_candidates.txt) so they build in parallel.
#pragma once

#include "../cuda/sgemm_simt.cuh"

#include <string>

struct Candidate {
    std::string name; // as the library names it: simt_BMxBNxBK_wWMxWN_tTMxTN_sS[_fF]
    int bm, bn, bk, wm, wn, stages, tm, tn, feat;
    fg_simt::LaunchFn run;
};

inline std::string candidate_name(int bm, int bn, int bk, int wm, int wn, int s, int tm, int tn, int f)
{
    std::string n = "simt_" + std::to_string(bm) + "x" + std::to_string(bn) + "x" +
                    std::to_string(bk) + "_w" + std::to_string(wm) + "x" + std::to_string(wn) +
                    "_t" + std::to_string(tm) + "x" + std::to_string(tn) + "_s" + std::to_string(s);
    return f ? n + "_f" + std::to_string(f) : n;
}

#define FG_TUNE_CANDIDATE(I, BM, BN, BK, WM, WN, S, TM, TN, F)                                 \
    Candidate fg_tune_candidate_##I()                                                           \
    {                                                                                           \
        return {candidate_name(BM, BN, BK, WM, WN, S, TM, TN, F), BM, BN, BK, WM, WN, S, TM, TN, F, \
                fg_simt::launch_any<fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>>};    \
    }
