/* field: the random fields of the finite-field test (docs/verify.md, "The random field").
 * Each test draws q uniformly among the primes of [2^30, 2^31) with q = 7 (mod 8) and
 * p = 2q + 1 prime that meet the verification's needs (ff_needs: no constant is 0 mod p or q;
 * the primes of the constants are squares mod p, so sqrt of a constant is its real root), and
 * omega from Z_p. No constant can be aimed at the field: it is not known in advance. */
#include "../ir/ir.h"
#include "ff.h"

static uint64_t mulmod64(uint64_t a, uint64_t b, uint64_t m) { return (uint64_t)((ff_u128)a * b % m); }
static uint64_t powmod64(uint64_t a, uint64_t e, uint64_t m) {
    uint64_t r = 1 % m;
    for (a %= m; e; e >>= 1, a = mulmod64(a, a, m))
        if (e & 1) r = mulmod64(r, a, m);
    return r;
}

/* Miller-Rabin with the first 12 primes as bases: exact for every n < 3.3e24 > 2^64. */
int ff_is_prime(uint64_t n) {
    static const uint64_t base[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    if (n < 2) return 0;
    for (int i = 0; i < 12; i++)
        if (n % base[i] == 0) return n == base[i];
    uint64_t d = n - 1;
    int s = 0;
    while (!(d & 1)) d >>= 1, s++;
    for (int i = 0; i < 12; i++) {
        uint64_t x = powmod64(base[i], d, n);
        if (x == 1 || x == n - 1) continue;
        int r = 1;
        for (; r < s && (x = mulmod64(x, x, n)) != n - 1; r++) {}
        if (r == s) return 0;
    }
    return 1;
}

static uint64_t gcd64(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

/* A non-trivial factor of the odd composite n (Pollard's rho, Floyd cycle finding). */
static uint64_t rho(uint64_t n) {
    for (uint64_t c = 1;; c++) {
        uint64_t x = 2, y = 2, d = 1;
        while (d == 1) {
            x = (mulmod64(x, x, n) + c) % n;
            y = (mulmod64(y, y, n) + c) % n;
            y = (mulmod64(y, y, n) + c) % n;
            d = gcd64(x > y ? x - y : y - x, n);
        }
        if (d != n) return d;
    }
}

static int add_prime(uint64_t *out, int k, int max, uint64_t p) {
    for (int i = 0; i < k; i++)
        if (out[i] == p) return k;
    if (k == max) return k;
    int i = k;
    for (; i > 0 && out[i - 1] > p; i--) out[i] = out[i - 1];
    out[i] = p;
    return k + 1;
}

static int factor_rec(uint64_t n, uint64_t *out, int k, int max) {
    if (n == 1) return k;
    if (ff_is_prime(n)) return add_prime(out, k, max, n);
    uint64_t d = rho(n);
    return factor_rec(n / d, out, factor_rec(d, out, k, max), max); /* depth <= 64 */
}

int ff_factor(uint64_t v, uint64_t *out, int max) {
    int k = 0;
    for (uint64_t p = 2; p < 1000 && p * p <= v; p += 1 + (p > 2))
        if (v % p == 0) {
            k = add_prime(out, k, max, p);
            while (v % p == 0) v /= p;
        }
    return factor_rec(v, out, k, max);
}

/* Jacobi symbol (a/n), n odd: the Legendre symbol when n is prime. */
static int jacobi(uint64_t a, uint64_t n) {
    int s = 1;
    a %= n;
    while (a) {
        while (!(a & 1)) {
            a >>= 1;
            if ((n & 7) == 3 || (n & 7) == 5) s = -s;
        }
        uint64_t t = a;
        a = n, n = t;
        if ((a & 3) == 3 && (n & 3) == 3) s = -s;
        a %= n;
    }
    return n == 1 ? s : 0;
}

/* Whether q (q = 7 mod 8) and p = 2q + 1 are admissible for n, cheapest tests first: small
 * prime divisors, the quadratic-residue needs, the constants, then primality. */
static int admissible(uint64_t q, const ff_needs *n) {
    uint64_t p = 2 * q + 1;
    static const uint32_t small[] = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47};
    for (int i = 0; i < 14; i++)
        if (q % small[i] == 0 || p % small[i] == 0) return 0;
    for (int i = 0; i < n->n_qr; i++)
        if (jacobi(n->qr[i], p) != 1 || (n->qr_q && jacobi(n->qr[i], q) != 1)) return 0;
    for (int i = 0; i < n->n_nums; i++) {
        uint64_t a = n->nums[i] < 0 ? 0 - (uint64_t)n->nums[i] : (uint64_t)n->nums[i];
        if (a % p == 0 || a % q == 0) return 0;
    }
    return ff_is_prime(q) && ff_is_prime(p);
}

void ff_field_draw(uint64_t seed, const ff_needs *n, ff_field *f) {
    rng r = {seed ^ 0x6669656c64ull};
    uint64_t q;
    do q = ((1ull << 30) + rng_below(&r, 1u << 30)) | 7; /* q = 7 mod 8 */
    while (!admissible(q, n));
    f->P = ff_mod_make((uint32_t)(2 * q + 1)), f->Q = ff_mod_make((uint32_t)q);
    for (;;) { /* the q-th roots of unity are the squares: omega = x^2 for x != 0, +-1 */
        uint32_t x = 2 + rng_below(&r, f->P.m - 3), w = ff_mul(x, x, &f->P);
        if (w != 1) {
            f->omega = w;
            return;
        }
    }
}
