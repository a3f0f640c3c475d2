/* opt/inline: thread graphs (Mirage §4.2). Which nodes of a block graph are computed inside
 * their consumers, in registers, instead of stored in shared memory; and the helpers every
 * pass uses to count a node's readers. */
#include "opt_internal.h"

void op_pad4(const ir_shape *s, int64_t d[4]) {
    int off = 4 - s->ndim;
    for (int i = 0; i < 4; i++) d[i] = i < off ? 1 : s->d[i - off];
}

int op_is_elementwise(ir_op op) {
    return ir_ops[op].kind == IR_KIND_UNARY || ir_ops[op].kind == IR_KIND_BINARY;
}

enum { RECOMPUTE_MAX = 8 }; /* the most a recomputed value may cost (op_inlined) */

/* Cost of computing block-graph node i (inside node self's recomputation) in place of a
 * load: its elementwise operators (ops.def's cost column), through one-iteration accumulators. -1 when it reaches a leaf other than an iterator, a constant or a value it
 * broadcasts (a row's norm): a reduction or matmul of its size could itself be fused into
 * one reader (fuse.c) and is not recomputed; -1 too past RECOMPUTE_MAX, in cost or in depth
 * (one-iteration accumulators cost nothing), so the walk stays short on any graph. */
static int recompute_cost(const ir_graph *b, int i, int self, int64_t numel, const int *uses, const int *user,
                          int depth) {
    const ir_node *n = &b->nodes[i];
    if (n->op == IR_OP_ITER || n->op == IR_OP_CONST || ir_numel(&n->shape) < numel) return 0;
    if (n->op == IR_OP_ACCUM && b->forloop > 1) return 0; /* the loop's result, stored after it */
    int c;
    if (depth > RECOMPUTE_MAX) return -1; /* past any cost op_inlined accepts: a bounded walk */
    if (n->op == IR_OP_ACCUM && b->forloop == 1) c = 0;
    else if (op_is_elementwise(n->op) && (i == self || op_inlined(b, i, uses, user, 1)))
        c = ir_ops[n->op].cost;
    else return -1;
    for (int a = 0; a < n->n_in; a++) {
        int x = recompute_cost(b, n->in[a], self, numel, uses, user, depth + 1);
        if (x < 0 || c + x > RECOMPUTE_MAX) return -1;
        c += x;
    }
    return c;
}

/* Does elementwise node i read the loop's result (an accumulator, through elementwise
 * operators)? Then it runs once, after the loop, like every value of a one-iteration block. */
static int after_loop(const ir_graph *b, int i, int depth) {
    const ir_node *n = &b->nodes[i];
    if (n->op == IR_OP_ACCUM) return 1;
    if (!op_is_elementwise(n->op) || depth > RECOMPUTE_MAX) return 0;
    for (int a = 0; a < n->n_in; a++)
        if (after_loop(b, n->in[a], depth + 1)) return 1;
    return 0;
}

/* A thread graph (Mirage §4.2) as codegen sees it: an elementwise operator with one consumer
 * that reads its operands element by element (elementwise, reduction, accumulator, saver),
 * and does not broadcast it, is computed inside that consumer, in registers, and never
 * stored. With `recompute`, in a one-iteration block, or after the loop (a value of the
 * accumulators: a LayerNorm's x + A W + b in its product's kernel), so is a cheap one
 * (recompute_cost at most 8) with up to 3 such consumers: each computes it again, which costs a few operations
 * where storing it costs a barrier (nTrans's x - h and its normalised sum: 3.3 -> 2.8 us
 * measured by hand, bench/micro/small.cu). */
int op_inlined(const ir_graph *b, int i, const int *uses, const int *user, int recompute) {
    if (!op_is_elementwise(b->nodes[i].op)) return 0;
    if (uses[i] > 1 && (!recompute || (b->forloop != 1 && !after_loop(b, i, 0)) || uses[i] > 3)) return 0;
    int64_t numel = ir_numel(&b->nodes[i].shape), seen = 0;
    for (int j = i + 1; j < b->n_nodes && seen < uses[i]; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            if (b->nodes[j].in[a] != i) continue;
            ir_op c = b->nodes[j].op;
            /* a value its consumer broadcasts (a row's norm) is computed once, not once per read */
            if (numel < ir_numel(&b->nodes[j].shape)) return 0;
            if (!op_is_elementwise(c) && ir_ops[c].kind != IR_KIND_REDUCE && c != IR_OP_ACCUM && c != IR_OP_SAVE)
                return 0;
            seen++;
        }
    if (seen != uses[i]) return 0; /* an output of the block graph */
    if (uses[i] == 1) return 1;
    int cost = recompute_cost(b, i, i, numel, uses, user, 0);
    return cost >= 0 && cost <= RECOMPUTE_MAX;
}

void op_count_uses(const ir_graph *g, int *uses, int *user) {
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++) uses[g->nodes[i].in[k]]++, user[g->nodes[i].in[k]] = i;
    for (int k = 0; k < g->n_outputs; k++) uses[g->outputs[k]] += 2; /* outputs are stored */
}

/* Stores (mat = 1) every node read in place whose expression would inline OP_MAX_INLINE_DEPTH
 * levels or more: depth[i], the levels under node i read in place, in one pass in node order
 * (operands come first). A stored node is the general case of every kind read in place. */
static void cap_depth(const ir_graph *b, op_kernel *k, int *depth) {
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        depth[i] = 0;
        for (int a = 0; a < n->n_in; a++)
            if (!k->t[n->in[a]].mat && depth[n->in[a]] + 1 > depth[i]) depth[i] = depth[n->in[a]] + 1;
        if (!k->t[i].mat && depth[i] >= OP_MAX_INLINE_DEPTH && n->op != IR_OP_CONST && n->op != IR_OP_SAVE)
            k->t[i].mat = 1, depth[i] = 0;
    }
}

void op_thread_graph(const ir_graph *b, op_kernel *k, const int *uses, const int *user, int *scratch,
                     int recompute) {
    int n = b->n_nodes;
    for (int i = 0; i < n; i++) {
        ir_op op = b->nodes[i].op;
        k->t[i].mat = op != IR_OP_CONST && op != IR_OP_SAVE && !op_inlined(b, i, uses, user, recompute);
    }
    /* a reshape of a stored tile read element by element by its one consumer is an index
     * mapping inside that consumer, never a copy */
    for (int i = 0; i < n; i++) {
        const ir_node *r = &b->nodes[i];
        if (r->op != IR_OP_RESHAPE || uses[i] != 1 || !k->t[r->in[0]].mat) continue;
        ir_op c = b->nodes[user[i]].op;
        if (op_is_elementwise(c) || ir_ops[c].kind == IR_KIND_REDUCE || c == IR_OP_ACCUM || c == IR_OP_SAVE)
            k->t[i].mat = 0;
    }
    /* over a loop of one iteration an accumulator is its operand: read in its place (a
     * matmul reads a stored operand's tile directly; an inlined one is stored as before) */
    op_matmul_readers(b, scratch);
    for (int i = 0; i < n && b->forloop == 1; i++)
        if (b->nodes[i].op == IR_OP_ACCUM && (k->t[b->nodes[i].in[0]].mat || !scratch[i]))
            k->t[i].mat = 0;
    cap_depth(b, k, scratch);
}
