// ozaki_wgmma.cuh: the residue GEMMs of the Ozaki scheme on Hopper (sm_90a): the same products
// as ozaki_int8.cuh's, Out[r][c] = (sum_p X[r][p] Y[c][p]) mod modulus(z) (int8 in, exact int32
// sums, bytes out; the last, z = guard.t, the guard's flags), with the k-tiles brought by the
// tensor memory accelerator and multiplied by wgmma.
//
// A block computes tiles of 128 x 256 of Out (how many: the kernel's comment). One warpgroup
// (its first thread) asks for the k-tiles: 128 bytes of k of X's 128 rows and of Y's 256,
// 128-byte swizzled, into 4 stages; each stage's `full` mbarrier counts their bytes. Two
// warpgroups compute, each 64 rows x 256 columns with wgmma m64n256k32 (4 per k-tile) from
// shared memory descriptors, one k-tile's group in flight while the next is issued, and arrive
// on a stage's `empty` mbarrier once the products that read it are done. X and Y are tensor
// maps over all the batch's planes stacked: row r of plane z of X is row z x_rows + x0 + r of
// its map (x0: where the product's vectors begin in their side, kernels.h), likewise for Y. The
// split pass's zeros past k make every k-tile whole; rows past the product's own are another
// block's or padding, and reach only entries past C.
#pragma once

#include "common/ptx.cuh"
#include "common/tma.cuh"
#include "ozaki_guard.cuh"
#include "ozaki_moduli.cuh"

#include <stdint.h>

