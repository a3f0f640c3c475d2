/* opt/buffers: the kernel level. Which kernel-graph nodes get a device buffer (the others are
 * constants or elementwise operators inlined into their one consumer), each buffer's storage
 * type, and its dim order. */
#include <string.h>

#include "opt_internal.h"

/* Strides of node i's buffer (kst): row-major; for a kernel's intermediate output (free),
 * the dims its saver's grid indexes whole (one grid step per element: a split index) go
 * outermost when one of them lies inside an unsplit dim (a split-K partial [rows, cols,
 * splits] becomes [splits, rows, cols]): every block then writes one contiguous tile instead
 * of one float every few hundred bytes. A dim the grid cuts into wider tiles stays in place:
 * moving it whole would make each tile column-major. */
static void buffer_layout(op_plan *p, int i, int free_layout) {
    const ir_node *n = &p->g->nodes[i];
    int64_t d[4], *st = p->kst[i];
    op_pad4(&n->shape, d);
    int split[4] = {0}, order[4], m = 0, pad = 4 - n->shape.ndim;
    if (free_layout)
        for (int j = 0; j < n->body->n_nodes; j++) {
            const ir_node *sv = &n->body->nodes[j];
            if (sv->op != IR_OP_SAVE || sv->index != n->index) continue;
            for (int g = 0; g < 3; g++) /* a dim the grid indexes whole (a tile one wide) */
                if (sv->map[g] >= 0 && n->body->grid[g] > 1 && n->body->grid[g] == d[sv->map[g] + pad])
                    split[sv->map[g] + pad] = 1;
        }
    int inner = 0; /* a split dim inside an unsplit one of size > 1 */
    for (int a = 0; a < 4; a++)
        for (int b2 = a + 1; b2 < 4; b2++) inner |= !split[a] && d[a] > 1 && split[b2];
    for (int a = 0; a < 4; a++)
        if (inner && split[a]) order[m++] = a;
    for (int a = 0; a < 4; a++)
        if (!(inner && split[a])) order[m++] = a;
    int64_t s = 1;
    for (int q = 3; q >= 0; q--) st[order[q]] = d[order[q]] == 1 ? 0 : s, s *= d[order[q]];
}

/* A reshape, transpose or slice of a stored tensor, itself no output, becomes a view of its
 * operand's buffer instead of a copy: its strides are the operand's reindexed (a reshape
 * only of a row-major operand), its first element an offset that keeps 16-byte alignment
 * (the vector copies of a tile assume it). */
static void make_view(op_plan *p, int i) {
    const ir_node *n = &p->g->nodes[i];
    int a = n->in[0];
    if ((n->op != IR_OP_RESHAPE && n->op != IR_OP_TRANSPOSE && n->op != IR_OP_SLICE) || p->buf[a] < 0) return;
    const ir_shape *as = &p->g->nodes[a].shape;
    int64_t ad[4], d[4], st[4], off = p->voff[a];
    const int64_t *ast = p->kst[a];
    int pa = 4 - as->ndim, pn = 4 - n->shape.ndim;
    op_pad4(as, ad), op_pad4(&n->shape, d);
    if (n->op == IR_OP_RESHAPE) { /* only of a row-major operand: the same flat index */
        int64_t s1 = 1;
        for (int q = 3; q >= 0; q--) {
            if (ad[q] > 1 && ast[q] != s1) return;
            s1 *= ad[q];
        }
        s1 = 1;
        for (int q = 3; q >= 0; q--) st[q] = d[q] == 1 ? 0 : s1, s1 *= d[q];
    } else if (n->op == IR_OP_TRANSPOSE) {
        for (int q = 0; q < 4; q++) st[q] = q < pn ? 0 : ast[pa + (int)n->ints[q - pn]];
    } else {
        for (int q = 0; q < 4; q++) st[q] = d[q] == 1 ? 0 : ast[q];
        off += n->ints[0] * ast[pa + n->dim];
    }
    for (int q = 0; q < 4; q++) /* a dim of one moves nowhere */
        if (d[q] == 1) st[q] = 0;
    if (off * (int64_t)base_dtype_size(p->store[a]) % 16) return;
    p->store[i] = p->store[a];
    memcpy(p->kst[i], st, sizeof st);
    p->view[i] = p->view[a] >= 0 ? p->view[a] : a, p->voff[i] = off;
}

