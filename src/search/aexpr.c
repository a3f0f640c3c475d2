/* aexpr: abstract expressions, the A_eq e-graph and the subexpression test (aexpr.h,
 * docs/search.md). */
#include "aexpr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const ae_names[AE_OP_COUNT] = {"var", "const", "add", "mul", "div",
                                                  "exp", "sqrt", "silu", "sum", "concat", "rms"};
static const int ae_arity[AE_OP_COUNT] = {0, 0, 2, 2, 2, 1, 1, 1, 1, 2, 1};

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}
static uint64_t key_hash(int32_t op, int32_t a, int32_t b, int64_t k, int64_t k2) {
    uint64_t h = mix(mix(mix(mix(mix(1469598103934665603ull, (uint64_t)op), (uint64_t)a),
                             (uint64_t)b), (uint64_t)k), (uint64_t)k2);
    return h ^ (h >> 29);
}
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
        uint64_t h = key_hash(x->op, x->a, x->b, x->k, x->k2);
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
    if ((op == AE_ADD || op == AE_MUL) && a > b) {
        int32_t s = a;
        a = b, b = s;
    }
    if (op == AE_CONST) {
        int64_t g = gcd64(k, k2);
        k /= g, k2 /= g;
    }
    if (ae_arity[op] < 2) b = -1;
    if (ae_arity[op] < 1) a = -1;
    if ((int64_t)(t->n + 1) * 2 > t->n_slots &&
        tab_rehash(t, t->n_slots ? t->n_slots * 2 : 1024)) {
        t->oom = 1;
        return -1;
    }
    uint64_t h = key_hash(op, a, b, k, k2);
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

