/* The plain lowering (src/lower, docs/lower.md): the lowered graph computes what the program
 * computes (both float evaluations, the μGraph's block by block), on the examples and on
 * random programs; it prints and parses back; its kernels' savers are numbered. */
#include <stdlib.h>
#include <string.h>

#include "lower/lower.h"
#include "unit.h"

void test_lower_examples(void);
void test_lower_random(void);
void test_lower_attention(void);
void test_lower_store_normed(void);

/* Inputs uniform in [-1, 1) for g's inputs, in order; NULL-terminated array. */
static double **random_inputs(const ir_graph *g, rng *r) {
    double **in = calloc(IR_MAX_IN * 4 + 1, sizeof *in);
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op != IR_OP_INPUT) continue;
        int64_t n = ir_numel(&g->nodes[i].shape);
        in[k] = malloc((size_t)n * sizeof(double));
        for (int64_t t = 0; t < n; t++) in[k][t] = rng_uniform(r) * 2 - 1;
        k++;
    }
    return in;
}

/* Lowers g, checks the structure (savers numbered in order, text round trip) and that both
 * evaluate to the same outputs in f64 (relative error per output <= 1e-9: the lowering only
 * regroups sums). Returns the statistics; fails the test on any difference. */
static lw_stats lower_and_compare(const ir_graph *g, const char *what, uint64_t seed) {
    mg_ctx ctx = {{0}};
    ir_graph *u = NULL;
    lw_stats st = {0};
    mg_status rc = lw_lower(g, &ctx, mg_device_default(), 0, NULL, &u, &st);
    CHECK_MSG(rc == MG_OK, "%s: %s", what, ctx.msg);
    if (rc) return st;
    CHECK_MSG(ir_check(u, &ctx) == MG_OK, "%s: %s", what, ctx.msg);
    for (int i = 0; i < u->n_nodes; i++) {
        const ir_graph *b = u->nodes[i].body;
        if (u->nodes[i].op != IR_OP_KERNEL || u->nodes[i].index) continue;
        for (int k = 0; k < b->n_outputs; k++) CHECK_MSG(b->nodes[b->outputs[k]].index == k, "%s: save %d", what, k);
    }
    strbuf a = {0}, b2 = {0};
    ir_print_text(u, &a);
    ir_graph *re = NULL;
    rc = ir_parse_text(&ctx, a.s, a.len, what, &re);
    CHECK_MSG(rc == MG_OK, "%s: the lowered text does not parse: %s\n%s", what, ctx.msg, a.s);
    if (!rc) {
        ir_print_text(re, &b2);
        CHECK_MSG(!strcmp(a.s, b2.s), "%s: text round trip", what);
    }
    rng r = {seed};
    double **in = random_inputs(g, &r), *o1[16] = {0}, *o2[16] = {0};
    for (int k = 0; k < g->n_outputs && k < 16; k++) {
        size_t n = (size_t)ir_numel(&g->nodes[g->outputs[k]].shape);
        o1[k] = calloc(n, sizeof(double)), o2[k] = calloc(n, sizeof(double));
    }
    if (!unit_feval(g, EV_F64 | EV_RAW_OUT, (const double *const *)in, o1) &&
        !unit_feval(u, EV_F64 | EV_RAW_OUT, (const double *const *)in, o2))
        for (int k = 0; k < g->n_outputs && k < 16; k++) {
            int64_t n = ir_numel(&g->nodes[g->outputs[k]].shape);
            double num = 0, den = 0;
            for (int64_t t = 0; t < n; t++) num += (o1[k][t] - o2[k][t]) * (o1[k][t] - o2[k][t]), den += o1[k][t] * o1[k][t];
            CHECK_MSG(num <= 1e-18 * (den > 1e-300 ? den : 1e-300),
                      "%s: output %d differs (relative %.3g)\n%s", what, k, sqrt(num / den), a.s);
        }
    else CHECK_MSG(0, "%s: evaluation failed", what);
    for (int k = 0; k < 16; k++) free(o1[k]), free(o2[k]);
    for (int k = 0; in[k]; k++) free(in[k]);
    free(in), sb_free(&a), sb_free(&b2), ir_graph_free(re), ir_graph_free(u);
    return st;
}

