/* Abstract expressions, the e-graph's subexpression test and the generator (src/search/). */
#include <stdlib.h>
#include <string.h>

#include "search/aexpr.h"
#include "search/search.h"
#include "lower/lower.h"
#include "unit.h"

void test_aexpr_subexpr(void);
void test_aexpr_print_parse(void);
void test_search_finds_fused(void);
void test_search_threads_same(void);
void test_search_compound_rmsnorm(void);
void test_search_theorem1(void);
void test_search_nothing_found(void);
void test_search_split_reduction(void);
void test_search_screen(void);
void test_search_small_instance(void);
void test_search_fewer_blocks(void);
void test_search_ops(void);
void test_search_lowered(void);
void test_search_progress_stop(void);
void test_aexpr_z3_corpus(void);
void test_search_set_by_name(void);

/* The e-graph of prog's output; *t gets the program's inputs as its first variables. */
static ae_egraph *egraph_of(const char *prog, ae_tab *t, ae_egraph_stats *st) {
    ir_graph *g = unit_parse(prog);
    ae_tab_init(t);
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == IR_OP_INPUT) ae_var(t, g->nodes[i].name);
    int32_t *terms = malloc(sizeof *terms * (size_t)g->n_nodes);
    mg_ctx ctx;
    CHECK(ae_of_graph(t, &ctx, g, terms) == MG_OK);
    int32_t root = terms[g->outputs[0]];
    ae_egraph *eg = ae_egraph_new(t, &root, 1, NULL, st);
    free(terms);
    ir_graph_free(g);
    return eg;
}

static int32_t parse_term(ae_tab *t, const char *s) {
    mg_ctx ctx;
    size_t pos = 0;
    int col = 0;
    int32_t id = ae_parse(t, &ctx, s, &pos, &col);
    CHECK_MSG(id >= 0, "%s: %s", s, ctx.msg);
    return id;
}

static const char *RMS =
    "input X : f16[2, 4096]\ninput W : f16[4096, 6144]\n"
    "R = sqrt(sum(sqr(X), dim=1) / 4096)\nO = matmul(X / R, W)\noutput O\n";

void test_aexpr_subexpr(void) {
    /* answers derived by hand from Table 2 (tests/z3/ checks the same kind of pairs with Z3) */
    static const struct { const char *e; int sub, root; } rms[] = {
        {"X", 1, 0}, {"W", 1, 0}, {"(mul X X)", 1, 0}, {"(mul X W)", 1, 0},
        {"(sum 64 (mul X W))", 1, 0}, {"(sum 64 (sum 64 (mul X W)))", 1, 0},
        {"(sum 64 (mul X X))", 1, 0}, {"(div (sum 4096 (mul X X)) 4096)", 1, 0},
        {"(div (sum 64 (sum 64 (mul X W))) (sqrt (div (sum 64 (sum 64 (mul X X))) 4096)))", 1, 1},
        {"(sum 4096 (mul (div X (sqrt (div (sum 4096 (mul X X)) 4096))) W))", 1, 1},
        {"(exp X)", 0, 0}, {"(div X W)", 0, 0}, {"(silu (mul X W))", 0, 0},
        {"(sum 3 (mul X W))", 0, 0}, {"(mul X 7)", 0, 0},
        /* our rms axiom: rms(k, x) = div(x, sqrt(div(sum(k, mul(x, x)), k))) */
        {"(rms 4096 X)", 1, 0}, {"(sum 4096 (mul W (rms 4096 X)))", 1, 1},
        {"(div (sum 4096 (mul X W)) (sqrt (div (sum 4096 (mul X X)) 4096)))", 1, 1},
        {"(rms 64 X)", 0, 0}, {"(rms 4096 W)", 0, 0}, {"(rms 4096 (mul X W))", 0, 0},
    };
    ae_tab t;
    ae_egraph_stats st;
    ae_egraph *eg = egraph_of(RMS, &t, &st);
    CHECK(eg && st.saturated);
    ae_query q;
    ae_query_init(&q, eg, &t);
    for (size_t i = 0; i < sizeof rms / sizeof *rms; i++) {
        int32_t id = parse_term(&t, rms[i].e);
        CHECK_MSG(ae_is_sub(&q, id) == rms[i].sub, "subexpr %s", rms[i].e);
        CHECK_MSG(ae_is_root(&q, id, 0) == rms[i].root, "equal %s", rms[i].e);
    }
    /* distances to the root (ae_up), by hand from A_eq forms of the program (sums are free):
     * sum(mul(X, div(W, R))) and sum(mul(W, div(X, R))) give X and W one mul each; the sum of
     * X W and R = sqrt(div(sum(mul(X, X)), 4096)) need the division of div(sum(mul(X, W)), R);
     * X X the division by 4096, sqrt and div */
    static const struct { const char *e; int up; } up[] = {
        {"X", 1}, {"W", 1}, {"(sum 4096 (mul X W))", 1}, {"(sqrt (div (sum 4096 (mul X X)) 4096))", 1},
        {"(mul X X)", 3}, {"(sum 4096 (mul W (div X (sqrt (div (sum 4096 (mul X X)) 4096)))))", 0},
    };
    for (size_t i = 0; i < sizeof up / sizeof *up; i++)
        CHECK_MSG(ae_up(&q, parse_term(&t, up[i].e)) == up[i].up, "up %s = %d", up[i].e, ae_up(&q, parse_term(&t, up[i].e)));
    CHECK(ae_up(&q, parse_term(&t, "(exp X)")) >= INT32_MAX / 2); /* not a subexpression */
    /* operators to a root from a set (ae_min_ops): nothing without W; from X and W at most the
     * 4 of div(sum(X W), sqrt(div(sum(X X), 4096))) and at least 2 (X X, then / 4096); none from
     * the root itself */
    int32_t xw[2] = {parse_term(&t, "X"), parse_term(&t, "W")};
    int lb = ae_min_ops(&q, xw, 2);
    CHECK_MSG(lb >= 2 && lb <= 4, "min ops from X, W = %d", lb);
    CHECK(ae_min_ops(&q, xw, 1) == INT32_MAX);
    int32_t root = parse_term(&t, "(sum 4096 (mul W (div X (sqrt (div (sum 4096 (mul X X)) 4096)))))");
    CHECK(ae_min_ops(&q, &root, 1) == 0);
    ae_query_free(&q);
    ae_egraph_free(eg);
    ae_tab_free(&t);
    /* the paper's example: for X Z + Y Z, X + Y is kept and X Y is pruned */
    eg = egraph_of("input X : f16[4, 4]\ninput Y : f16[4, 4]\ninput Z : f16[4, 4]\nO = X * Z + Y * Z\noutput O\n",
                   &t, &st);
    ae_query_init(&q, eg, &t);
    CHECK(ae_is_sub(&q, parse_term(&t, "(add X Y)")));
    CHECK(!ae_is_sub(&q, parse_term(&t, "(mul X Y)")));
    CHECK(ae_is_root(&q, parse_term(&t, "(mul (add Y X) Z)"), 0));
    ae_query_free(&q);
    ae_egraph_free(eg);
    ae_tab_free(&t);
}

