// offload_plan.h: how the host-operand pipeline (offload.cu) cuts one GEMM, as plain host code
// (no CUDA): the block size, whether A, B and C stay whole on the device (in core) or the rows
// of C go in panels with rings of device slots for B and C (out of core), and the list of jobs
// (kernels) in the order they run, each with the blocks of A and B it brings in.
// tests/test_offload_plan.cpp checks its invariants.
#ifndef FG_OFFLOAD_PLAN_H
#define FG_OFFLOAD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace fg_offload {

// One call as the plan sees it.
struct Problem {
    int64_t m, n, k;   // C is m x n; op(A) m x k, op(B) k x n
    size_t es;         // bytes per element
    bool ha, hb;       // A, B are host memory the call reads (alpha != 0, k > 0): they go through
    bool hc;           // the pipeline; C is host memory
    bool reads_c;      // beta != 0: C comes in before its first kernel
    int64_t block;     // rows/columns of a block, 0: by size (block_size)
    int64_t tail_rows; // the rows of the call's last kernels (hc, in core), 0: as the others
    bool whole_k;      // every kernel takes all of k (no slices): the Ozaki scheme's may run,
                       // whose C waits for its status (offload_exec.cu)
};

// One kernel: C(r0:r1, c0:c1) += op(A)(r0:r1, k0:kend) op(B)(k0:kend, c0:c1).
struct Job {
    int64_t r0, r1, c0, c1; // the region of C it computes
    int p, j;               // its row panel and column block
    int a_block;            // the row block of A copied in just before it, or -1
    int b_block = -1;       // in core: the column block of B copied in just before it, or -1
    int64_t k0 = 0, k1 = -1; // in core: its slice of the k range (k1 < 0: all of it), and
                             // of a_block and b_block, when it copies them in
};

struct Plan : Problem {
    int64_t mb = 0, nb = 0; // row block of A, column block of B and C
    int64_t mp = 0;         // rows of a panel
    int panels = 0;
    int64_t nblk_b = 0;     // column blocks
    int b_slots = 0, c_slots = 0;
    bool incore = false;    // A, B and C stay whole on the device (else panels and slots)
    std::vector<int64_t> rows_at, cols_at; // where the blocks of A (and, in core, B) begin
    std::vector<Job> jobs;

    explicit Plan(const Problem &p) : Problem(p) {}
    // Plans for `budget` bytes of device memory: the blocks, then the jobs. False when even
    // blocks of 64 do not fit.
    bool make(size_t budget);

    int64_t kend(const Job &jb) const { return jb.k1 < 0 ? k : jb.k1; }
    // The job that leaves its piece of C final (a whole k range, or the last slice).
    bool final_slice(const Job &jb) const { return kend(jb) == k; }
    // The job copies its piece of C in before its kernel (the first slice applies beta).
    bool brings_c(const Job &jb) const { return hc && reads_c && jb.k0 == 0; }
    // In core, C block j has slot j; out of core, blocks take the ring's slots in turn.
    int c_slot(const Job &jb) const
    {
        if (c_slots == nblk_b) return jb.j;
        return (int)((jb.p * nblk_b + (jb.p % 2 ? nblk_b - 1 - jb.j : jb.j)) % c_slots);
    }
    // The device buffers the plan allocates for A, B and C (0 for an operand used in place).
    size_t a_bytes() const { return ha ? es * (size_t)(mp * k) : 0; }
    size_t b_bytes() const
    {
        return hb ? es * (incore ? (size_t)(k * n) : (size_t)b_slots * (size_t)(k * nb)) : 0;
    }
    size_t c_bytes() const
    {
        return hc ? es * (incore ? (size_t)(m * n) : (size_t)c_slots * (size_t)(mp * nb)) : 0;
    }
    // The device memory of a panel of `rows` rows with bs B slots and cs C slots of blk columns.
    size_t need(int64_t rows, int64_t blk, int bs, int cs) const
    {
        return es * ((ha ? (size_t)(rows * k) : 0) + (size_t)bs * (hb ? (size_t)(k * blk) : 0) +
                     (size_t)cs * (hc ? (size_t)(rows * blk) : 0));
    }

    // Block boundaries over `total`, blocks of b.
    static std::vector<int64_t> bounds(int64_t total, int64_t b);

private:
    bool fit(int64_t block, size_t budget);
    void schedule();
    void schedule_incore();
};

// The block size the plan starts from: p.block, or by the size of the call when 0.
int64_t block_size(const Problem &p);

} // namespace fg_offload

#endif
