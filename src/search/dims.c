/* dims: the classes of a block graph's dims (which dims must be split alike, schedule.c) and
 * the dim labels that restrict which operators the search builds (docs/search.md). */
#include <string.h>

#include "search_int.h"

/* ---- dim classes: a union-find over (node, dim) slots ---- */

static int uf_find(int *uf, int x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}
static void uf_join(int *uf, int a, int b) {
    a = uf_find(uf, a), b = uf_find(uf, b);
    if (a != b) uf[a > b ? a : b] = a < b ? a : b;
}

/* The slot of dim dd of node i. */
static int slot(int i, int dd) { return i * IR_MAX_DIMS + dd; }

/* Joins the dims of node i of b that must be split alike with its operands' (concat dims
 * marked in concat_dim); -1 for an operator whose dims are not followed. */
static int join_node(const ir_graph *b, int i, int *uf, uint8_t *concat_dim) {
    const ir_node *p = &b->nodes[i];
    const ir_shape *o = &p->shape;
    int r = o->ndim;
    switch (p->op) {
    case IR_OP_ITER:
    case IR_OP_INPUT:
    case IR_OP_CONST: break;
    case IR_OP_RESHAPE: { /* only a squeeze of the last dim is followed */
        const ir_shape *a = &b->nodes[p->in[0]].shape;
        if (a->ndim != r + 1 || a->d[r] != 1 || memcmp(a->d, o->d, sizeof *o->d * (size_t)r)) return -1;
        for (int dd = 0; dd < r; dd++) uf_join(uf, slot(i, dd), slot(p->in[0], dd));
        break;
    }
    case IR_OP_REPEAT:
    case IR_OP_TRANSPOSE:
    case IR_OP_SLICE:
    case IR_OP_KERNEL:
    case IR_OP_MAX: return -1; /* not analysed: no dim labels (docs/search.md) */
    case IR_OP_MATMUL: {
        const ir_shape *as = &b->nodes[p->in[0]].shape, *bs = &b->nodes[p->in[1]].shape;
        for (int dd = 0; dd < r - 2; dd++) {
            if (as->d[dd] == o->d[dd]) uf_join(uf, slot(i, dd), slot(p->in[0], dd));
            if (bs->d[dd] == o->d[dd]) uf_join(uf, slot(i, dd), slot(p->in[1], dd));
        }
        uf_join(uf, slot(i, r - 2), slot(p->in[0], r - 2));
        uf_join(uf, slot(i, r - 1), slot(p->in[1], r - 1));
        uf_join(uf, slot(p->in[0], r - 1), slot(p->in[1], r - 2));
        break;
    }
    case IR_OP_SUM:
    case IR_OP_CONCAT:
        for (int k = 0; k < p->n_in; k++)
            for (int dd = 0; dd < r; dd++)
                if (dd != p->dim) uf_join(uf, slot(i, dd), slot(p->in[k], dd));
                else if (p->op == IR_OP_CONCAT) concat_dim[slot(i, dd)] = concat_dim[slot(p->in[k], dd)] = 1;
        break;
    default: /* elementwise, accum, save: aligned from the right, broadcast dims apart */
        for (int k = 0; k < p->n_in; k++) {
            const ir_shape *a = &b->nodes[p->in[k]].shape;
            for (int dd = 0; dd < a->ndim; dd++)
                if (a->d[dd] == o->d[dd + r - a->ndim]) uf_join(uf, slot(i, dd + r - a->ndim), slot(p->in[k], dd));
        }
    }
    return 0;
}

/* Numbers the classes (roots of uf) in order of first appearance: D->cls, nc, size. */
static void number_classes(const ir_graph *b, int *uf, dimcls *D) {
    int id[SR_DIM_SLOTS];
    D->nc = 0;
    for (int x = 0; x < b->n_nodes * IR_MAX_DIMS; x++) id[x] = -1;
    for (int i = 0; i < b->n_nodes; i++)
        for (int dd = 0; dd < b->nodes[i].shape.ndim; dd++) {
            int root = uf_find(uf, slot(i, dd));
            if (id[root] < 0) {
                id[root] = D->nc++;
                D->size[id[root]] = b->nodes[i].shape.d[dd];
                D->split_ok[id[root]] = 0;
            }
            D->cls[i][dd] = (int16_t)id[root];
        }
}

