/* test_staging: the staging pool (backends/cuda/staging.c), host code only (no GPU). One
 * thread posts copies of seeded random shapes back to back while the pool's threads spin for
 * them (fg_stage_begin), as the host-operand pipeline does. The pool has 8 threads whatever the
 * machine (built with FG_STAGE_CPUS=8): consecutive copies then differ in their number of parts
 * (four a thread, of at least 64 KiB, for copies from 1 MiB), so that a thread still holding one
 * copy's ticket meets the next copy's count; with more threads than CPUs, threads are often
 * preempted between two steps of a claim.
 * Each copy must be complete when fg_stage_copy returns, and nothing outside its columns'
 * `width` bytes may change: the bytes between columns and the guard after the last one keep
 * their pattern.
 * Usage: test_staging [copies [seed]]. */
#include "backends/cuda/staging.h"
#include "testutil.h"

static rng_t rng;
static uint64_t next(void) { return rng_next(&rng); }

#define GUARD 4096

int main(int argc, char **argv)
{
    const long copies = argc > 1 ? atol(argv[1]) : 8000;
    rng.s = argc > 2 ? strtoull(argv[2], NULL, 10) : 12345;
    printf("test_staging: copies=%ld seed=%llu threads=%d\n", copies, (unsigned long long)rng.s,
           fg_stage_threads());
    const size_t cap = (size_t)24 << 20; /* bytes of either buffer, padding and guard included */
    unsigned char *src = malloc(cap), *dst = malloc(cap);
    if (!src || !dst) return 1;
    for (size_t i = 0; i < cap; i++) src[i] = (unsigned char)(next() >> 24);
    const int began = fg_stage_begin(cap);
    long bad = 0;
    for (long q = 0; q < copies && bad < 5; q += 3) {
        /* Three copies back to back, into thirds of dst, then their checks. */
        struct {
            fg_copy2d c;
            unsigned char fill;
            size_t pad;
        } t[3];
        const size_t third = cap / 3;
        for (int u = 0; u < 3; u++) {
            /* 1 MiB (a few parts) to 7 MiB (many), columns of 64 B to 1 MiB. */
            const size_t total = ((size_t)1 << 20) + next() % ((size_t)6 << 20);
            const size_t width = (size_t)64 << (next() % 15);
            size_t cols = (total + width - 1) / width;
            const size_t pad = next() % 256, spad = next() % 256, soff = next() % 64;
            while (cols > 1 && (cols * (width + pad) + GUARD > third || soff + cols * (width + spad) > cap)) cols--;
            unsigned char *d = dst + u * third;
            t[u].fill = (unsigned char)(q * 37 + u * 101 + 11);
            t[u].pad = pad;
            memset(d, t[u].fill, cols * (width + pad) + GUARD);
            t[u].c = (fg_copy2d){(char *)d, width + pad, (const char *)src + soff, width + spad, width, cols};
        }
        for (int u = 0; u < 3; u++) fg_stage_copy(&t[u].c);
        for (int u = 0; u < 3; u++) {
            const fg_copy2d *c = &t[u].c;
            for (size_t j = 0; j < c->cols; j++) {
                const unsigned char *d = (const unsigned char *)c->dst + j * c->dld,
                                    *s = (const unsigned char *)c->src + j * c->sld;
                size_t i = 0;
                if (memcmp(d, s, c->width) != 0) {
                    while (d[i] == s[i]) i++;
                    printf("FAIL copy %ld (width %zu cols %zu): column %zu byte %zu not copied\n", q + u,
                           c->width, c->cols, j, i);
                    bad++;
                    break;
                }
                const size_t gap = j + 1 < c->cols ? t[u].pad : GUARD;
                for (i = 0; i < gap; i++)
                    if (d[c->width + i] != t[u].fill) break;
                if (i < gap) {
                    printf("FAIL copy %ld (width %zu cols %zu): column %zu byte %zu past width written\n",
                           q + u, c->width, c->cols, j, c->width + i);
                    bad++;
                    break;
                }
            }
        }
    }
    fg_stage_end(began);
    printf("test_staging: %s\n", bad ? "FAILED" : "all copies exact");
    free(src);
    free(dst);
    return bad ? 1 : 0;
}
