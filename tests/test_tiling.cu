// test_tiling.cu: where the SIMT SGEMM kernels put their tiles along m or n, host code only (the
// same functions: inside_origin in kernels/sgemm_simt.cuh, edge_stays in
// kernels/sgemm_simt_launch.cuh), for every size up to 2100 and every tile length of the
// configurations:
//   - the rows the tiles store (from their place on the grid to the end of the moved tile, or of
//     the matrix) cover every row once;
//   - a tile that moves lies inside the matrix, holds the rows it stores, and with 16-byte copies
//     starts on a multiple of 4;
//   - with 16-byte copies a tile is left crossing the edge exactly where edge_stays says so (the
//     launch then takes the element-copy instance); with element copies, exactly where the
//     dimension is shorter than a tile and not a multiple of it.
#include "../kernels/sgemm_simt_launch.cuh"

#include <stdio.h>

#include <vector>

static long fails, checks;

static void check(bool ok, const char *what, int64_t size, int tile, bool vec16)
{
    checks++;
    if (!ok && fails++ < 20) printf("FAIL: %s (size %lld, tile %d, 16-byte copies %d)\n", what, (long long)size, tile, vec16);
}

template <int T>
static void sizes()
{
    for (int64_t size = 1; size <= 2100; size++)
        for (bool vec16 : {false, true}) {
            std::vector<int> stored(size, 0);
            bool crosses = false;
            for (int64_t t0 = 0; t0 < size; t0 += T) {
                const int64_t o = fg_simt::inside_origin<T>(t0, size, vec16);
                const int64_t end = o + T < size ? o + T : size;
                for (int64_t r = t0; r < end; r++) stored[r]++;
                crosses |= o + T > size;
                if (o != t0) {
                    check(o >= 0 && o + T <= size, "a moved tile lies inside the matrix", size, T, vec16);
                    check(o < t0, "a moved tile holds the rows it stores", size, T, vec16);
                    check(!vec16 || o % 4 == 0, "a moved tile keeps 16-byte copies aligned", size, T, vec16);
                }
            }
            bool once = true;
            for (int64_t r = 0; r < size; r++) once &= stored[r] == 1;
            check(once, "every row is stored by one tile", size, T, vec16);
            const bool want = vec16 ? fg_simt::edge_stays<T>(size) : size < T && size % T != 0;
            check(crosses == want, "a tile crosses the edge where edge_stays says", size, T, vec16);
        }
}

int main()
{
    sizes<16>();
    sizes<32>();
    sizes<64>();
    sizes<128>();
    sizes<256>();
    printf("test_tiling: %ld checks, %ld failed\n", checks, fails);
    return fails != 0;
}
