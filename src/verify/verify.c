/* verify: does a μGraph compute the same function as a Lax program? (Mirage §5.2;
 * docs/verify.md derives every bound used here)
 *
 * 1. Interfaces: the same inputs and outputs by name, dtype and shape.
 * 2. Both Lax (Definition 5.1), else the verdict is "not Lax": the theorem says nothing.
 * 3. `tests` random tests, each in its own randomly drawn field Z_p x Z_q (field.c) with fresh
 *    inputs and omega; the first differing output element is the witness. A field zero (a
 *    division by zero in one field, not over the reals) is retried in a fresh field. Passing
 *    t tests bounds false acceptance by eps^t, eps = Theorem 2's term for the smallest q of
 *    the family plus the chance that the field is one of the few that the constants make
 *    special (vf_log2_bound).
 * 4. A float test over several input ranges: the μGraph in f32 against the program in f64,
 *    each element against its own error scale (mag.c); past the output dtype's tolerance the
 *    μGraph is "unstable", or "not equivalent" if it differs in f64 as well. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../eval/eval.h"
#include "../eval/ff.h"
#include "verify.h"

enum { MAX_IO = VF_MAX_IO, DEG_CAP = 1 << 20, SPARES = 2, REDRAWS = 3, N_RANGES = 3 };
#define K_CAP 1e12
#define H_CAP 1e9
#define Q_MIN 1073741824.0 /* 2^30: the smallest q of the family */
#define FAMILY 765661.0   /* fields in the family: tools/count_fields.c */
#define SLACK (64.0 / 16777216.0) /* 64 unit roundoffs of f32: the error scale's weight */

/* The float test's input ranges: what tests in [-1, 1) see, activations of a few units, and
 * magnitudes of attention scores (tens, offset from zero). A range the program itself
 * overflows in is scaled down (build_range). */
static const struct {
    double lo, hi;
} ranges[N_RANGES] = {{-1, 1}, {-8, 8}, {30, 50}};

static int dmax(int a, int b) { return a > b ? a : b; }
static int dcap(long d) { return d > DEG_CAP ? DEG_CAP : (int)d; }
static double kcap(double k) { return k > K_CAP ? K_CAP : k; }
static double terms(double k) { return k < 1 ? 1 : k; } /* a polynomial is one term, exp(0) */

/* Elements combined into one output of reduction n: a matmul's inner dim, a sum's group. */
static double reduced(const ir_graph *g, const ir_node *n) {
    if (ir_ops[n->op].kind != IR_KIND_MATMUL) return (double)n->group;
    const ir_shape *a = &g->nodes[n->in[0]].shape;
    return (double)a->d[a->ndim - 1];
}

/* The degree of node n from its operands' d1, d2 (ops.def deg column). */
static int degree(ir_deg rule, int d1, int d2) {
    switch (rule) {
    case IR_DEG_ZERO: return 0;
    case IR_DEG_ONE: return 1;
    case IR_DEG_MAX: return dmax(d1, d2);
    case IR_DEG_ADD: return dcap((long)d1 + d2);
    case IR_DEG_TWICE: return dcap(2L * d1);
    case IR_DEG_SAME: break;
    }
    return d1;
}

/* The exp-term count of node n from its operands' k1, k2 (ops.def terms column); poly: both
 * operands are polynomials (k = 0), and so is a sum or product of them. */
static double exp_terms(const ir_graph *g, const ir_node *n, double k1, double k2) {
    int poly = k1 == 0 && k2 == 0;
    switch (ir_ops[n->op].terms) {
    case IR_TERMS_ZERO: return 0;
    case IR_TERMS_ONE: return 1;
    case IR_TERMS_TWO: return 2;
    case IR_TERMS_MAX: return k1 > k2 ? k1 : k2;
    case IR_TERMS_ADD: return poly ? 0 : terms(k1) + terms(k2);
    case IR_TERMS_MUL: return poly ? 0 : terms(k1) * terms(k2);
    case IR_TERMS_SQUARE: return k1 == 0 ? 0 : k1 * k1;
    case IR_TERMS_MULN: return poly ? 0 : reduced(g, n) * terms(k1) * terms(k2);
    case IR_TERMS_SAMEN: return k1 * reduced(g, n);
    case IR_TERMS_SAME: break;
    }
    return k1;
}

/* Degree d and exp-term count k per node, then the largest over the outputs. Rules (ops.def
 * deg and terms columns): sums add term counts, products multiply them (exp(a) exp(b) =
 * exp(a + b) is one term), a reduction over n elements multiplies by n, exp makes one term of
 * its argument's degree, a quotient keeps the larger count of its two sides. sqrt keeps d and
 * k (no theorem covers it; docs/verify.md). */
/* log2 of the size of the integer coefficients of node n (its height), from its operands' h1,
 * h2: a constant num/den has log2|num| + log2 den; any binary op may cross-multiply (h1 + h2
 * + 1); a reduction of n terms adds log2 n; sqr doubles; the rest keep it. */
static double height(const ir_graph *g, const ir_node *n, double h1, double h2) {
    switch (ir_ops[n->op].kind) {
    case IR_KIND_SOURCE: return n->op == IR_OP_CONST ? log2(fabs((double)n->num) + 1) + log2((double)n->den) : 0;
    case IR_KIND_BINARY: return h1 + h2 + 1;
    case IR_KIND_MATMUL: return h1 + h2 + log2(reduced(g, n));
    case IR_KIND_REDUCE: return h1 + log2(reduced(g, n));
    case IR_KIND_UNARY: return n->op == IR_OP_SQR ? 2 * h1 : h1 + (n->op == IR_OP_SILU);
    default: return h1 > h2 ? h1 : h2;
    }
}

