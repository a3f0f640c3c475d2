/* mag: the error scale of each output element of a program (docs/verify.md, "The float test").
 * Alongside the f64 value v of every node it computes c >= |v|, a first-order bound on how far
 * rounding can move v, in units of the unit roundoff: |v_f32 - v| <~ u c for any evaluation
 * order. Inputs and constants: c = |v|; a + b: c_a + c_b; a b: c_a |b| + |a| c_b; a / b:
 * c_a / |b| + |a| c_b / b^2; exp(a): e^a (1 + c_a); sqrt(a): sqrt|a| + c_a / (2 sqrt|a|);
 * sums and matmuls add the scales of their terms. Each op also adds its own rounding, |v|.
 * The float test measures a μGraph's error of an element against max(|v|, c u K / tol), so
 * a wrong small part of an output is not hidden by a large part elsewhere (the old max-of-
 * output scale), and cancellation in the program itself is not mistaken for instability. */
#include <math.h>
#include <string.h>

#include "../ir/scalar.h"
#include "eval.h"

typedef struct mv { /* value and scale of one tensor */
    double *v, *c;
} mv;

static void unary(ir_op op, double x, double cx, double *v, double *c) {
    switch (op) {
    case IR_OP_EXP: *v = exp(x), *c = *v * (1 + cx); return;
    case IR_OP_SQR: *v = x * x, *c = 2 * fabs(x) * cx + *v; return;
    case IR_OP_SQRT: *v = sqrt(x), *c = sqrt(fabs(x)) + cx / (2 * sqrt(fabs(x))); return;
    case IR_OP_SILU: *v = MG_S_SILU(double, exp, x), *c = 1.1 * cx + fabs(*v); return;
    case IR_OP_RELU: *v = MG_S_RELU(double, x), *c = cx; return;
    default: MG_ASSERT(!"not a unary op");
    }
}

static void binary(ir_op op, double a, double ca, double b, double cb, double *v, double *c) {
    switch (op) {
    case IR_OP_ADD: *v = a + b, *c = ca + cb; return;
    case IR_OP_SUB: *v = a - b, *c = ca + cb; return;
    case IR_OP_MUL: *v = a * b, *c = ca * fabs(b) + fabs(a) * cb + fabs(*v); return;
    case IR_OP_DIV: *v = a / b, *c = ca / fabs(b) + fabs(a) * cb / (b * b) + fabs(*v); return;
    default: MG_ASSERT(!"not a binary op");
    }
}

/* mag_row: ov += av * bv and oc += ac |bv| + |av| bc + |av bv| along a row of n: one product's value
 * and scale, vectorised (target_clones) since matmuls dominate. */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
static void mag_row(double *restrict ov, double *restrict oc, double av, double ac, const double *restrict bv,
                    const double *restrict bc, int64_t n) {
    double aa = fabs(av);
    for (int64_t j = 0; j < n; j++) {
        double pv = av * bv[j];
        ov[j] += pv, oc[j] += ac * fabs(bv[j]) + aa * bc[j] + fabs(pv);
    }
}

