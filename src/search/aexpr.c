/* aexpr: abstract expressions, the term table, their s-expressions and Mirage Table 1
 * (aexpr.h, docs/search.md). The A_eq e-graph and the subexpression queries are egraph.c's. */
#include "aexpr.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ops.def's ae column, read twice more (aexpr.h explains the forms): the kinds' names, arity
 * and commutativity from the rows that define them, and each operator's kind. */
#define FN(kind, name) kind, name, 1
#define AS(kind) kind, NULL, 0
#define ID ID_, NULL, 0
#define NONE NONE_, NULL, 0
#define AE_DEF_0(kind, name, ar, co)
#define AE_DEF_1(kind, name, ar, co) [AE_##kind] = {name, ar, co},
const ae_kind_info ae_kinds[AE_OP_COUNT] = {
#define OP(e, nm, ar, lv, lx, ne, kd, at, co, cs, cf, dg, tm, sr, ae) AE_ROW(ar, co, ae)
#include "../ir/ops.def"
#undef OP
};
#undef AE_DEF_1
/* An operator's kind: the one its term is built with (FN or AS), or AE_ID_ (the term is its
 * operand's) or AE_NONE_ (no abstract expression here). */
enum { AE_ID_ = -1, AE_NONE_ = -2 };
#define AE_OF(e, ...) AE_OF_(e, __VA_ARGS__)
#define AE_OF_(e, kind, name, def) [IR_OP_##e] = AE_##kind,
static const int8_t op_kind[IR_OP_COUNT] = {
#define OP(e, nm, ar, lv, lx, ne, kd, at, co, cs, cf, dg, tm, sr, ae) AE_OF(e, ae)
#include "../ir/ops.def"
#undef OP
};
#undef AE_OF
#undef AE_OF_
#undef AE_DEF_0
#undef FN
#undef AS
#undef ID
#undef NONE

static int64_t gcd64(int64_t a, int64_t b) {
    if (a < 0) a = -a;
    while (b) {
        int64_t t = a % b;
        a = b, b = t;
    }
    return a ? a : 1;
}

/* ---- the term table ---- */

void ae_tab_init(ae_tab *t) { memset(t, 0, sizeof *t); }

void ae_tab_free(ae_tab *t) {
    base_free(t->terms);
    base_free(t->slots);
    for (int32_t i = 0; i < t->n_vars; i++) base_free((void *)t->var_names[i]);
    base_free(t->var_names);
    memset(t, 0, sizeof *t);
}

static int tab_rehash(ae_tab *t, int32_t n_slots) {
    int32_t *s = base_alloc(sizeof *s * (size_t)n_slots);
    if (!s) return -1;
    memset(s, 0xff, sizeof *s * (size_t)n_slots);
    for (int32_t i = 0; i < t->n; i++) {
        const ae_term *x = &t->terms[i];
        uint64_t h = ae_key_hash(x->op, x->a, x->b, x->k, x->k2);
        int32_t j = (int32_t)(h & (uint64_t)(n_slots - 1));
        while (s[j] >= 0) j = (j + 1) & (n_slots - 1);
        s[j] = i;
    }
    base_free(t->slots);
    t->slots = s, t->n_slots = n_slots;
    return 0;
}

