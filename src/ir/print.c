/* print: kernel graph -> .mu text and Graphviz dot.
 * One statement per node, in node order; anonymous intermediates get fresh names, anonymous
 * constants are written inline at their use. parse(print(g)) is ir_graph_equal to g. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

const char **ir_node_names(const ir_graph *g, arena *a, int inline_consts) {
    const char **names = arena_alloc(a, (size_t)(g->n_nodes + 1) * sizeof *names);
    if (!names) return NULL;
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->name) {
            names[i] = n->name;
            continue;
        }
        if (n->op == IR_OP_CONST && inline_consts) {
            names[i] = n->lit;
            continue;
        }
        char buf[64];
        snprintf(buf, sizeof buf, "t%d", i);
        while (ir_find(g, buf) >= 0 && strlen(buf) < sizeof buf - 1) strcat(buf, "_");
        names[i] = arena_strdup(a, buf);
        if (!names[i]) return NULL;
    }
    return names;
}

static void print_ints(strbuf *sb, const char *key, const int64_t *v, int n) {
    sb_printf(sb, ", %s=[", key);
    for (int i = 0; i < n; i++) sb_printf(sb, "%s%" PRId64, i ? ", " : "", v[i]);
    sb_puts(sb, "]");
}

/* Writes the right-hand side of node i. */
static void print_rhs(const ir_graph *g, int i, const char **names, strbuf *sb) {
    const ir_node *n = &g->nodes[i];
    const ir_op_info *info = &ir_ops[n->op];
    if (n->op == IR_OP_CONST) {
        sb_puts(sb, n->lit);
        return;
    }
    if (info->kind == IR_KIND_BINARY) {
        static const char sym[] = {[IR_OP_ADD] = '+', [IR_OP_SUB] = '-', [IR_OP_MUL] = '*',
                                   [IR_OP_DIV] = '/'};
        sb_printf(sb, "%s %c %s", names[n->in[0]], sym[n->op], names[n->in[1]]);
        return;
    }
    sb_printf(sb, "%s(", info->name);
    for (int k = 0; k < n->n_in; k++) sb_printf(sb, "%s%s", k ? ", " : "", names[n->in[k]]);
    const ir_shape *a = n->n_in ? &g->nodes[n->in[0]].shape : NULL;
    switch (n->op) {
    case IR_OP_SUM:
        sb_printf(sb, ", dim=%d", n->dim);
        if (n->group != a->d[n->dim]) sb_printf(sb, ", group=%" PRId64, n->group);
        break;
    case IR_OP_MAX:
    case IR_OP_CONCAT: sb_printf(sb, ", dim=%d", n->dim); break;
    case IR_OP_RESHAPE: print_ints(sb, "shape", n->ints, n->n_ints); break;
    case IR_OP_REPEAT: print_ints(sb, "times", n->ints, n->n_ints); break;
    default: break;
    }
    sb_puts(sb, ")");
}

void ir_print_text(const ir_graph *g, strbuf *sb) {
    arena a;
    arena_init(&a);
    const char **names = ir_node_names(g, &a, 1);
    if (!names) {
        sb->oom = 1;
        return;
    }
    for (int i = 0; i < g->n_nodes; i++) { /* inputs first: they depend on nothing */
        const ir_node *n = &g->nodes[i];
        char sh[128];
        if (n->op == IR_OP_INPUT)
            sb_printf(sb, "input %s : %s\n", n->name, ir_shape_str(n->dtype, &n->shape, sh, sizeof sh));
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT || (n->op == IR_OP_CONST && !n->name)) continue;
        sb_printf(sb, "%s = ", names[i]);
        print_rhs(g, i, names, sb);
        sb_puts(sb, "\n");
    }
    for (int k = 0; k < g->n_outputs; k++)
        sb_printf(sb, "%s%s", k ? ", " : "output ", names[g->outputs[k]]);
    if (g->n_outputs) sb_puts(sb, "\n");
    arena_free(&a);
}

void ir_print_dot(const ir_graph *g, strbuf *sb) {
    arena a;
    arena_init(&a);
    const char **names = ir_node_names(g, &a, 1);
    if (!names) {
        sb->oom = 1;
        return;
    }
    sb_puts(sb, "digraph program {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n");
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        char sh[128];
        int is_out = 0;
        for (int k = 0; k < g->n_outputs; k++) is_out |= g->outputs[k] == i;
        if (n->op == IR_OP_CONST) {
            sb_printf(sb, "  n%d [label=\"%s\", shape=plaintext];\n", i, n->lit);
            continue;
        }
        const char *style = n->op == IR_OP_INPUT ? "shape=box, style=filled, fillcolor=lightblue"
                            : is_out            ? "shape=box, style=filled, fillcolor=palegreen"
                            : ir_ops[n->op].lax ? "shape=ellipse"
                                                : "shape=ellipse, style=filled, fillcolor=salmon";
        sb_printf(sb, "  n%d [label=\"%s\\n%s\\n%s\", %s];\n", i, names[i], ir_ops[n->op].name,
                  ir_shape_str(n->dtype, &n->shape, sh, sizeof sh), style);
        for (int k = 0; k < n->n_in; k++) sb_printf(sb, "  n%d -> n%d;\n", n->in[k], i);
    }
    sb_puts(sb, "}\n");
    arena_free(&a);
}
