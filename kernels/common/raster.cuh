// raster.cuh: the order in which the blocks of a launch take the tiles of C.
#pragma once

#include <stdint.h>

namespace fg_kern {

// Tile pid's place (bm, bn) in C (by default the block's own, blockIdx.x). Grouped
// rasterization: GROUP_M consecutive block rows sweep the block columns together, so the B
// panels they share stay in L2. Without it (FG_COLUMN_ORDER): column order.
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

} // namespace fg_kern
