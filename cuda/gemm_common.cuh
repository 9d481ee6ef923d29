// gemm_common.cuh: what the GEMM kernel families share, for any element type: the copies from
// global to shared memory (cp.async, or plain loads for the ablation; on sm_90 the tensor memory
// accelerator's boxes and the mbarriers they complete on), the tile loaders, block
// rasterization, the deterministic split-K reduction and the launcher.
#pragma once

#include <cuda.h> // CUtensorMap
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <atomic>
#include <type_traits>
#ifdef FG_TIMELINE // the stamps' file
#include <cstdio>
#include <cstdlib>
#include <cstring>
#endif

namespace fg_kern {

// Feature switches of a kernel configuration: FG_NO_* switch one feature off (the ablation
// table in perf/), FG_PREFETCH is one more choice for the tuner.
enum : int {
    FG_NO_PAD = 1,       // shared tiles without padding (bank conflicts come back)
    FG_SYNC_LOADS = 2,   // plain loads through registers instead of cp.async
    FG_NO_WARP_TILE = 4, // threads laid over the block tile, ignoring warps
    FG_NO_REG_CACHE = 8, // every FMA reads its operands from shared memory
    FG_NO_RASTER = 16,   // blocks in plain column order, no grouping for L2
    FG_PREFETCH = 32,    // a tuning choice: fragments of step k+1 loaded before the FMAs of k
    FG_FAST_LOOP = 128,  // a tuning choice (SIMT): the whole k-tiles of interior blocks in a main
                         // loop of their own, without predicates or branches (see pipeline)
    FG_TMA = 256,        // a tuning choice (DMMA, sm_90): tiles copied by the tensor memory
                         // accelerator, stages handed over by mbarriers (dgemm_tma)
    FG_SPREAD = 512,     // a tuning choice (SIMT, with FG_FAST_LOOP): the fast loop issues the
                         // next tile's copies among the steps of this one, not all at its start
    FG_NO_SWAP = 1024,   // (SIMT) NN computed as NN, not as the TT of the transposed problem
    FG_SERPENTINE = 2048, // a tuning choice (SIMT): a k-step's FFMAs in serpentine order (odd
                          // rows right to left), so that each FFMA shares an operand with the one
                          // before it, row turns included: fewer register-file reads (ptxas's
                          // .reuse flags), the same sums in the same order
    FG_RING = 4096,      // a tuning choice (DMMA with FG_TMA, m16n8k16): the plain kernel's k-tile
                         // loop unrolled over the ring of stages (offsets and phases constant)
};

// An opaque move: ptxas can no longer recompute v from the kernel parameters (a loader's `pin`).
__device__ __forceinline__ void keep_in_register(int64_t &v) { asm volatile("mov.b64 %0, %0;" : "+l"(v)); }
__device__ __forceinline__ void keep_in_register(int &v) { asm volatile("mov.b32 %0, %0;" : "+r"(v)); }

template <int BYTES>
struct CopyVec;
template <>
struct CopyVec<16> { using type = int4; };
template <>
struct CopyVec<8> { using type = int2; };
template <>
struct CopyVec<4> { using type = int; };

// Copies BYTES from global src to shared dst; only the first src_bytes are read, the rest is
// zero (cp.async's zero-fill). SYNC: the same with a plain load and store.
template <int BYTES, bool SYNC>
__device__ __forceinline__ void copy_zfill(void *dst, const void *src, int src_bytes)
{
    if (SYNC) {
        using V = typename CopyVec<BYTES>::type;
        if (src_bytes == BYTES) {
            *static_cast<V *>(dst) = *static_cast<const V *>(src);
        } else {
            for (int i = 0; i < BYTES / 4; i++)
                static_cast<int *>(dst)[i] = 4 * i < src_bytes ? static_cast<const int *>(src)[i] : 0;
        }
        return;
    }
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src), "n"(BYTES),
                     "r"(src_bytes));
}

// The same without zero-fill: all BYTES are read.
template <int BYTES, bool SYNC>
__device__ __forceinline__ void copy_full(void *dst, const void *src)
{
    if (SYNC) {
        using V = typename CopyVec<BYTES>::type;
        *static_cast<V *>(dst) = *static_cast<const V *>(src);
        return;
    }
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"(BYTES));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// Hopper's tensor memory accelerator (sm_90): one thread asks for a whole 2-D box of a matrix;
// the copy lands in shared memory (zeros where the box leaves the matrix) and counts its bytes
// on an mbarrier, which the threads that read the box wait on. Used by the DMMA kernels with
// FG_TMA; on other architectures these compile to a trap and the launchers never get there.
__device__ __forceinline__ uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t *bar, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}

