// test_ozaki_crt.cu: the Ozaki scheme's integer arithmetic as its kernels run it, host code only
// (the same functions, kernels/ozaki_passes.cuh and kernels/ozaki_crt.cuh), against exact
// __int128 arithmetic:
//   - the residue GEMMs' epilogue: an int32 sum's residue in [0, m) for every modulus, over the
//     sums' whole range;
//   - split's residues: an int32 (SGEMM's integers) and a double's integer below 2^62 taken apart
//     into 21-bit chunks (DGEMM's) give the symmetric residue's byte for every modulus;
//   - crt: every integer of (-M/2, M/2] comes back from its residues, for SGEMM's 8 moduli
//     (64-bit halves) and DGEMM's 15 and 16 (128-bit limbs, the quotient from floats), the
//     edges of the range and random ones;
//   - to_double: 128-bit integers rounded once, as the compiler's own conversion rounds them.
#include "../kernels/ozaki_crt.cuh"
#include "../kernels/ozaki_passes.cuh"

#include <stdio.h>

#include <random>

using namespace fg_ozaki;

static int fails;

static void check(const char *what, bool ok)
{
    printf("%-72s %s\n", what, ok ? "ok" : "FAIL");
    fails += !ok;
}

static std::mt19937_64 rng(2026);

// x mod m in the symmetric range, as a byte (what a residue plane holds).
static int sym_byte(__int128 x, int m)
{
    __int128 r = x % m;
    if (r < 0) r += m;
    int s = (int)r;
    if (s > (m == 256 ? 127 : (m - 1) / 2)) s -= m;
    return s & 0xff;
}

// residue<modulus(L)> for every L < T_D on an int32 (L < T_S) and on chunks.
template <int L>
static void residues(int x, const Chunks &c, __int128 y, bool *ok_int, bool *ok_chunks)
{
    constexpr int M = modulus(L);
    if (L < T_S) *ok_int &= (residue<M>(x) & 0xff) == sym_byte(x, M);
    *ok_chunks &= (residue<M>(c) & 0xff) == sym_byte(y, M);
    if constexpr (L + 1 < T_D) residues<L + 1>(x, c, y, ok_int, ok_chunks);
}

static void check_residues()
{
    bool ok_int = true, ok_chunks = true, ok_split = true;
    for (int i = 0; i < 200000; i++) {
        const int x = (int)((long long)(rng() % (2ull << 30)) - (1ll << 30)); // [-2^30, 2^30)
        // An integer of a double below 2^62 in magnitude: a random one, rounded to a double.
        const double yd = (double)((long long)(rng() % (1ull << 63)) - (1ll << 62)) * (i % 3 ? 1.0 : 0x1p-20);
        const double y_int = rint(yd);
        const __int128 y = (__int128)y_int;
        const Chunks c = chunks_of_scaled(y_int, 0);
        ok_split &= abs(c.x2) <= (1 << 20) && abs(c.x1) <= (1 << 20) && abs(c.x0) <= (1 << 20) &&
                    (__int128)c.x2 * ((__int128)1 << 42) + (__int128)c.x1 * (1 << 21) + c.x0 == y;
        residues<0>(x, c, y, &ok_int, &ok_chunks);
    }
    check("chunks of 200000 integers below 2^62: exact, each within 2^20", ok_split);
    check("int32 residues, SGEMM's 8 moduli: the symmetric residue's byte", ok_int);
    check("chunked residues, DGEMM's 16 moduli: the symmetric residue's byte", ok_chunks);
}

// Residue(m)(x) == x mod m in [0, m) for every modulus, at the ends of the sums' range
// (|x| <= (2^17 - 1) 2^14), around multiples of each modulus there and at 0, and at random.
static void check_gemm_residues()
{
    const int64_t top = ((int64_t)1 << 31) - ((int64_t)1 << 14);
    bool ok = true;
    for (int l = 0; l < T_D; l++) {
        const int m = modulus(l);
        const Residue res(m);
        auto one = [&](int64_t x) {
            int64_t r = x % m;
            if (r < 0) r += m;
            ok &= res((int32_t)x) == r;
        };
        for (int64_t d = 0; d < 3 * m; d++) {
            one(top - d), one(-top + d), one(d - m - m / 2), one(top / m * m - d), one(-(top / m * m) + d);
        }
        for (int i = 0; i < 200000; i++) one((int64_t)(rng() % (2 * (uint64_t)top + 1)) - top);
    }
    check("residue GEMMs' epilogue: sums within 2^31 - 2^14, every modulus", ok);
}

