/* opt/plan: the μGraph optimizer's first passes (Mirage §6) over a kernel graph: buffers and
 * fusion at kernel level, then for each block graph the layout pass, operator scheduling by
 * depth and shared-memory planning with reuse. The result (op_plan, opt.h) is all codegen/
 * needs; it decides nothing itself. */
#include <limits.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"

const op_opts op_opts_default = {1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0};

enum { MAX_STAGES = 4 }; /* deepest software pipeline tried for iterator tiles */

enum { PH_PRE, PH_LOOP, PH_POST }; /* phases of a block's program, in run order */

void op_pad4(const ir_shape *s, int64_t d[4]) {
    int off = 4 - s->ndim;
    for (int i = 0; i < 4; i++) d[i] = i < off ? 1 : s->d[i - off];
}

static int is_elementwise(ir_op op) {
    return ir_ops[op].kind == IR_KIND_UNARY || ir_ops[op].kind == IR_KIND_BINARY;
}

/* Cost of computing block-graph node i (inside node self's recomputation) in place of a
 * load: its elementwise operators, through one-iteration accumulators; exp, silu and sqrt
 * count 4. -1 when it reaches a leaf other than an iterator, a constant or a value it
 * broadcasts (a row's norm): a reduction or matmul of its size could itself be fused into
 * one reader (fuse_reductions) and is not recomputed. */
static int recompute_cost(const ir_graph *b, int i, int self, int64_t numel, const int *uses, const int *user) {
    const ir_node *n = &b->nodes[i];
    if (n->op == IR_OP_ITER || n->op == IR_OP_CONST || ir_numel(&n->shape) < numel) return 0;
    int c;
    if (n->op == IR_OP_ACCUM && b->forloop == 1) c = 0;
    else if (is_elementwise(n->op) && (i == self || op_inlined(b, i, uses, user, 1)))
        c = n->op == IR_OP_EXP || n->op == IR_OP_SILU || n->op == IR_OP_SQRT ? 4 : 1;
    else return -1;
    for (int a = 0; a < n->n_in; a++) {
        int x = recompute_cost(b, n->in[a], self, numel, uses, user);
        if (x < 0) return -1;
        c += x;
    }
    return c;
}

/* A thread graph (Mirage §4.2) as codegen sees it: an elementwise operator with one consumer
 * that reads its operands element by element (elementwise, reduction, accumulator, saver),
 * and does not broadcast it, is computed inside that consumer, in registers, and never
 * stored. With `recompute`, in a one-iteration block so is a cheap one (recompute_cost at
 * most 8) with up to 3 such consumers: each computes it again, which costs a few operations
 * where storing it costs a barrier (nTrans's x - h and its normalised sum: 3.3 -> 2.8 us
 * measured by hand, bench/micro/small.cu). */
int op_inlined(const ir_graph *b, int i, const int *uses, const int *user, int recompute) {
    if (!is_elementwise(b->nodes[i].op)) return 0;
    if (uses[i] > 1 && (!recompute || b->forloop != 1 || uses[i] > 3)) return 0;
    int64_t numel = ir_numel(&b->nodes[i].shape), seen = 0;
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            if (b->nodes[j].in[a] != i) continue;
            ir_op c = b->nodes[j].op;
            /* a value its consumer broadcasts (a row's norm) is computed once, not once per read */
            if (numel < ir_numel(&b->nodes[j].shape)) return 0;
            if (!is_elementwise(c) && ir_ops[c].kind != IR_KIND_REDUCE && c != IR_OP_ACCUM && c != IR_OP_SAVE)
                return 0;
            seen++;
        }
    if (seen != uses[i]) return 0; /* an output of the block graph */
    if (uses[i] == 1) return 1;
    int cost = recompute_cost(b, i, i, numel, uses, user);
    return cost >= 0 && cost <= 8;
}

static void count_uses(const ir_graph *g, int *uses, int *user) {
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++) uses[g->nodes[i].in[k]]++, user[g->nodes[i].in[k]] = i;
    for (int k = 0; k < g->n_outputs; k++) uses[g->outputs[k]] += 2; /* outputs are stored */
}

/* ---- layout pass ---- */

/* Is every consumer of i a matmul, and does it read i as its operand `side` (-1: either)? */
static int only_matmul(const ir_graph *b, int i, int side) {
    int any = 0;
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int k = 0; k < b->nodes[j].n_in; k++) {
            if (b->nodes[j].in[k] != i) continue;
            if (b->nodes[j].op != IR_OP_MATMUL || (side >= 0 && k != side)) return 0;
            any = 1;
        }
    return any;
}

/* Does some matmul read i? (Its rows then get padded: a fragment load reads 8 rows at once.) */
static int some_matmul(const ir_graph *b, int i) {
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int k = 0; k < b->nodes[j].n_in; k++) {
            if (b->nodes[j].in[k] != i) continue;
            if (b->nodes[j].op == IR_OP_MATMUL) return 1;
            /* a one-iteration accumulator may be read in place of i (see plan_kernel) */
            if (b->nodes[j].op == IR_OP_ACCUM && b->forloop == 1 && some_matmul(b, j)) return 1;
        }
    return 0;
}

/* Does a reduction read i (directly or through elementwise operators computed inside it)
 * along a dim other than the last? Its lanes then read down a column: rows a multiple of
 * 128 bytes apart put them all in one bank, so such a tile gets padded rows like a matmul
 * operand (QKNorm's K tile, normalised over its rows). */
static int column_reduced(const ir_graph *b, const op_kernel *k, int i) {
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            if (b->nodes[j].in[a] != i) continue;
            const ir_node *r = &b->nodes[j];
            if (ir_ops[r->op].kind == IR_KIND_REDUCE && r->dim != b->nodes[i].shape.ndim - 1) return 1;
            if (is_elementwise(r->op) && !k->t[j].mat && column_reduced(b, k, j)) return 1;
        }
    return 0;
}

/* Row-major strides, or column-major over the last two dims; rows padded by 16 bytes when a
 * row is a multiple of 128 bytes (32 banks of 4 bytes), so the 8 rows a tensor-core fragment
 * load touches fall in different banks. Dims of size 1 get stride 0. */
static void layout(op_tensor *t, int colmajor, int pad) {
    int64_t esz = (int64_t)base_dtype_size(t->store), *d = t->dim, st[4];
    int inner = colmajor ? 2 : 3, outer = colmajor ? 3 : 2;
    int64_t row = d[inner];
    if (pad && row * esz % 128 == 0) row += 16 / esz;
    st[inner] = 1, st[outer] = row;
    st[1] = row * d[outer]; /* dims 0 and 1 hold whole matrices */
    st[0] = st[1] * d[1];
    t->colmajor = colmajor;
    t->bytes = ((st[0] * d[0] * esz) + 15) & ~(int64_t)15;
    for (int k = 0; k < 4; k++) t->stride[k] = d[k] == 1 ? 0 : st[k];
}

/* May computed tile i be stored in bf16? When some matmul reads it and every reader is a
 * tensor-core matmul (not f32: the product rounds an f32 operand to bf16 anyway, so nothing
 * is lost for it), a reduction (which then adds the values the matmul multiplies), or a
 * one-iteration accumulator read in i's place whose readers are such. Half the bytes, and
 * fragments by ldmatrix instead of f32 loads and conversions. */