// Makes the barriers' initialization visible to the tensor memory accelerator.
__device__ __forceinline__ void mbar_init_fence()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}

// The calling thread's arrival, announcing `bytes` still to come from the copies.
__device__ __forceinline__ void mbar_expect_bytes(uint64_t *bar, uint32_t bytes)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
                 "r"(bytes) : "memory");
#else
    __trap();
#endif
}

// Waits for the phase of the given parity (0 for the first) to complete.
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t parity)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred done;\n"
                 "WAIT_%=:\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 " @!done bra WAIT_%=;\n}\n" ::"r"(smem_addr(bar)), "r"(parity) : "memory");
#else
    __trap();
#endif
}

// The box at element (c0, c1) of the matrix `map` describes (c0 along its contiguous dimension)
// into dst, counted on bar.
__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0, int c1)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1),
                 "r"(smem_addr(bar)) : "memory");
#else
    __trap();
#endif
}

__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap *map)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
#endif
}

// Host: the driver's cuTensorMapEncodeTiled (through the runtime, so nothing links libcuda), or
// null where the driver has none.
inline PFN_cuTensorMapEncodeTiled_v12000 tma_encoder()
{
    static std::atomic<PFN_cuTensorMapEncodeTiled_v12000> fn{nullptr};
    static std::atomic<bool> looked{false};
    if (!looked.load(std::memory_order_acquire)) {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                             &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            p = nullptr, cudaGetLastError();
        fn.store(reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p), std::memory_order_relaxed);
        looked.store(true, std::memory_order_release);
    }
    return fn.load(std::memory_order_relaxed);
}

