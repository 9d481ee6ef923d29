// loaders.cuh: the tile loaders, which copy the k-tiles of one operand from global to shared
// memory (ptx.cuh's copies), each thread over fixed slots of the tile.
#pragma once

#include "ptx.cuh"

#include <stdint.h>

namespace fg_kern {

// Copies k-tiles of one operand into xs[BK][LDS] (k-major: a row of MNT (+ padding) elements
// per k). The operand's element (mn, k) is x[mn + k*ld] (MN_CONTIG: op(A) = A, op(B) = B^T) or
// x[k + mn*ld] (op(A) = A^T, op(B) = B). Each thread owns fixed (mn, k) slots of the tile and one
// pointer that advances a tile per call. Interior tiles (every slot inside the matrix) take a
// path without predicates and with 32-bit offsets; edge tiles zero-fill what lies outside and
// never read it. With VEC16 (MN_CONTIG operands whose pointer and ld allow it) the copies are
// 16 bytes, else one element each (a transposing copy when the operand is k-contiguous).
template <class T, int MNT, int BK, int THREADS, int LDS, bool MN_CONTIG, bool SYNC>
struct TileLoader {
    static constexpr int E = sizeof(T);
    static constexpr int VEC = 16 / E;                     // elements per 16-byte copy
    static constexpr int CHUNKS = MNT / VEC;               // 16-byte chunks along mn per k
    static constexpr int VEC_ROUNDS = MNT * BK / VEC / THREADS;
    static constexpr int ROUNDS = MNT * BK / THREADS;      // element copies per thread
    static constexpr int VEC_K_STEP = THREADS / CHUNKS;    // k between a thread's 16-byte chunks
    static constexpr int K_STEP = THREADS / MNT;           // k between its copies (mn-contig)
    static constexpr int MN_STEP = THREADS / BK;           // mn between its copies (k-contig)
    static_assert(MNT * BK % (VEC * THREADS) == 0, "16-byte copies come out in whole rounds");
    static_assert(THREADS % CHUNKS == 0 && THREADS % MNT == 0 && THREADS % BK == 0,
                  "each thread keeps the same mn (k) position in every round");

    const T *x;     // this thread's first element of the next k-tile
    int64_t step;   // distance between its copies in one tile
    int64_t advance; // from one k-tile to the next (held here: no parameter reload in the loop)
    int step32;     // the same, when every offset of a tile fits in 32 bits (else 0)
    int mn, k;      // its first slot in the tile
    int mn_left;    // valid elements along mn from its first slot (clamped)
    bool vec, interior;

    // pin: keep step32 and advance in registers. Without it ptxas may re-read ld from the
    // parameter bank inside the main loop, into a register that an in-flight cp.async is still
    // reading (a long-scoreboard wait at every k-tile); with it, kernels that are short of
    // registers may spill. CLAMP: see below. SGEMM's instances that never copy an mn-contiguous
    // operand element by element in their fast loop leave it out: it costs them registers, and
    // at 128 registers a thread a block more per SM; the DMMA kernels' registers are the same
    // with it or without.
    template <bool CLAMP = true>
    __device__ __forceinline__ void init(const T *base, int64_t ld, int64_t mn0, int64_t mn_size,
                                         bool vec16, int tid, bool pin = false)
    {
        vec = MN_CONTIG && vec16;
        int rounds;
        if (MN_CONTIG && vec) {
            mn = (tid % CHUNKS) * VEC, k = tid / CHUNKS, step = VEC_K_STEP * ld, rounds = VEC_ROUNDS;
        } else if (MN_CONTIG) {
            mn = tid % MNT, k = tid / MNT, step = K_STEP * ld, rounds = ROUNDS;
        } else {
            k = tid % BK, mn = tid / BK, step = MN_STEP * ld, rounds = ROUNDS;
        }
        const int64_t left = mn_size - (mn0 + mn);
        mn_left = left > (1 << 30) ? (1 << 30) : (int)left;
        step32 = (int64_t)rounds * step < (int64_t)1 << 31 ? (int)step : 0;
        advance = MN_CONTIG ? BK * ld : BK;
        if (pin) keep_in_register(step32), keep_in_register(advance);
        interior = mn0 + MNT <= mn_size && (rounds == 1 || step32 != 0);
        // CLAMP: copied element by element, an mn-contiguous operand keeps a thread on one row
        // (op(A)) or column (op(B)) in every copy. Past the matrix, the thread copies a row
        // inside it instead (row mod mn_size): such rows and columns only make entries of C that
        // are never stored, so the block's whole k-tiles need no predicates (and ELEM instances
        // run edge blocks in the fast loop). Out-of-range data then sits where zeros did; the
        // partial k-tile still zero-fills. The rows stand in order, as those of the tile do: had
        // every lane past the edge copied the same element, a warp's copies into shared memory
        // would run one lane at a time.
        int64_t row = mn0 + mn;
        if (CLAMP && MN_CONTIG && !vec) {
            if (row >= mn_size) row %= mn_size;
            interior = rounds == 1 || step32 != 0;
        }
        x = base + (MN_CONTIG ? row + k * ld : k + row * ld);
    }

