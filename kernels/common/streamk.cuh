// streamk.cuh: stream-K for the last waves of a launch: the blocks' runs on the device and the
// plan on the host.
#pragma once

#include "timeline.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

namespace fg_kern {

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
    // piece's main loop, whose schedule needs every register it has (held there, they make the
    // main loop stall on shared-memory loads).
    __shared__ int64_t run[7]; // the next k-tile, the end of this part, the other part; the piece
    __shared__ int shared[3];  // the tile's first and last block; whether this block is the last
    const int j = blockIdx.x;
    int piece_no = 0; // FG_TIMELINE's
    tl_stamp(1, j, 0);
    if (threadIdx.x == 0) {
        // The run from its first tile boundary on, then the piece before it: so every block
        // begins at k-tile 0 of a tile, or inside its only tile, and the blocks go over k nearly
        // in step (at k-tile t, or t plus a tile less the run), sharing their operands' k-tiles
        // in the L2. Run in order, block j would be at k-tile start(j) mod ktiles + t: all of k
        // at once, and the operands of every tile of the part would not fit in the L2 together.
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

// ---- the plan, on the host ----

// The stream-K part of `tiles` tiles of `ktiles` k-tiles each, run in waves of `slots` blocks.
// A last wave of fewer than half the slots takes a whole wave with it, so that its blocks run
// 1 to 1.5 tiles each; a larger one runs alone, each block a fraction of a tile. Unless forced,
// only after min_waves whole waves or more (8 by default; the DMMA TMA kernels ask their own,
// dgemm_dmma_launch.cuh), where the last wave leaves more than 2% of all the slots' time idle
// and a tile has min_ktiles k-tiles or more: with fewer waves, or less idle time, the partial
// sums cost as much as the idle time they save (perf/RESULTS.md has the measurements).
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

} // namespace fg_kern
