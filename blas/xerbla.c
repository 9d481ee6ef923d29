/* xerbla.c: default error handlers, with the netlib messages. They are exported and weak, so an
 * application's own xerbla_/cblas_xerbla (an executable's definition, or an earlier library's)
 * takes precedence, as with the reference BLAS. Unlike the reference, ours return instead of
 * stopping the process: a library must not exit() its host program. */
#include "fg.h"

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
    fprintf(stderr, " ** On entry to %.*s parameter number %2d had an illegal value\n",
            trimmed_len(srname, len), srname, *info);
}

FG_EXPORT __attribute__((weak)) void xerbla_64_(const char *srname, const int64_t *info,
                                                size_t len)
{
    fprintf(stderr, " ** On entry to %.*s parameter number %2lld had an illegal value\n",
            trimmed_len(srname, len), srname, (long long)*info);
}

/* The reference cblas_xerbla, less its exit(-1): for a row-major gemm call the positions of
 * M and N, and of lda and ldb, are swapped back to the caller's argument list. */
FG_EXPORT __attribute__((weak)) void cblas_xerbla(int info, const char *rout, const char *form,
                                                  ...)
{
    if (fg_cblas_row_major && strstr(rout, "gemm")) {
        if (info == 4 || info == 5) info = 9 - info;
        else if (info == 9 || info == 11) info = 20 - info;
    }
    if (info) fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, rout);
    va_list ap;
    va_start(ap, form);
    vfprintf(stderr, form, ap);
    va_end(ap);
}