int32_t ae_make(ae_tab *t, ae_op op, int32_t a, int32_t b, int64_t k, int64_t k2) {
    if (t->oom) return -1;
    if (op == AE_SUM && k == 1) return a; /* x = sum(1, x) */
    if (ae_kinds[op].commutative && a > b) {
        int32_t s = a;
        a = b, b = s;
    }
    if (op == AE_CONST) {
        int64_t g = gcd64(k, k2);
        k /= g, k2 /= g;
    }
    if (ae_kinds[op].arity < 2) b = -1;
    if (ae_kinds[op].arity < 1) a = -1;
    if ((int64_t)(t->n + 1) * 2 > t->n_slots &&
        tab_rehash(t, t->n_slots ? t->n_slots * 2 : 1024)) {
        t->oom = 1;
        return -1;
    }
    uint64_t h = ae_key_hash(op, a, b, k, k2);
    int32_t j = (int32_t)(h & (uint64_t)(t->n_slots - 1));
    for (; t->slots[j] >= 0; j = (j + 1) & (t->n_slots - 1)) {
        const ae_term *x = &t->terms[t->slots[j]];
        if (x->op == (int32_t)op && x->a == a && x->b == b && x->k == k && x->k2 == k2)
            return t->slots[j];
    }
    if (t->n == t->cap) {
        int32_t cap = t->cap ? t->cap * 2 : 1024;
        ae_term *n = base_realloc(t->terms, sizeof *n * (size_t)cap);
        if (!n) {
            t->oom = 1;
            return -1;
        }
        t->terms = n, t->cap = cap;
    }
    t->terms[t->n] = (ae_term){(int32_t)op, a, b, k, k2};
    t->slots[j] = t->n;
    return t->n++;
}

int32_t ae_var(ae_tab *t, const char *name) {
    for (int32_t i = 0; i < t->n_vars; i++)
        if (!strcmp(t->var_names[i], name)) return ae_make(t, AE_VAR, -1, -1, i, 0);
    if (t->n_vars == t->cap_vars) {
        int32_t cap = t->cap_vars ? t->cap_vars * 2 : 16;
        const char **n = base_realloc(t->var_names, sizeof *n * (size_t)cap);
        if (!n) {
            t->oom = 1;
            return -1;
        }
        t->var_names = n, t->cap_vars = cap;
    }
    if (!(t->var_names[t->n_vars] = base_strdup(name))) {
        t->oom = 1;
        return -1;
    }
    return ae_make(t, AE_VAR, -1, -1, t->n_vars++, 0);
}

/* ---- s-expressions ---- */

static void skip_ws(const char *s, size_t *p) {
    while (s[*p] == ' ' || s[*p] == '\t' || s[*p] == '\n' || s[*p] == '\r') (*p)++;
}
static size_t token_end(const char *s, size_t p) {
    while (s[p] && s[p] != ' ' && s[p] != '\t' && s[p] != '\n' && s[p] != '\r' && s[p] != '(' &&
           s[p] != ')')
        p++;
    return p;
}
static int32_t parse_fail(mg_ctx *ctx, int *err_col, size_t pos, const char *msg) {
    *err_col = (int)pos;
    ctx_err(ctx, MG_ERR_PARSE, "%s", msg);
    return -1;
}
static int parse_int(const char *s, size_t p, size_t e, int64_t *v) {
    int64_t x = 0;
    if (p == e) return -1;
    for (size_t i = p; i < e; i++) {
        if (s[i] < '0' || s[i] > '9' || x > INT64_MAX / 10 - 10) return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return x >= 1 ? 0 : -1;
}

/* A leaf at s + *p: a decimal constant, or a variable by name (created on first use). */
static int32_t parse_atom(ae_tab *t, mg_ctx *ctx, const char *s, size_t *p, int *err_col) {
    size_t e = token_end(s, *p);
    char buf[256];
    if (e - *p >= sizeof buf) return parse_fail(ctx, err_col, *p, "token too long");
    memcpy(buf, s + *p, e - *p);
    buf[e - *p] = 0;
    int32_t id;
    if ((buf[0] >= '0' && buf[0] <= '9') || buf[0] == '-' || buf[0] == '.') {
        int64_t num, den;
        double v;
        if (ir_parse_decimal(buf, &num, &den, &v))
            return parse_fail(ctx, err_col, *p, "malformed number");
        id = ae_make(t, AE_CONST, -1, -1, num, den);
    } else {
        for (size_t i = *p; i < e; i++)
            if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                  (i > *p && s[i] >= '0' && s[i] <= '9')))
                return parse_fail(ctx, err_col, i, "bad character in a name");
        id = -1;
        for (int32_t v = 0; v < t->n_vars; v++)
            if (strlen(t->var_names[v]) == e - *p && !memcmp(t->var_names[v], s + *p, e - *p))
                id = ae_make(t, AE_VAR, -1, -1, v, 0);
        if (id < 0) id = ae_var(t, buf);
    }
    *p = e;
    if (id < 0) return parse_fail(ctx, err_col, *p, "out of memory");
    return id;
}