/* Is kernel-graph node x a program input, or a reshape of one (the same memory)? */
static int input_data(const ir_graph *g, int x) {
    while (g->nodes[x].op == IR_OP_RESHAPE) x = g->nodes[x].in[0];
    return g->nodes[x].op == IR_OP_INPUT;
}

/* Does body node r, reading iterator x, multiply it by a 16-bit program input's tile and
 * only sum the product (a plain product: no chain, which may split an f32 operand in two
 * halves to keep its precision)? */
static int plain_product(const ir_graph *g, const ir_node *k, const ir_graph *b, int r, int x, mg_dtype t) {
    const ir_node *m = &b->nodes[r];
    if (m->op != IR_OP_MATMUL || m->dtype != t) return 0;
    int o = m->in[0] == x ? m->in[1] : m->in[0];
    if (b->nodes[o].op != IR_OP_ITER || !input_data(g, k->in[b->nodes[o].index])) return 0;
    if (base_dtype_size(g->nodes[k->in[b->nodes[o].index]].dtype) != 2) return 0;
    for (int u = 0; u < b->n_nodes; u++)
        for (int e = 0; e < b->nodes[u].n_in; e++)
            if (b->nodes[u].in[e] == r && b->nodes[u].op != IR_OP_ACCUM) return 0;
    return 1;
}

enum { OP_TILE_ROWS = 64 }; /* rows of a product's operand that fill a tensor-core tile (op_plan_buffers) */
static int mm_operand_only(const ir_graph *g, int i);

/* How node i (of a 16-bit type) is read: *products counts the readers that take it only as
 * plain products' operands (block kernels whose iterators over it feed nothing else) or as
 * seqattn's Q, K or V (directly or through such reshapes), *others every other reader. */
static void mm_readers(const ir_graph *g, int i, int *products, int *others) {
    mg_dtype t = g->nodes[i].dtype;
    *products = *others = 0;
    if (t != MG_F16 && t != MG_BF16) return;
    for (int u = 0; u < g->n_nodes; u++) {
        const ir_node *k = &g->nodes[u];
        for (int q = 0; q < k->n_in; q++) {
            if (k->in[q] != i) continue;
            int plain = (k->op == IR_OP_SEQATTN && q < 3) || (k->op == IR_OP_RESHAPE && mm_operand_only(g, u)) ||
                        (k->op == IR_OP_KERNEL && k->body);
            const ir_graph *b = k->op == IR_OP_KERNEL ? k->body : NULL;
            for (int x = 0; plain && b && x < b->n_nodes; x++) {
                if (b->nodes[x].op != IR_OP_ITER || b->nodes[x].index != q) continue;
                for (int r = 0; r < b->n_nodes; r++)
                    for (int e = 0; e < b->nodes[r].n_in; e++)
                        if (b->nodes[r].in[e] == x && !plain_product(g, k, b, r, x, t)) plain = 0;
            }
            plain ? (*products)++ : (*others)++;
        }
    }
}
/* Is node i, of a 16-bit type, read only by block kernels whose iterators over it feed
 * nothing but plain products of its type with a program input, or as seqattn's Q, K or V
 * (directly or through reshapes)? Tensor cores round such an operand to that type as they
 * load it (codegen/cuda/mma.c, cuda/lib/seqattn.cuh), so storing it rounded already is the
 * same sum, half the bytes, and a tile TMA can load (opt/tma.c). */
static int mm_operand_only(const ir_graph *g, int i) {
    int products, others;
    mm_readers(g, i, &products, &others);
    return products > 0 && !others;
}

/* Is kernel-graph node i a graph-defined kernel's products over their whole depth (no grid dim
 * splits it: not a split's partial sums), with an elementwise epilogue at most, that every
 * reader, a kernel, only adds to or subtracts from something (its iterators over it feed
 * additions only: a residual sum before a LayerNorm; not attention's scores, whose exponential
 * would turn a 16-bit rounding of a score of 10 into 0.5% of its probability)? */