static int bf16_tile(const ir_graph *b, const op_kernel *k, int i) {
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            if (b->nodes[j].in[a] != i) continue;
            const ir_node *r = &b->nodes[j];
            int ok = r->op == IR_OP_MATMUL ? r->dtype != MG_F32
                     : ir_ops[r->op].kind == IR_KIND_REDUCE ? 1
                     : r->op == IR_OP_ACCUM && b->forloop == 1 && !k->t[j].mat ? bf16_tile(b, k, j)
                                                                                : 0;
            if (!ok) return 0;
        }
    return some_matmul(b, i);
}

static void choose_layouts(const ir_graph *b, op_kernel *k, const mg_dtype *kin_store, const int *kin_col,
                           int on, int swizzle) {
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        op_tensor *t = &k->t[i];
        op_pad4(&n->shape, t->dim);
        if (!t->mat) continue;
        int mm = some_matmul(b, i);
        /* Iterator tiles keep their source's type, and so do concatenations, reshapes and
         * repeats of tiles that all have it (they move values, exactly); computed values stay
         * f32 like the reference's (an exp can pass f16's range before a sum brings it back). */
        /* (an accumulator is stored bf16 only when a matmul's epilogue writes it whole) */
        int acc_ok = n->op != IR_OP_ACCUM || (b->forloop == 1 && t->mm_in >= 0);
        if (n->op == IR_OP_ITER) t->store = kin_store[n->index];
        else t->store = on && acc_ok && bf16_tile(b, k, i) ? MG_BF16 : MG_F32;
        if (ir_ops[n->op].kind == IR_KIND_LAYOUT) {
            mg_dtype st = k->t[n->in[0]].mat ? k->t[n->in[0]].store : MG_F32;
            for (int a = 1; a < n->n_in; a++)
                if (!k->t[n->in[a]].mat || k->t[n->in[a]].store != st) st = MG_F32;
            t->store = st;
        }
        /* iterator tiles follow their source so their loads from device memory stay
         * contiguous: row-major, or column-major from a buffer whose next-to-last dim is the
         * contiguous one (a split-K partial laid out splits outermost), read by no matmul
         * or only as its B operand; such a tile's rows are padded like a matmul operand's,
         * so a reduction along its columns reads 32 banks */
        int col = on && n->shape.ndim >= 2 &&
                  (n->op == IR_OP_ITER ? kin_col[n->index] && (!mm || only_matmul(b, i, 1)) : only_matmul(b, i, 1));
        /* an elementwise value over a stored tile of its shape keeps that tile's layout: its
         * threads then read and write along the same rows (QKNorm's K / rms(K), a B operand
         * over a row-major K tile, transposed in the writing would conflict in banks) */
        if (col && is_elementwise(n->op))
            for (int a = 0; a < n->n_in; a++) {
                const op_tensor *x = &k->t[n->in[a]];
                if (x->mat && ir_numel(&b->nodes[n->in[a]].shape) == ir_numel(&n->shape) && !x->colmajor) col = 0;
            }
        /* a row-major 16-bit iterator tile read only as a B operand (ldmatrix.trans, 8 rows of
         * 16 bytes at a time) is swizzled instead of padded: padded rows cost its copies
         * a second 128-byte line each (measured on the weight stream: 19.8 us unpadded, 22.1
         * padded, bench/micro/stream.cu) */
        int64_t rb = t->dim[3] * (int64_t)base_dtype_size(t->store);
        t->swz = 0;
        if (on && swizzle && n->op == IR_OP_ITER && !col && t->store != MG_F32 && only_matmul(b, i, 1) &&
            t->dim[2] % 16 == 0 && (rb % 128 == 0 || rb == 64)) {
            t->swz = rb == 64 ? 2 : 1;
            layout(t, 0, 0);
            continue;
        }
        /* padded: matmul operands (ldmatrix reads 8 rows), tiles reduced down their columns,
         * and matmul results, which mma fragments write 8 rows at a time (register
         * accumulators get the same once known: planner after find_chains) */
        layout(t, col, on && (mm || n->op == IR_OP_MATMUL || (col && n->op == IR_OP_ITER) || column_reduced(b, k, i)));
    }
}

/* ---- operator scheduling by depth ---- */

/* fixed[i]: node i has the same value in every iteration: a constant, a tile that does not
 * move with the loop, or an operator (no accumulator) of such values only */