void test_lower_examples(void) {
    static const char *files[] = {
        "examples/rmsnorm_linear_b1.mu", "examples/gated_mlp.mu", "examples/lora.mu",
        "examples/ntrans_b8.mu", "examples/softmax_attention.mu", "tests/lower/mm_prologue_epilogue.mu",
        "tests/lower/mm_two_split.mu", "tests/lower/mm_batched_broadcast.mu", "tests/lower/odd_shapes.mu",
        "tests/lower/rows_loop_and_whole.mu", "tests/lower/layout_fallback.mu",
        "tests/lower/shared_intermediates.mu", "tests/lower/attn_split_4d_mask.mu",
        "tests/lower/attn_batched_4d.mu", "tests/lower/attn_2d_silu.mu"};
    int kernels = 0, fused = 0, plain = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        FILE *fp = fopen(files[f], "rb");
        CHECK_MSG(fp != NULL, "cannot open %s (run from the repository root)", files[f]);
        if (!fp) continue;
        char *buf = calloc(1, 1 << 16);
        buf[fread(buf, 1, (1 << 16) - 1, fp)] = 0;
        fclose(fp);
        ir_graph *g = unit_parse(buf);
        lw_stats st = lower_and_compare(g, files[f], 7 + f);
        kernels += st.kernels, fused += st.fused, plain += st.plain;
        ir_graph_free(g), free(buf);
    }
    /* every form and the fallback were exercised (the counts are the files' as written) */
    CHECK_MSG(kernels >= 20 && fused >= 5 && plain >= 3, "kernels %d fused %d plain %d", kernels, fused, plain);
    /* a program that already holds a kernel keeps a copy of it (mugen optimize's stitched
     * programs) and lowers the rest: the kernel's output, read by a matmul, is stored */
    ir_graph *g = unit_parse("input X : f16[64, 64]\ninput W : f16[64, 64]\n"
                             "H = kernel(X, grid=[1], forloop=1) {\n"
                             "    x = iter(X)\n    save(accum(x * 2))\n}\nO = matmul(H, W) + 1\noutput O\n");
    mg_ctx ctx = {{0}};
    ir_graph *u = NULL;
    CHECK_MSG(lw_lower(g, &ctx, mg_device_default(), 0, NULL, &u, NULL) == MG_OK && u, "%s", ctx.msg);
    int kn = 0;
    for (int i = 0; u && i < u->n_nodes; i++) kn += u->nodes[i].op == IR_OP_KERNEL;
    CHECK_MSG(kn == 2 && u && u->nodes[2].op == IR_OP_KERNEL && u->nodes[2].body != g->nodes[2].body &&
                  u->nodes[2].body->n_nodes == g->nodes[2].body->n_nodes, "%d kernels", kn);
    ir_graph_free(u), ir_graph_free(g);
}

/* Whether g lowered (GPU, or the C target with cpu) runs its matmul as a plain product loop:
 * the matmul's left operand an iterator, not a prologue computed from one. */
static int plain_product(const char *src, int cpu) {
    ir_graph *g = unit_parse(src), *u = NULL;
    mg_ctx ctx = {{0}};
    int plain = -1;
    CHECK_MSG(lw_lower(g, &ctx, mg_device_default(), cpu, NULL, &u, NULL) == MG_OK && u, "%s", ctx.msg);
    for (int i = 0; u && i < u->n_nodes; i++) {
        const ir_graph *b = u->nodes[i].body;
        for (int j = 0; b && u->nodes[i].op == IR_OP_KERNEL && j < b->n_nodes; j++)
            if (b->nodes[j].op == IR_OP_MATMUL) plain = b->nodes[b->nodes[j].in[0]].op == IR_OP_ITER;
    }
    ir_graph_free(u), ir_graph_free(g);
    return plain;
}

/* A norm before a projection (store_normed): the normalized rows are stored by the norm's
 * kernel when they are small beside the weights, so the product is a plain loop; a left
 * operand as large as the weights, and the C target, keep the norm as the product's prologue.
 * Equivalence is test_lower_examples' (rmsnorm_linear_b1). */
