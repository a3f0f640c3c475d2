/* codegen/expr: the value of a node at a coordinate, as C/CUDA text. A value is read back
 * through cg_expr(): a load from shared or device memory, a literal, or, for an inlined
 * elementwise operator (a thread graph, Mirage §4.2), its expression over its own operands;
 * cg_compute() writes the statements that compute a materialised value (reductions, matmuls,
 * layout operators) into a variable v. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

/* ---- reading values ---- */

/* Is node j of the current graph stored (a load reads it) rather than computed in place? */
int cg_stored(const em *E, int j) {
    if (E->k) return E->k->t[j].mat;
    return E->p->buf[j] >= 0;
}

void cg_tensor_strides(const em *E, int j, int64_t st[4], mg_dtype *store) {
    if (E->k) {
        memcpy(st, E->k->t[j].stride, sizeof(int64_t) * 4);
        *store = E->k->t[j].store;
        return;
    }
    memcpy(st, E->p->kst[j], sizeof(int64_t) * 4); /* the buffer's layout (opt/buffers.c) */
    *store = E->p->store[j];
}

/* sum of c[d] * st[d] over the dims that move; "0" when none does */
void cg_index_expr(strbuf *o, coord c, const int64_t st[4], int wide) {
    int any = 0;
    for (int d = 0; d < 4; d++) {
        if (!st[d] || !strcmp(c[d], "0")) continue;
        sb_printf(o, "%s%s%s * %" PRId64 "%s", any ? " + " : "", wide ? "(long long)" : "", c[d], st[d],
                  wide ? "LL" : "");
        any = 1;
    }
    if (!any) sb_puts(o, "0");
}

/* operand a's coordinates when node j (dims nd) is at c: dims where a has size 1 read 0 */
static void bcast_coord(const em *E, int a, coord c, coord out) {
    int64_t ad[4];
    op_pad4(&E->g->nodes[a].shape, ad);
    for (int d = 0; d < 4; d++) snprintf(out[d], CW, "%s", ad[d] == 1 ? "0" : c[d]);
}

static void unary(em *E, strbuf *o, const ir_node *n, coord c) {
    coord ac;
    bcast_coord(E, n->in[0], c, ac);
    sb_printf(o, "%s(", ir_ops[n->op].cfn); /* ops.def's spelling */
    cg_expr(E, o, n->in[0], ac, 0);
    sb_puts(o, ")");
}

static void binary(em *E, strbuf *o, const ir_node *n, coord c) {
    const char *f = ir_ops[n->op].cfn; /* ops.def's spelling: an infix symbol or a function */
    int infix = ir_op_infix(n->op);
    coord ac, bc;
    bcast_coord(E, n->in[0], c, ac);
    bcast_coord(E, n->in[1], c, bc);
    sb_printf(o, "%s(", infix ? "" : f);
    cg_expr(E, o, n->in[0], ac, 0);
    if (infix) sb_printf(o, " %s ", f);
    else sb_puts(o, ", ");
    cg_expr(E, o, n->in[1], bc, 0);
    sb_puts(o, ")");
}

/* The value of node j at coordinate c as a float expression: a literal, a load, or (inlined
 * elementwise operators, or force) the operator applied to its operands' expressions. It
 * recurses only through nodes read in place, which the planner keeps at most
 * OP_MAX_INLINE_DEPTH deep (opt/buffers.c, opt/inline.c), so however long a chain of
 * operators a program has, this recursion (and near_leaves', and cg_collect_inputs') is short. */
