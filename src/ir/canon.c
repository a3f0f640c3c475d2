/* canon: a program's canonical form up to renaming, and renaming a program's interface.
 *
 * The search cache (src/search/scache.c, docs/search.md "The search cache") keys a Lax piece
 * by ir_canon's text: the same for two programs that differ only in tensor names and in the
 * order of independent statements (the same layer sixteen times), different for any change
 * of an operator, edge, shape, dtype or constant. ir_rename_io then carries a μGraph found
 * for one such program over to another by substituting the names of its inputs and outputs.
 */
#include <stdio.h>
#include <string.h>

#include "canon.h"

/* The canonical order: a post-order depth-first walk from the outputs in declared order,
 * each node's operands in operand order (an explicit stack: programs may be deep chains).
 * Nodes no output reads come after: unused inputs in declared order, then the rest walked
 * from the last node back. Fills order[0..n) and pos[node] = its place; returns n. */
static int canon_order(const ir_graph *g, int *order, int *pos, int *stack, int *next) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) pos[i] = -1, next[i] = -1; /* next -1: not reached */
    for (int pass = 0; pass < 3; pass++) {
        int count = pass == 0 ? g->n_outputs : g->n_nodes;
        for (int r = 0; r < count; r++) {
            int root = pass == 0 ? g->outputs[r] : pass == 1 ? r : g->n_nodes - 1 - r;
            if (next[root] >= 0 || (pass == 1 && g->nodes[root].op != IR_OP_INPUT)) continue;
            int sp = 0;
            stack[sp++] = root, next[root] = 0;
            while (sp > 0) {
                int v = stack[sp - 1];
                if (next[v] < g->nodes[v].n_in) { /* the next operand, if not reached yet */
                    int u = g->nodes[v].in[next[v]++];
                    if (next[u] < 0) stack[sp++] = u, next[u] = 0;
                    continue;
                }
                sp--; /* every operand placed: v's turn */
                pos[v] = n, order[n++] = v;
            }
        }
    }
    return n;
}

/* One node's canonical statement: its place, op, dtype and shape, operands by place, and
 * the attributes that give it meaning (constants exactly: fraction and the double's bits). */
static void canon_node(const ir_graph *g, int v, const int *pos, strbuf *sb) {
    const ir_node *n = &g->nodes[v];
    char sh[128];
    sb_printf(sb, "%d %s %s", pos[v], ir_ops[n->op].name, ir_shape_str(n->dtype, &n->shape, sh, sizeof sh));
    for (int k = 0; k < n->n_in; k++) sb_printf(sb, " %%%d", pos[n->in[k]]);
    if (n->op == IR_OP_CONST) sb_printf(sb, " =%lld/%lld %a", (long long)n->num, (long long)n->den, n->value);
    else if (n->op != IR_OP_INPUT) sb_printf(sb, " dim=%d group=%lld", n->dim, (long long)n->group);
    for (int k = 0; k < n->n_ints; k++) sb_printf(sb, "%s%lld", k ? "," : " ints=", (long long)n->ints[k]);
    sb_puts(sb, "\n");
}

/* The interface: each input's canonical name ("x" and its rank among the inputs in
 * canonical order) and each output's ("y" and its declared position; an output that is an
 * input keeps the input's name). */
