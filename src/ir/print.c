/* print: kernel graph -> .mu text and Graphviz dot.
 * One statement per node, in node order; anonymous intermediates get fresh names, anonymous
 * constants are written inline at their use. parse(print(g)) is ir_graph_equal to g.
 * `mugen check` prints what the front ends built, and the partitioner prints each part
 * through ir_print_text; the dot view colours inputs, outputs and non-Lax ops, so the points
 * where ir_partition cuts stand out. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Chosen so that the printed text parses back to the same graph: a fresh "t<i>" gets '_'
 * appended until no named node uses it (a user may have called a tensor t3), and fresh names
 * differ from each other through their digits. n_nodes + 1 slots: an empty graph still gets a
 * non-NULL array. Everything lives in a, so the caller frees it with the arena. */
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

/* ", key=[a, b, ...]": the integer-list attributes of reshape, repeat and transpose; in
 * reshape's shape= a ragged dim (-1 - k) is lengths k's name. */
static void print_ints(const ir_graph *g, strbuf *sb, const char *key, const int64_t *v, int n) {
    sb_printf(sb, ", %s=[", key);
    for (int i = 0; i < n; i++)
        if (v[i] < 0 && -v[i] <= g->n_lens) sb_printf(sb, "%s%s", i ? ", " : "", g->lens[-v[i] - 1].name);
        else sb_printf(sb, "%s%" PRId64, i ? ", " : "", v[i]);
    sb_puts(sb, "]");
}

/* A grid-dim map as "key=[..]" with trailing phi entries dropped; nothing if all are phi. */
static void print_map(strbuf *sb, const char *key, const int map[3]) {
    int n = 3;
    while (n > 0 && map[n - 1] < 0) n--;
    if (!n) return;
    sb_printf(sb, ", %s=[", key);
    for (int g = 0; g < n; g++) sb_printf(sb, "%s%d", g ? ", " : "", map[g]);
    sb_puts(sb, "]");
}

/* ", key=value" for each attribute n's op takes, in the order of its ops.def attrs letters.
 * sum prints group= only when it differs from the whole dim, which is the default; fmap only
 * when set. A kernel's grid, forloop and threads are print_kernel's. */
static void print_attrs(const ir_graph *g, const ir_node *n, strbuf *sb) {
    for (const char *c = ir_ops[n->op].attrs; *c; c++) {
        switch (tolower((unsigned char)*c)) {
        case 'd': sb_printf(sb, ", dim=%d", n->dim); break;
        case 'g':
            if (n->group != g->nodes[n->in[0]].shape.d[n->dim])
                sb_printf(sb, ", group=%" PRId64, n->group);
            break;
        case 's': print_ints(g, sb, "shape", n->ints, n->n_ints); break;
        case 't': print_ints(g, sb, "times", n->ints, n->n_ints); break;
        case 'p': print_ints(g, sb, "perm", n->ints, n->n_ints); break;
        case 'b': sb_printf(sb, ", start=%" PRId64, n->ints[0]); break;
        case 'n': sb_printf(sb, ", len=%" PRId64, n->ints[1]); break;
        case 'i': print_map(sb, "imap", n->map); break;
        case 'o': print_map(sb, "omap", n->map); break;
        case 'f':
            if (n->fmap >= 0) sb_printf(sb, ", fmap=%d", n->fmap);
            break;
        default: break;
        }
    }
}

/* Writes the right-hand side of node i. Binary ops print infix without parentheses: their
 * operands are names or inline literals, never nested expressions, so precedence cannot
 * matter ("X - -0.5" parses back as X minus the constant -0.5). An iterator's operand is the
 * kernel input it reads, by the name the kernel graph gives it (kin; the block's own record
 * when NULL). */
static void print_rhs(const ir_graph *g, int i, const char **names, const char *const *kin, strbuf *sb) {
    const ir_node *n = &g->nodes[i];
    const ir_op_info *info = &ir_ops[n->op];
    if (n->op == IR_OP_CONST) {
        sb_puts(sb, n->lit);
        return;
    }
    if (info->kind == IR_KIND_BINARY) {
        /* indexed by op; only the four binary ops have entries */
        static const char sym[] = {[IR_OP_ADD] = '+', [IR_OP_SUB] = '-', [IR_OP_MUL] = '*',
                                   [IR_OP_DIV] = '/'};
        sb_printf(sb, "%s %c %s", names[n->in[0]], sym[n->op], names[n->in[1]]);
        return;
    }
    sb_printf(sb, "%s(", info->name);
    if (n->op == IR_OP_ITER) sb_puts(sb, kin ? kin[n->index] : g->kin_name[n->index]);
    for (int k = 0; k < n->n_in; k++) sb_printf(sb, "%s%s", k ? ", " : "", names[n->in[k]]);
    print_attrs(g, n, sb);
    sb_puts(sb, ")");
}

