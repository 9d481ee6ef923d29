/* fastgemm-calibrate: measures this machine's CPU BLAS and GPU for libfastgemm's
 * FASTGEMM_MODE=auto and stores the profile in the user's cache directory.
 * Usage: fastgemm-calibrate [-q] (see --help) */
#include "tools/cli.h"

#include <fastgemm.h>

#include <getopt.h>
#include <stdio.h>

#define PROG "fastgemm-calibrate"

static int help(void)
{
    printf("Usage: " PROG " [-q]\n"
           "Measures this machine for libfastgemm's FASTGEMM_MODE=auto: square sgemm_/dgemm_\n"
           "calls up to n = 2048 on the CPU BLAS and on the GPU, the GPU path's fixed cost and\n"
           "copy rate (about a second), and stores the profile where later processes find it.\n"
           "Without one, a process makes a shorter measurement at its first large call.\n"
           "\n"
           "  -q, --quiet    no table: the exit status (and any warning) says how it went\n"
           "  -h, --help     print this help and exit\n"
           "  -V, --version  print the version and exit\n"
           "\n"
           "Environment:\n"
           "  FASTGEMM_DEVICE    the CUDA device measured (default 0)\n"
           "  FASTGEMM_CPU_BLAS  the CPU BLAS measured (default: OpenBLAS, libopenblas.so.0)\n"
           "  XDG_CACHE_HOME     the profile goes to $XDG_CACHE_HOME/fastgemm, else\n"
           "                     $HOME/.cache/fastgemm; a profile is kept per GPU, CPU, CPU BLAS\n"
           "                     and CPU count (and OPENBLAS_NUM_THREADS where set)\n"
           "\n"
           "Exit status: 0 profile stored, 1 no usable GPU or the profile could not be\n"
           "written, 2 a bad command line.\n");
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {{"quiet", no_argument, 0, 'q'},
                                            {"help", no_argument, 0, 'h'},
                                            {"version", no_argument, 0, 'V'},
                                            {0, 0, 0, 0}};
    int quiet = 0;
    opterr = 0; /* fg_cli_option_error says it in one line */
    for (;;) {
        const int at = optind, c = getopt_long(argc, argv, "+:qhV", options, NULL);
        if (c == -1) break;
        switch (c) {
        case 'q': quiet = 1; break;
        case 'h': return help();
        case 'V': return fg_cli_version(PROG, fastgemm_version());
        default: return fg_cli_option_error(PROG, c, argv[at]);
        }
    }
    if (optind < argc) return fg_cli_usage_error(PROG, "unexpected argument '%s'", argv[optind]);
    return fastgemm_calibrate(!quiet) == 0 ? 0 : 1;
}