/* One expression at s + *p: an atom, or '(' kind sizes operands ')' with the sizes sum and rms
 * (one) and concat (two) carry. */
static int32_t parse_rec(ae_tab *t, mg_ctx *ctx, const char *s, size_t *p, int *err_col,
                         int depth) {
    skip_ws(s, p);
    if (depth > 1000) return parse_fail(ctx, err_col, *p, "expression nested too deeply");
    if (!s[*p]) return parse_fail(ctx, err_col, *p, "expected an expression");
    if (s[*p] == ')') return parse_fail(ctx, err_col, *p, "unexpected ')'");
    if (s[*p] != '(') return parse_atom(t, ctx, s, p, err_col);
    size_t open = (*p)++;
    skip_ws(s, p);
    size_t e = token_end(s, *p);
    int op = -1;
    for (int o = 0; o < AE_OP_COUNT; o++) /* the functions: variables and constants have no ( */
        if (ae_kinds[o].arity && strlen(ae_kinds[o].name) == e - *p &&
            !memcmp(ae_kinds[o].name, s + *p, e - *p))
            op = o;
    if (op < 0) return parse_fail(ctx, err_col, *p, "unknown operator");
    *p = e;
    int64_t k[2] = {0, 0};
    for (int i = 0; i < (op == AE_SUM || op == AE_RMS ? 1 : op == AE_CONCAT ? 2 : 0); i++) {
        skip_ws(s, p);
        size_t te = token_end(s, *p);
        if (parse_int(s, *p, te, &k[i]))
            return parse_fail(ctx, err_col, *p, "expected a positive integer size");
        *p = te;
    }
    int32_t kid[2] = {-1, -1};
    for (int i = 0; i < ae_kinds[op].arity; i++)
        if ((kid[i] = parse_rec(t, ctx, s, p, err_col, depth + 1)) < 0) return -1;
    skip_ws(s, p);
    if (s[*p] != ')')
        return parse_fail(ctx, err_col, s[*p] ? *p : open, s[*p] ? "expected ')'" : "missing ')'");
    (*p)++;
    int32_t id = ae_make(t, op, kid[0], kid[1], k[0], k[1]);
    if (id < 0) return parse_fail(ctx, err_col, open, "out of memory");
    return id;
}

int32_t ae_parse(ae_tab *t, mg_ctx *ctx, const char *text, size_t *pos, int *err_col) {
    return parse_rec(t, ctx, text, pos, err_col, 0);
}

static void print_const(int64_t num, int64_t den, strbuf *sb) {
    if (den == 1) {
        sb_printf(sb, "%lld", (long long)num);
        return;
    }
    /* den divides a power of ten (constants come from decimals): print exactly */
    int64_t scale = 1;
    int digits = 0;
    while (digits < 18 && scale % den) scale *= 10, digits++;
    if (scale % den) {
        sb_printf(sb, "%.17g", (double)num / (double)den);
        return;
    }
    int64_t m = num * (scale / den); /* |num| < 2^63 and den <= 10^18: fits after cancelling */
    int64_t a = m < 0 ? -m : m;
    sb_printf(sb, "%s%lld.%0*lld", m < 0 ? "-" : "", (long long)(a / scale), digits, (long long)(a % scale));
}