/* Canonical text (docs/ir.md): inputs, then one statement per op node and per named constant
 * in node order, then one output line. Node order is topological, so every name is defined
 * before it is read. Out of memory sets sb->oom. */
static void print_graph(const ir_graph *g, strbuf *sb, int indent, const char *const *kin);

/* NAME, ... = kernel(INPUTS, grid=[..], forloop=N, threads=N) { block graph } */
static void print_kernel(const ir_graph *g, int i, const char **names, strbuf *sb, int indent) {
    const ir_node *n = &g->nodes[i];
    const ir_graph *b = n->body;
    sb_printf(sb, "%*s", indent, "");
    for (int k = 0; k < b->n_outputs; k++) sb_printf(sb, "%s%s", k ? ", " : "", names[i + k]);
    sb_puts(sb, " = kernel(");
    for (int k = 0; k < n->n_in; k++) sb_printf(sb, "%s, ", names[n->in[k]]);
    int ng = b->grid[2] > 1 ? 3 : b->grid[1] > 1 ? 2 : 1;
    sb_puts(sb, "grid=[");
    for (int gd = 0; gd < ng; gd++) sb_printf(sb, "%s%d", gd ? ", " : "", b->grid[gd]);
    sb_printf(sb, "], forloop=%" PRId64 ", threads=%d) {\n", b->forloop, b->threads);
    const char *kin[IR_MAX_IN];
    for (int k = 0; k < n->n_in && k < IR_MAX_IN; k++) kin[k] = names[n->in[k]];
    print_graph(b, sb, indent + 4, kin);
    sb_printf(sb, "%*s}\n", indent, "");
}

static void print_graph(const ir_graph *g, strbuf *sb, int indent, const char *const *kin) {
    arena a;
    arena_init(&a);
    const char **names = ir_node_names(g, &a, 1);
    if (!names) {
        sb->oom = 1;
        return;
    }
    for (int k = 0; k < g->n_lens; k++) /* the lengths first: shapes name them */
        sb_printf(sb, "%*slengths %s[%" PRId64 "] max=%" PRId64 "\n", indent, "", g->lens[k].name, g->lens[k].count, g->lens[k].max);
    for (int i = 0; i < g->n_nodes; i++) { /* inputs first: they depend on nothing */
        const ir_node *n = &g->nodes[i];
        char sh[128];
        if (n->op != IR_OP_INPUT) continue;
        sb_printf(sb, "%*sinput %s : %s", indent, "", n->name, ir_shape_gstr(g, n->dtype, &n->shape, sh, sizeof sh));
        if (ir_input_range(n) != 1) { /* the shortest decimal that reads back as the same double */
            char r[40];
            snprintf(r, sizeof r, "%.15g", ir_input_range(n));
            if (strtod(r, NULL) != ir_input_range(n)) snprintf(r, sizeof r, "%.17g", ir_input_range(n));
            sb_printf(sb, " range=%s", r);
        }
        sb_puts(sb, "\n");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        /* anonymous constants have no statement: their users print the literal */
        if (n->op == IR_OP_INPUT || (n->op == IR_OP_CONST && !n->name)) continue;
        if (n->op == IR_OP_KERNEL) { /* printed once, with all its outputs */
            if (n->index == 0) print_kernel(g, i, names, sb, indent);
            continue;
        }
        if (n->op == IR_OP_SAVE) { /* a statement of its own: no name */
            sb_printf(sb, "%*s", indent, "");
            print_rhs(g, i, names, kin, sb);
            sb_puts(sb, "\n");
            continue;
        }
        sb_printf(sb, "%*s%s = ", indent, "", names[i]);
        print_rhs(g, i, names, kin, sb);
        sb_puts(sb, "\n");
    }
    for (int k = 0; !g->is_block && k < g->n_outputs; k++)
        sb_printf(sb, "%s%s", k ? ", " : "output ", names[g->outputs[k]]);
    if (!g->is_block && g->n_outputs) sb_puts(sb, "\n");
    arena_free(&a);
}

void ir_print_text(const ir_graph *g, strbuf *sb) { print_graph(g, sb, 0, NULL); }

/* Graphviz: one vertex per tensor (constants as plain text), edges from operands to their
 * reader. Labels are not escaped: names from .mu text are identifiers and literals are
 * decimals. json.c does not hold names to the identifier pattern, so a JSON name with a quote
 * breaks this output (and the .mu text, which then does not parse back). */
