/* fuzz_common.h: what both libFuzzer harnesses (fuzz_text.c, fuzz_json.c) do with an input
 * that parses: the cheap checks a user's `mugen check`, `check --json`, `partition` and `dot`
 * run. Any broken expectation aborts, which libFuzzer reports as a crash with the input.
 *
 *   - ir_check (MUGEN_CHECK=1's invariants: shapes re-inferred, names indexed, block graphs
 *     valid) must pass on what a front end built;
 *   - the canonical text must parse back to an equal graph (ir_graph_equal) and print the same
 *     text again (docs/ir.md: "Parsing that text gives the same graph");
 *   - the JSON form must parse back to an equal graph;
 *   - the Lax check, the partition and the dot rendering must not crash;
 *   - on small programs (FZ_EVAL_MAX elements in all, kernel graph and block graphs), the float
 *     evaluator of `mugen eval`, intermediates in f32 and in f64, must not crash (an error
 *     status is an answer, not a failure).
 * A parse failure must leave a message, and no graph. Inputs are copied to a buffer of exactly
 * their size with no NUL after it, so AddressSanitizer catches any read past the end. */
#ifndef MG_FUZZ_COMMON_H
#define MG_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "ir/ir.h"

typedef mg_status (*fz_parser)(mg_ctx *, const char *, size_t, const char *, ir_graph **);

/* Stops the run with a message: libFuzzer saves the input as crash-<sha1>. */
static void fz_fail(const char *what, const char *detail) {
    fprintf(stderr, "fuzz: %s\n%s\n", what, detail ? detail : "");
    abort();
}

/* Parses text[0..len) with parse from an exact-size copy; the graph, or NULL with the message
 * checked. */
static ir_graph *fz_parse(fz_parser parse, const uint8_t *data, size_t len, const char *file) {
    char *buf = malloc(len ? len : 1);
    if (!buf) return NULL;
    if (len) memcpy(buf, data, len);
    mg_ctx ctx = {{0}};
    ir_graph *g = NULL;
    mg_status rc = parse(&ctx, buf, len, file, &g);
    free(buf);
    if (rc && (g || !ctx.msg[0])) fz_fail("a failed parse left a graph or no message", ctx.msg);
    if (!rc && !g) fz_fail("a parse succeeded without a graph", NULL);
    return rc ? NULL : g;
}

/* The canonical text of g (caller frees with base_free), or NULL if out of memory. */
static char *fz_text(const ir_graph *g) {
    strbuf sb = {0};
    ir_print_text(g, &sb);
    return sb_take(&sb);
}

enum { FZ_EVAL_MAX = 4096 };

/* Elements of every node of g and of its kernels' block graphs, stopping past FZ_EVAL_MAX. */
static int64_t fz_elements(const ir_graph *g) {
    int64_t total = 0;
    for (int i = 0; i < g->n_nodes && total <= FZ_EVAL_MAX; i++) {
        total += ir_numel(&g->nodes[i].shape);
        if (g->nodes[i].op == IR_OP_KERNEL && g->nodes[i].index == 0)
            total += fz_elements(g->nodes[i].body);
    }
    return total;
}

/* ev_float on g, inputs filled with a fixed pattern of values in [-2, 2), if g is small. */
static void fz_eval(const ir_graph *g) {
    if (fz_elements(g) > FZ_EVAL_MAX) return;
    double **in = calloc((size_t)g->n_nodes + 1, sizeof *in);
    double **out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    int n_in = 0, ok = in && out;
    for (int i = 0; ok && i < g->n_nodes; i++) {
        if (g->nodes[i].op != IR_OP_INPUT) continue;
        int64_t n = ir_numel(&g->nodes[i].shape);
        double *v = in[n_in++] = malloc((size_t)n * sizeof *v);
        ok = v != NULL;
        for (int64_t t = 0; ok && t < n; t++) v[t] = (double)((t * 13 + i * 7) % 32) / 8.0 - 2.0;
    }
    for (int k = 0; ok && k < g->n_outputs; k++)
        ok = (out[k] = malloc((size_t)ir_numel(&g->nodes[g->outputs[k]].shape) * sizeof **out)) != NULL;
    mg_ctx ctx = {{0}};
    if (ok) (void)ev_float(g, &ctx, 0, (const double *const *)in, out);
    if (ok) (void)ev_float(g, &ctx, EV_F64, (const double *const *)in, out);
    for (int k = 0; in && k < n_in; k++) free(in[k]);
    for (int k = 0; out && k < g->n_outputs; k++) free(out[k]);
    free(in), free(out);
}

/* The round trips and renderers above, on a graph a front end accepted. */
static void fz_check_graph(const ir_graph *g) {
    mg_ctx ctx = {{0}};
    if (ir_check(g, &ctx) && ctx.msg[0] && !strstr(ctx.msg, "out of memory"))
        fz_fail("ir_check failed on a parsed graph", ctx.msg);
    char *t1 = fz_text(g);
    if (!t1) return;
    ir_graph *g2 = fz_parse(ir_parse_text, (const uint8_t *)t1, strlen(t1), "<printed>");
    if (!g2) fz_fail("the printed text does not parse", t1);
    if (!ir_graph_equal(g, g2)) fz_fail("the printed text parses to a different graph", t1);
    char *t2 = fz_text(g2);
    if (t2 && strcmp(t1, t2)) fz_fail("printing the re-parsed text gives a different text", t2);
    base_free(t2), ir_graph_free(g2);
    strbuf js = {0};
    if (ir_print_json(g, &ctx, &js) == MG_OK && js.s) {
        ir_graph *g3 = fz_parse(ir_parse_json, (const uint8_t *)js.s, js.len, "<json>");
        if (!g3) fz_fail("the printed JSON does not parse", t1);
        if (!ir_graph_equal(g, g3)) fz_fail("the printed JSON parses to a different graph", t1);
        ir_graph_free(g3);
    }
    sb_free(&js);
    char why[512];
    (void)ir_is_lax(g, why, sizeof why);
    strbuf sb = {0};
    (void)ir_print_partition(g, &ctx, &sb);
    ir_print_dot(g, &sb);
    sb_free(&sb);
    base_free(t1);
    fz_eval(g);
}

#endif
