/* feval: the float reference evaluator. Each op's result is computed in double and rounded
 * to f32 after every arithmetic step (or kept in f64 on request); inputs are rounded to their
 * dtype on entry and outputs on exit. Plain loops, obviously right, no reassociation tricks
 * beyond the accumulation order stated per op.
 * Reached through mg_eval_float (api.c); its outputs are the float reference that other
 * implementations of a program are checked against. */
#include <math.h>
#include <string.h>

#include "../ir/scalar.h"
#include "eval.h"

/* Evaluation settings: f64 = 1 keeps every intermediate in double, unrounded. */
typedef struct fctx {
    int f64;
} fctx;

/* Rounds a result to f32 unless in f64 mode. For + - * / and sqrt on f32 operands, computing
 * in double and rounding once to f32 gives the correctly rounded f32 result (double has more
 * than 2 * 24 + 2 significand bits), so this is exact f32 arithmetic; exp is libm's. */
static inline double rnd(const fctx *c, double x) { return c->f64 ? x : (double)(float)x; }

/* The scalar meaning of each unary op: scalar.h's, with libm's exp and sqrt. */
static double unary(ir_op op, double x) {
    switch (op) {
    case IR_OP_EXP: return exp(x);
    case IR_OP_SQR: return MG_S_SQR(x);
    case IR_OP_SQRT: return sqrt(x);
    case IR_OP_SILU: return MG_S_SILU(double, exp, x);
    case IR_OP_RELU: return MG_S_RELU(double, x); /* NaN stays NaN; -inf and -0 give +0 */
    default: MG_ASSERT(!"not a unary op");
    }
    return 0;
}

/* The scalar meaning of each binary op (scalar.h); division by zero follows IEEE (inf or NaN). */
static double binary(ir_op op, double a, double b) {
    switch (op) {
    case IR_OP_ADD: return MG_S_ADD(a, b);
    case IR_OP_SUB: return MG_S_SUB(a, b);
    case IR_OP_MUL: return MG_S_MUL(a, b);
    case IR_OP_DIV: return MG_S_DIV(a, b);
    default: MG_ASSERT(!"not a binary op");
    }
    return 0;
}

/* Elementwise op with broadcasting: the output is written in row-major order (t) while each
 * operand follows its ev_bcast strides, 0 on broadcast dims. */
static void run_binary(const fctx *c, const ir_graph *g, const ir_node *n, double **v, double *o) {
    ev_bcast b;
    ev_bcast_init(&b, &n->shape, &g->nodes[n->in[0]].shape, &g->nodes[n->in[1]].shape);
    const double *x = v[n->in[0]], *y = v[n->in[1]];
    int64_t t = 0;
    for (int64_t i0 = 0; i0 < b.n[0]; i0++)
        for (int64_t i1 = 0; i1 < b.n[1]; i1++)
            for (int64_t i2 = 0; i2 < b.n[2]; i2++) {
                const double *xr = x + i0 * b.sa[0] + i1 * b.sa[1] + i2 * b.sa[2];
                const double *yr = y + i0 * b.sb[0] + i1 * b.sb[1] + i2 * b.sb[2];
                for (int64_t i3 = 0; i3 < b.n[3]; i3++)
                    o[t++] = rnd(c, binary(n->op, xr[i3 * b.sa[3]], yr[i3 * b.sb[3]]));
            }
}

/* sum adds in index order; max keeps the first NaN it meets
 * Each output combines group consecutive elements of the reduced dim (ev_reduce). A sum is
 * rounded after every addition, like a sequential f32 loop; a max picks an existing value and
 * needs no rounding. */
