/* eval/common: index views shared by the float and finite-field evaluators.
 * Every shape is padded on the left to 4 dims, so the evaluators' loops are fixed 4-deep nests
 * and rank only changes the padding. This is the one place that turns shapes into strides and
 * offsets; ragged dims (docs/ir.md) will change these helpers, not the evaluators.
 * Precondition throughout: the node passed shape inference (ir.c), so its shapes agree. */
#include <stdlib.h>
#include <string.h>

#include "eval.h"

/* s right-aligned into 4 dims with leading 1s, the alignment numpy broadcasting uses */
static void pad4(const ir_shape *s, int64_t d[4]) {
    int off = 4 - s->ndim;
    for (int i = 0; i < 4; i++) d[i] = i < off ? 1 : s->d[i - off];
}

/* Row-major element strides of a 4-dim shape: the last dim is contiguous. */
static void strides4(const int64_t d[4], int64_t st[4]) {
    st[3] = 1;
    for (int i = 2; i >= 0; i--) st[i] = st[i + 1] * d[i + 1];
}

/* Precondition: out is ir_broadcast(a, b). Broadcasting is done with stride 0: where an
 * operand has size 1 and the output does not, the operand's offset stays put while the output
 * index moves, so the same element is read again and no broadcast copy is made. Stride 0 on a
 * size-1 dim where the output is 1 as well changes nothing (the index is always 0). */
void ev_bcast_init(ev_bcast *v, const ir_shape *out, const ir_shape *a, const ir_shape *b) {
    int64_t da[4], db[4], ta[4], tb[4];
    pad4(out, v->n), pad4(a, da), pad4(b, db);
    strides4(da, ta), strides4(db, tb);
    for (int i = 0; i < 4; i++) {
        v->sa[i] = da[i] == 1 ? 0 : ta[i];
        v->sb[i] = db[i] == 1 ? 0 : tb[i];
    }
}

/* Output (o, j, i) combines the group consecutive inputs (o, j * group + k, i), k < group: a
 * full reduction has group = the dim's size and n_out = 1. n->dim is non-negative (infer
 * normalised it) and group divides the dim. */
void ev_reduce_init(ev_reduce *v, const ir_node *n, const ir_shape *in) {
    v->outer = v->inner = 1;
    for (int i = 0; i < n->dim; i++) v->outer *= in->d[i];
    for (int i = n->dim + 1; i < in->ndim; i++) v->inner *= in->d[i];
    v->group = n->group;
    v->n_out = in->d[n->dim] / n->group;
}

/* Precondition: shapes from infer_matmul (one rank >= 2). On failure nothing stays allocated. */
mg_status ev_matmul_init(ev_matmul *v, const ir_shape *out, const ir_shape *a, const ir_shape *b) {
    int r = out->ndim;
    v->m = out->d[r - 2], v->n = out->d[r - 1], v->k = a->d[r - 1];
    v->batch = 1;
    for (int i = 0; i < r - 2; i++) v->batch *= out->d[i];
    v->a_off = base_alloc((size_t)v->batch * sizeof(int64_t));
    v->b_off = base_alloc((size_t)v->batch * sizeof(int64_t));
    if (!v->a_off || !v->b_off) {
        ev_matmul_free(v);
        return MG_ERR_NOMEM;
    }
    for (int64_t t = 0; t < v->batch; t++) {
        /* Decompose t over the output's batch dims, last one fastest. An operand dim of size 1
         * takes index 0 (a broadcast batch dim); sa and sb grow by the operand's own dims,
         * starting from the size of one of its matrices. */
        int64_t rem = t, oa = 0, ob = 0, sa = v->m * v->k, sb = v->k * v->n;
        for (int i = r - 3; i >= 0; i--) {
            int64_t idx = rem % out->d[i];
            rem /= out->d[i];
            oa += (a->d[i] == 1 ? 0 : idx) * sa, sa *= a->d[i];
            ob += (b->d[i] == 1 ? 0 : idx) * sb, sb *= b->d[i];
        }
        v->a_off[t] = oa, v->b_off[t] = ob;
    }
    return MG_OK;
}

void ev_matmul_free(ev_matmul *v) {
    base_free(v->a_off), base_free(v->b_off);
    v->a_off = v->b_off = NULL;
}

/* Transpose and slice as strides: the operand's element stride for each of the output's 4
 * padded dims (transpose: the stride of the operand dim it comes from), and the offset of
 * the output's first element (slice: start times the sliced dim's stride). */