namespace fg_ozaki {

constexpr int WG_BM = 128, WG_BN = 256, WG_BK = 128, WG_STAGES = 4, WG_THREADS = 384, WG_GROUP = 8;
constexpr int WG_X_BYTES = WG_BM * WG_BK, WG_Y_BYTES = WG_BN * WG_BK; // 16 and 32 KB
constexpr int WG_STAGE = WG_X_BYTES + WG_Y_BYTES;
// + alignment; the stages' barriers, the tile slots' barriers and the slots
constexpr int WG_SMEM = WG_STAGES * WG_STAGE + 1024 + 2 * WG_STAGES * 8 + 4 * 8 + 2 * 4;

// The descriptor of a K-major tile of 128-byte rows, 128-byte swizzled, at p (1024-aligned):
// groups of 8 rows 1024 bytes apart. Adding 2 moves it 32 bytes along k (one wgmma's k).
__device__ __forceinline__ uint64_t wg_desc(const void *p)
{
    const uint64_t a = fg_kern::smem_addr(p);
    return ((a & 0x3ffff) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
}

// d += x (64 x 32, K-major) y^T (256 x 32, K-major), int8 in, int32 sums.
__device__ __forceinline__ void wgmma_s8(int (&d)[128], uint64_t x, uint64_t y)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("{\n.reg .pred acc;\nsetp.ne.b32 acc, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
                 "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
                 "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
                 "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "
                 "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "
                 "%87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, "
                 "%103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, "
                 "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
                 "}, %128, %129, acc;\n}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
                 "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]),
                 "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]),
                 "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]),
                 "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]),
                 "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]),
                 "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]),
                 "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]),
                 "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]),
                 "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]),
                 "+r"(d[71]), "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]),
                 "+r"(d[78]), "+r"(d[79]), "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]),
                 "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]),
                 "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]), "+r"(d[97]), "+r"(d[98]),
                 "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), "+r"(d[104]),
                 "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]),
                 "+r"(d[111]), "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]),
                 "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]), "+r"(d[121]), "+r"(d[122]),
                 "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
                 : "l"(x), "l"(y), "r"(1));
#else
    __trap();
#endif
}

// The warpgroup's registers a thread: the producer gives up what the consumers take, within the
// SM's 64 K (128 x 40 + 256 x 232).
template <int N>
__device__ __forceinline__ void regs_dec()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N>
__device__ __forceinline__ void regs_inc()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

__device__ __forceinline__ void wgmma_fence()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
// Waits until at most N committed groups are in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

// Where tile number `tile` lies, in planes of tiles_x x tiles_y tiles of Out: its plane z
// (counted from the launch's first), first row r0 and first column c0. Tiles go in groups of WG_GROUP columns (of Y), row by row within a
// group, so that the blocks at work at once read 8 of Y's tiles and about 17 of X's rather than
// all of Y's: they share them in L2 instead of reading them again from memory wave after wave.
struct WgTile {
    int64_t r0, c0, z;
};
__device__ __forceinline__ WgTile wg_tile(int tile, int tiles_x, int tiles_y)
{
    const int per_z = tiles_x * tiles_y, pid = tile % per_z, in_group = WG_GROUP * tiles_y;
    const int first = pid / in_group * WG_GROUP, cols = min(tiles_x - first, WG_GROUP);
    const int tx = first + pid % in_group % cols, ty = pid % in_group / cols;
    return {(int64_t)ty * WG_BM, (int64_t)tx * WG_BN, tile / per_z};
}

// NT: the moduli (T_S for SGEMM, else DGEMM's, whose guard is DGEMM's). The residue GEMMs
// (GUARD false) run persistent: the `planes` x tiles_x x tiles_y tiles are handed out in order,
// block b's first tile b, each next one the first not yet taken (*next_tile counts those past
// the first gridDim.x, 0 at the launch), so that the tiles at work at once stay neighbours
// however the blocks' pace drifts; the producer runs ahead through the stages into a block's
// next tile while the consumers finish one, and tells them which tile it is through two slots
// in shared memory. The guard's product (GUARD true: plane z0, one tile a block) has its own
// launch: its epilogue needs the registers a loop over tiles would hold.
template <int NT, bool GUARD>
__global__ void __launch_bounds__(WG_THREADS, 1)
    int8_gemm_wgmma(const __grid_constant__ CUtensorMap mx, const __grid_constant__ CUtensorMap my,
                    uint8_t *__restrict__ Out, GuardArgs guard, int64_t kp, int64_t ldo, int64_t x_rows,
                    int64_t x0, int64_t y_rows, int64_t y0, int64_t os, int tiles_x, int tiles_y, int z0, int planes,
                    unsigned *next_tile)
{
    if (*guard.inputs) return; // an Inf or NaN: the SIMT (DMMA) kernels take the call
    extern __shared__ unsigned char raw[];
    unsigned char *smem = reinterpret_cast<unsigned char *>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~(uintptr_t)1023);
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + WG_STAGES * WG_STAGE), *empty = full + WG_STAGES;
    uint64_t *slot_full = empty + WG_STAGES, *slot_empty = slot_full + 2;
    int *slot = reinterpret_cast<int *>(slot_empty + 2);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int tiles = tiles_x * tiles_y * planes, ktiles = (int)(kp / WG_BK);
    if (threadIdx.x == 0) {
        for (int s = 0; s < WG_STAGES; s++) {
            fg_kern::mbar_init(&full[s], 1);
            fg_kern::mbar_init(&empty[s], 2);
        }
        for (int i = 0; i < 2; i++) {
            fg_kern::mbar_init(&slot_full[i], 1);
            fg_kern::mbar_init(&slot_empty[i], 256); // every consumer thread has read it
        }
        fg_kern::mbar_init_fence();
    }
    __syncthreads();

    // The block's n-th tile goes through slot n % 2 (-1: no more). Stage use `it` counts
    // k-tiles over all the block's tiles: stage it % WG_STAGES, in its (it / WG_STAGES)-th round.
    if (wg == 2) { // the producer
        regs_dec<40>();
        if (tid == 0) {
            fg_kern::tma_prefetch_map(&mx);
            fg_kern::tma_prefetch_map(&my);
            int it = 0, tile = blockIdx.x;
            for (int n = 0;; n++) {
                if (GUARD) {
                    if (n) break;
                } else {
                    if (n >= 2) fg_kern::mbar_wait(&slot_empty[n % 2], (n / 2 - 1) & 1);
                    slot[n % 2] = tile < tiles ? tile : -1;
                    fg_kern::mbar_arrive(&slot_full[n % 2]);
                    if (tile >= tiles) break;
                }
                const WgTile w = wg_tile(tile, tiles_x, tiles_y);
                const int64_t z = z0 + w.z;
                for (int kt = 0; kt < ktiles; kt++, it++) {
                    const int s = it % WG_STAGES;
                    if (it >= WG_STAGES) fg_kern::mbar_wait(&empty[s], (it / WG_STAGES - 1) & 1);
                    unsigned char *sx = smem + s * WG_STAGE, *sy = sx + WG_X_BYTES;
                    fg_kern::mbar_expect_bytes(&full[s], WG_STAGE);
                    fg_kern::tma_load_2d(sx, &mx, &full[s], kt * WG_BK, (int)(z * x_rows + x0 + w.r0));
                    fg_kern::tma_load_2d(sy, &my, &full[s], kt * WG_BK, (int)(z * y_rows + y0 + w.c0));
                }
                if (!GUARD) tile = (int)gridDim.x + (int)atomicAdd(next_tile, 1u);
            }
        }
        return;
    }

    regs_inc<232>();
    // Thread (warp w, g, q) holds rows 16 w + g and 16 w + g + 8 of its warpgroup's 64, columns
    // 8 i + 2 q and 8 i + 2 q + 1 for i < 32.
    const int w = tid / 32, g = tid % 32 / 4, q = tid % 4;
    int it = 0;
    for (int n = 0;; n++) {
        int tile = blockIdx.x;
        if (GUARD) {
            if (n) break;
        } else {
            fg_kern::mbar_wait(&slot_full[n % 2], (n / 2) & 1);
            tile = slot[n % 2];
            fg_kern::mbar_arrive(&slot_empty[n % 2]);
            if (tile < 0) break;
        }
        const WgTile at = wg_tile(tile, tiles_x, tiles_y);
        int d[128];
#pragma unroll
        for (int i = 0; i < 128; i++) d[i] = 0;
        for (int kt = 0; kt < ktiles; kt++, it++) {
            const int s = it % WG_STAGES;
            fg_kern::mbar_wait(&full[s], (it / WG_STAGES) & 1);
            const unsigned char *sx = smem + s * WG_STAGE + wg * (64 * WG_BK), *sy = smem + s * WG_STAGE + WG_X_BYTES;
            const uint64_t dx = wg_desc(sx), dy = wg_desc(sy);
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < WG_BK / 32; ks++) wgmma_s8(d, dx + 2 * ks, dy + 2 * ks);
            wgmma_commit();
            wgmma_wait<1>(); // the previous k-tile's products are done: its stage may be refilled
            if (kt > 0 && tid == 0) fg_kern::mbar_arrive(&empty[(it - 1) % WG_STAGES]);
        }
        wgmma_wait<0>();
        if (tid == 0) fg_kern::mbar_arrive(&empty[(it - 1) % WG_STAGES]); // the tile's last k-tile

        const int64_t r = at.r0 + wg * 64 + 16 * w + g;
        if (GUARD) { // the magnitudes' product: the guard's flags
            constexpr bool F64 = NT > T_S;
            const GuardSide b0 = guard_side<F64>(guard.fb, guard.sb, r, guard.n);
            const GuardSide b1 = guard_side<F64>(guard.fb, guard.sb, r + 8, guard.n);
            unsigned bad = 0;
#pragma unroll
            for (int i = 0; i < 32; i++)
                guard_quad<F64>(guard, at.c0 + 8 * i + 2 * q, r, r + 8, b0, b1,
                                {d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]}, &bad);
            guard_count(guard, bad);
        } else {
            const int64_t z = z0 + at.z;
            uint8_t *o = Out + z * os + r * ldo + at.c0 + 2 * q;
            const Residue res(modulus((int)z));
#pragma unroll
            for (int i = 0; i < 32; i++) {
                *reinterpret_cast<uchar2 *>(o + 8 * i) = make_uchar2(res(d[4 * i]), res(d[4 * i + 1]));
                *reinterpret_cast<uchar2 *>(o + 8 * ldo + 8 * i) = make_uchar2(res(d[4 * i + 2]), res(d[4 * i + 3]));
            }
        }
    }
}

} // namespace fg_ozaki