static void run_reduce(const fctx *c, const ir_graph *g, const ir_node *n, const double *x, double *o) {
    ev_reduce r;
    ev_reduce_init(&r, n, &g->nodes[n->in[0]].shape);
    for (int64_t a = 0; a < r.outer; a++)
        for (int64_t j = 0; j < r.n_out; j++)
            for (int64_t i = 0; i < r.inner; i++) {
                const double *src = x + (a * r.n_out * r.group + j * r.group) * r.inner + i;
                double acc = src[0];
                for (int64_t k = 1; k < r.group; k++) {
                    double e = src[k * r.inner];
                    if (n->op == IR_OP_SUM) acc = rnd(c, acc + e);
                    else acc = MG_S_MAX(acc, e);
                }
                o[(a * r.n_out + j) * r.inner + i] = acc;
            }
}

/* out[i][j] = sum over k in increasing order of a[i][k] * b[k][j] (one rounding per step)
 * The i-k-j loop order keeps that k order for every output while streaming rows of b. The
 * product of two f32 values is exact in double, so a step rounds acc + a * b once to f32 (via
 * double): an f32 fused multiply-add, up to a rare double rounding. */
/* orow[j] += a * brow[j], each sum rounded to f32 (f32 = 1) or kept in f64: one loop per
 * mode, so each vectorises (target_clones). */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
static void axpy_row(double *restrict orow, double a, const double *restrict brow, int64_t n, int f32) {
    if (f32)
        for (int64_t j = 0; j < n; j++) orow[j] = (double)(float)(orow[j] + a * brow[j]);
    else
        for (int64_t j = 0; j < n; j++) orow[j] = orow[j] + a * brow[j];
}

static mg_status run_matmul(const fctx *c, const ir_graph *g, const ir_node *n, double **v, double *o) {
    ev_matmul m;
    if (ev_matmul_init(&m, &n->shape, &g->nodes[n->in[0]].shape, &g->nodes[n->in[1]].shape))
        return MG_ERR_NOMEM;
    for (int64_t t = 0; t < m.batch; t++) {
        const double *a = v[n->in[0]] + m.a_off[t], *b = v[n->in[1]] + m.b_off[t];
        double *out = o + t * m.m * m.n;
        for (int64_t i = 0; i < m.m * m.n; i++) out[i] = 0;
        for (int64_t i = 0; i < m.m; i++) {
            if (i % 32 == 0 && ev_stopping()) { /* a stop request, seen inside a long product */
                ev_matmul_free(&m);
                return MG_ERR_LIMIT;
            }
            for (int64_t k = 0; k < m.k; k++)
                axpy_row(out + i * m.n, a[i * m.k + k], b + k * m.n, m.n, !c->f64);
        }
    }
    ev_matmul_free(&m);
    return MG_OK;
}

/* Computes node i into o (numel doubles, allocated by the caller) from operand values v[].
 * Inputs are taken from in[] in the order input nodes appear (*n_in counts them) and rounded
 * to their declared dtype; a constant is its exact decimal's double, rounded like any
 * intermediate. Fails only with MG_ERR_NOMEM (matmul offsets, layout maps) or MG_ERR_LIMIT
 * (a stop request seen inside a matmul, ev_stopping). */
static mg_status run_node(const fctx *c, const ir_graph *g, int i, double **v, double *o,
                          const double *const *in, int *n_in) {
    const ir_node *n = &g->nodes[i];
    int64_t total = ir_numel(&n->shape);
    switch (ir_ops[n->op].kind) {
    case IR_KIND_SOURCE:
        if (n->op == IR_OP_CONST) o[0] = rnd(c, n->value);
        else {
            const double *src = in[(*n_in)++];
            for (int64_t t = 0; t < total; t++) o[t] = base_round_dtype(src[t], n->dtype);
        }
        return MG_OK;
    case IR_KIND_UNARY:
        for (int64_t t = 0; t < total; t++) o[t] = rnd(c, unary(n->op, v[n->in[0]][t]));
        return MG_OK;
    case IR_KIND_BINARY: run_binary(c, g, n, v, o); return MG_OK;
    case IR_KIND_REDUCE: run_reduce(c, g, n, v[n->in[0]], o); return MG_OK;
    case IR_KIND_MATMUL: return run_matmul(c, g, n, v, o);
    case IR_KIND_GRAPH:
    case IR_KIND_BLOCK: MG_ASSERT(!"μGraph ops run in run_block / run_kernel"); return MG_OK;
    case IR_KIND_COMPOUND: MG_ASSERT(!"a compound is never a node"); return MG_OK;
    case IR_KIND_LAYOUT: {
        if (n->op == IR_OP_RESHAPE) {
            /* a reshape leaves row-major data as it is */
            memcpy(o, v[n->in[0]], (size_t)total * sizeof *o);
            return MG_OK;
        }
        int64_t *map = ev_layout_map(g, n);
        if (!map) return MG_ERR_NOMEM;
        const double *x = v[n->in[0]], *y = n->n_in > 1 ? v[n->in[1]] : NULL;
        for (int64_t t = 0; t < total; t++) o[t] = map[t] >= 0 ? x[map[t]] : y[-map[t] - 1];
        base_free(map);
        return MG_OK;
    }
    }
    return MG_OK;
}