void test_aexpr_print_parse(void) {
    ae_tab t;
    ae_tab_init(&t);
    static const char *texts[] = {"(sum 4096 (mul W (div X (sqrt (div (sum 4096 (mul X X)) 4096)))))",
                                  "(concat 256 16 X (sum 256 (mul X A)))", "(exp (add 0.5 -1.25))",
                                  "(silu (mul Q 1e-06))", "(rms 4096 (add X (mul alpha (rms 4096 H))))"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        int32_t id = parse_term(&t, texts[i]);
        strbuf sb = {0};
        ae_print(&t, id, &sb);
        int32_t again = parse_term(&t, sb.s);
        CHECK_MSG(again == id, "%s printed as %s", texts[i], sb.s);
        sb_free(&sb);
    }
    /* canonical forms: commutativity and sum(1, x) = x hold by construction */
    CHECK(parse_term(&t, "(mul X W)") == parse_term(&t, "(mul W X)"));
    CHECK(parse_term(&t, "(sum 1 X)") == parse_term(&t, "X"));
    /* malformed input: an error with the column, no crash */
    static const struct { const char *s; int col; } bad[] = {
        {"(mul X)", 6}, {"(sum 0 X)", 5}, {"(foo X)", 1}, {"(add X Y", 0}, {")", 0}, {"(exp X$)", 6},
        {"(rms X)", 5}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mg_ctx ctx;
        size_t pos = 0;
        int col = -1;
        CHECK_MSG(ae_parse(&t, &ctx, bad[i].s, &pos, &col) < 0 && col == bad[i].col, "%s: col %d", bad[i].s, col);
    }
    ae_tab_free(&t);
}

/* Runs the search on src with the given limits; returns the result (caller frees). */
static int no_lowered; /* run_search without the plain lowering's μGraph */

static mg_search_result run_search_ops(const char *src, int kops, int bops, int prune, int threads, const char *ops) {
    ir_graph *g = unit_parse(src);
    sr_opts o;
    sr_opts_default(&o);
    o.max_kops = kops, o.max_bops = bops, o.prune = prune, o.threads = threads, o.ops = ops;
    o.no_lowered = no_lowered;
    o.grid[0] = 1, o.grid[1] = 2, o.n_grid = 2;
    o.forloop[0] = 1, o.forloop[1] = 2, o.n_forloop = 2;
    o.verify_tests = 2;
    mg_search_result r;
    mg_ctx ctx;
    mg_status rc = sr_search(g, &o, &ctx, &r);
    CHECK_MSG(rc == MG_OK, "%s", ctx.msg);
    ir_graph_free(g);
    return r;
}