static void fixed_values(const ir_graph *b, int *fixed) {
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
    if (k->t[i].reg_peer >= 0) return n->op == IR_OP_MATMUL ? PH_LOOP : -1; /* stored after the loop */
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
static void schedule(op_kernel *k, const int *ph, const int *depth, int by_depth, int *level) {
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
            while (other >= 0 && k->t[other].chain_mm < 0 && b->nodes[other].op == IR_OP_ACCUM && !k->t[other].mat)
                other = b->nodes[other].in[0];
            /* a chain's scores are bf16 fragments in registers */
            int chained = other >= 0 && k->t[other].chain_mm >= 0;
            if (other < 0 || m->dtype == MG_F32 || (!chained && (!k->t[other].mat || k->t[other].store == MG_F16)))
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
static void convert_tiles(const ir_graph *b, op_kernel *k, const int *ph, const int *level) {
    /* the first interval after the prologue: the loop's, or with no loop steps the next */
    int loop_first = INT_MAX;
    for (int s = 0; s < k->n_steps && loop_first == INT_MAX; s++)
        if (ph[k->step[s]] != PH_PRE) loop_first = level[k->step[s]];
    if (loop_first == INT_MAX) return;
    /* the barrier interval the in-loop conversion runs in: the first loop step's that is no
     * pipelined iterator; a tile read there gets a barrier after the conversion (cvt_sync) */
    int conv = INT_MAX;
    for (int s = k->loop_begin; s < k->loop_end && conv == INT_MAX; s++)
        if (!k->t[k->step[s]].stages) conv = level[k->step[s]];
    int *cv = base_calloc((size_t)b->n_nodes + 1, sizeof *cv), sync = 0;
    if (!cv) return; /* an optimisation only */
    for (int i = 0; i < b->n_nodes; i++) {
        const op_tensor *t = &k->t[i];
        if (b->nodes[i].op != IR_OP_ITER || !t->mat || t->store != MG_F16) continue;
        int fr = first_read(b, ph, level, i);
        if (t->stages > 0 ? fr > loop_first : ph[i] == PH_PRE && fr >= loop_first && fr != INT_MAX)
            cv[i] = bf16_readers(b, k, i);
        if (cv[i] && t->stages > 0 && fr <= conv) sync = 1;
    }
    /* applied after every decision: bf16_readers asks whether the other operand is f16 */
    for (int i = 0; i < b->n_nodes; i++)
        if (cv[i]) k->t[i].cvt = 1, k->t[i].store = MG_BF16;
    k->cvt_sync = sync;
    base_free(cv);
}

/* ---- memory planning ---- */

/* Level at which node j is last read. A value made before the loop and read inside it must
 * survive every iteration, so it lives to the loop's last level. */
static void live_ranges(op_kernel *k, const int *ph, const int *level, int loop_first, int loop_last) {
    const ir_graph *b = k->body;
    int n = b->n_nodes;
    int *at = base_alloc((size_t)n * sizeof *at); /* level where node i's value is computed */
    if (!at) return;
    /* a node with no step is computed wherever it is read: the latest of its readers (an
     * inlined one-iteration accumulator can have several) */
    for (int i = n - 1; i >= 0; i--) {
        at[i] = ph[i] >= 0 ? level[i] : 0;
        if (ph[i] >= 0) continue;
        for (int j = i + 1; j < n; j++)
            for (int a = 0; a < b->nodes[j].n_in; a++)
                if (b->nodes[j].in[a] == i && at[j] > at[i]) at[i] = at[j];
    }
    for (int i = 0; i < n; i++) {
        op_tensor *t = &k->t[i];
        t->level = t->last = at[i];
        /* zeroed in the prologue; pipelined tiles are loaded from the kernel's start */
        if (b->nodes[i].op == IR_OP_ACCUM || t->stages) t->level = 0;
    }
    /* a register accumulator is stored after the loop's last barrier */
    int after = loop_last + 1;
    for (int j = 0; j < n; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            op_tensor *t = &k->t[b->nodes[j].in[a]];
            int l = at[j];
            if (t->level < loop_first && l >= loop_first && l <= loop_last) l = loop_last;
            if (l > t->last) t->last = l;
        }
    for (int i = 0; i < n; i++) {
        op_tensor *t = &k->t[i];
        if (b->nodes[i].op == IR_OP_ACCUM && t->reg_peer >= 0) {
            t->level = after;
            if (t->last < after) t->last = after;
        } else if ((b->nodes[i].op == IR_OP_ACCUM || t->stages) && t->last < loop_last) t->last = loop_last;
    }
    base_free(at);
}

static int overlap(const op_tensor *a, const op_tensor *b) {
    return !(a->last < b->level || b->last < a->level);
}

/* First fit, largest first: each tensor goes at the lowest 16-byte aligned offset where it
 * does not collide with a placed tensor whose live range overlaps its own (all overlap when
 * reuse is off). */
static int64_t place(op_kernel *k, int reuse) {
    int n = k->body->n_nodes, m = 0;
    int *ord = base_alloc((size_t)n * sizeof *ord + 1);
    if (!ord) return -1;
    for (int i = 0; i < n; i++)
        if (k->t[i].mat) ord[m++] = i;
    for (int a = 1; a < m; a++) /* insertion sort by bytes, descending; stable */
        for (int c = a; c > 0 && k->t[ord[c]].bytes > k->t[ord[c - 1]].bytes; c--) {
            int tmp = ord[c];
            ord[c] = ord[c - 1], ord[c - 1] = tmp;
        }
    int64_t top = 0;
    for (int a = 0; a < m; a++) {
        op_tensor *t = &k->t[ord[a]];
        int64_t off = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (int c = 0; c < a; c++) {
                const op_tensor *u = &k->t[ord[c]];
                if ((reuse && !overlap(t, u)) || off >= u->off + u->bytes || u->off >= off + t->bytes)
                    continue;
                off = u->off + u->bytes, moved = 1;
            }
        }
        t->off = off;
        if (off + t->bytes > top) top = off + t->bytes;
    }
    base_free(ord);
    return top;
}

/* Moves the pipelined iterators out of the loop's steps into load[], puts the barrier after
 * the wait for them before the loop's first step, and recounts the barriers. Splitting a
 * barrier interval only shortens live ranges, so the memory plan made before stays valid. */
static void pipeline_steps(op_kernel *k) {
    int m = 0, begin = k->loop_begin, end = k->loop_end;
    for (int s = 0; s < k->n_steps; s++) {
        int i = k->step[s];
        if (k->t[i].stages) {
            k->load[k->n_loads++] = i;
            begin -= s < k->loop_begin, end -= s < k->loop_end;
            continue;
        }
        k->step[m] = i, k->sync[m] = k->sync[s], m++;
    }
    k->n_steps = m, k->loop_begin = begin, k->loop_end = end;
    if (begin < end) k->sync[begin] = 1;
    k->n_barriers = 2 + k->post_sync + k->cvt_sync;
    for (int s = 0; s < m; s++) k->n_barriers += k->sync[s];
}

/* ---- reduction epilogues ---- */

/* The operand of elementwise node u that is not a constant, or -1 when both are not. */
static int sole_operand(const ir_graph *b, int u) {
    const ir_node *n = &b->nodes[u];
    int x = -1;
    for (int a = 0; a < n->n_in; a++) {
        if (b->nodes[n->in[a]].op == IR_OP_CONST) continue;
        if (x >= 0) return -1;
        x = n->in[a];
    }
    return x;
}

/* Stored elementwise values computed from one reduction or matmul alone, through inlined
 * operators and constants, with as many elements: the reducing lanes compute a norm's
 * sqrt(sum(x^2) / n) right away (red_in); a matmul's tiles are written through exp (mm_in).
 * The reduction or matmul itself is then never stored nor followed by a barrier. */
static void fuse_reductions(const ir_graph *b, op_kernel *k, const int *uses) {
    for (int u = 0; u < b->n_nodes; u++) {
        ir_kind kd = ir_ops[b->nodes[u].op].kind;
        /* a stored one-iteration accumulator is its operand's value, as elementwise */
        int ident = b->nodes[u].op == IR_OP_ACCUM && b->forloop == 1;
        if (!k->t[u].mat || (kd != IR_KIND_UNARY && kd != IR_KIND_BINARY && !ident)) continue;
        int x = ident ? b->nodes[u].in[0] : sole_operand(b, u);
        while (x >= 0 && !k->t[x].mat) {
            ir_kind xk = ir_ops[b->nodes[x].op].kind;
            x = xk == IR_KIND_UNARY || xk == IR_KIND_BINARY ? sole_operand(b, x) : -1;
        }
        if (x < 0 || uses[x] != 1 || ir_numel(&b->nodes[x].shape) != ir_numel(&b->nodes[u].shape)) continue;
        if (ir_ops[b->nodes[x].op].kind == IR_KIND_REDUCE) k->t[u].red_in = x, k->t[x].mat = 0;
        else if (b->nodes[x].op == IR_OP_MATMUL && b->nodes[x].shape.ndim == b->nodes[u].shape.ndim)
            k->t[u].mm_in = x, k->t[x].mat = 0;
    }
}

/* An accumulator summing a reduction it alone reads (the exp-sum of attention): the reducing
 * lanes add to it directly (red_in), with no stored reduction and no barrier between. */
static void fuse_accum_reductions(const ir_graph *b, op_kernel *k, const int *uses) {
    for (int a = 0; a < b->n_nodes; a++) {
        const ir_node *n = &b->nodes[a];
        if (n->op != IR_OP_ACCUM || n->fmap >= 0 || !k->t[a].mat || b->forloop < 2) continue;
        int x = n->in[0];
        if (ir_ops[b->nodes[x].op].kind != IR_KIND_REDUCE || uses[x] != 1 || !k->t[x].mat) continue;
        k->t[a].red_in = x, k->t[x].mat = 0;
    }
}

/* ---- block size ---- */

/* Threads per block: the block graph's own, or (opts.threads) enough that the widest step has
 * about 8 elements per thread (an iterator's tile counted in 16-byte vectors, a reduction by
 * what it reads in a loop's iteration or when it computes its operand in place), a power of
 * two from 128 to 512: a block that works alone on an SM (nTrans: one row of 4096) then has
 * 16 warps to hide latency instead of 4. In a streaming loop the
 * iterations' steps count: tiles that stream in ahead (cp.async, `pipelined`) need no threads
 * of their own, an accumulator concatenating the iterations writes one slice a step, and
 * work done once after the loop counts once per iteration's share (RMSNorm+Linear b=1: 23.4
 * us at 128 threads, 25.4 at 512; b=8 sums its X tile's squares in every iteration and
 * keeps 512). A loop streaming a swizzled tile to tensor cores (a weight stream) takes 256:
 * its copies' issue needs warps, and the rest of the step does not need more (measured
 * with swizzled W: RMSNorm+Linear b=1 23.5 us at 256, 24.8 at 128; b=8 23.6 at 256, 24.7 at
 * 512; bench/micro/stream.cu alone: 19.8 at 256, 25.1 at 128). Only block graphs written
 * for whole warps change. */
static int block_threads(const ir_graph *b, const op_kernel *k, const int *cls, int on, int pipelined) {
    if (!on || b->threads % 32 || b->threads > 512) return b->threads;
    int64_t widest = 0, F = b->forloop;
    for (int i = 0; i < b->n_nodes && pipelined && F > 1 && b->threads <= 256; i++)
        if (b->nodes[i].op == IR_OP_ITER && b->nodes[i].fmap >= 0 && k->t[i].swz) return 256;
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        int red = ir_ops[n->op].kind == IR_KIND_REDUCE && ((F > 1 && cls[i] == IR_LOOP) || !k->t[n->in[0]].mat);
        if (!k->t[i].mat && n->op != IR_OP_MATMUL && !red) continue;
        if (pipelined && n->op == IR_OP_ITER && n->fmap >= 0 && F > 1) continue;
        int64_t el = ir_numel(red ? &b->nodes[n->in[0]].shape : &n->shape);
        if (n->op == IR_OP_ITER) el /= 8;
        if (n->op == IR_OP_ACCUM && n->fmap >= 0) el /= F;
        else if (F > 1 && cls[i] != IR_LOOP) el /= F;
        if (el > widest) widest = el;
    }
    int t = 128;
    while (t < 512 && widest >= (int64_t)t * 2 * 8) t *= 2;
    return t > b->threads ? t : b->threads;
}

