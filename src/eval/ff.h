/* ff: arithmetic in Z_p and Z_q for the finite-field evaluator (Mirage §5, Table 3).
 *
 * The primes are not fixed: every field test draws its own (field.c, docs/verify.md), from the
 * family q prime in [2^30, 2^31), q = 7 (mod 8), p = 2q + 1 prime. So q divides p - 1 (the
 * q-th roots of unity of Z_p are its quadratic residues), p, q = 3 (mod 4) (sqrt(x) =
 * x^((m+1)/4) is a square root of every square, multiplicative), and both fit in 32 bits: a
 * product fits in 64 and a dot product in 128 bits. A modulus carries its Barrett constant so
 * a product reduces with one 128-bit multiplication instead of a division. */
#ifndef MG_FF_H
#define MG_FF_H

#include <stdint.h>

__extension__ typedef unsigned __int128 ff_u128;

#define FF_NONE 0xFFFFFFFFu /* no Z_q component: the value came out of exp (above any modulus) */

typedef struct ff_mod {
    uint32_t m;  /* the prime */
    uint64_t mu; /* floor((2^64 - 1) / m), for ff_red */
} ff_mod;
/* One field of a test: Z_p x Z_q and omega, a q-th root of unity other than 1 in Z_p. */
typedef struct ff_field {
    ff_mod P, Q;
    uint32_t omega;
} ff_field;

static inline ff_mod ff_mod_make(uint32_t m) { return (ff_mod){m, UINT64_MAX / m}; }
/* x mod m for any 64-bit x: t = floor(x mu / 2^64) is floor(x / m) or at most 2 below it. */
static inline uint32_t ff_red(uint64_t x, const ff_mod *m) {
    uint64_t t = (uint64_t)(((ff_u128)x * m->mu) >> 64), r = x - t * m->m;
    while (r >= m->m) r -= m->m;
    return (uint32_t)r;
}
static inline uint32_t ff_add(uint32_t a, uint32_t b, uint32_t m) {
    uint64_t s = (uint64_t)a + b;
    return (uint32_t)(s >= m ? s - m : s);
}
static inline uint32_t ff_sub(uint32_t a, uint32_t b, uint32_t m) {
    return a >= b ? a - b : (uint32_t)((uint64_t)a + m - b);
}
static inline uint32_t ff_mul(uint32_t a, uint32_t b, const ff_mod *m) { return ff_red((uint64_t)a * b, m); }
static inline uint32_t ff_pow(uint32_t a, uint64_t e, const ff_mod *m) {
    uint32_t r = 1 % m->m;
    for (; e; e >>= 1, a = ff_mul(a, a, m))
        if (e & 1) r = ff_mul(r, a, m);
    return r;
}
/* Inverse by Fermat; a must be non-zero. */
static inline uint32_t ff_inv(uint32_t a, const ff_mod *m) { return ff_pow(a, m->m - 2, m); }
static inline uint32_t ff_sqrt(uint32_t a, const ff_mod *m) { return ff_pow(a, ((uint64_t)m->m + 1) / 4, m); }
/* A signed 64-bit integer reduced into [0, m). */
static inline uint32_t ff_from_i64(int64_t v, uint32_t m) {
    int64_t r = v % (int64_t)m;
    return (uint32_t)(r < 0 ? r + m : r);
}

/* What a field must satisfy for one verification (field.c): no constant of either side is 0
 * in it (a field zero is not a verdict), and each prime in qr[] is a quadratic residue mod p
 * (and mod q when qr_q), so sqrt of a constant gives the real root (docs/verify.md). */
enum { FF_MAX_QR = 6, FF_MAX_NUMS = 256 };
typedef struct ff_needs {
    uint64_t qr[FF_MAX_QR];
    int n_qr, qr_q;
    int64_t nums[FF_MAX_NUMS]; /* numerators of the constants (non-zero) */
    int n_nums;
    char note[256]; /* what the needs leave out (too many primes or constants), or "" */
} ff_needs;
/* Draws a field from the family above that meets *n, from the 64-bit seed (the same seed
 * gives the same field): q uniform among the admissible primes, omega = x^2 for x uniform. */
void ff_field_draw(uint64_t seed, const ff_needs *n, ff_field *f);
/* The field of seed with no needs: mg_field_draw in mugen.h. */
/* Deterministic Miller-Rabin for n < 2^64. */
int ff_is_prime(uint64_t n);
/* The prime factors of |v| (v != 0), each once, ascending, into out[max]; returns how many
 * (at most max; more are dropped). */
int ff_factor(uint64_t v, uint64_t *out, int max);

#endif
