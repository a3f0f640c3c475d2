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

#endif