    // Loads the next k-tile into xs, of which k_left k-positions exist (k_left may exceed BK).
    __device__ __forceinline__ void load(T *xs, const T *any_valid, int64_t k_left)
    {
        if (interior && k_left >= BK) load_full(xs); // the same branch for the whole block
        else load_edge(xs, any_valid, k_left);
    }

    // The next k-tile when it is interior and whole (interior, k_left >= BK): no predicates.
    __device__ __forceinline__ void load_full(T *xs)
    {
        if (MN_CONTIG && !vec) {
#pragma unroll
            for (int i = 0; i < ROUNDS; i++)
                copy_full<E, SYNC>(&xs[(k + i * K_STEP) * LDS + mn], x + i * step32);
            x += advance;
        } else {
            load_fast(xs);
        }
    }

    // The same for the fast main loop (pipeline), when fast(): its tiles are interior and, if
    // mn-contiguous, copied 16 bytes at a time; no branch on it. ELEM: a loader that init was
    // given no 16-byte copies (vec16 false) copies an mn-contiguous operand element by element
    // there instead (the kernel's instance for such operands).
    // Such a tile is fast_copies copies per thread; copy_fast issues the i-th (the last also
    // moves the pointer on to the next tile), so that a kernel can spread them over its steps.
    template <bool ELEM = false>
    __device__ __forceinline__ bool fast() const { return interior && (ELEM || vec || !MN_CONTIG); }
    template <bool ELEM = false>
    static constexpr int fast_copies = MN_CONTIG && !ELEM ? VEC_ROUNDS : ROUNDS;
    template <bool ELEM = false>
    __device__ __forceinline__ void copy_fast(T *xs, int i)
    {
        if (MN_CONTIG && !ELEM) copy_full<16, SYNC>(&xs[(k + i * VEC_K_STEP) * LDS + mn], x + i * step32);
        else if (MN_CONTIG) copy_full<E, SYNC>(&xs[(k + i * K_STEP) * LDS + mn], x + i * step32);
        else copy_full<E, SYNC>(&xs[k * LDS + mn + i * MN_STEP], x + i * step32);
        if (i == fast_copies<ELEM> - 1) x += advance;
    }
    template <bool ELEM = false>
    __device__ __forceinline__ void load_fast(T *xs)
    {
#pragma unroll
        for (int i = 0; i < fast_copies<ELEM>; i++) copy_fast<ELEM>(xs, i);
    }

