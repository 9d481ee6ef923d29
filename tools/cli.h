/* cli.h: what libfastgemm's command-line programs (tools/, perf/) share around getopt_long: the
 * --version line, the message for a bad option, and numbers read from arguments with every
 * check strtoll leaves to its caller. Static functions, for programs of one source file. */
#ifndef FG_TOOLS_CLI_H
#define FG_TOOLS_CLI_H

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

/* --version: "PROG (libfastgemm) VERSION" on stdout, the GNU form. */
static inline int fg_cli_version(const char *prog, const char *version)
{
    printf("%s (libfastgemm) %s\n", prog, version);
    return 0;
}

/* getopt_long returned '?' or ':' (an optstring starting with ':', opterr = 0) for the argument
 * arg (argv[optind] before the call: getopt_long permutes nothing when the optstring starts
 * with '+', so that is the argument it read): one line on stderr, and exit status 2. */
static inline int fg_cli_option_error(const char *prog, int code, const char *arg)
{
    char letter[3] = {'-', (char)optopt, 0}; /* the letter, also inside a cluster such as -qx */
    const char *name = optopt && arg[1] != '-' ? letter : arg;
    fprintf(stderr, code == ':' ? "%s: option '%s' needs a value; see '%s --help'\n"
                                : "%s: unrecognised option '%s'; see '%s --help'\n", prog, name, prog);
    return 2;
}

/* The whole number s, in [lo, hi], as *out: 0. Anything else (empty, white space in front, which
 * strtoll would skip, trailing characters, out of range) gets a line on stderr naming the
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

#endif