static mg_search_result run_search(const char *src, int kops, int bops, int prune, int threads) {
    return run_search_ops(src, kops, bops, prune, threads, NULL);
}

static int has_text(const mg_search_result *r, const char *text) {
    for (int i = 0; i < r->n_found; i++)
        if (!strcmp(r->found[i].text, text)) return 1;
    return 0;
}

static const char *SMALL_RMS =
    "input X : f16[2, 8]\ninput W : f16[8, 4]\nO = matmul(X / sum(sqr(X), dim=1), W)\noutput O\n";
static const char *SMALL_MM = "input X : f16[4, 8]\ninput W : f16[8, 4]\nO = matmul(X, W)\noutput O\n";

void test_search_finds_fused(void) {
    /* the Figure 3b move at a small size: one kernel, the division after the matmul */
    mg_search_result r = run_search(SMALL_RMS, 1, 8, 1, 2);
    int fused = 0;
    for (int i = 0; i < r.n_found; i++) {
        CHECK(strstr(r.found[i].verdict, "equivalent") == r.found[i].verdict);
        fused |= r.found[i].kernels == 1 && r.found[i].kops == 1;
    }
    CHECK_MSG(r.n_found > 0 && fused, "%d found", r.n_found);
    /* every one re-verifies from its text */
    ir_graph *p = unit_parse(SMALL_RMS);
    for (int i = 0; i < r.n_found && i < 5; i++) {
        ir_graph *u = unit_parse(r.found[i].text);
        mg_verify_report rep;
        mg_ctx ctx;
        CHECK(vf_verify(p, u, &ctx, 3, 99, &rep) == MG_OK && rep.verdict == MG_EQUIVALENT);
        ir_graph_free(u);
    }
    ir_graph_free(p);
    mg_search_result_free(&r);
}

void test_search_split_reduction(void) {
    /* FlashDecoding at a tiny size: a first kernel whose blocks each take part of the KV
     * sequence and save partial sums side by side (a new last dim), a second that sums them */
    ir_graph *g = unit_parse("input Q : f16[1, 4, 2]\ninput K : f16[1, 2, 8]\ninput V : f16[1, 8, 2]\n"
                             "S = exp(matmul(Q, K))\nO = matmul(S / sum(S, dim=2), V)\noutput O\n");
    sr_opts o;
    sr_opts_default(&o);
    o.max_kops = 2, o.max_kernels = 2, o.max_grid_dims = 1, o.verify_tests = 2;
    o.grid[0] = 1, o.grid[1] = 2, o.n_grid = 2;
    o.forloop[0] = 1, o.n_forloop = 1;
    mg_search_result r;
    mg_ctx ctx;
    CHECK_MSG(sr_search(g, &o, &ctx, &r) == MG_OK, "%s", ctx.msg);
    int split = -1;
    for (int i = 0; i < r.n_found && split < 0; i++) {
        const char *t = r.found[i].text, *k2 = strstr(t, "O = kernel(");
        const char *rs = strstr(t, "reshape("), *ex = strstr(t, "exp(");
        if (r.found[i].kernels == 2 && k2 && rs && rs < k2 && ex && ex < k2 && strstr(k2, "sum(")) split = i;
    }
    CHECK_MSG(split >= 0, "no split reduction among %d μGraphs", r.n_found);
    if (split >= 0) {
        ir_graph *u = unit_parse(r.found[split].text);
        mg_verify_report rep;
        CHECK(vf_verify(g, u, &ctx, 4, 5, &rep) == MG_OK && rep.verdict == MG_EQUIVALENT);
        ir_graph_free(u);
    }
    mg_search_result_free(&r);
    ir_graph_free(g);
}

void test_search_compound_rmsnorm(void) {
    /* nTrans at a small size: as one kernel it needs 18 primitive block operators, but 10 with
     * the compound rmsnorm (3 iterators, sub, rmsnorm, mul, add, rmsnorm, accum, save) */
    static const char *prog = "input X : f16[2, 16]\ninput H : f16[2, 16]\ninput alpha : f16[2, 16]\n"
                              "O = rmsnorm(X + alpha * rmsnorm(H - X, dim=1), dim=1)\noutput O\n";
    mg_search_result r = run_search(prog, 1, 11, 1, 2);
    CHECK_MSG(r.n_found > 0, "%s", r.why_none);
    ir_graph *p = unit_parse(prog);
    for (int i = 0; i < r.n_found; i++) {
        CHECK(r.found[i].kops == 1 && r.found[i].kernels == 1);
        /* written out in primitives, both norms in the one kernel */
        const char *t = r.found[i].text, *s1 = strstr(t, "sqrt("), *s2 = s1 ? strstr(s1 + 1, "sqrt(") : NULL;
        CHECK_MSG(s2 && !strstr(t, "rms"), "%s", t);
        ir_graph *u = unit_parse(t);
        mg_verify_report rep;
        mg_ctx ctx;
        CHECK(vf_verify(p, u, &ctx, 3, 7, &rep) == MG_OK && rep.verdict == MG_EQUIVALENT);
        ir_graph_free(u);
    }
    ir_graph_free(p);
    mg_search_result_free(&r);
}