void vf_estimate(const ir_graph *g, int *d_out, double *k_out, double *h_out) {
    int *d = base_calloc((size_t)g->n_nodes + 1, sizeof *d);
    double *k = base_calloc((size_t)g->n_nodes + 1, sizeof *k), *h = base_calloc((size_t)g->n_nodes + 1, sizeof *h);
    *d_out = DEG_CAP, *k_out = K_CAP, *h_out = H_CAP;
    if (!d || !k || !h) {
        base_free(d), base_free(k), base_free(h);
        return;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        int d1 = n->n_in ? d[n->in[0]] : 0, d2 = n->n_in > 1 ? d[n->in[1]] : 0;
        double k1 = n->n_in ? k[n->in[0]] : 0, k2 = n->n_in > 1 ? k[n->in[1]] : 0;
        d[i] = degree(ir_ops[n->op].deg, d1, d2);
        k[i] = kcap(exp_terms(g, n, k1, k2));
        h[i] = fmin(H_CAP, height(g, n, n->n_in ? h[n->in[0]] : 0, n->n_in > 1 ? h[n->in[1]] : 0));
    }
    *d_out = 0, *k_out = 0, *h_out = 0;
    for (int o = 0; o < g->n_outputs; o++) {
        *d_out = dmax(*d_out, d[g->outputs[o]]);
        if (k[g->outputs[o]] > *k_out) *k_out = k[g->outputs[o]];
        *h_out = fmax(*h_out, h[g->outputs[o]]);
    }
    base_free(d), base_free(k), base_free(h);
}

double vf_log2_bound(int d, double k, double h, double family) {
    double kk = terms(k);
    double special = fmax(1, ceil(2 * h / 30)) / family; /* p or q among the primes >= 2^30 of the height */
    double eps = 8.0 * (d < 1 ? 1 : d) * pow(kk, 4) / Q_MIN + pow(Q_MIN, -1.0 / (kk * kk)) + special;
    return eps >= 1 ? 0 : log2(eps);
}

mg_status vf_match_io(const ir_graph *p, const ir_graph *u, mg_ctx *ctx, vf_io_map *m) {
    int pin[MAX_IO], np = 0, nu = 0;
    char s1[128], s2[128];
    for (int i = 0; i < p->n_nodes; i++)
        if (p->nodes[i].op == IR_OP_INPUT && np < MAX_IO) pin[np++] = i;
    for (int i = 0; i < u->n_nodes; i++) {
        if (u->nodes[i].op != IR_OP_INPUT) continue;
        const ir_node *un = &u->nodes[i];
        int j = ir_find(p, un->name);
        if (j < 0 || p->nodes[j].op != IR_OP_INPUT)
            return ctx_err(ctx, MG_ERR_INVALID, "the μGraph's input '%s' is not an input of the program", un->name);
        if (un->dtype != p->nodes[j].dtype || memcmp(&un->shape, &p->nodes[j].shape, sizeof un->shape))
            return ctx_err(ctx, MG_ERR_INVALID, "input '%s' is %s in the program but %s in the μGraph",
                           un->name, ir_shape_gstr(p, p->nodes[j].dtype, &p->nodes[j].shape, s1, sizeof s1),
                           ir_shape_gstr(u, un->dtype, &un->shape, s2, sizeof s2));
        int pos = 0;
        while (pos < np && pin[pos] != j) pos++;
        if (nu == MAX_IO) return ctx_err(ctx, MG_ERR_LIMIT, "more than %d inputs", MAX_IO);
        m->in[nu++] = pos;
    }
    if (nu != np) return ctx_err(ctx, MG_ERR_INVALID, "the program has %d inputs, the μGraph %d", np, nu);
    if (u->n_outputs != p->n_outputs || u->n_outputs > MAX_IO)
        return ctx_err(ctx, MG_ERR_INVALID, "the program has %d outputs, the μGraph %d", p->n_outputs, u->n_outputs);
    for (int k = 0; k < u->n_outputs; k++) {
        const ir_node *un = &u->nodes[u->outputs[k]];
        m->out[k] = -1;
        for (int o = 0; o < p->n_outputs; o++)
            if (un->name && p->nodes[p->outputs[o]].name && !strcmp(un->name, p->nodes[p->outputs[o]].name))
                m->out[k] = o;
        if (m->out[k] < 0)
            return ctx_err(ctx, MG_ERR_INVALID, "the μGraph's output '%s' is not an output of the program",
                           un->name ? un->name : "?");
        const ir_node *pn = &p->nodes[p->outputs[m->out[k]]];
        if (un->dtype != pn->dtype || memcmp(&un->shape, &pn->shape, sizeof un->shape))
            return ctx_err(ctx, MG_ERR_INVALID, "output '%s' is %s in the program but %s in the μGraph",
                           un->name, ir_shape_gstr(p, pn->dtype, &pn->shape, s1, sizeof s1),
                           ir_shape_gstr(u, un->dtype, &un->shape, s2, sizeof s2));
    }
    m->n_in = nu, m->n_out = u->n_outputs;
    return MG_OK;
}

