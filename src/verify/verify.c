/* verify: does a μGraph compute the same function as a Lax program? (Mirage §5.2)
 *
 * 1. Interfaces: the same inputs and outputs by name, dtype and shape.
 * 2. Both Lax (Definition 5.1), else the verdict is "not Lax": the theorem says nothing.
 * 3. `tests` random tests over Z_p x Z_q, fresh inputs and a fresh omega each; the first
 *    differing output element is the witness. Passing t tests bounds false acceptance by
 *    eps^t with eps = 8 d k^4 / q + q^(-1/k^2) (Theorems 2 and 3), d and k estimated below.
 * 4. A float test (inputs uniform in [-1, 1)): the μGraph in f32 against the program in
 *    f64; a normalised max error past the output dtype's tolerance means "unstable". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../eval/eval.h"
#include "../eval/ff.h"
#include "verify.h"

enum { MAX_IO = VF_MAX_IO, DEG_CAP = 1 << 20 };
#define K_CAP 1e12

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
void vf_estimate(const ir_graph *g, int *d_out, double *k_out) {
    int *d = base_calloc((size_t)g->n_nodes + 1, sizeof *d);
    double *k = base_calloc((size_t)g->n_nodes + 1, sizeof *k);
    *d_out = DEG_CAP, *k_out = K_CAP;
    if (!d || !k) {
        base_free(d), base_free(k);
        return;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        int d1 = n->n_in ? d[n->in[0]] : 0, d2 = n->n_in > 1 ? d[n->in[1]] : 0;
        double k1 = n->n_in ? k[n->in[0]] : 0, k2 = n->n_in > 1 ? k[n->in[1]] : 0;
        d[i] = degree(ir_ops[n->op].deg, d1, d2);
        k[i] = kcap(exp_terms(g, n, k1, k2));
    }
    *d_out = 0, *k_out = 0;
    for (int o = 0; o < g->n_outputs; o++) {
        *d_out = dmax(*d_out, d[g->outputs[o]]);
        if (k[g->outputs[o]] > *k_out) *k_out = k[g->outputs[o]];
    }
    base_free(d), base_free(k);
}

double vf_log2_bound(int d, double k) {
    double kk = terms(k);
    double eps = 8.0 * (d < 1 ? 1 : d) * pow(kk, 4) / FF_Q + pow((double)FF_Q, -1.0 / (kk * kk));
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
                           un->name, ir_shape_str(p->nodes[j].dtype, &p->nodes[j].shape, s1, sizeof s1),
                           ir_shape_str(un->dtype, &un->shape, s2, sizeof s2));
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
                           un->name, ir_shape_str(pn->dtype, &pn->shape, s1, sizeof s1),
                           ir_shape_str(un->dtype, &un->shape, s2, sizeof s2));
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

/* The program's side of the tests: per field test its random inputs, omega and outputs, and
 * the float test's inputs and f64 outputs, each made on first use and kept, so many
 * candidates are checked against one set (vf_ref_new). */
struct vf_ref {
    const ir_graph *p;
    int tests, n_built, lax, degree;
    double exp_terms, per_test;
    char why[512];
    uint64_t seed;
    rng rg;
    struct {
        uint32_t *ip[MAX_IO], *iq[MAX_IO], *pp[MAX_IO], *pq[MAX_IO];
        uint32_t omega;
    } *t;
    double *fin[MAX_IO], *fpo[MAX_IO];
    int float_built;
    int quick; /* a field test that differs ends it: no float test for the report */
    const int *stop; /* vf_ref_set_stop */
};

void vf_ref_set_stop(vf_ref *f, const int *stop) { f->stop = stop; }

static mg_status check_stop(const vf_ref *f, mg_ctx *ctx) {
    if (f->stop && __atomic_load_n(f->stop, __ATOMIC_RELAXED))
        return ctx_err(ctx, MG_ERR_LIMIT, "verification stopped (time limit or stop request)");
    return MG_OK;
}

