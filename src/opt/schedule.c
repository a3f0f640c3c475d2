/* opt/schedule: operator scheduling by depth. The steps of a block graph (stored nodes,
 * accumulator updates, savers) in the order they run, split into a prologue, the loop body
 * and an epilogue, with a __syncthreads() only where a step reads one of the same phase;
 * then the in-place conversions of f16 tiles, which need to know where readers run. */
#include <limits.h>

#include "opt_internal.h"

/* fixed[i]: node i has the same value in every iteration: a constant, a tile that does not
 * move with the loop, or an operator (no accumulator) of such values only */
void op_fixed_values(const ir_graph *b, int *fixed) {
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        if (n->op == IR_OP_CONST) fixed[i] = 1;
        else if (n->op == IR_OP_ITER) fixed[i] = n->fmap < 0;
        else if (n->op == IR_OP_ACCUM || n->op == IR_OP_SAVE) fixed[i] = 0;
        else {
            fixed[i] = 1;
            for (int a = 0; a < n->n_in; a++) fixed[i] &= fixed[n->in[a]];
        }
    }
}

/* phase of node i's step; -1 for nodes that have no step of their own. With hoisting, fixed
 * tiles load before the loop and what is computed from them alone (QKNorm's rms(Q)) is
 * computed there once (loop-invariant code motion), not in every iteration. */
static int phase_of(const ir_graph *b, const op_kernel *k, const int *cls, const int *fixed, int i, int hoist) {
    const ir_node *n = &b->nodes[i];
    if (n->op == IR_OP_ITER) return hoist && n->fmap < 0 ? PH_PRE : PH_LOOP; /* fixed tiles load once */
    if (k->t[i].fuse.regacc >= 0) return n->op == IR_OP_MATMUL ? PH_LOOP : -1; /* stored after the loop */
    if (n->op == IR_OP_ACCUM) return k->t[i].mat ? PH_LOOP : -1;
    if (n->op == IR_OP_SAVE) return PH_POST;
    if (!k->t[i].mat) return -1;
    if (cls[i] == IR_LOOP && hoist && fixed[i] && b->forloop > 1) return PH_PRE;
    return cls[i] == IR_INVARIANT ? PH_PRE : cls[i] == IR_LOOP ? PH_LOOP : PH_POST;
}

/* The depth a step of phase P needs to read node j: one more than j's if j is a step of
 * phase P; through an inlined node (no step), the most its own operands need; 0 for a step of
 * another phase (a barrier separates phases) and for a register accumulator (stored after
 * the loop, before a barrier). */
static int need(const ir_graph *b, const int *ph, const int *depth, int j, int P) {
    if (ph[j] >= 0) return ph[j] == P ? depth[j] + 1 : 0;
    const ir_node *n = &b->nodes[j];
    if (n->op == IR_OP_ACCUM && b->forloop > 1) return 0;
    int d = 0;
    for (int a = 0; a < n->n_in; a++) {
        int x = need(b, ph, depth, n->in[a], P);
        d = x > d ? x : d;
    }
    return d;
}

/* depth[i] of each step: 0 when it reads no step of its own phase, else one more than the
 * deepest such step it reads, directly or through inlined operators. */
static void depths(const ir_graph *b, const int *ph, int *depth) {
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        int d = 0;
        for (int a = 0; a < n->n_in && ph[i] >= 0; a++) {
            int x = need(b, ph, depth, n->in[a], ph[i]);
            d = x > d ? x : d;
        }
        depth[i] = d;
    }
}

/* Does step a come before step b: by (phase, depth, node)? */
static int step_before(int a, int b, const int *ph, const int *depth) {
    if (ph[a] != ph[b]) return ph[a] < ph[b];
    if (depth[a] != depth[b]) return depth[a] < depth[b];
    return a < b;
}

/* Orders the steps by (phase, depth, node) and places barriers: before each step whose depth
 * differs from the previous step's in the same phase (every step when depth scheduling is
 * off). level[] numbers the barrier intervals: the loop body gets its own, and a barrier
 * closes the prologue and each iteration. */
static void order_steps(op_kernel *k, const int *ph, const int *depth, int by_depth, int *level) {
    const ir_graph *b = k->body;
    k->n_steps = 0;
    for (int i = 0; i < b->n_nodes; i++)
        if (ph[i] >= 0) k->step[k->n_steps++] = i;
    /* insertion sort (a few dozen steps; no shared state: the search plans on many threads) */
    for (int a = 1; a < k->n_steps; a++)
        for (int c = a; c > 0 && step_before(k->step[c], k->step[c - 1], ph, depth); c--) {
            int tmp = k->step[c];
            k->step[c] = k->step[c - 1], k->step[c - 1] = tmp;
        }
    int lv = 0;
    k->loop_begin = k->loop_end = k->n_steps;
    k->n_barriers = 0;
    for (int t = 0; t < k->n_steps; t++) {
        int i = k->step[t], prev = t ? k->step[t - 1] : -1;
        int new_phase = prev < 0 || ph[prev] != ph[i];
        if (new_phase && ph[i] >= PH_LOOP && k->loop_begin == k->n_steps) k->loop_begin = t;
        if (new_phase && ph[i] == PH_POST) k->loop_end = t;
        k->sync[t] = !new_phase && (!by_depth || depth[prev] != depth[i]);
        if (new_phase && prev >= 0) lv++; /* the barrier closing the prologue or the loop */
        if (k->sync[t]) lv++, k->n_barriers++;
        level[i] = lv;
    }
    if (k->loop_begin > k->loop_end) k->loop_begin = k->loop_end;
    k->n_barriers += 2 + k->post_sync; /* after the prologue, each iteration, register stores */
}