    // Any k-tile: what lies outside the matrix is zero-filled and never read.
    __device__ __forceinline__ void load_edge(T *xs, const T *any_valid, int64_t k_left)
    {
        if (MN_CONTIG && vec) {
#pragma unroll
            for (int i = 0; i < VEC_ROUNDS; i++) {
                const int kk = k + i * VEC_K_STEP;
                const int valid = kk < k_left ? (mn_left >= VEC ? VEC : mn_left > 0 ? mn_left : 0) : 0;
                copy_zfill<16, SYNC>(&xs[kk * LDS + mn], valid ? x + i * step : any_valid, valid * E);
            }
        } else if (MN_CONTIG) {
#pragma unroll
            for (int i = 0; i < ROUNDS; i++) {
                const int kk = k + i * K_STEP;
                const bool ok = kk < k_left && mn_left > 0;
                copy_zfill<E, SYNC>(&xs[kk * LDS + mn], ok ? x + i * step : any_valid, ok ? E : 0);
            }
        } else {
#pragma unroll
            for (int i = 0; i < ROUNDS; i++) {
                const bool ok = k < k_left && mn_left > i * MN_STEP;
                copy_zfill<E, SYNC>(&xs[k * LDS + mn + i * MN_STEP], ok ? x + i * step : any_valid,
                                    ok ? E : 0);
            }
        }
        x += advance;
    }
};

// Copies k-tiles of a k-contiguous operand (element (mn, k) is x[k + mn*ld]) as they lie, into
// xs[MNT][LDS] (mn-major: a row of BK (+ padding) elements per mn), for kernels whose fragment
// loads read either layout. With VEC16 (pointer and ld allow it) the copies are 16 bytes along
// k, else one element each; interior tiles take the path without predicates, as above.
template <class T, int MNT, int BK, int THREADS, int LDS, bool SYNC>
struct TileLoaderK {
    static constexpr int E = sizeof(T);
    static constexpr int VEC = 16 / E;
    static constexpr int CHUNKS = BK / VEC;                // 16-byte chunks along k per mn
    static constexpr int VEC_ROUNDS = MNT * BK / VEC / THREADS;
    static constexpr int ROUNDS = MNT * BK / THREADS;
    static constexpr int VEC_MN_STEP = THREADS / CHUNKS;   // mn between a thread's chunks
    static constexpr int MN_STEP = THREADS / BK;           // mn between its element copies
    static_assert(MNT * BK % (VEC * THREADS) == 0 && BK % VEC == 0, "whole rounds of 16-byte copies");
    static_assert(THREADS % CHUNKS == 0 && THREADS % BK == 0, "a thread keeps its k position");

    const T *x;
    int64_t step;
    int step32;
    int mn, k, mn_left;
    bool vec, interior;

    __device__ __forceinline__ void init(const T *base, int64_t ld, int64_t mn0, int64_t mn_size,
                                         bool vec16, int tid)
    {
        vec = vec16;
        const int rounds = vec ? VEC_ROUNDS : ROUNDS;
        if (vec) k = tid % CHUNKS * VEC, mn = tid / CHUNKS, step = VEC_MN_STEP * ld;
        else k = tid % BK, mn = tid / BK, step = MN_STEP * ld;
        const int64_t left = mn_size - (mn0 + mn);
        mn_left = left > (1 << 30) ? (1 << 30) : (int)left;
        step32 = (int64_t)rounds * step < (int64_t)1 << 31 ? (int)step : 0;
        interior = mn0 + MNT <= mn_size && (rounds == 1 || step32 != 0);
        x = base + k + (mn0 + mn) * ld;
    }

    __device__ __forceinline__ void load(T *xs, const T *any_valid, int64_t k_left)
    {
        if (interior && k_left >= BK) {
            if (vec) {
#pragma unroll
                for (int i = 0; i < VEC_ROUNDS; i++)
                    copy_full<16, SYNC>(&xs[(mn + i * VEC_MN_STEP) * LDS + k], x + i * step32);
            } else {
#pragma unroll
                for (int i = 0; i < ROUNDS; i++)
                    copy_full<E, SYNC>(&xs[(mn + i * MN_STEP) * LDS + k], x + i * step32);
            }
        } else if (vec) {
            const int64_t kv = k_left - k; // valid elements of this thread's chunk along k
            const int valid_k = kv >= VEC ? VEC : kv > 0 ? (int)kv : 0;
#pragma unroll
            for (int i = 0; i < VEC_ROUNDS; i++) {
                const int valid = mn_left > i * VEC_MN_STEP ? valid_k : 0;
                copy_zfill<16, SYNC>(&xs[(mn + i * VEC_MN_STEP) * LDS + k], valid ? x + i * step : any_valid,
                                     valid * E);
            }
        } else {
#pragma unroll
            for (int i = 0; i < ROUNDS; i++) {
                const bool ok = k < k_left && mn_left > i * MN_STEP;
                copy_zfill<E, SYNC>(&xs[(mn + i * MN_STEP) * LDS + k], ok ? x + i * step : any_valid,
                                    ok ? E : 0);
            }
        }
        x += BK;
    }
};

} // namespace fg_kern
