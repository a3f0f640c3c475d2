/* Tests of src/ir: parse/print/JSON round trips, shape and parse errors, constants, the Lax
 * checker, the partitioner and the IR checker. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

void test_parse_print_roundtrip(void);
void test_json_roundtrip(void);
void test_shape_errors(void);
void test_parse_errors_caret(void);
void test_const_literals(void);
void test_lax_checker(void);
void test_partition_examples(void);
void test_partition_recompose(void);
void test_ir_check(void);
void test_docs_op_table(void);
void test_input_range(void);
void test_op_table_columns(void);

static const char *EXAMPLES[] = {"gqa_b1", "gqa_b8", "qknorm_b1", "qknorm_b8", "rmsnorm_linear_b1",
                                 "rmsnorm_linear_b8", "ntrans_b1", "ntrans_b8", "lora",
                                 "gated_mlp", "softmax_attention"};

/* Every op and attribute at least once. */
static const char *ALL_OPS =
    "# every operator\n"
    "input A : f32[2, 3, 4]\n"
    "input B : bf16[2, 4, 5]\n"
    "input C : f16[5]\n"
    "M = matmul(A, B)\n"
    "S = sum(M, dim=2, group=5) + sum(M, dim=-1)\n"
    "T = max(relu(M), dim=1) - exp(silu(C)) * sqrt(sqr(C)) / -2.5e-1\n"
    "R = reshape(repeat(C, times=[2]), shape=[2, 5])\n"
    "K = concat(R, R * 2, dim=0)\n"
    "N = mean(rmsnorm(A, dim=1), dim=2)\n"
    "P = transpose(slice(A, dim=1, start=1, len=2), perm=[2, 0, 1])\n"
    "Q = rsqrt(rmsnorm(C, dim=0, eps=1e-6))\n"
    "output S, T, K, N, P, Q\n";