void test_lower_store_normed(void) {
    CHECK(plain_product("input X : f16[8, 1024]\ninput G : f16[1024]\ninput W : f16[1024, 2048]\n"
                        "O = matmul(rmsnorm(X, dim=1) * G, W)\noutput O\n", 0) == 1);
    CHECK(plain_product("input X : f16[8, 1024]\ninput G : f16[1024]\ninput W : f16[1024, 2048]\n"
                        "O = matmul(rmsnorm(X, dim=1) * G, W)\noutput O\n", 1) == 0);
    CHECK(plain_product("input X : f16[2048, 1024]\ninput G : f16[1024]\ninput W : f16[1024, 512]\n"
                        "O = matmul(rmsnorm(X, dim=1) * G, W)\noutput O\n", 0) == 0);
    CHECK(plain_product("input X : f16[8, 1024]\ninput W : f16[1024, 2048]\n" /* no reduction: no store */
                        "O = matmul(X * 2, W)\noutput O\n", 0) == 0);
}

/* ---- random programs ---- */

typedef struct tens {
    char name[16];
    int nd;
    int64_t d[4];
} tens;

static const int64_t SIZES[] = {1, 2, 3, 5, 8, 12, 16, 32, 48, 64, 96, 128, 256, 1536, 4096};

static void shape_text(strbuf *sb, const tens *t) {
    sb_printf(sb, "[");
    for (int k = 0; k < t->nd; k++) sb_printf(sb, "%s%lld", k ? ", " : "", (long long)t->d[k]);
    sb_printf(sb, "]");
}

static int64_t numel(const tens *t) {
    int64_t n = 1;
    for (int k = 0; k < t->nd; k++) n *= t->d[k];
    return n;
}

/* A statement on tensors v[0..n) into v[n]: an elementwise op with a broadcast operand (a new
 * input of the same shape with some dims 1, or a constant), a unary op, a reduction along a
 * random dim, or a matmul with a new weight input. Appends inputs to ins, the statement to
 * body. */
static void random_stmt(rng *r, tens *v, int n, strbuf *ins, strbuf *body, int *n_in) {
    static const char *un[] = {"exp", "sqr", "silu", "relu", "sqrt"};
    static const char *bin[] = {"+", "-", "*"};
    const tens *a = &v[rng_below(r, (uint32_t)n)];
    tens *o = &v[n];
    *o = *a;
    snprintf(o->name, sizeof o->name, "V%d", n);
    int kind = (int)rng_below(r, 10);
    if (kind < 3 && numel(a) * 64 <= (1 << 17)) { /* matmul with a new weight [.., k, n'] */
        if (a->nd < 2) {
            sb_printf(body, "%s = reshape(%s, shape=[1, %lld])\n", o->name, a->name, (long long)a->d[0]);
            o->nd = 2, o->d[0] = 1, o->d[1] = a->d[0];
            return;
        }
        tens w = {.nd = a->nd}; /* batch dims of 1: broadcast over the operand's */
        for (int k = 0; k < a->nd - 2; k++) w.d[k] = 1;
        w.d[a->nd - 2] = a->d[a->nd - 1], w.d[a->nd - 1] = SIZES[rng_below(r, 12)];
        snprintf(w.name, sizeof w.name, "W%d", (*n_in)++);
        sb_printf(ins, "input %s : f16", w.name), shape_text(ins, &w), sb_printf(ins, "\n");
        sb_printf(body, "%s = matmul(%s, %s)\n", o->name, a->name, w.name);
        o->d[o->nd - 1] = w.d[w.nd - 1];
    } else if (kind < 5) { /* reduction, keeping the dim */
        int d = (int)rng_below(r, (uint32_t)a->nd);
        const char *op = rng_below(r, 3) ? "sum" : "max";
        sb_printf(body, "%s = %s(%s, dim=%d) * %s\n", o->name, op, a->name, d, op[0] == 's' ? "0.01" : "1");
        o->d[d] = 1;
    } else if (kind < 7) { /* unary; exp and sqrt on tamed values */
        const char *f = un[rng_below(r, 5)];
        if (!strcmp(f, "exp")) sb_printf(body, "%s = exp(%s * 0.25)\n", o->name, a->name);
        else if (!strcmp(f, "sqrt")) sb_printf(body, "%s = sqrt(sqr(%s) + 1)\n", o->name, a->name);
        else sb_printf(body, "%s = %s(%s)\n", o->name, f, a->name);
    } else { /* binary with a broadcast input or a constant */
        const char *op = bin[rng_below(r, 3)];
        if (rng_below(r, 4) == 0) {
            sb_printf(body, "%s = %s %s 0.5\n", o->name, a->name, op);
            return;
        }
        tens b = *a;
        snprintf(b.name, sizeof b.name, "B%d", (*n_in)++);
        for (int k = 0; k < b.nd; k++)
            if (rng_below(r, 2)) b.d[k] = 1;
        sb_printf(ins, "input %s : %s", b.name, rng_below(r, 2) ? "f16" : "f32"), shape_text(ins, &b), sb_printf(ins, "\n");
        sb_printf(body, "%s = %s %s %s\n", o->name, a->name, op, b.name);
    }
}

