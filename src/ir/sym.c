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
 * contract other dims, so these rules suffice. */
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

/* Whether node i of a and b (the two instances) varies: its shapes differ. Sets *bad with ctx
 * when they differ other than in dim 0 as K * P1 against K * P2. */
static int varies(const ir_graph *a, const ir_graph *b, int i, const ir_sym *s, const char *f, mg_ctx *ctx, mg_status *bad) {
    const ir_shape *x = &a->nodes[i].shape, *y = &b->nodes[i].shape;
    char l[96];
    if (!memcmp(x, y, sizeof *x)) return 0;
    const ir_node *n = &a->nodes[i];
    if (x->ndim != y->ndim) {
        *bad = ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: the rank of %s depends on dim %s", f, n->line, n->col, label(n, l, sizeof l), s->name);
        return 1;
    }
    for (int d = 1; d < x->ndim; d++)
        if (x->d[d] != y->d[d]) {
            *bad = ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: dim %s reaches dim %d of %s; only dim 0 of a tensor may follow a dim "
                           "(a batch of independent rows); a dim that is reduced or contracted (a KV length) is not "
                           "built yet (docs/tuning.md \"Reduced dims\")", f, n->line, n->col, s->name, d, label(n, l, sizeof l));
            return 1;
        }
    if (x->d[0] % P1 || y->d[0] % P2 || x->d[0] / P1 != y->d[0] / P2)
        *bad = ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: dim 0 of %s is not a multiple of dim %s", f, n->line, n->col, label(n, l, sizeof l), s->name);
    return 1;
}

/* Checks that symbolic dim k of g (parsed from text) is a batch of independent rows. */
static mg_status check_one(mg_ctx *ctx, const char *text, size_t len, const char *file, const ir_graph *g, int k) {
    const ir_sym *s = &g->syms[k];
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
    unsigned char *var = rc ? NULL : base_calloc((size_t)a->n_nodes + 1, 1);
    if (!rc && !var) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; !rc && i < a->n_nodes; i++) {
        const ir_node *n = &a->nodes[i];
        if (n->op != b->nodes[i].op) {
            rc = ctx_err(ctx, MG_ERR_SHAPE, "dim %s: the program's operators depend on its size", s->name);
            break;
        }
        int in_var = 0;
        for (int q = 0; q < n->n_in; q++) in_var |= var[n->in[q]];
        int v = varies(a, b, i, s, f, ctx, &rc);
        var[i] = (unsigned char)v;
        if (rc) break;
        if (n->op == IR_OP_KERNEL || n->op == IR_OP_SEQATTN)
            rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s:%d:%d: %s: a program of dims has no kernels or ragged attention yet (mugen lowers each size)",
                         f, n->line, n->col, label(n, l, sizeof l));
        else if (in_var && !v)
            rc = ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: %s combines the rows of dim %s (a sum, product or slice over them); a dim is a batch "
                         "of independent rows; reduced dims are not built yet (docs/tuning.md \"Reduced dims\")", f, n->line, n->col,
                         label(n, l, sizeof l), s->name);
        else if (in_var && ((n->op == IR_OP_CONCAT && n->dim == 0) || (n->op == IR_OP_SLICE && n->dim == 0) ||
                            (n->op == IR_OP_REPEAT && n->n_ints && n->ints[0] != 1)))
            rc = ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: %s %s along the rows of dim %s; a dim is a batch of independent rows (docs/tuning.md)",
                         f, n->line, n->col, label(n, l, sizeof l), n->op == IR_OP_CONCAT ? "concatenates" : n->op == IR_OP_SLICE ? "slices" : "repeats",
                         s->name);
    }
    int used = 0;
    for (int i = 0; !rc && i < a->n_nodes; i++) used |= a->nodes[i].op == IR_OP_INPUT && var[i];
    if (!rc && !used) rc = ctx_err(ctx, MG_ERR_SHAPE, "%s:%d:%d: dim %s is declared but no input's shape uses it", f, s->line, s->col, s->name);
    base_free(var), ir_graph_free(a), ir_graph_free(b);
    return rc;
}

mg_status ir_sym_check(mg_ctx *ctx, const char *text, size_t len, const char *file, const ir_graph *g) {
    if (g->n_syms && g->n_lens) {
        const ir_sym *s = &g->syms[0];
        return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s:%d:%d: a program declares dims or lengths, not both (yet)", file ? file : "<input>",
                       s->line, s->col);
    }
    mg_status rc = MG_OK;
    for (int k = 0; !rc && k < g->n_syms; k++) rc = check_one(ctx, text, len, file, g, k);
    return rc;
}
