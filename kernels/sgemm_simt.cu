// sgemm_simt.cu: the SIMT SGEMM configurations the library is built with and the table that
// picks one per problem, both from sgemm_table.gen.h (written by perf/tune.cu on the GPU it
// tuned; only the configurations the table uses are compiled), and the cost model that chooses
// among them (sgemm_model.gen.h, choose.cuh). The kernels are in
// sgemm_simt.cuh, their launch in sgemm_simt_launch.cuh, the table logic in gemm_table.cuh.
#include "families.h"
#include "gemm_table.cuh"
#include "sgemm_simt_launch.cuh"
#include "sgemm_model.gen.h"
#include "sgemm_table.gen.h"

namespace {

#define FG_CONFIG(name, BM, BN, BK, WM, WN, S, TM, TN, F)                                      \
    FG_SIMT_CONFIG(name, fg_simt::SimtConfig<BM, BN, BK, WM, WN, S, TM, TN, F>),
constexpr fg_table::Config<float> configs[] = {FG_SGEMM_CONFIGS(FG_CONFIG)};
#define FG_ENTRY(m, n, k, trans, config, splits) {m, n, k, trans, config, splits},
constexpr fg_table::Entry table[] = {FG_SGEMM_TABLE(FG_ENTRY)};
#define FG_COST(name, tflops, fixed, jsat, unaligned, occ, short_tile, nn, tn, nt, tt, sk_fixed, sk_rate, sk_gbs) \
    {name, tflops, fixed, jsat, unaligned, occ, short_tile, {nn, tn, nt, tt}, sk_fixed, sk_rate, sk_gbs * 1e9},
constexpr fg_choose::Cost costs[] = {FG_SGEMM_MODEL(FG_COST)};
constexpr fg_choose::Machine machine = {FG_SGEMM_MODEL_SMS, FG_SGEMM_MODEL_LAUNCH_S, FG_SGEMM_MODEL_BYTES_PER_S,
                                        FG_SGEMM_MODEL_PACK_S, FG_SGEMM_MODEL_FACTORS, FG_SGEMM_MODEL_K_FREE,
                                        FG_SGEMM_MODEL_SK_MIN_KTILES, FG_SGEMM_MODEL_SK_MARGIN,
                                        FG_SGEMM_MODEL_WAVE_FACTORS};

} // namespace

FG_TABLE_FAMILY(simt, FG_FAMILY_SIMT, configs, table, costs, machine)