void test_lower_random(void) {
    rng r = {20261126};
    int forms = 0, fused = 0, plain = 0;
    for (int trial = 0; trial < 120; trial++) {
        strbuf ins = {0}, body = {0}, all = {0};
        tens v[16];
        int n_in = 0, nd = 1 + (int)rng_below(&r, 3);
        v[0].nd = nd;
        snprintf(v[0].name, sizeof v[0].name, "X");
        for (int k = 0; k < nd; k++) v[0].d[k] = SIZES[rng_below(&r, k == nd - 1 ? 15 : 9)];
        while (numel(&v[0]) > 8192) v[0].d[nd - 1] = SIZES[rng_below(&r, 9)];
        sb_printf(&ins, "input X : f16"), shape_text(&ins, &v[0]), sb_printf(&ins, "\n");
        int n = 1, steps = 2 + (int)rng_below(&r, 6);
        for (; n <= steps; n++) random_stmt(&r, v, n, &ins, &body, &n_in);
        sb_printf(&all, "%s%soutput V%d", ins.s, body.s, n - 1);
        int extra = 1 + (int)rng_below(&r, (uint32_t)(n - 1));
        if (extra != n - 1 && rng_below(&r, 2)) sb_printf(&all, ", V%d", extra);
        sb_printf(&all, "\n");
        ir_graph *g = NULL;
        mg_ctx ctx = {{0}};
        if (ir_parse_text(&ctx, all.s, all.len, "random", &g) == MG_OK) { /* dead ends are fine */
            char what[64];
            snprintf(what, sizeof what, "random program %d", trial);
            lw_stats st = lower_and_compare(g, what, (uint64_t)trial);
            forms += st.kernels, fused += st.fused, plain += st.plain;
            if (unit_fails) fprintf(stderr, "%s\n", all.s);
        }
        ir_graph_free(g), sb_free(&ins), sb_free(&body), sb_free(&all);
        if (unit_fails) break;
    }
    CHECK_MSG(forms >= 200 && fused >= 20, "kernels %d, fused %d, plain %d", forms, fused, plain);
    if (getenv("UNIT_VERBOSE")) fprintf(stderr, "  kernels %d, fused %d, plain %d\n", forms, fused, plain);
}

/* ---- attention (form ATTN) ---- */

/* Kernels of the lowering of program text p (checked against the program as above), or -1. */
static int attn_kernels(const char *p, const char *what, uint64_t seed, int *fused) {
    ir_graph *g = unit_parse(p);
    *fused = 0;
    if (!g) return -1;
    lw_stats st = lower_and_compare(g, what, seed);
    ir_graph_free(g);
    *fused = st.fused;
    return st.kernels;
}

/* Draws an attention's shapes (0 to 2 batch dims, the second 1 or 1 + b1, rows *M, keys *N,
 * head dims) and writes its Q, K, V inputs into p; *nb: the batch dims. */
static void attn_inputs(rng *r, int64_t b1, strbuf *p, int *nb, int64_t *M, int64_t *N) {
    static const int64_t rows[] = {1, 8, 16, 32, 48, 64, 256}, keys[] = {64, 96, 512, 1024, 2048, 4096},
                         dh[] = {16, 64, 128};
    *nb = (int)rng_below(r, 3);
    int64_t b[2] = {1 + rng_below(r, 2) * (1 + rng_below(r, 8)), 1 + rng_below(r, 2) * b1};
    *M = rows[rng_below(r, 7)], *N = keys[rng_below(r, 6)];
    int64_t Kd = dh[rng_below(r, 3)], D = dh[rng_below(r, 3)];
    char bs[64] = "";
    for (int k = 0; k < *nb; k++) snprintf(bs + strlen(bs), sizeof bs - strlen(bs), "%lld, ", (long long)b[k]);
    sb_printf(p, "input Q : f16[%s%lld, %lld]\ninput K : f16[%s%lld, %lld]\ninput V : f16[%s%lld, %lld]\n", bs,
              (long long)*M, (long long)Kd, bs, (long long)Kd, (long long)*N, bs, (long long)*N, (long long)D);
}

