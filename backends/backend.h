/* backend.h: the backends' entry points, what the dispatcher (core/dispatch.c) and the cost
 * model's measurements (core/calibrate.c) call. Each backend takes a call as an fg_call
 * (common/fg.h): the request, where its operands live, the device and the settings. */
#ifndef FG_BACKEND_H
#define FG_BACKEND_H

#include "common/fg.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- cpu (backends/cpu/cpu_blas.c): the process's own BLAS, on host (or managed) memory ---- */
/* The CPU BLAS to use: `path` (FASTGEMM_CPU_BLAS) when set, else the next definition of the
 * call's family of names (g->abi) in the process, else OpenBLAS. Takes effect at the first
 * call; call it before. */
FG_HIDDEN void fg_cpu_setup(const char *path);
FG_HIDDEN void fg_cpu_gemm(const fg_gemm_args *g);
FG_HIDDEN void fg_host_scale_c(const fg_gemm_args *g); /* C = beta*C; beta = 0 writes zeros */
/* The file the CPU BLAS of a family of names comes from ("builtin-loops" when there is none). */
FG_HIDDEN const char *fg_cpu_blas_path(fg_abi abi);

/* ---- cuda (backends/cuda/): our kernels. Nothing here touches CUDA until called. ---- */
/* Fills ops from the CUDA driver's pointer attributes; all host when the process has not loaded
 * the driver (then no pointer can be device memory). */
FG_HIDDEN void fg_gpu_classify(const fg_gemm_args *g, fg_operands *ops);
/* Probes the devices once. 1 when *device (out of range: replaced by 0) is usable. */
FG_HIDDEN int fg_gpu_usable(int *device);
/* 1 when the host-operand pipeline of `device` is set up (its pinned buffers allocated). */
FG_HIDDEN int fg_gpu_warm(int device);
/* Runs the call on GPU call->device: an FG_* code (common/fg.h), with a one-line reason in why
 * when it failed (or, when traced, how a pipelined call went). */
FG_HIDDEN int fg_gpu_gemm(const fg_call *call, char *why, size_t whylen);
/* Enqueues the call (device or managed operands) on a CUDA stream of call->device, without
 * waiting: 0, or nonzero with a one-line reason (nothing was enqueued). */
FG_HIDDEN int fg_gpu_gemm_async(const fg_call *call, void *stream, char *why, size_t whylen);
/* After a GPU failure with device operands: copies them to the host, runs the CPU BLAS, and
 * copies C back. FG_OK, or FG_FAILED with the reason when the device memory cannot be read. */
FG_HIDDEN int fg_gpu_staged_cpu_gemm(const fg_call *call, char *why, size_t whylen);
/* The GEMM kernels' rate on device memory (flop/s, an n^3 call, best of 3), or -1. */
FG_HIDDEN double fg_gpu_kernel_rate(const fg_settings *set, int device, fg_dtype dt, int64_t n);
/* The name of device `device` (cudaDeviceProp.name), or "" */
FG_HIDDEN void fg_gpu_name(int device, char *name, size_t len);
/* The device a stream belongs to (-1: the NULL stream, or unknown). */
FG_HIDDEN int fg_gpu_stream_device(void *stream);
/* 1 when `name` is one of the CUDA kernels of this build (FASTGEMM_KERNEL's values). */
FG_HIDDEN int fg_gpu_kernel_known(const char *name);

/* ---- omp (backends/omp/omp_backend.c): the OpenMP-target GEMM of libfastgemm_omp.so ---- */
/* 1 when the module is loaded (at the first call: from set->omp_lib, else from fastgemm/ in
 * the folder libfastgemm was loaded from). */
FG_HIDDEN int fg_omp_usable(const fg_settings *set);
/* Runs the call on OpenMP device call->device (-1: OpenMP's default; the host when OpenMP has
 * no device). FG_OK (why: where it ran) or FG_FAILED (C untouched; why: the reason). */
FG_HIDDEN int fg_omp_gemm(const fg_call *call, char *why, size_t whylen);
/* The module's entry points, and the version of this interface it must report. */
#define FG_OMP_ABI 2
typedef int (*fg_omp_abi_fn)(void);
/* Runs g with the module's kernel named `kernel` (NULL: its default). Returns 0, -1 (failed, C
 * untouched; why: the reason), or -3 (no kernel of that name; why: the names). */
typedef int (*fg_omp_gemm_fn)(const fg_gemm_args *g, int a_on_device, int b_on_device,
                              int c_on_device, int device, const char *kernel, char *why,
                              size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
