// ozaki_int8.cuh: the residue GEMMs of the Ozaki scheme (ozaki.cu): int8 products with exact
// int32 sums on the tensor cores (mma.sync m16n8k32, sm_80 and up).
//
// Out[r][c] = (sum_p X[r][p] Y[c][p]) mod m for int8 X (rows x kp) and Y (cols x kp), both
// k-contiguous with leading dimension kp: the sums exact in int32, Out in bytes (row-major,
// leading dimension ldo), m the modulus of the batch entry. The split pass
// writes X and Y padded with zeros to whole tiles (rows and cols multiples of 128, kp of 64), so
// the kernel has no edge. blockIdx.z picks one of a batch (a modulus): X + z xs, Y + z ys,
// Out + z os, modulus(z); the last, z = guard.t, multiplies the 7-bit magnitudes and leaves the
// guard's flags instead (ozaki_guard.cuh).
//
// A block computes 128 x 128 of Out with 8 warps (2 x 4, 64 x 32 each) from k-tiles of 64
// bytes that cp.async brings in 4 stages. Rows of a stage are 80 bytes apart, so the 8 rows that
// one ldmatrix reads (16 bytes each) fall in distinct banks.
#pragma once

#include "common/ptx.cuh"
#include "ozaki_guard.cuh"
#include "ozaki_moduli.cuh"

#include <stdint.h>

namespace fg_ozaki {

constexpr int TILE = 128, BK = 64, STAGES = 4, THREADS = 256;
constexpr int ROW = BK + 16;                     // bytes between rows of a stage
constexpr int STAGE_BYTES = 2 * TILE * ROW;      // X's 128 rows, then Y's
constexpr int GEMM_SMEM = STAGES * STAGE_BYTES;  // 80 KB

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(fg_kern::smem_addr(p)));
}

// acc += a (16 x 32, row) b (32 x 8, col), int8 in, int32 sums.
__device__ __forceinline__ void mma_s8(int acc[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// NT: the moduli (T_S for SGEMM, else DGEMM's, whose guard is DGEMM's).
template <int NT>
__global__ void __launch_bounds__(THREADS) int8_gemm(const int8_t *__restrict__ X, const int8_t *__restrict__ Y,
                                                     uint8_t *__restrict__ Out, GuardArgs guard, int64_t kp,
                                                     int64_t ldo, int64_t xs, int64_t ys, int64_t os)
{
    if (*guard.inputs) return; // an Inf or NaN: the SIMT (DMMA) kernels take the call
    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t r0 = (int64_t)blockIdx.y * TILE, c0 = (int64_t)blockIdx.x * TILE;
    X += blockIdx.z * xs + r0 * kp;
    Y += blockIdx.z * ys + c0 * kp;
    Out += blockIdx.z * os;

    // Each thread copies 16 bytes of rows tid / 4 and 64 + tid / 4 of X and of Y per stage.
    const int lrow = tid / 4, lcol = tid % 4 * 16;
    auto load = [&](int stage, int64_t kt) {
        unsigned char *sx = smem + stage * STAGE_BYTES, *sy = sx + TILE * ROW;
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const int row = lrow + 64 * i;
            fg_kern::copy_full<16, false>(sx + row * ROW + lcol, X + row * kp + kt * BK + lcol);
            fg_kern::copy_full<16, false>(sy + row * ROW + lcol, Y + row * kp + kt * BK + lcol);
        }
    };

    const int wr = warp / 4 * 64, wc = warp % 4 * 32; // the warp's 64 x 32 of the block's tile
    // ldmatrix row addresses: X's 16 x 32 fragment is four 8 x 16-byte matrices (rows 0-7 and
    // 8-15, bytes 0-15 and 16-31); Y's two 8-column fragments are four (columns 0-7 and 8-15,
    // the same bytes).
    const int xr = lane % 8 + 8 * (lane / 8 % 2), xb = 16 * (lane / 16);
    const int yr = lane % 8 + 8 * (lane / 16), yb = 16 * (lane / 8 % 2);
    int acc[4][4][4] = {};
    const int64_t ktiles = kp / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ktiles) load(s, s);
        fg_kern::cp_async_commit();
    }
    for (int64_t kt = 0; kt < ktiles; kt++) {
        fg_kern::cp_async_wait<STAGES - 2>();
        __syncthreads(); // stage kt is in; every warp is done with stage kt - 1, refilled now
        if (kt + STAGES - 1 < ktiles) load((int)((kt + STAGES - 1) % STAGES), kt + STAGES - 1);
        fg_kern::cp_async_commit();
        const unsigned char *sx = smem + (kt % STAGES) * STAGE_BYTES, *sy = sx + TILE * ROW;
#pragma unroll
        for (int ks = 0; ks < BK; ks += 32) {
            uint32_t a[4][4], b[2][4];
#pragma unroll
            for (int mi = 0; mi < 4; mi++) ldmatrix_x4(a[mi], sx + (wr + mi * 16 + xr) * ROW + ks + xb);
#pragma unroll
            for (int nj = 0; nj < 2; nj++) ldmatrix_x4(b[nj], sy + (wc + nj * 16 + yr) * ROW + ks + yb);
#pragma unroll
            for (int mi = 0; mi < 4; mi++)
#pragma unroll
                for (int ni = 0; ni < 4; ni++)
                    mma_s8(acc[mi][ni], a[mi], b[ni / 2][ni % 2 * 2], b[ni / 2][ni % 2 * 2 + 1]);
        }
    }

    // Thread (g, q) of a fragment holds rows g and g + 8, columns 2q and 2q + 1.
    const int g = lane / 4, q = lane % 4;
    if ((int)blockIdx.z == guard.t) { // the magnitudes' product: the guard's flags
        constexpr bool F64 = NT > T_S;
        unsigned bad = 0;
#pragma unroll
        for (int mi = 0; mi < 4; mi++) {
            const int64_t r = r0 + wr + mi * 16 + g;
            const GuardSide b0 = guard_side<F64>(guard.fb, guard.sb, r, guard.n);
            const GuardSide b1 = guard_side<F64>(guard.fb, guard.sb, r + 8, guard.n);
#pragma unroll
            for (int ni = 0; ni < 4; ni++) {
                const int *a = acc[mi][ni];
                guard_quad<F64>(guard, c0 + wc + ni * 8 + 2 * q, r, r + 8, b0, b1, {a[0], a[1], a[2], a[3]}, &bad);
            }
        }
        guard_count(guard, bad);
        return;
    }
    const Residue res(modulus((int)blockIdx.z));
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++) {
            const int64_t r = r0 + wr + mi * 16 + g, c = c0 + wc + ni * 8 + 2 * q;
            const int *a = acc[mi][ni];
            *reinterpret_cast<uchar2 *>(Out + r * ldo + c) = make_uchar2(res(a[0]), res(a[1]));
            *reinterpret_cast<uchar2 *>(Out + (r + 8) * ldo + c) = make_uchar2(res(a[2]), res(a[3]));
        }
}

} // namespace fg_ozaki
