/* unit: the unit-test runner's shared helpers. Tests are listed once, in tests/unit/main.c. */
#ifndef MG_UNIT_H
#define MG_UNIT_H

#include <math.h>
#include <stdio.h>

#include "eval/eval.h"
#include "eval/ff.h"
#include "ir/ir.h"
#include "verify/verify.h"

extern int unit_fails; /* failures in the running test */

#define CHECK(c)                                                                    \
    do {                                                                            \
        if (!(c)) {                                                                 \
            unit_fails++;                                                           \
            fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
        }                                                                           \
    } while (0)
#define CHECK_MSG(c, ...)                                                     \
    do {                                                                      \
        if (!(c)) {                                                           \
            unit_fails++;                                                     \
            fprintf(stderr, "  %s:%d: check failed: %s: ", __FILE__, __LINE__, #c); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

/* Parses src (aborting the test run if it does not parse: a test bug). */
ir_graph *unit_parse(const char *src);
/* Parses src expecting failure with status rc and a message containing `needle`. */
void unit_parse_fails(const char *src, mg_status rc, const char *needle);
/* Float evaluation of a program whose inputs are given as double arrays. */
mg_status unit_feval(const ir_graph *g, int f64, const double *const *in, double *const *out);

/* A fixed field of the verifier's family (q = 2^31 - 105, p = 2q + 1: the primes before
 * fields were drawn per test) for tests that check arithmetic by hand, and its omega for a
 * seed (a square other than 1). */
#define FF_Q 2147483543u
#define FF_P 4294967087u
static inline ff_field unit_field(uint64_t seed) {
    ff_field f = {ff_mod_make(FF_P), ff_mod_make(FF_Q), 0};
    rng r = {seed ^ 0x6d75676e656e0001ull};
    while (f.omega <= 1) {
        uint32_t x = 2 + rng_below(&r, FF_P - 3);
        f.omega = ff_mul(x, x, &f.P);
    }
    return f;
}
static inline uint32_t ff_mulp(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b % FF_P); }
static inline uint32_t ff_mulq(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b % FF_Q); }
#endif