/* --ops: only the listed operators are placed; what the narrowed search finds, the full one
 * finds too; a list without an operator the program needs (sqr, and mul that could stand in
 * for it) finds nothing; an unknown name is refused. */
void test_search_ops(void) {
    mg_search_result all = run_search(SMALL_RMS, 2, 6, 1, 1);
    mg_search_result some = run_search_ops(SMALL_RMS, 2, 6, 1, 1, "matmul,sum,sqr,div");
    CHECK_MSG(some.n_found > 0 && some.n_found <= all.n_found, "%d of %d", some.n_found, all.n_found);
    static const char *other[] = {"exp(", "sqrt(", "silu(", "concat(", " + ", " - ", " * "};
    for (int i = 0; i < some.n_found; i++) {
        for (size_t k = 0; k < sizeof other / sizeof *other; k++)
            CHECK_MSG(!strstr(some.found[i].text, other[k]), "'%s' in %s", other[k], some.found[i].text);
        CHECK_MSG(has_text(&all, some.found[i].text), "%s", some.found[i].text);
    }
    mg_search_result none = run_search_ops(SMALL_RMS, 2, 6, 1, 1, "matmul,sum,div");
    CHECK(none.n_found == 0);
    ir_graph *g = unit_parse(SMALL_RMS);
    sr_opts o;
    sr_opts_default(&o);
    o.ops = "matmul,softmax";
    mg_search_result r;
    mg_ctx ctx;
    CHECK(sr_search(g, &o, &ctx, &r) == MG_ERR_INVALID && strstr(ctx.msg, "unknown operator 'softmax'"));
    ir_graph_free(g);
    mg_search_result_free(&all), mg_search_result_free(&some), mg_search_result_free(&none);
}

/* The same ranked list and counts on 1 and 2 threads, and with every candidate handed to the
 * verification queue (MUGEN_SEARCH_QUEUE: queue_job, sr_finish_jobs, help) on 2 and 3. */
void test_search_threads_same(void) {
    mg_search_result r[4];
    r[0] = run_search(SMALL_MM, 2, 4, 1, 1), r[1] = run_search(SMALL_MM, 2, 4, 1, 2);
    setenv("MUGEN_SEARCH_QUEUE", "1", 1);
    r[2] = run_search(SMALL_MM, 2, 4, 1, 2), r[3] = run_search(SMALL_MM, 2, 4, 1, 3);
    unsetenv("MUGEN_SEARCH_QUEUE");
    for (int k = 1; k < 4; k++) {
        CHECK_MSG(r[0].n_found == r[k].n_found && r[0].n_found > 0, "run %d: %d vs %d", k, r[0].n_found, r[k].n_found);
        CHECK_MSG(r[0].states == r[k].states && r[0].rejected == r[k].rejected && r[0].duplicates == r[k].duplicates,
                  "run %d: states %lld/%lld rejected %lld/%lld duplicates %lld/%lld", k, (long long)r[0].states,
                  (long long)r[k].states, (long long)r[0].rejected, (long long)r[k].rejected,
                  (long long)r[0].duplicates, (long long)r[k].duplicates);
        for (int i = 0; i < r[0].n_found && i < r[k].n_found; i++) CHECK(!strcmp(r[0].found[i].text, r[k].found[i].text));
    }
    for (int k = 0; k < 4; k++) mg_search_result_free(&r[k]);
}

void test_search_theorem1(void) {
    /* Theorem 1: every μGraph the unpruned search finds whose abstract expression is
     * A_eq-equal to the program's is found with pruning too; pruning explores fewer states */
    static const char *progs[3];
    progs[0] = SMALL_MM;
    progs[1] = "input X : f16[4, 8]\ninput Y : f16[4, 8]\nO = X * Y\noutput O\n";
    progs[2] = "input X : f16[4, 8]\nO = rmsnorm(X, dim=1)\noutput O\n"; /* the compound */
    for (int k = 0; k < 3; k++) {
        mg_search_result off = run_search(progs[k], 1, 5, 0, 2), on = run_search(progs[k], 1, 5, 1, 2);
        int missing = 0;
        for (int i = 0; i < off.n_found; i++) missing += off.found[i].aeq && !has_text(&on, off.found[i].text);
        CHECK_MSG(off.n_found > 0 && missing == 0, "program %d: %d of %d missing with pruning", k, missing, off.n_found);
        CHECK_MSG(on.states < off.states, "program %d: %lld states with pruning, %lld without", k,
                  (long long)on.states, (long long)off.states);
        mg_search_result_free(&off);
        mg_search_result_free(&on);
    }
}