/* "O[1, 37]" for flat index t of a tensor of shape s */
static void index_str(const char *name, const ir_shape *s, int64_t t, char *buf, size_t n) {
    int64_t idx[IR_MAX_DIMS];
    for (int d = s->ndim - 1; d >= 0; d--) idx[d] = t % s->d[d], t /= s->d[d];
    size_t k = (size_t)snprintf(buf, n, "%s[", name);
    for (int d = 0; d < s->ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "", (long long)idx[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* ---- the program's side of the tests ---- */

typedef struct vtest { /* one field test: its field, random inputs and the program's outputs */
    uint32_t *ip[MAX_IO], *iq[MAX_IO], *pp[MAX_IO], *pq[MAX_IO];
    ff_field F;
    int redrawn;      /* fields drawn again because the program divided by zero in them */
    ev_exp_log log;   /* the program's exponents in this test (when xf.ok) */
} vtest;

typedef struct vrange { /* one input range of the float test */
    double *in[MAX_IO], *out[MAX_IO], *scale[MAX_IO]; /* inputs, f64 outputs, error scales */
    double s;        /* the range's scale: 1, or smaller where the program overflows */
    int64_t overflow; /* output elements the program's own reference overflows at scale 1 */
} vrange;

struct vf_ref {
    const ir_graph *p;
    int tests, cap, n_built, lax, degree;
    double exp_terms, height, per_test, family;
    char why[512];
    ff_needs needs;
    uint64_t seed;
    rng rg;
    vtest *t;
    vrange fr[N_RANGES];
    int float_built, has_scale;
    int quick; /* a field test that differs ends it: no float test for the report */
    const int *stop; /* vf_ref_set_stop */
    /* exp terms with independent exponents (expform.c): the structure, log2 of a test's bound
     * under it, whether some test's rows were dependent or a log overflowed, and test 0's
     * exponents as an open-addressing map value -> first index (hcap slots, -1 empty), with
     * hnext chaining the later indices of an equal value (random values of 2^31 collide: a
     * few among 10^5), hchain the longest chain */
    vf_expform xf;
    double xf_per_test;
    int xf_bad;
    uint32_t *hval;
    int64_t *hidx, *hnext, hcap, hchain;
};

enum { XF_MAX_LOG = 1 << 22 }; /* exponents kept per test (16 MB) */

static uint64_t hslot(uint32_t v, int64_t cap) { return (uint64_t)(v * 0x9e3779b97f4a7c15ull) & (uint64_t)(cap - 1); }

/* Indexes test 0's exponents (equal values chained); -1 out of memory. */
static int build_hash(vf_ref *f) {
    const ev_exp_log *L = &f->t[0].log;
    for (f->hcap = 1; f->hcap < 2 * L->n; f->hcap *= 2) {}
    f->hval = base_alloc((size_t)f->hcap * sizeof *f->hval), f->hidx = base_alloc((size_t)f->hcap * sizeof *f->hidx);
    f->hnext = base_alloc((size_t)(L->n + 1) * sizeof *f->hnext);
    if (!f->hval || !f->hidx || !f->hnext) return -1;
    for (int64_t i = 0; i < f->hcap; i++) f->hidx[i] = -1;
    f->hchain = 1;
    for (int64_t e = L->n - 1; e >= 0; e--) { /* backwards: a chain runs in index order */
        uint64_t s = hslot(L->v[e], f->hcap);
        while (f->hidx[s] >= 0 && f->hval[s] != L->v[e]) s = (s + 1) & (uint64_t)(f->hcap - 1);
        f->hnext[e] = f->hidx[s]; /* -1, or the next index of this value */
        f->hval[s] = L->v[e], f->hidx[s] = e;
        int64_t len = 0;
        for (int64_t c = e; c >= 0 && len <= f->hchain; c = f->hnext[c]) len++;
        if (len > f->hchain) f->hchain = len;
    }
    return 0;
}

static int64_t hfind(const vf_ref *f, uint32_t v) {
    for (uint64_t s = hslot(v, f->hcap);; s = (s + 1) & (uint64_t)(f->hcap - 1)) {
        if (f->hidx[s] < 0) return -1;
        if (f->hval[s] == v) return f->hidx[s];
    }
}

void vf_ref_set_stop(vf_ref *f, const int *stop) { f->stop = stop; }

static mg_status check_stop(const vf_ref *f, mg_ctx *ctx) {
    if (f->stop && __atomic_load_n(f->stop, __ATOMIC_RELAXED))
        return ctx_err(ctx, MG_ERR_LIMIT, "verification stopped (time limit or stop request)");
    return MG_OK;
}

/* Builds field test n_built (the rng draws them in order): a field, inputs, the program's
 * outputs. A division by zero in the program is a field zero unless it happens in REDRAWS
 * fresh fields in a row: then the program divides by zero over the reals. */
static mg_status build_test(vf_ref *f, mg_ctx *ctx) {
    const ir_graph *p = f->p;
    vtest *T = &f->t[f->n_built];
    mg_status rc = MG_OK;
    for (int i = 0, np = 0; i < p->n_nodes && !rc; i++) {
        if (p->nodes[i].op != IR_OP_INPUT) continue;
        size_t n = (size_t)ir_numel(&p->nodes[i].shape) * 4;
        if (!(T->ip[np] = base_alloc(n)) || !(T->iq[np] = base_alloc(n))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        np++;
    }
    for (int k = 0; k < p->n_outputs && !rc; k++) {
        size_t n = (size_t)ir_numel(&p->nodes[p->outputs[k]].shape) * 4;
        if (!(T->pp[k] = base_alloc(n)) || !(T->pq[k] = base_alloc(n))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    for (T->redrawn = 0; !rc; T->redrawn++) {
        ff_field_draw(rng_next(&f->rg), &f->needs, &T->F);
        for (int i = 0, np = 0; i < p->n_nodes; i++) {
            if (p->nodes[i].op != IR_OP_INPUT) continue;
            for (int64_t e = 0, n = ir_numel(&p->nodes[i].shape); e < n; e++)
                T->ip[np][e] = rng_below(&f->rg, T->F.P.m), T->iq[np][e] = rng_below(&f->rg, T->F.Q.m);
            np++;
        }
        T->log.n = 0, T->log.max = XF_MAX_LOG;
        rc = ev_field_log(p, ctx, &T->F, (const uint32_t *const *)T->ip, (const uint32_t *const *)T->iq,
                          T->pp, T->pq, f->xf.ok ? &T->log : NULL);
        if (rc != MG_ERR_DIV_ZERO) break;
        if (T->redrawn + 1 == REDRAWS) {
            char msg[sizeof ctx->msg];
            snprintf(msg, sizeof msg, "%s", ctx ? ctx->msg : "");
            return ctx_err(ctx, MG_ERR_DIV_ZERO, "the program divides by zero over the reals (in %d "
                           "fresh random fields): %.600s", REDRAWS, msg);
        }
        rc = MG_OK;
    }
    if (!rc && f->xf.ok && !f->xf_bad) /* the exponents' structure holds in this test's q parts */
        f->xf_bad = T->log.n < 0 || !vf_expform_rank_ok(p, &f->xf, (const uint32_t *const *)T->iq, &T->F.Q) ||
                    (f->n_built == 0 && build_hash(f));
    if (!rc) f->n_built++;
    return rc;
}

static double dtype_max(mg_dtype t) { return t == MG_F16 ? 65504 : 3.38953138925153547e38; /* f32, bf16 */ }

/* Draws range r's inputs at scale R->s (the same draws at every scale) and evaluates the
 * program in f64. *over: how far its outputs go past their dtype's range (max |v| / the
 * dtype's largest value; infinite for a NaN or inf), or, if they fit, 2 when its f32
 * evaluation overflows anyway and 0 when that is finite too. R->out: the f64 outputs rounded
 * to their dtype. */
static mg_status draw_range(vf_ref *f, int r, mg_ctx *ctx, double *over) {
    const ir_graph *p = f->p;
    vrange *R = &f->fr[r];
    rng rg = {f->seed ^ (0xf10a7ull + (uint64_t)r * 0x9e3779b97f4a7c15ull)};
    for (int i = 0, np = 0; i < p->n_nodes; i++) {
        if (p->nodes[i].op != IR_OP_INPUT) continue;
        for (int64_t t = 0, n = ir_numel(&p->nodes[i].shape); t < n; t++)
            R->in[np][t] = base_round_dtype(R->s * (ranges[r].lo + (ranges[r].hi - ranges[r].lo) * rng_uniform(&rg)),
                                            p->nodes[i].dtype);
        np++;
    }
    *over = 0;
    mg_status rc = ev_float(p, ctx, EV_F64 | EV_ROUNDED | EV_RAW_OUT, (const double *const *)R->in, R->out);
    for (int k = 0; !rc && k < p->n_outputs; k++) {
        mg_dtype dt = p->nodes[p->outputs[k]].dtype;
        for (int64_t t = 0, n = ir_numel(&p->nodes[p->outputs[k]].shape); t < n; t++) {
            double v = fabs(R->out[k][t]);
            *over = isfinite(v) ? fmax(*over, v / dtype_max(dt)) : INFINITY;
            R->out[k][t] = base_round_dtype(R->out[k][t], dt);
        }
    }
    if (rc || *over > 1) return rc;
    *over = 0; /* fits: then as a user running it in f32 would meet it */
    double *tmp[MAX_IO] = {0};
    for (int k = 0; k < p->n_outputs && !rc; k++)
        if (!(tmp[k] = base_alloc((size_t)ir_numel(&p->nodes[p->outputs[k]].shape) * sizeof(double))))
            rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc) rc = ev_float(p, ctx, EV_ROUNDED, (const double *const *)R->in, tmp);
    for (int k = 0; !rc && k < p->n_outputs; k++)
        for (int64_t t = 0, n = ir_numel(&p->nodes[p->outputs[k]].shape); t < n; t++)
            if (!isfinite(tmp[k][t])) *over = 2;
    for (int k = 0; k < MAX_IO; k++) base_free(tmp[k]);
    return rc;
}

/* Builds range r of the float test: inputs drawn in [lo, hi) times the scale s and rounded to
 * their dtype, the program's f64 outputs and error scales. s starts at 1 and shrinks while
 * the program's own output overflows: by the estimated degree's root of how far past the
 * range it went (at least 4x, at most 20 steps). If it never fits, s = 1 and equal
 * infinities compare equal (elem_error). */
static mg_status build_range(vf_ref *f, int r, mg_ctx *ctx) {
    const ir_graph *p = f->p;
    vrange *R = &f->fr[r];
    mg_status rc = MG_OK;
    for (int k = 0; k < p->n_outputs && !rc; k++) {
        size_t n = (size_t)ir_numel(&p->nodes[p->outputs[k]].shape) * sizeof(double);
        if (!(R->out[k] = base_alloc(n)) || !(R->scale[k] = base_alloc(n))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    for (int i = 0, np = 0; i < p->n_nodes && !rc; i++)
        if (p->nodes[i].op == IR_OP_INPUT && !(R->in[np++] = base_alloc((size_t)ir_numel(&p->nodes[i].shape) * sizeof(double))))
            rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    R->s = 1;
    double over = 0;
    for (int tries = 0; !rc; tries++) {
        if ((rc = draw_range(f, r, ctx, &over)) || over == 0) break;
        if (tries == 0) /* the elements the program's own output loses at scale 1 */
            for (int k = 0; k < p->n_outputs; k++)
                for (int64_t t = 0, n = ir_numel(&p->nodes[p->outputs[k]].shape); t < n; t++) R->overflow += !isfinite(R->out[k][t]);
        if (tries == 0 && !R->overflow) R->overflow = 1; /* only its f32 evaluation overflows */
        if (tries == 20) { /* overflows at every scale: back to s = 1 */
            R->s = 1;
            rc = draw_range(f, r, ctx, &over);
            break;
        }
        double step = isfinite(over) ? pow(2 * over, 1.0 / (f->degree > 1 ? f->degree : 1)) : 4;
        R->s /= step > 4 ? step : 4;
    }
    if (rc) return rc;
    mg_status mr = ev_mag(p, ctx, (const double *const *)R->in, R->scale);
    f->has_scale = mr == MG_OK;
    return mr == MG_ERR_UNSUPPORTED ? MG_OK : mr;
}

static mg_status build_float(vf_ref *f, mg_ctx *ctx) {
    mg_status rc = MG_OK;
    for (int r = 0; r < N_RANGES && !rc; r++) rc = build_range(f, r, ctx);
    if (!rc) f->float_built = 1;
    return rc;
}

mg_status vf_ref_new(const ir_graph *p, const ir_graph *with, mg_ctx *ctx, int tests, uint64_t seed,
                     int eager, vf_ref **out) {
    *out = NULL;
    vf_ref *f = base_calloc(1, sizeof *f);
    if (!f) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    f->p = p, f->seed = seed, f->rg = (rng){seed * 0x9e3779b97f4a7c15ull + 1}, f->quick = eager;
    f->lax = ir_is_lax(p, f->why, sizeof f->why);
    if (f->lax < 0) {
        base_free(f);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    vf_field_needs(p, with, &f->needs);
    vf_estimate(p, &f->degree, &f->exp_terms, &f->height);
    /* fields meeting the needs: each quadratic-residue need keeps at least a quarter of the
     * family (measured, docs/verify.md); each constant excludes at most 4 fields */
    f->family = FAMILY / pow(4, f->needs.n_qr * (1 + f->needs.qr_q)) - 4.0 * f->needs.n_nums;
    f->per_test = f->family > 1 ? vf_log2_bound(f->degree, f->exp_terms, f->height, f->family) : 0;
    if (f->exp_terms > 0) vf_expform_analyze(p, &f->xf);
    if (f->xf.ok && f->family > 1)
        f->xf_per_test = log2(f->xf.degree / Q_MIN + fmax(1, ceil(2 * f->height / 30)) / f->family);
    /* enough for 2^-40 where a bound is useful, else a fixed 8; with independent exponents,
     * as many as their bound asks and at least what Theorem 2 alone would run (up to 8), so a
     * μGraph whose exponents do not match the program's is tested as much as before */
    int t2 = f->per_test < 0 ? (int)fmin(1000, ceil(-40.0 / f->per_test)) : 8;
    if (tests <= 0 && f->xf_per_test < 0) tests = (int)fmax(ceil(-40.0 / f->xf_per_test), t2 < 8 ? t2 : 8);
    else if (tests <= 0) tests = t2;
    f->tests = tests > 1000 ? 1000 : tests;
    f->cap = f->tests + (eager ? 0 : SPARES); /* the search's shared reference has no spares */
    f->t = base_calloc((size_t)f->cap, sizeof *f->t);
    mg_status rc = f->t ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    while (!rc && eager && f->lax && f->n_built < f->tests) rc = build_test(f, ctx);
    if (!rc && eager && f->lax) rc = build_float(f, ctx);
    if (rc) {
        vf_ref_free(f);
        return rc;
    }
    *out = f;
    return MG_OK;
}

void vf_ref_free(vf_ref *f) {
    if (!f) return;
    base_free(f->hval), base_free(f->hidx), base_free(f->hnext);
    for (int t = 0; f->t && t < f->cap; t++) base_free(f->t[t].log.v);
    for (int t = 0; f->t && t < f->cap; t++)
        for (int i = 0; i < MAX_IO; i++) {
            base_free(f->t[t].ip[i]), base_free(f->t[t].iq[i]);
            base_free(f->t[t].pp[i]), base_free(f->t[t].pq[i]);
        }
    for (int r = 0; r < N_RANGES; r++)
        for (int i = 0; i < MAX_IO; i++) base_free(f->fr[r].in[i]), base_free(f->fr[r].out[i]), base_free(f->fr[r].scale[i]);
    base_free(f->t);
    base_free(f);
}

typedef struct xmatch { /* a μGraph's exponents matched to the program's (expform.c) */
    int64_t *pi, n; /* pi[e]: where the μGraph's e-th exponent is in the program's log */
    int ok;         /* 1 while every one has matched, in every test so far */
} xmatch;

/* Matches the μGraph's exponents ul of test t to the program's: in test 0 each must equal
 * one of the program's (pi records the first with that value), in test 1 the same one again,
 * or, where test 0's value was repeated, one of its repeats (pi moves there), and in every
 * later test the one pi holds. */
static void match_exponents(const vf_ref *f, int t, const ev_exp_log *ul, xmatch *x) {
    const ev_exp_log *pl = &f->t[t].log;
    if (ul->n < 0 || f->xf_bad || (t > 0 && (!x->pi || ul->n != x->n))) {
        x->ok = 0;
        return;
    }
    if (t == 0 && !(x->pi = base_alloc((size_t)(ul->n + 1) * sizeof *x->pi))) x->ok = 0;
    x->n = ul->n;
    for (int64_t e = 0; x->ok && e < ul->n; e++) {
        if (t == 0) {
            x->ok = (x->pi[e] = hfind(f, ul->v[e])) >= 0;
            continue;
        }
        int64_t c = x->pi[e];
        while (t == 1 && c >= 0 && !(c < pl->n && pl->v[c] == ul->v[e])) c = f->hnext[c];
        if (c >= 0) x->pi[e] = c;
        x->ok = c >= 0 && c < pl->n && pl->v[c] == ul->v[e];
    }
}

/* Field test t of f on u. *differs: 0 equal, 1 a witness (in r->text), 2 the μGraph divides
 * by zero in this field where the program does not (a field zero, or over the reals). x: the
 * exponent matching, carried on when x->ok. */
static mg_status field_test(vf_ref *f, int t, const ir_graph *u, const vf_io_map *m, mg_ctx *ctx,
                            int *differs, xmatch *x, mg_verify_report *r) {
    const ir_graph *p = f->p;
    uint32_t *up[MAX_IO] = {0}, *uq[MAX_IO] = {0};
    const uint32_t *uip[MAX_IO], *uiq[MAX_IO];
    mg_status rc = MG_OK;
    while (!rc && f->n_built <= t) rc = build_test(f, ctx);
    for (int k = 0; k < m->n_out && !rc; k++) {
        size_t n = (size_t)ir_numel(&p->nodes[p->outputs[m->out[k]]].shape) * 4;
        up[k] = base_alloc(n), uq[k] = base_alloc(n);
        if (!up[k] || !uq[k]) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    *differs = 0;
    if (rc) goto out;
    const vtest *T = &f->t[t];
    for (int i = 0; i < m->n_in; i++) uip[i] = T->ip[m->in[i]], uiq[i] = T->iq[m->in[i]];
    ev_exp_log ul = {.max = XF_MAX_LOG};
    if ((rc = ev_field_log(u, ctx, &T->F, uip, uiq, up, uq, x->ok ? &ul : NULL)) == MG_ERR_DIV_ZERO) {
        snprintf(r->text, sizeof r->text, "%.600s", ctx ? ctx->msg : "");
        *differs = 2;
        rc = MG_OK;
    } else if (!rc && x->ok)
        match_exponents(f, t, &ul, x);
    base_free(ul.v);
    for (int k = 0; !rc && k < m->n_out && !*differs; k++) {
        int o = m->out[k];
        const ir_node *pn = &p->nodes[p->outputs[o]];
        int64_t n = ir_numel(&pn->shape);
        for (int64_t e = 0; e < n; e++) {
            uint32_t aq = T->pq[o][e], bq = uq[k][e];
            if (T->pp[o][e] == up[k][e] && (aq == bq || aq == FF_NONE || bq == FF_NONE)) continue;
            char at[160];
            index_str(pn->name ? pn->name : "output", &pn->shape, e, at, sizeof at);
            snprintf(r->text, sizeof r->text, "not equivalent: %s is (%u, %u) in the program but "
                     "(%u, %u) in the μGraph (field test %d: p = %u, q = %u, omega = %u; a q part "
                     "of %u means none)", at, T->pp[o][e], aq, up[k][e], bq, t + 1, T->F.P.m,
                     T->F.Q.m, T->F.omega, FF_NONE);
            *differs = 1;
            break;
        }
    }
out:
    for (int i = 0; i < MAX_IO; i++) base_free(up[i]), base_free(uq[i]);
    return rc;
}

static double dtype_tol(mg_dtype t) { return t == MG_F16 ? 1e-2 : t == MG_BF16 ? 4e-2 : 1e-4; }
/* Relative spacing of the output dtype: two f64 evaluations of one function round to values
 * at most this far apart (relative), plus the f64 reassociation term. */
static double dtype_ulp(mg_dtype t) { return t == MG_F16 ? 0x1p-10 : t == MG_BF16 ? 0x1p-7 : 0x1p-23; }

/* Relative error of element e, to compare with the output dtype's tolerance: the μGraph's a
 * against the program's b with error scale c, over max(|b|, c K u / tol) (docs/verify.md).
 * Equal infinities (and NaN against NaN) are equal; a non-finite a against a finite b is an
 * infinite error. f64: the μGraph ran in f64, where only output rounding (two ulps of the
 * dtype) and reassociation (1e-9 of the scale) may differ; scaled so that tol is the limit. */
static double elem_error(double a, double b, double c, int has_scale, mg_dtype dt, int f64) {
    if (!isfinite(b)) return (isnan(b) ? isnan(a) : a == b) ? 0 : INFINITY;
    if (!isfinite(a)) return INFINITY;
    double tol = dtype_tol(dt), d = fabs(a - b);
    double s = has_scale ? fmax(fabs(b), c * SLACK / tol) : fabs(b);
    if (f64) s = (2 * dtype_ulp(dt) * fabs(b) + 1e-9 * (has_scale ? c : fabs(b)) + 0x1p-60) / tol;
    return d == 0 ? 0 : s > 0 ? d / s : INFINITY;
}

typedef struct worst { /* the float test's worst element */
    double err, tol, got, want;
    int range, out;
    int64_t at;
} worst;

/* The μGraph on range r (in f32, or f64), against the program; keeps the worst element. */
static mg_status float_range(vf_ref *f, int r, const ir_graph *u, const vf_io_map *m, mg_ctx *ctx,
                             int f64, worst *w) {
    const ir_graph *p = f->p;
    const vrange *R = &f->fr[r];
    double *uo[MAX_IO] = {0};
    const double *uin[MAX_IO];
    mg_status rc = MG_OK;
    for (int k = 0; k < m->n_out && !rc; k++)
        if (!(uo[k] = base_alloc((size_t)ir_numel(&p->nodes[p->outputs[m->out[k]]].shape) * sizeof(double))))
            rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->n_in; i++) uin[i] = R->in[m->in[i]];
    if (!rc) rc = ev_float(u, ctx, EV_ROUNDED | (f64 ? EV_F64 : 0), uin, uo);
    for (int k = 0; !rc && k < m->n_out; k++) {
        int o = m->out[k];
        const ir_node *pn = &p->nodes[p->outputs[o]];
        double tol = dtype_tol(pn->dtype);
        for (int64_t t = 0, n = ir_numel(&pn->shape); t < n; t++) {
            double e = elem_error(uo[k][t], R->out[o][t], f->has_scale ? R->scale[o][t] : 0, f->has_scale, pn->dtype, f64);
            if (w->at < 0 || e / tol > w->err / w->tol) *w = (worst){e, tol, uo[k][t], R->out[o][t], r, o, t};
        }
    }
    for (int i = 0; i < MAX_IO; i++) base_free(uo[i]);
    return rc;
}

/* The float test of f on u over every range; sets r->float_error / float_tol (the worst
 * element's error over its scale, and its tolerance) and *unstable. */
static mg_status float_test(vf_ref *f, const ir_graph *u, const vf_io_map *m, mg_ctx *ctx,
                            int *unstable, worst *w, mg_verify_report *r) {
    mg_status rc = f->float_built ? MG_OK : build_float(f, ctx);
    *w = (worst){.at = -1, .range = 0};
    for (int g = 0; g < N_RANGES && !rc; g++) rc = float_range(f, g, u, m, ctx, 0, w);
    r->float_error = w->err, r->float_tol = w->tol;
    *unstable = !rc && w->err > w->tol;
    return rc;
}

/* "O[3, 1] on inputs in [30, 50)" for the worst element, into buf. */
static void where(const vf_ref *f, const worst *w, char *buf, size_t n) {
    const ir_node *pn = &f->p->nodes[f->p->outputs[w->out]];
    char at[160];
    index_str(pn->name ? pn->name : "output", &pn->shape, w->at, at, sizeof at);
    const vrange *R = &f->fr[w->range];
    snprintf(buf, n, "%s on inputs in [%g, %g)", at, ranges[w->range].lo * R->s, ranges[w->range].hi * R->s);
}

/* What the float test did, for the report: ranges, scales, the program's own overflow. */
static void ranges_text(const vf_ref *f, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "float test on inputs in");
    for (int r = 0; r < N_RANGES && k < n; r++) {
        const vrange *R = &f->fr[r];
        k += (size_t)snprintf(buf + k, n - k, "%s [%g, %g)", r ? "," : "", ranges[r].lo * R->s, ranges[r].hi * R->s);
        if (R->overflow && k < n)
            k += (size_t)snprintf(buf + k, n - k, " (the program's own output overflows on [%g, %g) in "
                                  "%lld elements%s)", ranges[r].lo, ranges[r].hi, (long long)R->overflow,
                                  R->s < 1 ? ", so its inputs were scaled down" : " at every scale");
    }
    if (!f->has_scale && k < n) snprintf(buf + k, n - k, "; errors relative to each element's value (no error scale for a μGraph reference)");
}

/* The field tests of f on u: MG_OK with r->verdict MG_NOT_EQUIVALENT and the witness, or with
 * r->tests passed. A μGraph dividing by zero in a field is given a fresh field (SPARES times,
 * not in the search's shared reference); more is a division by zero over the reals. */
static mg_status run_field_tests(vf_ref *f, const ir_graph *u, const vf_io_map *m, mg_ctx *ctx,
                             xmatch *x, mg_verify_report *r) {
    int passed = 0, zeros = 0;
    for (int t = 0; passed < f->tests; t++) {
        int differs = 0;
        mg_status rc;
        if ((rc = check_stop(f, ctx)) || (rc = field_test(f, t, u, m, ctx, &differs, x, r))) return rc;
        if (differs == 2) x->ok = 0; /* a skipped test: the matching needs every one */
        if (differs == 2 && ++zeros <= f->cap - f->tests) {
            r->field_retries++;
            continue;
        }
        if (differs == 2) {
            char msg[sizeof r->text];
            memcpy(msg, r->text, sizeof msg);
            snprintf(r->text, sizeof r->text, "not equivalent: where the program is defined the μGraph "
                     "divides by zero in %d of %d fresh random fields, so over the reals (%.1200s)",
                     zeros, t + 1, msg);
        }
        if (differs) {
            r->verdict = MG_NOT_EQUIVALENT;
            return MG_OK;
        }
        r->tests = ++passed;
    }
    return MG_OK;
}

/* run_field_tests with the exponent matching's bookkeeping: x->ok and x->n say afterwards
 * whether the μGraph's exp terms are the program's (and how many it evaluates). */
static mg_status field_tests(vf_ref *f, const ir_graph *u, const vf_io_map *m, mg_ctx *ctx,
                             xmatch *x, mg_verify_report *r) {
    *x = (xmatch){.ok = f->xf.ok};
    mg_status rc = run_field_tests(f, u, m, ctx, x, r);
    base_free(x->pi);
    x->pi = NULL;
    x->ok &= !f->xf_bad && r->tests > 1;
    return rc;
}

static mg_status verify_ref(vf_ref *f, const ir_graph *u, mg_ctx *ctx, mg_verify_report *r);

mg_status vf_verify_ref(vf_ref *f, const ir_graph *u, mg_ctx *ctx, mg_verify_report *r) {
    ev_set_stop(f->stop); /* a stop is seen inside long evaluations too, not only between tests */
    mg_status rc = verify_ref(f, u, ctx, r);
    ev_set_stop(NULL);
    return rc;
}

/* The text of an equivalent verdict: the tests, the bound that applies (independent
 * exponents, Theorem 2, or none and what was tested), the float test (rt) and the seed. */
static void equivalent_text(const vf_ref *f, const xmatch *x, const char *rt, mg_verify_report *r) {
    r->verdict = MG_EQUIVALENT;
    char bound[400];
    if (r->exp_bound)
        snprintf(bound, sizeof bound, "a non-equivalent μGraph passes them with probability at most "
                 "2^%.1f (its %lld exponents are the program's %lld, which are independent: degree <= "
                 "%d in the inputs and exp values, coefficients of %.0f bits; docs/verify.md)",
                 r->log2_bound, (long long)x->n, (long long)f->t[0].log.n, f->xf.degree, f->height);
    else if (r->log2_bound < -10)
        snprintf(bound, sizeof bound, "a non-equivalent μGraph passes them with probability at most "
                 "2^%.1f (Theorem 2 with q >= 2^30 and the random field: degree <= %d, %.0f exp "
                 "terms, coefficients of %.0f bits)", r->log2_bound, r->degree, r->exp_terms, f->height);
    else
        snprintf(bound, sizeof bound, "Theorem 2 gives no useful bound here (2^%.1f: about %.3g exp "
                 "terms, see docs/verify.md; %s): what was tested is %d random fields of the family, "
                 "every output element compared in each", r->log2_bound, r->exp_terms, f->xf.ok ?
                 (f->xf_bad ? "the exponents' rows are dependent in these fields" : "the μGraph's "
                 "exponents are not the program's") : f->xf.why, r->tests);
    snprintf(r->text, sizeof r->text, "equivalent: %d random tests, each in its own random field "
             "Z_p x Z_q, passed%s; %s; %s: error %.3g of the scale (tolerance %.3g); seed %llu%s%s",
             r->tests, r->field_retries ? " (a μGraph division by zero in a field was retried in a "
             "fresh field)" : "", bound, rt, r->float_error, r->float_tol, (unsigned long long)f->seed,
             f->needs.note[0] ? "; " : "", f->needs.note);
}

static mg_status verify_ref(vf_ref *f, const ir_graph *u, mg_ctx *ctx, mg_verify_report *r) {
    memset(r, 0, sizeof *r);
    vf_io_map m;
    memset(&m, 0, sizeof m);
    mg_status rc = vf_match_io(f->p, u, ctx, &m);
    if (rc) return rc;
    char why[512], at[256], rt[700];
    int lax = ir_is_lax(u, why, sizeof why);
    if (lax < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    r->seed = f->seed;
    if (!f->lax || !lax) {
        r->verdict = MG_NOT_LAX;
        snprintf(r->text, sizeof r->text, "not Lax, so not decided (Mirage Definition 5.1): "
                 "in the %s, %s", f->lax ? "μGraph" : "program", f->lax ? why : f->why);
        return MG_OK;
    }
    r->degree = f->degree, r->exp_terms = f->exp_terms;
    xmatch x;
    if ((rc = field_tests(f, u, &m, ctx, &x, r))) return rc;
    int unstable = 0;
    worst w;
    if (r->verdict == MG_NOT_EQUIVALENT) {
        if (f->quick) return MG_OK;
        /* the float test too, so a corpus of near misses can check itself */
        char witness[sizeof r->text];
        memcpy(witness, r->text, sizeof witness);
        if ((rc = float_test(f, u, &m, ctx, &unstable, &w, r))) return rc;
        snprintf(r->text, sizeof r->text, "%.1400s; the float test %s it (error %.3g of the "
                 "element's scale, tolerance %.3g)", witness, unstable ? "also rejects" : "would accept",
                 r->float_error, r->float_tol);
        return MG_OK;
    }
    r->log2_bound = f->per_test < 0 ? f->per_test * f->tests : 0;
    if (x.ok) { /* the exp terms are the program's independent ones: their bound, plus the
                 * chance that a different exponent matched one of the program's every time */
        double exps = log2((double)x.n * (double)f->t[0].log.n * (double)f->hchain + 1) +
                      r->tests * (log2(f->degree + 2.0) - 30);
        double xb = r->tests * f->xf_per_test, tot = log2(exp2(xb) + exp2(exps));
        if (tot < r->log2_bound) r->log2_bound = tot, r->exp_bound = 1;
    }
    if ((rc = check_stop(f, ctx)) || (rc = float_test(f, u, &m, ctx, &unstable, &w, r))) return rc;
    ranges_text(f, rt, sizeof rt);
    if (unstable) {
        where(f, &w, at, sizeof at);
        worst w64 = {.at = -1};
        /* inputs in [-1, 1) in f64: a real difference survives it, rounding does not */
        if ((rc = float_range(f, 0, u, &m, ctx, 1, &w64))) return rc;
        int real = w64.err > w64.tol;
        r->verdict = real ? MG_NOT_EQUIVALENT : MG_UNSTABLE;
        snprintf(r->text, sizeof r->text, "%s: %s is %.6g in the μGraph (f32) where the program "
                 "gives %.6g (f64): error %.3g of the element's error scale, tolerance %.3g%s; "
                 "the %d field tests passed (seed %llu)", real ? "not equivalent" : "numerically unstable",
                 at, w.got, w.want, w.err, w.tol, real ? ", and it differs in f64 too, so over the reals"
                 : " (on inputs in [-1, 1) in f64 it agrees: equivalent over the reals, broken in floating point)",
                 r->tests, (unsigned long long)f->seed);
        return MG_OK;
    }
    equivalent_text(f, &x, rt, r);
    return MG_OK;
}

mg_status vf_verify(const ir_graph *p, const ir_graph *u, mg_ctx *ctx, int tests, uint64_t seed,
                    mg_verify_report *r) {
    memset(r, 0, sizeof *r);
    vf_io_map m;
    mg_status rc = vf_match_io(p, u, ctx, &m); /* interface errors before any work */
    vf_ref *f = NULL;
    if (!rc) rc = vf_ref_new(p, u, ctx, tests, seed, 0, &f);
    if (!rc) rc = vf_verify_ref(f, u, ctx, r);
    vf_ref_free(f);
    return rc;
}