// The split's integers of doubles as it takes them, in FP64 additions (chunks_of_scaled,
// magnitude_of_scaled), against rint and floor of ldexp: random doubles (normal, subnormal,
// zero, either sign) at scalings that put them below 2^62 (most of them, like the split's rows,
// within 2^beta, and some far below, rounded to 0), and halves, where rint rounds to even.
static void check_scaled()
{
    bool ok_int = true, ok_mag = true;
    for (int i = 0; i < 400000; i++) {
        const int kind = i % 5, tie = (int)(rng() % 41);
        double x;
        if (kind == 0) x = ldexp((double)(rng() >> 11), -(int)(rng() % 1200)); // any binade, subnormals
        else if (kind == 1) x = ldexp((double)(rng() % 100000) + 0.5, -tie);    // a tie after e = tie
        else if (kind == 2) x = 0;
        else x = ldexp((double)(rng() >> 11) * 0x1p-53, (int)(rng() % 200) - 100);
        if (rng() & 1) x = -x;
        const int beta = 51 + (int)(rng() % 12); // 51-62
        // e as the split's: the vector's largest magnitude just under 2^beta, here x's own
        // binade or one up to 60 above it (x then far below the vector's largest)
        const int ex = x != 0 ? ilogb(x) : 0, e = kind == 1 ? tie : beta - 1 - ex - (int)(rng() % 61);
        const double y = rint(ldexp(x, e));
        if (fabs(y) >= 0x1p62) continue;
        const Chunks got = chunks_of_scaled(x, e);
        ok_int &= (__int128)got.x2 * ((__int128)1 << 42) + (__int128)got.x1 * (1 << 21) + got.x0 == (__int128)y &&
                  abs(got.x2) <= (1 << 20) && abs(got.x1) <= (1 << 20) && abs(got.x0) <= (1 << 20);
        ok_mag &= magnitude_of_scaled(x, e, beta) == (unsigned)floor(ldexp(fabs(x), e + 7 - beta));
    }
    check("chunks_of_scaled: the chunks of rint(x 2^e), 400000 doubles", ok_int);
    check("magnitude_of_scaled: floor(|x| 2^(e + 7 - beta))", ok_mag);
}

// The residues of x as the residue GEMMs leave them: in [0, m).
template <int T>
static void residues_of(__int128 x, uint8_t (&res)[T])
{
    for (int l = 0; l < T; l++) {
        __int128 r = x % modulus(l);
        res[l] = (uint8_t)(r < 0 ? r + modulus(l) : r);
    }
}

// A random integer of (-M/2, M/2]: the edges, values near them (the quotient's rounding is
// tightest there), small ones, and uniform ones.
static __int128 pick(unsigned __int128 M, int i)
{
    const __int128 half = (__int128)(M / 2);
    const unsigned __int128 r = ((unsigned __int128)rng() << 64) | rng();
    switch (i % 6) {
    case 0: return half - (__int128)(r % 1000);
    case 1: return -half + 1 + (__int128)(r % 1000);
    case 2: return (__int128)(r % 2001) - 1000;
    default: return (__int128)(r % M) - half + 1;
    }
}

static void check_crt()
{
    const Crt c = crt_constants();
    const unsigned __int128 M8 = moduli_product(T_S);
    bool ok = true;
    for (int i = 0; i < 100000; i++) {
        const __int128 x = pick(M8, i);
        uint8_t res[T_S];
        residues_of(x, res);
        ok &= (__int128)crt_value(c, res) == x;
    }
    check("crt, 8 moduli: 100000 integers of (-M/2, M/2] back from their residues", ok);
    for (int t = T_D - 1; t <= T_D; t++) {
        const Crt128 cd = crt_constants_d(t);
        const unsigned __int128 M = moduli_product(t);
        ok = M < ((unsigned __int128)1 << 126);
        for (int i = 0; i < 100000; i++) {
            const __int128 x = pick(M, i);
            if (t == T_D) {
                uint8_t res[T_D];
                residues_of(x, res);
                ok &= crt_value128<T_D>(cd, res) == x;
            } else {
                uint8_t res[T_D - 1];
                residues_of(x, res);
                ok &= crt_value128<T_D - 1>(cd, res) == x;
            }
        }
        char what[96];
        snprintf(what, sizeof what, "crt, %d moduli (M below 2^126): 100000 integers back from their residues", t);
        check(what, ok);
    }
}

static void check_to_double()
{
    bool ok = true;
    const __int128 one = 1;
    const __int128 edges[] = {0, 1, -1, (one << 64) - 1, one << 64, (one << 64) + 1, (one << 53) + 1,
                              (one << 117) + (one << 64) + 1, (one << 117) + (one << 64), -((one << 125) - 1)};
    for (__int128 x : edges) ok &= to_double(x) == (double)x;
    for (int i = 0; i < 200000; i++) {
        const int bits = 1 + (int)(rng() % 125);
        const unsigned __int128 r = (((unsigned __int128)rng() << 64) | rng()) >> (128 - bits);
        const __int128 x = rng() & 1 ? -(__int128)r : (__int128)r;
        ok &= to_double(x) == (double)x;
    }
    check("to_double: 128-bit integers below 2^126, rounded once to nearest", ok);
}

int main()
{
    check_gemm_residues();
    check_residues();
    check_scaled();
    check_crt();
    check_to_double();
    printf("%s\n", fails ? "FAILED" : "all passed");
    return fails != 0;
}
