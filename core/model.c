/* model.c: the cost model of FASTGEMM_MODE=auto, a pure function of a machine's profile.
 *     t_cpu = F / r_cpu(F)
 *     t_gpu = t0 + max(bytes / bw, F / r_gpu(F))
 * F: the call's flops (2mnk); bytes: what crosses PCIe (host A and B in, C out, and in too when
 * beta != 0); r_cpu, r_gpu: the rates of the square calls measured on the machine (host
 * operands, the whole call timed), interpolated in log F; below the smallest the rate is held,
 * above the largest r_cpu is held and r_gpu is the kernels' own rate on device memory (there
 * the pipeline overlaps copies and kernels, which the max expresses); t0: the GPU path's fixed
 * cost per call; bw: the pipeline's copy rate. */
#include "core/model.h"

#include <math.h>

const int64_t fg_profile_sizes[FG_PROFILE_NPTS] = {32, 64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};

static double cube(int64_t n) { return (double)n * (double)n * (double)n; }

/* The points of a row that no machine gives: a call slower than the next larger one by more
 * than 1.2x, or one whose time per flop is 1.25x the next smaller one's (both rates grow with
 * n or stay). Such a point is a slow stretch of the machine while it was measured, and would
 * send calls of its size to the slower side. */
int fg_profile_suspects(const double *t, int npts, int *flag)
{
    int count = 0;
    for (int i = 0; i < npts; i++) {
        const double f = cube(fg_profile_sizes[i]), fb = i ? cube(fg_profile_sizes[i - 1]) : 0;
        flag[i] = (i + 1 < npts && t[i] > 1.2 * t[i + 1]) || (i && t[i] / f > 1.25 * t[i - 1] / fb);
        count += flag[i];
    }
    return count;
}

/* The rate at F flops from the times of the square calls (less `fixed`), interpolated in
 * log-log between measured points and held at the ends (`above`, when positive, past the
 * largest). */
static double rate(const double *t, double fixed, double F, double above)
{
    double lf0 = 0, lr0 = 0;
    int have = 0;
    for (int i = 0; i < FG_PROFILE_NPTS; i++) {
        if (!(t[i] > 0)) continue;
        double f = 2.0 * cube(fg_profile_sizes[i]);
        double lf = log(f), lr = log(f / fmax(t[i] - fixed, 1e-7));
        if (!have) {
            if (F <= f) return exp(lr);
        } else if (F <= f) {
            return exp(lr0 + (lr - lr0) * (log(F) - lf0) / (lf - lf0));
        }
        lf0 = lf, lr0 = lr, have = 1;
    }
    return above > 0 ? above : have ? exp(lr0) : 0;
}

/* The call's flops (for alpha = 0 or k = 0: the m*n of C = beta*C) and the bytes that cross
 * PCIe: host A and B in, C out, and in too when beta != 0. */
static double call_flops(const fg_gemm_args *g)
{
    const double m = (double)g->m, n = (double)g->n;
    return fg_reads_ab(g) ? 2 * m * n * (double)g->k : m * n;
}
static double call_bytes(const fg_gemm_args *g, const fg_operands *ops)
{
    const double es = (double)fg_elem_size(g->dt), m = (double)g->m, n = (double)g->n, k = (double)g->k;
    const int ab = fg_reads_ab(g);
    double bytes = 0;
    if (ab && ops->a == FG_MEM_HOST) bytes += es * m * k;
    if (ab && ops->b == FG_MEM_HOST) bytes += es * k * n;
    if (ops->c == FG_MEM_HOST) bytes += es * m * n * (g->beta != 0 ? 2 : 1);
    return bytes;
}

void fg_model_predict(const fg_profile *p, const fg_gemm_args *g, const fg_operands *ops,
                      double *tc, double *tg)
{
    const int dt = g->dt == FG_F64;
    const double F = call_flops(g), bytes = call_bytes(g, ops);
    *tc = F / rate(p->cpu[dt], 0, F, 0);
    *tg = p->t0[dt] + fmax(bytes / p->bw, F / rate(p->gpu[dt], p->t0[dt], F, p->kernel[dt]));
}

/* The stand-in profile: a CPU BLAS at 2 TFLOP/s in float and 1 in double, whatever the size
 * (more than most hosts reach), and a GPU path with 1 ms of fixed cost, 8 GB/s over PCIe and
 * kernels at 10 TFLOP/s (less than any GPU with our kernels' instructions gives). */
void fg_model_predict_default(const fg_gemm_args *g, const fg_operands *ops, double *tc, double *tg)
{
    const double cpu_rate = g->dt == FG_F64 ? 1e12 : 2e12, kernel_rate = 1e13, t0 = 1e-3, bw = 8e9;
    const double F = call_flops(g), bytes = call_bytes(g, ops);
    *tc = F / cpu_rate;
    *tg = t0 + fmax(bytes / bw, F / kernel_rate);
}