/* Searches prog as it is (*on) and with environment switch `env` set (*off), and checks that
 * both find something and the same μGraphs (what the switch turns off loses nothing). */
static void same_found_without(const char *prog, const char *env, mg_search_result *on, mg_search_result *off) {
    *on = run_search(prog, 2, 8, 1, 2);
    setenv(env, "1", 1);
    *off = run_search(prog, 2, 8, 1, 2);
    unsetenv(env);
    CHECK_MSG(on->n_found > 0 && on->n_found == off->n_found, "%d found, %d with %s", on->n_found, off->n_found, env);
    for (int i = 0; i < off->n_found; i++) CHECK_MSG(has_text(on, off->found[i].text), "lost: %s", off->found[i].text);
}

void test_search_screen(void) {
    /* the screen (operators untiled, dims above 16 shrunk) rejects candidates that A_eq admits
     * but that are not equivalent, and loses nothing: the same μGraphs as without it */
    static const char *prog = "input X : f16[2, 32]\ninput W : f16[32, 24]\n"
                              "O = matmul(X / sqrt(sum(sqr(X), dim=1) / 32), W)\noutput O\n";
    mg_search_result on, off;
    same_found_without(prog, "MUGEN_SEARCH_NO_SCREEN", &on, &off);
    CHECK_MSG(on.screened > 0 && off.screened == 0, "screened %lld with the screen, %lld without",
              (long long)on.screened, (long long)off.screened);
    mg_search_result_free(&on);
    mg_search_result_free(&off);
}

void test_search_small_instance(void) {
    /* candidates verified with the free dim (W's 96 output columns, which nothing reduces
     * over) shrunk to the grid's parts times 3 find the same μGraphs as at full size
     * (MUGEN_SEARCH_FULL_VERIFY=1), and their verdicts say where they were reached */
    static const char *prog = "input X : f16[2, 32]\ninput W : f16[32, 96]\n"
                              "O = matmul(X / sqrt(sum(sqr(X), dim=1) / 32), W)\noutput O\n";
    mg_search_result on, off;
    same_found_without(prog, "MUGEN_SEARCH_FULL_VERIFY", &on, &off);
    int small_on = 0, small_off = 0;
    for (int i = 0; i < on.n_found; i++) small_on += strstr(on.found[i].verdict, "smaller instance") != NULL;
    for (int i = 0; i < off.n_found; i++) small_off += strstr(off.found[i].verdict, "smaller instance") != NULL;
    CHECK_MSG(small_on > 0 && small_off == 0, "%d of %d verified small; %d with full verification", small_on,
              on.n_found, small_off);
    mg_search_result_free(&on);
    mg_search_result_free(&off);
}

/* run_search_ops with grid sizes 1 and g (for-loops 1 and 2). */
static mg_search_result run_search_grid(const char *src, int kops, int bops, int g) {
    ir_graph *prog = unit_parse(src);
    sr_opts o;
    sr_opts_default(&o);
    o.max_kops = kops, o.max_bops = bops, o.threads = 2, o.no_lowered = 1;
    o.grid[0] = 1, o.grid[1] = g, o.n_grid = 2;
    o.forloop[0] = 1, o.forloop[1] = 2, o.n_forloop = 2;
    o.verify_tests = 2;
    mg_search_result r;
    mg_ctx ctx;
    CHECK_MSG(sr_search(prog, &o, &ctx, &r) == MG_OK, "%s", ctx.msg);
    ir_graph_free(prog);
    return r;
}

void test_search_fewer_blocks(void) {
    /* 16 blocks over W's 48 free columns (chunks of 3): the same grid over smaller tiles needs
     * 16 x 3 x 2 > 48 columns, so the small instance keeps the chunks and takes fewer blocks
     * (48 -> 9 columns, 3 blocks: docs/verify.md); the same μGraphs as at full size
     * (MUGEN_SEARCH_FULL_VERIFY=1), none lost and none gained, and the verdicts say so */
    static const char *prog = "input X : f16[2, 32]\ninput W : f16[32, 48]\n"
                              "O = matmul(X / sqrt(sum(sqr(X), dim=1) / 32), W)\noutput O\n";
    mg_search_result on = run_search_grid(prog, 1, 8, 16);
    setenv("MUGEN_SEARCH_FULL_VERIFY", "1", 1);
    mg_search_result off = run_search_grid(prog, 1, 8, 16);
    unsetenv("MUGEN_SEARCH_FULL_VERIFY");
    CHECK_MSG(on.n_found > 0 && on.n_found == off.n_found, "%d found, %d at full size", on.n_found, off.n_found);
    for (int i = 0; i < off.n_found; i++) CHECK_MSG(has_text(&on, off.found[i].text), "lost: %s", off.found[i].text);
    int fewer = 0;
    for (int i = 0; i < on.n_found; i++) fewer += strstr(on.found[i].verdict, "48 -> 9 in fewer blocks") != NULL;
    CHECK_MSG(fewer > 0, "none of %d verified in fewer blocks", on.n_found);
    mg_search_result_free(&on);
    mg_search_result_free(&off);
}

