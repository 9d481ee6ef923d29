// features.h: what a kernel configuration chooses beyond its tile sizes, in two separate sets.
// Tuning choices: the bits of a configuration's FEATURES number, the _fN of its name in the
// generated tables (sgemm_table.gen.h, dgemm_table.gen.h), the tuner's candidate lists and
// FASTGEMM_KERNEL; the bit values are part of those names. Ablation switches: each takes one
// of the kernels' techniques away, for perf/ablate.cu's table only; a configuration takes them
// in a template parameter of their own that the tables cannot fill, and only where FG_ABLATION
// is defined (a perf/ build).
#pragma once

namespace fg_kern {

// Tuning choices (FEATURES).
enum : int {
    FG_COLUMN_ORDER = 16, // blocks take the tiles in plain column order, not in groups of block
                          // rows that share B's panels in L2 (raster.cuh)
    FG_PREFETCH = 32,     // the fragments of k-step k+1 loaded before the FMAs of k (SIMT); DMMA:
                          // m16n8k8 steps with fragments double-buffered across k-steps
    FG_FAST_LOOP = 128,   // (SIMT) the whole k-tiles of interior blocks in a main loop of their
                          // own, without predicates or branches (pipeline.cuh)
    FG_TMA = 256,         // (DMMA, sm_90) tiles copied by the tensor memory accelerator, stages
                          // handed over by mbarriers (dgemm_tma.cuh)
    FG_SPREAD = 512,      // (SIMT, with FG_FAST_LOOP) the fast loop issues the next tile's copies
                          // among the k-steps of this one, not all at its start
    FG_NO_SWAP = 1024,    // (SIMT) NN computed as NN, not as the TT of the transposed problem
    FG_SERPENTINE = 2048, // (SIMT) a k-step's FFMAs in serpentine order (odd rows right to left),
                          // so that each FFMA shares an operand with the one before it, row turns
                          // included: fewer register-file reads (ptxas's .reuse flags), the same
                          // sums in the same order
    FG_RING = 4096,       // (DMMA with FG_TMA, m16n8k16) the k-tile loop unrolled over the ring of
                          // stages, so that their offsets and phases are constants
    FG_K_GROUPS = 8192,   // (SIMT) two groups of warps over the same block tile, each taking half
                          // of every k-tile's steps, their sums added in shared memory at the
                          // end: twice the warps to hide latency, at the same registers a thread
};
constexpr int FG_TUNING_CHOICES = FG_COLUMN_ORDER | FG_PREFETCH | FG_FAST_LOOP | FG_TMA | FG_SPREAD |
                                  FG_NO_SWAP | FG_SERPENTINE | FG_RING | FG_K_GROUPS;

// Ablation switches (a configuration's ABLATE parameter).
enum : int {
    FG_NO_PAD = 1,       // shared tiles without padding (bank conflicts come back)
    FG_SYNC_LOADS = 2,   // plain loads through registers instead of cp.async
    FG_NO_WARP_TILE = 4, // threads laid over the block tile, ignoring warps
    FG_NO_REG_CACHE = 8, // every FMA reads its operands from shared memory
};

#ifdef FG_ABLATION
constexpr bool ablation_build = true;
#else
constexpr bool ablation_build = false;
#endif

// What a configuration's FEATURES and ABLATE may hold (its static_asserts).
constexpr bool tuning_only(int features) { return (features & ~FG_TUNING_CHOICES) == 0; }
constexpr bool ablation_allowed(int ablate) { return ablate == 0 || ablation_build; }

} // namespace fg_kern
