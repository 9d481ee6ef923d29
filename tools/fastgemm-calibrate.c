/* fastgemm-calibrate: measures this machine's CPU BLAS and GPU for libfastgemm's
 * FASTGEMM_MODE=auto and stores the profile in the user's cache directory.
 * Usage: fastgemm-calibrate [-q]   (-q: no table, only the exit status) */
#include <fastgemm.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int quiet = argc > 1 && !strcmp(argv[1], "-q");
    if (argc > 1 && !quiet) {
        fprintf(stderr, "usage: %s [-q]\n", argv[0]);
        return 2;
    }
    return fastgemm_calibrate(!quiet) == 0 ? 0 : 1;
}