/* Node n (not an input, not a kernel) from its operands' values and scales. */
static mg_status run_node(const ir_graph *g, const ir_node *n, mv *x) {
    mv *o = &x[n - g->nodes];
    int64_t total = ir_numel(&n->shape);
    const mv *a = n->n_in ? &x[n->in[0]] : NULL, *b = n->n_in > 1 ? &x[n->in[1]] : NULL;
    switch (ir_ops[n->op].kind) {
    case IR_KIND_SOURCE: o->v[0] = n->value, o->c[0] = fabs(n->value); return MG_OK;
    case IR_KIND_UNARY:
        for (int64_t t = 0; t < total; t++) unary(n->op, a->v[t], a->c[t], &o->v[t], &o->c[t]);
        return MG_OK;
    case IR_KIND_BINARY: {
        ev_bcast bc;
        ev_bcast_init(&bc, &n->shape, &g->nodes[n->in[0]].shape, &g->nodes[n->in[1]].shape);
        int64_t t = 0;
        for (int64_t i0 = 0; i0 < bc.n[0]; i0++)
            for (int64_t i1 = 0; i1 < bc.n[1]; i1++)
                for (int64_t i2 = 0; i2 < bc.n[2]; i2++)
                    for (int64_t i3 = 0; i3 < bc.n[3]; i3++, t++) {
                        int64_t ia = i0 * bc.sa[0] + i1 * bc.sa[1] + i2 * bc.sa[2] + i3 * bc.sa[3];
                        int64_t ib = i0 * bc.sb[0] + i1 * bc.sb[1] + i2 * bc.sb[2] + i3 * bc.sb[3];
                        binary(n->op, a->v[ia], a->c[ia], b->v[ib], b->c[ib], &o->v[t], &o->c[t]);
                    }
        return MG_OK;
    }
    case IR_KIND_REDUCE: {
        ev_reduce r;
        ev_reduce_init(&r, n, &g->nodes[n->in[0]].shape);
        for (int64_t p = 0; p < r.outer; p++)
            for (int64_t j = 0; j < r.n_out; j++)
                for (int64_t i = 0; i < r.inner; i++) {
                    int64_t base = (p * r.n_out * r.group + j * r.group) * r.inner + i;
                    double v = a->v[base], c = a->c[base];
                    for (int64_t k = 1; k < r.group; k++) {
                        double e = a->v[base + k * r.inner], ce = a->c[base + k * r.inner];
                        if (n->op == IR_OP_SUM) v += e, c += ce;
                        else v = MG_S_MAX(v, e), c = fmax(c, ce);
                    }
                    o->v[(p * r.n_out + j) * r.inner + i] = v, o->c[(p * r.n_out + j) * r.inner + i] = c;
                }
        return MG_OK;
    }
    case IR_KIND_MATMUL: {
        ev_matmul m;
        if (ev_matmul_init(&m, &n->shape, &g->nodes[n->in[0]].shape, &g->nodes[n->in[1]].shape))
            return MG_ERR_NOMEM;
        memset(o->v, 0, (size_t)total * sizeof *o->v), memset(o->c, 0, (size_t)total * sizeof *o->c);
        for (int64_t t = 0; t < m.batch; t++)
            for (int64_t i = 0; i < m.m; i++)
                for (int64_t k = 0; k < m.k; k++) {
                    int64_t ia = m.a_off[t] + i * m.k + k;
                    mag_row(o->v + (t * m.m + i) * m.n, o->c + (t * m.m + i) * m.n, a->v[ia], a->c[ia],
                            b->v + m.b_off[t] + k * m.n, b->c + m.b_off[t] + k * m.n, m.n);
                }
        ev_matmul_free(&m);
        return MG_OK;
    }
    case IR_KIND_LAYOUT: {
        if (n->op == IR_OP_RESHAPE) {
            memcpy(o->v, a->v, (size_t)total * sizeof *o->v), memcpy(o->c, a->c, (size_t)total * sizeof *o->c);
            return MG_OK;
        }
        int64_t *map = ev_layout_map(g, n);
        if (!map) return MG_ERR_NOMEM;
        for (int64_t t = 0; t < total; t++) {
            const mv *s = map[t] >= 0 ? a : b;
            int64_t k = map[t] >= 0 ? map[t] : -map[t] - 1;
            o->v[t] = s->v[k], o->c[t] = s->c[k];
        }
        base_free(map);
        return MG_OK;
    }
    default: return MG_ERR_UNSUPPORTED; /* kernels: no scale (the caller falls back) */
    }
}

mg_status ev_mag(const ir_graph *g, mg_ctx *ctx, const double *const *in, double *const *scale) {
    mv *x = base_calloc((size_t)g->n_nodes + 1, sizeof *x);
    int *last = ev_last_use(g);
    mg_status rc = x && last ? MG_OK : MG_ERR_NOMEM;
    int n_in = 0;
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const ir_node *n = &g->nodes[i];
        int64_t total = ir_numel(&n->shape);
        if ((rc = ev_check_size(g, ctx, i, 2 * sizeof(double)))) break;
        x[i].v = base_alloc((size_t)total * sizeof(double)), x[i].c = base_alloc((size_t)total * sizeof(double));
        if (!x[i].v || !x[i].c) rc = MG_ERR_NOMEM;
        else if (n->op == IR_OP_INPUT) {
            const double *src = in[n_in++];
            for (int64_t t = 0; t < total; t++) x[i].v[t] = src[t], x[i].c[t] = fabs(src[t]);
        } else rc = run_node(g, n, x);
        for (int k = 0; k < n->n_in && !rc; k++)
            if (last[n->in[k]] == i) base_free(x[n->in[k]].v), base_free(x[n->in[k]].c), x[n->in[k]].v = x[n->in[k]].c = NULL;
    }
    for (int k = 0; k < g->n_outputs && !rc; k++)
        memcpy(scale[k], x[g->outputs[k]].c, (size_t)ir_numel(&g->nodes[g->outputs[k]].shape) * sizeof(double));
    for (int i = 0; x && i < g->n_nodes; i++) base_free(x[i].v), base_free(x[i].c);
    base_free(x), base_free(last);
    if (rc == MG_ERR_NOMEM) return ctx_err(ctx, rc, "out of memory");
    return rc;
}
