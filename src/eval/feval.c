/* feval: the float reference evaluator. Each op's result is computed in double and rounded
 * to f32 after every arithmetic step (or kept in f64 on request); inputs are rounded to their
 * dtype on entry and outputs on exit. Plain loops, obviously right, no reassociation tricks
 * beyond the accumulation order stated per op.
 * Reached through mg_eval_float (api.c); its outputs are the float reference that other
 * implementations of a program are checked against. */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

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

double ev_scalar(ir_op op, double a, double b) {
    return ir_ops[op].kind == IR_KIND_UNARY ? unary(op, a) : binary(op, a, b);
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

/* Rows [r0, r1) of one product of a matmul: each row by one thread, in one order, so the
 * result does not depend on how rows are shared. */
typedef struct mm_rows {
    const fctx *c;
    const ev_matmul *m;
    const double *a, *b;
    double *out;
    int64_t r0, r1;
    int stopped;
} mm_rows;

static void *mm_rows_run(void *arg) {
    mm_rows *w = arg;
    const ev_matmul *m = w->m;
    for (int64_t i = w->r0; i < w->r1; i++) {
        if (i % 32 == 0 && ev_stopping()) { /* a stop request, seen inside a long product */
            w->stopped = 1;
            break;
        }
        for (int64_t j = 0; j < m->n; j++) w->out[i * m->n + j] = 0;
        for (int64_t k = 0; k < m->k; k++)
            axpy_row(w->out + i * m->n, w->a[i * m->k + k], w->b + k * m->n, m->n, !w->c->f64);
    }
    return NULL;
}

enum { MM_THREADS = 16, MM_THREAD_WORK = 1 << 24 }; /* threads for a product of at least this many multiply-adds */

static mg_status run_matmul(const fctx *c, const ir_graph *g, const ir_node *n, double **v, double *o) {
    ev_matmul m;
    if (ev_matmul_init(&m, &n->shape, &g->nodes[n->in[0]].shape, &g->nodes[n->in[1]].shape))
        return MG_ERR_NOMEM;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = m.m * m.n * m.k < MM_THREAD_WORK || cpus < 2 ? 1 : cpus < MM_THREADS ? (int)cpus : MM_THREADS, stopped = 0;
    if (nt > m.m) nt = (int)m.m;
    for (int64_t t = 0; t < m.batch && !stopped; t++) {
        mm_rows w[MM_THREADS];
        pthread_t th[MM_THREADS];
        int started[MM_THREADS] = {0};
        for (int q = 0; q < nt; q++) {
            w[q] = (mm_rows){c, &m, v[n->in[0]] + m.a_off[t], v[n->in[1]] + m.b_off[t], o + t * m.m * m.n,
                             m.m * q / nt, m.m * (q + 1) / nt, 0};
            started[q] = q > 0 && !pthread_create(&th[q], NULL, mm_rows_run, &w[q]);
        }
        for (int q = 0; q < nt; q++) /* the first share, and any a thread could not take, here */
            if (!started[q]) mm_rows_run(&w[q]);
        for (int q = 0; q < nt; q++) {
            if (started[q]) pthread_join(th[q], NULL);
            stopped |= w[q].stopped;
        }
    }
    ev_matmul_free(&m);
    return stopped ? MG_ERR_LIMIT : MG_OK;
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
    case IR_KIND_SEQ: MG_ASSERT(!"seqattn runs in run_seqattn"); return MG_OK;
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

/* seqattn (ops.def): per sequence, per head, per query row: scores as matmul's dot products,
 * softmax with the row's maximum subtracted, then the weighted sum of V rows, each step rounded
 * as the primitives round; rows past the last sequence are 0. Lengths that are not whole
 * numbers >= 0 within the tokens are refused. Sequences are shared among threads (each
 * computed by one, in one order). */
typedef struct sa_work {
    const fctx *c;
    const double *q, *k, *v, *len;
    double *o;
    int64_t H, D, B, Lmax;
    const int64_t *off;
    int q0, nq, stopped;
} sa_work;

static void *sa_run(void *arg) {
    sa_work *w = arg;
    const fctx *c = w->c;
    const int64_t H = w->H, D = w->D;
    double *e = base_alloc(((size_t)w->Lmax + 1) * sizeof *e);
    if (!e) return w->stopped = 2, NULL;
    for (int64_t b = w->q0; b < w->B && !w->stopped; b += w->nq) {
        int64_t L = (int64_t)w->len[b], off = w->off[b];
        if (ev_stopping()) w->stopped = 1;
        for (int64_t t = off; t < off + L && !w->stopped; t++)
            for (int64_t h = 0; h < H; h++) {
                const double *qr = w->q + (t * H + h) * D;
                double m = -INFINITY, sum = 0;
                for (int64_t j = 0; j < L; j++) {
                    const double *kr = w->k + ((off + j) * H + h) * D;
                    double s = 0;
                    for (int64_t d = 0; d < D; d++) s = rnd(c, s + qr[d] * kr[d]);
                    e[j] = s, m = s > m ? s : m;
                }
                for (int64_t j = 0; j < L; j++) e[j] = rnd(c, exp(rnd(c, e[j] - m))), sum = rnd(c, sum + e[j]);
                double *orow = w->o + (t * H + h) * D;
                for (int64_t j = 0; j < L; j++)
                    axpy_row(orow, rnd(c, e[j] / sum), w->v + ((off + j) * H + h) * D, D, !c->f64);
            }
    }
    base_free(e);
    return NULL;
}

static mg_status run_seqattn(const fctx *c, mg_ctx *ctx, const ir_graph *g, int i, double **v) {
    const ir_node *n = &g->nodes[i];
    int64_t T = n->shape.d[0], B = g->nodes[n->in[3]].shape.d[0], Lmax = 0, work = 0;
    const double *len = v[n->in[3]];
    int64_t *off = base_alloc(((size_t)B + 1) * sizeof *off);
    if (!off) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    off[0] = 0;
    for (int64_t b = 0; b < B; b++) {
        if (!(len[b] >= 0 && len[b] == floor(len[b]) && off[b] + len[b] <= (double)T)) {
            base_free(off);
            return ctx_err(ctx, MG_ERR_INVALID, "seqattn: lens[%lld] is %g; lengths are whole numbers >= 0 that sum to at most "
                           "the %lld tokens", (long long)b, len[b], (long long)T);
        }
        off[b + 1] = off[b] + (int64_t)len[b], Lmax = (int64_t)len[b] > Lmax ? (int64_t)len[b] : Lmax;
        work += (int64_t)len[b] * (int64_t)len[b];
    }
    double *o = v[i] ? v[i] : (v[i] = base_alloc((size_t)ir_numel(&n->shape) * sizeof(double)));
    if (!o) return base_free(off), ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int64_t t = 0; t < ir_numel(&n->shape); t++) o[t] = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = work * n->shape.d[1] * n->shape.d[2] < MM_THREAD_WORK || cpus < 2 ? 1 : cpus < MM_THREADS ? (int)cpus : MM_THREADS;
    sa_work w[MM_THREADS];
    pthread_t th[MM_THREADS];
    int started[MM_THREADS] = {0}, stopped = 0;
    for (int q = 0; q < nt; q++) {
        w[q] = (sa_work){c, v[n->in[0]], v[n->in[1]], v[n->in[2]], len, o, n->shape.d[1], n->shape.d[2], B, Lmax, off, q, nt, 0};
        started[q] = q > 0 && !pthread_create(&th[q], NULL, sa_run, &w[q]);
    }
    for (int q = 0; q < nt; q++)
        if (!started[q]) sa_run(&w[q]);
    for (int q = 0; q < nt; q++) {
        if (started[q]) pthread_join(th[q], NULL);
        stopped = stopped > w[q].stopped ? stopped : w[q].stopped;
    }
    base_free(off);
    if (stopped == 2) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (stopped) return ctx_err(ctx, MG_ERR_LIMIT, "evaluation stopped (time limit or stop request)");
    return MG_OK;
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
        } else if (g->nodes[i].op == IR_OP_SEQATTN) {
            if ((rc = run_seqattn(&c, ctx, g, i, v))) break;
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