// A map of the rows x cols column-major matrix x (leading dimension ld, rows contiguous) read in
// boxes of box_rows x box_cols, 128-byte swizzled (box_rows * elem must be 128 then) or not.
// False where the accelerator cannot take it: x and ld * elem must be multiples of 16 bytes.
inline bool tma_map(CUtensorMap *map, const void *x, int64_t rows, int64_t cols, int64_t ld,
                    int elem, int box_rows, int box_cols, bool swizzle)
{
    PFN_cuTensorMapEncodeTiled_v12000 encode = tma_encoder();
    if (!encode || (uintptr_t)x % 16 || ld * elem % 16 || rows > 0xffffffffLL ||
        cols > 0xffffffffLL || ld * elem >= (int64_t)1 << 40)
        return false;
    const cuuint64_t dims[2] = {(cuuint64_t)rows, (cuuint64_t)cols};
    const cuuint64_t strides[1] = {(cuuint64_t)(ld * elem)};
    const cuuint32_t box[2] = {(cuuint32_t)box_rows, (cuuint32_t)box_cols}, unit[2] = {1, 1};
    return encode(map, elem == 8 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                  2, const_cast<void *>(x), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                  swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

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
    // operand element by element in their fast loop leave it out: it cost them registers
    // (128x64 t8x8 NN 128 -> 130, so 3 blocks per SM instead of 4: 16384x16384x1024 NN 0.94 ->
    // 0.90 of cuBLAS); the DMMA kernels' registers did not change with it.
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
        // (op(A)) or column (op(B)) in every copy. Past the matrix, the thread copies the last
        // one instead: such rows and columns only make entries of C that are never stored, so
        // the block's whole k-tiles need no predicates (and ELEM instances run edge blocks in
        // the fast loop). Out-of-range data then sits where zeros did; the partial k-tile still
        // zero-fills.
        int64_t row = mn0 + mn;
        if (CLAMP && MN_CONTIG && !vec) {
            if (row >= mn_size) row = mn_size - 1;
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

// The main loop over k-tiles: load_stage(buffer) issues the copies of the next k-tile into one
// of STAGES shared buffers, compute(buffer) consumes one. STAGES-1 tiles are in flight while one
// is computed; every iteration commits one group, empty or not, so that wait_group<STAGES-2>
// always means "the tile about to be used has landed". STAGES = 1: load, wait, compute in turn.
// With a load_fast, the first kfast tiles (whole, in an interior block) are loaded by it instead,
// in a loop of their own: that loop holds one copy path and no branch but its own. With a
// spread(buffer, next) as well, that loop calls it in place of load_fast(next) and
// compute(buffer): it computes one tile and issues the copies of the next among its steps.
template <int STAGES, class LoadFast, class Load, class Compute, class Spread = decltype(nullptr)>
__device__ __forceinline__ void pipeline(int64_t ktiles, int64_t kfast, LoadFast &load_fast,
                                         Load &load_stage, Compute &compute, Spread spread = nullptr)
{
    if constexpr (STAGES == 1) {
        for (int64_t kt = 0; kt < ktiles; kt++) {
            load_stage(0);
            cp_async_commit();
            cp_async_wait<0>();
            __syncthreads();
            compute(0);
            __syncthreads();
        }
    } else {
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < kfast) load_fast(s);
            else if (s < ktiles) load_stage(s);
            cp_async_commit();
        }
        int stage = 0, next = STAGES - 1;
        auto step = [&](auto load) {
            cp_async_wait<STAGES - 2>();
            __syncthreads(); // the tile of kt is visible to all; everyone is done with kt-1's buffer
            load(next);
            cp_async_commit();
            compute(stage);
            stage = stage + 1 == STAGES ? 0 : stage + 1;
            next = next + 1 == STAGES ? 0 : next + 1;
        };
        int64_t kt = 0;
        if constexpr (!std::is_same_v<Spread, decltype(nullptr)>) {
            for (; kt + STAGES - 1 < kfast; kt++) { // step, with the copies issued during compute
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                spread(stage, next);
                cp_async_commit();
                stage = stage + 1 == STAGES ? 0 : stage + 1;
                next = next + 1 == STAGES ? 0 : next + 1;
            }
        } else {
            for (; kt + STAGES - 1 < kfast; kt++) step(load_fast);
        }
        for (; kt < ktiles; kt++)
            step([&](int buf) {
                if (kt + STAGES - 1 < ktiles) load_stage(buf);
            });
        cp_async_wait<0>();
    }
}

template <int STAGES, class Load, class Compute>
__device__ __forceinline__ void pipeline(int64_t ktiles, Load &load_stage, Compute &compute)
{
    pipeline<STAGES>(ktiles, 0, load_stage, load_stage, compute);
}

// Tile pid's place (bm, bn) in C (by default the block's own, blockIdx.x). Grouped
// rasterization: GROUP_M consecutive block rows sweep the block columns together, so the B
// panels they share stay in L2. Without it: column order.
template <bool RASTER>
__device__ __forceinline__ void block_tile(int64_t mtiles, int64_t ntiles, int64_t &bm, int64_t &bn,
                                           int64_t pid)
{
    if (!RASTER) {
        bm = pid % mtiles, bn = pid / mtiles;
        return;
    }
    constexpr int64_t GROUP_M = 8;
    const int64_t width = GROUP_M * ntiles;
    const int64_t first = pid / width * GROUP_M;
    const int64_t rows = mtiles - first < GROUP_M ? mtiles - first : GROUP_M;
    bm = first + (pid % width) % rows;
    bn = (pid % width) / rows;
}

template <bool RASTER>
__device__ __forceinline__ void block_tile(int64_t mtiles, int64_t ntiles, int64_t &bm, int64_t &bn)
{
    block_tile<RASTER>(mtiles, ntiles, bm, bn, (int64_t)blockIdx.x);
}

// FG_TIMELINE (cmake -DFASTGEMM_TIMELINE=ON, a developer's build; off, none of it is
// compiled): thread 0 of every SGEMM block stamps %globaltimer, the plain kernel's blocks at
// their start and end, the stream-K blocks at their start, after each piece, after its save and
// arrival and after the tile's sum and store, and at their end; launch_streamk then writes the
// launch's stamps to the file that FG_TIMELINE_FILE names (perf/timeline.py reads it).
// Slots: 0 the start, 1 the SM; the plain kernel 2 its end; the stream-K kernel 2 + 3p, 3 + 3p
// and 4 + 3p those of its piece p (the first four), TL_END its end.
constexpr int TL_END = 14;
#ifdef FG_TIMELINE
constexpr int TL_BLOCKS = 8192, TL_SLOTS = TL_END + 1;
static __device__ unsigned long long tl_stamps[2][TL_BLOCKS][TL_SLOTS];
__device__ __forceinline__ void tl_stamp(int kernel, int64_t block, int slot)
{
    if (threadIdx.x != 0 || block >= TL_BLOCKS || slot >= TL_SLOTS) return;
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    tl_stamps[kernel][block][slot] = t;
    if (slot == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        tl_stamps[kernel][block][1] = sm;
    }
}
#else
__device__ __forceinline__ void tl_stamp(int, int64_t, int) {}
#endif

// Stream-K for the last waves (a kernel family's _sk instance, launch_streamk). Of T tiles in
// waves of S blocks (the SMs times the blocks an SM holds), the first `first` (whole waves) are
// computed one tile per block as usual; the other `tiles` are cut into their k-tiles, `iters`
// in all, and `ctas` blocks (one wave) each take an equal run of consecutive ones: so the last
// wave is as long for every SM instead of leaving SMs idle. A run covers the end of one tile,
// whole tiles, the start of another (streamk_run takes them from its first tile boundary on).
// A tile that several blocks share is summed by the last of them to arrive: each writes its
// partial sums to its slot in `partials` (two per block: its first piece, which starts inside a
// tile, and its last, which ends inside one), counts itself in arrived[tile], and the one that
// completes the count adds the slots in the order of the blocks (the same bits on every run)
// and stores C.
struct StreamK {
    int64_t first;  // tiles before the stream-K part (in the rasterized order)
    int64_t tiles;  // tiles of the stream-K part
    int64_t ktiles; // k-tiles of a tile
    int64_t iters;  // tiles * ktiles
    int ctas;       // the blocks of the stream-K launch
    void *partials; // 2 * ctas slots of a block's accumulators
    int *arrived;   // per tile of the part, zero at launch
};

// The first k-tile of block j's run (j = ctas: the end).
__device__ __forceinline__ int64_t sk_begin(const StreamK &sk, int64_t j) { return sk.iters * j / sk.ctas; }

// The block whose run holds k-tile x: the last j with sk_begin(j) <= x.
__device__ __forceinline__ int sk_owner(const StreamK &sk, int64_t x)
{
    const int64_t j = ((x + 1) * sk.ctas - 1) / sk.iters;
    return (int)(j < sk.ctas ? j : sk.ctas - 1);
}

// One block's run over the stream-K part. piece(tile, kt0, kt1) computes the block's
// accumulators for k-tiles [kt0, kt1) of a tile (tile: from 0, in the part); then, if the block
// has the whole tile or completes its sum, finish(tile) stores C. save(slot) writes the block's
// accumulators to a slot, add(slot, first) adds a slot's to them (first, a std::true_type:
// replaces them). A piece that starts inside its tile is its run's first (slot 2j), one that
// starts with the tile and ends inside it its run's last (2j + 1); the tile's first block is
// the one whose run holds its first k-tile.
template <class Piece, class Save, class Add, class Finish>
__device__ __forceinline__ void streamk_run(const StreamK &sk, Piece &&piece, Save &&save, Add &&add,
                                            Finish &&finish)
{
    // The run's numbers live in shared memory: thread 0 writes them, everyone reads them after a
    // barrier, and again after the piece, so that none of them is held in a register through the
    // piece's main loop. (Held there, they took the registers of the 128x128 NT instance's
    // schedule: short-scoreboard stalls went from 4.5% to 30% of its samples, and a k-tile took
    // 1.4 times as long as in the plain kernel.)
    __shared__ int64_t run[7]; // the next k-tile, the end of this part, the other part; the piece
    __shared__ int shared[3];  // the tile's first and last block; whether this block is the last
    const int j = blockIdx.x;
    int piece_no = 0; // FG_TIMELINE's
    tl_stamp(1, j, 0);
    if (threadIdx.x == 0) {
        // The run from its first tile boundary on, then the piece before it: so every block
        // begins at k-tile 0 of a tile, or inside its only tile, and the blocks go over k nearly
        // in step (at k-tile t, or t plus a tile less the run). Run in order, block j would be at
        // k-tile start(j) mod ktiles + t: all of k at once, the operands of every tile of the
        // part live in the L2 together (4096^3, 128x128 tiles: 53% L2 hits, against 91% for the
        // whole waves).
        const int64_t start = sk_begin(sk, j), end = sk_begin(sk, j + 1);
        int64_t bound = (start + sk.ktiles - 1) / sk.ktiles * sk.ktiles;
        if (bound >= end) bound = start;
        run[0] = bound, run[1] = end, run[2] = start, run[3] = bound;
    }
    for (;;) {
        __syncthreads(); // everyone is done with the last piece's numbers and shared memory
        if (threadIdx.x == 0) {
            if (run[0] == run[1]) run[0] = run[2], run[1] = run[3], run[2] = run[3];
            const int64_t it = run[0], stop = run[1];
            const int64_t tile = it < stop ? it / sk.ktiles : -1, t0 = tile * sk.ktiles;
            const int64_t kt1 = stop - t0 < sk.ktiles ? stop - t0 : sk.ktiles;
            run[0] = t0 + kt1, run[4] = tile, run[5] = it - t0, run[6] = kt1;
        }
        __syncthreads();
        if (run[4] < 0) break;
        piece(run[4], run[5], run[6]);
        if (piece_no < 4) tl_stamp(1, j, 2 + 3 * piece_no);
        const int64_t tile = run[4], kt0 = run[5], kt1 = run[6], t0 = tile * sk.ktiles;
        if (kt0 > 0 || kt1 < sk.ktiles) { // shared with other blocks
            save(2 * (int64_t)j + (kt0 == 0));
            __threadfence();
            __syncthreads();
            if (threadIdx.x == 0) {
                const int j0 = kt0 == 0 ? j : sk_owner(sk, t0);
                const int j1 = kt1 == sk.ktiles ? j : sk_owner(sk, t0 + sk.ktiles - 1);
                shared[0] = j0, shared[1] = j1;
                shared[2] = atomicAdd(&sk.arrived[tile], 1) == j1 - j0;
            }
            __syncthreads();
            if (piece_no < 4) tl_stamp(1, j, 3 + 3 * piece_no);
            if (!shared[2]) {
                piece_no++;
                continue;
            }
            __threadfence();
            const int j0 = shared[0], j1 = shared[1];
            add(2 * (int64_t)j0 + 1, std::true_type());
            for (int q = j0 + 1; q <= j1; q++) add(2 * (int64_t)q, std::false_type());
        }
        finish(tile);
        if (piece_no < 4) tl_stamp(1, j, 4 + 3 * piece_no);
        piece_no++;
    }
    tl_stamp(1, j, TL_END);
}

// Split-K: slice z of the k range wrote its partial products to ws + z*m*n (ld m). C = alpha *
// (the slices summed in order) + beta*C: the same bits on every run. beta = 0 never reads C.
template <class T>
__global__ void splitk_reduce(int64_t m, int64_t n, int splits, const T *__restrict__ ws, T alpha,
                              T beta, T *__restrict__ c, int64_t ldc)
{
    const int64_t mn = m * n;
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < mn;
         idx += (int64_t)gridDim.x * blockDim.x) {
        T s = ws[idx];
        for (int z = 1; z < splits; z++) s += ws[z * mn + idx];
        T *cij = c + idx % m + idx / m * ldc;
        *cij = beta == T(0) ? alpha * s : alpha * s + beta * *cij;
    }
}

