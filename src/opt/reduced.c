/* opt/reduced: where a reduced dim lives in a plan (docs/tuning.md "Reduced dims"). A variant
 * compiled for capacity C of a reduced dim (a KV length) runs a call at L <= C: code
 * generation masks every value past L to 0 (codegen/mask.c), for which it must know, for each
 * tensor, which of its dims follow the reduced dim and, inside a block, each such dim's first
 * index in the whole tensor. This pass works that out by dataflow from the program inputs'
 * dims (what ir_sym_check found to follow the dim):
 *   kernel level  op_plan.lmask: per node, the dims (padded to 4, bit d) that follow it;
 *   block level   op_tensor.lfrom: per dim, the iterator (and its dim) the dim's index comes
 *                 from, or -1: the index is the iterator's tile base along that dim plus the
 *                 local index.
 * Operators that would move the dim where a mask cannot follow it (a reshape of it, an
 * accumulator over its tiles) are refused by name: MG_ERR_UNSUPPORTED. */
#include <stdio.h>
#include <string.h>

#include "opt_internal.h"

/* the bits of unpadded mask m (rank r) moved to padded positions */
static unsigned pad_bits(unsigned m, int r) { return (m << (4 - r)) & 15u; }

/* A reshape's mask: the dims of size > 1 in order must be the same list in both shapes where
 * a dim of the mask is involved (only size-1 dims added or removed); else -1. */
static int reshape_bits(const ir_shape *in, const ir_shape *out, unsigned m) {
    if (!m) return 0;
    int64_t a[4], b[4];
    int na = 0, nb = 0, ia[4], ib[4];
    for (int d = 0; d < in->ndim; d++)
        if (in->d[d] > 1) ia[na] = d, a[na++] = in->d[d];
    for (int d = 0; d < out->ndim; d++)
        if (out->d[d] > 1) ib[nb] = d, b[nb++] = out->d[d];
    if (na != nb || memcmp(a, b, (size_t)na * sizeof *a)) return -1;
    unsigned r = 0;
    int pi = 4 - in->ndim, po = 4 - out->ndim;
    for (int q = 0; q < na; q++)
        if (m >> (ia[q] + pi) & 1) r |= 1u << (ib[q] + po);
    return (int)r;
}

/* A reduction over dim dim of an operand of shape in (mask m) to shape out. */
static unsigned reduce_bits(const ir_shape *in, const ir_shape *out, int dim, unsigned m) {
    int pi = 4 - in->ndim;
    m &= ~(1u << (dim + pi));
    if (out->ndim == in->ndim) return m;
    unsigned u = m >> pi, lo = u & ((1u << dim) - 1), hi = u >> (dim + 1);
    return pad_bits(lo | hi << dim, out->ndim);
}

/* A transpose (perm) of mask m, rank r. */
static unsigned perm_bits(const ir_node *n, unsigned m, int r) {
    unsigned u = m >> (4 - r), o = 0;
    for (int i = 0; i < r && i < n->n_ints; i++) o |= (u >> n->ints[i] & 1) << i;
    return pad_bits(o, r);
}

static mg_status refuse(mg_ctx *ctx, const ir_graph *g, int i, const char *what) {
    char lb[96];
    return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s %s the reduced dim; its masks past the call's length cannot follow it "
                   "(docs/tuning.md \"Reduced dims\")", ir_node_label(g, i, lb, sizeof lb), what);
}

/* The mask of node i of graph g from its operands' masks m[] (both levels), or -1 with ctx set. */
static int node_bits(const ir_graph *g, int i, const unsigned *m, mg_ctx *ctx) {
    const ir_node *n = &g->nodes[i];
    unsigned a = n->n_in > 0 ? m[n->in[0]] : 0, b = n->n_in > 1 ? m[n->in[1]] : 0;
    ir_kind kind = ir_ops[n->op].kind;
    int pd = n->n_in > 0 ? n->dim + 4 - g->nodes[n->in[0]].shape.ndim : 0;
    switch (n->op) {
    case IR_OP_CONST:
        return 0;
    case IR_OP_MATMUL:
        return (int)(((a | b) & 3u) | (a & 4u) | (b & 8u));
    case IR_OP_SUM:
    case IR_OP_MAX: /* a max's reads past L take -inf (codegen/expr.c) */
        return (int)reduce_bits(&g->nodes[n->in[0]].shape, &n->shape, n->dim, a);
    case IR_OP_TRANSPOSE:
        return (int)perm_bits(n, a, n->shape.ndim);
    case IR_OP_RESHAPE: {
        int r = reshape_bits(&g->nodes[n->in[0]].shape, &n->shape, a);
        if (r < 0) refuse(ctx, g, i, "reshapes");
        return r;
    }
    case IR_OP_SLICE:
        if (a >> pd & 1) return refuse(ctx, g, i, "slices along"), -1;
        return (int)a;
    case IR_OP_CONCAT:
        if ((a | b) >> pd & 1) return refuse(ctx, g, i, "concatenates along"), -1;
        return (int)(a | b);
    case IR_OP_REPEAT:
        for (int d = 0; d < n->n_ints; d++)
            if ((a >> (d + 4 - n->shape.ndim) & 1) && n->ints[d] != 1) return refuse(ctx, g, i, "repeats along"), -1;
        return (int)a;
    case IR_OP_RMSNORM:
        if (a & 8u) return refuse(ctx, g, i, "normalises over"), -1;
        return (int)a;
    default:
        break;
    }
    if (kind == IR_KIND_UNARY || kind == IR_KIND_BINARY) return (int)(a | b);
    if (!(a | b)) return 0;
    refuse(ctx, g, i, "is an operator that meets");
    return -1;
}

