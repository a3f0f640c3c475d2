/* ir/sym: symbolic dims (issue #29 item 3, docs/tuning.md "Symbolic dims"). A program declares
 * `dim B [LO, HI]` and writes B (or B * K) in its shapes; each call gives B. mugen compiles a
 * program of symbolic dims at a few sizes (capacities, ir_sym_capacity) and runs a call of B
 * rows on the variant of the smallest capacity that holds them, the rows past B computed on
 * whatever they hold and ignored. That is exact only when B is a batch of independent rows:
 * the first B rows of every tensor depend on the first B rows of the inputs alone.
 *
 * ir_sym_check proves that without asking the user: the program is parsed at two sizes of B no
 * other dim has (two primes, P1 and P2), and every tensor is compared. A tensor whose shape
 * differs may differ only in dim 0, as K * B in both (B's rows, K rows each, outermost); an
 * operator with such an operand must give such a result (no sum, product or slice over B's
 * rows loses it), and may not concatenate, slice or repeat along it. Row-major reshapes keep
 * each row's elements together, elementwise operators and broadcasts act per row, and products
 * contract other dims, so these rules suffice.
 *
 * A dim that breaks those rules may still be a *reduced* dim (a KV length: docs/tuning.md
 * "Reduced dims"): it may sit in any dim of a tensor and be summed or contracted. A variant for
 * capacity C then runs a call at L <= C with L a kernel parameter: loads past L read 0, and
 * every elementwise value past L is 0 (codegen/mask.c), so each sum and product over the dim
 * adds zeros past L, whatever the buffers hold there. reduced_rule keeps the operators for
 * which that is exact. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

enum { P1 = 1009, P2 = 1013 }; /* primes no dimension of a real program is likely to share */

/* node i's label for messages: its name, else its operator */
static const char *label(const ir_node *n, char *buf, size_t len) {
    if (n->name) snprintf(buf, len, "'%s'", n->name);
    else snprintf(buf, len, "a %s", ir_ops[n->op].name);
    return buf;
}

/* Which dims of node i differ between a and b (the two instances), as a bit mask. */
static unsigned vary_mask(const ir_graph *a, const ir_graph *b, int i) {
    const ir_shape *x = &a->nodes[i].shape, *y = &b->nodes[i].shape;
    unsigned m = 0;
    for (int d = 0; d < x->ndim && d < y->ndim; d++) m |= (unsigned)(x->d[d] != y->d[d]) << d;
    return m;
}

/* The row rules: node i of a and b varies at most in dim 0, as K * P1 against K * P2, and
 * keeps its operands' rows apart. 0, or a status with the message in ctx. */
static mg_status row_rule(const ir_graph *a, const ir_graph *b, int i, const unsigned *vm, const ir_sym *s, const char *f,
                          mg_ctx *ctx) {
    const ir_node *n = &a->nodes[i];
    const ir_shape *x = &n->shape, *y = &b->nodes[i].shape;
    char l[96];
    if (vm[i] & ~1u) {
        int d = 1;
        while (!(vm[i] >> d & 1)) d++;
        return ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: dim %s reaches dim %d of %s; only dim 0 of a tensor may follow a batch dim", f,
                       n->line, n->col, s->name, d, label(n, l, sizeof l));
    }
    if (vm[i] && (x->d[0] % P1 || y->d[0] % P2 || x->d[0] / P1 != y->d[0] / P2))
        return ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: dim 0 of %s is not a multiple of dim %s", f, n->line, n->col, label(n, l, sizeof l), s->name);
    int in_var = 0;
    for (int q = 0; q < n->n_in; q++) in_var |= vm[n->in[q]] != 0;
    if (in_var && !vm[i])
        return ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: %s combines the rows of dim %s (a sum, product or slice over them)", f, n->line,
                       n->col, label(n, l, sizeof l), s->name);
    if (in_var && ((n->op == IR_OP_CONCAT && n->dim == 0) || (n->op == IR_OP_SLICE && n->dim == 0) ||
                   (n->op == IR_OP_REPEAT && n->n_ints && n->ints[0] != 1)))
        return ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: %s %s along the rows of dim %s", f, n->line, n->col, label(n, l, sizeof l),
                       n->op == IR_OP_CONCAT ? "concatenates" : n->op == IR_OP_SLICE ? "slices" : "repeats", s->name);
    return MG_OK;
}

