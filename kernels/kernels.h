// kernels.h: the kernel layer's face (private). Plans and launches one GEMM on device pointers.
// Everything a launch depends on comes as an argument: the configuration (forced or the
// table's), split-K, stream-K's mode, the workspace. Nothing here reads the settings or
// allocates memory.
#ifndef FG_KERNELS_H
#define FG_KERNELS_H

#include "common/fg.h"

#include <cuda_runtime.h>

// The kernel families: tiled_64x64x16 (float and double), the SIMT SGEMM configurations of
// sgemm_table.gen.h, the DMMA DGEMM configurations of dgemm_table.gen.h (sm_80 and up).
enum { FG_FAMILY_ANY = -1, FG_FAMILY_TILED = 0, FG_FAMILY_SIMT = 1, FG_FAMILY_DMMA = 2 };

// What one launch does, decided before it (fg_kernel_plan_gemm).
typedef struct {
    int family, config; // the kernel
    // The configuration's instance that runs (its transpose pair and variant: the SIMT family
    // runs some NN problems as the TT of the transposed one, never in slices), and the one that
    // runs without workspace (fg_kernel_plan_unsplit).
    int instance, instance_unsplit;
    int splits; // split-K slices (1: none)
    // Stream-K for the last waves (tiles 0: none): the tiles before the stream-K part, those of
    // the part, and the blocks of its launch.
    int64_t sk_first, sk_tiles;
    int sk_ctas;
    size_t ws_bytes; // the device workspace the launch needs (0: none)
} fg_kernel_plan;

// The kernel called `name` (FASTGEMM_KERNEL's values): 0 with its family and configuration,
// or -1.
FG_HIDDEN int fg_kernel_find(const char *name, int *family, int *config);

// Plans C = alpha op(A) op(B) + beta C (alpha != 0, k > 0) on device pointers a and b of the
// current device. family FG_FAMILY_ANY: by type (DGEMM on DMMA where dmma, else tiled); a
// forced family (fg_kernel_find's) applies to its type only, the tiled one to both, and DGEMM
// without dmma runs tiled whatever is forced; config -1: the family's choice (choice:
// FG_CHOICE_MODEL or FG_CHOICE_TABLE); splits 0: the choice's (1 for a forced configuration);
// stream_k: 0 never, 1 where it pays, 2 wherever it can run; the
// plan needs at most max_ws bytes of workspace (split-K that does not fit runs in one slice,
// stream-K that does not fit not at all). The launch must get the same g, a and b.
FG_HIDDEN cudaError_t fg_kernel_plan_gemm(const fg_gemm_args *g, const void *a, int64_t lda,
                                          const void *b, int64_t ldb, int family, int config,
                                          int splits, int stream_k, int choice, bool dmma, size_t max_ws,
                                          fg_kernel_plan *plan);
// Which of the operands a and b that rule out 16-byte copies are worth copying into aligned
// workspace before the GEMM (its cost against the kernels' faster copies, by the family's cost
// model): *pack_a, *pack_b; none for the tiled kernel (dmma as fg_kernel_plan_gemm's).
FG_HIDDEN void fg_kernel_pack(const fg_gemm_args *g, const void *a, int64_t lda, const void *b, int64_t ldb,
                              bool dmma, bool *pack_a, bool *pack_b);
// The same kernel with no workspace (one slice, no stream-K), where none could be had.
FG_HIDDEN void fg_kernel_plan_unsplit(fg_kernel_plan *plan);
// Launches a plan on stream s; ws: plan->ws_bytes of device memory (NULL when 0).
FG_HIDDEN cudaError_t fg_kernel_launch(const fg_kernel_plan *plan, const fg_gemm_args *g,
                                       const void *a, int64_t lda, const void *b, int64_t ldb,
                                       void *c, int64_t ldc, void *ws, cudaStream_t s);
// The rows x cols column-major matrix at src (leading dimension ld, elements of esize 4 or 8
// bytes) into dst (leading dimension ld2), on stream s (copy_matrix.cu).
FG_HIDDEN cudaError_t fg_kernel_copy_matrix(const void *src, int64_t ld, int64_t rows, int64_t cols,
                                            size_t esize, void *dst, int64_t ld2, cudaStream_t s);
// C = beta*C over g->m x g->n (beta = 0 writes zeros without reading C).
FG_HIDDEN cudaError_t fg_kernel_scale_c(const fg_gemm_args *g, void *c, int64_t ldc,
                                        cudaStream_t s);