/* Builds field test n_built (the rng draws them in order). */
static mg_status build_test(vf_ref *f, mg_ctx *ctx) {
    const ir_graph *p = f->p;
    int t = f->n_built, np = 0;
    mg_status rc = MG_OK;
    for (int i = 0; i < p->n_nodes && !rc; i++) {
        if (p->nodes[i].op != IR_OP_INPUT) continue;
        int64_t n = ir_numel(&p->nodes[i].shape);
        uint32_t *a = f->t[t].ip[np] = base_alloc((size_t)n * 4), *b = f->t[t].iq[np] = base_alloc((size_t)n * 4);
        if (!a || !b) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        for (int64_t e = 0; !rc && e < n; e++) a[e] = rng_below(&f->rg, FF_P), b[e] = rng_below(&f->rg, FF_Q);
        np++;
    }
    for (int k = 0; k < p->n_outputs && !rc; k++) {
        size_t n = (size_t)ir_numel(&p->nodes[p->outputs[k]].shape) * 4;
        f->t[t].pp[k] = base_alloc(n), f->t[t].pq[k] = base_alloc(n);
        if (!f->t[t].pp[k] || !f->t[t].pq[k]) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    f->t[t].omega = ff_omega(rng_next(&f->rg));
    if (!rc) rc = ev_field(p, ctx, f->t[t].omega, (const uint32_t *const *)f->t[t].ip,
                           (const uint32_t *const *)f->t[t].iq, f->t[t].pp, f->t[t].pq);
    if (!rc) f->n_built++;
    return rc;
}

/* Builds the float test's inputs (uniform in [-1, 1)) and the program's f64 outputs. */
static mg_status build_float(vf_ref *f, mg_ctx *ctx) {
    const ir_graph *p = f->p;
    rng rg = {f->seed ^ 0xf10a7ull};
    int np = 0;
    mg_status rc = MG_OK;
    for (int i = 0; i < p->n_nodes && !rc; i++) {
        if (p->nodes[i].op != IR_OP_INPUT) continue;
        int64_t n = ir_numel(&p->nodes[i].shape);
        if (!(f->fin[np] = base_alloc((size_t)n * sizeof(double)))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        /* drawn, then rounded to the input's dtype once, so both sides read them in place */
        for (int64_t t = 0; !rc && t < n; t++) f->fin[np][t] = base_round_dtype(rng_uniform(&rg) * 2 - 1, p->nodes[i].dtype);
        np++;
    }
    for (int k = 0; k < p->n_outputs && !rc; k++)
        if (!(f->fpo[k] = base_alloc((size_t)ir_numel(&p->nodes[p->outputs[k]].shape) * sizeof(double))))
            rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc) rc = ev_float(p, ctx, EV_F64 | EV_ROUNDED, (const double *const *)f->fin, f->fpo); /* reference: f64 */
    if (!rc) f->float_built = 1;
    return rc;
}

mg_status vf_ref_new(const ir_graph *p, mg_ctx *ctx, int tests, uint64_t seed, int eager, vf_ref **out) {
    *out = NULL;
    vf_ref *f = base_calloc(1, sizeof *f);
    if (!f) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    f->p = p, f->seed = seed, f->rg = (rng){seed * 0x9e3779b97f4a7c15ull + 1}, f->quick = eager;
    f->lax = ir_is_lax(p, f->why, sizeof f->why);
    if (f->lax < 0) {
        base_free(f);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    vf_estimate(p, &f->degree, &f->exp_terms);
    f->per_test = vf_log2_bound(f->degree, f->exp_terms);
    if (tests <= 0) /* enough for 2^-40 where the bound is useful, else a fixed 8 */
        tests = f->per_test < 0 ? (int)ceil(-40.0 / f->per_test) : 8;
    f->tests = tests > 1000 ? 1000 : tests;
    f->t = base_calloc((size_t)f->tests, sizeof *f->t);
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
    for (int t = 0; f->t && t < f->tests; t++)
        for (int i = 0; i < MAX_IO; i++) {
            base_free(f->t[t].ip[i]), base_free(f->t[t].iq[i]);
            base_free(f->t[t].pp[i]), base_free(f->t[t].pq[i]);
        }
    for (int i = 0; i < MAX_IO; i++) base_free(f->fin[i]), base_free(f->fpo[i]);
    base_free(f->t);
    base_free(f);
}

/* Field test t of f on u. Returns MG_OK and sets *differs (with the witness in r->text). */
static mg_status field_test(vf_ref *f, int t, const ir_graph *u, const vf_io_map *m, mg_ctx *ctx,
                            int *differs, mg_verify_report *r) {
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
    uint32_t **pp = f->t[t].pp, **pq = f->t[t].pq, omega = f->t[t].omega;
    for (int i = 0; i < m->n_in; i++) uip[i] = f->t[t].ip[m->in[i]], uiq[i] = f->t[t].iq[m->in[i]];
    if ((rc = ev_field(u, ctx, omega, uip, uiq, up, uq)) == MG_ERR_DIV_ZERO) {
        /* the program has a value where the μGraph divides by zero: they differ there */
        snprintf(r->text, sizeof r->text, "not equivalent: on inputs where the program is defined "
                 "the μGraph divides by zero (%.600s)", ctx ? ctx->msg : "");
        *differs = 1;
        rc = MG_OK;
    }
    for (int k = 0; !rc && k < m->n_out && !*differs; k++) {
        int o = m->out[k];
        const ir_node *pn = &p->nodes[p->outputs[o]];
        int64_t n = ir_numel(&pn->shape);
        for (int64_t e = 0; e < n; e++) {
            uint32_t aq = pq[o][e], bq = uq[k][e];
            if (pp[o][e] == up[k][e] && (aq == bq || aq == FF_NONE || bq == FF_NONE)) continue;
            char at[160];
            index_str(pn->name ? pn->name : "output", &pn->shape, e, at, sizeof at);
            snprintf(r->text, sizeof r->text, "not equivalent: %s is (%u, %u) in the program but "
                     "(%u, %u) in the μGraph (omega = %u; a q part of %u means none)", at,
                     pp[o][e], aq, up[k][e], bq, omega, FF_NONE);
            *differs = 1;
            break;
        }
    }
out:
    for (int i = 0; i < MAX_IO; i++) base_free(up[i]), base_free(uq[i]);
    return rc;
}

static double dtype_tol(mg_dtype t) { return t == MG_F16 ? 1e-2 : t == MG_BF16 ? 4e-2 : 1e-4; }

/* The float test of f on u; sets r->float_error / float_tol and *unstable (with the reason). */
static mg_status float_test(vf_ref *f, const ir_graph *u, const vf_io_map *m, mg_ctx *ctx,
                            int *unstable, mg_verify_report *r) {
    const ir_graph *p = f->p;
    double *uo[MAX_IO] = {0};
    const double *uin[MAX_IO];
    mg_status rc = f->float_built ? MG_OK : build_float(f, ctx);
    for (int k = 0; k < m->n_out && !rc; k++)
        if (!(uo[k] = base_alloc((size_t)ir_numel(&p->nodes[p->outputs[m->out[k]]].shape) * sizeof(double))))
            rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->n_in; i++) uin[i] = f->fin[m->in[i]];
    if (!rc) rc = ev_float(u, ctx, EV_ROUNDED, uin, uo); /* candidate: f32 */
    *unstable = 0;
    r->float_error = 0, r->float_tol = 0;
    for (int k = 0; !rc && k < m->n_out; k++) {
        int o = m->out[k];
        const ir_node *pn = &p->nodes[p->outputs[o]];
        const double *po = f->fpo[o];
        int64_t n = ir_numel(&pn->shape), worst = 0;
        double scale = 0, err = 0, tol = dtype_tol(pn->dtype);
        for (int64_t t = 0; t < n; t++) scale = fmax(scale, fabs(po[t]));
        for (int64_t t = 0; t < n; t++) {
            double e = fabs(uo[k][t] - po[t]) / (scale > 0 ? scale : 1);
            if (!(e <= err)) err = isnan(e) ? INFINITY : e, worst = t; /* NaN never passes */
        }
        if (err / tol > r->float_error / (r->float_tol > 0 ? r->float_tol : 1)) r->float_error = err, r->float_tol = tol;
        if (err > tol && !*unstable) {
            char at[160];
            index_str(pn->name ? pn->name : "output", &pn->shape, worst, at, sizeof at);
            snprintf(r->text, sizeof r->text, "numerically unstable: equivalent over Z_p x Z_q, but "
                     "in f32 %s is %.6g where the f64 program gives %.6g (normalised error %.3g > "
                     "%.3g for %s)", at, uo[k][worst], po[worst], err, tol, base_dtype_name(pn->dtype));
            *unstable = 1;
        }
    }
    for (int i = 0; i < MAX_IO; i++) base_free(uo[i]);
    return rc;
}

mg_status vf_verify_ref(vf_ref *f, const ir_graph *u, mg_ctx *ctx, mg_verify_report *r) {
    memset(r, 0, sizeof *r);
    vf_io_map m;
    memset(&m, 0, sizeof m);
    mg_status rc = vf_match_io(f->p, u, ctx, &m);
    if (rc) return rc;
    char why[512];
    int lax = ir_is_lax(u, why, sizeof why);
    if (lax < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!f->lax || !lax) {
        r->verdict = MG_NOT_LAX;
        snprintf(r->text, sizeof r->text, "not Lax, so not decided (Mirage Definition 5.1): "
                 "in the %s, %s", f->lax ? "μGraph" : "program", f->lax ? why : f->why);
        return MG_OK;
    }
    r->degree = f->degree, r->exp_terms = f->exp_terms;
    for (int t = 0; t < f->tests; t++) {
        int differs = 0;
        if ((rc = check_stop(f, ctx)) || (rc = field_test(f, t, u, &m, ctx, &differs, r))) return rc;
        r->tests = t + 1;
        if (differs && f->quick) {
            r->verdict = MG_NOT_EQUIVALENT;
            return MG_OK;
        }
        if (differs) { /* the float test too, so a corpus of near misses can check itself */
            r->verdict = MG_NOT_EQUIVALENT;
            char witness[sizeof r->text];
            memcpy(witness, r->text, sizeof witness);
            int off = 0;
            if ((rc = float_test(f, u, &m, ctx, &off, r))) return rc;
            snprintf(r->text, sizeof r->text, "%.1400s; the float test %s it (normalised error "
                     "%.3g, tolerance %.3g)", witness, off ? "also rejects" : "would accept",
                     r->float_error, r->float_tol);
            return MG_OK;
        }
    }
    r->log2_bound = f->per_test < 0 ? f->per_test * f->tests : 0;
    int unstable = 0;
    if ((rc = check_stop(f, ctx))) return rc;
    if ((rc = float_test(f, u, &m, ctx, &unstable, r))) return rc;
    if (unstable) {
        r->verdict = MG_UNSTABLE;
        return MG_OK;
    }
    r->verdict = MG_EQUIVALENT;
    if (r->log2_bound < 0)
        snprintf(r->text, sizeof r->text, "equivalent: %d random tests over Z_p x Z_q passed; a "
                 "non-equivalent μGraph passes them with probability at most 2^%.1f (Theorem 2: "
                 "degree <= %d, %.0f exp terms); float test error %.3g (tolerance %.3g)",
                 r->tests, r->log2_bound, r->degree, r->exp_terms, r->float_error, r->float_tol);
    else
        snprintf(r->text, sizeof r->text, "equivalent: %d random tests over Z_p x Z_q passed, but "
                 "Theorem 2 gives no bound here (about %.3g exp terms: see docs/verify.md); float "
                 "test error %.3g (tolerance %.3g)", r->tests, r->exp_terms, r->float_error, r->float_tol);
    return MG_OK;
}

mg_status vf_verify(const ir_graph *p, const ir_graph *u, mg_ctx *ctx, int tests, uint64_t seed,
                    mg_verify_report *r) {
    memset(r, 0, sizeof *r);
    vf_io_map m;
    mg_status rc = vf_match_io(p, u, ctx, &m); /* interface errors before any work */
    vf_ref *f = NULL;
    if (!rc) rc = vf_ref_new(p, ctx, tests, seed, 0, &f);
    if (!rc) rc = vf_verify_ref(f, u, ctx, r);
    vf_ref_free(f);
    return rc;
}