void cg_expr(em *E, strbuf *o, int j, coord c, int force) {
    const ir_node *n = &E->g->nodes[j];
    if (j == E->reg_node) {
        sb_puts(o, "vr_");
        return;
    }
    if (n->op == IR_OP_CONST) {
        char lit[48];
        snprintf(lit, sizeof lit, "%.9g", (double)(float)n->value);
        sb_printf(o, "%s%sf", lit, strpbrk(lit, ".e") ? "" : ".0");
        return;
    }
    ir_kind kind = ir_ops[n->op].kind;
    int stored = !force && cg_stored(E, j);
    /* a reduced dim's values past mg_L: 0 (mask.c); loads of a program input at kernel level
     * (a block's come masked from its copy), elementwise values anywhere */
    int mask = cg_lbits(E, j) && !E->nomask &&
               (stored ? !E->block && cg_input_data(E->p, j) : kind == IR_KIND_UNARY || kind == IR_KIND_BINARY);
    if (mask) {
        sb_puts(o, "(");
        cg_mask_cond(E, o, j, c);
        sb_puts(o, " ? ");
    }
    if (stored) {
        int64_t st[4];
        mg_dtype t;
        cg_tensor_strides(E, j, st, &t);
        sb_printf(o, "%s(%s[", cg_ldfn(t), E->names[j]);
        cg_index_expr(o, c, st, !E->block);
        sb_puts(o, "])");
    } else if (n->op == IR_OP_ACCUM) cg_expr(E, o, n->in[0], c, 0); /* one iteration: the operand itself */
    else if (n->op == IR_OP_RESHAPE) { /* the same row-major flat index in the operand */
        int64_t nd[4], ad[4], inner = 1;
        op_pad4(&n->shape, nd), op_pad4(&E->g->nodes[n->in[0]].shape, ad);
        char flat[CW] = "";
        size_t len = 0;
        for (int d = 3; d >= 0; d--) {
            if (nd[d] > 1) len += (size_t)snprintf(flat + len, len < CW ? CW - len : 0, "%s%s * %" PRId64, len ? " + " : "", c[d], inner);
            inner *= nd[d];
        }
        if (!len) snprintf(flat, CW, "0");
        coord ac;
        inner = 1;
        for (int d = 3; d >= 0; d--) {
            if (ad[d] == 1) snprintf(ac[d], CW, "0");
            else if (snprintf(ac[d], CW, E->block && E->tg == CG_CUDA ? "(int)((unsigned)(%s) / %" PRId64 "u %% %" PRId64 "u)"
                                                                      : "((%s) / %" PRId64 " %% %" PRId64 ")",
                              flat, inner, ad[d]) >= CW && !E->rc)
                E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: reshape index too long");
            inner *= ad[d];
        }
        if (len >= CW && !E->rc) E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: reshape index too long");
        cg_expr(E, o, n->in[0], ac, 0);
    }
    else if (kind == IR_KIND_UNARY) unary(E, o, n, c);
    else if (kind == IR_KIND_BINARY) binary(E, o, n, c);
    else if (!E->rc) E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: %s cannot be inlined", ir_ops[n->op].name);
    if (mask) sb_puts(o, " : 0.0f)");
}

/* ---- computing one materialised value: statements ending in `const float v = ...;` ---- */

/* The tile a reduction reads (through inlined accumulators and unary operators) and, in *r,
 * the reduced dim's index among its 4 padded dims; the tile may not be materialised. */
static int reduce_tile(const em *E, const ir_node *n, int *r) {
    int x = n->in[0];
    *r = n->dim + 4 - E->g->nodes[x].shape.ndim;
    while (!E->k->t[x].mat && E->g->nodes[x].n_in == 1 && E->g->nodes[E->g->nodes[x].in[0]].shape.ndim == E->g->nodes[x].shape.ndim)
        x = E->g->nodes[x].in[0];
    return x;
}

/* Whether the tiles node j's inlined expression reads along padded dim r are all 2-byte
 * tiles contiguous along r (1), or broadcast along it (2: none of the first kind); 0 if any
 * other tile is read. Elementwise nodes of j's rank only. */
static int near_leaves(const em *E, int j, int r) {
    const op_tensor *t = &E->k->t[j];
    if (t->mat) return t->dim[r] == 1 ? 2 : t->stride[r] == 1 && base_dtype_size(t->store) == 2;
    const ir_node *n = &E->g->nodes[j];
    ir_kind k = ir_ops[n->op].kind;
    if (n->op == IR_OP_CONST) return 2;
    if ((k != IR_KIND_UNARY && k != IR_KIND_BINARY && n->op != IR_OP_ACCUM) || n->n_in < 1) return 0;
    int any = 0;
    for (int i = 0; i < n->n_in; i++) {
        if (E->g->nodes[n->in[i]].shape.ndim != n->shape.ndim) return 0;
        int v = near_leaves(E, n->in[i], r);
        if (!v) return 0;
        any |= v == 1;
    }
    return any ? 1 : 2;
}