// Split-K: `splits` slices asked of k, made of whole k-tiles of bk and none empty. Returns the
// slices made (what a workspace must hold) and sets the k-length of each (the last may be short).
inline int k_slices(int64_t k, int bk, int splits, int64_t *kslice)
{
    const int64_t ktiles = (k + bk - 1) / bk;
    if (splits > ktiles) splits = (int)ktiles;
    if (splits < 1) splits = 1;
    *kslice = (ktiles + splits - 1) / splits * bk;
    return (int)((k + *kslice - 1) / *kslice);
}

inline bool aligned16(const void *p, int64_t ld, int elem)
{
    return (uintptr_t)p % 16 == 0 && ld % (16 / elem) == 0;
}

// Every kernel of the families: C = alpha op(A) op(B) + beta C over the block tiles of
// gridDim.x and the K slices of gridDim.z (kslice long; slice z writes to c + z*c_slice);
// vec_a, vec_b, vec_c: the operand allows 16-byte accesses (aligned16).
template <class T>
using GemmKernel = void (*)(int64_t m, int64_t n, int64_t k, int64_t kslice, T alpha, const T *a,
                            int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc,
                            int64_t c_slice, bool vec_a, bool vec_b, bool vec_c);

// The kernel allowed its shared memory (allow_smem) on each device: the host stub it was done
// for, by device. Keyed by the stub, not a flag: nvcc 13 gives every translation unit a stub of
// its own for a __global__ template instance (-static-global-template-stub, on by default),
// while this record, a static of an inline template, is one for the program. Where two
// translation units hold the same instance (the tuner's candidates, each built on its own: two
// TMA configurations with one fallback), a flag set through the first stub left the second
// without the attribute, and its launch failed (invalid argument).
struct SmemAsked {
    std::atomic<const void *> stub[64] = {};
};