static int64_t index_map_strides(const ir_graph *g, const ir_node *n, int64_t st[4]) {
    const ir_shape *a = &g->nodes[n->in[0]].shape;
    int64_t id[4], is[4];
    int off = 4 - a->ndim; /* transpose and slice keep the rank */
    pad4(a, id), strides4(id, is);
    for (int i = 0; i < 4; i++) st[i] = is[i];
    if (n->op == IR_OP_SLICE) return n->ints[0] * is[n->dim + off];
    for (int i = 0; i < a->ndim; i++) st[i + off] = is[n->ints[i] + off];
    return 0;
}

/* Computed from the 4-dim coordinate c of each output element. Repeat tiles the whole tensor,
 * so the source coordinate is c mod the operand's size. Concat reads operand 0 until c passes
 * its size on the concat dim cd, then operand 1 shifted back by that size. Operand 1 is
 * encoded as -src - 1 so that its index 0 stays distinct from operand 0's. Transpose and
 * slice read the operand at index_map_strides' strides and offset. */
int64_t *ev_layout_map(const ir_graph *g, const ir_node *n) {
    int64_t total = ir_numel(&n->shape), od[4], os[4], id[4], is[4];
    int64_t *map = base_alloc((size_t)total * sizeof *map);
    if (!map) return NULL;
    const ir_shape *a = &g->nodes[n->in[0]].shape;
    pad4(&n->shape, od), strides4(od, os);
    if (n->op == IR_OP_TRANSPOSE || n->op == IR_OP_SLICE) {
        int64_t st[4], base = index_map_strides(g, n, st);
        for (int64_t t = 0; t < total; t++) {
            int64_t rem = t, src = base;
            for (int i = 0; i < 4; i++) src += rem / os[i] * st[i], rem %= os[i];
            map[t] = src;
        }
        return map;
    }
    pad4(a, id), strides4(id, is);
    int cd = n->op == IR_OP_CONCAT ? n->dim + (4 - n->shape.ndim) : -1;
    int64_t bd[4], bs[4];
    if (cd >= 0) {
        pad4(&g->nodes[n->in[1]].shape, bd), strides4(bd, bs);
    }
    for (int64_t t = 0; t < total; t++) {
        int64_t src = 0, rem = t;
        int second = 0;
        int64_t c[4];
        for (int i = 0; i < 4; i++) c[i] = rem / os[i], rem %= os[i];
        if (cd >= 0 && c[cd] >= id[cd]) second = 1, c[cd] -= id[cd];
        for (int i = 0; i < 4; i++)
            src += (second ? bs[i] : is[i]) * (cd >= 0 ? c[i] : c[i] % id[i]);
        map[t] = second ? -src - 1 : src;
    }
    return map;
}

/* A node nobody reads keeps last[i] = i: the evaluators free only operands, so it lives until
 * the final cleanup. Outputs get n_nodes, past every reader, so they are never freed early. */
int *ev_last_use(const ir_graph *g) {
    int *last = base_alloc(((size_t)g->n_nodes + 1) * sizeof *last);
    if (!last) return NULL;
    for (int i = 0; i < g->n_nodes; i++) last[i] = i;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++) last[g->nodes[i].in[k]] = i;
    for (int k = 0; k < g->n_outputs; k++) last[g->outputs[k]] = g->n_nodes;
    return last;
}

/* Contract in mugen.h. An unset, unparsable or non-positive MUGEN_EVAL_MAX_GB falls back to
 * 8 GB (atof gives 0). Read on every call, so a test can change it with setenv. */
double mg_eval_max_bytes(void) {
    const char *e = getenv("MUGEN_EVAL_MAX_GB");
    double gb = e ? atof(e) : 0;
    return (gb > 0 ? gb : 8.0) * 1e9;
}

static _Thread_local int (*stop_fn)(void *); /* ev_set_stop */
static _Thread_local void *stop_arg;

static int flag_set(void *flag) { return __atomic_load_n((const int *)flag, __ATOMIC_RELAXED); }

void ev_set_stop(const int *stop) { ev_set_stop_fn(stop ? flag_set : NULL, (void *)stop); }
void ev_set_stop_fn(int (*stopped)(void *), void *arg) { stop_fn = stopped, stop_arg = arg; }

int ev_stopping(void) { return stop_fn && stop_fn(stop_arg); }

mg_status ev_check_stop(mg_ctx *ctx) {
    if (ev_stopping())
        return ctx_err(ctx, MG_ERR_LIMIT, "evaluation stopped (time limit or stop request)");
    return MG_OK;
}

/* Called before each allocation, so an oversized tensor is refused by name rather than failing
 * in malloc, or being granted by an overcommitting host and killed later. It is also where a
 * stop request (ev_set_stop) is seen, once per node. */