void ae_print(const ae_tab *t, int32_t id, strbuf *sb) {
    const ae_term *x = &t->terms[id];
    switch (x->op) {
    case AE_VAR:
        if (x->k < t->n_vars) sb_puts(sb, t->var_names[x->k]);
        else sb_printf(sb, "v%lld", (long long)x->k);
        return;
    case AE_CONST: print_const(x->k, x->k2, sb); return;
    default: break;
    }
    sb_printf(sb, "(%s", ae_kinds[x->op].name);
    if (x->op == AE_SUM || x->op == AE_RMS) sb_printf(sb, " %lld", (long long)x->k);
    if (x->op == AE_CONCAT) sb_printf(sb, " %lld %lld", (long long)x->k, (long long)x->k2);
    for (int i = 0; i < ae_kinds[x->op].arity; i++) {
        sb_puts(sb, " ");
        ae_print(t, i ? x->b : x->a, sb);
    }
    sb_puts(sb, ")");
}

/* ---- Table 1: the abstract expression of each node ---- */

/* The term of node n over its operands' terms (Table 1): none, the first operand's own, or a
 * node of kind `kind` over (a, b), or (a, a) when `twice` (a unary op of a binary kind: sqr),
 * with sizes k, k2; a matmul's is that node (a mul) inside sum(outer, .). Sizes come from g
 * (NULL: the kind alone). The one description ae_op_term, ae_op_class and ae_op_root read, so
 * the search's lookups before building a term give what building it would. */
typedef struct op_form {
    int kind; /* an ae_op, or AE_ID_ or AE_NONE_ */
    int twice;
    int64_t k, k2, outer;
} op_form;
static op_form form_of(const ir_graph *g, const ir_node *n) {
    op_form f = {AE_NONE_, 0, 0, 0, 0};
    const ir_shape *s0 = g && n->n_in > 0 ? &g->nodes[n->in[0]].shape : NULL;
    switch (n->op) { /* the terms that carry sizes */
    case IR_OP_MATMUL: f.kind = AE_MUL, f.outer = s0 ? s0->d[s0->ndim - 1] : 0; return f;
    case IR_OP_SUM: f.kind = AE_SUM, f.k = n->group; return f;
    case IR_OP_CONCAT:
        f.kind = AE_CONCAT;
        if (g) f.k = s0->d[n->dim], f.k2 = g->nodes[n->in[1]].shape.d[n->dim];
        return f;
    case IR_OP_ACCUM:
        if (n->fmap < 0) f.kind = AE_SUM, f.k = g ? g->forloop : 0;
        else f.kind = AE_ID_;
        return f;
    case IR_OP_RMSNORM: f.kind = AE_RMS, f.k = s0 ? s0->d[n->dim] : 0; return f;
    default: break;
    }
    int k = op_kind[n->op];
    /* variables and constants are the callers' (an input's position, a constant's value) */
    if (k == AE_NONE_ || ir_ops[n->op].kind == IR_KIND_SOURCE) return f;
    f.kind = k;
    if (k >= 0) f.twice = ae_kinds[k].arity > ir_ops[n->op].arity;
    return f;
}

int32_t ae_op_term(ae_tab *t, const ir_graph *g, const ir_node *n, int32_t a, int32_t b) {
    op_form f = form_of(g, n);
    if (f.kind == AE_NONE_) return -2;
    if (f.kind == AE_ID_) return a;
    int32_t m = ae_make(t, (ae_op)f.kind, a, f.twice ? a : b, f.k, f.k2);
    return !f.outer ? m : m < 0 ? -1 : ae_make(t, AE_SUM, m, -1, f.outer, 0);
}

/* ae_op_root's answers, read from form_of once (the search asks for every operator it
 * might try: building a node each time was a quarter of nTrans's search) */
static int8_t op_root[IR_OP_COUNT];
static pthread_once_t op_root_once = PTHREAD_ONCE_INIT;
static void op_root_init(void) {
    for (int op = 0; op < IR_OP_COUNT; op++) {
        ir_node p = {.op = (ir_op)op, .fmap = -1};
        op_form f = form_of(NULL, &p);
        op_root[op] = (int8_t)(f.kind >= 0 ? f.kind : -1);
    }
}

