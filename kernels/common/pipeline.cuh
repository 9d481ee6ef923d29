// pipeline.cuh: the main loop over k-tiles, with cp.async's groups in flight over STAGES shared
// buffers.
#pragma once

#include "ptx.cuh"

#include <stdint.h>

#include <type_traits>

namespace fg_kern {

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

} // namespace fg_kern