void test_search_nothing_found(void) {
    /* exp needs an op the limits do not leave room for: nothing, and the reason (without the
     * lowering's μGraph, which holds it in one kernel) */
    no_lowered = 1;
    mg_search_result r = run_search("input X : f16[4, 8]\nO = exp(X) * X + X\noutput O\n", 1, 2, 1, 1);
    no_lowered = 0;
    CHECK(r.n_found == 0 && strstr(r.why_none, "limits") != NULL);
    mg_search_result_free(&r);
    /* a program that is not Lax is refused with a message */
    ir_graph *g = unit_parse("input X : f16[4, 8]\nO = relu(X)\noutput O\n");
    sr_opts o;
    sr_opts_default(&o);
    mg_ctx ctx;
    CHECK(sr_search(g, &o, &ctx, &r) == MG_ERR_UNSUPPORTED && strstr(ctx.msg, "Lax"));
    ir_graph_free(g);
}

/* The e-graph against tests/z3/pairs.txt, whose expected answers Z3 confirms on every pair it
 * decides (tests/z3/run.sh): the two decision procedures agree through them. */
void test_aexpr_z3_corpus(void) {
    FILE *f = fopen("tests/z3/pairs.txt", "rb");
    CHECK_MSG(f != NULL, "tests/z3/pairs.txt (run from the repository root)");
    if (!f) return;
    static char line[65536];
    int n = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        char *field[4] = {line, NULL, NULL, NULL};
        for (int k = 1; k < 4; k++) {
            char *tab = field[k - 1] ? strchr(field[k - 1], '\t') : NULL;
            if (tab) *tab = 0, field[k] = tab + 1;
        }
        if (!field[3]) continue;
        field[3][strcspn(field[3], " \t\r\n#")] = 0;
        int expect = !strcmp(field[3], "yes"), is_sub = !strcmp(field[0], "sub");
        ae_tab t;
        ae_tab_init(&t);
        int32_t e2 = parse_term(&t, field[2]), e1 = parse_term(&t, field[1]);
        /* sums as large as either side's (the search bounds them by the program's alone) */
        ae_limits lim = {0, 0, 0, NULL, NULL};
        for (int32_t i = 0; i < t.n; i++)
            lim.max_sum += t.terms[i].op == AE_SUM || t.terms[i].op == AE_RMS ? t.terms[i].k
                           : t.terms[i].op == AE_CONCAT                         ? t.terms[i].k + t.terms[i].k2
                                                                                : 0;
        ae_egraph_stats st;
        ae_egraph *eg = ae_egraph_new(&t, &e2, 1, &lim, &st);
        ae_query q;
        ae_query_init(&q, eg, &t);
        int got = is_sub ? ae_is_sub(&q, e1) : ae_is_root(&q, e1, 0);
        CHECK_MSG(got == expect, "line %d: %s %s %s: e-graph says %s", lineno, field[0], field[1], field[2],
                  got ? "yes" : "no");
        ae_query_free(&q);
        ae_egraph_free(eg);
        ae_tab_free(&t);
        n++;
    }
    fclose(f);
    CHECK_MSG(n >= 100, "%d pairs", n);
}

/* The plain lowering's μGraph is among the results, verified and ranked with the others
 * (task -1): an attention whose fused kernels the enumeration does not reach within tight
 * limits still gets them; its text is the lowering's; the same with 1 and 2 threads; left
 * out with no_lowered, and where --ops excludes one of its operators. */