int ae_op_root(int op) {
    if (op < 0 || op >= IR_OP_COUNT) return -1;
    pthread_once(&op_root_once, op_root_init);
    return op_root[op];
}

int32_t ae_op_class(ae_query *q, const ir_graph *g, const ir_node *n, int32_t a, int32_t b) {
    return ae_op_class_of(q, g, n, a >= 0 ? ae_class(q, a) : -1, b >= 0 ? ae_class(q, b) : -1);
}

int32_t ae_op_class_of(ae_query *q, const ir_graph *g, const ir_node *n, int32_t ca, int32_t cb) {
    op_form f = form_of(g, n);
    if (f.kind == AE_NONE_) return -2;
    if (f.kind == AE_ID_) return ca;
    int32_t m = ae_probe(q, (ae_op)f.kind, ca, f.twice ? ca : cb, f.k, f.k2);
    return !f.outer ? m : ae_probe(q, AE_SUM, m, -1, f.outer, 0);
}

static int32_t node_term(ae_tab *t, mg_ctx *ctx, const ir_graph *g, int i, const int32_t *out,
                         const int32_t *kin, mg_status *st) {
    const ir_node *n = &g->nodes[i];
    int32_t a = n->n_in > 0 ? out[n->in[0]] : -1, b = n->n_in > 1 ? out[n->in[1]] : -1;
    char lb[128];
    if ((n->n_in > 0 && a < 0) || (n->n_in > 1 && b < 0)) return -1; /* follows a non-Lax node */
    switch (n->op) {
    case IR_OP_INPUT: {
        int pos = 0;
        for (int j = 0; j < i; j++) pos += g->nodes[j].op == IR_OP_INPUT;
        if (pos < t->n_vars) return ae_make(t, AE_VAR, -1, -1, pos, 0);
        return ae_var(t, n->name);
    }
    case IR_OP_CONST: return ae_make(t, AE_CONST, -1, -1, n->num, n->den);
    case IR_OP_ITER: return kin[n->index];
    case IR_OP_KERNEL: return -1; /* handled by the caller */
    default: {
        int32_t r = ae_op_term(t, g, n, a, b);
        if (r == -2)
            *st = ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s has no abstract expression (not Lax)",
                          ir_node_label(g, i, lb, sizeof lb));
        return r < 0 ? -1 : r;
    }
    }
}

mg_status ae_of_block(ae_tab *t, mg_ctx *ctx, const ir_graph *b, const int32_t *kin,
                      int32_t *out) {
    for (int i = 0; i < b->n_nodes; i++) {
        mg_status st = MG_OK;
        out[i] = node_term(t, ctx, b, i, out, kin, &st);
        if (st) return st;
    }
    return t->oom ? ctx_err(ctx, MG_ERR_NOMEM, "out of memory") : MG_OK;
}

mg_status ae_of_graph(ae_tab *t, mg_ctx *ctx, const ir_graph *g, int32_t *out) {
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        mg_status st = MG_OK;
        if (n->op != IR_OP_KERNEL) {
            out[i] = node_term(t, ctx, g, i, out, NULL, &st);
            if (st) return st;
            continue;
        }
        /* the kernel's outputs are consecutive nodes sharing one body */
        const ir_graph *body = n->body;
        int32_t kin[IR_MAX_IN], *bt = base_alloc(sizeof *bt * (size_t)body->n_nodes);
        if (!bt) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        for (int k = 0; k < n->n_in; k++) kin[k] = out[n->in[k]];
        st = ae_of_block(t, ctx, body, kin, bt);
        int j = i;
        for (; st == MG_OK && j < g->n_nodes && g->nodes[j].op == IR_OP_KERNEL &&
               g->nodes[j].body == body;
             j++)
            out[j] = bt[body->outputs[g->nodes[j].index]];
        base_free(bt);
        if (st) return st;
        i = j - 1;
    }
    return t->oom ? ctx_err(ctx, MG_ERR_NOMEM, "out of memory") : MG_OK;
}