// Lets `kernel` use smem_bytes of dynamic shared memory on the current device (above 48 KB a
// kernel must ask, once per device and stub; racing threads may both ask: harmless).
template <class Kernel>
cudaError_t allow_smem(Kernel kernel, SmemAsked &asked, int smem_bytes)
{
    int dev = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    const void *stub = reinterpret_cast<const void *>(kernel);
    if (dev < 64 && asked.stub[dev].load(std::memory_order_acquire) == stub) return cudaSuccess;
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (err == cudaSuccess && dev < 64) asked.stub[dev].store(stub, std::memory_order_release);
    return err;
}

// What every launch shares (alpha != 0, k > 0): `kernel` may use smem_bytes of shared memory
// (allow_smem), and its bm x bn block tiles go over the K range cut into
// `splits` slices of whole bk tiles. go(grid, kslice, alpha, beta, c, ldc, c_slice, vec_c)
// launches the kernel: over C itself with one slice; with more, each slice writes its partial
// products to ws (splits * m * n elements, from the caller) and splitk_reduce adds them up in
// order.
template <class T, class Kernel, class Go>
cudaError_t launch_sliced(Kernel kernel, SmemAsked &asked, int smem_bytes, int bm,
                          int bn, int bk, int64_t m, int64_t n, int64_t k, T alpha, T beta, T *c,
                          int64_t ldc, int splits, T *ws, cudaStream_t s, Go &&go)
{
    cudaError_t err = allow_smem(kernel, asked, smem_bytes);
    if (err != cudaSuccess) return err;
    const int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
    if (tiles > 0x7fffffff) return cudaErrorInvalidConfiguration;
    int64_t kslice;
    splits = k_slices(k, bk, ws ? splits : 1, &kslice);
    const int E = sizeof(T);
    const dim3 grid((unsigned)tiles, 1, (unsigned)splits);
    if (splits == 1) {
        go(grid, kslice, alpha, beta, c, ldc, int64_t(0), aligned16(c, ldc, E));
    } else {
        go(grid, kslice, T(1), T(0), ws, m, m * n, aligned16(ws, m, E));
        const int64_t blocks = (m * n + 255) / 256;
        splitk_reduce<T><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, s>>>(
            m, n, splits, ws, alpha, beta, c, ldc);
    }
    return cudaGetLastError();
}