/* ---- register accumulation ---- */

/* A matmul whose only reader is an accumulator summing it over the loop, on whole warps:
 * codegen keeps the sum in each warp's registers (tensor-core fragments) for the whole loop
 * and stores it to the accumulator's shared memory once, after the loop. The matmul's own
 * tile is never stored. */
static void register_accumulators(const ir_graph *b, op_kernel *k, const int *uses, const int *user) {
    if (b->threads % 32) return;
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        if (n->op != IR_OP_MATMUL || uses[i] != 1 || n->dtype == MG_F32) continue;
        const ir_node *a = &b->nodes[user[i]];
        if (a->op != IR_OP_ACCUM || a->fmap >= 0 || !k->t[user[i]].mat) continue;
        k->t[i].mat = 0;
        k->t[i].reg_peer = user[i], k->t[user[i]].reg_peer = i;
        k->post_sync = 1;
    }
}

/* ---- attention chains ---- */

/* The step that writes sum s: s itself when stored in f32 (*mode 2), or the f32 accumulator
 * adding it (red_in, *mode 1); -1 otherwise. */
static int sum_writer(const ir_graph *b, const op_kernel *k, int s, int *mode) {
    if (k->t[s].mat) {
        *mode = 2;
        return k->t[s].red_in < 0 && k->t[s].store == MG_F32 ? s : -1;
    }
    for (int u = s + 1; u < b->n_nodes; u++)
        if (k->t[u].red_in == s) {
            *mode = 1;
            return b->nodes[u].op == IR_OP_ACCUM && b->nodes[u].fmap < 0 && k->t[u].mat && k->t[u].store == MG_F32 ? u : -1;
        }
    return -1;
}

/* The step that writes matmul m's value: m (stored, or summed in registers), or the
 * elementwise step written through it (mm_in); -1 otherwise. */
static int mm_writer(const ir_graph *b, const op_kernel *k, int m) {
    if (k->t[m].mat || k->t[m].reg_peer >= 0) return m;
    for (int u = m + 1; u < b->n_nodes; u++)
        if (k->t[u].mm_in == m) return u;
    return -1;
}

/* The iterator tile matmul operand x reads (through one-iteration accumulators read in its
 * place) when that product is its only reader; else -1. */
static int lone_iter(const ir_graph *b, const op_kernel *k, const int *uses, int x) {
    while (b->nodes[x].op == IR_OP_ACCUM && !k->t[x].mat && uses[x] == 1) x = b->nodes[x].in[0];
    return b->nodes[x].op == IR_OP_ITER && k->t[x].mat && uses[x] == 1 ? x : -1;
}

/* May iterator tile x, a chain product's [K, N] operand, take wgmma's core-matrix layout
 * (op_tensor.wg): one row-major matrix of a 16-bit type, K a multiple of 16 and N of 8,
 * copied in 16-byte pieces (its source's rows contiguous and 16-byte aligned)? */
static int wg_tile_ok(const op_plan *p, int knode, const ir_graph *b, const op_kernel *k, int x) {
    if (x < 0) return 0;
    const op_tensor *t = &k->t[x];
    const int64_t *fst = p->kst[p->g->nodes[knode].in[b->nodes[x].index]];
    if (t->colmajor || base_dtype_size(t->store) != 2 || t->dim[0] != 1 || t->dim[1] != 1) return 0;
    if (t->dim[2] % 16 || t->dim[3] % 8 || fst[3] != 1) return 0;
    for (int d = 0; d < 3; d++)
        if (t->dim[d] > 1 && fst[d] % 8) return 0;
    return 1;
}

/* Attention's chain (FlashAttention's inner step, Mirage's thread-graph fusion taken to the
 * warp): a tile e = f(A B) written through its matmul (mm_in) whose only readers are its row
 * sum and the A operand of one more tensor-core matmul e V. Each warp then computes its
 * 16-row strips of A B in registers, applies f, sums the rows and multiplies by V from
 * those registers: e is never stored (no shared memory, no barrier between the three). The
 * warps split e's columns into SK groups when the block has more warps than strips (their
 * partial sums meet in shared memory in a fixed order, so the products must be f32 sums
 * without an epilogue). Whether the two writers share a barrier interval is checked after
 * scheduling (chains_split). */