/* Lanes per output of a reduction in a CUDA block: a long reduction with few outputs is
 * shared out over up to 32 lanes of a warp (combined by shuffles) while the block's threads
 * take at most 8 rounds and each lane keeps at least 2 elements. 1 at kernel level and in C. */
int cg_reduce_lanes(const em *E, const ir_node *n) {
    if (!E->block || E->tg != CG_CUDA || E->k->threads % 32) return 1;
    int64_t outs = ir_numel(&n->shape), group = n->group, T = E->k->threads;
    /* a few long reductions (a norm over a row of 4096): the whole block, in one round,
     * each warp's partial through shared memory */
    if (outs * 64 <= T && T % outs == 0 && group >= 8 * (T / outs) && ((T / outs) & (T / outs - 1)) == 0)
        return (int)(T / outs);
    int l = 1;
    /* lanes of a column reduction (QKNorm's K norm), or of one whose input tile lies in shared
     * memory with the reduced dim strided (the attention combine's sum over splits, a
     * column-major tile), read down the rows: adjacent outputs are adjacent in memory, so
     * a thread an output is conflict-free; few lanes, at most one round of the block, each
     * summing 8+ elements (8 lanes in 8 rounds of 4 elements each: 0.93 us for GQA b=1's
     * 512 sums of 32, docs/notes §27) */
    int r, x = reduce_tile(E, n, &r);
    if (n->dim != n->shape.ndim - 1 || (E->k->t[x].mat && E->k->t[x].stride[r] != 1)) {
        while (l < 32 && group >= 16 * l && outs * 2 * l <= T) l *= 2;
        return l;
    }
    while (l < 32 && group >= 4 * l && outs * 2 * l <= 8 * T) l *= 2;
    return l;
}

/* An element of reduction n's operand at ac (its reduced dim r): a max over a reduced dim
 * reads its identity past mg_L, not the 0 every value there holds (mask.c) */
static void reduce_elem(em *E, const ir_node *n, int r, coord ac, const char *identity) {
    int masked = n->op == IR_OP_MAX && (cg_lbits(E, n->in[0]) >> r & 1);
    if (masked) {
        sb_puts(E->sb, "(");
        cg_mask_cond_bits(E, E->sb, n->in[0], ac, 1u << r);
        sb_puts(E->sb, " ? ");
    }
    cg_expr(E, E->sb, n->in[0], ac, 0);
    if (masked) sb_printf(E->sb, " : %s)", identity);
}

/* v = the reduction at c: each lane (l_, of `lanes`) folds every lanes-th element of the group
 * into up to 4 independent partials (instruction-level parallelism), then the lanes combine
 * by shuffles. The order of the sum differs from the reference's; within f32 rounding. */