/* The reduced rules (docs/tuning.md "Reduced dims"): a dim that varies is the dim itself (P1
 * against P2, no multiple), and an operator over it may be elementwise, a product (the dim
 * free or contracted), a transpose, a sum or a max over all of it, or any operator along
 * another dim; no reshape of a tensor over it, no concat, slice or repeat along it. */
static mg_status reduced_rule(const ir_graph *a, const ir_graph *b, int i, const unsigned *vm, const ir_sym *s, const char *f,
                              mg_ctx *ctx) {
    const ir_node *n = &a->nodes[i];
    const ir_shape *x = &n->shape, *y = &b->nodes[i].shape;
    char l[96];
    for (int d = 0; d < x->ndim; d++)
        if ((vm[i] >> d & 1) && (x->d[d] != P1 || y->d[d] != P2))
            return ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: dim %d of %s is a multiple of dim %s, not the dim itself; a reduced dim (summed or "
                           "contracted) is a dim of its own (docs/tuning.md \"Reduced dims\")", f, n->line, n->col, d, label(n, l, sizeof l), s->name);
    if (n->op == IR_OP_CONST && n->value != b->nodes[i].value) /* a mean's divisor: the capacity's, not the call's */
        return ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: %s is a number that depends on dim %s (a mean over it); a variant runs every "
                       "length up to its capacity, so its numbers may not depend on the length (docs/tuning.md \"Reduced dims\")",
                       f, n->line, n->col, label(n, l, sizeof l), s->name);
    unsigned in = n->n_in ? vm[n->in[0]] : 0;
    if (!in && !(n->n_in > 1 && vm[n->in[1]])) return MG_OK;
    const char *what = NULL;
    int along = n->dim >= 0 && n->dim < IR_MAX_DIMS && (in >> n->dim & 1);
    if ((n->op == IR_OP_SUM || n->op == IR_OP_MAX) && along && n->group != a->nodes[n->in[0]].shape.d[n->dim])
        what = n->op == IR_OP_SUM ? "sums in groups along" : "takes a max in groups along";
    else if (n->op == IR_OP_RESHAPE) what = "reshapes a tensor over";
    else if ((n->op == IR_OP_CONCAT || n->op == IR_OP_SLICE) && (along || (n->n_in > 1 && (vm[n->in[1]] >> n->dim & 1))))
        what = n->op == IR_OP_CONCAT ? "concatenates along" : "slices along";
    else if (n->op == IR_OP_REPEAT)
        for (int d = 0; d < n->n_ints; d++)
            if ((in >> d & 1) && n->ints[d] != 1) what = "repeats along";
    if (n->op == IR_OP_RMSNORM && (in >> (x->ndim - 1) & 1)) what = "normalises over";
    if (what)
        return ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: %s %s dim %s; a reduced dim (a KV length) may be used elementwise, contracted, "
                       "transposed and summed whole (docs/tuning.md \"Reduced dims\")", f, n->line, n->col, label(n, l, sizeof l), what, s->name);
    return MG_OK;
}

/* Classifies symbolic dim k of g (parsed from text): a batch of rows if every node keeps the
 * row rules, else a reduced dim if every node keeps the reduced rules (g->syms[k].reduced);
 * else the first node that breaks the reduced rules (or, where the dim reaches dim 0 alone,
 * the row rules). */