/* ---- μGraphs: a graph-defined kernel runs block by block, iteration by iteration ---- */

/* A block graph's tiles in the float evaluator, for ev_block_walk. */
typedef struct fblock {
    const fctx *c;
    const ir_graph *b;
    double **tv;             /* per block-graph node, its tile (savers: none) */
    double *const *kin, *const *outs;
    const ir_shape *out_shape;
} fblock;

static mg_status fb_run(void *self, int i) {
    fblock *f = self;
    int dummy = 0;
    return run_node(f->c, f->b, i, f->tv, f->tv[i], NULL, &dummy);
}

static void fb_copy(void *self, int how, int i, const int64_t off[4]) {
    fblock *f = self;
    const ir_node *nd = &f->b->nodes[i];
    if (how == EV_GATHER)
        ev_tile_copy(f->tv[i], f->kin[nd->index], sizeof(double), &nd->shape, &f->b->kin_shape[nd->index], off, 0);
    else if (how == EV_PLACE)
        ev_tile_copy(f->tv[nd->in[0]], f->tv[i], sizeof(double), &f->b->nodes[nd->in[0]].shape, &nd->shape, off, 1);
    else
        ev_tile_copy(f->tv[nd->in[0]], f->outs[nd->index], sizeof(double), &nd->shape, &f->out_shape[nd->index], off, 1);
}

static void fb_add(void *self, int i, int first) {
    fblock *f = self;
    const ir_node *nd = &f->b->nodes[i];
    const double *x = f->tv[nd->in[0]];
    int64_t m = ir_numel(&nd->shape);
    if (first) memcpy(f->tv[i], x, (size_t)m * sizeof(double));
    else for (int64_t t = 0; t < m; t++) f->tv[i][t] = rnd(f->c, f->tv[i][t] + x[t]);
}

/* Runs block graph b over the whole grid (ev_block_walk): kin[k] are the kernel inputs,
 * outs[k] receive the savers' results (kernel-level shapes out_shape[k]). */
static mg_status run_block(const fctx *c, mg_ctx *ctx, const ir_graph *b, double *const *kin,
                           double *const *outs, const ir_shape *out_shape) {
    int n = b->n_nodes;
    fblock f = {.c = c, .b = b, .kin = kin, .outs = outs, .out_shape = out_shape};
    f.tv = base_calloc((size_t)n + 1, sizeof *f.tv);
    mg_status rc = f.tv ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; !rc && i < n; i++)
        if (b->nodes[i].op != IR_OP_SAVE &&
            !(f.tv[i] = base_alloc((size_t)ir_numel(&b->nodes[i].shape) * sizeof(double))))
            rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    ev_block_ops ops = {&f, fb_run, fb_copy, fb_add};
    if (!rc) rc = ev_block_walk(b, ctx, &ops);
    for (int i = 0; f.tv && i < n; i++) base_free(f.tv[i]);
    base_free(f.tv);
    if (rc && ctx && !ctx->msg[0]) ctx_err(ctx, rc, rc == MG_ERR_LIMIT ? "evaluation stopped (time limit or stop request)" : "out of memory");
    return rc;
}

