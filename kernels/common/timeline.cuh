// timeline.cuh: FG_TIMELINE's instrumentation of the SGEMM kernels: the blocks' stamps on the
// device, and their file on the host.
#pragma once

#include "../kernels.h"

#include <cuda_runtime.h>
#include <stdint.h>
#ifdef FG_TIMELINE // the stamps' file
#include <cstdio>
#include <cstring>
#endif

namespace fg_kern {

// FG_TIMELINE (cmake -DFASTGEMM_TIMELINE=ON, a developer's build; off, none of it is
// compiled): thread 0 of every SGEMM block stamps %globaltimer, the plain kernel's blocks at
// their start and end, the stream-K blocks at their start, after each piece, after its save and
// arrival and after the tile's sum and store, and at their end; launch_streamk then writes the
// launch's stamps to the file fg_kernel_timeline_file names (FG_TIMELINE_FILE, handed down by
// the backend; perf/timeline.py reads it).
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

#ifdef FG_TIMELINE
// The stamps of the stream-K launch just queued on s (first: the plain kernel's blocks, ctas:
// the stream-K kernel's, over `tiles` tiles of ktiles k-tiles), in microseconds from the first
// block's start, to the file fg_kernel_timeline_file names (overwritten: the last launch stays),
// then cleared. A line "plan" (the plan and the k-tiles of a tile), then "dp block sm start end"
// and "sk block sm start" and the stamps of its pieces and its end, -1 where none was made.
inline void tl_write(int64_t first, int64_t tiles, int ctas, int64_t ktiles, cudaStream_t s)
{
    const char *path = fg_kernel_timeline_file;
    if (!path || cudaStreamSynchronize(s) != cudaSuccess) return;
    static unsigned long long h[2][TL_BLOCKS][TL_SLOTS];
    if (cudaMemcpyFromSymbol(h, tl_stamps, sizeof h) != cudaSuccess) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    const int64_t dp = first < TL_BLOCKS ? first : TL_BLOCKS, skb = ctas < TL_BLOCKS ? ctas : TL_BLOCKS;
    unsigned long long t0 = ~0ull;
    for (int64_t b = 0; b < dp; b++) t0 = h[0][b][0] < t0 ? h[0][b][0] : t0;
    for (int64_t b = 0; b < skb; b++) t0 = h[1][b][0] < t0 ? h[1][b][0] : t0;
    auto us = [&](unsigned long long t) { return t ? (double)(t - t0) * 1e-3 : -1.0; };
    fprintf(f, "plan first %lld tiles %lld ctas %d ktiles %lld\n", (long long)first, (long long)tiles, ctas,
            (long long)ktiles);
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

} // namespace fg_kern
