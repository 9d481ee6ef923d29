// offload_ring.h: a device's staging ring for the host-operand pipeline (offload_ring.cu):
// its streams, its events and its ring of pinned slots, made at the device's first pipelined
// call and kept for the life of the process, so that the hot path of a call makes no
// cudaHostAlloc and never page-locks user memory.
#ifndef FG_OFFLOAD_RING_H
#define FG_OFFLOAD_RING_H

#include "common/fg.h"
#include "kernels/kernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace fg_offload {

struct Slot {
    char *host;
    cudaEvent_t ev; // recorded after the copy that last used the buffer
    int job;        // a copy out in flight: its job and chunk; -1 otherwise
    int64_t chunk;
};

struct Context {
    std::mutex lock; // one pipelined call at a time per device: it fills the PCIe link alone
    std::atomic<bool> ready{false}; // read without the lock by fg_offload_warm
    cudaStream_t up = nullptr, comp = nullptr, comp2 = nullptr, down = nullptr; // copies in,
        // kernels (comp2: in core, every other kernel), copies out
    std::vector<Slot> slots;
    size_t slot_bytes = 0;
    std::vector<cudaEvent_t> events; // grown as calls need more, kept
    fg_ozaki_status *statuses = nullptr; // pinned, one per kernel of a call: the Ozaki scheme's
    size_t status_count = 0;             // status comes back without a wait

    // The ring of about pinned_bytes in slots of up to slot_max bytes, once.
    cudaError_t init(size_t pinned_bytes, size_t slot_max);
    // At least n events in `events`.
    cudaError_t reserve_events(size_t n);
    // At least n statuses (between calls: nothing may still be copying into them).
    cudaError_t reserve_statuses(size_t n);
};

// Device dev's context (0 <= dev < FG_MAX_DEVICES).
Context &context(int dev);

// A 2-D region of `cols` columns of `width` bytes, cut into chunks that fit one slot: whole
// columns when a column fits, else pieces of one column.
struct Chunking {
    size_t width, slot;
    int64_t cols;
    int64_t per_chunk() const { return (int64_t)(slot / width); }           // columns, when width <= slot
    int64_t pieces() const { return (int64_t)((width + slot - 1) / slot); } // per column, else
    int64_t count() const
    {
        if (width == 0 || cols == 0) return 0;
        return width <= slot ? (cols + per_chunk() - 1) / per_chunk() : cols * pieces();
    }
    // Chunk q: columns [col, col + ncols), bytes [off, off + w) of each.
    void chunk(int64_t q, int64_t *col, int64_t *ncols, size_t *off, size_t *w) const
    {
        if (width <= slot) {
            *col = q * per_chunk();
            *ncols = std::min(per_chunk(), cols - *col);
            *off = 0;
            *w = width;
        } else {
            *col = q / pieces();
            *ncols = 1;
            *off = (size_t)(q % pieces()) * slot;
            *w = std::min(slot, width - *off);
        }
    }
};

} // namespace fg_offload

#endif