static char *read_example(const char *name) {
    char path[256];
    snprintf(path, sizeof path, "examples/%s.mu", name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s (run the tests from the repository root)\n", path);
        abort();
    }
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static char *print_text(const ir_graph *g) {
    strbuf sb = {0};
    ir_print_text(g, &sb);
    return sb_take(&sb);
}

static void roundtrip_text(const char *src) {
    ir_graph *g = unit_parse(src);
    char *t1 = print_text(g);
    ir_graph *g2 = unit_parse(t1);
    char *t2 = print_text(g2);
    CHECK_MSG(ir_graph_equal(g, g2), "parse(print(g)) differs from g:\n%s", t1);
    CHECK_MSG(!strcmp(t1, t2), "print is not a fixed point:\n%s\n---\n%s", t1, t2);
    base_free(t1), base_free(t2);
    ir_graph_free(g), ir_graph_free(g2);
}

void test_parse_print_roundtrip(void) {
    for (size_t i = 0; i < sizeof EXAMPLES / sizeof *EXAMPLES; i++) {
        char *s = read_example(EXAMPLES[i]);
        roundtrip_text(s);
        free(s);
    }
    roundtrip_text(ALL_OPS);
    roundtrip_text("input X : f16[4]\nC = 3\nY = X * C + C\noutput Y, C\n");
    /* a changed graph must not compare equal */
    ir_graph *a = unit_parse("input X : f32[4]\nY = X * 2\noutput Y\n");
    ir_graph *b = unit_parse("input X : f32[4]\nY = X * 3\noutput Y\n");
    ir_graph *c = unit_parse("input X : f32[4]\nY = 2 * X\noutput Y\n");
    CHECK(!ir_graph_equal(a, b));
    CHECK(!ir_graph_equal(a, c)); /* operand order matters */
    CHECK(ir_graph_equal(a, a));
    ir_graph_free(a), ir_graph_free(b), ir_graph_free(c);
    /* sharing must match both ways */
    a = unit_parse("input X : f32[4]\nY = exp(X) + exp(X)\noutput Y\n");
    b = unit_parse("input X : f32[4]\nE = exp(X)\nY = E + E\noutput Y\n");
    CHECK(!ir_graph_equal(a, b) && !ir_graph_equal(b, a));
    ir_graph_free(a), ir_graph_free(b);
}

void test_json_roundtrip(void) {
    for (size_t i = 0; i <= sizeof EXAMPLES / sizeof *EXAMPLES; i++) {
        char *s = i < sizeof EXAMPLES / sizeof *EXAMPLES ? read_example(EXAMPLES[i]) : strdup(ALL_OPS);
        ir_graph *g = unit_parse(s), *g2 = NULL;
        mg_ctx ctx = {{0}};
        strbuf sb = {0};
        CHECK(ir_print_json(g, &ctx, &sb) == MG_OK);
        char *js = sb_take(&sb);
        CHECK_MSG(ir_parse_json(&ctx, js, strlen(js), "t.json", &g2) == MG_OK, "%s", ctx.msg);
        CHECK(g2 && ir_graph_equal(g, g2));
        if (g2) {
            char *t1 = print_text(g), *t2 = print_text(g2);
            CHECK(!strcmp(t1, t2));
            base_free(t1), base_free(t2);
        }
        base_free(js);
        ir_graph_free(g), ir_graph_free(g2);
        free(s);
    }
    /* a JSON whose recorded shape disagrees with inference is refused */
    const char *bad = "{\"format\":\"mugen-program\",\"version\":1,\"tensors\":["
                      "{\"name\":\"X\",\"op\":\"input\",\"dtype\":\"f32\",\"shape\":[2,3]},"
                      "{\"name\":\"Y\",\"op\":\"exp\",\"inputs\":[\"X\"],\"shape\":[3,2]}],"
                      "\"outputs\":[\"Y\"]}";
    mg_ctx ctx = {{0}};
    ir_graph *g = NULL;
    CHECK(ir_parse_json(&ctx, bad, strlen(bad), "b.json", &g) == MG_ERR_PARSE);
    CHECK_MSG(strstr(ctx.msg, "does not match the inferred f32[2, 3]"), "%s", ctx.msg);
    /* names must be .mu names; fields an op does not take are refused */
    const char *badname = "{\"format\":\"mugen-program\",\"tensors\":[{\"name\":\"a b\",\"op\":\"input\","
                          "\"dtype\":\"f32\",\"shape\":[2]}],\"outputs\":[\"a b\"]}";
    CHECK(ir_parse_json(&ctx, badname, strlen(badname), "b.json", &g) == MG_ERR_PARSE);
    CHECK_MSG(strstr(ctx.msg, "names are letters, digits and '_'"), "%s", ctx.msg);
    const char *extra = "{\"format\":\"mugen-program\",\"tensors\":[{\"name\":\"X\",\"op\":\"input\","
                        "\"dtype\":\"f32\",\"shape\":[2]},{\"name\":\"Y\",\"op\":\"exp\",\"inputs\":[\"X\"],"
                        "\"dim\":0}],\"outputs\":[\"Y\"]}";
    CHECK(ir_parse_json(&ctx, extra, strlen(extra), "b.json", &g) == MG_ERR_PARSE);
    CHECK_MSG(strstr(ctx.msg, "'exp' takes no field \"dim\""), "%s", ctx.msg);
}

void test_shape_errors(void) {
    static const struct {
        const char *src, *needle;
    } cases[] = {
        {"input X : f16[2, 4096]\ninput W : f16[4000, 6144]\nO = matmul(X, W)\noutput O\n",
         "matmul: inner dimensions differ (4096 vs 4000); X is f16[2, 4096], W is f16[4000, 6144]"},
        {"input X : f16[2, 3]\ninput W : f16[3]\nO = matmul(X, W)\noutput O\n",
         "matmul: operands need the same rank, at least 2; X is f16[2, 3], W is f16[3]"},
        {"input X : f16[2, 3, 4]\ninput W : f16[5, 4, 2]\nO = matmul(X, W)\noutput O\n",
         "matmul: batch dimensions differ"},
        {"input X : f16[2, 3]\ninput Y : f16[3, 2]\nO = X + Y\noutput O\n",
         "add: shapes do not broadcast; X is f16[2, 3], Y is f16[3, 2]"},
        {"input X : f16[2, 3]\ninput Y : f16[2, 4]\nO = concat(X, Y, dim=0)\noutput O\n",
         "concat: sizes differ outside the concat dim"},
        {"input X : f16[2, 3]\nO = reshape(X, shape=[4, 2])\noutput O\n",
         "reshape: the element count must not change; X is f16[2, 3]"},
        {"input X : f16[2, 3]\nO = repeat(X, times=[2])\noutput O\n",
         "repeat: times= needs one factor per dim (2), got 1"},
        {"input X : f16[2, 6]\nO = sum(X, dim=1, group=4)\noutput O\n",
         "sum: group= must divide the size of the reduced dim; X is f16[2, 6]"},
        {"input X : f16[2, 6]\nO = sum(X, dim=2)\noutput O\n", "sum: dim= is out of range"},
        {"input X : f16[2, 6]\nO = max(X, dim=-3)\noutput O\n", "max: dim= is out of range"},
        {"input X : f16[2, 3, 4]\nO = transpose(X, perm=[1, 0])\noutput O\n",
         "transpose: perm= needs one entry per dim (3), got 2; X is f16[2, 3, 4]"},
        {"input X : f16[2, 3, 4]\nO = transpose(X, perm=[1, 0, 1])\noutput O\n",
         "transpose: perm= must list each dim 0..2 once (entry 2 is 1)"},
        {"input X : f16[2, 3, 4]\nO = transpose(X, perm=[0, 3, 1])\noutput O\n",
         "transpose: perm= must list each dim 0..2 once (entry 1 is 3)"},
        {"input X : f16[2, 8]\nO = slice(X, dim=1, start=6, len=3)\noutput O\n",
         "slice: start=6, len=3 is not inside dim 1 (size 8)"},
        {"input X : f16[2, 8]\nO = slice(X, dim=1, start=-1, len=3)\noutput O\n",
         "slice: start=-1, len=3 is not inside dim 1 (size 8)"},
        {"input X : f16[2, 8]\nO = slice(X, dim=0, start=0, len=0)\noutput O\n",
         "slice: start=0, len=0 is not inside dim 0 (size 2)"},
        {"input X : f16[2, 8]\nO = slice(X, dim=2, start=0, len=1)\noutput O\n",
         "slice: dim= is out of range; X is f16[2, 8]"},
        {"input X : f16[65536, 65536]\ninput Y : f16[65536, 65536]\nO = matmul(repeat(X, times=[1, 512]), repeat(Y, times=[512, 1]))\noutput O\n",
         "repeat: result is too large"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        unit_parse_fails(cases[i].src, MG_ERR_SHAPE, cases[i].needle);
}

void test_parse_errors_caret(void) {
    const char *src = "input X : f16[2, 4]\nY = sqr(X) ++ X\noutput Y\n";
    mg_ctx ctx = {{0}};
    ir_graph *g = NULL;
    CHECK(ir_parse_text(&ctx, src, strlen(src), "t.mu", &g) == MG_ERR_PARSE);
    /* "t.mu:2:13: error: ...\n  Y = sqr(X) ++ X\n              ^" */
    CHECK_MSG(strstr(ctx.msg, "t.mu:2:13: error: expected a tensor"), "%s", ctx.msg);
    const char *l2 = strchr(ctx.msg, '\n'), *l3 = l2 ? strchr(l2 + 1, '\n') : NULL;
    CHECK(l2 && l3 && !strncmp(l2 + 1, "  Y = sqr(X) ++ X", 17));
    CHECK(l3 && strlen(l3 + 1) == 2 + 13 && l3[1 + 2 + 12] == '^');
    /* shape errors point at the operator */
    unit_parse_fails("input X : f16[2, 4]\n\nY =   X +  matmul(X, X)\noutput Y\n", MG_ERR_SHAPE,
                     "t.mu:3:12: error: matmul: inner dimensions differ");
    unit_parse_fails("input X : f16[2]\nY = Z + X\nZ = X\noutput Y\n", MG_ERR_PARSE,
                     "'Z' is used before its definition");
    unit_parse_fails("input X : f16[2]\nY = Y + X\noutput Y\n", MG_ERR_PARSE,
                     "t.mu:2:5: error: 'Y' is used in its own definition");
    unit_parse_fails("input X : f16[2]\nY = X X\noutput Y\n", MG_ERR_PARSE,
                     "t.mu:2:7: error: expected an operator or end of line, found 'X'");
    unit_parse_fails("input X : f16[2, 3,]\noutput X\n", MG_ERR_PARSE,
                     "t.mu:1:20: error: expected a dimension size after ','");
    unit_parse_fails("input X : f16[2]\nY = (X + 1\noutput Y\n", MG_ERR_PARSE,
                     "expected ')' to close the '(' opened at 2:5");
    unit_parse_fails("input X : f16[2]\nY = X * 1.2.3\noutput Y\n", MG_ERR_PARSE,
                     "t.mu:2:9: error: malformed number '1.2.3'");
    unit_parse_fails("input X : f16[2]\nX = exp(X)\noutput X\n", MG_ERR_PARSE,
                     "duplicate name 'X' (first defined at line 1)");
    unit_parse_fails("input X : f16[0]\noutput X\n", MG_ERR_PARSE, "dimension size 0 is out of range");
    unit_parse_fails("input X : f16[2]\n", MG_ERR_PARSE, "program has no outputs");
    unit_parse_fails("", MG_ERR_PARSE, "program has no outputs");
    unit_parse_fails("input X : f16[2]\nY = foo(X)\noutput Y\n", MG_ERR_PARSE, "unknown operator 'foo'");
    unit_parse_fails("input X : f16[2]\nY = sum(X, dims=0)\noutput Y\n", MG_ERR_PARSE,
                     "unknown attribute 'dims'");
    unit_parse_fails("input X : f16[2]\nY = sum(X)\noutput Y\n", MG_ERR_PARSE, "needs the attribute dim=");
    unit_parse_fails("input X : f16[2]\nY = exp(X, X)\noutput Y\n", MG_ERR_PARSE, "'exp' takes 1 operand, got 2");
    unit_parse_fails("input X : f16[2]\nY = X\noutput Y\n", MG_ERR_PARSE, "only renames");
    unit_parse_fails("input X : f16[2]\nY = exp(X\noutput Y\n", MG_ERR_PARSE,
                     "t.mu:3:1: error: expected ',' or ')' to close 'exp(' (opened at 2:5), found 'output'");
    /* the decoder's operators and sugar (issue #25) */
    unit_parse_fails("input X : f16[2]\nY = slice(X, dim=0, len=1)\noutput Y\n", MG_ERR_PARSE,
                     "t.mu:2:5: error: 'slice' needs the attribute start=");
    unit_parse_fails("input X : f16[2]\nY = transpose(X)\noutput Y\n", MG_ERR_PARSE,
                     "'transpose' needs the attribute perm=");
    unit_parse_fails("input X : f16[2]\nY = rmsnorm(X, eps=X)\noutput Y\n", MG_ERR_PARSE,
                     "t.mu:2:20: error: eps= takes a decimal number (such as 1e-5), found 'X'");
    unit_parse_fails("input X : f16[2]\nY = rsqrt(X, dim=0)\noutput Y\n", MG_ERR_PARSE,
                     "'rsqrt' takes no attribute 'dim'");
    unit_parse_fails("input X : f16[2]\nY = mean(X, eps=1)\noutput Y\n", MG_ERR_PARSE,
                     "'mean' takes no attribute 'eps'");
    unit_parse_fails("input X : f16[2]\nY = rsqrt(X, X)\noutput Y\n", MG_ERR_PARSE,
                     "'rsqrt' takes 1 operand, got 2");
}

void test_const_literals(void) {
    static const struct {
        const char *lit;
        int64_t num, den;
    } ok[] = {{"4096", 4096, 1}, {"-0.125", -125, 1000}, {"0.50", 5, 10}, {"1e-6", 1, 1000000},
              {"2.5E3", 2500, 1}, {"0", 0, 1}, {"0.000", 0, 1}, {"123456789012345678", 123456789012345678, 1},
              {"9000000000000000000", 9000000000000000000, 1}, {"0.5000000000000000000000", 5, 10}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        ir_graph *g = ir_graph_new();
        mg_ctx ctx = {{0}};
        int k = ir_add_const(g, &ctx, ok[i].lit, 1, 1);
        CHECK_MSG(k >= 0, "%s: %s", ok[i].lit, ctx.msg);
        if (k >= 0) {
            CHECK_MSG(g->nodes[k].num == ok[i].num && g->nodes[k].den == ok[i].den, "%s -> %lld/%lld",
                      ok[i].lit, (long long)g->nodes[k].num, (long long)g->nodes[k].den);
            CHECK(g->nodes[k].value == strtod(ok[i].lit, NULL));
        }
        ir_graph_free(g);
    }
    const char *bad[] = {"1e50", "12345678901234567890", "0.0000000000000000001", "1e", "--1", "1.2.3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ir_graph *g = ir_graph_new();
        CHECK_MSG(ir_add_const(g, NULL, bad[i], 1, 1) == -MG_ERR_PARSE, "%s accepted", bad[i]);
        ir_graph_free(g);
    }
}

static int lax_of(const char *src, const char *needle) {
    ir_graph *g = unit_parse(src);
    char why[512] = "";
    int r = ir_is_lax(g, why, sizeof why);
    if (needle) CHECK_MSG(strstr(why, needle), "'%s' lacks '%s'", why, needle);
    ir_graph_free(g);
    return r;
}

void test_lax_checker(void) {
    for (size_t i = 0; i < sizeof EXAMPLES / sizeof *EXAMPLES; i++) {
        char *s = read_example(EXAMPLES[i]);
        CHECK_MSG(lax_of(s, NULL) == (strcmp(EXAMPLES[i], "softmax_attention") != 0), "%s", EXAMPLES[i]);
        free(s);
    }
    CHECK(lax_of("input X : f32[4]\nY = exp(X) * silu(X) / sqrt(X)\noutput Y\n", NULL) == 1);
    CHECK(lax_of("input X : f32[4]\nY = relu(X)\noutput Y\n", "'Y' (relu) is not Lax") == 0);
    CHECK(lax_of("input X : f32[4]\nE = exp(X)\nY = exp(E + 1)\noutput Y\n",
                 "'Y' (exp) applies a second exponentiation on a path that already went through 'E'") == 0);
    CHECK(lax_of("input X : f32[4]\nY = exp(silu(X))\noutput Y\n", "second exponentiation") == 0);
    CHECK(lax_of("input X : f32[2, 2]\nY = exp(matmul(exp(X), X))\noutput Y\n", "second") == 0);
    /* two exps on parallel paths are fine */
    CHECK(lax_of("input X : f32[4]\nY = exp(X) + exp(X * 2)\noutput Y\n", NULL) == 1);
}

typedef struct parts {
    int n, part[64], lax[64];
} parts;

static parts partition_of(const char *src) {
    ir_graph *g = unit_parse(src);
    parts p = {0};
    CHECK(g->n_nodes <= 64);
    CHECK(ir_partition(g, NULL, p.part, p.lax, &p.n) == MG_OK);
    /* every op node in exactly one part; parts Lax or a single non-Lax op; inputs in none */
    for (int i = 0; i < g->n_nodes; i++) {
        int src_node = g->nodes[i].op == IR_OP_INPUT || g->nodes[i].op == IR_OP_CONST;
        CHECK(src_node ? p.part[i] == -1 : p.part[i] >= 0 && p.part[i] < p.n);
        for (int k = 0; !src_node && k < g->nodes[i].n_in; k++) /* topological numbering */
            CHECK(p.part[g->nodes[i].in[k]] <= p.part[i]);
    }
    ir_graph_free(g);
    return p;
}

void test_partition_examples(void) {
    char *s = read_example("softmax_attention");
    parts p = partition_of(s);
    CHECK(p.n == 3 && p.lax[0] && !p.lax[1] && p.lax[2]);
    free(s);
    p = partition_of("input X : f32[4]\nA = exp(X)\nB = exp(A)\noutput B\n");
    CHECK(p.n == 2 && p.lax[0] && p.lax[1]);
    p = partition_of("input X : f32[4]\nA = X * 2 + 1\nB = relu(A)\nC = B * B + A\noutput C\n");
    CHECK(p.n == 3 && p.lax[0] && !p.lax[1] && p.lax[2]);
    p = partition_of("input X : f32[4]\nA = relu(X)\nB = relu(X)\nC = A + B\noutput C\n");
    CHECK(p.n == 3 && !p.lax[0] && !p.lax[1] && p.lax[2]);
    s = read_example("gqa_b1");
    p = partition_of(s);
    CHECK(p.n == 1 && p.lax[0]);
    free(s);
}

/* Named tensor values, for running a partition's parts one after another. */
enum { MAX_ENV = 64 };
typedef struct env {
    const char *name[MAX_ENV];
    double *val[MAX_ENV];
    int n;
} env;

/* Runs one part (program text): its inputs are read from e by name, its outputs join e. */
static void run_part(char *text, env *e) {
    ir_graph *pg = unit_parse(text);
    const double *in[8];
    double *out[8];
    int ni = 0;
    for (int i = 0; i < pg->n_nodes; i++)
        if (pg->nodes[i].op == IR_OP_INPUT)
            for (int v = 0; v < e->n; v++)
                if (!strcmp(e->name[v], pg->nodes[i].name)) in[ni++] = e->val[v];
    for (int k = 0; k < pg->n_outputs; k++) {
        out[k] = malloc((size_t)ir_numel(&pg->nodes[pg->outputs[k]].shape) * sizeof(double));
        e->name[e->n] = strdup(pg->nodes[pg->outputs[k]].name);
        e->val[e->n++] = out[k];
    }
    CHECK(unit_feval(pg, 0, in, out) == MG_OK);
    ir_graph_free(pg);
}

/* Evaluating the parts one after another gives exactly what the whole program gives. */
void test_partition_recompose(void) {
    const char *src = "input Q : f32[2, 4, 3]\ninput K : f32[2, 3, 5]\ninput V : f32[2, 5, 3]\n"
                      "S = matmul(Q, K) * 0.5\nM = max(S, dim=2)\nE = exp(S - M)\n"
                      "P = E / sum(E, dim=2)\nR = relu(matmul(P, V)) + exp(exp(Q) * 0.1)\n"
                      "output R, P\n";
    ir_graph *g = unit_parse(src);
    mg_ctx ctx = {{0}};
    rng r = {3};
    env e = {.n = 0};
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == IR_OP_INPUT) {
            int64_t n = ir_numel(&g->nodes[i].shape);
            e.name[e.n] = g->nodes[i].name;
            e.val[e.n] = malloc((size_t)n * sizeof(double));
            for (int64_t t = 0; t < n; t++) e.val[e.n][t] = rng_uniform(&r) * 2 - 1;
            e.n++;
        }
    double *whole[2];
    for (int k = 0; k < 2; k++) whole[k] = malloc((size_t)ir_numel(&g->nodes[g->outputs[k]].shape) * sizeof(double));
    CHECK(unit_feval(g, 0, (const double *const *)e.val, whole) == MG_OK);
    strbuf sb = {0};
    CHECK(ir_print_partition(g, &ctx, &sb) == MG_OK);
    char *text = sb_take(&sb), *cur = text;
    int n_parts = 0;
    while (cur && *cur) { /* parse and run each "# part" chunk in order */
        char *next = strstr(cur + 1, "\n# part");
        if (next) *next = 0;
        run_part(cur, &e);
        n_parts++;
        cur = next ? next + 1 : NULL;
    }
    /* S | max | softmax and matmul(P, V) | relu | exp(Q) * 0.1 | exp(...) + relu(...) */
    CHECK(n_parts == 6);
    for (int k = 0; k < 2; k++) {
        const char *name = g->nodes[g->outputs[k]].name;
        int v = e.n - 1;
        while (v >= 0 && strcmp(e.name[v], name)) v--;
        CHECK(v >= 0);
        int64_t n = ir_numel(&g->nodes[g->outputs[k]].shape), bad = 0;
        for (int64_t t = 0; v >= 0 && t < n; t++) bad += e.val[v][t] != whole[k][t];
        CHECK_MSG(bad == 0, "output %s: %lld elements differ", name, (long long)bad);
    }
    base_free(text);
    for (int k = 0; k < 2; k++) free(whole[k]);
    for (int v = 0; v < e.n; v++) {
        free(e.val[v]);
        if (v >= 3) free((char *)e.name[v]);
    }
    ir_graph_free(g);
}

void test_ir_check(void) {
    ir_graph *g = unit_parse("input X : f32[2, 3]\nY = exp(X)\nZ = sum(Y, dim=1)\noutput Z\n");
    mg_ctx ctx = {{0}};
    CHECK(ir_check(g, &ctx) == MG_OK);
    g->nodes[2].in[0] = 2; /* reads itself */
    CHECK(ir_check(g, &ctx) != MG_OK && strstr(ctx.msg, "reads node 2"));
    g->nodes[2].in[0] = 1;
    g->nodes[2].shape.d[1] = 3; /* stale shape */
    CHECK(ir_check(g, &ctx) != MG_OK && strstr(ctx.msg, "stale shape"));
    ir_graph_free(g);
}

/* The columns of ops.def that other stages read in place of their own lists: the search's
 * operators in the order it tries and lists them, the planner's recompute costs, the emitted
 * spelling, commutativity and attribute letters, pinned to what those lists said. */
void test_op_table_columns(void) {
    char buf[256];
    CHECK(!strcmp(ir_search_op_names(buf, sizeof buf),
                  "exp, sqr, sqrt, silu, add, sub, mul, div, matmul, sum, concat, rmsnorm"));
    CHECK(!strcmp(ir_search_op_names(buf, 12), "exp, sqr, s")); /* cut, still terminated */
    for (int op = 0; op < IR_OP_COUNT; op++) {
        const ir_op_info *o = &ir_ops[op];
        int ew = o->kind == IR_KIND_UNARY || o->kind == IR_KIND_BINARY;
        CHECK_MSG(!ew || o->cost == (op == IR_OP_EXP || op == IR_OP_SILU || op == IR_OP_SQRT ? 4 : 1),
                  "%s: cost %d", o->name, o->cost);
        CHECK_MSG(o->commutative == (op == IR_OP_ADD || op == IR_OP_MUL), "%s", o->name);
        CHECK_MSG(ew == (o->cfn != NULL), "%s: cfn", o->name);
        CHECK_MSG(ir_op_infix((ir_op)op) == (op == IR_OP_ADD || op == IR_OP_SUB || op == IR_OP_MUL),
                  "%s: infix", o->name);
        for (const char *c = o->attrs; *c; c++) /* letters the parser's ATTR table knows */
            CHECK_MSG(strchr("dgstifoDGSTIFOrlhRLHpbnePBNE", *c), "%s: attribute letter '%c'", o->name, *c);
    }
    CHECK(!strcmp(ir_ops[IR_OP_EXP].cfn, "mg_exp") && !strcmp(ir_ops[IR_OP_SQRT].cfn, "sqrtf") &&
          !strcmp(ir_ops[IR_OP_DIV].cfn, "mg_div") && !strcmp(ir_ops[IR_OP_RELU].cfn, "mg_relu"));
    CHECK(ir_op_attr(IR_OP_SUM, 'd') == 2 && ir_op_attr(IR_OP_SUM, 'g') == 1 &&
          ir_op_attr(IR_OP_SUM, 's') == 0 && ir_op_attr(IR_OP_KERNEL, 'r') == 2 &&
          ir_op_attr(IR_OP_RMSNORM, 'd') == 1 && ir_op_attr(IR_OP_ADD, 'd') == 0 &&
          ir_op_attr(IR_OP_RMSNORM, 'e') == 1 && ir_op_attr(IR_OP_TRANSPOSE, 'p') == 2 &&
          ir_op_attr(IR_OP_SLICE, 'b') == 2 && ir_op_attr(IR_OP_SLICE, 'n') == 2);
    /* the compound is never a node, and sits one past the primitives (the search's rank) */
    CHECK(ir_ops[IR_OP_RMSNORM].kind == IR_KIND_COMPOUND && ir_ops[IR_OP_RMSNORM].levels == 0 &&
          IR_OP_RMSNORM == IR_OP_COUNT - 1);
}

/* docs/ir.md has a row for every operator of ops.def. */
void test_docs_op_table(void) {
    FILE *f = fopen("docs/ir.md", "rb");
    CHECK(f != NULL);
    if (!f) return;
    static char doc[1 << 17];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    doc[n] = 0;
    fclose(f);
    for (int k = 0; k < IR_OP_COUNT; k++) {
        char row[64];
        snprintf(row, sizeof row, "| `%s` |", ir_ops[k].name);
        CHECK_MSG(strstr(doc, row), "docs/ir.md has no row for '%s'", ir_ops[k].name);
    }
}

/* An input's range= (its random test values' half-width, ir_input_range): parsed, printed
 * back as the same double, kept through JSON, compared by ir_graph_equal, reported by
 * mg_program_input (1 without it), copied into a partition's pieces; bad values point at
 * the number. */
void test_input_range(void) {
    const char *src = "input X : f16[2, 8]\ninput W : f16[8, 4] range=0.0220970869120796\nY = matmul(X, W)\noutput Y\n";
    roundtrip_text(src);
    ir_graph *g = unit_parse(src), *g2 = NULL, *h = unit_parse("input X : f16[2, 8]\ninput W : f16[8, 4]\nY = matmul(X, W)\noutput Y\n");
    char *t = print_text(g);
    CHECK_MSG(strstr(t, "input W : f16[8, 4] range=0.0220970869120796\n") && strstr(t, "input X : f16[2, 8]\n"), "%s", t);
    CHECK(ir_input_range(&g->nodes[0]) == 1 && ir_input_range(&g->nodes[1]) == 0.0220970869120796);
    CHECK(!ir_graph_equal(g, h)); /* the test inputs differ */
    mg_ctx ctx = {{0}};
    strbuf sb = {0};
    CHECK(ir_print_json(g, &ctx, &sb) == MG_OK);
    char *js = sb_take(&sb);
    CHECK_MSG(ir_parse_json(&ctx, js, strlen(js), "t.json", &g2) == MG_OK, "%s", ctx.msg);
    CHECK(g2 && ir_graph_equal(g, g2) && ir_input_range(&g2->nodes[1]) == 0.0220970869120796);
    base_free(js), base_free(t), ir_graph_free(g2), ir_graph_free(h);
    mg_program *p = NULL;
    mg_tensor_desc d = {0};
    CHECK(mg_program_parse(&ctx, src, strlen(src), "t.mu", &p) == MG_OK);
    CHECK(p && mg_program_input(p, 1, &d) == MG_OK && d.range == 0.0220970869120796);
    CHECK(p && mg_program_input(p, 0, &d) == MG_OK && d.range == 1);
    CHECK(p && mg_program_output(p, 0, &d) == MG_OK && d.range == 0);
    mg_program_free(p);
    /* a partition piece reading program input W keeps its range */
    ir_graph *pc = unit_parse("input X : f16[2, 8]\ninput W : f16[8, 4] range=0.5\nY = matmul(X, W)\nZ = exp(Y - max(Y, dim=1))\noutput Z\n");
    strbuf ps = {0};
    CHECK(pc && ir_print_partition(pc, &ctx, &ps) == MG_OK && ps.s && strstr(ps.s, "input W : f16[8, 4] range=0.5\n"));
    sb_free(&ps), ir_graph_free(pc), ir_graph_free(g);
    unit_parse_fails("input X : f16[2] range=0\noutput X\n", MG_ERR_PARSE, "t.mu:1:24: error: range= must be positive");
    unit_parse_fails("input X : f16[2] range=-1\noutput X\n", MG_ERR_PARSE, "t.mu:1:24: error: range= takes a positive decimal");
    unit_parse_fails("input X : f16[2] range 2\noutput X\n", MG_ERR_PARSE, "t.mu:1:24: error: expected '=' after range");
    unit_parse_fails("input X : f16[2] range=1e31\noutput X\n", MG_ERR_PARSE, "at most 1e30");
    const char *badj = "{\"format\":\"mugen-program\",\"tensors\":[{\"name\":\"X\",\"op\":\"input\","
                       "\"dtype\":\"f32\",\"shape\":[2],\"range\":-2}],\"outputs\":[\"X\"]}";
    CHECK(ir_parse_json(&ctx, badj, strlen(badj), "b.json", &g2) == MG_ERR_PARSE && strstr(ctx.msg, "\"range\""));
}
