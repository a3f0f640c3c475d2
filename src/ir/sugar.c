/* ir/sugar: the parser's graph calls and its sugar. rmsnorm (with an optional eps), mean and
 * rsqrt are written as one call and expand at once into primitives (docs/ir.md), so every
 * later stage, the Lax checker and both evaluators included, sees only rows of ops.def.
 * parse.c calls in here; errors unwind through lex_fail like the rest of the front end. */
#include <inttypes.h>
#include <stdio.h>

#include "parse.h"

int parse_add_node(parser *p, const token *at, ir_node *n) {
    n->line = at->line, n->col = at->col;
    int i = ir_add_node(p->g, p->ctx, n);
    if (i < 0) lex_fail_ctx(p, at, (mg_status)-i);
    return i;
}

int parse_add_binary(parser *p, const token *at, ir_op op, int a, int b) {
    ir_node n = {.op = op, .n_in = 2, .in = {a, b}};
    return parse_add_node(p, at, &n);
}

int parse_add_const(parser *p, const token *at, const char *lit) {
    int i = ir_add_const(p->g, p->ctx, lit, at->line, at->col);
    if (i < 0) lex_fail_ctx(p, at, (mg_status)-i);
    return i;
}

parse_sugar_kind parse_sugar_of(const token *fn) {
    if (is_word(fn, "mean")) return SG_MEAN;
    if (is_word(fn, "rsqrt")) return SG_RSQRT;
    if (is_word(fn, ir_ops[IR_OP_RMSNORM].name)) return SG_RMSNORM;
    return SG_NONE;
}

const char *parse_sugar_attrs(parse_sugar_kind k) {
    return k == SG_MEAN ? "d" : k == SG_RMSNORM ? ir_ops[IR_OP_RMSNORM].attrs : "";
}

/* The literal of an eps= token (a decimal number, kept exact) into lit (n bytes). */
static void eps_literal(parser *p, const token *eps, char *lit, size_t n) {
    if (eps->n >= n) lex_fail(p, eps, "number is too long");
    memcpy(lit, eps->s, eps->n), lit[eps->n] = 0;
}

/* rmsnorm(X, dim=d[, eps=c]) = X / sqrt(sum(sqr(X), dim=d) / n [+ c]); mean(X, dim=d) =
 * sum / n; rsqrt(X) = 1 / sqrt(X). dim defaults to the last one and may be negative. n, the
 * size of the reduced dim, becomes a decimal constant, so both evaluators divide by exactly
 * that value; so does c, whose exact decimal the field evaluator reads as num / 10^k like
 * every constant. Every node of the expansion is positioned at the call, so an error inside
 * it points there. */
int parse_sugar(parser *p, const token *fn, parse_sugar_kind k, int x, const int64_t *dim,
                const token *eps) {
    if (k == SG_RSQRT) {
        ir_node q = {.op = IR_OP_SQRT, .n_in = 1, .in = {x}};
        return parse_add_binary(p, fn, IR_OP_DIV, parse_add_const(p, fn, "1"),
                                parse_add_node(p, fn, &q));
    }
    const ir_shape *sh = &p->g->nodes[x].shape;
    int64_t d = dim ? *dim : -1;
    if (d < 0) d += sh->ndim;
    if (d < 0 || d >= sh->ndim)
        lex_fail(p, fn, "'%.*s': dim=%" PRId64 " is out of range for a rank-%d tensor", (int)fn->n,
                 fn->s, d, sh->ndim);
    char lit[96];
    snprintf(lit, sizeof lit, "%" PRId64, sh->d[d]);
    ir_node s = {.op = IR_OP_SQR, .n_in = 1, .in = {x}};
    int v = k == SG_RMSNORM ? parse_add_node(p, fn, &s) : x;
    ir_node r = {.op = IR_OP_SUM, .n_in = 1, .in = {v}, .dim = (int)d};
    int m = parse_add_binary(p, fn, IR_OP_DIV, parse_add_node(p, fn, &r),
                             parse_add_const(p, fn, lit));
    if (k != SG_RMSNORM) return m;
    if (eps) {
        eps_literal(p, eps, lit, sizeof lit);
        m = parse_add_binary(p, fn, IR_OP_ADD, m, parse_add_const(p, eps, lit));
    }
    ir_node q = {.op = IR_OP_SQRT, .n_in = 1, .in = {m}};
    return parse_add_binary(p, fn, IR_OP_DIV, x, parse_add_node(p, fn, &q));
}