void test_search_lowered(void) {
    static const char *attn = "input Q : f16[2, 16, 16]\ninput K : f16[2, 16, 256]\ninput V : f16[2, 256, 16]\n"
                              "S = exp(matmul(Q, K) / 4)\nO = matmul(S / sum(S, dim=2), V)\noutput O\n";
    ir_graph *g = unit_parse(attn), *u = NULL;
    mg_ctx ctx;
    CHECK(lw_lower(g, &ctx, mg_device_default(), 0, NULL, &u, NULL) == MG_OK);
    strbuf low = {0};
    ir_print_text(u, &low);
    mg_search_result r1 = run_search(attn, 1, 2, 1, 1), r2 = run_search(attn, 1, 2, 1, 2);
    int at = -1;
    for (int i = 0; i < r1.n_found; i++)
        if (r1.found[i].task < 0) at = i;
    CHECK_MSG(at >= 0 && !strcmp(r1.found[at].text, low.s) && strstr(r1.found[at].verdict, "equivalent"),
              "%d found, the lowering's at %d", r1.n_found, at);
    CHECK(r1.n_found == r2.n_found);
    for (int i = 0; i < r1.n_found && i < r2.n_found; i++) CHECK(!strcmp(r1.found[i].text, r2.found[i].text));
    no_lowered = 1;
    mg_search_result r3 = run_search(attn, 1, 2, 1, 1);
    no_lowered = 0;
    mg_search_result r4 = run_search_ops(attn, 1, 2, 1, 1, "matmul,sum,div");
    CHECK(!has_text(&r3, low.s) && !has_text(&r4, low.s) && r3.n_found == r1.n_found - 1);
    mg_search_result_free(&r1), mg_search_result_free(&r2), mg_search_result_free(&r3), mg_search_result_free(&r4);
    sb_free(&low), ir_graph_free(u), ir_graph_free(g);
    /* a split-K lowering (its partials saved with a leading dim of 1 added, then squeezed)
     * is verified at a smaller instance of its free dim like any candidate */
    static const char *mm = "input X : f16[1, 1024]\ninput W : f16[1024, 96]\nO = matmul(X, W)\noutput O\n";
    mg_search_result r5 = run_search(mm, 1, 2, 1, 2);
    at = -1;
    for (int i = 0; i < r5.n_found; i++)
        if (r5.found[i].task == -1) at = i;
    CHECK_MSG(at >= 0 && strstr(r5.found[at].verdict, "equivalent") && strstr(r5.found[at].verdict, "smaller instance"),
              "the lowering's verdict: %s", at >= 0 ? r5.found[at].verdict : "(not found)");
    /* every tiling of the products (lw_tilings) whose lowering differs from the earlier ones'
     * is a candidate too (task -1 - v), verified: here two of the four differ */
    g = unit_parse(mm);
    int distinct = 0;
    char *texts[LW_TILINGS] = {0};
    for (int v = 0; v < LW_TILINGS && g; v++) {
        CHECK(lw_lower(g, &ctx, mg_device_default(), 0, &lw_tilings[v], &u, NULL) == MG_OK);
        ir_print_text(u, &low), texts[v] = sb_take(&low), ir_graph_free(u);
        int twin = 0;
        for (int q = 0; q < v; q++) twin |= !strcmp(texts[q], texts[v]);
        distinct += !twin;
        at = -1;
        for (int i = 0; i < r5.n_found; i++)
            if (!strcmp(r5.found[i].text, texts[v])) at = i;
        CHECK_MSG(at >= 0 && r5.found[at].task < 0 && (twin || r5.found[at].task == -1 - v) &&
                      strstr(r5.found[at].verdict, "equivalent"), "tiling %d: at %d", v, at);
    }
    int lowered = 0;
    for (int i = 0; i < r5.n_found; i++) lowered += r5.found[i].task < 0;
    CHECK_MSG(distinct >= 2 && lowered == distinct, "%d distinct lowerings, %d among the results", distinct, lowered);
    for (int v = 0; v < LW_TILINGS; v++) base_free(texts[v]);
    ir_graph_free(g);
    mg_search_result_free(&r5);
}

/* mg_search_opts.on_progress: the counts it is handed and a stop by its return value */
typedef struct progress_log {
    int calls, stop_at, decreased;
    int task_calls; /* calls once the tasks run (n_tasks > 0); before them, 0 of 0 */
    int64_t first_done, last_done, n_tasks;
} progress_log;

/* Stops at the stop_at-th call once the tasks run (stop_at 0: at the first call of all). */
static int log_progress(void *arg, const mg_progress *p) {
    progress_log *l = arg;
    if (l->calls++ == 0) l->first_done = p->tasks_done;
    l->decreased |= p->tasks_done < l->last_done || p->tasks_done > p->n_tasks || p->piece || p->n_pieces;
    l->last_done = p->tasks_done, l->n_tasks = p->n_tasks;
    l->task_calls += p->n_tasks > 0;
    return l->stop_at ? l->task_calls >= l->stop_at : 1;
}