static mg_status canon_names(const ir_graph *g, const int *order, int n, ir_canon *c, mg_ctx *ctx) {
    int n_in = 0;
    for (int i = 0; i < g->n_nodes; i++) n_in += g->nodes[i].op == IR_OP_INPUT;
    c->n = 0;
    c->real = arena_alloc(&c->mem, sizeof *c->real * (size_t)(n_in + g->n_outputs + 1));
    c->canon = arena_alloc(&c->mem, sizeof *c->canon * (size_t)(n_in + g->n_outputs + 1));
    if (!c->real || !c->canon) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    char buf[32];
    for (int k = 0, seen = 0; k < n; k++) {
        const ir_node *nd = &g->nodes[order[k]];
        if (nd->op != IR_OP_INPUT) continue;
        snprintf(buf, sizeof buf, "x%d", seen++);
        c->real[c->n] = nd->name, c->canon[c->n] = arena_strdup(&c->mem, buf);
        if (!c->canon[c->n++]) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    for (int j = 0; j < g->n_outputs; j++) {
        const ir_node *nd = &g->nodes[g->outputs[j]];
        if (nd->op == IR_OP_INPUT) continue;
        snprintf(buf, sizeof buf, "y%d", j);
        c->real[c->n] = nd->name ? nd->name : "", c->canon[c->n] = arena_strdup(&c->mem, buf);
        if (!c->canon[c->n++]) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    return MG_OK;
}

mg_status ir_canon_new(const ir_graph *g, mg_ctx *ctx, ir_canon *c) {
    memset(c, 0, sizeof *c);
    arena_init(&c->mem);
    for (int i = 0; i < g->n_nodes; i++) {
        ir_kind kind = ir_ops[g->nodes[i].op].kind;
        if (g->is_block || kind == IR_KIND_GRAPH || kind == IR_KIND_BLOCK)
            return ctx_err(ctx, MG_ERR_UNSUPPORTED, "a canonical form is for kernel graphs of "
                           "pre-defined operators; node %d is a %s", i, ir_ops[g->nodes[i].op].name);
    }
    size_t nb = sizeof(int) * (size_t)(g->n_nodes + 1);
    int *order = base_alloc(nb), *pos = base_alloc(nb), *stack = base_alloc(nb), *next = base_alloc(nb);
    mg_status rc = MG_OK;
    if (!order || !pos || !stack || !next) {
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        goto done;
    }
    int n = canon_order(g, order, pos, stack, next);
    MG_ASSERT(n == g->n_nodes);
    strbuf sb = {0};
    sb_printf(&sb, "program %d nodes, %d outputs\n", g->n_nodes, g->n_outputs);
    for (int k = 0; k < n; k++) canon_node(g, order[k], pos, &sb);
    sb_puts(&sb, "outputs");
    for (int j = 0; j < g->n_outputs; j++) sb_printf(&sb, " %%%d", pos[g->outputs[j]]);
    sb_puts(&sb, "\n");
    if (sb.oom) {
        sb_free(&sb);
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        goto done;
    }
    c->text = sb_take(&sb);
    rc = canon_names(g, order, n, c, ctx);
done:
    base_free(order), base_free(pos), base_free(stack), base_free(next);
    if (rc) ir_canon_free(c);
    return rc;
}

void ir_canon_free(ir_canon *c) {
    if (!c) return;
    base_free(c->text);
    arena_free(&c->mem);
    memset(c, 0, sizeof *c);
}

/* Is name taken in m, or by a node of g other than `self`? */
static int name_taken(const strmap *m, const ir_graph *g, const char *name, int self) {
    int i = ir_find(g, name);
    return strmap_get(m, name) >= 0 || (i >= 0 && i != self);
}

/* A fresh name: name with '_' appended until neither taken (m) nor used in g by another
 * node. In g's arena; NULL if out of memory. */
static const char *fresh_name(ir_graph *g, const strmap *m, const char *name, int self) {
    size_t len = strlen(name);
    char *buf = base_alloc(len + 64);
    if (!buf) return NULL;
    memcpy(buf, name, len + 1);
    while (name_taken(m, g, buf, self) && len < strlen(name) + 62) buf[len++] = '_', buf[len] = 0;
    const char *r = arena_strdup(&g->mem, buf);
    base_free(buf);
    return r;
}

/* Rebuilds g->names from the nodes' names. 0, -1 if out of memory. */
static int rebuild_names(ir_graph *g) {
    strmap_free(&g->names);
    memset(&g->names, 0, sizeof g->names);
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].name && strmap_put(&g->names, g->nodes[i].name, i)) return -1;
    return 0;
}

/* Each graph-defined kernel's inputs take its operands' (new) names (a block graph's own
 * tensors are another scope: `t0 = iter(t0)` is a block tensor t0 reading kernel input t0,
 * as the printer writes it). 0, -1 if out of memory. */
static int follow_kernels(ir_graph *g) {
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        if (n->op != IR_OP_KERNEL || n->index != 0 || !n->body) continue;
        for (int k = 0; k < n->n_in && k < n->body->n_kin; k++) {
            const char *on = g->nodes[n->in[k]].name;
            if (!on) continue;
            if (!(n->body->kin_name[k] = arena_strdup(&n->body->mem, on))) return -1;
        }
    }
    return 0;
}

/* Sets the new names: the renamed tensors, then fresh names for the others that clash. */
static mg_status set_names(ir_graph *g, const int *target, const char *const *to, strmap *taken,
                           mg_ctx *ctx) {
    for (int i = 0; i < g->n_nodes; i++)
        if (target[i] >= 0 && !(g->nodes[i].name = arena_strdup(&g->mem, to[target[i]])))
            return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        if (target[i] >= 0 || !n->name || strmap_get(taken, n->name) < 0) continue;
        if (!(n->name = fresh_name(g, taken, n->name, i)) || strmap_put(taken, n->name, -2))
            return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    if (rebuild_names(g) || follow_kernels(g)) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    return MG_OK;
}

mg_status ir_rename_io(ir_graph *g, const char *const *from, const char *const *to, int n,
                       mg_ctx *ctx) {
    int *target = base_alloc(sizeof *target * (size_t)(g->n_nodes + 1));
    strmap taken = {0};
    mg_status rc = MG_OK;
    if (!target) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) target[i] = -1;
    for (int k = 0; k < n && !rc; k++) {
        int i = ir_find(g, from[k]);
        if (i < 0) continue; /* a μGraph need not declare an input it does not read */
        if (strmap_get(&taken, to[k]) >= 0)
            rc = ctx_err(ctx, MG_ERR_INVALID, "renaming: two tensors would be called '%s'", to[k]);
        else if (strmap_put(&taken, to[k], k)) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        else target[i] = k;
    }
    if (!rc) rc = set_names(g, target, to, &taken, ctx);
    strmap_free(&taken);
    base_free(target);
    return rc;
}

mg_status ir_rename_text(const char *text, const char *const *from, const char *const *to, int n,
                         mg_ctx *ctx, char **out) {
    ir_graph *g = NULL;
    *out = NULL;
    mg_status rc = ir_parse_text(ctx, text, strlen(text), "μGraph", &g);
    if (!rc) rc = ir_rename_io(g, from, to, n, ctx);
    strbuf sb = {0};
    if (!rc) ir_print_text(g, &sb);
    if (!rc && (sb.oom || !(*out = sb_take(&sb)))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    sb_free(&sb);
    ir_graph_free(g);
    return rc;
}