/* Block graph b of kernel node knode (kernel-level masks km): each node's mask in bm[] and,
 * with t, each dim's source in t[i].lfrom. 0, or a status with ctx set. */
static mg_status block_bits(const ir_graph *kg, int knode, const unsigned char *km, unsigned *bm, op_tensor *t, mg_ctx *ctx) {
    const ir_graph *b = kg->nodes[knode].body;
    int (*from)[4] = base_calloc((size_t)b->n_nodes + 1, sizeof *from);
    if (!from) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = MG_OK;
    for (int i = 0; i < b->n_nodes && !rc; i++) {
        const ir_node *n = &b->nodes[i];
        for (int d = 0; d < 4; d++) from[i][d] = -1;
        if (n->op == IR_OP_ITER) {
            bm[i] = km[kg->nodes[knode].in[n->index]];
            for (int d = 0; d < 4; d++)
                if (bm[i] >> d & 1) from[i][d] = i * 4 + d;
        } else if (n->op == IR_OP_ACCUM || n->op == IR_OP_SAVE) {
            bm[i] = bm[n->in[0]];
            memcpy(from[i], from[n->in[0]], sizeof from[i]);
            for (int d = 0; d < 4 && n->op == IR_OP_ACCUM; d++) {
                int src = from[i][d] / 4, sd = from[i][d] % 4;
                if (bm[i] >> d & 1 && (n->fmap >= 0 || b->nodes[src].fmap + 4 - b->nodes[src].shape.ndim == sd))
                    rc = refuse(ctx, b, i, "accumulates tiles of");
            }
        } else {
            int v = node_bits(b, i, bm, ctx);
            if (v < 0) {
                rc = MG_ERR_UNSUPPORTED;
                break;
            }
            bm[i] = (unsigned)v;
            /* each dim's source: an operand's at the same padded dim; a product's rows from A,
             * columns from B; a transpose's or reshape's through its map */
            for (int d = 0; d < 4; d++) {
                if (!(bm[i] >> d & 1)) continue;
                if (n->op == IR_OP_MATMUL) from[i][d] = d == 3 || (d < 2 && from[n->in[0]][d] < 0) ? from[n->in[1]][d] : from[n->in[0]][d];
                else if (n->op == IR_OP_TRANSPOSE) from[i][d] = from[n->in[0]][n->ints[d - (4 - n->shape.ndim)] + 4 - n->shape.ndim];
                else if (n->op == IR_OP_RESHAPE) { /* the same list of dims of size > 1 */
                    const ir_shape *s = &b->nodes[n->in[0]].shape;
                    int q = 0, k = 0;
                    for (int e = 4 - n->shape.ndim; e < d; e++) q += n->shape.d[e - (4 - n->shape.ndim)] > 1;
                    for (int e = 0; e < s->ndim; e++)
                        if (s->d[e] > 1 && q-- == 0) k = e + 4 - s->ndim;
                    from[i][d] = from[n->in[0]][k];
                } else
                    for (int q = 0; q < n->n_in && from[i][d] < 0; q++) from[i][d] = from[n->in[q]][d];
            }
        }
    }
    for (int i = 0; t && !rc && i < b->n_nodes; i++) memcpy(t[i].lfrom, from[i], sizeof t[i].lfrom);
    base_free(from);
    return rc;
}

mg_status op_reduced_masks(op_plan *p, mg_ctx *ctx, const unsigned char *in_bits, int n_in) {
    const ir_graph *g = p->g;
    p->lmask = arena_alloc(&p->mem, (size_t)g->n_nodes + 1);
    unsigned *m = base_calloc((size_t)g->n_nodes + 1, sizeof *m);
    if (!p->lmask || !m) {
        base_free(m);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    mg_status rc = MG_OK;
    for (int i = 0, ni = 0; i < g->n_nodes && !rc; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT) {
            m[i] = ni < n_in ? pad_bits(in_bits[ni], n->shape.ndim) : 0;
            ni++;
        } else if (n->op == IR_OP_KERNEL) { /* output `index` of its body: the save's operand */
            const ir_graph *b = n->body;
            unsigned *bm = base_calloc((size_t)b->n_nodes + 1, sizeof *bm);
            unsigned char *km = base_calloc((size_t)g->n_nodes + 1, 1);
            if (!bm || !km) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
            for (int q = 0; q < i && !rc; q++) km[q] = (unsigned char)m[q];
            if (!rc) rc = block_bits(g, i, km, bm, NULL, ctx);
            if (!rc) m[i] = bm[b->outputs[n->index]];
            base_free(bm), base_free(km);
        } else if (n->op == IR_OP_SEQATTN) {
            char lb[96];
            rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s: ragged attention in a program of a reduced dim", ir_node_label(g, i, lb, sizeof lb));
        } else {
            int v = node_bits(g, i, m, ctx);
            if (v < 0) rc = MG_ERR_UNSUPPORTED;
            else m[i] = (unsigned)v;
        }
    }
    for (int i = 0; i < g->n_nodes; i++) p->lmask[i] = (unsigned char)m[i];
    base_free(m);
    return rc;
}

mg_status op_reduced_block(const op_plan *p, mg_ctx *ctx, int knode, op_kernel *k) {
    const ir_graph *b = p->g->nodes[knode].body;
    for (int i = 0; i < b->n_nodes; i++)
        for (int d = 0; d < 4; d++) k->t[i].lfrom[d] = -1;
    if (!p->lmask) return MG_OK;
    unsigned *bm = base_calloc((size_t)b->n_nodes + 1, sizeof *bm);
    if (!bm) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = block_bits(p->g, knode, p->lmask, bm, k->t, ctx);
    base_free(bm);
    return rc;
}