/* Scheduling by depth (opt_internal.h): each node's phase (with `hoist`, fixed values before
 * the loop), the depths within each phase, then the steps' order and barriers. */
void op_schedule(op_kernel *k, const int *cls, const int *fixed, int hoist, int by_depth, int *ph, int *depth,
                 int *level) {
    const ir_graph *b = k->body;
    for (int i = 0; i < b->n_nodes; i++) ph[i] = phase_of(b, k, cls, fixed, i, hoist);
    depths(b, ph, depth);
    order_steps(k, ph, depth, by_depth, level);
}

/* ---- in-place conversions of f16 tiles ---- */

/* The first barrier interval that reads node i (through readers without a step of their
 * own, such as a matmul written by its epilogue); INT_MAX when nothing does. */
static int first_read(const ir_graph *b, const int *ph, const int *level, int i) {
    int lv = INT_MAX;
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            if (b->nodes[j].in[a] != i) continue;
            int r = ph[j] >= 0 ? level[j] : first_read(b, ph, level, j);
            if (r < lv) lv = r;
        }
    return lv;
}

/* Does every reader of i (through one-iteration accumulators read in its place) multiply
 * it on tensor cores in bf16 (a matmul of a 16-bit dtype whose other operand is stored
 * bf16 or f32), with each element loaded by more than one warp? */
static int bf16_readers(const ir_graph *b, const op_kernel *k, int i) {
    int any = 0;
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            if (b->nodes[j].in[a] != i) continue;
            const ir_node *m = &b->nodes[j];
            if (m->op == IR_OP_ACCUM && b->forloop == 1 && !k->t[j].mat) {
                if (!bf16_readers(b, k, j)) return 0;
                any = 1;
                continue;
            }
            int other = m->op == IR_OP_MATMUL ? m->in[1 - a] : -1;
            while (other >= 0 && k->t[other].chain.mm < 0 && b->nodes[other].op == IR_OP_ACCUM && !k->t[other].mat)
                other = b->nodes[other].in[0];
            /* a chain's scores are bf16 fragments in registers */
            int chained = other >= 0 && k->t[other].chain.mm >= 0;
            if (other < 0 || m->dtype == MG_F32 || (!chained && (!k->t[other].mat || !op_mm_bf16(&k->t[other], &k->t[other]))))
                return 0;
            /* warps that load each element: the product's 16-row tiles for a B operand, its
             * 32-column tiles for an A; with one, converting in place only adds a pass */
            int64_t M = m->shape.d[m->shape.ndim - 2], N = m->shape.d[m->shape.ndim - 1];
            if ((a == 1 ? (M + 15) / 16 : (N + 31) / 32) < 2) return 0;
            any = 1;
        }
    return any;
}

/* f16 iterator tiles that only bf16 tensor-core matmuls read (the other operand is not f16:
 * a computed bf16 or f32 tile) are converted to bf16 once, in place, instead of in every
 * warp's fragments: a pipelined tile in the loop's first barrier interval, which must not
 * read it; a hoisted one after the prologue's barrier, with one barrier of its own. */
void op_convert_tiles(const ir_graph *b, op_kernel *k, const int *ph, const int *level) {
    /* the first interval after the prologue: the loop's, or with no loop steps the next */
    int loop_first = INT_MAX;
    for (int s = 0; s < k->n_steps && loop_first == INT_MAX; s++)
        if (ph[k->step[s]] != PH_PRE) loop_first = level[k->step[s]];
    if (loop_first == INT_MAX) return;
    /* the barrier interval the in-loop conversion runs in: the first loop step's that is no
     * pipelined iterator; a tile read there gets a barrier after the conversion (cvt_sync) */
    int conv = INT_MAX;
    for (int s = k->loop_begin; s < k->loop_end && conv == INT_MAX; s++)
        if (!k->t[k->step[s]].pipe.stages) conv = level[k->step[s]];
    int *cv = base_calloc((size_t)b->n_nodes + 1, sizeof *cv), sync = 0;
    if (!cv) return; /* an optimisation only */
    for (int i = 0; i < b->n_nodes; i++) {
        const op_tensor *t = &k->t[i];
        if (b->nodes[i].op != IR_OP_ITER || !t->mat || t->store != MG_F16) continue;
        int fr = first_read(b, ph, level, i);
        if (t->pipe.stages > 0 ? fr > loop_first : ph[i] == PH_PRE && fr >= loop_first && fr != INT_MAX)
            cv[i] = bf16_readers(b, k, i);
        if (cv[i] && t->pipe.stages > 0 && fr <= conv) sync = 1;
    }
    /* applied after every decision: bf16_readers asks whether the other operand is f16 */
    for (int i = 0; i < b->n_nodes; i++)
        if (cv[i]) k->t[i].tc.cvt = 1, k->t[i].store = MG_BF16;
    k->cvt_sync = sync;
    base_free(cv);
}