mg_status ev_check_size(const ir_graph *g, mg_ctx *ctx, int i, size_t elem_size) {
    mg_status rc = ev_check_stop(ctx);
    if (rc) return rc;
    double bytes = (double)ir_numel(&g->nodes[i].shape) * (double)elem_size, max = mg_eval_max_bytes();
    if (bytes <= max) return MG_OK;
    char lb[128];
    return ctx_err(ctx, MG_ERR_NOMEM, "tensor '%s' needs %.1f GB to evaluate, over the limit "
                   "of %.1f GB (MUGEN_EVAL_MAX_GB)", ir_node_label(g, i, lb, sizeof lb),
                   bytes / 1e9, max / 1e9);
}

void ev_tile_offset(const ir_graph *body, const ir_node *n, const int b[3], int64_t it,
                    int64_t off[4]) {
    int r = n->op == IR_OP_SAVE ? body->nodes[n->in[0]].shape.ndim : n->shape.ndim;
    int pad = 4 - r;
    for (int d = 0; d < 4; d++) off[d] = 0;
    if (n->op == IR_OP_ACCUM) { /* slot `it` of the concatenation along fmap */
        off[pad + n->fmap] = it * body->nodes[n->in[0]].shape.d[n->fmap];
        return;
    }
    for (int g = 0; g < 3; g++) { /* imap / omap: each block owns one chunk of the dim */
        int d = n->map[g];
        if (d < 0) continue;
        int64_t chunk = n->shape.d[d];
        if (n->op == IR_OP_ITER && n->fmap == d) chunk *= body->forloop;
        off[pad + d] += b[g] * chunk;
    }
    if (n->op == IR_OP_ITER && n->fmap >= 0) off[pad + n->fmap] += it * n->shape.d[n->fmap];
}

void ev_tile_copy(void *tile, void *full, size_t elem, const ir_shape *ts, const ir_shape *fs,
                  const int64_t off[4], int scatter) {
    int64_t t[4], f[4], fst[4];
    pad4(ts, t), pad4(fs, f), strides4(f, fst);
    size_t run = (size_t)t[3] * elem; /* the innermost dim is contiguous in both */
    char *tp = tile;
    for (int64_t i0 = 0; i0 < t[0]; i0++)
        for (int64_t i1 = 0; i1 < t[1]; i1++)
            for (int64_t i2 = 0; i2 < t[2]; i2++, tp += run) {
                int64_t at = (off[0] + i0) * fst[0] + (off[1] + i1) * fst[1] +
                             (off[2] + i2) * fst[2] + off[3];
                char *fp = (char *)full + at * (int64_t)elem;
                if (scatter) memcpy(fp, tp, run);
                else memcpy(tp, fp, run);
            }
}

mg_status ev_block_walk(const ir_graph *b, mg_ctx *ctx, const ev_block_ops *ops) {
    int n = b->n_nodes;
    int *cls = base_calloc((size_t)n + 1, sizeof *cls);
    if (!cls) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    ir_block_classes(b, cls);
    mg_status rc = MG_OK;
    int64_t off[4];
    for (int blk = 0; !rc && blk < b->grid[0] * b->grid[1] * b->grid[2]; blk++) {
        if ((rc = ev_check_stop(ctx))) break;
        int bi[3] = {blk % b->grid[0], blk / b->grid[0] % b->grid[1], blk / (b->grid[0] * b->grid[1])};
        for (int64_t it = 0; !rc && it < b->forloop; it++)
            for (int i = 0; !rc && i < n; i++) {
                const ir_node *nd = &b->nodes[i];
                if (cls[i] == IR_INVARIANT) {
                    if (it == 0) rc = ops->run(ops->self, i);
                } else if (nd->op == IR_OP_ITER) {
                    ev_tile_offset(b, nd, bi, it, off);
                    ops->copy(ops->self, EV_GATHER, i, off);
                } else if (nd->op == IR_OP_ACCUM && nd->fmap >= 0) {
                    ev_tile_offset(b, nd, bi, it, off);
                    ops->copy(ops->self, EV_PLACE, i, off);
                } else if (nd->op == IR_OP_ACCUM) {
                    ops->add(ops->self, i, it == 0);
                } else if (cls[i] == IR_LOOP) rc = ops->run(ops->self, i);
            }
        for (int i = 0; !rc && i < n; i++) { /* after the loop */
            const ir_node *nd = &b->nodes[i];
            if (cls[i] != IR_POST || nd->op == IR_OP_ACCUM) continue;
            if (nd->op == IR_OP_SAVE) {
                ev_tile_offset(b, nd, bi, 0, off);
                ops->copy(ops->self, EV_SCATTER, i, off);
            } else rc = ops->run(ops->self, i);
        }
    }
    base_free(cls);
    return rc;
}
