// offload_pipeline.h: one call through the host-operand pipeline (private to the offload_*
// files). The plan (offload_plan.h) says what to copy and compute in which order; the Pipeline
// runs it on a device's staging ring (offload_ring.h):
//   offload_exec.cu     allocation, the memory budget, kernel order and launch, execute()
//   offload_copies.cu   the copies through the ring: uploads, downloads, the B slots' LRU
//   offload_recover.cu  after a failure, the CPU BLAS computes the part of C not written
//   offload.cu          the entry (fg_offload_gemm) and the trace line's GPU times
#ifndef FG_OFFLOAD_PIPELINE_H
#define FG_OFFLOAD_PIPELINE_H

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/offload_plan.h"
#include "backends/cuda/offload_ring.h"

#include <deque>
#include <vector>

namespace fg_offload {

// In the Pipeline's bool-returning methods: on a CUDA error, record it (fail) and return false.
#define FG_PIPE_TRY(call)                                                                        \
    do {                                                                                         \
        cudaError_t e_ = (call);                                                                 \
        if (e_ != cudaSuccess) return fail(e_, #call);                                           \
    } while (0)

// A job's state while the call runs (the plan's jobs[i] has runs[i]).
struct JobRun {
    int64_t chunks = 0, queued = 0, saved = 0; // its copy out: chunks, enqueued, written to C
    bool launched = false;
    bool ozaki = false;         // the Ozaki scheme's, its status (cx.statuses) not yet read
    int on = 0;                 // its kernel's stream: 0 comp, 1 comp2
    cudaEvent_t done = nullptr; // after its kernel
};

struct Pipeline {
    Context &cx;
    const fg_call *call;
    const fg_gemm_args *g;
    int dev;
    Plan plan;
    std::vector<JobRun> runs;
    char *dA = nullptr, *dB = nullptr, *dC = nullptr;
    // In core with whole_k, where the memory could be had: the operands prepared for the Ozaki
    // scheme, each block once as it arrives (those on the device at the start).
    fg_ozaki_sides sides = {};
    // Free slots of the ring, the least recently freed first. A copy out takes the front: the
    // DMA's writes to pinned memory that the host's cores have just read (a copy into C) wait
    // for those cores' caches to let go of the lines. Copies in take the back.
    std::deque<int> free_slots;
    std::deque<int> in_up, in_down; // slots with a copy in flight, in issue order
    std::deque<int> to_download;    // jobs whose C still has to come out, in order
    std::vector<int> b_slot_of, b_holds, b_last_job; // B block <-> device slot
    std::vector<int64_t> b_stamp;
    std::vector<int> c_last_job; // C slot: its last job
    std::vector<cudaEvent_t> b_ready, c_free;
    cudaEvent_t ev_in = nullptr, ev_alloc = nullptr, ev_prep = nullptr;
    cudaError_t err = cudaSuccess;
    const char *failed_call = "";
    long launches = 0;
    // The kernels the Ozaki scheme ran; of those, the ones the SIMT kernels ran again (their
    // status did not accept the call), and those with entries summed in float.
    int ozaki_jobs = 0, ozaki_declined = 0, ozaki_summed = 0;
    // For the trace line: host copies and waits.
    double copy_s = 0, wait_s = 0;
    size_t bytes_in = 0, bytes_out = 0;
    // Traced calls only: timing events, the call's start (on comp) and then a pair around each
    // kernel on its own stream (where the GPU computed, and where it waited for copies).
    std::vector<cudaEvent_t> timeline;
    cudaEvent_t out_done = nullptr; // traced: after the last copy out
    double t_start = 0;             // when the call began
    double uploads_done_s = 0;      // in core: when the last block of A and B had been staged
    // In core, the copies out wait until every block of A and B has been staged: the host's
    // memory copies are what the two directions share, and with the operands in sooner the GPU
    // finishes sooner. Out of core, C's slots must be emptied as the panels go.
    bool uploads_left = false;

    Pipeline(Context &c, const fg_call *call, int dev);
    ~Pipeline();

    // offload_exec.cu
    bool execute(); // runs the whole call; false on a CUDA error (err, failed_call)
    void release(); // the device buffers back to the pool, after the work on comp
    bool fail(cudaError_t e, const char *call);
    void stamp(cudaStream_t s);
    size_t budget() const;
    bool allocate();
    cudaStream_t stream_of(int ji) const { return runs[ji].on ? cx.comp2 : cx.comp; }
    bool comp_wait(cudaEvent_t e);
    bool order(int ji);
    bool launch(int ji);
    bool compute(int ji, bool ozaki);
    bool settle(int ji, bool *again);
    bool prepare(int a_block, int b_block);

    // offload_copies.cu
    bool poll();
    bool wait_one();
    bool acquire(int *slot);
    bool upload(char *dst, size_t dld, const char *src, size_t sld, size_t width, int64_t cols,
                cudaEvent_t ready);
    bool enqueue_downloads();
    void unstage(int s);
    char *c_dev(const Job &jb, int64_t *ld) const;
    char *c_host(const Job &jb) const;
    Chunking c_chunks(const Job &jb) const;
    const char *a_view(int64_t r0, int p, int64_t *ld) const;
    bool upload_a(int64_t r0, int64_t r1, int p, int64_t k0, int64_t k1);
    char *b_slot_ptr(int s) const;
    const char *b_view(const Job &jb, int64_t *ld) const;
    const char *b_at(int64_t c0, int64_t *ld) const;
    bool ensure_b(int j, int64_t stamp);
    bool upload_b_incore(int j, int64_t k0, int64_t k1);

    // offload_recover.cu
    bool cpu_finish(bool device_lost);
    bool to_host(const void **p, int64_t *ld, int64_t rows, int64_t cols, void **buf) const;
    void cpu_part(const fg_gemm_args &whole, int64_t r0, int64_t r1, int64_t c0, int64_t c1) const;
    bool c_written() const;

    // offload.cu
    void gpu_times(double *first, double *busy, double *span, double *end, double *out) const;
};

} // namespace fg_offload

#endif
