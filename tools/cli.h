/* cli.h: what libfastgemm's command-line programs (tools/, perf/) share around getopt_long: the
 * --version line, the one-line message for a bad command line, and numbers read from arguments
 * with every check strtoll and strtod leave to their caller. Static functions, for programs of
 * one source file, C or C++. */
#ifndef FG_TOOLS_CLI_H
#define FG_TOOLS_CLI_H

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* --version: "PROG (libfastgemm) VERSION" on stdout, the GNU form. */
static inline int fg_cli_version(const char *prog, const char *version)
{
    printf("%s (libfastgemm) %s\n", prog, version);
    return 0;
}

/* A bad command line: "PROG: WHAT; see 'PROG --help'" on stderr, and exit status 2. */
__attribute__((format(printf, 2, 3))) static inline int fg_cli_usage_error(const char *prog,
                                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "; see '%s --help'\n", prog);
    va_end(ap);
    return 2;
}

/* getopt_long returned '?' or ':' (optstring "+:..." or "-:...", opterr = 0) for the argument
 * arg: argv[optind] before the call, which is the argument it read, since neither ordering
 * permutes argv. The option is named (the letter alone inside a cluster such as -qx). */
static inline int fg_cli_option_error(const char *prog, int code, const char *arg)
{
    char letter[3] = {'-', (char)optopt, 0};
    const char *name = optopt && arg[1] != '-' ? letter : arg;
    return code == ':' ? fg_cli_usage_error(prog, "option '%s' needs a value", name)
                       : fg_cli_usage_error(prog, "unrecognised option '%s'", name);
}

/* The whole number s, in [lo, hi], as *out: 0. Anything else (empty, white space in front,
 * which strtoll would skip, trailing characters, out of range) gets a line on stderr naming the
 * argument, "PROG: WHAT 'S' is not a whole number from LO to HI", and -1. */
static inline int fg_cli_number(const char *prog, const char *what, const char *s, long long lo,
                                long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = isspace((unsigned char)s[0]) ? 0 : strtoll(s, &end, 10);
    if (!end || end == s || *end || errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, "%s: %s '%s' is not a whole number from %lld to %lld\n", prog, what, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* The same for a real number (strtod: 0.5, 1e3; NaN is out of every range). */
static inline int fg_cli_real(const char *prog, const char *what, const char *s, double lo,
                              double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = isspace((unsigned char)s[0]) ? 0 : strtod(s, &end);
    if (!end || end == s || *end || errno == ERANGE || !(v >= lo && v <= hi)) {
        fprintf(stderr, "%s: %s '%s' is not a number from %g to %g\n", prog, what, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

#endif