static void find_chains(const op_plan *p, int knode, const ir_graph *b, op_kernel *k, const int *uses, int size_threads) {
    if (k->threads % 32 || b->threads % 32) return;
    int chained = 0; /* the first chain sizes the block (size_threads), the others follow */
    int wg_taken = 0; /* one chain a kernel takes wgmma (wg_undo) */
    for (int e = 0; e < b->n_nodes; e++) {
        op_tensor *te = &k->t[e];
        int m1 = te->mm_in;
        if (m1 < 0 || !te->mat || uses[e] != 2 || b->nodes[m1].dtype == MG_F32) continue;
        int64_t M = te->dim[2], N1 = te->dim[3];
        const ir_shape *as = &b->nodes[b->nodes[m1].in[0]].shape;
        if (te->dim[0] != 1 || te->dim[1] != 1 || M % 16 || N1 % 32 || as->d[as->ndim - 1] % 16) continue;
        int s = -1, m2 = -1, bad = 0;
        for (int j = e + 1; j < b->n_nodes; j++)
            for (int a = 0; a < b->nodes[j].n_in; a++) {
                if (b->nodes[j].in[a] != e) continue;
                const ir_node *r = &b->nodes[j];
                if (r->op == IR_OP_SUM && a == 0 && r->dim == r->shape.ndim - 1 && s < 0) s = j;
                else if (r->op == IR_OP_MATMUL && a == 0 && r->dtype != MG_F32 && m2 < 0) m2 = j;
                else bad = 1;
            }
        if (bad || s < 0 || m2 < 0 || ir_numel(&b->nodes[s].shape) != M) continue;
        const op_tensor *to = &k->t[m2];
        int v = b->nodes[m2].in[1];
        while (b->nodes[v].op == IR_OP_ACCUM && !k->t[v].mat) v = b->nodes[v].in[0];
        if (!k->t[v].mat || to->dim[0] != 1 || to->dim[1] != 1 || to->dim[2] != M || to->dim[3] % 32) continue;
        int rs_mode, sw = sum_writer(b, k, s, &rs_mode), mw = mm_writer(b, k, m2);
        if (sw < 0 || mw < 0) continue;
        /* split groups add partial products: only into f32, with nothing applied after */
        int split_ok = mw == m2 && (to->reg_peer >= 0 || to->store == MG_F32);
        int64_t W = k->threads / 32, strips = M / 16, sk = 1, ts;
        /* wgmma: warpgroups of four warps hold four consecutive strips (G a multiple of
         * 4); B and V only the chain reads, whole tiles the copies lay out for it */
        int tb = lone_iter(b, k, uses, b->nodes[m1].in[1]), tv = lone_iter(b, k, uses, b->nodes[m2].in[1]);
        int wg = p->opts.wgmma && !wg_taken && tb >= 0 && tv >= 0 && wg_tile_ok(p, knode, b, k, tb) &&
                 wg_tile_ok(p, knode, b, k, tv);
        if (size_threads && !chained && wg && strips % 4 == 0 && strips <= 8) {
            /* one strip a warp up to 8 warps: B is read once a warpgroup, so more warps cost
             * no more shared-memory reads (16 warps leave 128 registers a thread: spills) */
            ts = 1, W = strips;
            k->threads = (int)W * 32;
        } else if (size_threads && !chained) {
            /* the block sized to the chain: two strips a warp (each B fragment serves both;
             * with fewer than 8 strips one, so no warp of the four holds only clamped rows)
             * and at most 128 score columns a warp (registers), up to 16 warps; split
             * groups only past that (their partial sums meet through shared memory) */
            ts = strips >= 8 ? 2 : 1; /* two only where that still leaves four warps */
            while ((strips + ts - 1) / ts > 16) ts++;
            while (split_ok && N1 / (32 * sk) > 4 && N1 % (64 * sk) == 0 && (strips + ts - 1) / ts * sk * 2 <= 16) sk *= 2;
            W = (strips + ts - 1) / ts * sk;
            k->threads = (int)(W < 4 ? 4 : W) * 32;
        } else {
            ts = (strips + W - 1) / W;
            if (strips < W && split_ok) {
                ts = 1;
                while (strips * sk * 2 <= W && N1 % (32 * sk * 2) == 0) sk *= 2;
            }
        }
        /* a chain's K and V keep padded rows: swizzled, GQA b=8 measured 25.4 -> 27.1 us
         * (both; 186 -> 254 registers) and 26.6 (V alone) */
        int kb = b->nodes[m1].in[1];
        while (b->nodes[kb].op == IR_OP_ACCUM && !k->t[kb].mat) kb = b->nodes[kb].in[0];
        if (k->t[kb].swz) k->t[kb].swz = 0, layout(&k->t[kb], 0, 1);
        if (k->t[v].swz) k->t[v].swz = 0, layout(&k->t[v], 0, 1);
        if (wg && (k->threads / 32 / sk) % 4 == 0) {
            te->chain_wg = wg_taken = 1, k->t[tb].wg = k->t[tv].wg = 1;
            layout(&k->t[tb], 0, 0), layout(&k->t[tv], 0, 0);
            /* A too when its rows come in whole warpgroups' 64 (chain_wg 2) */
            int ta = lone_iter(b, k, uses, b->nodes[m1].in[0]);
            if (ta >= 0 && M % 64 == 0 && wg_tile_ok(p, knode, b, k, ta) && k->t[ta].dim[2] == M)
                te->chain_wg = 2, k->t[ta].wg = 1, layout(&k->t[ta], 0, 0);
        }
        chained = 1;
        te->mat = 0;
        te->chain_mm = m2, te->chain_sum = s, te->chain_mw = mw, te->chain_sw = sw;
        te->chain_sk = (int)sk, te->chain_ts = (int)ts;
        k->t[m2].chain_of = k->t[mw].chain_of = k->t[sw].chain_of = e;
    }
}

/* Takes chain e's products off wgmma: its tiles keep their unpadded row-major layout. */
static void wg_undo(const ir_graph *b, op_kernel *k, int e) {
    if (!k->t[e].chain_wg) return;
    k->t[e].chain_wg = 0;
    for (int i = 0; i < b->n_nodes; i++) k->t[i].wg = 0; /* one chain a kernel takes wgmma */
}

/* Keeps wgmma only where the tiles' final types are the products' (known once the in-place
 * conversions are): V bf16 (P is bf16), B the type of the A B product. */
static void wg_check(const ir_graph *b, op_kernel *k, const int *uses) {
    for (int e = 0; e < b->n_nodes; e++) {
        const op_tensor *te = &k->t[e];
        if (!te->chain_wg) continue;
        const ir_node *m1 = &b->nodes[te->mm_in], *m2 = &b->nodes[te->chain_mm];
        int a = m1->in[0];
        while (b->nodes[a].op == IR_OP_ACCUM && !k->t[a].mat) a = b->nodes[a].in[0];
        mg_dtype ta = k->t[a].store, tb = k->t[lone_iter(b, k, uses, m1->in[1])].store;
        mg_dtype tv = k->t[lone_iter(b, k, uses, m2->in[1])].store;
        int bf = !(ta == MG_F16 && tb == MG_F16);
        if (tv != MG_BF16 || (bf && tb != MG_BF16)) wg_undo(b, k, e);
    }
}