static mg_status check_one(mg_ctx *ctx, const char *text, size_t len, const char *file, ir_graph *g, int k) {
    ir_sym *s = &g->syms[k];
    const char *f = file ? file : "<input>";
    int64_t val[IR_MAX_SYMS];
    for (int j = 0; j < g->n_syms; j++) val[j] = g->syms[j].val;
    ir_graph *a = NULL, *b = NULL;
    mg_ctx pc = {{0}};
    val[k] = P1;
    mg_status rc = ir_parse_text_at(&pc, text, len, file, val, g->n_syms, 1, &a);
    val[k] = P2;
    if (!rc) rc = ir_parse_text_at(&pc, text, len, file, val, g->n_syms, 1, &b);
    if (rc) {
        rc = ctx_err(ctx, MG_ERR_SHAPE, "dim %s [%" PRId64 ", %" PRId64 "]: the program is well-formed only at some sizes of %s; at %d:\n%s",
                     s->name, s->lo, s->hi, s->name, a ? P2 : P1, pc.msg);
    } else if (a->n_nodes != b->n_nodes) {
        rc = ctx_err(ctx, MG_ERR_SHAPE, "dim %s: the program's operators depend on its size", s->name);
    }
    char l[96];
    unsigned *vm = rc ? NULL : base_calloc((size_t)a->n_nodes + 1, sizeof *vm);
    if (!rc && !vm) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    unsigned all = 0;
    for (int i = 0; !rc && i < a->n_nodes; i++) {
        const ir_node *n = &a->nodes[i];
        if (n->op != b->nodes[i].op) rc = ctx_err(ctx, MG_ERR_SHAPE, "dim %s: the program's operators depend on its size", s->name);
        else if (n->op == IR_OP_KERNEL || n->op == IR_OP_SEQATTN)
            rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s:%d:%d: %s: a program of dims has no kernels or ragged attention yet (mugen lowers each size)",
                         f, n->line, n->col, label(n, l, sizeof l));
        else if (n->shape.ndim != b->nodes[i].shape.ndim)
            rc = ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: the rank of %s depends on dim %s", f, n->line, n->col, label(n, l, sizeof l), s->name);
        else vm[i] = vary_mask(a, b, i), all |= vm[i];
    }
    int used = 0;
    for (int i = 0; !rc && i < a->n_nodes; i++) used |= a->nodes[i].op == IR_OP_INPUT && vm[i];
    if (!rc && !used) rc = ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: dim %s is declared but no input's shape uses it", f, s->line, s->col, s->name);
    /* rows first: the cheaper variants (run-time grids); then reduced */
    mg_ctx rowc = {{0}};
    mg_status rr = MG_OK;
    for (int i = 0; !rc && !rr && i < a->n_nodes; i++) rr = row_rule(a, b, i, vm, s, f, &rowc);
    if (!rc && rr) {
        for (int i = 0; !rc && i < a->n_nodes; i++) rc = reduced_rule(a, b, i, vm, s, f, ctx);
        if (!rc && g->n_syms > 1)
            rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s:%d:%d: dim %s is a reduced dim (a KV length); a program of a reduced dim declares no "
                         "other dim (yet)", f, s->line, s->col, s->name);
        if (rc && all == 1) rc = ctx_err(ctx, rr, "%s", rowc.msg); /* dim 0 alone: the row rule broken is the message */
        s->reduced = !rc;
    }
    base_free(vm), ir_graph_free(a), ir_graph_free(b);
    return rc;
}

mg_status ir_sym_check(mg_ctx *ctx, const char *text, size_t len, const char *file, ir_graph *g) {
    if (g->n_syms && g->n_lens) {
        const ir_sym *s = &g->syms[0];
        return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s:%d:%d: a program declares dims or lengths, not both (yet)", file ? file : "<input>",
                       s->line, s->col);
    }
    mg_status rc = MG_OK;
    for (int k = 0; !rc && k < g->n_syms; k++) rc = check_one(ctx, text, len, file, g, k);
    return rc;
}