static int product_only_added(const ir_graph *g, int i) {
    const ir_node *k = &g->nodes[i];
    if (k->op != IR_OP_KERNEL || !k->body) return 0;
    const ir_graph *b = k->body;
    int n_mm = 0;
    for (int j = 0; j < b->n_nodes; j++) {
        const ir_node *m = &b->nodes[j];
        if (m->op != IR_OP_MATMUL) continue;
        n_mm++;
        for (int q = 0; q < 2; q++) { /* the depth: A's last dim, B's second to last */
            const ir_node *x = &b->nodes[m->in[q]];
            int depth = x->shape.ndim - (q ? 2 : 1);
            if (x->op != IR_OP_ITER) return 0;
            for (int gd = 0; gd < 3; gd++)
                if (x->map[gd] == depth) return 0;
        }
    }
    if (!n_mm) return 0;
    for (int u = 0; u < g->n_nodes; u++)
        for (int q = 0; q < g->nodes[u].n_in; q++) {
            if (g->nodes[u].in[q] != i) continue;
            const ir_graph *rb = g->nodes[u].op == IR_OP_KERNEL ? g->nodes[u].body : NULL;
            if (!rb) return 0;
            for (int x = 0; x < rb->n_nodes; x++) {
                if (rb->nodes[x].op != IR_OP_ITER || rb->nodes[x].index != q) continue;
                for (int r = 0; r < rb->n_nodes; r++)
                    for (int e = 0; e < rb->nodes[r].n_in; e++)
                        if (rb->nodes[r].in[e] == x && rb->nodes[r].op != IR_OP_ADD && rb->nodes[r].op != IR_OP_SUB)
                            return 0;
            }
        }
    return 1;
}

/* Kernel level: inputs and KERNEL outputs and every operator that is not inlined get a
 * buffer. An elementwise operator is inlined into its one consumer when that consumer reads
 * it element by element (another elementwise operator or a reduction), it is no output and
 * its own expression inlines fewer than OP_MAX_INLINE_DEPTH levels of operators. */
void op_plan_buffers(op_plan *p, const int *uses, const int *user, int *scratch) {
    const ir_graph *g = p->g;
    int *depth = scratch; /* operators inlined in node i's expression, along the deepest path */
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        ir_op c = uses[i] == 1 ? g->nodes[user[i]].op : IR_OP_INPUT;
        depth[i] = 0;
        for (int a = 0; a < n->n_in; a++)
            if (p->inl[n->in[a]] && depth[n->in[a]] + 1 > depth[i]) depth[i] = depth[n->in[a]] + 1;
        p->inl[i] = n->op == IR_OP_CONST ||
                    (op_is_elementwise(n->op) && uses[i] == 1 && depth[i] < OP_MAX_INLINE_DEPTH &&
                     (op_is_elementwise(c) || ir_ops[c].kind == IR_KIND_REDUCE));
        p->buf[i] = p->inl[i] ? -1 : p->n_bufs++;
        p->store[i] = n->dtype;
        p->kern[i] = -1;
    }
    for (int i = 0; i < g->n_nodes; i++) { /* intermediates in f32, like the reference */
        const ir_node *n = &g->nodes[i];
        int is_out = 0;
        for (int k = 0; k < g->n_outputs; k++) is_out |= g->outputs[k] == i;
        /* a tensor of OP_TILE_ROWS rows or more that a plain product reads is stored in its
         * 16-bit type too, its other readers taking the rounded value (2^-11 relative for
         * f16): the product's tiles then load by TMA (lower.c stores a big product's operands;
         * the encoder's FFN after a LayerNorm, docs/notes/2026-11-28-s26.md); a decode step's
         * few rows keep f32 */
        int products, others;
        mm_readers(g, i, &products, &others);
        int64_t cols = n->shape.ndim ? n->shape.d[n->shape.ndim - 1] : 1;
        int big = ir_numel(&n->shape) >= OP_TILE_ROWS * cols;
        int sixteen = products > 0 && (!others || big);
        /* so is a product's result of OP_TILE_ROWS rows or more that its readers only add, as
         * PyTorch stores it (the encoder's W2 result before its LayerNorm: written
         * and read in half the bytes; docs/notes/2026-11-28-s28.md) */
        sixteen |= big && base_dtype_size(n->dtype) == 2 && product_only_added(g, i);
        if (n->op != IR_OP_INPUT && !is_out && !sixteen) p->store[i] = MG_F32;
        buffer_layout(p, i, !is_out && n->op == IR_OP_KERNEL);
        p->view[i] = -1, p->voff[i] = 0;
        if (!is_out && p->buf[i] >= 0 && p->opts.views) make_view(p, i);
    }
}
