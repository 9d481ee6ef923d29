/* consumer.c: a user of the installed libfastgemm, through fastgemm.h. */
#include <fastgemm.h>

#include <stdio.h>

int main(void)
{
    double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4];
    int st = fastgemm_dgemm(FASTGEMM_OP_N, FASTGEMM_OP_N, 2, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2);
    /* [1 3; 2 4] [5 7; 6 8] = [23 31; 34 46] */
    int ok = st == 0 && c[0] == 23 && c[1] == 34 && c[2] == 31 && c[3] == 46;
    printf("libfastgemm %s: %s (backend %s)\n", fastgemm_version(), ok ? "ok" : "WRONG",
           fastgemm_backend_name(fastgemm_last_backend()));
    return !ok;
}