/* Undoes the chains whose two writers landed in different barrier intervals (a step between
 * them would read a value written too early); 1 if any was undone (the steps change). */
static int chains_split(op_kernel *k, const int *level) {
    int undone = 0;
    for (int e = 0; e < k->body->n_nodes; e++) {
        op_tensor *te = &k->t[e];
        if (te->chain_mm < 0 || level[te->chain_mw] == level[te->chain_sw]) continue;
        k->t[te->chain_mm].chain_of = k->t[te->chain_mw].chain_of = k->t[te->chain_sw].chain_of = -1;
        te->chain_mm = te->chain_sum = te->chain_mw = te->chain_sw = -1;
        te->mat = 1, undone = 1;
        wg_undo(k->body, k, e);
    }
    return undone;
}

void op_regacc_split(const ir_graph *b, const op_kernel *k, int mm, int64_t *T, int *SK) {
    const op_tensor *h = k->t[mm].chain_of >= 0 ? &k->t[k->t[mm].chain_of] : NULL;
    if (h) { /* a chain's: TS strips a warp, each N2 / 32 tiles of 16x32 */
        *SK = h->chain_sk;
        *T = h->chain_ts * (k->t[mm].dim[3] / 32);
        return;
    }
    const ir_shape *as = &b->nodes[b->nodes[mm].in[0]].shape;
    const int64_t *d = k->t[mm].dim, K = as->d[as->ndim - 1];
    int64_t tiles = d[0] * d[1] * ((d[2] + 15) / 16) * ((d[3] + 31) / 32), warps = k->threads / 32;
    int sk = 1;
    while (tiles * sk * 2 <= warps && K % (16 * sk * 2) == 0) sk *= 2;
    *SK = sk;
    *T = (tiles + warps / sk - 1) / (warps / sk);
}

/* Scratch for the register accumulators' split-K groups (op_kernel.acc_scratch): SK - 1
 * dense copies of the largest such accumulator, after everything else, when it still fits
 * (measured: RMSNorm+Linear b=1's four groups adding one after another, three barriers, took
 * 0.77 us after the loop, side by side then one pass 0.26; notes §27). */
static void plan_acc_scratch(const ir_graph *b, op_kernel *k, const ir_device *dev) {
    int64_t need = 0;
    k->acc_scratch = -1;
    for (int i = 0; i < b->n_nodes; i++) {
        const op_tensor *t = &k->t[i];
        if (b->nodes[i].op != IR_OP_ACCUM || t->reg_peer < 0 || k->t[t->reg_peer].chain_of >= 0) continue;
        int64_t T;
        int SK;
        op_regacc_split(b, k, t->reg_peer, &T, &SK);
        int64_t bytes = (SK - 1) * t->dim[0] * t->dim[1] * t->dim[2] * t->dim[3] * 4;
        need = bytes > need ? bytes : need;
    }
    int64_t off = (k->smem + 15) / 16 * 16;
    if (need > 0 && off + need <= dev->smem_per_block) k->acc_scratch = off, k->smem = off + need;
}

/* Plans block graph b (the body of KERNEL node `knode` of g), with `threads` a block when > 0
 * (else the block-size pass decides). */