void cg_compute_reduce(em *E, const ir_node *n, coord c) {
    const ir_node *a = &E->g->nodes[n->in[0]];
    int r = n->dim + 4 - a->shape.ndim, lanes = cg_reduce_lanes(E, n);
    /* u partials only when u * lanes divides the group: each round then reads u whole
     * strides (a row of 1025 over 128 lanes takes u = 1, the loop's bound ending it) */
    int u = n->group % (4 * lanes) == 0 ? 4 : n->group % (2 * lanes) == 0 ? 2 : 1;
    /* C (one lane): 16 partials (8), one AVX-512 vector of them, so the compiler's SLP
     * vectoriser fills a whole register (softmax attention's max and sum over 4096,
     * docs/notes/2026-11-26-cpu-backend.md) */
    if (E->tg == CG_C && lanes == 1 && n->group % 8 == 0) u = n->group % 16 == 0 ? 16 : 8;
    /* lanes sharing a row of a 2-byte tile each read four neighbours (one 8-byte load when
     * the compiler merges them: nTrans's norms 0.50 -> 0.45 us); elsewhere lane l_ reads
     * every lanes-th element, conflict-free element by element */
    int near = lanes > 1 && u == 4 && n->dim == n->shape.ndim - 1 && near_leaves(E, n->in[0], r) == 1; /* lanes > 1: a CUDA block */
    int is_max = n->op == IR_OP_MAX;
    const char *init = !is_max ? "0.0f" : E->tg == CG_CUDA ? "__int_as_float(0xff800000)" : "-INFINITY";
    if (E->tg == CG_C && u >= 8) { /* C's partials as an array updated by an inner loop, which
        * the loop vectoriser takes whole (16 named partials were left scalar: softmax_rows 4.96
        * -> 1.03 ms on one thread, the same sums in the same order); `omp simd`, as gcc
        * otherwise unrolls a short loop of f32 tile reads and leaves it scalar (f32 tiles:
        * softmax_rows 0.74 -> 0.59 ms) */
        coord ac;
        memcpy(ac, c, sizeof ac);
        snprintf(ac[r], CW, "(%s * %" PRId64 " + r_ + q_)", c[r], n->group);
        sb_printf(E->sb, "        float a_[%d];\n        for (int q_ = 0; q_ < %d; q_++) a_[q_] = %s;\n", u, u, init);
        sb_printf(E->sb, "        for (int r_ = 0; r_ < %" PRId64 "; r_ += %d) {\n"
                  "            #pragma omp simd\n            for (int q_ = 0; q_ < %d; q_++) a_[q_] = %s",
                  n->group, u, u, is_max ? "mg_max(a_[q_], " : "a_[q_] + ");
        reduce_elem(E, n, r, ac, init);
        sb_puts(E->sb, is_max ? ");\n        }\n" : ";\n        }\n");
        sb_puts(E->sb, "        float v0_ = a_[0]");
        for (int q = 1; q < u; q++) sb_printf(E->sb, ", v%d_ = a_[%d]", q, q);
        sb_puts(E->sb, ";\n");
    } else {
    sb_puts(E->sb, "        float v0_");
    for (int q = 1; q < u; q++) sb_printf(E->sb, ", v%d_", q);
    sb_printf(E->sb, ";\n        v0_ = %s;\n", init);
    for (int q = 1; q < u; q++) sb_printf(E->sb, "        v%d_ = v0_;\n", q);
    sb_printf(E->sb, "        for (int r_ = %s; r_ < %" PRId64 "; r_ += %" PRId64 ") {\n",
              lanes > 1 ? (near ? "l_ * 4" : "l_") : "0", n->group, (int64_t)u * lanes);
    for (int q = 0; q < u; q++) {
        coord ac;
        memcpy(ac, c, sizeof ac);
        snprintf(ac[r], CW, "(%s * %" PRId64 " + r_ + %" PRId64 ")", c[r], n->group, near ? (int64_t)q : (int64_t)q * lanes);
        sb_printf(E->sb, "            v%d_ = %s", q, is_max ? "mg_max(" : "");
        sb_printf(E->sb, "v%d_%s", q, is_max ? ", " : " + ");
        reduce_elem(E, n, r, ac, init);
        sb_puts(E->sb, is_max ? ");\n" : ";\n");
    }
    sb_puts(E->sb, "        }\n");
    }
    const char *op = is_max ? "mg_max" : "mg_add";
    for (int w = u / 2; u > 4 && w >= 4; w /= 2) /* C's 16 or 8: pairwise down to 4 */
        for (int q = 0; q < w; q++) sb_printf(E->sb, "        v%d_ = %s(v%d_, v%d_);\n", q, op, q, q + w);
    if (u >= 4) sb_printf(E->sb, "        float v = %s(%s(v0_, v1_), %s(v2_, v3_));\n", op, op, op);
    else if (u == 2) sb_printf(E->sb, "        float v = %s(v0_, v1_);\n", op);
    else sb_puts(E->sb, "        float v = v0_;\n");
    for (int o = (lanes < 32 ? lanes : 32) / 2; o >= 1; o /= 2)
        sb_printf(E->sb, "        v = %s(v, __shfl_xor_sync(0xffffffffu, v, %d));\n", op, o);
    if (lanes > 32) { /* the warps of a group meet in shared memory (every thread is here) */
        int w = lanes / 32;
        sb_printf(E->sb, "        __shared__ float red_[%d];\n        if ((threadIdx.x & 31) == 0) red_[threadIdx.x >> 5] = v;\n"
                         "        mg_bar();\n        v = red_[e * %d];\n        for (int q_ = 1; q_ < %d; q_++) v = %s(v, red_[e * %d + q_]);\n",
                  (int)(E->k->threads / 32), w, w, op, w);
    }
}