/* KERNEL node i: its outputs are consecutive nodes i .. i + n_saves - 1 (ir_add_kernel). The
 * node with index 0 runs the block graph and fills all of them. */
static mg_status run_kernel(const fctx *c, mg_ctx *ctx, const ir_graph *g, int i, double **v) {
    const ir_node *n = &g->nodes[i];
    const ir_graph *b = n->body;
    if (n->index > 0) {
        MG_ASSERT(v[i] != NULL); /* filled when output 0 ran */
        return MG_OK;
    }
    double *kin[IR_MAX_IN], *outs[IR_MAX_IN];
    ir_shape shapes[IR_MAX_IN];
    MG_ASSERT(b->n_outputs <= IR_MAX_IN && i + b->n_outputs <= g->n_nodes);
    for (int k = 0; k < n->n_in; k++) kin[k] = v[n->in[k]];
    for (int k = 0; k < b->n_outputs; k++) {
        MG_ASSERT(g->nodes[i + k].body == b && g->nodes[i + k].index == k);
        shapes[k] = g->nodes[i + k].shape;
        if (!v[i + k] && !(v[i + k] = base_alloc((size_t)ir_numel(&shapes[k]) * sizeof(double))))
            return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        outs[k] = v[i + k];
    }
    return run_block(c, ctx, b, kin, outs, shapes);
}

/* Contract in eval.h (mg_eval_float in mugen.h). Walks nodes in order and keeps each value
 * until its last reader (ev_last_use) has run; outputs are rounded to their dtype on the way
 * out. On error every buffer is freed and out[] is not written. */
mg_status ev_float(const ir_graph *g, mg_ctx *ctx, int mode, const double *const *in,
                   double *const *out) {
    fctx c = {.f64 = mode & EV_F64};
    double **v = base_calloc((size_t)g->n_nodes + 1, sizeof *v);
    uint8_t *borrowed = base_calloc((size_t)g->n_nodes + 1, 1); /* v[i] is the caller's input */
    int *last = ev_last_use(g);
    mg_status rc = MG_OK;
    int n_in = 0;
    if (!v || !last || !borrowed) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
#define FREE_V(i) (borrowed[i] ? (void)0 : base_free(v[i]), v[i] = NULL)
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        if ((rc = ev_check_size(g, ctx, i, sizeof(double)))) break;
        if (g->nodes[i].op == IR_OP_INPUT && (mode & EV_ROUNDED)) {
            v[i] = (double *)in[n_in++]; /* read, never written */
            borrowed[i] = 1;
        } else if (g->nodes[i].op == IR_OP_KERNEL) {
            if ((rc = run_kernel(&c, ctx, g, i, v))) break;
        } else {
            if (!v[i]) v[i] = base_alloc((size_t)ir_numel(&g->nodes[i].shape) * sizeof(double));
            if (!v[i]) {
                rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory evaluating node %d", i);
                break;
            }
            if ((rc = run_node(&c, g, i, v, v[i], in, &n_in))) {
                if (rc == MG_ERR_LIMIT) ctx_err(ctx, rc, "evaluation stopped (time limit or stop request)");
                else ctx_err(ctx, rc, "out of memory evaluating node %d", i);
                break;
            }
        }
        for (int k = 0; k < g->nodes[i].n_in; k++) /* free operands at their last use */
            if (last[g->nodes[i].in[k]] == i) FREE_V(g->nodes[i].in[k]);
    }
    for (int k = 0; k < g->n_outputs && !rc; k++) {
        const ir_node *n = &g->nodes[g->outputs[k]];
        int64_t total = ir_numel(&n->shape);
        for (int64_t t = 0; t < total; t++)
            out[k][t] = mode & EV_RAW_OUT ? v[g->outputs[k]][t] : base_round_dtype(v[g->outputs[k]][t], n->dtype);
    }
    for (int i = 0; v && borrowed && i < g->n_nodes; i++) FREE_V(i);
#undef FREE_V
    base_free(v);
    base_free(borrowed);
    base_free(last);
    return rc;
}
