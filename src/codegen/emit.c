/* codegen/emit: writes an op_plan as CUDA or C (codegen.h). One emitter serves both targets;
 * they differ only in how a block's threads share an element loop, in barriers, in how blocks
 * are launched and in the tensor-core matmul (CUDA only).
 *
 * Every operator is written as an element loop over its output: the threads of a block (or
 * of the grid, at kernel level) stride over the output's elements, each computing its 4-dim
 * coordinate c0..c3 and the value there. A value is read back through expr(): a load from
 * shared or device memory, a literal, or, for an inlined elementwise operator (a thread
 * graph), its expression over its own operands. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

enum { CW = 160 }; /* room for one coordinate expression */
typedef char coord[4][CW];

typedef struct em {
    strbuf *sb;
    const op_plan *p;
    cg_target tg;
    const ir_graph *g;   /* the graph whose nodes expr() reads: kernel graph or a block graph */
    const op_kernel *k;  /* the block graph's plan, NULL at kernel level */
    const char **names;  /* C names of g's nodes */
    int block;           /* inside a block kernel */
    int reg_node;        /* a node whose value is the variable vr_ here (a fused reduction), or -1 */
    int async;           /* iterator copies go out as cp.async (CUDA), waited for later */
    int mm_w0;           /* the warp the next mg_mm_tc's first tile goes to (0 after a barrier) */
    int wg;              /* the kernel has wgmma: barriers first order shared-memory writes
                          * before wgmma's reads (fence.proxy.async) */
    mg_status rc;
    mg_ctx *ctx;
} em;

static const char *ctype(mg_dtype t) { return t == MG_F16 ? "mg_h" : t == MG_BF16 ? "mg_bh" : "float"; }
static const char *ldfn(mg_dtype t) { return t == MG_F16 ? "mg_ldh" : t == MG_BF16 ? "mg_ldb" : ""; }
static const char *stfn(mg_dtype t) { return t == MG_F16 ? "mg_sth" : t == MG_BF16 ? "mg_stb" : ""; }

/* C identifiers: prefix + the node's name with anything but [A-Za-z0-9_] made '_', or t<i>.
 * Names are unique in a graph, and sanitising can only merge names that differ in such
 * characters, so the node index is appended when that happens. */
static const char **c_names(const ir_graph *g, arena *a, const char *prefix) {
    const char **out = arena_alloc(a, (size_t)g->n_nodes * sizeof *out + 1);
    if (!out) return NULL;
    for (int i = 0; i < g->n_nodes; i++) {
        char buf[96];
        const char *nm = g->nodes[i].name;
        int clean = nm != NULL;
        if (nm) {
            snprintf(buf, sizeof buf, "%s%s", prefix, nm);
            for (char *q = buf; *q; q++)
                if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_'))
                    *q = '_', clean = 0;
            if (!clean) snprintf(buf + strlen(buf) > buf + 80 ? buf + 80 : buf + strlen(buf), 16, "_%d", i);
        } else snprintf(buf, sizeof buf, "%st%d", prefix, i);
        out[i] = arena_strdup(a, buf);
        if (!out[i]) return NULL;
    }
    return out;
}

/* ---- reading values ---- */

/* Is node j of the current graph stored (a load reads it) rather than computed in place? */
static int stored(const em *E, int j) {
    if (E->k) return E->k->t[j].mat;
    return E->p->buf[j] >= 0;
}

static void tensor_strides(const em *E, int j, int64_t st[4], mg_dtype *store) {
    if (E->k) {
        memcpy(st, E->k->t[j].stride, sizeof(int64_t) * 4);
        *store = E->k->t[j].store;
        return;
    }
    memcpy(st, E->p->kst[j], sizeof(int64_t) * 4); /* the buffer's layout (opt/plan.c) */
    *store = E->p->store[j];
}

