// driver.h: the CUDA driver as libfastgemm sees it (driver.cu): looked up in the process, never
// loaded by us; the calling thread's context kept as it was; operands classified.
#ifndef FG_CUDA_DRIVER_H
#define FG_CUDA_DRIVER_H

#include "common/fg.h"

#include <cuda.h> // driver types only: the driver is never linked, only looked up when loaded
#include <cuda_runtime.h>

// The calling thread's current CUDA context, put back when a call leaves the library.
// cudaSetDevice makes the device's primary context current; an OpenMP runtime (libgomp) runs
// its target regions in a context of its own that it expects to find current, and its next
// kernel launch fails ("invalid resource handle") when it finds the primary one instead.
class KeepCallerContext {
  public:
    KeepCallerContext();
    ~KeepCallerContext();
    KeepCallerContext(const KeepCallerContext &) = delete;
    KeepCallerContext &operator=(const KeepCallerContext &) = delete;

  private:
    CUcontext saved_ = nullptr;
    bool known_ = false;
};

// Makes ctx current instead of the primary context that cudaSetDevice made current, when the
// operands belong to another context of the device (OpenMP's): their producers' work is
// synchronised there and the kernels run there.
cudaError_t fg_use_context(void *ctx);
// The context of a stream (the driver's), or null where it cannot be told.
void *fg_stream_context(cudaStream_t s);
// After fork(): no driver and no device memory in the child.
void fg_driver_forked();

#endif