// Launches a GemmKernel (launch_sliced).
template <class T>
cudaError_t launch_tiles(GemmKernel<T> kernel, SmemAsked &asked, int threads,
                         int smem_bytes, int bm, int bn, int bk, int64_t m, int64_t n, int64_t k,
                         T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
                         int64_t ldc, int splits, T *ws, cudaStream_t s)
{
    const bool va = aligned16(a, lda, sizeof(T)), vb = aligned16(b, ldb, sizeof(T));
    return launch_sliced(kernel, asked, smem_bytes, bm, bn, bk, m, n, k, alpha, beta, c, ldc, splits, ws, s,
                         [&](dim3 grid, int64_t kslice, T al, T be, T *cs, int64_t ldcs, int64_t slice, bool vc) {
                             kernel<<<grid, threads, smem_bytes, s>>>(m, n, k, kslice, al, a, lda, b, ldb, be, cs,
                                                                      ldcs, slice, va, vb, vc);
                         });
}

// ---- stream-K (StreamK) on the host ----

// How many blocks of `kernel` (threads, smem_bytes) run at once on the current device: its SMs
// times the blocks one holds; 0 if unknown. Asked once per device (cache: per kernel).
template <class Kernel>
int resident_blocks(Kernel kernel, SmemAsked &asked, std::atomic<int> (&cache)[64],
                    int threads, int smem_bytes)
{
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev >= 64) return 0;
    if (int known = cache[dev].load(std::memory_order_relaxed)) return known;
    if (allow_smem(kernel, asked, smem_bytes) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes) != cudaSuccess) {
        cudaGetLastError(); // no plan, no error left for the launch to report
        return 0;
    }
    cache[dev].store(sms * per_sm, std::memory_order_relaxed);
    return sms * per_sm;
}