/* One node's declaration; prefix makes ids unique across nested graphs ("n", "k7_"). */
static void dot_node(const ir_graph *g, int i, const char **names, const char *prefix, strbuf *sb,
                     const char *indent) {
    const ir_node *n = &g->nodes[i];
    char sh[128];
    int is_out = 0;
    for (int k = 0; k < g->n_outputs; k++) is_out |= g->outputs[k] == i;
    if (n->op == IR_OP_CONST) {
        sb_printf(sb, "%s%s%d [label=\"%s\", shape=plaintext];\n", indent, prefix, i, n->lit);
        return;
    }
    /* inputs and iterators blue, outputs and savers green, non-Lax ops salmon (the cut
     * points), kernels orange, the rest plain */
    const char *style = n->op == IR_OP_INPUT || n->op == IR_OP_ITER ? "shape=box, style=filled, fillcolor=lightblue"
                        : n->op == IR_OP_SAVE || (is_out && !g->is_block) ? "shape=box, style=filled, fillcolor=palegreen"
                        : n->op == IR_OP_KERNEL ? "shape=box, style=filled, fillcolor=orange"
                        : ir_ops[n->op].lax ? "shape=ellipse"
                                            : "shape=ellipse, style=filled, fillcolor=salmon";
    sb_printf(sb, "%s%s%d [label=\"%s\\n%s\\n%s\", %s];\n", indent, prefix, i,
              n->op == IR_OP_SAVE ? "save" : names[i], ir_ops[n->op].name,
              ir_shape_gstr(g, n->dtype, &n->shape, sh, sizeof sh), style);
}

/* A kernel's block graph as a cluster, its thread graphs (fused elementwise chains) as
 * dashed clusters inside; edges from the kernel's inputs to its iterators and from its
 * savers to its output nodes. */
static void dot_kernel(const ir_graph *g, int ki, strbuf *sb) {
    const ir_node *kn = &g->nodes[ki];
    const ir_graph *b = kn->body;
    arena a;
    arena_init(&a);
    const char **bn = ir_node_names(b, &a, 1);
    int *tg = base_calloc((size_t)b->n_nodes + 1, sizeof *tg);
    int *members = base_calloc((size_t)b->n_nodes + 1, sizeof *members);
    if (!bn || !tg || !members) {
        sb->oom = 1;
        goto done;
    }
    char prefix[32];
    snprintf(prefix, sizeof prefix, "k%d_", ki);
    int n_groups = ir_block_fuse(b, tg);
    for (int i = 0; i < b->n_nodes; i++)
        if (tg[i] >= 0) members[tg[i]]++;
    sb_printf(sb, "  subgraph cluster_k%d {\n    label=\"kernel: grid [%d, %d, %d], forloop %lld, "
              "%d threads\";\n    style=rounded;\n", ki, b->grid[0], b->grid[1], b->grid[2],
              (long long)b->forloop, b->threads);
    for (int t = 0; t < n_groups; t++) {
        if (members[t] < 2) continue;
        sb_printf(sb, "    subgraph cluster_k%d_t%d {\n      label=\"thread graph\";\n      style=dashed;\n", ki, t);
        for (int i = 0; i < b->n_nodes; i++)
            if (tg[i] == t) dot_node(b, i, bn, prefix, sb, "      ");
        sb_puts(sb, "    }\n");
    }
    for (int i = 0; i < b->n_nodes; i++) {
        if (tg[i] >= 0 && members[tg[i]] >= 2) continue;
        dot_node(b, i, bn, prefix, sb, "    ");
    }
    for (int i = 0; i < b->n_nodes; i++)
        for (int k = 0; k < b->nodes[i].n_in; k++) sb_printf(sb, "    %s%d -> %s%d;\n", prefix, b->nodes[i].in[k], prefix, i);
    sb_puts(sb, "  }\n");
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        if (n->op == IR_OP_ITER) sb_printf(sb, "  n%d -> %s%d;\n", kn->in[n->index], prefix, i);
        if (n->op == IR_OP_SAVE) sb_printf(sb, "  %s%d -> n%d;\n", prefix, i, ki + n->index);
    }
done:
    base_free(tg), base_free(members);
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
        dot_node(g, i, names, "n", sb, "  ");
        if (n->op == IR_OP_KERNEL) { /* drawn through its block graph */
            if (n->index == 0) dot_kernel(g, i, sb);
            continue;
        }
        for (int k = 0; k < n->n_in; k++) sb_printf(sb, "  n%d -> n%d;\n", n->in[k], i);
    }
    sb_puts(sb, "}\n");
    arena_free(&a);
}
