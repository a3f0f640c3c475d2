/* ff: arithmetic in Z_p and Z_q for the finite-field evaluator (Mirage §5, Table 3).
 *
 * q = 2147483543 is prime, q = 3 (mod 4); p = 2q + 1 = 4294967087 is prime, p = 3 (mod 4).
 * Both fit in 32 bits, so a product fits in 64 and a dot product in 128 bits: the evaluator
 * reduces once per dot product. The q-th roots of unity of Z_p are its quadratic residues.
 * sqrt(x) = x^((m+1)/4) in Z_m (m = p or q): multiplicative, so sqrt(x)sqrt(y) = sqrt(xy)
 * holds for every x, y, and sqrt(x)^2 = x when x is a square (docs/verify.md). */
#ifndef MG_FF_H
#define MG_FF_H

#include <stdint.h>

#define FF_Q 2147483543u
#define FF_P 4294967087u
#define FF_NONE 0xFFFFFFFFu /* no Z_q component: the value came out of exp */

static inline uint32_t ff_add(uint32_t a, uint32_t b, uint32_t m) {
    uint64_t s = (uint64_t)a + b;
    return (uint32_t)(s >= m ? s - m : s);
}
static inline uint32_t ff_sub(uint32_t a, uint32_t b, uint32_t m) {
    return a >= b ? a - b : (uint32_t)((uint64_t)a + m - b);
}
/* Constant moduli let the compiler turn % into multiplications. */
static inline uint32_t ff_mulp(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b % FF_P); }
static inline uint32_t ff_mulq(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b % FF_Q); }
static inline uint32_t ff_mul(uint32_t a, uint32_t b, uint32_t m) {
    return m == FF_P ? ff_mulp(a, b) : ff_mulq(a, b);
}
static inline uint32_t ff_pow(uint32_t a, uint64_t e, uint32_t m) {
    uint32_t r = 1 % m;
    for (; e; e >>= 1, a = ff_mul(a, a, m))
        if (e & 1) r = ff_mul(r, a, m);
    return r;
}
/* Inverse by Fermat; a must be non-zero. */
static inline uint32_t ff_inv(uint32_t a, uint32_t m) { return ff_pow(a, m - 2, m); }
static inline uint32_t ff_sqrt(uint32_t a, uint32_t m) { return ff_pow(a, ((uint64_t)m + 1) / 4, m); }
/* A signed 64-bit integer reduced into [0, m). */
static inline uint32_t ff_from_i64(int64_t v, uint32_t m) {
    int64_t r = v % (int64_t)m;
    return (uint32_t)(r < 0 ? r + m : r);
}
/* A pseudo-random q-th root of unity other than 1 in Z_p, determined by seed: the omega of one
 * field test (ffeval.c; mg_field_omega in mugen.h wraps it). */
uint32_t ff_omega(uint64_t seed);

#endif