// The stream-K part of `tiles` tiles of `ktiles` k-tiles each, run in waves of `slots` blocks.
// A last wave of fewer than half the slots takes a whole wave with it, so that its blocks run
// 1 to 1.5 tiles each; a larger one runs alone, each block a fraction of a tile. Unless forced,
// only after 8 whole waves or more, where the last wave leaves more than 2% of all the slots'
// time idle and a tile has min_ktiles k-tiles or more. Measured on the H100 (perf/RESULTS.md,
// 128x256 and 128x128 tiles, each transpose pair, against the kernel without it): 8192^3 (15.5
// waves, 3% idle) 1.7-2.5% faster; 4096^3 (3.9 waves) 0.7-1.3% faster in NN and TN, NT and TT
// within 0.3%, but 4095^3 TN 3% slower; 16384^3 and 16384x16384x1024 (62.1 waves, 1.5% idle)
// within 0.3%, but one of them 0.8-1.5% slower (NT at k = 1024). min_waves: the whole waves
// asked for (8 above; the DMMA TMA kernels ask their own, dgemm_dmma.cuh).
struct StreamKPlan {
    int64_t first = 0, tiles = 0;
    int ctas = 0;
};
inline StreamKPlan streamk_plan(int64_t tiles, int64_t ktiles, int slots, int min_ktiles, bool force,
                                int min_waves = 8)
{
    StreamKPlan p;
    if (slots < 1 || tiles < 1 || ktiles < 1) return p;
    const int64_t full = tiles / slots, rest = tiles % slots;
    if (!force && (full < min_waves || rest == 0 || ktiles < min_ktiles ||
                   (double)tiles >= 0.98 * (double)((full + 1) * slots)))
        return p;
    p.tiles = rest == 0 ? slots : full >= 1 && 2 * rest < slots ? rest + slots : rest;
    p.first = tiles - p.tiles;
    const int64_t iters = p.tiles * ktiles;
    p.ctas = (int)(iters < slots ? iters : slots);
    return p;
}

// The workspace of a stream-K launch: 2 * ctas slots of bm * bn elements, then the counters.
inline size_t streamk_bytes(const StreamKPlan &p, int bm, int bn, int elem)
{
    if (p.tiles == 0) return 0;
    return (size_t)2 * p.ctas * bm * bn * elem + (size_t)p.tiles * sizeof(int);
}

// The StreamK of plan p (ktiles k-tiles a tile) over ws, a workspace of streamk_bytes(p, bm, bn,
// elem), its counters zeroed on s.
inline cudaError_t streamk_args(StreamK &sk, const StreamKPlan &p, int64_t ktiles, int bm, int bn, int elem,
                                void *ws, cudaStream_t s)
{
    sk.first = p.first, sk.tiles = p.tiles, sk.ktiles = ktiles;
    sk.iters = sk.tiles * sk.ktiles, sk.ctas = p.ctas;
    sk.partials = ws;
    sk.arrived = reinterpret_cast<int *>(static_cast<char *>(ws) + (size_t)2 * p.ctas * bm * bn * elem);
    return cudaMemsetAsync(sk.arrived, 0, (size_t)p.tiles * sizeof(int), s);
}