void test_search_progress_stop(void) {
    /* RMSNorm + linear at the default limits: seconds of tasks on two threads; stopped at the
     * callback's 4th call, the search ends early with stopped set, after at least that call and
     * the final one, the counts never going down */
    ir_graph *g = unit_parse(RMS);
    sr_opts o;
    sr_opts_default(&o);
    o.threads = 2;
    progress_log l = {.stop_at = 4};
    o.on_progress = log_progress, o.on_progress_arg = &l;
    mg_search_result r;
    mg_ctx ctx;
    CHECK_MSG(sr_search(g, &o, &ctx, &r) == MG_OK, "%s", ctx.msg);
    CHECK_MSG(r.stopped && r.tasks_done < r.tasks, "stopped %d, tasks %lld of %lld", r.stopped,
              (long long)r.tasks_done, (long long)r.tasks);
    CHECK_MSG(l.task_calls >= 5 && !l.decreased && l.n_tasks == r.tasks && l.last_done == r.tasks_done,
              "%d calls, decreased %d, last %lld of %lld", l.task_calls, l.decreased, (long long)l.last_done,
              (long long)l.n_tasks);
    mg_search_result_free(&r);
    ir_graph_free(g);
    /* before any task: a 500-add chain's search spends seconds saturating its e-graph; the
     * callback is called there too (0 of 0 tasks) and its stop ends the search at once */
    strbuf sb = {0};
    sb_puts(&sb, "input X : f16[4, 8]\nO = X");
    for (int i = 0; i < 500; i++) sb_puts(&sb, " + X");
    sb_puts(&sb, "\noutput O\n");
    g = unit_parse(sb.s);
    sb_free(&sb);
    progress_log l0 = {.stop_at = 0};
    o.threads = 1, o.on_progress_arg = &l0;
    double t0 = base_now_s();
    CHECK_MSG(sr_search(g, &o, &ctx, &r) == MG_OK, "%s", ctx.msg);
    double t = base_now_s() - t0;
    CHECK_MSG(l0.calls == 1 && l0.n_tasks == 0 && r.tasks_done == 0 && r.n_found == 0 && t < 1.5,
              "%d calls, %lld of %lld tasks, %d found, %.2f s", l0.calls, (long long)r.tasks_done, (long long)r.tasks,
              r.n_found, t);
    mg_search_result_free(&r);
    ir_graph_free(g);
}

/* mg_search_set and mg_optimize_set (the CLI's flags and Python's keyword arguments): each
 * name in its spellings sets its field; a bad value or an unknown name is refused by name with
 * the options unchanged. */
void test_search_set_by_name(void) {
    mg_ctx *ctx = mg_ctx_new();
    mg_optimize_opts o, before;
    mg_optimize_defaults(&o);
    CHECK(mg_optimize_set(ctx, &o, "--max-kops", "3") == MG_OK && o.search.max_kops == 3);
    CHECK(mg_optimize_set(ctx, &o, "max_bops", "20") == MG_OK && o.search.max_bops == 20);
    CHECK(mg_optimize_set(ctx, &o, "threads", "2") == MG_OK && o.search.threads == 2);
    CHECK(mg_optimize_set(ctx, &o, "time_limit", "2.5") == MG_OK && o.search.time_limit == 2.5);
    CHECK(mg_optimize_set(ctx, &o, "seed", "77") == MG_OK && o.search.seed == 77);
    CHECK(mg_optimize_set(ctx, &o, "slack", "0") == MG_OK && o.search.slack == 0);
    CHECK(mg_optimize_set(ctx, &o, "ops", "matmul,exp") == MG_OK && !strcmp(o.search.ops, "matmul,exp"));
    CHECK(mg_optimize_set(ctx, &o, "max-piece-ops", "24") == MG_OK && o.max_piece_ops == 24);
    CHECK(mg_optimize_set(ctx, &o, "max_piece_heavy", "1") == MG_OK && o.max_piece_heavy == 1);
    memcpy(&before, &o, sizeof o);
    const char *bad[][3] = {{"max_kops", "9", "max_kops takes 1 to 8, got '9'"},
                            {"--max-kernels", "x", "--max-kernels takes 0 to 8"},
                            {"threads", "2.5", "threads takes 1 to 256"},
                            {"time-limit", "0", "time-limit takes seconds > 0"},
                            {"slack", "0.5", "slack takes 0 (verify every schedule)"},
                            {"seed", "-3", "bad seed '-3'"},
                            {"max-piece-ops", "0", "max-piece-ops takes 1 to 1000"},
                            {"bogus", "1", "unknown option 'bogus'"},
                            {"a-name-far-longer-than-any-option-is", "1", "unknown option"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mg_status st = mg_optimize_set(ctx, &o, bad[i][0], bad[i][1]);
        CHECK_MSG(st == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), bad[i][2]), "%s=%s: %s", bad[i][0], bad[i][1],
                  mg_ctx_error(ctx));
    }
    CHECK(!memcmp(&o, &before, sizeof o));
    CHECK(mg_search_set(ctx, &o.search, "max-piece-ops", "3") == MG_ERR_INVALID); /* optimize's, not the search's */
    mg_ctx_free(ctx);
}