static int32_t parse_rec(ae_tab *t, mg_ctx *ctx, const char *s, size_t *p, int *err_col,
                         int depth) {
    skip_ws(s, p);
    if (depth > 1000) return parse_fail(ctx, err_col, *p, "expression nested too deeply");
    if (!s[*p]) return parse_fail(ctx, err_col, *p, "expected an expression");
    if (s[*p] == ')') return parse_fail(ctx, err_col, *p, "unexpected ')'");
    if (s[*p] != '(') {
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
    size_t open = (*p)++;
    skip_ws(s, p);
    size_t e = token_end(s, *p);
    int op = -1;
    for (int o = AE_ADD; o < AE_OP_COUNT; o++)
        if (strlen(ae_names[o]) == e - *p && !memcmp(ae_names[o], s + *p, e - *p)) op = o;
    if (op < 0) return parse_fail(ctx, err_col, *p, "unknown operator");
    size_t at = *p;
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
    for (int i = 0; i < ae_arity[op]; i++)
        if ((kid[i] = parse_rec(t, ctx, s, p, err_col, depth + 1)) < 0) return -1;
    skip_ws(s, p);
    if (s[*p] != ')')
        return parse_fail(ctx, err_col, s[*p] ? *p : open, s[*p] ? "expected ')'" : "missing ')'");
    (*p)++;
    (void)at;
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
    sb_printf(sb, "(%s", ae_names[x->op]);
    if (x->op == AE_SUM || x->op == AE_RMS) sb_printf(sb, " %lld", (long long)x->k);
    if (x->op == AE_CONCAT) sb_printf(sb, " %lld %lld", (long long)x->k, (long long)x->k2);
    for (int i = 0; i < ae_arity[x->op]; i++) {
        sb_puts(sb, " ");
        ae_print(t, i ? x->b : x->a, sb);
    }
    sb_puts(sb, ")");
}

/* ---- Table 1: the abstract expression of each node ---- */

int32_t ae_op_term(ae_tab *t, const ir_graph *g, const ir_node *n, int32_t a, int32_t b) {
    switch (n->op) {
    case IR_OP_ADD:
    case IR_OP_SUB: return ae_make(t, AE_ADD, a, b, 0, 0);
    case IR_OP_MUL: return ae_make(t, AE_MUL, a, b, 0, 0);
    case IR_OP_DIV: return ae_make(t, AE_DIV, a, b, 0, 0);
    case IR_OP_EXP: return ae_make(t, AE_EXP, a, -1, 0, 0);
    case IR_OP_SQRT: return ae_make(t, AE_SQRT, a, -1, 0, 0);
    case IR_OP_SILU: return ae_make(t, AE_SILU, a, -1, 0, 0);
    case IR_OP_SQR: return ae_make(t, AE_MUL, a, a, 0, 0);
    case IR_OP_MATMUL: {
        const ir_shape *s = &g->nodes[n->in[0]].shape;
        int32_t m = ae_make(t, AE_MUL, a, b, 0, 0);
        return m < 0 ? -1 : ae_make(t, AE_SUM, m, -1, s->d[s->ndim - 1], 0);
    }
    case IR_OP_SUM: return ae_make(t, AE_SUM, a, -1, n->group, 0);
    case IR_OP_REPEAT:
    case IR_OP_RESHAPE:
    case IR_OP_SAVE: return a;
    case IR_OP_CONCAT:
        return ae_make(t, AE_CONCAT, a, b, g->nodes[n->in[0]].shape.d[n->dim],
                       g->nodes[n->in[1]].shape.d[n->dim]);
    case IR_OP_ACCUM: return n->fmap < 0 ? ae_make(t, AE_SUM, a, -1, g->forloop, 0) : a;
    default: return -2;
    }
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

/* ---- the e-graph ----
 * Nodes name their operands by e-class; classes are union-find sets. Each round matches
 * every rule on the nodes present at its start (reading class member lists from the last
 * rebuild), adds the right-hand sides and merges; the rebuild then restores congruence
 * (equal canonical nodes are merged, their classes unioned) until nothing changes. */
typedef struct eg_node {
    int32_t op, c0, c1;
    int64_t k, k2;
} eg_node;

struct ae_egraph {
    eg_node *nodes;
    int32_t *node_cls;
    int64_t n_nodes, cap_nodes;
    int32_t *parent;
    int64_t n_cls, cap_cls;
    int64_t *slots; /* hashcons: node ids, -1 empty */
    int64_t n_slots;
    int64_t *cstart, *cnodes; /* class member lists (CSR over class ids), from the rebuild */
    uint8_t *reach;
    int32_t *up; /* per class: the fewest operators from it up to a root (ae_up) */
    int32_t roots[AE_MAX_ROOTS];
    int n_roots;
    ae_limits lim;
    int full, oom;
};

static int32_t eg_find(const ae_egraph *eg, int32_t c) {
    while (eg->parent[c] != c) c = eg->parent[c];
    return c;
}
static int32_t eg_find_mut(ae_egraph *eg, int32_t c) {
    int32_t r = eg_find(eg, c);
    while (eg->parent[c] != r) {
        int32_t n = eg->parent[c];
        eg->parent[c] = r;
        c = n;
    }
    return r;
}
static int eg_union(ae_egraph *eg, int32_t a, int32_t b) {
    a = eg_find_mut(eg, a), b = eg_find_mut(eg, b);
    if (a == b) return 0;
    if (a < b) eg->parent[b] = a;
    else eg->parent[a] = b;
    return 1;
}

static void eg_canon(const ae_egraph *eg, eg_node *n) {
    if (n->c0 >= 0) n->c0 = eg_find(eg, n->c0);
    if (n->c1 >= 0) n->c1 = eg_find(eg, n->c1);
    if ((n->op == AE_ADD || n->op == AE_MUL) && n->c0 > n->c1) {
        int32_t s = n->c0;
        n->c0 = n->c1, n->c1 = s;
    }
}
static uint64_t node_hash(const eg_node *n) { return key_hash(n->op, n->c0, n->c1, n->k, n->k2); }
static int node_eq(const eg_node *a, const eg_node *b) {
    return a->op == b->op && a->c0 == b->c0 && a->c1 == b->c1 && a->k == b->k && a->k2 == b->k2;
}

/* Slot for canonical node n: the slot holding an equal node, or the empty one to fill. */
static int64_t eg_slot(const ae_egraph *eg, const eg_node *n) {
    int64_t j = (int64_t)(node_hash(n) & (uint64_t)(eg->n_slots - 1));
    while (eg->slots[j] >= 0) {
        eg_node m = eg->nodes[eg->slots[j]];
        eg_canon(eg, &m);
        if (node_eq(&m, n)) return j;
        j = (j + 1) & (eg->n_slots - 1);
    }
    return j;
}

static int eg_grow_slots(ae_egraph *eg) {
    int64_t ns = eg->n_slots ? eg->n_slots * 2 : 4096;
    int64_t *s = base_alloc(sizeof *s * (size_t)ns);
    if (!s) return -1;
    memset(s, 0xff, sizeof *s * (size_t)ns);
    base_free(eg->slots);
    eg->slots = s, eg->n_slots = ns;
    for (int64_t i = 0; i < eg->n_nodes; i++) {
        if (eg->nodes[i].op < 0) continue;
        eg_node m = eg->nodes[i];
        eg_canon(eg, &m);
        int64_t j = eg_slot(eg, &m);
        if (eg->slots[j] < 0) eg->slots[j] = i;
    }
    return 0;
}

/* Adds op(c0, c1) with k, k2 (canonical forms as in the term table). Returns its class, or
 * -2 if it may not be built (an operand that was not built, (a sum beyond max_sum, the node limit, out of memory). */
static int32_t eg_add(ae_egraph *eg, int32_t op, int32_t c0, int32_t c1, int64_t k, int64_t k2) {
    if ((ae_arity[op] >= 1 && c0 < 0) || (ae_arity[op] == 2 && c1 < 0)) return -2;
    if (op == AE_SUM && k == 1) return eg_find(eg, c0);
    if (op == AE_SUM && k > eg->lim.max_sum) return -2;
    eg_node n = {op, c0, c1, k, k2};
    eg_canon(eg, &n);
    if ((eg->n_nodes + 1) * 2 > eg->n_slots && eg_grow_slots(eg)) {
        eg->oom = 1;
        return -2;
    }
    int64_t j = eg_slot(eg, &n);
    if (eg->slots[j] >= 0) return eg_find(eg, eg->node_cls[eg->slots[j]]);
    if (eg->n_nodes >= eg->lim.max_nodes) {
        eg->full = 1;
        return -2;
    }
    if (eg->n_nodes == eg->cap_nodes) {
        int64_t cap = eg->cap_nodes ? eg->cap_nodes * 2 : 4096;
        eg_node *nn = base_realloc(eg->nodes, sizeof *nn * (size_t)cap);
        int32_t *nc = nn ? base_realloc(eg->node_cls, sizeof *nc * (size_t)cap) : NULL;
        if (nn) eg->nodes = nn;
        if (!nc) {
            eg->oom = 1;
            return -2;
        }
        eg->node_cls = nc, eg->cap_nodes = cap;
    }
    if (eg->n_cls == eg->cap_cls) {
        int64_t cap = eg->cap_cls ? eg->cap_cls * 2 : 4096;
        int32_t *p = base_realloc(eg->parent, sizeof *p * (size_t)cap);
        if (!p) {
            eg->oom = 1;
            return -2;
        }
        eg->parent = p, eg->cap_cls = cap;
    }
    int32_t c = (int32_t)eg->n_cls++;
    eg->parent[c] = c;
    eg->nodes[eg->n_nodes] = n;
    eg->node_cls[eg->n_nodes] = c;
    eg->slots[j] = eg->n_nodes++;
    return c;
}

/* Restores the invariants after a round: canonical nodes, congruent nodes merged (the later
 * one marked dead), then the class member lists. */
static int eg_rebuild(ae_egraph *eg) {
    for (;;) {
        int changed = 0;
        memset(eg->slots, 0xff, sizeof *eg->slots * (size_t)eg->n_slots);
        for (int64_t i = 0; i < eg->n_nodes; i++) {
            eg_node *n = &eg->nodes[i];
            if (n->op < 0) continue;
            eg_canon(eg, n);
            int64_t j = eg_slot(eg, n);
            if (eg->slots[j] < 0) {
                eg->slots[j] = i;
                continue;
            }
            changed |= eg_union(eg, eg->node_cls[eg->slots[j]], eg->node_cls[i]);
            n->op = -1; /* a duplicate of slots[j] */
        }
        if (!changed) break;
    }
    base_free(eg->cstart);
    base_free(eg->cnodes);
    eg->cstart = base_calloc((size_t)eg->n_cls + 1, sizeof *eg->cstart);
    eg->cnodes = base_alloc(sizeof *eg->cnodes * (size_t)(eg->n_nodes + 1));
    if (!eg->cstart || !eg->cnodes) return -1;
    for (int64_t i = 0; i < eg->n_nodes; i++)
        if (eg->nodes[i].op >= 0) eg->cstart[eg_find_mut(eg, eg->node_cls[i]) + 1]++;
    for (int64_t c = 0; c < eg->n_cls; c++) eg->cstart[c + 1] += eg->cstart[c];
    int64_t *fill = base_alloc(sizeof *fill * (size_t)(eg->n_cls + 1));
    if (!fill) return -1;
    memcpy(fill, eg->cstart, sizeof *fill * (size_t)eg->n_cls);
    for (int64_t i = 0; i < eg->n_nodes; i++)
        if (eg->nodes[i].op >= 0) eg->cnodes[fill[eg_find(eg, eg->node_cls[i])]++] = i;
    base_free(fill);
    return 0;
}

/* Iterates the nodes with operator OP of class C (as of the last rebuild) as `eg_node M`. */
#define EACH(M, C, OP)                                                                     \
    for (int64_t M##_i = eg->cstart[C]; M##_i < eg->cstart[(C) + 1]; M##_i++)              \
        for (eg_node M = eg->nodes[eg->cnodes[M##_i]]; M.op == (OP); M.op = -2)

/* Adds a right-hand side to class c: merges if it was built. */
static int eg_merge(ae_egraph *eg, int32_t c, int32_t r) { return r >= 0 && eg_union(eg, c, r); }

static int32_t A2(ae_egraph *eg, int32_t op, int32_t a, int32_t b) { return eg_add(eg, op, a, b, 0, 0); }
static int32_t A1(ae_egraph *eg, int32_t op, int32_t a) { return eg_add(eg, op, a, -1, 0, 0); }
static int32_t SUMK(ae_egraph *eg, int64_t k, int32_t a) { return eg_add(eg, AE_SUM, a, -1, k, 0); }

/* One round of A_eq (Table 2, both directions) on node n of class c. Returns 1 if a merge
 * happened. */
static int eg_apply(ae_egraph *eg, int32_t c, eg_node n) {
    int ch = 0;
    int32_t a = n.c0, b = n.c1;
    switch (n.op) {
    case AE_ADD:
    case AE_MUL:
        for (int o = 0; o < 2; o++) {
            int32_t x = o ? b : a, y = o ? a : b;
            /* associativity: x + (p + q) = (x + p) + q = (x + q) + p */
            EACH(m, y, n.op) {
                ch |= eg_merge(eg, c, A2(eg, n.op, A2(eg, n.op, x, m.c0), m.c1));
                ch |= eg_merge(eg, c, A2(eg, n.op, A2(eg, n.op, x, m.c1), m.c0));
            }
            if (n.op == AE_MUL) {
                /* distributivity: (p + q) z = p z + q z */
                EACH(m, x, AE_ADD)
                    ch |= eg_merge(eg, c, A2(eg, AE_ADD, A2(eg, AE_MUL, m.c0, y), A2(eg, AE_MUL, m.c1, y)));
                /* x (p / q) = (x p) / q */
                EACH(m, y, AE_DIV) ch |= eg_merge(eg, c, A2(eg, AE_DIV, A2(eg, AE_MUL, x, m.c0), m.c1));
                /* sum(i, p) y = sum(i, p y) */
                EACH(m, x, AE_SUM) ch |= eg_merge(eg, c, SUMK(eg, m.k, A2(eg, AE_MUL, m.c0, y)));
            }
        }
        if (n.op == AE_MUL) {
            EACH(m, a, AE_EXP) EACH(m2, b, AE_EXP)
                ch |= eg_merge(eg, c, A1(eg, AE_EXP, A2(eg, AE_ADD, m.c0, m2.c0)));
            EACH(m, a, AE_SQRT) EACH(m2, b, AE_SQRT)
                ch |= eg_merge(eg, c, A1(eg, AE_SQRT, A2(eg, AE_MUL, m.c0, m2.c0)));
            break;
        }
        /* add: factor a common multiplicand, divisor or sum */
        EACH(m, a, AE_MUL) EACH(m2, b, AE_MUL) {
            int32_t p[2] = {m.c0, m.c1}, q[2] = {m2.c0, m2.c1};
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    if (p[i] == q[j])
                        ch |= eg_merge(eg, c, A2(eg, AE_MUL, A2(eg, AE_ADD, p[1 - i], q[1 - j]), p[i]));
        }
        EACH(m, a, AE_DIV) EACH(m2, b, AE_DIV) if (m.c1 == m2.c1)
            ch |= eg_merge(eg, c, A2(eg, AE_DIV, A2(eg, AE_ADD, m.c0, m2.c0), m.c1));
        EACH(m, a, AE_SUM) EACH(m2, b, AE_SUM) if (m.k == m2.k)
            ch |= eg_merge(eg, c, SUMK(eg, m.k, A2(eg, AE_ADD, m.c0, m2.c0)));
        /* concat (ours): sum(i, p q) + sum(j, r s) = sum(i + j, concat(p, r) concat(q, s)) */
        for (int o = 0; o < 2; o++) {
            int32_t x = o ? b : a, y = o ? a : b;
            /* each side is sum(k, p q), or p q itself (k = 1) */
            for (int64_t i1 = eg->cstart[x]; i1 < eg->cstart[x + 1]; i1++)
                for (int64_t i2 = eg->cstart[y]; i2 < eg->cstart[y + 1]; i2++) {
                    eg_node s1 = eg->nodes[eg->cnodes[i1]], s2 = eg->nodes[eg->cnodes[i2]];
                    int32_t c1 = s1.op == AE_SUM ? s1.c0 : s1.op == AE_MUL ? x : -1;
                    int32_t c2 = s2.op == AE_SUM ? s2.c0 : s2.op == AE_MUL ? y : -1;
                    int64_t k1 = s1.op == AE_SUM ? s1.k : 1, k2 = s2.op == AE_SUM ? s2.k : 1;
                    if (c1 < 0 || c2 < 0) continue;
                    EACH(m, c1, AE_MUL) EACH(m2, c2, AE_MUL)
                        for (int j = 0; j < 4; j++) { /* both operand orders of each product */
                            int32_t p = j & 1 ? m.c1 : m.c0, q = j & 1 ? m.c0 : m.c1;
                            int32_t r = j & 2 ? m2.c1 : m2.c0, s = j & 2 ? m2.c0 : m2.c1;
                            int32_t l = eg_add(eg, AE_CONCAT, p, r, k1, k2);
                            int32_t rr = eg_add(eg, AE_CONCAT, q, s, k1, k2);
                            ch |= eg_merge(eg, c, SUMK(eg, k1 + k2, A2(eg, AE_MUL, l, rr)));
                        }
                }
        }
        break;
    case AE_DIV:
        EACH(m, a, AE_ADD) ch |= eg_merge(eg, c, A2(eg, AE_ADD, A2(eg, AE_DIV, m.c0, b), A2(eg, AE_DIV, m.c1, b)));
        EACH(m, a, AE_MUL) {
            ch |= eg_merge(eg, c, A2(eg, AE_MUL, m.c0, A2(eg, AE_DIV, m.c1, b)));
            ch |= eg_merge(eg, c, A2(eg, AE_MUL, m.c1, A2(eg, AE_DIV, m.c0, b)));
        }
        EACH(m, a, AE_DIV) ch |= eg_merge(eg, c, A2(eg, AE_DIV, m.c0, A2(eg, AE_MUL, m.c1, b)));
        EACH(m, b, AE_MUL) {
            ch |= eg_merge(eg, c, A2(eg, AE_DIV, A2(eg, AE_DIV, a, m.c0), m.c1));
            ch |= eg_merge(eg, c, A2(eg, AE_DIV, A2(eg, AE_DIV, a, m.c1), m.c0));
        }
        EACH(m, a, AE_SUM) ch |= eg_merge(eg, c, SUMK(eg, m.k, A2(eg, AE_DIV, m.c0, b)));
        /* ours: div(x, sqrt(div(sum(k, mul(x, x)), k))) = rms(k, x) */
        EACH(r, b, AE_SQRT) EACH(q, r.c0, AE_DIV) EACH(s, q.c0, AE_SUM) EACH(m, s.c0, AE_MUL)
            if (m.c0 == a && m.c1 == a) EACH(kc, q.c1, AE_CONST) if (kc.k == s.k && kc.k2 == 1)
                ch |= eg_merge(eg, c, eg_add(eg, AE_RMS, a, -1, s.k, 0));
        break;
    case AE_RMS: /* and back */
        ch |= eg_merge(eg, c, A2(eg, AE_DIV, a, A1(eg, AE_SQRT, A2(eg, AE_DIV, SUMK(eg, n.k, A2(eg, AE_MUL, a, a)),
                                                                 eg_add(eg, AE_CONST, -1, -1, n.k, 1)))));
        break;
    case AE_EXP:
        EACH(m, a, AE_ADD) ch |= eg_merge(eg, c, A2(eg, AE_MUL, A1(eg, AE_EXP, m.c0), A1(eg, AE_EXP, m.c1)));
        break;
    case AE_SQRT:
        EACH(m, a, AE_MUL) ch |= eg_merge(eg, c, A2(eg, AE_MUL, A1(eg, AE_SQRT, m.c0), A1(eg, AE_SQRT, m.c1)));
        break;
    case AE_SUM:
        /* sum(i, sum(j, x)) = sum(i j, x), both ways (splits over divisors) */
        EACH(m, a, AE_SUM) ch |= eg_merge(eg, c, SUMK(eg, n.k * m.k, m.c0));
        for (int64_t d = 2; d < n.k; d++)
            if (n.k % d == 0) ch |= eg_merge(eg, c, SUMK(eg, d, SUMK(eg, n.k / d, a)));
        EACH(m, a, AE_ADD) ch |= eg_merge(eg, c, A2(eg, AE_ADD, SUMK(eg, n.k, m.c0), SUMK(eg, n.k, m.c1)));
        EACH(m, a, AE_MUL) {
            ch |= eg_merge(eg, c, A2(eg, AE_MUL, SUMK(eg, n.k, m.c0), m.c1));
            ch |= eg_merge(eg, c, A2(eg, AE_MUL, SUMK(eg, n.k, m.c1), m.c0));
        }
        EACH(m, a, AE_DIV) ch |= eg_merge(eg, c, A2(eg, AE_DIV, SUMK(eg, n.k, m.c0), m.c1));
        EACH(m, a, AE_MUL) EACH(u, m.c0, AE_CONCAT) EACH(v, m.c1, AE_CONCAT)
            if (u.k == v.k && u.k2 == v.k2 && u.k + u.k2 == n.k)
                ch |= eg_merge(eg, c, A2(eg, AE_ADD, SUMK(eg, u.k, A2(eg, AE_MUL, u.c0, v.c0)),
                                         SUMK(eg, u.k2, A2(eg, AE_MUL, u.c1, v.c1))));
        break;
    default: break;
    }
    return ch;
}

static int32_t eg_insert_term(ae_egraph *eg, const ae_tab *t, int32_t id, int32_t *memo) {
    if (memo[id] >= 0) return memo[id];
    const ae_term *x = &t->terms[id];
    int32_t a = x->a >= 0 ? eg_insert_term(eg, t, x->a, memo) : -1;
    int32_t b = x->b >= 0 ? eg_insert_term(eg, t, x->b, memo) : -1;
    if ((x->a >= 0 && a < 0) || (x->b >= 0 && b < 0)) return -2;
    int32_t c = eg_add(eg, x->op, a, b, x->k, x->k2);
    return memo[id] = c < 0 ? -2 : c;
}

ae_egraph *ae_egraph_new(const ae_tab *t, const int32_t *roots, int n, const ae_limits *lim,
                         ae_egraph_stats *st) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ae_egraph *eg = base_calloc(1, sizeof *eg);
    int32_t *memo = base_alloc(sizeof *memo * (size_t)(t->n + 1));
    if (!eg || !memo || n > AE_MAX_ROOTS) goto fail;
    eg->lim.max_nodes = lim && lim->max_nodes ? lim->max_nodes : 200000;
    eg->lim.max_iters = lim && lim->max_iters ? lim->max_iters : 40;
    eg->lim.max_sum = lim ? lim->max_sum : 0;
    if (!eg->lim.max_sum) {
        /* sums beyond the roots' sizes only arise from the unsound sum(i, x y) = sum(i, x) y
         * run in circles: cap at the total of the roots' sum sizes (concat adds two) */
        int64_t tot = 0, path = 1;
        memset(memo, 0, sizeof *memo * (size_t)(t->n + 1));
        for (int i = 0; i < n; i++) memo[roots[i]] = 1;
        for (int32_t i = t->n - 1; i >= 0; i--) { /* operands have smaller ids */
            if (!memo[i]) continue;
            if (t->terms[i].op == AE_SUM || t->terms[i].op == AE_RMS) tot += t->terms[i].k;
            if (t->terms[i].op == AE_CONCAT) tot += t->terms[i].k + t->terms[i].k2;
            if (t->terms[i].a >= 0) memo[t->terms[i].a] = 1;
            if (t->terms[i].b >= 0) memo[t->terms[i].b] = 1;
        }
        /* and the largest product of sum sizes nested along one path (sum(2, sum(3, x)) may
         * become sum(6, x)) */
        int64_t *pp = base_calloc((size_t)t->n + 1, sizeof *pp);
        for (int32_t i = 0; pp && i < t->n; i++) {
            const ae_term *x = &t->terms[i];
            int64_t m = 1;
            if (x->a >= 0 && pp[x->a] > m) m = pp[x->a];
            if (x->b >= 0 && pp[x->b] > m) m = pp[x->b];
            if (x->op == AE_SUM || x->op == AE_RMS) m = m > ((int64_t)1 << 40) / x->k ? (int64_t)1 << 40 : m * x->k;
            pp[i] = m;
            if (memo[i] && m > path) path = m;
        }
        base_free(pp);
        if (path > tot) tot = path;
        eg->lim.max_sum = tot > 1 ? tot : 1;
    }
    memset(memo, 0xff, sizeof *memo * (size_t)(t->n + 1));
    eg->n_roots = n;
    for (int i = 0; i < n; i++) {
        int32_t c = eg_insert_term(eg, t, roots[i], memo);
        if (c < 0) goto fail;
        eg->roots[i] = c;
    }
    int it = 0, saturated = 0;
    if (eg_rebuild(eg)) goto fail;
    for (; it < eg->lim.max_iters && !eg->full && !eg->oom; it++) {
        int64_t n0 = eg->n_nodes;
        int ch = 0;
        for (int64_t i = 0; i < n0 && !eg->oom; i++) {
            if (eg->nodes[i].op < 0) continue;
            eg_node nd = eg->nodes[i];
            ch |= eg_apply(eg, eg_find(eg, eg->node_cls[i]), nd);
        }
        if (eg_rebuild(eg) || eg->oom) goto fail;
        if (!ch && eg->n_nodes == n0) {
            saturated = 1;
            it++;
            break;
        }
    }
    eg->reach = base_calloc((size_t)eg->n_cls + 1, 1);
    int32_t *stack = base_alloc(sizeof *stack * (size_t)(eg->n_cls + 1));
    if (!eg->reach || !stack) {
        base_free(stack);
        goto fail;
    }
    int64_t sp = 0, n_reach = 0;
    for (int i = 0; i < n; i++) {
        int32_t r = eg->roots[i] = eg_find(eg, eg->roots[i]);
        if (!eg->reach[r]) eg->reach[r] = 1, stack[sp++] = r, n_reach++;
    }
    while (sp) {
        int32_t c = stack[--sp];
        for (int64_t i = eg->cstart[c]; i < eg->cstart[c + 1]; i++) {
            const eg_node *m = &eg->nodes[eg->cnodes[i]];
            int32_t kids[2] = {m->c0, m->c1};
            for (int k = 0; k < 2; k++) {
                if (kids[k] < 0) continue;
                int32_t r = eg_find(eg, kids[k]);
                if (!eg->reach[r]) eg->reach[r] = 1, stack[sp++] = r, n_reach++;
            }
        }
    }
    base_free(stack);
    /* up: relaxed from the roots down the operand edges until nothing changes; an edge
     * costs its operator's weight (1, but 0 for sum: a matmul's sum comes with its mul, an
     * accumulator's with the loop) */
    eg->up = base_alloc(sizeof *eg->up * (size_t)(eg->n_cls + 1));
    if (!eg->up) goto fail;
    for (int64_t c = 0; c < eg->n_cls; c++) eg->up[c] = INT32_MAX / 2;
    for (int i = 0; i < n; i++) eg->up[eg->roots[i]] = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t c = 0; c < eg->n_cls; c++) {
            if (eg->parent[c] != c || eg->up[c] >= INT32_MAX / 2) continue;
            for (int64_t i = eg->cstart[c]; i < eg->cstart[c + 1]; i++) {
                const eg_node *m = &eg->nodes[eg->cnodes[i]];
                int32_t kids[2] = {m->c0, m->c1}, v = eg->up[c] + (m->op != AE_SUM);
                for (int k = 0; k < 2; k++) {
                    if (kids[k] < 0) continue;
                    int32_t r = eg_find(eg, kids[k]);
                    if (v < eg->up[r]) eg->up[r] = v, changed = 1;
                }
            }
        }
    }
    base_free(memo);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st) {
        int64_t live = 0, cls = 0;
        for (int64_t i = 0; i < eg->n_nodes; i++) live += eg->nodes[i].op >= 0;
        for (int64_t c = 0; c < eg->n_cls; c++) cls += eg->parent[c] == c;
        st->nodes = live, st->classes = cls, st->reachable = n_reach;
        st->iters = it, st->saturated = saturated;
        st->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    }
    return eg;
fail:
    base_free(memo);
    ae_egraph_free(eg);
    return NULL;
}

void ae_egraph_free(ae_egraph *eg) {
    if (!eg) return;
    base_free(eg->nodes);
    base_free(eg->node_cls);
    base_free(eg->parent);
    base_free(eg->slots);
    base_free(eg->cstart);
    base_free(eg->cnodes);
    base_free(eg->reach);
    base_free(eg->up);
    base_free(eg);
}

/* ---- queries ---- */

void ae_query_init(ae_query *q, const ae_egraph *eg, const ae_tab *t) {
    memset(q, 0, sizeof *q);
    q->eg = eg, q->t = t;
}
void ae_query_free(ae_query *q) {
    base_free(q->cls);
    memset(q, 0, sizeof *q);
}

/* The e-class of term id, or -1 if the e-graph has no node for it. */
static int32_t q_class(ae_query *q, int32_t id) {
    if (id >= q->cap) {
        int32_t cap = q->cap ? q->cap : 1024;
        while (cap <= id) cap *= 2;
        int32_t *n = base_realloc(q->cls, sizeof *n * (size_t)cap);
        if (!n) return -1;
        for (int32_t i = q->cap; i < cap; i++) n[i] = -2;
        q->cls = n, q->cap = cap;
    }
    q->lookups++;
    if (q->cls[id] != -2) {
        q->hits++;
        return q->cls[id];
    }
    const ae_term *x = &q->t->terms[id];
    const ae_egraph *eg = q->eg;
    int32_t a = x->a >= 0 ? q_class(q, x->a) : -1, b = x->b >= 0 ? q_class(q, x->b) : -1;
    int32_t r = -1;
    if (!((x->a >= 0 && a < 0) || (x->b >= 0 && b < 0))) {
        eg_node n = {x->op, a, b, x->k, x->k2};
        eg_canon(eg, &n);
        int64_t j = eg_slot(eg, &n);
        if (eg->slots[j] >= 0) r = eg_find(eg, eg->node_cls[eg->slots[j]]);
    }
    return q->cls[id] = r;
}

int32_t ae_class(ae_query *q, int32_t term) { return q_class(q, term); }

int ae_is_sub(ae_query *q, int32_t term) {
    int32_t c = q_class(q, term);
    return c >= 0 && q->eg->reach[c];
}

int ae_is_root(ae_query *q, int32_t term, int j) {
    int32_t c = q_class(q, term);
    return c >= 0 && j < q->eg->n_roots && c == q->eg->roots[j];
}

int ae_min_ops(ae_query *q, const int32_t *have, int n) {
    const ae_egraph *eg = q->eg;
    int64_t nc = eg->n_cls;
    int32_t *cost = base_alloc(sizeof *cost * (size_t)(nc + 1));
    if (!cost) return 0;
    enum { INF = 1 << 28 };
    for (int64_t c = 0; c < nc; c++) cost[c] = INF;
    for (int i = 0; i < n; i++) {
        int32_t c = q_class(q, have[i]);
        if (c >= 0) cost[c] = 0;
    }
    /* Bellman-Ford over the e-nodes: a class costs the least, over its nodes, of the node's
     * weight plus its dearest operand. Weights: 1 per operator, except sum (0: a matmul's sum
     * comes with its mul, an accumulator's with the loop) and constants (0). */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t c = 0; c < nc; c++) {
            if (eg->parent[c] != c) continue;
            for (int64_t i = eg->cstart[c]; i < eg->cstart[c + 1]; i++) {
                const eg_node *m = &eg->nodes[eg->cnodes[i]];
                int32_t v;
                if (m->op == AE_VAR) continue;
                if (m->op == AE_CONST) {
                    v = 0;
                } else {
                    int32_t a = m->c0 >= 0 ? cost[eg_find(eg, m->c0)] : 0;
                    int32_t b = m->c1 >= 0 ? cost[eg_find(eg, m->c1)] : 0;
                    v = (a > b ? a : b) + (m->op != AE_SUM);
                }
                if (v < cost[c]) cost[c] = v, changed = 1;
            }
        }
    }
    int32_t best = INF;
    for (int j = 0; j < eg->n_roots; j++) {
        int32_t r = eg_find(eg, eg->roots[j]);
        if (cost[r] < best) best = cost[r];
    }
    base_free(cost);
    return best >= INF ? INT32_MAX : best;
}

int ae_up(ae_query *q, int32_t term) {
    int32_t c = q_class(q, term);
    return c >= 0 ? q->eg->up[c] : INT32_MAX / 2;
}
