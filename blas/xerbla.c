/* xerbla.c: default error handlers. They are exported and weak, so an application's own
 * xerbla_/cblas_xerbla (its executable's, or a library's loaded before us) takes precedence, as
 * with the reference BLAS. When we are LD_PRELOADed, ours would also shadow the handlers of the
 * program's own BLAS, for all its routines: so ours pass the error on to the next handler in the
 * process when there is one, and otherwise print the netlib message and return (the reference
 * stops the process; a library must not exit() its host program). */
#define _GNU_SOURCE
#include "common/fg.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

FG_HIDDEN _Thread_local int fg_cblas_row_major;

static int trimmed_len(const char *s, size_t len)
{
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\0')) len--;
    return (int)len;
}

FG_EXPORT __attribute__((weak)) void xerbla_(const char *srname, const int *info, size_t len)
{
    void (*next)(const char *, const int *, size_t) = fg_next_symbol("xerbla_", NULL);
    if (next) {
        next(srname, info, len);
        return;
    }
    fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n",
            trimmed_len(srname, len), srname, *info);
}

FG_EXPORT __attribute__((weak)) void xerbla_64_(const char *srname, const int64_t *info,
                                                size_t len)
{
    void (*next)(const char *, const int64_t *, size_t) = fg_next_symbol("xerbla_64_", NULL);
    if (next) {
        next(srname, info, len);
        return;
    }
    fprintf(stderr, " ** On entry to %.*s parameter number %2lld had an illegal value\n",
            trimmed_len(srname, len), srname, (long long)*info);
}

/* The reference cblas_xerbla, less its exit(-1): for a row-major gemm call the positions of
 * M and N, and of lda and ldb, are swapped back to the caller's argument list. A next handler
 * (the program's CBLAS) gets the message already formatted, and does that swap itself from the
 * reference's RowMajorStrg, which our cblas_gemm sets as the reference does. */
FG_EXPORT __attribute__((weak)) void cblas_xerbla(int info, const char *rout, const char *form,
                                                  ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, form);
    vsnprintf(msg, sizeof msg, form, ap);
    va_end(ap);
    void (*next)(int, const char *, const char *, ...) = fg_next_symbol("cblas_xerbla", NULL);
    if (next) {
        next(info, rout, "%s", msg);
        return;
    }
    if (fg_cblas_row_major && strstr(rout, "gemm")) {
        if (info == 4 || info == 5) info = 9 - info;
        else if (info == 9 || info == 11) info = 20 - info;
    }
    if (info) fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, rout);
    fputs(msg, stderr);
}