/* sum of c[d] * st[d] over the dims that move; "0" when none does */
static void index_expr(strbuf *o, coord c, const int64_t st[4], int wide) {
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

static void expr(em *E, strbuf *o, int j, coord c, int force);

static void unary(em *E, strbuf *o, const ir_node *n, coord c) {
    static const char *fn[IR_OP_COUNT] = {[IR_OP_EXP] = "mg_exp", [IR_OP_SQR] = "mg_sqr",
                                          [IR_OP_SQRT] = "sqrtf", [IR_OP_SILU] = "mg_silu",
                                          [IR_OP_RELU] = "mg_relu"};
    coord ac;
    bcast_coord(E, n->in[0], c, ac);
    sb_printf(o, "%s(", fn[n->op]);
    expr(E, o, n->in[0], ac, 0);
    sb_puts(o, ")");
}

static void binary(em *E, strbuf *o, const ir_node *n, coord c) {
    static const char sym[IR_OP_COUNT] = {[IR_OP_ADD] = '+', [IR_OP_SUB] = '-', [IR_OP_MUL] = '*',
                                          [IR_OP_DIV] = '/'};
    coord ac, bc;
    bcast_coord(E, n->in[0], c, ac);
    bcast_coord(E, n->in[1], c, bc);
    sb_puts(o, n->op == IR_OP_DIV ? "mg_div(" : "(");
    expr(E, o, n->in[0], ac, 0);
    if (n->op == IR_OP_DIV) sb_puts(o, ", ");
    else sb_printf(o, " %c ", sym[n->op]);
    expr(E, o, n->in[1], bc, 0);
    sb_puts(o, ")");
}

/* The value of node j at coordinate c as a float expression: a literal, a load, or (inlined
 * elementwise operators, or force) the operator applied to its operands' expressions. */
static void expr(em *E, strbuf *o, int j, coord c, int force) {
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
    if (!force && stored(E, j)) {
        int64_t st[4];
        mg_dtype t;
        tensor_strides(E, j, st, &t);
        sb_printf(o, "%s(%s[", ldfn(t), E->names[j]);
        index_expr(o, c, st, !E->block);
        sb_puts(o, "])");
        return;
    }
    ir_kind kind = ir_ops[n->op].kind;
    if (n->op == IR_OP_ACCUM) expr(E, o, n->in[0], c, 0); /* one iteration: the operand itself */
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
        expr(E, o, n->in[0], ac, 0);
    }
    else if (kind == IR_KIND_UNARY) unary(E, o, n, c);
    else if (kind == IR_KIND_BINARY) binary(E, o, n, c);
    else if (!E->rc) E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: %s cannot be inlined", ir_ops[n->op].name);
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
static int reduce_lanes(const em *E, const ir_node *n) {
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

/* v = the reduction at c: each lane (l_, of `lanes`) folds every lanes-th element of the group
 * into up to 4 independent partials (instruction-level parallelism), then the lanes combine
 * by shuffles. The order of the sum differs from the reference's; within f32 rounding. */
static void compute_reduce(em *E, const ir_node *n, coord c) {
    const ir_node *a = &E->g->nodes[n->in[0]];
    int r = n->dim + 4 - a->shape.ndim, lanes = reduce_lanes(E, n);
    int64_t per = n->group / lanes;
    int u = per % 4 == 0 ? 4 : per % 2 == 0 ? 2 : 1;
    /* lanes sharing a row of a 2-byte tile each read four neighbours (one 8-byte load when
     * the compiler merges them: nTrans's norms 0.50 -> 0.45 us); elsewhere lane l_ reads
     * every lanes-th element, conflict-free element by element */
    int near = lanes > 1 && u == 4 && n->dim == n->shape.ndim - 1 && near_leaves(E, n->in[0], r) == 1; /* lanes > 1: a CUDA block */
    int is_max = n->op == IR_OP_MAX;
    const char *init = !is_max ? "0.0f" : E->tg == CG_CUDA ? "__int_as_float(0xff800000)" : "-INFINITY";
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
        sb_printf(E->sb, "            v%d_ = %s", q, is_max ? "fmaxf(" : "");
        sb_printf(E->sb, "v%d_%s", q, is_max ? ", " : " + ");
        expr(E, E->sb, n->in[0], ac, 0);
        sb_puts(E->sb, is_max ? ");\n" : ";\n");
    }
    sb_puts(E->sb, "        }\n");
    const char *op = is_max ? "fmaxf" : "mg_add";
    if (u == 4) sb_printf(E->sb, "        float v = %s(%s(v0_, v1_), %s(v2_, v3_));\n", op, op, op);
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

static void compute_matmul(em *E, const ir_node *n, coord c) {
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
    expr(E, E->sb, n->in[0], ac, 0);
    sb_puts(E->sb, " * ");
    expr(E, E->sb, n->in[1], bc, 0);
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
        expr(E, E->sb, n->in[0], ac, 0);
        sb_puts(E->sb, " : ");
        expr(E, E->sb, n->in[1], bc, 0);
        sb_puts(E->sb, ";\n");
        return;
    }
    sb_puts(E->sb, "        const float v = ");
    expr(E, E->sb, n->in[0], ac, 0);
    sb_puts(E->sb, ";\n");
}

static void compute(em *E, int j, coord c) {
    const ir_node *n = &E->g->nodes[j];
    switch (ir_ops[n->op].kind) {
    case IR_KIND_REDUCE: compute_reduce(E, n, c); break;
    case IR_KIND_MATMUL: compute_matmul(E, n, c); break;
    case IR_KIND_LAYOUT: compute_layout(E, n, c); break;
    default:
        sb_puts(E->sb, "        const float v = ");
        expr(E, E->sb, j, c, 1);
        sb_puts(E->sb, ";\n");
    }
}

/* ---- element loops ---- */

/* A CUDA block's loop over the elements e of dims d, T threads taking every T-th. The inner
 * dims whose extents multiply to a divisor P of T keep one coordinate per thread (from
 * threadIdx.x, hoisted by the compiler); the outer ones come from o_ = e / P, which steps by
 * T / P, so no division by a non-constant stride is left in the loop, and the outermost
 * needs no modulo (e < total). */
static void block_loop(em *E, const int64_t d[4], coord c) {
    int64_t total = d[0] * d[1] * d[2] * d[3], T = E->k->threads, P = 1;
    int split = 4; /* dims split..3 are per-thread constants */
    while (split > 0 && T % (P * d[split - 1]) == 0) P *= d[--split];
    int outer = 0; /* the outermost dim of size > 1 */
    while (outer < 3 && d[outer] == 1) outer++;
    int any_outer = 0;
    for (int q = 0; q < split; q++) any_outer |= d[q] > 1;
    sb_puts(E->sb, "    #pragma unroll 4\n");
    if (any_outer)
        sb_printf(E->sb, "    for (int e = threadIdx.x, o_ = threadIdx.x / %" PRId64 "; e < %" PRId64 "; e += %" PRId64
                         ", o_ += %" PRId64 ") {\n", P, total, T, T / P);
    else sb_printf(E->sb, "    for (int e = threadIdx.x; e < %" PRId64 "; e += %" PRId64 ") {\n", total, T);
    int64_t inner = 1;
    for (int q = 3; q >= 0; q--) {
        if (d[q] == 1) snprintf(c[q], CW, "0");
        else {
            snprintf(c[q], CW, "c%d", q);
            const char *src = q >= split ? "threadIdx.x" : "o_";
            int64_t div = q >= split ? inner : inner / P;
            if (q == outer && q < split && div == 1) sb_printf(E->sb, "        const int c%d = o_;\n", q);
            else if (q == outer)
                sb_printf(E->sb, "        const int c%d = (int)((unsigned)%s / %" PRId64 "u);\n", q, src, div);
            else
                sb_printf(E->sb, "        const int c%d = (int)((unsigned)%s / %" PRId64 "u %% %" PRId64 "u);\n", q, src, div, d[q]);
        }
        inner *= d[q];
    }
}

/* Opens a loop over the elements of a tensor of dims d and declares c0..c3 (coordinates of
 * dims of size 1 are the literal 0 in c). With lanes > 1 (CUDA blocks), `lanes` consecutive
 * threads share each element (lane l_), the loop runs in whole warps (for shuffles) and
 * declares ok_ for the threads that own a real element. */
static void loop_open_lanes(em *E, const int64_t d[4], coord c, int lanes) {
    int64_t total = d[0] * d[1] * d[2] * d[3];
    const char *it = E->block ? "int" : "long long";
    if (E->tg == CG_C && !E->block) sb_puts(E->sb, "    #pragma omp parallel for schedule(static)\n");
    if (E->tg == CG_C) sb_printf(E->sb, "    for (%s e = 0; e < %" PRId64 "; e++) {\n", it, total);
    else if (E->block && lanes > 1)
        sb_printf(E->sb, "    #pragma unroll 2\n    for (int e_ = threadIdx.x; e_ < %" PRId64 "; e_ += %d) {\n"
                         "        const int e = min((int)((unsigned)e_ / %du), %" PRId64 "), l_ = (int)((unsigned)e_ %% %du);\n"
                         "        const bool ok_ = (int)((unsigned)e_ / %du) < %" PRId64 ";\n",
                  (total * lanes + 31) / 32 * 32, E->k->threads, lanes, total - 1, lanes, lanes, total);
    else if (E->block) { /* a literal stride: the compiler can unroll, keeping loads in flight */
        block_loop(E, d, c);
        return;
    }
    else
        sb_printf(E->sb, "    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < %" PRId64
                         "LL; e += (long long)gridDim.x * blockDim.x) {\n", total);
    int64_t inner = 1;
    for (int q = 3; q >= 0; q--) {
        if (d[q] == 1) snprintf(c[q], CW, "0");
        else {
            snprintf(c[q], CW, "c%d", q);
            /* in a block e is a non-negative int: unsigned division is a shift and a mask */
            if (E->block && E->tg == CG_CUDA)
                sb_printf(E->sb, "        const int c%d = (int)((unsigned)e / %" PRId64 "u %% %" PRId64 "u);\n", q, inner, d[q]);
            else sb_printf(E->sb, "        const int c%d = (int)(e / %" PRId64 " %% %" PRId64 ");\n", q, inner, d[q]);
        }
        inner *= d[q];
    }
}

static void loop_open(em *E, const int64_t d[4], coord c) { loop_open_lanes(E, d, c, 1); }

/* loop_open with dims counted in the order perm (outermost first, perm[3] fastest): a copy
 * walks its source's contiguous dim fastest, so neighbouring threads read neighbouring words */
static void loop_open_perm(em *E, const int64_t d[4], coord c, const int perm[4]) {
    int64_t pd[4];
    coord pc;
    for (int q = 0; q < 4; q++) pd[q] = d[perm[q]];
    loop_open(E, pd, pc);
    for (int q = 0; q < 4; q++) memcpy(c[perm[q]], pc[q], CW);
}

static void store_to(em *E, const char *name, mg_dtype t, const int64_t st[4], coord c, const char *val) {
    sb_printf(E->sb, "        %s[", name);
    index_expr(E->sb, c, st, !E->block);
    sb_printf(E->sb, "] = %s(%s);\n", stfn(t), val);
}

static void comment(em *E, int j, const char *what) {
    char lb[128];
    const ir_node *n = &E->g->nodes[j];
    sb_printf(E->sb, "    /* %s: %s%s%s (node %d) */\n", what, ir_node_label(E->g, j, lb, sizeof lb),
              n->name ? " = " : "", n->name ? ir_ops[n->op].name : "", j);
}


/* ---- kernel parameters ---- */

typedef struct params {
    int n;
    int node[CG_MAX_ARGS]; /* kernel-graph nodes passed, outputs first, each once */
    int n_out;
} params;

static void add_param(params *ps, int node) {
    for (int i = 0; i < ps->n; i++)
        if (ps->node[i] == node) return;
    if (ps->n < CG_MAX_ARGS) ps->node[ps->n++] = node;
}

/* the stored kernel-graph nodes that node j's expression reads (through inlined operators) */
static void collect_inputs(const op_plan *p, int j, params *ps) {
    const ir_node *n = &p->g->nodes[j];
    for (int a = 0; a < n->n_in; a++) {
        int x = n->in[a];
        if (p->buf[x] >= 0) add_param(ps, x);
        else collect_inputs(p, x, ps);
    }
}

/* The opening of a kernel. CUDA: every kernel, the program's first included, waits for its
 * predecessor's results itself (griddepcontrol.wait; a no-op when launched plainly), so the
 * runtime may launch it as a programmatic dependent: its launch then overlaps the end of the
 * kernel before it in the stream, whichever program that was (session 9: nTrans 2.9 -> 2.7,
 * LoRA 3.7 -> 3.4, GQA b=1 9.2 -> 8.8 us, notes §27). (Letting it
 * launch earlier, griddepcontrol.launch_dependents at the predecessor's start, measured
 * slower: GQA b=1 12.5 against 10.5 us.) */
/* Parameter list of ps, without the parentheses: outputs writable, inputs const, all
 * __restrict__ in CUDA except, with `fused`, buffers a kernel writes (see emit_fused). */
static void param_list(em *E, const char **gn, const params *ps, int fused) {
    for (int i = 0; i < ps->n; i++) {
        int x = ps->node[i];
        int restrict_ = E->tg == CG_CUDA && !(fused && i >= ps->n_out && E->p->g->nodes[x].op == IR_OP_KERNEL);
        sb_printf(E->sb, "%s%s%s *%s%s", i ? ", " : "", i < ps->n_out ? "" : "const ", ctype(E->p->store[x]),
                  restrict_ ? "__restrict__ " : "", gn[x]);
    }
}

static void signature(em *E, const char *kname, const params *ps, int nthreads, const char **gn, int after) {
    if (E->tg == CG_CUDA) sb_printf(E->sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", nthreads, kname);
    else sb_printf(E->sb, "static void %s(", kname);
    param_list(E, gn, ps, 0);
    sb_puts(E->sb, ") {\n");
    if (E->tg == CG_CUDA && after) sb_puts(E->sb, "    mg_grid_wait(); /* the previous kernel's results */\n");
}

static void record_launch(const em *E, cg_program *out, const char *kname, int node, const params *ps,
                          const unsigned grid[3], unsigned block, int64_t smem) {
    cg_launch *l = &out->launches[out->n_launches++];
    snprintf(l->name, sizeof l->name, "%s", kname);
    l->node = node, l->block = block, l->smem = smem, l->n_args = ps->n;
    l->pdl = E->tg == CG_CUDA && !E->p->fused && !E->p->clustered; /* signature() made it wait */
    memcpy(l->grid, grid, sizeof l->grid);
    for (int i = 0; i < ps->n; i++) l->args[i] = E->p->buf[ps->node[i]];
}

/* ---- block kernels (graph-defined operators) ---- */

/* Element offset of node n's tile in its full tensor (dims fd), Mirage §2: each mapped grid
 * dim moves the tile by one block's chunk, the for-loop dim by one tile per iteration. */
static void tile_base(em *E, const ir_node *n, const int64_t td[4], const int64_t fst[4], strbuf *o) {
    static const char *bvar[3] = {"bx", "by", "bz"};
    int pad = 4 - (int)(n->op == IR_OP_SAVE ? E->g->nodes[n->in[0]].shape.ndim : n->shape.ndim);
    int any = 0;
    for (int gd = 0; gd < 3; gd++) {
        if (n->map[gd] < 0) continue;
        int d = n->map[gd] + pad;
        int64_t chunk = td[d] * (n->op == IR_OP_ITER && n->fmap + pad == d ? E->k->body->forloop : 1);
        sb_printf(o, "%s(long long)%s * %" PRId64 "LL", any ? " + " : "", bvar[gd], chunk * fst[d]);
        any = 1;
    }
    if (n->op == IR_OP_ITER && n->fmap >= 0) {
        sb_printf(o, "%s(long long)it * %" PRId64 "LL", any ? " + " : "", td[n->fmap + pad] * fst[n->fmap + pad]);
        any = 1;
    }
    if (!any) sb_puts(o, "0LL");
}

static void full_strides(const int64_t fd[4], int64_t st[4]) {
    int64_t s = 1;
    for (int d = 3; d >= 0; d--) st[d] = fd[d] == 1 ? 0 : s, s *= fd[d];
}

/* Can iterator tile t move in 16-byte vectors along its inner dim (the last, or the one
 * before it for a column-major tile), given its source's strides fst? That dim must be
 * contiguous in the source, and every other stride, in the source and in shared memory, and
 * the tile's extent along it, whole vectors: every vector then starts 16-byte aligned at both
 * ends. CUDA only; C copies element by element. */
static int vector_iter(const em *E, const op_tensor *t, const int64_t fst[4]) {
    int64_t v = 16 / (int64_t)base_dtype_size(t->store);
    int inner = t->colmajor ? 2 : 3;
    if (E->tg != CG_CUDA || fst[inner] != 1 || t->dim[inner] % v) return 0;
    for (int d = 0; d < 4; d++)
        if (d != inner && t->dim[d] > 1 && (fst[d] % v || t->stride[d] % v)) return 0;
    return 1;
}

/* iterator: copy this block's (and iteration's) tile of a kernel input into shared memory;
 * a pipelined one (t->pipe.stages) with 16-byte rows in CUDA as cp.async copies that the loop
 * waits for later, else with plain loads and stores */
static void step_iter(em *E, int j, const char *gname, int x) {
    const ir_node *n = &E->g->nodes[j];
    const op_tensor *t = &E->k->t[j];
    const int64_t *fst = E->p->kst[x]; /* kernel input x's layout */
    sb_puts(E->sb, "    {\n    const long long base_ = ");
    tile_base(E, n, t->dim, fst, E->sb);
    sb_puts(E->sb, ";\n");
    if (t->tc.wg) { /* core-matrix layout (opt.h): piece e is row k % 8 of block e / 8, so
                  * eight threads fill one 128-byte block and a warp 512 contiguous bytes */
        int64_t K = t->dim[2], N = t->dim[3];
        int as = t->pipe.stages || E->async;
        sb_printf(E->sb, "    #pragma unroll 4\n    for (int e = threadIdx.x; e < %" PRId64 "; e += %d) {\n", K * N / 8,
                  E->k->threads);
        sb_printf(E->sb, "        const long long k_ = e / %" PRId64 " * 8 + e %% 8, n_ = e / 8 %% %" PRId64 " * 8;\n", N, N / 8);
        sb_printf(E->sb, as ? "        mg_cp16(&%s[e * 8], &%s[base_ + k_ * %" PRId64 "LL + n_]);\n    }\n    }\n"
                            : "        *(uint4 *)&%s[e * 8] = *(const uint4 *)&%s[base_ + k_ * %" PRId64 "LL + n_];\n    }\n    }\n",
                  E->names[j], gname, fst[2]);
        return;
    }
    coord c;
    int perm[4] = {0, 1, 2, 3};
    if (vector_iter(E, t, fst)) { /* loop over vectors: the inner dim counted in vectors */
        int64_t v = 16 / (int64_t)base_dtype_size(t->store), vd[4];
        int inner = t->colmajor ? 2 : 3;
        memcpy(vd, t->dim, sizeof vd);
        vd[inner] /= v;
        if (inner == 2) perm[2] = 3, perm[3] = 2;
        loop_open_perm(E, vd, c, perm);
        coord cs; /* the destination's coordinates: 16-byte piece c3 of row c2 at c3 ^ swizzle */
        if (vd[inner] > 1) snprintf(c[inner], CW, "(c3 * %" PRId64 ")", v); /* inner is counted fastest */
        memcpy(cs, c, sizeof cs);
        if (t->tc.swz && vd[inner] > 1)
            snprintf(cs[inner], CW, t->tc.swz == 1 ? "((c3 ^ (%s & 7)) * %" PRId64 ")" : "((c3 ^ ((%s >> 1) & 3)) * %" PRId64 ")",
                     c[2], v);
        int as = t->pipe.stages || E->async;
        sb_printf(E->sb, as ? "        mg_cp16(&%s[" : "        *(uint4 *)&%s[", E->names[j]);
        index_expr(E->sb, cs, t->stride, 0);
        sb_printf(E->sb, as ? "], &%s[base_ + " : "] = *(const uint4 *)&%s[base_ + ", gname);
        index_expr(E->sb, c, fst, 1);
        sb_puts(E->sb, as ? "]);\n    }\n    }\n" : "];\n    }\n    }\n");
        return;
    }
    /* element by element, the source's most contiguous dims fastest */
    for (int a = 1; a < 4; a++)
        for (int b = a; b > 0 && fst[perm[b - 1]] < fst[perm[b]]; b--) {
            int tmp = perm[b];
            perm[b] = perm[b - 1], perm[b - 1] = tmp;
        }
    loop_open_perm(E, t->dim, c, perm);
    sb_printf(E->sb, "        %s[", E->names[j]);
    index_expr(E->sb, c, t->stride, 0);
    sb_printf(E->sb, "] = %s%s[base_ + ", t->tc.cvt ? "mg_stb(mg_ldh(" : "", gname);
    index_expr(E->sb, c, fst, 1);
    sb_puts(E->sb, t->tc.cvt ? "]));\n    }\n    }\n" : "];\n    }\n    }\n");
}

/* Is iterator j's tile (of kernel input x) copied as raw f16 and converted in place
 * afterwards (t->tc.cvt with 16-byte copies), rather than converted element by element? */
static int cvt_in_place(const em *E, int j, int x) {
    return E->k->t[j].tc.cvt && vector_iter(E, &E->k->t[j], E->p->kst[x]);
}

/* The in-place conversions of raw-copied cvt tiles: pipelined ones (stages) or the others.
 * Returns how many it wrote. */
static int convert_in_place(em *E, int knode, int pipelined) {
    int count = 0;
    for (int j = 0; j < E->g->n_nodes; j++) {
        const ir_node *n = &E->g->nodes[j];
        const op_tensor *t = &E->k->t[j];
        if (n->op != IR_OP_ITER || (t->pipe.stages > 0) != pipelined) continue;
        if (!cvt_in_place(E, j, E->p->g->nodes[knode].in[n->index])) continue;
        sb_printf(E->sb, "    mg_h2bf_block(%s, %" PRId64 "); /* f16 copied, bf16 read */\n", E->names[j], t->pipe.elems);
        count++;
    }
    return count;
}

/* The stored tile node j reads as it is (through reshapes, which are index maps, and
 * one-iteration accumulators), when four consecutive elements of j along its last dim are
 * four consecutive, 16-byte aligned floats of it (f32, row-major rows, every stride and its
 * last dim multiples of 4; the callers' tiles keep four-element groups inside a row); else
 * -1. A save then reads each four with one float4 load (GQA b=1's partial sums: the saves
 * 1.0 -> 0.77 us a block, notes §27). */
static int vec4_source(const em *E, int j) {
    for (;;) {
        if (E->g->nodes[j].op == IR_OP_RESHAPE && !E->k->t[j].mat) j = E->g->nodes[j].in[0];
        else if (E->g->nodes[j].op == IR_OP_ACCUM && !E->k->t[j].mat) j = E->g->nodes[j].in[0];
        else break;
    }
    const op_tensor *t = &E->k->t[j];
    if (!t->mat || t->store != MG_F32 || t->tc.swz || t->stride[3] != 1 || t->dim[3] % 4) return -1;
    for (int d = 0; d < 3; d++)
        if (t->stride[d] % 4) return -1;
    return j;
}

/* A loop over dims d, dim v taken four at a time, each thread storing four consecutive
 * elements with one mg_put4(&dst[base index], ...): node's value at each (force: the
 * operator computed here, as expr()). Closes the loop. Strides st index dst (in a block:
 * int arithmetic unless base is a device offset, `base_ + `). */
static void put4_loop(em *E, const int64_t d[4], int v, const char *dst, const char *base, const int64_t st[4],
                      int node, int force) {
    int64_t vd[4] = {d[0], d[1], d[2], d[3]};
    vd[v] /= 4;
    coord c;
    char cv[8]; /* "cN" */
    loop_open(E, vd, c);
    snprintf(cv, sizeof cv, "%.7s", c[v]);
    snprintf(c[v], CW, "(%s * 4)", cv);
    int vec = !force && E->tg == CG_CUDA && E->block && vec4_source(E, node) >= 0;
    if (vec) { /* the four values by one 16-byte load */
        sb_puts(E->sb, "        const float4 q4_ = *(const float4 *)&");
        expr(E, E->sb, node, c, force);
        sb_puts(E->sb, ";\n");
    }
    sb_printf(E->sb, "        mg_put4(&%s[%s", dst, base);
    index_expr(E->sb, c, st, *base != 0);
    sb_puts(E->sb, "]");
    for (int q = 0; q < 4; q++) {
        snprintf(c[v], CW, "(%s * 4 + %d)", cv, q);
        sb_puts(E->sb, ",\n            ");
        if (vec) sb_printf(E->sb, "q4_.%c", "xyzw"[q]);
        else expr(E, E->sb, node, c, force);
    }
    sb_puts(E->sb, ");\n    }\n");
}

/* The dim along which a saver can write its tile of dims td, into a buffer of strides fst,
 * four elements at a time, or -1. CUDA blocks only; that dim is the tile's last of size > 1,
 * contiguous in the buffer and a multiple of four; every other stride is a multiple of four
 * (each group of four then starts aligned). */
static int vector_save(const em *E, const int64_t td[4], const int64_t fst[4]) {
    int v = 3;
    while (v > 0 && td[v] == 1) v--;
    if (E->tg != CG_CUDA || !E->block || fst[v] != 1 || td[v] % 4) return -1;
    for (int d = 0; d < 4; d++)
        if (d != v && fst[d] % 4) return -1;
    return v;
}

/* saver: write the saved tile to this block's part of the kernel output (omap) */
static void step_save(em *E, int j, const char *gname, int x) {
    const ir_node *n = &E->g->nodes[j];
    int64_t td[4];
    const int64_t *fst = E->p->kst[x]; /* kernel output x's layout */
    mg_dtype gt = E->p->store[x];
    op_pad4(&E->g->nodes[n->in[0]].shape, td);
    sb_puts(E->sb, "    {\n    const long long base_ = ");
    tile_base(E, n, td, fst, E->sb);
    sb_puts(E->sb, ";\n");
    coord c;
    int v = vector_save(E, td, fst);
    if (v >= 0) { /* four consecutive elements a thread, one store */
        put4_loop(E, td, v, gname, "base_ + ", fst, n->in[0], 0);
        sb_puts(E->sb, "    }\n");
        return;
    }
    loop_open(E, td, c);
    sb_printf(E->sb, "        %s[base_ + ", gname);
    index_expr(E->sb, c, fst, 1);
    sb_printf(E->sb, "] = %s(", stfn(gt));
    expr(E, E->sb, n->in[0], c, 0);
    sb_puts(E->sb, ");\n    }\n    }\n");
}

/* accumulator: add this iteration's value (fmap phi), or place it in its slot (fmap d) */
static void step_accum(em *E, int j) {
    const ir_node *n = &E->g->nodes[j];
    const op_tensor *t = &E->k->t[j];
    if (t->fuse.red >= 0) { /* the reduction's lanes add their result in place */
        const ir_node *r = &E->g->nodes[t->fuse.red];
        int lanes = reduce_lanes(E, r);
        coord c;
        loop_open_lanes(E, t->dim, c, lanes);
        compute_reduce(E, r, c);
        if (lanes > 1) sb_puts(E->sb, "        if (ok_ && l_ == 0)\n");
        sb_printf(E->sb, "        %s[", E->names[j]);
        index_expr(E->sb, c, t->stride, 0);
        sb_puts(E->sb, "] += v;\n    }\n");
        return;
    }
    int64_t id[4];
    op_pad4(&E->g->nodes[n->in[0]].shape, id);
    coord c, ac;
    loop_open(E, id, c);
    memcpy(ac, c, sizeof ac);
    if (n->fmap >= 0) {
        int d = n->fmap + 4 - n->shape.ndim;
        snprintf(ac[d], CW, "(%s + it * %" PRId64 ")", c[d], id[d]);
    }
    sb_printf(E->sb, "        %s[", E->names[j]);
    index_expr(E->sb, ac, t->stride, 0);
    sb_printf(E->sb, "] %s ", n->fmap >= 0 ? "=" : "+=");
    expr(E, E->sb, n->in[0], c, 0);
    sb_puts(E->sb, ";\n    }\n");
}

/* Can block matmul j run on tensor cores (CUDA, whole warps, f16/bf16 dtype)? */
static int tc_matmul(const em *E, int j) {
    return E->tg == CG_CUDA && E->k->threads % 32 == 0 && E->g->nodes[j].dtype != MG_F32;
}


/* a block matmul on tensor cores: into shared memory (mg_mm_tc; through the elementwise
 * epilogue of node `out` when out != j, as fuse.mm), or, for a register accumulator, added to
 * the warp's fragments r_<accumulator> (mg_mm_acc) */
/* The stored tensor holding node j's value: j, or for a one-iteration accumulator read in
 * place of its operand, that operand (opt/plan.c). */
static int stored_as(const em *E, int j) {
    while (E->g->nodes[j].op == IR_OP_ACCUM && !E->k->t[j].mat) j = E->g->nodes[j].in[0];
    return j;
}

/* How mg_mm_tile reads its operands' fragments (the LA, LB modes of the prelude) for a
 * product of depth K and width N in the mma's type (bf: bf16, else f16); a may be NULL. */
static void frag_modes(const op_tensor *a, const op_tensor *b, int bf, int64_t K, int64_t N, int *la, int *lb) {
    mg_dtype mt = bf ? MG_BF16 : MG_F16;
    int batch_ok = b->stride[0] % 8 == 0 && b->stride[1] % 8 == 0 && (!a || (a->stride[0] % 8 == 0 && a->stride[1] % 8 == 0));
    /* fragments by ldmatrix: operands in the mma's type, 16-byte rows, whole k-steps */
    /* or f16 tiles for a bf16 product: loaded the same way, converted in registers */
    int cva = a && bf && a->store == MG_F16, cvb = bf && b->store == MG_F16;
    *la = !a || a->stride[3] != 1 || !batch_ok || K % 16 ? 0
          : (a->store == mt || cva) && a->stride[2] % 8 == 0 ? (cva ? 3 : 1)
          : a->store == MG_F32 && a->stride[2] % 2 == 0 ? 2 : 0;
    *lb = (b->store != mt && !cvb) || !batch_ok || K % 16 ? 0
          : b->stride[3] == 1 && b->stride[2] % 8 == 0 && N % 8 == 0 ? (cvb ? 3 : 1)
          : b->stride[2] == 1 && b->stride[3] % 8 == 0 ? (cvb ? 4 : 2) : 0;
    /* a swizzled tile (op_tensor.tc.swz) is read by ldmatrix.trans only: mode | swz << 4 */
    if (b->tc.swz) *lb = *lb == 1 || *lb == 3 ? *lb | b->tc.swz << 4 : -1;
}

/* node j's value as the body of a lambda over vr_, the value of node `in` (an epilogue) */
static void epilogue(em *E, int j, int in) {
    coord c0 = {"0", "0", "0", "0"};
    sb_puts(E->sb, "[](float vr_) { return ");
    E->reg_node = in;
    expr(E, E->sb, j, c0, 1);
    E->reg_node = -1;
    sb_puts(E->sb, "; }");
}

static int step_matmul_tc(em *E, int j, int out) {
    const ir_node *n = &E->g->nodes[j];
    if (!tc_matmul(E, j)) return 0;
    int ia = stored_as(E, n->in[0]), ib = stored_as(E, n->in[1]);
    const op_tensor *a = &E->k->t[ia], *b = &E->k->t[ib], *c = &E->k->t[out];
    int bf = !(a->store == MG_F16 && b->store == MG_F16), acc = E->k->t[j].fuse.regacc, la, lb;
    frag_modes(a, b, bf, a->dim[3], c->dim[3], &la, &lb);
    if (lb < 0 && !E->rc) E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: a swizzled tile read without ldmatrix");
    int64_t T;
    int SK;
    op_regacc_split(E->g, E->k, j, &T, &SK);
    if (acc >= 0)
        sb_printf(E->sb, "    mg_mm_acc<%s, %d, %d, %" PRId64 ", %d>(r_%s, ", bf ? "true" : "false", la, lb, T, SK,
                  E->names[acc]);
    else {
        /* the tiles start on the warp after the previous matmul's in this barrier interval:
         * independent small matmuls (LoRA's X W and X A, each a few long-K tiles) then run on
         * different warps side by side instead of one after another on warp 0 */
        const int64_t *d = c->dim;
        int64_t tiles = d[0] * d[1] * ((d[2] + 15) / 16) * ((d[3] + 31) / 32), warps = E->k->threads / 32;
        sb_printf(E->sb, "    mg_mm_tc<%s, %d, %d, %d>(%s, ", bf ? "true" : "false", la, lb, E->mm_w0, E->names[out]);
        E->mm_w0 = (int)((E->mm_w0 + tiles) % (warps > 0 ? warps : 1));
    }
    sb_printf(E->sb, "%s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64, E->names[ia],
              E->names[ib], c->dim[0], c->dim[1], c->dim[2], c->dim[3], a->dim[3]);
    const op_tensor *ts[3] = {a, b, c};
    for (int q = 0; q < (acc >= 0 ? 2 : 3); q++)
        for (int d = 0; d < 4; d++) sb_printf(E->sb, ", %" PRId64, ts[q]->stride[d]);
    if (acc < 0 && out != j) { /* the epilogue: out's expression with the matmul's value as vr_ */
        sb_puts(E->sb, ", ");
        epilogue(E, out, j);
    } else if (acc < 0) sb_puts(E->sb, ", mg_idf{}");
    sb_puts(E->sb, ");\n");
    return 1;
}

/* After the loop: a register accumulator's sum (CUDA: the warps' fragments; C: the block's
 * private dense array) to its shared-memory tensor. */
static void store_regacc(em *E, int acc) {
    const op_tensor *t = &E->k->t[acc];
    int mm = t->fuse.regacc;
    if (E->tg == CG_C) {
        coord c;
        int64_t dense[4];
        full_strides(t->dim, dense);
        loop_open(E, t->dim, c);
        sb_printf(E->sb, "        %s[", E->names[acc]);
        index_expr(E->sb, c, t->stride, 0);
        sb_printf(E->sb, "] = r_%s[", E->names[acc]);
        index_expr(E->sb, c, dense, 0);
        sb_puts(E->sb, "];\n    }\n");
        return;
    }
    int64_t T;
    int SK;
    op_regacc_split(E->g, E->k, mm, &T, &SK);
    if (E->k->t[mm].chain.of >= 0) {
        const op_tensor *h = &E->k->t[E->k->t[mm].chain.of];
        sb_printf(E->sb, "    mg_chain_put<%d, %" PRId64 ", %d, %d>(%s, r_%s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                  ", mg_idf{});\n", E->k->threads / 32, t->dim[3] / 32, h->chain.ts, h->chain.sk, E->names[acc], E->names[acc], t->dim[2],
                  t->dim[3], t->stride[2], t->stride[3]);
        return;
    }
    char scratch[48] = "(float *)0";
    if (SK > 1 && E->k->acc_scratch >= 0) snprintf(scratch, sizeof scratch, "(float *)(smem + %" PRId64 ")", E->k->acc_scratch);
    sb_printf(E->sb, "    mg_mm_acc_store<%" PRId64 ", %d>(%s, r_%s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64, T, SK,
              E->names[acc], E->names[acc], scratch, t->dim[0], t->dim[1], t->dim[2], t->dim[3]);
    for (int d = 0; d < 4; d++) sb_printf(E->sb, ", %" PRId64, t->stride[d]);
    sb_puts(E->sb, ");\n");
}

/* An elementwise step (CUDA) whose stored rows are contiguous in whole groups of four: each
 * thread computes four neighbours and stores them at once (mg_put4), a quarter of the loop
 * and index arithmetic and of the store instructions (QKNorm's Q / rms(Q)). */
static int step_elementwise4(em *E, int j) {
    const op_tensor *t = &E->k->t[j];
    ir_kind kd = ir_ops[E->g->nodes[j].op].kind;
    if (E->tg != CG_CUDA || (kd != IR_KIND_UNARY && kd != IR_KIND_BINARY) || t->fuse.red >= 0 || t->fuse.mm >= 0 ||
        t->fuse.regacc >= 0 || t->dim[3] % 4 || t->stride[3] != 1 || t->stride[2] % 4 || t->stride[1] % 4 || t->stride[0] % 4)
        return 0;
    put4_loop(E, t->dim, 3, E->names[j], "", t->stride, j, 1);
    return 1;
}

static void step_op(em *E, int j) {
    const op_tensor *t = &E->k->t[j];
    const ir_node *n = &E->g->nodes[j];
    if (n->op == IR_OP_MATMUL && step_matmul_tc(E, j, j)) return;
    if (t->fuse.mm >= 0 && step_matmul_tc(E, t->fuse.mm, j)) return;
    coord c;
    int red = t->fuse.red >= 0 ? t->fuse.red : ir_ops[n->op].kind == IR_KIND_REDUCE ? j : -1;
    int lanes = red >= 0 ? reduce_lanes(E, &E->g->nodes[red]) : 1, in = t->fuse.red >= 0 ? t->fuse.red : t->fuse.mm;
    if (step_elementwise4(E, j)) return;
    loop_open_lanes(E, t->dim, c, lanes);
    if (in >= 0) { /* the reduction or matmul, then this value over it */
        if (red >= 0) compute_reduce(E, &E->g->nodes[red], c);
        else compute_matmul(E, &E->g->nodes[in], c);
        sb_puts(E->sb, "        const float vr_ = v;\n");
        E->reg_node = in;
        sb_puts(E->sb, "        (void)vr_;\n        {\n        const float v = ");
        expr(E, E->sb, j, c, 1);
        sb_puts(E->sb, ";\n");
        E->reg_node = -1;
        if (lanes > 1) sb_puts(E->sb, "        if (ok_ && l_ == 0)\n");
        store_to(E, E->names[j], t->store, t->stride, c, "v");
        sb_puts(E->sb, "        }\n    }\n");
        return;
    }
    compute(E, j, c);
    if (lanes > 1) sb_puts(E->sb, "        if (ok_ && l_ == 0)\n");
    if (t->fuse.regacc >= 0) { /* C: the block's private sum, dense row-major, for the loop */
        int64_t dense[4];
        full_strides(t->dim, dense);
        sb_printf(E->sb, "        r_%s[", E->names[t->fuse.regacc]);
        index_expr(E->sb, c, dense, 0);
        sb_puts(E->sb, "] += v;\n    }\n");
        return;
    }
    store_to(E, E->names[j], t->store, t->stride, c, "v");
    sb_puts(E->sb, "    }\n");
}

/* Position of node j among the block program's steps, or -1. */
static int step_pos(const op_kernel *k, int j) {
    for (int s = 0; s < k->n_steps; s++)
        if (k->step[s] == j) return s;
    return -1;
}

/* A chain (plan.c, find_chains) at the first of its two writers' steps: mg_chain into the
 * register accumulator, or into local fragments stored right after (mg_chain_put). */
static void step_chain(em *E, int e) {
    const op_tensor *h = &E->k->t[e];
    const ir_node *m1 = &E->g->nodes[h->fuse.mm], *m2 = &E->g->nodes[h->chain.mm];
    const op_tensor *a = &E->k->t[stored_as(E, m1->in[0])], *b = &E->k->t[stored_as(E, m1->in[1])];
    const op_tensor *v = &E->k->t[stored_as(E, m2->in[1])], *o = &E->k->t[h->chain.mm];
    const op_tensor *w = &E->k->t[h->chain.mw], *r = &E->k->t[h->chain.sw];
    int bf = !(a->store == MG_F16 && b->store == MG_F16), la, lb, lv, dummy;
    int64_t M = h->dim[2], N1 = h->dim[3], K1 = a->dim[3], N2 = o->dim[3];
    frag_modes(a, b, bf, K1, N1, &la, &lb);
    frag_modes(NULL, v, 1, N1, N2, &dummy, &lv);
    if ((lb < 0 || lv < 0) && !E->rc) E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: a swizzled tile read without ldmatrix");
    int acc = o->fuse.regacc, rs_mode = E->g->nodes[h->chain.sw].op == IR_OP_ACCUM ? 1 : 2;
    int64_t srm = r->dim[2] == M ? r->stride[2] : r->stride[3];
    char oname[80];
    snprintf(oname, sizeof oname, "r_%s", acc >= 0 ? E->names[acc] : "chain");
    if (acc < 0)
        sb_printf(E->sb, "    {\n    float r_chain[%d][4][4] = {};\n", (int)(h->chain.ts * (N2 / 32)));
    if (h->chain.wg) /* B and V in the core-matrix layout, read by wgmma */
        sb_printf(E->sb, "    mg_chain_wg<%d, %s, %d, %s, %" PRId64 ", %" PRId64 ", %d, %d, %d, %" PRId64 ">(%s, %s, %" PRId64
                  ", %s, %s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", ",
                  E->k->threads / 32, bf ? "true" : "false", la, h->chain.wg == 2 ? "true" : "false", N1 / h->chain.sk / 32, N2 / 32, h->chain.ts, h->chain.sk,
                  rs_mode, K1 / 16, oname, E->names[h->chain.sw], srm, E->names[stored_as(E, m1->in[0])],
                  E->names[stored_as(E, m1->in[1])], E->names[stored_as(E, m2->in[1])], M, N1, N2, a->stride[2],
                  a->stride[3]);
    else sb_printf(E->sb, "    mg_chain<%d, %s, %d, %d, %d, %" PRId64 ", %" PRId64 ", %d, %d, %d, %" PRId64 ">(%s, %s, %" PRId64
              ", %s, %s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
              ", %" PRId64 ", %" PRId64 ", %" PRId64 ", ",
              E->k->threads / 32, bf ? "true" : "false", la, lb, lv, N1 / h->chain.sk / 32, N2 / 32, h->chain.ts, h->chain.sk, rs_mode,
              K1 / 16, oname, E->names[h->chain.sw], srm, E->names[stored_as(E, m1->in[0])],
              E->names[stored_as(E, m1->in[1])], E->names[stored_as(E, m2->in[1])], M, N1, N2, a->stride[2], a->stride[3],
              b->stride[2], b->stride[3], v->stride[2], v->stride[3]);
    epilogue(E, e, h->fuse.mm);
    sb_puts(E->sb, ");\n");
    if (acc >= 0) return;
    sb_printf(E->sb, "    mg_chain_put<%d, %" PRId64 ", %d, %d>(%s, r_chain, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", ",
              E->k->threads / 32, N2 / 32, h->chain.ts, h->chain.sk, E->names[h->chain.mw], M, N2, w->stride[2], w->stride[3]);
    if (h->chain.mw == h->chain.mm) sb_puts(E->sb, "mg_idf{}");
    else epilogue(E, h->chain.mw, h->chain.mm);
    sb_puts(E->sb, ");\n    }\n");
}

/* Is step j one of a chain's two writers? It then emits the chain if it comes first, else
 * nothing. */
static int chain_writer(em *E, int j) {
    int e = E->k->t[j].chain.of;
    if (E->tg != CG_CUDA || e < 0) return 0;
    const op_tensor *h = &E->k->t[e];
    if (j != h->chain.mw && j != h->chain.sw) return 0;
    int other = j == h->chain.mw ? h->chain.sw : h->chain.mw;
    if (other == j || step_pos(E->k, j) < step_pos(E->k, other)) step_chain(E, e);
    else sb_puts(E->sb, "    /* (written by the chain above) */\n");
    return 1;
}

static void barrier(em *E) {
    E->mm_w0 = 0;
    if (E->tg == CG_CUDA) sb_puts(E->sb, E->wg ? "    mg_fence_async();\n    __syncthreads();\n" : "    __syncthreads();\n");
}

/* The steps of one phase of the block program, with the planned barriers; only iterators
 * (only = 1), all but iterators (only = 2) or all (0). */
static void block_steps_only(em *E, int from, int to, const char **gn, int knode, const params *ps, int only) {
    const op_kernel *k = E->k;
    const ir_graph *kg = E->p->g;
    for (int s = from; s < to; s++) {
        int j = k->step[s];
        const ir_node *n = &E->g->nodes[j];
        if (only && (n->op == IR_OP_ITER) != (only == 1)) continue;
        if (k->sync[s] && only != 1) barrier(E);
        if (s == k->loop_begin && only == 0 && k->stages && convert_in_place(E, knode, 1) && k->cvt_sync) barrier(E);
        comment(E, j, ir_ops[n->op].name);
        if (chain_writer(E, j)) continue;
        if (n->op == IR_OP_ITER) {
            int x = kg->nodes[knode].in[n->index];
            step_iter(E, j, gn[x], x);
        } else if (n->op == IR_OP_SAVE) {
            int x = ps->node[n->index];
            step_save(E, j, gn[x], x);
        } else if (n->op == IR_OP_ACCUM && E->k->t[j].fuse.mm < 0) step_accum(E, j);
        else step_op(E, j);
    }
}

static void block_steps(em *E, int from, int to, const char **gn, int knode, const params *ps) {
    block_steps_only(E, from, to, gn, knode, ps, 0);
}

static void block_decls(em *E) {
    const op_kernel *k = E->k;
    for (int j = 0; j < E->g->n_nodes; j++) {
        const op_tensor *t = &k->t[j];
        if (!t->mat) continue;
        char sh[64];
        sb_printf(E->sb, "    %s *%s%s = (%s *)(smem + %" PRId64 "); /* %s, %s%s", ctype(t->store), E->names[j],
                  t->pipe.stages ? "_st" : "", ctype(t->store), t->off, ir_shape_str(t->store, &E->g->nodes[j].shape, sh, sizeof sh),
                  t->colmajor ? "column-major" : "row-major",
                  (t->colmajor ? t->stride[3] != t->dim[2] && t->dim[3] > 1 : t->stride[2] != t->dim[3] && t->dim[2] > 1)
                      ? ", padded rows" : t->tc.swz ? ", 16-byte pieces swizzled" : "");
        if (t->pipe.stages) sb_printf(E->sb, "; %d stages %" PRId64 " elements apart", t->pipe.stages, t->pipe.elems);
        sb_puts(E->sb, " */\n");
    }
}

/* Points each pipelined iterator's name at its stage for iteration `it`. */
static void stage_ptrs(em *E) {
    const op_kernel *k = E->k;
    for (int q = 0; q < k->n_loads; q++) {
        int j = k->load[q];
        const op_tensor *t = &k->t[j];
        sb_printf(E->sb, "    %s *const %s = %s_st + (it %% %d) * %" PRId64 ";\n", ctype(t->store), E->names[j],
                  E->names[j], k->stages, t->pipe.elems);
    }
}

/* The copies of every pipelined iterator's tile for iteration `it` (a variable in scope). */
static void issue_loads(em *E, const char **gn, int knode) {
    const op_kernel *k = E->k;
    const ir_graph *kg = E->p->g;
    stage_ptrs(E);
    for (int q = 0; q < k->n_loads; q++) {
        int j = k->load[q];
        comment(E, j, "iter, pipelined");
        int x = kg->nodes[knode].in[E->g->nodes[j].index];
        step_iter(E, j, gn[x], x);
    }
}

/* The block's program. With a pipeline of S stages, the tiles of iterations 0..S-2 are
 * requested before the prologue's operators; iteration it requests it + S - 1's, waits for
 * its own (cp.async groups: one per iteration, empty past the end) and starts after a
 * barrier. Register accumulators are zeroed fragments before the loop and stored after it. */
static void block_body(em *E, const char **gn, int knode, const params *ps) {
    const op_kernel *k = E->k;
    int S = k->stages, cuda = E->tg == CG_CUDA;
    block_decls(E);
    for (int j = 0; j < E->g->n_nodes; j++) { /* zero the summing accumulators */
        const ir_node *n = &E->g->nodes[j];
        if (n->op != IR_OP_ACCUM || n->fmap >= 0 || !k->t[j].mat || k->t[j].fuse.mm >= 0) continue; /* fuse.mm: written whole */
        if (k->t[j].fuse.regacc >= 0 && cuda) {
            int64_t T;
            int SK;
            op_regacc_split(E->g, E->k, k->t[j].fuse.regacc, &T, &SK);
            sb_printf(E->sb, "    float r_%s[%" PRId64 "][4][4] = {}; /* %s's sum: this warp's fragments */\n",
                      E->names[j], T, E->names[j]);
            continue;
        }
        if (k->t[j].fuse.regacc >= 0) {
            const int64_t *d = k->t[j].dim;
            sb_printf(E->sb, "    float r_%s[%" PRId64 "];\n    memset(r_%s, 0, sizeof r_%s); /* %s's sum */\n", E->names[j],
                      d[0] * d[1] * d[2] * d[3], E->names[j], E->names[j], E->names[j]);
            continue;
        }
        coord c;
        comment(E, j, "zero");
        loop_open(E, k->t[j].dim, c);
        store_to(E, E->names[j], MG_F32, k->t[j].stride, c, "0.0f");
        sb_puts(E->sb, "    }\n");
    }
    /* the tiles that do not move with the loop: requested first, as one group */
    E->async = cuda;
    block_steps_only(E, 0, k->loop_begin, gn, knode, ps, 1);
    E->async = 0;
    if (cuda) sb_puts(E->sb, "    mg_cp_commit();\n");
    if (S > 1) {
        sb_printf(E->sb, "    for (int it = 0; it < %d; it++) { /* the pipeline's first %d iterations */\n", S - 1, S - 1);
        issue_loads(E, gn, knode);
        if (cuda) sb_puts(E->sb, "    mg_cp_commit();\n");
        sb_puts(E->sb, "    }\n");
    }
    if (cuda) sb_printf(E->sb, "    mg_cp_wait<%d>(); /* the fixed tiles */\n", S > 1 ? S - 1 : 0);
    block_steps_only(E, 0, k->loop_begin, gn, knode, ps, 2);
    barrier(E);
    if (convert_in_place(E, knode, 0)) barrier(E);
    sb_printf(E->sb, "    for (int it = 0; it < %" PRId64 "; it++) {\n", k->body->forloop);
    if (S) {
        sb_printf(E->sb, "    {\n    const int ahead_ = it + %d;\n    if (ahead_ < %" PRId64 ") {\n    const int it = ahead_;\n",
                  S - 1, k->body->forloop);
        issue_loads(E, gn, knode);
        sb_puts(E->sb, "    }\n    }\n");
        if (cuda) sb_printf(E->sb, "    mg_cp_commit();\n    mg_cp_wait<%d>();\n", S - 1);
        stage_ptrs(E);
    }
    block_steps(E, k->loop_begin, k->loop_end, gn, knode, ps);
    barrier(E);
    sb_puts(E->sb, "    }\n    (void)0;\n");
    for (int j = 0; j < E->g->n_nodes; j++)
        if (E->g->nodes[j].op == IR_OP_ACCUM && k->t[j].fuse.regacc >= 0) store_regacc(E, j);
    if (k->post_sync) barrier(E);
    block_steps(E, k->loop_end, k->n_steps, gn, knode, ps);
}

/* The kernel-graph nodes block kernel knode passes: its outputs in save order, then its inputs. */
static void block_params(const op_plan *p, int knode, params *ps) {
    const ir_graph *kg = p->g, *b = kg->nodes[knode].body;
    for (int q = 0; q < b->n_outputs; q++)
        for (int i = knode; i < kg->n_nodes; i++)
            if (kg->nodes[i].op == IR_OP_KERNEL && kg->nodes[i].body == b && kg->nodes[i].index == q)
                add_param(ps, i);
    ps->n_out = ps->n;
    for (int q = 0; q < kg->nodes[knode].n_in; q++) add_param(ps, kg->nodes[knode].in[q]);
}

/* E set up to write block kernel knode's body (0), or 1 after an error in KE->rc. */
static int block_em(em *KE, int knode, arena *a, em *E) {
    const op_plan *p = KE->p;
    const ir_graph *b = p->g->nodes[knode].body;
    const op_kernel *k = &p->kernels[p->kern[knode]];
    *E = *KE;
    E->g = b, E->k = k, E->block = 1, E->names = c_names(b, a, "s_");
    for (int i = 0; i < b->n_nodes; i++) E->wg |= k->t[i].chain.wg;
    if (!E->names) KE->rc = ctx_err(KE->ctx, MG_ERR_NOMEM, "out of memory");
    return !E->names;
}

static void block_comment(em *E, int knode) {
    char lb[128];
    const ir_graph *b = E->k->body;
    sb_printf(E->sb, "/* %s: graph-defined kernel (node %d); grid [%d, %d, %d] x %d threads, for-loop %" PRId64
                     ", %" PRId64 " bytes of shared memory, %d barriers per iteration */\n",
              ir_node_label(E->p->g, knode, lb, sizeof lb), knode, b->grid[0], b->grid[1], b->grid[2], E->k->threads,
              b->forloop, E->k->smem, E->k->n_barriers);
}

static void emit_block_kernel(em *KE, int knode, const char **gn, cg_program *out, arena *a) {
    const ir_graph *b = KE->p->g->nodes[knode].body;
    params ps = {0};
    block_params(KE->p, knode, &ps);
    char kname[64];
    snprintf(kname, sizeof kname, "k%d_%s", knode, gn[knode] + 2);
    em E;
    if (block_em(KE, knode, a, &E)) return;
    const op_kernel *k = E.k;
    block_comment(&E, knode);
    signature(&E, kname, &ps, E.tg == CG_CUDA ? k->threads : 1, gn, 1);
    if (E.tg == CG_CUDA) {
        sb_puts(E.sb, "    extern __shared__ __align__(16) unsigned char smem[];\n"
                      "    const int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;\n");
        block_body(&E, gn, knode, &ps);
    } else {
        int gx = b->grid[0], gy = b->grid[1], gz = b->grid[2];
        sb_printf(E.sb, "    #pragma omp parallel\n    {\n    unsigned char *smem = (unsigned char *)malloc(%" PRId64 ");\n"
                        "    if (!smem) abort();\n    #pragma omp for schedule(static)\n"
                        "    for (int blk = 0; blk < %d; blk++) {\n"
                        "    const int bx = blk %% %d, by = blk / %d %% %d, bz = blk / %d;\n"
                        "    (void)bx, (void)by, (void)bz;\n",
                  k->smem + 16, gx * gy * gz, gx, gx, gy, gx * gy);
        block_body(&E, gn, knode, &ps);
        sb_puts(E.sb, "    }\n    free(smem);\n    }\n");
    }
    sb_puts(E.sb, "}\n\n");
    unsigned grid[3] = {(unsigned)b->grid[0], (unsigned)b->grid[1], (unsigned)b->grid[2]};
    record_launch(&E, out, kname, knode, &ps, grid, (unsigned)k->threads, k->smem);
    if (E.rc) KE->rc = E.rc;
}

/* ---- one kernel for several block kernels (persistent launch, cluster fusion) ---- */

/* The call arguments of ps, each followed by ", ". */
static void arg_list(em *E, const params *ps) {
    for (int i = 0; i < ps->n; i++) sb_printf(E->sb, "%s, ", E->names[ps->node[i]]);
}

/* The parameters of one kernel running several block kernels: every kernel's outputs, then
 * what they read besides; *first, *last: the first and last KERNEL node, *nk their number. */
static void union_params(const op_plan *p, params *ps, int *first, int *last, int *nk) {
    const ir_graph *kg = p->g;
    *first = *last = -1, *nk = 0;
    for (int i = 0; i < kg->n_nodes; i++)
        if (kg->nodes[i].op == IR_OP_KERNEL && kg->nodes[i].index == 0) {
            params one = {0};
            block_params(p, i, &one);
            for (int q = 0; q < one.n_out; q++) add_param(ps, one.node[q]);
            *first = *first < 0 ? i : *first, *last = i, ++*nk;
        }
    ps->n_out = ps->n;
    for (int i = 0; i < kg->n_nodes; i++)
        if (kg->nodes[i].op == IR_OP_KERNEL && kg->nodes[i].index == 0) {
            params one = {0};
            block_params(p, i, &one);
            for (int q = one.n_out; q < one.n; q++) add_param(ps, one.node[q]);
        }
}

/* ---- a persistent launch (op_plan.fused, CUDA) ----
 * One kernel runs every graph-defined kernel. Each block takes tickets (mg_ticket: the next
 * number, in the order asked) until they run out; ticket t is task t: a block of kernel 0
 * for the first tickets, of kernel 1 for the next, ... A task of kernel q waits for every
 * block of kernels 0..q-1 to finish (mg_task_after) and counts itself done (mg_task_done).
 * No deadlock whatever the number of resident blocks: a waiting task waits only for tasks
 * with smaller tickets, taken by blocks already running, and kernel 0's tasks wait for none.
 * Blocks: as many a multiprocessor as the widest kernel alone would put on one (GQA: 128
 * chain blocks, so one each on 132), so no two blocks of kernel 0 share a multiprocessor
 * that another has to itself (192 blocks, one a task, put two chains on some: GQA b=1 15.6
 * against 9.8 us unfused). The counters live in a buffer of their own
 * (cg_program.sync_buf), zeroed by the runtime once and by the last block to leave. Buffers
 * a later task reads lose __restrict__, so no load of them takes the read-only path, which
 * does not see writes made during the launch. */
static void emit_fused(em *KE, cg_program *out, arena *a) {
    const op_plan *p = KE->p;
    const ir_graph *kg = p->g;
    const char **gn = KE->names;
    params ps = {0};
    int first, last, nk;
    union_params(p, &ps, &first, &last, &nk);
    const op_kernel *k0 = &p->kernels[p->kern[first]];
    int64_t smem = 0, total = 0, widest = 1;
    for (int q = 0; q < p->n_kernels; q++) {
        const ir_graph *b = p->kernels[q].body;
        int64_t n = (int64_t)b->grid[0] * b->grid[1] * b->grid[2];
        smem = p->kernels[q].smem > smem ? p->kernels[q].smem : smem;
        total += n, widest = n > widest ? n : widest;
    }
    /* blocks: as many a multiprocessor as the widest kernel alone would put on one */
    int64_t sm = p->n_sm > 0 ? p->n_sm : 1, blocks = sm * ((widest + sm - 1) / sm);
    blocks = blocks < total ? blocks : total;
    /* each kernel's block program as a function of its block index, compiled on its own (all
     * bodies inlined into one function took 255 registers: GQA b=1 12.7 us, against 12.4) */
    sb_puts(KE->sb, "extern __shared__ __align__(16) unsigned char smem[]; /* every task's */\n");
    for (int knode = 0; knode < kg->n_nodes && !KE->rc; knode++) {
        if (kg->nodes[knode].op != IR_OP_KERNEL || kg->nodes[knode].index != 0) continue;
        em E;
        if (block_em(KE, knode, a, &E)) return;
        params kp = {0};
        block_params(p, knode, &kp);
        block_comment(&E, knode);
        sb_printf(E.sb, "static __device__ __noinline__ void t%d_%s(", knode, gn[knode] + 2);
        param_list(&E, gn, &kp, 1);
        sb_puts(E.sb, ", const int bx, const int by, const int bz) {\n");
        block_body(&E, gn, knode, &kp);
        sb_puts(E.sb, "}\n\n");
        if (E.rc) KE->rc = E.rc;
    }
    if (KE->rc) return;
    char kname[64];
    snprintf(kname, sizeof kname, "kp%d_%s", last, gn[last] + 2);
    sb_printf(KE->sb, "/* one persistent launch of %d graph-defined kernels: %" PRId64 " blocks of %d threads take %" PRId64
                      " tasks */\n", nk, blocks, k0->threads, total);
    sb_printf(KE->sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", k0->threads, kname);
    param_list(KE, gn, &ps, 1);
    sb_printf(KE->sb, ", unsigned *__restrict__ g_sync_) {\n"
                      "    for (;;) {\n"
                      "    const int t_ = mg_ticket(g_sync_, (int *)(smem + %" PRId64 "));\n"
                      "    if (t_ >= %" PRId64 ") {\n    mg_leave(g_sync_, %d);\n    break;\n    }\n", smem, total, nk);
    int64_t start = 0;
    int q = 0;
    for (int knode = 0; knode < kg->n_nodes; knode++) {
        if (kg->nodes[knode].op != IR_OP_KERNEL || kg->nodes[knode].index != 0) continue;
        const ir_graph *b = p->kernels[q].body;
        int64_t n = (int64_t)b->grid[0] * b->grid[1] * b->grid[2];
        sb_printf(KE->sb, "    %sif (t_ < %" PRId64 ") {\n", q ? "else " : "", start + n);
        for (int r = 0; r < q; r++) { /* the kernels before this one, all of them */
            const ir_graph *rb = p->kernels[r].body;
            sb_printf(KE->sb, "    mg_task_after(g_sync_ + %d, %du); /* kernel %d's blocks */\n", 1 + r,
                      rb->grid[0] * rb->grid[1] * rb->grid[2], r);
        }
        params kp = {0};
        block_params(p, knode, &kp);
        sb_printf(KE->sb, "    const int tk_ = t_ - %" PRId64 ";\n    t%d_%s(", start, knode, gn[knode] + 2);
        arg_list(KE, &kp);
        sb_printf(KE->sb, "tk_ %% %d, tk_ / %d %% %d, tk_ / %d);\n", b->grid[0], b->grid[0], b->grid[1],
                  b->grid[0] * b->grid[1]);
        sb_printf(KE->sb, "    mg_task_done(g_sync_ + %d);\n    }\n", 1 + q);
        start += n, q++;
    }
    sb_puts(KE->sb, "    }\n}\n\n");
    unsigned grid[3] = {(unsigned)blocks, 1, 1};
    record_launch(KE, out, kname, last, &ps, grid, (unsigned)k0->threads, smem + 16);
    cg_launch *l = &out->launches[out->n_launches - 1];
    out->sync_buf = out->n_bufs++;
    out->buf_bytes[out->sync_buf] = 4 * (nk + 2);
    l->args[l->n_args++] = out->sync_buf;
}

/* ---- cluster fusion (op_plan.clustered, CUDA) ----
 * One kernel: kernel 1's block program, a cluster barrier (mg_cluster_sync: kernel 1's stores
 * of the whole cluster are visible after it, global memory included), then kernel 2's block
 * program for block cluster_map[i] (a table in the source, i the block's linear index), which
 * reads only what its own cluster wrote (plan_cluster checked it). Launched over kernel 1's
 * grid in clusters (cg_launch.cluster). Both bodies share shared memory from offset 0: the
 * barrier also ends kernel 1's use of it. */
static void emit_clustered(em *KE, cg_program *out, arena *a) {
    const op_plan *p = KE->p;
    const ir_graph *kg = p->g;
    const char **gn = KE->names;
    params ps = {0};
    int k1, k2, nk;
    union_params(p, &ps, &k1, &k2, &nk);
    const int *g1 = kg->nodes[k1].body->grid, *g2 = kg->nodes[k2].body->grid;
    int n = g1[0] * g1[1] * g1[2];
    int64_t smem = p->kernels[0].smem > p->kernels[1].smem ? p->kernels[0].smem : p->kernels[1].smem;
    char kname[64];
    snprintf(kname, sizeof kname, "kc%d_%s", k2, gn[k2] + 2);
    sb_printf(KE->sb, "/* which block of kernel %d each block runs after the cluster barrier */\n"
                      "static __device__ const unsigned short %s_map[%d] = {", k2, kname, n);
    for (int i = 0; i < n; i++) sb_printf(KE->sb, "%s%d", i ? (i % 32 ? ", " : ",\n    ") : "", p->cluster_map[i]);
    sb_puts(KE->sb, "};\n");
    sb_printf(KE->sb, "/* kernels %d and %d as one: clusters of [%d, %d, %d] blocks */\n", k1, k2, p->cluster[0],
              p->cluster[1], p->cluster[2]);
    sb_printf(KE->sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", p->kernels[0].threads, kname);
    param_list(KE, gn, &ps, 1);
    sb_puts(KE->sb, ") {\n    extern __shared__ __align__(16) unsigned char smem[];\n");
    for (int q = 0; q < 2 && !KE->rc; q++) {
        int knode = q ? k2 : k1;
        em E;
        if (block_em(KE, knode, a, &E)) return;
        params kp = {0};
        block_params(p, knode, &kp);
        block_comment(&E, knode);
        if (!q) sb_puts(E.sb, "    {\n    const int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;\n");
        else
            sb_printf(E.sb, "    mg_cluster_sync(); /* the cluster's results of kernel %d */\n    {\n"
                            "    const int t_ = %s_map[blockIdx.x + %d * (blockIdx.y + %d * blockIdx.z)];\n"
                            "    const int bx = t_ %% %d, by = t_ / %d %% %d, bz = t_ / %d;\n",
                      k1, kname, g1[0], g1[1], g2[0], g2[0], g2[1], g2[0] * g2[1]);
        block_body(&E, gn, knode, &kp);
        sb_puts(E.sb, "    }\n");
        if (E.rc) KE->rc = E.rc;
    }
    sb_puts(KE->sb, "}\n\n");
    unsigned grid[3] = {(unsigned)g1[0], (unsigned)g1[1], (unsigned)g1[2]};
    record_launch(KE, out, kname, k2, &ps, grid, (unsigned)p->kernels[0].threads, smem);
    for (int d = 0; d < 3; d++) out->launches[out->n_launches - 1].cluster[d] = (unsigned)p->cluster[d];
}

/* ---- kernel-level operators: one element loop over the grid ---- */

static void emit_op_kernel(em *E, int j, cg_program *out) {
    const ir_node *n = &E->g->nodes[j];
    params ps = {0};
    add_param(&ps, j);
    ps.n_out = 1;
    collect_inputs(E->p, j, &ps);
    char kname[64], lb[128];
    snprintf(kname, sizeof kname, "k%d_%s", j, E->names[j] + 2);
    int64_t d[4];
    op_pad4(&n->shape, d);
    int64_t total = d[0] * d[1] * d[2] * d[3], st[4];
    mg_dtype t;
    sb_printf(E->sb, "/* %s = %s (node %d): kernel-level operator */\n", ir_node_label(E->g, j, lb, sizeof lb),
              ir_ops[n->op].name, j);
    signature(E, kname, &ps, 256, E->names, 1);
    coord c;
    loop_open(E, d, c);
    compute(E, j, c);
    tensor_strides(E, j, st, &t);
    store_to(E, E->names[j], t, st, c, "v");
    sb_puts(E->sb, "    }\n}\n\n");
    int64_t blocks = (total + 255) / 256;
    unsigned grid[3] = {(unsigned)(blocks < 4096 ? blocks : 4096), 1, 1};
    record_launch(E, out, kname, j, &ps, grid, 256, 0);
}

static void c_entry(em *E, const cg_program *out) {
    sb_puts(E->sb, "/* runs every kernel in order; bufs[i] is buffer i (mugen's runtime) */\n"
                   "void mg_entry(void **bufs);\nvoid mg_entry(void **bufs) {\n");
    for (int l = 0; l < out->n_launches; l++) {
        const cg_launch *L = &out->launches[l];
        sb_printf(E->sb, "    %s(", L->name);
        for (int a = 0; a < L->n_args; a++) sb_printf(E->sb, "%sbufs[%d]", a ? ", " : "", L->args[a]);
        sb_puts(E->sb, ");\n");
    }
    sb_puts(E->sb, "}\n");
}

static mg_status fill_buffers(const op_plan *p, mg_ctx *ctx, cg_program *out) {
    const ir_graph *g = p->g;
    out->buf_bytes = base_calloc((size_t)p->n_bufs + 1, sizeof *out->buf_bytes);
    out->in_buf = base_calloc((size_t)g->n_nodes + 1, sizeof(int));
    out->out_buf = base_calloc((size_t)g->n_outputs + 1, sizeof(int));
    if (!out->buf_bytes || !out->in_buf || !out->out_buf) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    out->n_bufs = p->n_bufs;
    for (int i = 0; i < g->n_nodes; i++) {
        if (p->buf[i] >= 0)
            out->buf_bytes[p->buf[i]] = ir_numel(&g->nodes[i].shape) * (int64_t)base_dtype_size(p->store[i]);
        if (g->nodes[i].op == IR_OP_INPUT) out->in_buf[out->n_in++] = p->buf[i];
    }
    for (int k = 0; k < g->n_outputs; k++) out->out_buf[out->n_out++] = p->buf[g->outputs[k]];
    return MG_OK;
}

mg_status cg_emit(const op_plan *p, mg_ctx *ctx, cg_target t, cg_program *out) {
    memset(out, 0, sizeof *out);
    const ir_graph *g = p->g;
    strbuf sb = {0};
    arena a;
    arena_init(&a);
    em E = {.sb = &sb, .p = p, .tg = t, .g = g, .names = c_names(g, &a, "g_"), .ctx = ctx, .reg_node = -1};
    out->launches = base_calloc((size_t)g->n_nodes + 1, sizeof *out->launches);
    if (!E.names || !out->launches) E.rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!E.rc) E.rc = fill_buffers(p, ctx, out);
    if (t == CG_CUDA) {
        sb_puts(&sb, cg_prelude_cuda), sb_puts(&sb, cg_prelude_cuda_mm), sb_puts(&sb, cg_prelude_cuda_mm2), sb_puts(&sb, cg_prelude_cuda_mm3),
        sb_puts(&sb, cg_prelude_cuda_mm4), sb_puts(&sb, cg_prelude_cuda_mm7), sb_puts(&sb, cg_prelude_cuda_mm5), sb_puts(&sb, cg_prelude_cuda_mm6);
        sb_puts(&sb, cg_prelude_cuda_wg), sb_puts(&sb, cg_prelude_cuda_wg1), sb_puts(&sb, cg_prelude_cuda_wg2),
            sb_puts(&sb, cg_prelude_cuda_wg3), sb_puts(&sb, cg_prelude_cuda_task);
    } else sb_puts(&sb, cg_prelude_c);
    out->sync_buf = -1;
    int one = t == CG_CUDA && (p->fused || p->clustered); /* one launch for all kernels */
    if (!E.rc && one) p->clustered ? emit_clustered(&E, out, &a) : emit_fused(&E, out, &a);
    for (int i = 0; !E.rc && !one && i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT || p->inl[i] || (n->op == IR_OP_KERNEL && n->index != 0)) continue;
        if (n->op == IR_OP_KERNEL) emit_block_kernel(&E, i, E.names, out, &a);
        else emit_op_kernel(&E, i, out);
    }
    if (!E.rc && t == CG_C) c_entry(&E, out);
    arena_free(&a);
    if (!E.rc && sb.oom) E.rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (E.rc) {
        sb_free(&sb);
        cg_program_free(out);
        return E.rc;
    }
    out->src = sb_take(&sb);
    return MG_OK;
}

void cg_program_free(cg_program *c) {
    if (!c) return;
    base_free(c->src), base_free(c->launches), base_free(c->buf_bytes);
    base_free(c->in_buf), base_free(c->out_buf);
    memset(c, 0, sizeof *c);
}