/* Which classes may be split (D->split_ok) and which each node has reduced (D->red). */
static void mark_classes(const ir_graph *b, const uint8_t *concat_dim, dimcls *D) {
    int n = b->n_nodes;
    uint8_t bad[SR_DIM_SLOTS] = {0}, read[SR_DIM_SLOTS] = {0};
    for (int i = 0; i < n; i++)
        for (int dd = 0; dd < b->nodes[i].shape.ndim; dd++) {
            int c = D->cls[i][dd];
            bad[c] |= concat_dim[slot(i, dd)] || b->nodes[i].shape.d[dd] != D->size[c];
            read[c] |= b->nodes[i].op == IR_OP_ITER;
        }
    for (int c = 0; c < D->nc; c++) D->split_ok[c] = read[c] && !bad[c] && D->size[c] > 1;
    for (int i = 0; i < n; i++) {
        const ir_node *p = &b->nodes[i];
        uint64_t m = 0;
        for (int k = 0; k < p->n_in; k++) m |= D->red[p->in[k]];
        int rc = -1;
        if (p->op == IR_OP_MATMUL) rc = D->cls[p->in[0]][b->nodes[p->in[0]].shape.ndim - 1];
        if (p->op == IR_OP_SUM) rc = D->cls[p->in[0]][p->dim];
        if (rc >= 0 && rc < 64) m |= 1ull << rc;
        D->red[i] = m;
    }
}

int sr_dims_of(const ir_graph *b, dimcls *D) {
    int n = b->n_nodes, uf[SR_DIM_SLOTS];
    uint8_t concat_dim[SR_DIM_SLOTS] = {0};
    if (n > SR_MAX_BNODES) return -1;
    for (int x = 0; x < n * IR_MAX_DIMS; x++) uf[x] = x;
    for (int i = 0; i < n; i++)
        if (join_node(b, i, uf, concat_dim)) return -1;
    number_classes(b, uf, D);
    mark_classes(b, concat_dim, D);
    return 0;
}

int sr_dim_in(const dimcls *D, const ir_graph *b, int i, int c) {
    for (int dd = 0; dd < b->nodes[i].shape.ndim; dd++)
        if (D->cls[i][dd] == c) return dd;
    return -1;
}

/* ---- dim labels ----
 * Every dim of every tensor carries the label of the program dim it stands for (a bit per
 * dim class of the program, dims_of; 0 for size 1). Labels follow the operators; a prefix
 * whose operator aligns dims of different labels (elementwise, batch or concat dims),
 * contracts two different labels (matmul) or reduces a label the program never reduces is
 * not generated. This is a restriction of the search space (docs/search.md), applied with
 * pruning on or off. Returns 1 and fills out[], or 0 if op p (in g, its shape inferred) breaks
 * the rules; la, lb are its operands' labels (NULL for a constant). */
int sr_labels_op(const search *s, const ir_graph *g, const ir_node *p, const uint64_t *la,
                 const uint64_t *lb, uint64_t *out) {
    const ir_shape *o = &p->shape;
    int r = o->ndim;
    static const uint64_t none[IR_MAX_DIMS];
    const uint64_t *l[2] = {la ? la : none, lb ? lb : none};
    memset(out, 0, sizeof *out * IR_MAX_DIMS);
    /* merges operand k's dims into out, right-aligned; skip: a dim not merged (-1: none) */
#define MERGE(k, skip)                                                                 \
    do {                                                                               \
        const ir_shape *ks = &g->nodes[p->in[k]].shape;                                \
        int off = r - ks->ndim;                                                        \
        for (int dd = 0; dd < ks->ndim; dd++) {                                        \
            if (dd == (skip) || ks->d[dd] != o->d[dd + off] || ks->d[dd] < 2) continue; \
            uint64_t *x = &out[dd + off];                                              \
            if (*x && *x != l[k][dd]) return 0;                                        \
            *x = l[k][dd];                                                             \
        }                                                                              \
    } while (0)
    switch (p->op) {
    case IR_OP_SUM:
        if (l[0][p->dim] & ~s->red_lab) return 0;
        MERGE(0, p->dim);
        return 1;
    case IR_OP_MATMUL: {
        const ir_shape *as = &g->nodes[p->in[0]].shape;
        if (as->d[r - 1] > 1 && (l[0][r - 1] != l[1][r - 2] || (l[0][r - 1] & ~s->red_lab))) return 0;
        MERGE(0, r - 1);
        out[r - 1] = 0;
        for (int dd = 0; dd < r - 2; dd++) { /* batch dims of the second operand */
            const ir_shape *bs = &g->nodes[p->in[1]].shape;
            if (bs->d[dd] < 2) continue;
            if (out[dd] && out[dd] != l[1][dd]) return 0;
            out[dd] = l[1][dd];
        }
        out[r - 1] = g->nodes[p->in[1]].shape.d[r - 1] > 1 ? l[1][r - 1] : 0;
        return 1;
    }
    case IR_OP_RESHAPE: /* a squeeze of the last dim, or a new last dim (partial sums) */
        memcpy(out, l[0], sizeof *out * (size_t)(r < g->nodes[p->in[0]].shape.ndim ? r : g->nodes[p->in[0]].shape.ndim));
        return 1;
    case IR_OP_CONCAT:
        MERGE(0, p->dim);
        MERGE(1, p->dim);
        out[p->dim] = l[0][p->dim] | l[1][p->dim];
        return 1;
    default:
        for (int k = 0; k < p->n_in; k++)
            if (g->nodes[p->in[k]].op != IR_OP_CONST) MERGE(k, -1);
        return 1;
    }
#undef MERGE
}

