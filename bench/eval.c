/* bench/eval: speed of the finite-field reference evaluator, in modular multiply-adds per
 * second on one core. A "multiply-add" here is one element pair (x_p, x_q) multiplied and
 * added in both Z_p and Z_q, i.e. two modular multiply-adds; the figure per field is printed
 * too. Counted: matmul (batch*m*k*n), sum (one add per input element), mul/sqr (one
 * multiply per output element). Usage: bench-eval PROGRAM [REPEATS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "eval/eval.h"
#include "eval/ff.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double count_mac(const ir_graph *g) {
    double n = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *nd = &g->nodes[i];
        if (nd->op == IR_OP_MATMUL)
            n += (double)ir_numel(&nd->shape) * (double)g->nodes[nd->in[0]].shape.d[nd->shape.ndim - 1];
        else if (nd->op == IR_OP_SUM) n += (double)ir_numel(&g->nodes[nd->in[0]].shape);
        else if (nd->op == IR_OP_MUL || nd->op == IR_OP_SQR) n += (double)ir_numel(&nd->shape);
    }
    return n;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench-eval PROGRAM [REPEATS]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    mg_ctx ctx = {{0}};
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    ir_graph *g = NULL;
    if (ir_parse_text(&ctx, text, len, argv[1], &g)) {
        fprintf(stderr, "%s\n", ctx.msg);
        return 1;
    }
    int ni = 0;
    uint32_t *ip[16], *iq[16], *op[16], *oq[16];
    rng r = {42};
    ff_needs none = {.n_qr = 0};
    ff_field F;
    ff_field_draw(42, &none, &F);
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op != IR_OP_INPUT) continue;
        int64_t n = ir_numel(&g->nodes[i].shape);
        ip[ni] = malloc((size_t)n * 4), iq[ni] = malloc((size_t)n * 4);
        for (int64_t t = 0; t < n; t++) ip[ni][t] = rng_below(&r, F.P.m), iq[ni][t] = rng_below(&r, F.Q.m);
        ni++;
    }
    for (int k = 0; k < g->n_outputs; k++) {
        int64_t n = ir_numel(&g->nodes[g->outputs[k]].shape);
        op[k] = malloc((size_t)n * 4), oq[k] = malloc((size_t)n * 4);
    }
    double macs = count_mac(g), best = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now();
        if (ev_field(g, &ctx, &F, (const uint32_t *const *)ip, (const uint32_t *const *)iq, op, oq)) {
            fprintf(stderr, "%s\n", ctx.msg);
            return 1;
        }
        double t = now() - t0;
        if (t < best) best = t;
    }
    printf("bench/eval %s: %.0f element-pair multiply-adds in %.3f s (best of %d, one core)\n",
           argv[1], macs, best, reps);
    printf("  %.3g element-pair multiply-adds/s (%.3g modular multiply-adds/s counting Z_p and Z_q "
           "separately)\n  target >= 2e8/s element pairs: %s\n", macs / best, 2 * macs / best,
           macs / best >= 2e8 ? "met" : "MISSED");
    ir_graph_free(g);
    return 0;
}