// SGEMM and DGEMM by the Ozaki scheme II on the INT8 tensor cores (ozaki.cu, sm_80 and up), on
// stream s.
// Each operand is prepared once into a side: op(A)'s rows or op(B)'s columns as vectors along
// k, scanned (each vector's exponent and sum of magnitudes; *inputs |= 1 where one holds an Inf
// or NaN, which the scheme cannot carry) and split into t + 1 int8 planes. A product then
// multiplies a range of op(A)'s side by a range of op(B)'s over its workspace, which begins
// with its fg_ozaki_status:
//   the residue GEMMs and the guard (where inputs is 0), which counts into uncertified the
//   entries of C whose error bound it cannot hold to SGEMM's (DGEMM's);
//   then, where the status accepts the call (fg_ozaki_accepts, tested on the device), C =
//   alpha op(A) op(B) + beta C: certified entries from the residues, the others summed in float
//   (double) one by one (k steps each); elsewhere C is left as it is.
// Nothing waits for the host: the caller reads the status back when it needs the outcome.
// alpha != 0, k > 0, a, b, c all float or all double (f64). fg_kernel_ozaki_moduli: the moduli
// the scheme takes for depth k (8 for float, 15 or 16 for double), or 0 where it does not run
// (k of 2^17 or more: its int32 sums could overflow).
typedef struct {
    unsigned inputs;
    unsigned next_tile; // the residue GEMMs' (ozaki_wgmma.cuh): tiles handed out
    unsigned long long uncertified;
} fg_ozaki_status;
#ifdef __CUDACC__
#define FG_HOST_DEVICE __host__ __device__
#else
#define FG_HOST_DEVICE
#endif
// The scheme takes an m x n call: no Inf or NaN in its inputs, and at most one entry of C in
// 1024 that the guard does not certify (crt sums those one by one, k steps each; beyond that
// the SIMT or DMMA kernels are the faster way to the GEMM's accuracy).
static inline FG_HOST_DEVICE int fg_ozaki_accepts(const fg_ozaki_status *st, int64_t m, int64_t n)
{
    return st->inputs == 0 && st->uncertified <= (unsigned long long)(m * n / 1024);
}
FG_HIDDEN int fg_kernel_ozaki_moduli(int64_t k, int f64);
// 1 where the scheme is expected to beat the SIMT (DMMA) kernels for the call's shape
// (FASTGEMM_OZAKI=auto, FASTGEMM_OZAKI_D=auto): deep k, and neither m, n nor m n small, since its
// passes over memory and its t residue GEMMs of padded tiles cost more than they save on
// shallow, skinny or small problems.
FG_HIDDEN int fg_kernel_ozaki_pays(const fg_gemm_args *g);
// A side of `count` vectors of depth k for t moduli, of float or double (f64) inputs, in
// fg_kernel_ozaki_side_bytes of device memory (fg_kernel_ozaki_side lays it out);
// fg_kernel_ozaki_prepare fills its vectors [v0, v0 + count) from x (float or double, as the
// side's): entry p of vector v0 + v at x[v ld + p] (k_contiguous) or x[v + p ld]. Blocks of
// vectors may be prepared apart, each once, in any order.
typedef struct {
    int8_t *planes;       // t + 1 planes (t residues, then the guard's 7-bit magnitudes) of
    int64_t stride, kp;   // `stride` rows of kp bytes (k padded with zeros)
    int64_t k;
    int *e;               // each vector's exponent
    double *sum, *part;   // its sum of magnitudes, and the scan's parts of it
    int t, beta;          // the moduli, and the bits each vector is rounded to
    int f64;              // double inputs
} fg_ozaki_side;
FG_HIDDEN size_t fg_kernel_ozaki_side_bytes(int64_t count, int64_t k, int t);
FG_HIDDEN fg_ozaki_side fg_kernel_ozaki_side(void *mem, int64_t count, int64_t k, int t, int f64);
FG_HIDDEN cudaError_t fg_kernel_ozaki_prepare(const fg_ozaki_side *side, int64_t v0, int64_t count, const void *x,
                                              int64_t ld, int k_contiguous, unsigned *inputs, cudaStream_t s);
// C = alpha op(A) op(B) + beta C over g's m x n, where the status accepts the call: op(A)'s rows
// are vectors [a0, a0 + m) of side sa, op(B)'s columns [b0, b0 + n) of sb (both of depth g->k),
// and a, b are op(A) and op(B) themselves (for the float sums). inputs: the prepares' word. ws:
// fg_kernel_ozaki_ws bytes, its status first.
FG_HIDDEN size_t fg_kernel_ozaki_ws(int64_t m, int64_t n, int t);
FG_HIDDEN cudaError_t fg_kernel_ozaki_multiply(const fg_gemm_args *g, const fg_ozaki_side *sa, int64_t a0,
                                               const fg_ozaki_side *sb, int64_t b0, const unsigned *inputs,
                                               const void *a, int64_t lda, const void *b, int64_t ldb, void *c,
                                               int64_t ldc, void *ws, cudaStream_t s);
// FG_TIMELINE builds: the file each stream-K launch's stamps go to (FG_TIMELINE_FILE), or NULL.
FG_HIDDEN extern const char *fg_kernel_timeline_file;

#endif