/* Attention programs of random shapes (0 to 2 batch dims, rows, keys, head dims), score
 * functions (a scale, an additive mask broadcast along rows or batch, silu) lower to the ATTN
 * form (the scores and row sums computed inside: 1 kernel, or 2 with the keys split) and
 * compute what the program does; the scores or the row sum read elsewhere keep the old forms. */
void test_lower_attention(void) {
    rng r = {2026};
    int one = 0, two = 0;
    for (int t = 0; t < 40; t++) {
        int nb;
        int64_t M, N;
        strbuf p = {0};
        attn_inputs(&r, 7, &p, &nb, &M, &N);
        int f = (int)rng_below(&r, 4);
        if (f == 1) sb_printf(&p, "input B : f16[%lld]\n", (long long)N); /* a key mask, every row */
        if (f == 2) sb_printf(&p, "input B : f16[%lld, %lld]\n", (long long)M, (long long)N);
        const char *e = f == 0 ? "matmul(Q, K) * 0.125" : f == 3 ? "silu(matmul(Q, K) / 8)" : "matmul(Q, K) * 0.125 + B";
        sb_printf(&p, "S = exp(%s)\nO = matmul(S / sum(S, dim=%d), V)\noutput O\n", e, nb + 1);
        int fused, k = attn_kernels(p.s, p.s, 100 + t, &fused);
        CHECK_MSG(k >= 1 && k <= 2 && fused >= 2, "%s: %d kernels, %d fused (ATTN: 1 or 2, 2 fused)", p.s, k, fused);
        one += k == 1, two += k == 2;
        sb_free(&p);
    }
    CHECK_MSG(one >= 5 && two >= 5, "one kernel %d times, split %d times", one, two);
    /* the stable softmax (the scores' max subtracted: each block's own max, the splits
     * rescaled in the combining kernel) and norms of the queries and keys over the head dim
     * (computed inside the kernel from its tiles) keep the form */
    int maxed = 0, normed = 0;
    for (int t = 0; t < 24; t++) {
        int nb, f = t % 2;
        int64_t M, N;
        strbuf p = {0};
        attn_inputs(&r, 3, &p, &nb, &M, &N);
        if (f == 0)
            sb_printf(&p, "T = matmul(Q, K) * 0.125\nS = exp(T - max(T, dim=%d))\n", nb + 1);
        else
            sb_printf(&p, "S = exp(matmul(rmsnorm(Q, dim=%d), K / sqrt(sum(sqr(K), dim=%d) + 0.5)) * 0.125)\n",
                      nb + 1, nb);
        sb_printf(&p, "O = matmul(S / sum(S, dim=%d), V)\noutput O\n", nb + 1);
        int fused, k = attn_kernels(p.s, p.s, 300 + t, &fused);
        if (f == 0) maxed += k >= 1 && k <= 2 && fused >= 3;
        else normed += k >= 1 && k <= 2 && fused >= 4;
        sb_free(&p);
    }
    CHECK_MSG(maxed >= 9 && normed >= 11, "ATTN with a max %d of 12, with norms %d of 12", maxed, normed);
    if (getenv("UNIT_VERBOSE")) fprintf(stderr, "  ATTN with a max %d of 12, with norms %d of 12\n", maxed, normed);
    /* the scores also an output, or the row sum read twice: not attention's form */
    static const char *no[] = {
        "input Q : f16[8, 32, 64]\ninput K : f16[8, 64, 1024]\ninput V : f16[8, 1024, 64]\n"
        "P = matmul(Q, K)\nS = exp(P)\nO = matmul(S / sum(S, dim=2), V)\noutput O, P\n",
        "input Q : f16[8, 32, 64]\ninput K : f16[8, 64, 1024]\ninput V : f16[8, 1024, 64]\n"
        "S = exp(matmul(Q, K))\nT = sum(S, dim=2)\nO = matmul(S / T, V) + T\noutput O\n"};
    for (int q = 0; q < 2; q++) {
        int fused, k = attn_kernels(no[q], no[q], 7, &fused);
        CHECK_MSG(k >= 3, "%s: %d kernels (not the ATTN form)", no[q], k);
    }
}