void cg_compute_matmul(em *E, const ir_node *n, coord c) {
    int64_t ad[4], bd[4];
    op_pad4(&E->g->nodes[n->in[0]].shape, ad);
    op_pad4(&E->g->nodes[n->in[1]].shape, bd);
    coord ac, bc;
    for (int d = 0; d < 2; d++) {
        snprintf(ac[d], CW, "%s", ad[d] == 1 ? "0" : c[d]);
        snprintf(bc[d], CW, "%s", bd[d] == 1 ? "0" : c[d]);
    }
    snprintf(ac[2], CW, "%s", c[2]), snprintf(ac[3], CW, "k_");
    snprintf(bc[2], CW, "k_"), snprintf(bc[3], CW, "%s", c[3]);
    sb_printf(E->sb, "        float v = 0.0f;\n        for (int k_ = 0; k_ < %" PRId64 "; k_++) v += ", ad[3]);
    cg_expr(E, E->sb, n->in[0], ac, 0);
    sb_puts(E->sb, " * ");
    cg_expr(E, E->sb, n->in[1], bc, 0);
    sb_puts(E->sb, ";\n");
}

static void compute_layout(em *E, const ir_node *n, coord c) {
    int64_t nd[4], ad[4];
    op_pad4(&n->shape, nd);
    op_pad4(&E->g->nodes[n->in[0]].shape, ad);
    coord ac;
    if (n->op == IR_OP_REPEAT) {
        for (int d = 0; d < 4; d++)
            if (ad[d] == nd[d] || ad[d] == 1) snprintf(ac[d], CW, "%s", ad[d] == 1 ? "0" : c[d]);
            else snprintf(ac[d], CW, "(%s %% %" PRId64 ")", c[d], ad[d]);
    } else if (n->op == IR_OP_TRANSPOSE) { /* operand dim perm[i] is at result dim i */
        int off = 4 - n->shape.ndim;
        for (int d = 0; d < off; d++) snprintf(ac[d], CW, "0");
        for (int d = 0; d < n->shape.ndim; d++)
            snprintf(ac[n->ints[d] + off], CW, "%s", c[d + off]);
    } else if (n->op == IR_OP_SLICE) { /* shifted by start along the sliced dim */
        int r = n->dim + 4 - n->shape.ndim;
        memcpy(ac, c, sizeof ac);
        if (n->ints[0]) snprintf(ac[r], CW, "(%s + %" PRId64 ")", c[r], n->ints[0]);
    } else if (n->op == IR_OP_RESHAPE) { /* same row-major flat index e */
        for (int d = 0; d < 4; d++) {
            int64_t inner = 1;
            for (int q = d + 1; q < 4; q++) inner *= ad[q];
            if (ad[d] == 1) snprintf(ac[d], CW, "0");
            else snprintf(ac[d], CW, "(int)(e / %" PRId64 " %% %" PRId64 ")", inner, ad[d]);
        }
    } else { /* CONCAT along r: operand 0 below its size, operand 1 after it */
        int r = n->dim + 4 - n->shape.ndim;
        coord bc;
        bcast_coord(E, n->in[1], c, bc);
        bcast_coord(E, n->in[0], c, ac);
        snprintf(bc[r], CW, "(%s - %" PRId64 ")", c[r], ad[r]);
        sb_printf(E->sb, "        const float v = %s < %" PRId64 " ? ", c[r], ad[r]);
        cg_expr(E, E->sb, n->in[0], ac, 0);
        sb_puts(E->sb, " : ");
        cg_expr(E, E->sb, n->in[1], bc, 0);
        sb_puts(E->sb, ";\n");
        return;
    }
    sb_puts(E->sb, "        const float v = ");
    cg_expr(E, E->sb, n->in[0], ac, 0);
    sb_puts(E->sb, ";\n");
}

void cg_compute(em *E, int j, coord c) {
    const ir_node *n = &E->g->nodes[j];
    switch (ir_ops[n->op].kind) {
    case IR_KIND_REDUCE: cg_compute_reduce(E, n, c); break;
    case IR_KIND_MATMUL: cg_compute_matmul(E, n, c); break;
    case IR_KIND_LAYOUT: compute_layout(E, n, c); break;
    default:
        sb_puts(E->sb, "        const float v = ");
        cg_expr(E, E->sb, j, c, 1);
        sb_puts(E->sb, ";\n");
    }
}