#ifdef FG_TIMELINE
// FG_TIMELINE: the stamps of the launch just queued on s, in microseconds from the first block's
// start, to the file FG_TIMELINE_FILE names (overwritten: the last launch stays), then cleared.
// A line "plan" (the plan and the k-tiles of a tile), then "dp block sm start end" and "sk block
// sm start" and the stamps of its pieces and its end, -1 where none was made.
inline void tl_write(const StreamKPlan &p, int64_t ktiles, cudaStream_t s)
{
    const char *path = getenv("FG_TIMELINE_FILE");
    if (!path || cudaStreamSynchronize(s) != cudaSuccess) return;
    static unsigned long long h[2][TL_BLOCKS][TL_SLOTS];
    if (cudaMemcpyFromSymbol(h, tl_stamps, sizeof h) != cudaSuccess) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    const int64_t dp = p.first < TL_BLOCKS ? p.first : TL_BLOCKS, skb = p.ctas < TL_BLOCKS ? p.ctas : TL_BLOCKS;
    unsigned long long t0 = ~0ull;
    for (int64_t b = 0; b < dp; b++) t0 = h[0][b][0] < t0 ? h[0][b][0] : t0;
    for (int64_t b = 0; b < skb; b++) t0 = h[1][b][0] < t0 ? h[1][b][0] : t0;
    auto us = [&](unsigned long long t) { return t ? (double)(t - t0) * 1e-3 : -1.0; };
    fprintf(f, "plan first %lld tiles %lld ctas %d ktiles %lld\n", (long long)p.first, (long long)p.tiles,
            p.ctas, (long long)ktiles);
    for (int64_t b = 0; b < dp; b++)
        fprintf(f, "dp %lld %llu %.3f %.3f\n", (long long)b, h[0][b][1], us(h[0][b][0]), us(h[0][b][2]));
    for (int64_t b = 0; b < skb; b++) {
        fprintf(f, "sk %lld %llu", (long long)b, h[1][b][1]);
        for (int q = 0; q < TL_SLOTS; q++)
            if (q != 1) fprintf(f, " %.3f", us(h[1][b][q]));
        fprintf(f, "\n");
    }
    fclose(f);
    memset(h, 0, sizeof h);
    cudaMemcpyToSymbol(tl_stamps, h, sizeof h);
}
#endif

// Launches `kernel` (a GemmKernel, unsplit) over the first tiles of the plan and then sk_kernel
// over the rest, with the workspace ws of streamk_bytes(p, bm, bn, sizeof(T)).
template <class T, class SkKernel>
cudaError_t launch_streamk(GemmKernel<T> kernel, SmemAsked &asked, SkKernel sk_kernel,
                           SmemAsked &asked_sk, const StreamKPlan &p, int threads,
                           int smem_bytes, int bm, int bn, int bk, int64_t m, int64_t n, int64_t k,
                           T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
                           int64_t ldc, void *ws, cudaStream_t s)
{
    cudaError_t err = allow_smem(kernel, asked, smem_bytes);
    if (err == cudaSuccess) err = allow_smem(sk_kernel, asked_sk, smem_bytes);
    if (err != cudaSuccess) return err;
    const bool va = aligned16(a, lda, sizeof(T)), vb = aligned16(b, ldb, sizeof(T));
    const bool vc = aligned16(c, ldc, sizeof(T));
    if (p.first > 0)
        kernel<<<(unsigned)p.first, threads, smem_bytes, s>>>(m, n, k, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                                               0, va, vb, vc);
    StreamK sk;
    err = streamk_args(sk, p, (k + bk - 1) / bk, bm, bn, (int)sizeof(T), ws, s);
    if (err != cudaSuccess) return err;
    sk_kernel<<<(unsigned)p.ctas, threads, smem_bytes, s>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, va, vb,
                                                             vc, sk);
#ifdef FG_TIMELINE
    tl_write(p, sk.ktiles, s);
#endif
    return cudaGetLastError();
}

// A configuration's launcher, the transpose pair chosen at run time.
template <class T>
using LaunchFn = cudaError_t (*)(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
                                 const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
                                 int64_t ldc, int splits, T *ws, cudaStream_t s);

// launch_any<Cfg, T, KERNEL>: Cfg's launcher over the four instances KERNEL<Cfg, TA, TB>.
#define FG_LAUNCH_ANY(T, KERNEL)                                                                \
    template <class Cfg>                                                                        \
    cudaError_t launch_any(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,          \
                           const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,      \
                           int64_t ldc, int splits, T *ws, cudaStream_t s)                      \
    {                                                                                           \
        static fg_kern::SmemAsked asked[4];                                                     \
        const fg_kern::GemmKernel<T> kernels[4] = {KERNEL<Cfg, false, false>, KERNEL<Cfg, true, false>, \
                                                   KERNEL<Cfg, false, true>, KERNEL<Cfg, true, true>}; \
        const int t = ta + 2 * tb;                                                              \
        return fg_kern::launch_tiles<T>(kernels[t], asked[t], Cfg::THREADS, Cfg::SMEM_BYTES,    \
                                        Cfg::BM, Cfg::BN, Cfg::BK, m, n, k, alpha, a, lda, b,   \
                                        ldb, beta, c, ldc, splits, ws, s);                      \
    }

} // namespace fg_kern
