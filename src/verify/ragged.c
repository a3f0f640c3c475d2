/* verify/ragged: equivalence of ragged programs (docs/ragged.md). Sequences are independent
 * and sequence b's static program depends only on its lengths, so two ragged programs are
 * equivalent when, for every length vector, their static programs at those lengths are; a
 * sequence of length 0 has no elements in any ragged tensor. The lengths are too many to try
 * all: each test verifies the static programs at one vector (1, the maximum, and drawn
 * values between), each by vf_verify with its own bound; the report lists the lengths tried. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "verify.h"

mg_status vf_verify_ragged(const ir_graph *p, const ir_graph *u, mg_ctx *ctx, int tests, uint64_t seed, int n_lengths,
                           mg_verify_report *r) {
    memset(r, 0, sizeof *r);
    if (p->n_lens != u->n_lens)
        return ctx_err(ctx, MG_ERR_INVALID, "the program declares %d lengths, the other %d", p->n_lens, u->n_lens);
    for (int k = 0; k < p->n_lens; k++)
        if (strcmp(p->lens[k].name, u->lens[k].name) || p->lens[k].count != u->lens[k].count || p->lens[k].max != u->lens[k].max)
            return ctx_err(ctx, MG_ERR_INVALID, "lengths %d differ: %s[%" PRId64 "] max=%" PRId64 " against %s[%" PRId64 "] max=%" PRId64,
                           k, p->lens[k].name, p->lens[k].count, p->lens[k].max, u->lens[k].name, u->lens[k].count, u->lens[k].max);
    vf_io_map m; /* the interfaces, ragged dims included, before any instance */
    mg_status mr = vf_match_io(p, u, ctx, &m);
    if (mr) return mr;
    if (n_lengths < 2) n_lengths = 2;
    rng g = {seed ^ 0x72616767656476ull};
    int64_t vals[IR_MAX_LENS][1]; /* a sequence's lengths: instance 0 of each vector */
    int64_t *vec[IR_MAX_LENS];
    char tried[512] = "";
    size_t at = 0;
    mg_status rc = MG_OK;
    double worst_bound = -1e300;
    int total_tests = 0;
    for (int t = 0; t < n_lengths && !rc; t++) {
        for (int k = 0; k < p->n_lens; k++) { /* test 0 all 1, test 1 all at the maximum, then drawn */
            int64_t mx = p->lens[k].max;
            vals[k][0] = t == 0 ? 1 : t == 1 || mx < 3 ? mx : 2 + (int64_t)rng_below(&g, (uint32_t)(mx - 2)); /* drawn: strictly between */
            vec[k] = vals[k];
        }
        ir_graph *pi = NULL, *ui = NULL;
        rc = ir_ragged_instance(p, ctx, (const int64_t *const *)vec, 0, &pi);
        if (!rc) rc = ir_ragged_instance(u, ctx, (const int64_t *const *)vec, 0, &ui);
        mg_verify_report one;
        if (!rc) rc = vf_verify(pi, ui, ctx, tests, seed + (uint64_t)t, &one);
        ir_graph_free(pi), ir_graph_free(ui);
        if (rc) break;
        char here[96] = "";
        size_t h = 0;
        for (int k = 0; k < p->n_lens; k++)
            h += (size_t)snprintf(here + h, sizeof here - h, "%s%s=%" PRId64, k ? "," : "", p->lens[k].name, vals[k][0]);
        if (at < sizeof tried) at += (size_t)snprintf(tried + at, sizeof tried - at, "%s%s", t ? " " : "", here);
        total_tests += one.tests;
        if (one.log2_bound > worst_bound) worst_bound = one.log2_bound;
        if (one.verdict != MG_EQUIVALENT) {
            *r = one;
            int n = snprintf(r->text, sizeof r->text, "at lengths %s (a sequence of those lengths): ", here);
            if (n > 0 && (size_t)n < sizeof r->text) snprintf(r->text + n, sizeof r->text - (size_t)n, "%.1900s", one.text);
            return MG_OK;
        }
        if (t == 0) *r = one;
        else {
            r->float_error = one.float_error > r->float_error ? one.float_error : r->float_error;
            r->field_retries += one.field_retries;
        }
    }
    if (rc) return rc;
    r->verdict = MG_EQUIVALENT, r->tests = total_tests, r->log2_bound = worst_bound, r->seed = seed;
    char bound[96];
    if (worst_bound < 0) snprintf(bound, sizeof bound, "each vector's false-acceptance bound at most 2^%.1f", worst_bound);
    else snprintf(bound, sizeof bound, "Theorem 2 gives no useful bound here (docs/verify.md)");
    snprintf(r->text, sizeof r->text,
             "equivalent at each of %d length vectors tried (%s): %d random tests in all, %s; a sequence of length 0 has no "
             "elements; lengths not tried are not covered", n_lengths, tried, total_tests, bound);
    return MG_OK;
}