static mg_status plan_kernel(op_plan *p, mg_ctx *ctx, const ir_device *dev, int knode, op_kernel *k, int threads) {
    const ir_graph *b = p->g->nodes[knode].body;
    int n = b->n_nodes;
    k->body = b;
    k->t = arena_alloc(&p->mem, (size_t)n * sizeof *k->t);
    k->step = arena_alloc(&p->mem, (size_t)n * sizeof(int));
    k->sync = arena_alloc(&p->mem, (size_t)n * sizeof(int));
    k->load = arena_alloc(&p->mem, (size_t)n * sizeof(int));
    int *tmp = base_calloc((size_t)n * 7 + 1, sizeof(int));
    if (!k->t || !k->step || !k->sync || !k->load || !tmp) {
        base_free(tmp);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    int *cls = tmp, *uses = tmp + n, *user = tmp + 2 * n, *ph = tmp + 3 * n, *depth = tmp + 4 * n,
        *level = tmp + 5 * n, *fixed = tmp + 6 * n;
    ir_block_classes(b, cls);
    fixed_values(b, fixed);
    count_uses(b, uses, user);
    mg_dtype kin_store[IR_MAX_IN];
    int kin_col[IR_MAX_IN];
    for (int a = 0; a < p->g->nodes[knode].n_in; a++) {
        int x = p->g->nodes[knode].in[a];
        kin_store[a] = p->store[x];
        kin_col[a] = p->kst[x][2] == 1 && p->kst[x][3] > 1;
    }
    for (int i = 0; i < n; i++) {
        ir_op op = b->nodes[i].op;
        k->t[i].mat = op != IR_OP_CONST && op != IR_OP_SAVE && !op_inlined(b, i, uses, user, p->opts.depth);
        k->t[i].reg_peer = k->t[i].red_in = k->t[i].mm_in = -1;
        k->t[i].chain_of = k->t[i].chain_mm = k->t[i].chain_sum = k->t[i].chain_mw = k->t[i].chain_sw = -1;
        k->t[i].chain_wg = k->t[i].wg = k->t[i].swz = 0;
    }
    /* a reshape of a stored tile read element by element by its one consumer is an index
     * mapping inside that consumer, never a copy */
    for (int i = 0; i < n; i++) {
        const ir_node *r = &b->nodes[i];
        if (r->op != IR_OP_RESHAPE || uses[i] != 1 || !k->t[r->in[0]].mat) continue;
        ir_op c = b->nodes[user[i]].op;
        if (is_elementwise(c) || ir_ops[c].kind == IR_KIND_REDUCE || c == IR_OP_ACCUM || c == IR_OP_SAVE)
            k->t[i].mat = 0;
    }
    /* over a loop of one iteration an accumulator is its operand: read in its place (a
     * matmul reads a stored operand's tile directly; an inlined one is stored as before) */
    for (int i = 0; i < n && b->forloop == 1; i++)
        if (b->nodes[i].op == IR_OP_ACCUM && (k->t[b->nodes[i].in[0]].mat || !some_matmul(b, i))) k->t[i].mat = 0;
    fuse_reductions(b, k, uses);
    fuse_accum_reductions(b, k, uses);
    choose_layouts(b, k, kin_store, kin_col, p->opts.layout, p->opts.swizzle);
    k->threads = threads > 0 ? threads : block_threads(b, k, cls, p->opts.threads, p->opts.pipeline);
    if (p->opts.regacc) register_accumulators(b, k, uses, user);
    if (p->opts.chain) find_chains(p, knode, b, k, uses, p->opts.threads && threads <= 0);
    /* a register accumulator's tile is written from mma fragments after the loop (rows g and
     * g + 8 of each 16-row strip, two columns a lane): rows a multiple of 128 bytes apart put
     * a warp's eight rows in the same banks, 8-way; padded like a matmul result, 2-way */
    for (int i = 0; i < n && p->opts.layout; i++)
        if (b->nodes[i].op == IR_OP_ACCUM && k->t[i].reg_peer >= 0 && k->t[i].mat && !k->t[i].colmajor)
            layout(&k->t[i], 0, 1);
    for (int i = 0; i < n; i++)
        if (b->nodes[i].op == IR_OP_ITER) k->t[i].stage_elems = k->t[i].bytes / (int64_t)base_dtype_size(k->t[i].store);
    /* Tiles that do not move with the loop load once before it (hoist), unless that no longer
     * fits; iterators whose tiles move get the deepest pipeline (up to MAX_STAGES, at most the
     * trip count) that fits. */
    for (int hoist = 1; hoist >= 0; hoist--) {
        for (int again = 1; again;) {
            for (int i = 0; i < n; i++) ph[i] = phase_of(b, k, cls, fixed, i, hoist);
            depths(b, ph, depth);
            schedule(k, ph, depth, p->opts.depth, level);
            again = chains_split(k, level);
        }
        int has_loop = k->loop_end > k->loop_begin;
        int loop_first = has_loop ? level[k->step[k->loop_begin]] : 0;
        int loop_last = has_loop ? level[k->step[k->loop_end - 1]] : 0;
        int smax = !has_loop || b->forloop < 2 ? 0 : !p->opts.pipeline ? 1 : b->forloop < MAX_STAGES ? (int)b->forloop : MAX_STAGES;
        for (int st = smax;; st--) {
            k->stages = 0;
            for (int i = 0; i < n; i++) {
                op_tensor *t = &k->t[i];
                if (b->nodes[i].op != IR_OP_ITER) continue;
                t->stages = t->mat && st && b->nodes[i].fmap >= 0 ? st : 0;
                t->bytes = t->stage_elems * (int64_t)base_dtype_size(t->store) * (t->stages ? t->stages : 1);
                if (t->stages) k->stages = st;
            }
            live_ranges(k, ph, level, loop_first, loop_last);
            k->smem = place(k, p->opts.reuse);
            if (k->smem < 0 || k->smem <= dev->smem_per_block || st <= 1) break;
        }
        if (k->smem < 0 || k->smem <= dev->smem_per_block) break;
    }
    if (k->smem >= 0 && p->opts.layout) convert_tiles(b, k, ph, level);
    wg_check(b, k, uses);
    base_free(tmp);
    if (k->smem < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (k->stages) pipeline_steps(k);
    if (k->smem <= dev->smem_per_block) plan_acc_scratch(b, k, dev);
    if (k->smem > dev->smem_per_block) {
        char lb[128];
        return ctx_err(ctx, MG_ERR_SHAPE, "kernel '%s': its plan needs %" PRId64 " bytes of shared "
                       "memory; %s allows %" PRId64 " per block", ir_node_label(p->g, knode, lb, sizeof lb),
                       k->smem, dev->name, dev->smem_per_block);
    }
    return MG_OK;
}

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

/* Kernel level: inputs and KERNEL outputs and every operator that is not inlined get a
 * buffer. An elementwise operator is inlined into its one consumer when that consumer reads
 * it element by element (another elementwise operator or a reduction) and it is no output. */
static void plan_buffers(op_plan *p, const int *uses, const int *user) {
    const ir_graph *g = p->g;
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        ir_op c = uses[i] == 1 ? g->nodes[user[i]].op : IR_OP_INPUT;
        p->inl[i] = n->op == IR_OP_CONST ||
                    (is_elementwise(n->op) && uses[i] == 1 &&
                     (is_elementwise(c) || ir_ops[c].kind == IR_KIND_REDUCE));
        p->buf[i] = p->inl[i] ? -1 : p->n_bufs++;
        p->store[i] = n->dtype;
        p->kern[i] = -1;
    }
    for (int i = 0; i < g->n_nodes; i++) { /* intermediates in f32, like the reference */
        const ir_node *n = &g->nodes[i];
        int is_out = 0;
        for (int k = 0; k < g->n_outputs; k++) is_out |= g->outputs[k] == i;
        if (n->op != IR_OP_INPUT && !is_out) p->store[i] = MG_F32;
        buffer_layout(p, i, !is_out && n->op == IR_OP_KERNEL);
    }
}

/* 1 if every launch of p is a graph-defined kernel (every other node an input or inlined) */
static int kernels_only(const op_plan *p) {
    for (int i = 0; i < p->g->n_nodes; i++)
        if (p->g->nodes[i].op != IR_OP_INPUT && p->g->nodes[i].op != IR_OP_KERNEL && !p->inl[i]) return 0;
    return 1;
}

/* The kernels planned again at kernels[0]'s block size where theirs differs, into a new array
 * (the arena's), or NULL when one fails: a kernel graph of graph-defined kernels only, two or
 * more. *smem: the largest shared memory. */
static op_kernel *same_threads(op_plan *p, const ir_device *dev, int64_t *smem) {
    if (p->n_kernels < 2 || !kernels_only(p)) return NULL;
    int T = p->kernels[0].threads;
    op_kernel *k = arena_alloc(&p->mem, (size_t)p->n_kernels * sizeof *k);
    if (!k) return NULL; /* a plan without fusion is still whole */
    *smem = 0;
    for (int q = 0; q < p->n_kernels; q++) {
        k[q] = p->kernels[q];
        if (k[q].threads != T) {
            int knode = 0;
            while (p->kern[knode] != q) knode++;
            mg_ctx c = {{0}}; /* a failed try is no error: the kernels launch one by one */
            memset(&k[q], 0, sizeof k[q]);
            if (plan_kernel(p, &c, dev, knode, &k[q], T) || k[q].threads != T) return NULL;
        }
        if (k[q].smem > *smem) *smem = k[q].smem;
    }
    return k;
}

/* Persistent launch (opts.persist): several graph-defined kernels, and nothing else to launch,
 * become one launch whose blocks take the kernels' blocks in order as tasks (codegen: a
 * ticket each, and completion counters a task waits on). What it saves is a launch and its
 * ramp a kernel: the attention cases' combining kernel starts as the last chain block ends.
 * One block size for all: the first kernel's (attention's chain, sized to its registers);
 * a kernel planned with another is planned again with it. Not fused when that fails or the
 * largest shared memory plus the ticket's 16 bytes does not fit a block. */
static void plan_fused(op_plan *p, const ir_device *dev) {
    int64_t smem;
    op_kernel *k = same_threads(p, dev, &smem);
    if (!k || smem + 16 > dev->smem_per_block) return;
    memcpy(p->kernels, k, (size_t)p->n_kernels * sizeof *k);
    p->fused = 1;
}

/* Element range [lo, hi) over the 4 padded dims of the kernel-level tensor that block b of
 * block graph bg reads through iterator n (all its loop iterations) or writes through saver
 * n (the tile of the value it saves), as codegen's tile_base places it. */
static void block_range(const ir_graph *bg, const ir_node *n, const int b[3], int64_t lo[4], int64_t hi[4]) {
    int iter = n->op == IR_OP_ITER;
    const ir_shape *ts = iter ? &n->shape : &bg->nodes[n->in[0]].shape;
    int64_t td[4];
    op_pad4(ts, td);
    int pad = 4 - ts->ndim;
    for (int d = 0; d < 4; d++) lo[d] = 0, hi[d] = td[d] * (iter && n->fmap >= 0 && n->fmap + pad == d ? bg->forloop : 1);
    for (int gd = 0; gd < 3; gd++) {
        if (n->map[gd] < 0) continue;
        int d = n->map[gd] + pad;
        int64_t chunk = td[d] * (iter && n->fmap >= 0 && n->fmap + pad == d ? bg->forloop : 1);
        lo[d] += b[gd] * chunk, hi[d] += b[gd] * chunk;
    }
}

static void block_coord(const int grid[3], int i, int b[3]) {
    b[0] = i % grid[0], b[1] = i / grid[0] % grid[1], b[2] = i / (grid[0] * grid[1]);
}

/* 1 if block b2 of kernel 2 (body g2, KERNEL node k2) reads anything block b1 of kernel 1
 * (body g1, KERNEL node k1) writes. */
static int depends(const op_plan *p, int k1, int k2, const int b1[3], const int b2[3]) {
    const ir_graph *kg = p->g, *g1 = kg->nodes[k1].body, *g2 = kg->nodes[k2].body;
    for (int i = 0; i < g2->n_nodes; i++) {
        const ir_node *it = &g2->nodes[i];
        if (it->op != IR_OP_ITER) continue;
        const ir_node *x = &kg->nodes[kg->nodes[k2].in[it->index]];
        if (x->op != IR_OP_KERNEL || x->body != g1) continue;
        for (int j = 0; j < g1->n_nodes; j++) {
            const ir_node *sv = &g1->nodes[j];
            if (sv->op != IR_OP_SAVE || sv->index != x->index) continue;
            int64_t l1[4], h1[4], l2[4], h2[4];
            block_range(g1, sv, b1, l1, h1);
            block_range(g2, it, b2, l2, h2);
            int meet = 1;
            for (int d = 0; d < 4; d++) meet &= l1[d] < h2[d] && l2[d] < h1[d];
            if (meet) return 1;
        }
    }
    return 0;
}

/* Cluster fusion (opts.cluster): kernel graphs of two graph-defined kernels with as many
 * blocks each, where kernel 1's blocks fall into clusters along one grid dim (the split: all
 * of it, 2 to 16 blocks) and every block of kernel 2 reads only what one cluster wrote, each
 * cluster feeding as many kernel-2 blocks as it has blocks (GQA and QKNorm b=8: 8 key splits
 * of a head, and the 8 row blocks of the combine that head's partial sums feed). Codegen then
 * runs kernel 1's block, a cluster barrier (its writes are then visible to the cluster), and
 * one block of kernel 2 (cluster_map): no second launch, and no waiting for the whole grid.
 * Both run at kernel 1's block size (kernel 2 planned again at it). Found by enumerating the
 * blocks' tiles (at most 1024 blocks). */
static void plan_cluster(op_plan *p, const ir_device *dev) {
    const ir_graph *kg = p->g;
    if (p->n_kernels != 2 || !kernels_only(p)) return;
    int k1 = -1, k2 = -1;
    for (int i = 0; i < kg->n_nodes; i++)
        if (kg->nodes[i].op == IR_OP_KERNEL && kg->nodes[i].index == 0) {
            if (k1 < 0) k1 = i;
            else k2 = i;
        }
    const int *g1 = kg->nodes[k1].body->grid, *g2 = kg->nodes[k2].body->grid;
    int n = g1[0] * g1[1] * g1[2];
    if (n != g2[0] * g2[1] * g2[2] || n > 1024) return;
    int *map = arena_alloc(&p->mem, (size_t)n * sizeof(int)), *fill = base_calloc((size_t)n, sizeof(int));
    for (int g = 0; g < 3 && map && fill; g++) {
        int S = g1[g], ok = S >= 2 && S <= 16, stride = g == 0 ? 1 : g == 1 ? g1[0] : g1[0] * g1[1];
        memset(fill, 0, (size_t)n * sizeof(int));
        /* cluster of kernel-1 block i: its coordinates but g's; rank: its coordinate along g */
        for (int j = 0; j < n && ok; j++) {
            int b2[3], b1[3], c = -1;
            block_coord(g2, j, b2);
            for (int i = 0; i < n && ok; i++) {
                block_coord(g1, i, b1);
                if (!depends(p, k1, k2, b1, b2)) continue;
                int ci = i - b1[g] * stride;
                ok = c < 0 || c == ci, c = ci;
            }
            if (!ok || c < 0 || fill[c] >= S) {
                ok = 0;
                break;
            }
            /* the fill[c]-th kernel-2 block of cluster c runs on its block of rank fill[c] */
            map[c + fill[c]++ * stride] = j;
        }
        if (!ok) continue;
        int64_t smem;
        op_kernel *k = same_threads(p, dev, &smem);
        if (!k) break;
        memcpy(p->kernels, k, (size_t)p->n_kernels * sizeof *k);
        p->clustered = 1, p->cluster_map = map;
        p->cluster[0] = p->cluster[1] = p->cluster[2] = 1, p->cluster[g] = S;
        break;
    }
    base_free(fill);
}

mg_status op_plan_new(const ir_graph *g, mg_ctx *ctx, const ir_device *dev, const op_opts *o,
                      op_plan **out) {
    op_plan *p = base_calloc(1, sizeof *p);
    int n = g->n_nodes;
    int *uses = base_calloc((size_t)n * 2 + 1, sizeof(int));
    if (!p || !uses) {
        base_free(p), base_free(uses);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    arena_init(&p->mem);
    p->g = g, p->opts = o ? *o : op_opts_default, p->n_sm = dev->n_sm;
    p->buf = arena_alloc(&p->mem, (size_t)n * sizeof(int) + 1);
    p->inl = arena_alloc(&p->mem, (size_t)n * sizeof(int) + 1);
    p->kern = arena_alloc(&p->mem, (size_t)n * sizeof(int) + 1);
    p->kst = arena_alloc(&p->mem, (size_t)n * sizeof *p->kst + 1);
    p->store = arena_alloc(&p->mem, (size_t)n * sizeof(mg_dtype) + 1);
    p->kernels = arena_alloc(&p->mem, (size_t)n * sizeof(op_kernel) + 1);
    mg_status rc = MG_OK;
    if (!p->buf || !p->inl || !p->kern || !p->store || !p->kernels || !p->kst)
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc) {
        count_uses(g, uses, uses + n);
        plan_buffers(p, uses, uses + n);
    }
    for (int i = 0; !rc && i < n; i++)
        if (g->nodes[i].op == IR_OP_KERNEL && g->nodes[i].index == 0) {
            p->kern[i] = p->n_kernels;
            rc = plan_kernel(p, ctx, dev, i, &p->kernels[p->n_kernels++], 0);
        }
    if (!rc && p->opts.cluster) plan_cluster(p, dev);
    if (!rc && p->opts.persist && !p->clustered) plan_fused(p, dev);
    base_free(uses);
    if (rc) {
        op_plan_free(p);
        return rc;
    }
    *out = p;
    return MG_OK;
}

void op_plan_free(op_plan *p) {
    if (!p) return;
    arena_free(&p->mem);
    base_free(p);
}
