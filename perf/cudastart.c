/* cudastart.c: what CUDA's own start and exit cost a process, with no GEMM: the floor under
 * libfastgemm's cold start (perf/run_coldstart.sh times whole processes of it). STEP says how far
 * the process goes before it returns from main:
 *   none     nothing (the process alone)
 *   init     the driver's start (cudaGetDeviceCount)
 *   context  the device's primary context (cudaFree(0) after cudaSetDevice(0))
 *   memory   the context, a 128 MB pinned host buffer and 256 MB of device memory, touched by a
 *            copy each way (what the host-operand pipeline holds at a 4096^3 SGEMM)
 * With --quick-exit the process leaves with _exit(0) from an exit handler registered after
 * CUDA's, so that CUDA's exit handlers do not run: what is left is the kernel's teardown.
 * Prints each step's time and main's. */
#define _GNU_SOURCE
#include "tools/cli.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROG "fastgemm-cudastart"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static void quick_exit_handler(void)
{
    fflush(stdout);
    _exit(0);
}

static int help(void)
{
    printf("Usage: " PROG " [--quick-exit] none|init|context|memory\n"
           "Starts CUDA up to the step named (none; the driver; the primary context; the context\n"
           "with 128 MB of pinned host memory and 256 MB of device memory), prints each step's time,\n"
           "and returns from main: timed as a whole process (perf/run_coldstart.sh), it gives CUDA's\n"
           "own start and exit cost.\n"
           "\n"
           "      --quick-exit  leave with _exit(0) before CUDA's exit handlers run\n"
           "  -h, --help        print this help and exit\n"
           "  -V, --version     print the version and exit\n");
    return 0;
}

static int check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess) return 0;
    fprintf(stderr, PROG ": %s: %s\n", what, cudaGetErrorString(err));
    return 1;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {{"quick-exit", no_argument, 0, 'q'},
                                            {"help", no_argument, 0, 'h'},
                                            {"version", no_argument, 0, 'V'},
                                            {0, 0, 0, 0}};
    int quick = 0;
    opterr = 0;
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:hV", options, NULL);
        if (c == -1) break;
        if (c == 'q') quick = 1;
        else if (c == 'h') return help();
        else if (c == 'V') return fg_cli_version(PROG, FASTGEMM_VERSION_STRING);
        else return fg_cli_option_error(PROG, c, argv[at]);
    }
    if (argc - optind != 1) return fg_cli_usage_error(PROG, "one STEP is needed");
    const char *step = argv[optind];
    int level = -1;
    const char *steps[] = {"none", "init", "context", "memory"};
    for (int i = 0; i < 4; i++)
        if (strcmp(step, steps[i]) == 0) level = i;
    if (level < 0) return fg_cli_usage_error(PROG, "STEP is none, init, context or memory");
    const double t_main = now_ms();
    double t = t_main;
    if (level >= 1) {
        int count = 0;
        if (check(cudaGetDeviceCount(&count), "cudaGetDeviceCount")) return 1;
        printf("init: %.1f ms (%d devices)\n", now_ms() - t, count);
        t = now_ms();
    }
    if (level >= 2) {
        if (check(cudaSetDevice(0), "cudaSetDevice") || check(cudaFree(0), "cudaFree(0)")) return 1;
        printf("context: %.1f ms\n", now_ms() - t);
        t = now_ms();
    }
    if (level >= 3) {
        const size_t pinned = (size_t)128 << 20, device = (size_t)256 << 20;
        void *h = NULL, *d = NULL;
        if (check(cudaHostAlloc(&h, pinned, cudaHostAllocDefault), "cudaHostAlloc") ||
            check(cudaMalloc(&d, device), "cudaMalloc"))
            return 1;
        memset(h, 1, pinned);
        if (check(cudaMemcpy(d, h, pinned, cudaMemcpyHostToDevice), "cudaMemcpy") ||
            check(cudaMemcpy(h, (char *)d + pinned, pinned, cudaMemcpyDeviceToHost), "cudaMemcpy"))
            return 1;
        printf("memory: %.1f ms\n", now_ms() - t);
    }
    /* Registered after CUDA's own handlers, so it runs before them. */
    if (quick) atexit(quick_exit_handler);
    printf("main: %.1f ms\n", now_ms() - t_main);
    return 0;
}
