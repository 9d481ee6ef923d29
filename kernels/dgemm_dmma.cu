// dgemm_dmma.cu: the DGEMM configurations on the FP64 tensor cores the library is built with and
// the table that picks one per problem, both from dgemm_table.gen.h (written by perf/tune.cu on
// the GPU it tuned), and the cost model that chooses among them (dgemm_model.gen.h, choose.cuh). The kernels are in dgemm_dmma.cuh and dgemm_tma.cuh, their launch in
// dgemm_dmma_launch.cuh, the table logic in gemm_table.cuh.
#include "dgemm_dmma_launch.cuh"
#include "dgemm_model.gen.h"
#include "dgemm_table.gen.h"
#include "families.h"
#include "gemm_table.cuh"

namespace {

#define FG_CONFIG(name, BM, BN, BK, WM, WN, S, F)                                              \
    FG_DMMA_CONFIG(name, fg_dmma::DmmaConfig<BM, BN, BK, WM, WN, S, F>),
constexpr fg_table::Config<double> configs[] = {FG_DGEMM_CONFIGS(FG_CONFIG)};
#define FG_ENTRY(m, n, k, trans, config, splits) {m, n, k, trans, config, splits},
constexpr fg_table::Entry table[] = {FG_DGEMM_TABLE(FG_ENTRY)};
#define FG_COST(name, tflops, fixed, jsat, unaligned, occ, short_tile, nn, tn, nt, tt, sk_fixed, sk_rate, sk_gbs) \
    {name, tflops, fixed, jsat, unaligned, occ, short_tile, {nn, tn, nt, tt}, sk_fixed, sk_rate, sk_gbs * 1e9},
constexpr fg_choose::Cost costs[] = {FG_DGEMM_MODEL(FG_COST)};
constexpr fg_choose::Machine machine = {FG_DGEMM_MODEL_SMS, FG_DGEMM_MODEL_LAUNCH_S, FG_DGEMM_MODEL_BYTES_PER_S,
                                        FG_DGEMM_MODEL_PACK_S, FG_DGEMM_MODEL_FACTORS, FG_DGEMM_MODEL_K_FREE,
                                        FG_DGEMM_MODEL_SK_MIN_KTILES, FG_DGEMM_MODEL_SK_MARGIN,
                                        FG_DGEMM_MODEL_WAVE_FACTORS};

} // namespace

FG_TABLE_FAMILY(dmma, FG_FAMILY_DMMA, configs, table, costs, machine)
