/* util.c: the warning line and the clock every layer uses. */
#define _GNU_SOURCE
#include "common/fg.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

void fg_warn(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (len < 0) return;
    if (len > (int)sizeof line - 2) len = (int)sizeof line - 2;
    line[len++] = '\n';
    fprintf(stderr, "fastgemm: %.*s", len, line);
}

double fg_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
