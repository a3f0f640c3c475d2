/* egraph: the A_eq e-graph of the program's abstract expressions and the queries the search
 * prunes with (aexpr.h "the e-graph", docs/search.md; Mirage §4.3, Table 2). Built once per
 * search from the term table's roots, saturated under bounds, then read-only: each search
 * thread queries it through its own ae_query. */
#include "aexpr.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    int full, oom, stopped;
    int frozen; /* built and not stopped: every live node canonical and in slots (the last
                 * rebuild's pass that changed nothing), classes flattened (freeze) */
    uint64_t *bloom; /* frozen: a bit per hash of each live node (bloom_bit), 8 bits a slot */
    int bloom_shift;
    uint32_t *parent_ops; /* frozen: per class, a bit per op of the nodes it is an operand of */
    uint64_t *pair_sig;   /* frozen: per class and op, bit (c & 63) for each class c it meets
                           * as the other operand of a two-operand node of that op */
};
_Static_assert(AE_OP_COUNT <= 32, "ae_egraph.parent_ops holds a bit per ae_op");

/* Has the caller asked the e-graph to stop (ae_limits.stopped)? Sticky once it has. */
static int eg_stop(ae_egraph *eg) {
    if (!eg->stopped && eg->lim.stopped && eg->lim.stopped(eg->lim.stop_arg)) eg->stopped = 1;
    return eg->stopped;
}

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
    if (n->op >= 0 && ae_kinds[n->op].commutative && n->c0 > n->c1) {
        int32_t s = n->c0;
        n->c0 = n->c1, n->c1 = s;
    }
}
static uint64_t node_hash(const eg_node *n) { return ae_key_hash(n->op, n->c0, n->c1, n->k, n->k2); }
static int node_eq(const eg_node *a, const eg_node *b) {
    return a->op == b->op && a->c0 == b->c0 && a->c1 == b->c1 && a->k == b->k && a->k2 == b->k2;
}

/* Slot for canonical node n (its node_hash h): the slot holding an equal node, or the empty
 * one to fill. */
static int64_t eg_slot_h(const ae_egraph *eg, const eg_node *n, uint64_t h) {
    int64_t j = (int64_t)(h & (uint64_t)(eg->n_slots - 1));
    while (eg->slots[j] >= 0) {
        eg_node m = eg->nodes[eg->slots[j]];
        if (!eg->frozen) eg_canon(eg, &m);
        if (node_eq(&m, n)) return j;
        j = (j + 1) & (eg->n_slots - 1);
    }
    return j;
}
static int64_t eg_slot(const ae_egraph *eg, const eg_node *n) { return eg_slot_h(eg, n, node_hash(n)); }

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
    if ((ae_kinds[op].arity >= 1 && c0 < 0) || (ae_kinds[op].arity == 2 && c1 < 0)) return -2;
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
 * one marked dead), then the class member lists (always: the queries read them). */
static int eg_rebuild(ae_egraph *eg) {
    while (!eg_stop(eg)) { /* stopped: member lists as the classes stand, congruence unfinished */
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

/* The rules of one round of A_eq (Table 2, both directions), one function per kind of the
 * node n of class c they match; each returns 1 if a merge happened. */

/* add and mul: associativity; for mul also distributivity over add, (x p) / q and sums */
static int apply_assoc(ae_egraph *eg, int32_t c, eg_node n) {
    int ch = 0;
    int32_t a = n.c0, b = n.c1;
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
    return ch;
}

/* concat (ours): sum(i, p q) + sum(j, r s) = sum(i + j, concat(p, r) concat(q, s)), on an add
 * node of class c */
static int apply_concat(ae_egraph *eg, int32_t c, eg_node n) {
    int ch = 0;
    int32_t a = n.c0, b = n.c1;
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
    return ch;
}

/* mul: exp(p) exp(q) = exp(p + q), sqrt(p) sqrt(q) = sqrt(p q). add: factor a common
 * multiplicand, divisor or sum, and the concat rule. */
static int apply_add_mul(ae_egraph *eg, int32_t c, eg_node n) {
    int ch = apply_assoc(eg, c, n);
    int32_t a = n.c0, b = n.c1;
    if (n.op == AE_MUL) {
        EACH(m, a, AE_EXP) EACH(m2, b, AE_EXP)
            ch |= eg_merge(eg, c, A1(eg, AE_EXP, A2(eg, AE_ADD, m.c0, m2.c0)));
        EACH(m, a, AE_SQRT) EACH(m2, b, AE_SQRT)
            ch |= eg_merge(eg, c, A1(eg, AE_SQRT, A2(eg, AE_MUL, m.c0, m2.c0)));
        return ch;
    }
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
    return ch | apply_concat(eg, c, n);
}

/* div: distributes over add, moves through mul, div and sum; and the rms rule */
static int apply_div(ae_egraph *eg, int32_t c, eg_node n) {
    int ch = 0;
    int32_t a = n.c0, b = n.c1;
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
    return ch;
}

/* sum: nesting (both ways, splits over divisors), distributes over add, moves out of mul and
 * div, and the concat rule backwards */
static int apply_sum(ae_egraph *eg, int32_t c, eg_node n) {
    int ch = 0;
    int32_t a = n.c0;
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
    return ch;
}

/* One round of A_eq (Table 2, both directions) on node n of class c. Returns 1 if a merge
 * happened. */
static int eg_apply(ae_egraph *eg, int32_t c, eg_node n) {
    int32_t a = n.c0;
    switch (n.op) {
    case AE_ADD:
    case AE_MUL: return apply_add_mul(eg, c, n);
    case AE_DIV: return apply_div(eg, c, n);
    case AE_SUM: return apply_sum(eg, c, n);
    case AE_RMS: /* and back */
        return eg_merge(eg, c, A2(eg, AE_DIV, a, A1(eg, AE_SQRT, A2(eg, AE_DIV, SUMK(eg, n.k, A2(eg, AE_MUL, a, a)),
                                                                  eg_add(eg, AE_CONST, -1, -1, n.k, 1)))));
    case AE_EXP: {
        int ch = 0;
        EACH(m, a, AE_ADD) ch |= eg_merge(eg, c, A2(eg, AE_MUL, A1(eg, AE_EXP, m.c0), A1(eg, AE_EXP, m.c1)));
        return ch;
    }
    case AE_SQRT: {
        int ch = 0;
        EACH(m, a, AE_MUL) ch |= eg_merge(eg, c, A2(eg, AE_MUL, A1(eg, AE_SQRT, m.c0), A1(eg, AE_SQRT, m.c1)));
        return ch;
    }
    default: return 0;
    }
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

/* The default bound on sum sizes. Sums beyond the roots' sizes only arise from the unsound
 * sum(i, x y) = sum(i, x) y run in circles: cap at the total of the roots' sum sizes (concat
 * adds two), or the largest product of sum sizes nested along one path if larger
 * (sum(2, sum(3, x)) may become sum(6, x)). mark: t->n + 1 scratch entries. */
static int64_t default_max_sum(const ae_tab *t, const int32_t *roots, int n, int32_t *mark) {
    int64_t tot = 0, path = 1;
    memset(mark, 0, sizeof *mark * (size_t)(t->n + 1));
    for (int i = 0; i < n; i++) mark[roots[i]] = 1;
    for (int32_t i = t->n - 1; i >= 0; i--) { /* operands have smaller ids */
        if (!mark[i]) continue;
        if (t->terms[i].op == AE_SUM || t->terms[i].op == AE_RMS) tot += t->terms[i].k;
        if (t->terms[i].op == AE_CONCAT) tot += t->terms[i].k + t->terms[i].k2;
        if (t->terms[i].a >= 0) mark[t->terms[i].a] = 1;
        if (t->terms[i].b >= 0) mark[t->terms[i].b] = 1;
    }
    int64_t *pp = base_calloc((size_t)t->n + 1, sizeof *pp);
    for (int32_t i = 0; pp && i < t->n; i++) {
        const ae_term *x = &t->terms[i];
        int64_t m = 1;
        if (x->a >= 0 && pp[x->a] > m) m = pp[x->a];
        if (x->b >= 0 && pp[x->b] > m) m = pp[x->b];
        if (x->op == AE_SUM || x->op == AE_RMS) m = m > ((int64_t)1 << 40) / x->k ? (int64_t)1 << 40 : m * x->k;
        pp[i] = m;
        if (mark[i] && m > path) path = m;
    }
    base_free(pp);
    if (path > tot) tot = path;
    return tot > 1 ? tot : 1;
}

/* Rounds of eg_apply on every live node until one adds nothing (*saturated = 1), a bound
 * or the caller (ae_limits.stopped) stops it; *iters counts the rounds. -1 if out of memory. */
static int saturate(ae_egraph *eg, int *iters, int *saturated) {
    int it = 0;
    *saturated = 0;
    if (eg_rebuild(eg)) return -1;
    for (; it < eg->lim.max_iters && !eg->full && !eg->oom && !eg_stop(eg); it++) {
        int64_t n0 = eg->n_nodes;
        int ch = 0;
        for (int64_t i = 0; i < n0 && !eg->oom && ((i & 1023) || !eg_stop(eg)); i++) {
            if (eg->nodes[i].op < 0) continue;
            eg_node nd = eg->nodes[i];
            ch |= eg_apply(eg, eg_find(eg, eg->node_cls[i]), nd);
        }
        if (eg_rebuild(eg) || eg->oom) return -1;
        if (!ch && eg->n_nodes == n0 && !eg->stopped) {
            *saturated = 1;
            it++;
            break;
        }
    }
    *iters = it;
    return 0;
}

/* reach[c]: class c is reachable from a root through operand edges (A_sub). Roots become
 * canonical classes. Returns the number of reachable classes, -1 if out of memory. */
static int64_t mark_reachable(ae_egraph *eg) {
    eg->reach = base_calloc((size_t)eg->n_cls + 1, 1);
    int32_t *stack = base_alloc(sizeof *stack * (size_t)(eg->n_cls + 1));
    if (!eg->reach || !stack) {
        base_free(stack);
        return -1;
    }
    int64_t sp = 0, n_reach = 0;
    for (int i = 0; i < eg->n_roots; i++) {
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
    return n_reach;
}

/* up: relaxed from the roots down the operand edges until nothing changes; an edge costs its
 * operator's weight (1, but 0 for sum: a matmul's sum comes with its mul, an accumulator's
 * with the loop). -1 if out of memory. */
static int compute_up(ae_egraph *eg) {
    eg->up = base_alloc(sizeof *eg->up * (size_t)(eg->n_cls + 1));
    if (!eg->up) return -1;
    for (int64_t c = 0; c < eg->n_cls; c++) eg->up[c] = INT32_MAX / 2;
    for (int i = 0; i < eg->n_roots; i++) eg->up[eg->roots[i]] = 0;
    for (int changed = 1; changed && !eg_stop(eg);) { /* stopped: some too high; nothing searches then */
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
    return 0;
}

/* Live nodes and classes, as the statistics count them. */
static void count_live(const ae_egraph *eg, ae_egraph_stats *st) {
    int64_t live = 0, cls = 0;
    for (int64_t i = 0; i < eg->n_nodes; i++) live += eg->nodes[i].op >= 0;
    for (int64_t c = 0; c < eg->n_cls; c++) cls += eg->parent[c] == c;
    st->nodes = live, st->classes = cls;
}

/* The e-graph turns read-only: every class points at its root, and, unless the saturation
 * was stopped mid-rebuild, lookups take the stored nodes as canonical (they are, after the
 * rebuild's last pass): the search's lookups no longer walk union-find chains per probe
 * (nTrans: eg_slot and eg_canon were 47% of the search). */
static int64_t bloom_bit(const ae_egraph *eg, uint64_t h) {
    return (int64_t)((h * 0x9e3779b97f4a7c15ull) >> eg->bloom_shift);
}
static void freeze(ae_egraph *eg) {
    for (int64_t c = 0; c < eg->n_cls; c++) eg->parent[c] = eg_find(eg, (int32_t)c);
    eg->frozen = !eg->stopped;
    /* most of the search's lookups miss: a bit set of the nodes' hashes (in a core's cache
     * where the slots and nodes are not) answers them without a probe; no set, no filter */
    int lg = 6;
    while (((int64_t)1 << lg) < eg->n_slots * 8) lg++;
    eg->bloom = eg->frozen ? base_calloc((size_t)1 << (lg - 6), sizeof *eg->bloom) : NULL;
    eg->parent_ops = eg->bloom ? base_calloc((size_t)eg->n_cls + 1, sizeof *eg->parent_ops) : NULL;
    eg->pair_sig = eg->parent_ops ? base_calloc((size_t)eg->n_cls * AE_OP_COUNT + 1, sizeof *eg->pair_sig) : NULL;
    if (!eg->parent_ops) { /* no filters: lookups as before */
        base_free(eg->bloom);
        eg->bloom = NULL;
        return;
    }
    for (int64_t i = 0; i < eg->n_nodes; i++) {
        const eg_node *m = &eg->nodes[i];
        if (m->op < 0) continue;
        if (m->c0 >= 0) eg->parent_ops[m->c0] |= 1u << m->op;
        if (m->c1 >= 0) eg->parent_ops[m->c1] |= 1u << m->op;
        if (m->c0 >= 0 && m->c1 >= 0 && eg->pair_sig) {
            eg->pair_sig[(size_t)m->c0 * AE_OP_COUNT + (size_t)m->op] |= 1ull << (m->c1 & 63);
            eg->pair_sig[(size_t)m->c1 * AE_OP_COUNT + (size_t)m->op] |= 1ull << (m->c0 & 63);
        }
    }
    eg->bloom_shift = 64 - lg;
    for (int64_t i = 0; i < eg->n_nodes; i++)
        if (eg->nodes[i].op >= 0) {
            int64_t b = bloom_bit(eg, node_hash(&eg->nodes[i]));
            eg->bloom[b >> 6] |= 1ull << (b & 63);
        }
}

ae_egraph *ae_egraph_new(const ae_tab *t, const int32_t *roots, int n, const ae_limits *lim,
                         ae_egraph_stats *st) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ae_egraph *eg = base_calloc(1, sizeof *eg);
    int32_t *memo = base_alloc(sizeof *memo * (size_t)(t->n + 1));
    int it = 0, saturated = 0;
    int64_t n_reach = 0;
    if (!eg || !memo || n > AE_MAX_ROOTS) goto fail;
    eg->lim.max_nodes = lim && lim->max_nodes ? lim->max_nodes : 200000;
    eg->lim.max_iters = lim && lim->max_iters ? lim->max_iters : 40;
    eg->lim.max_sum = lim ? lim->max_sum : 0;
    eg->lim.stopped = lim ? lim->stopped : NULL, eg->lim.stop_arg = lim ? lim->stop_arg : NULL;
    if (!eg->lim.max_sum) eg->lim.max_sum = default_max_sum(t, roots, n, memo);
    memset(memo, 0xff, sizeof *memo * (size_t)(t->n + 1));
    eg->n_roots = n;
    for (int i = 0; i < n; i++) {
        int32_t c = eg_insert_term(eg, t, roots[i], memo);
        if (c < 0) goto fail;
        eg->roots[i] = c;
    }
    if (saturate(eg, &it, &saturated) || (n_reach = mark_reachable(eg)) < 0 || compute_up(eg))
        goto fail;
    freeze(eg);
    base_free(memo);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st) {
        count_live(eg, st);
        st->reachable = n_reach;
        st->iters = it, st->saturated = saturated, st->stopped = eg->stopped;
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
    base_free(eg->bloom);
    base_free(eg->parent_ops);
    base_free(eg->pair_sig);
    base_free(eg);
}

/* ---- queries ---- */

void ae_query_init(ae_query *q, const ae_egraph *eg, const ae_tab *t) {
    memset(q, 0, sizeof *q);
    q->eg = eg, q->t = t;
}
void ae_query_free(ae_query *q) {
    base_free(q->cls);
    base_free(q->min_memo);
    memset(q, 0, sizeof *q);
}

/* Room in q->cls for term id; -1 if out of memory. */
static int q_class_grow(ae_query *q, int32_t id) {
    int32_t cap = q->cap ? q->cap : 1024;
    while (cap <= id) cap *= 2;
    int32_t *n = base_realloc(q->cls, sizeof *n * (size_t)cap);
    if (!n) return -1;
    for (int32_t i = q->cap; i < cap; i++) n[i] = -2;
    q->cls = n, q->cap = cap;
    return 0;
}

/* The e-class of term id, or -1 if the e-graph has no node for it. */
static int32_t q_class(ae_query *q, int32_t id) {
    if (id >= q->cap && q_class_grow(q, id)) return -1;
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

void ae_class_note(ae_query *q, int32_t term, int32_t c) {
    if (term < 0 || (term < q->cap && q->cls[term] != -2)) return;
    if (term >= q->cap && q_class_grow(q, term)) return;
    q->cls[term] = c;
}

int32_t ae_probe(ae_query *q, ae_op op, int32_t ca, int32_t cb, int64_t k, int64_t k2) {
    if (op == AE_SUM && k == 1) return ca; /* as ae_make: x = sum(1, x) */
    if (ae_kinds[op].arity < 2) cb = -1;
    if (ae_kinds[op].arity < 1) ca = -1;
    if ((ae_kinds[op].arity >= 1 && ca < 0) || (ae_kinds[op].arity >= 2 && cb < 0)) return -1;
    const uint32_t *po = q->eg->parent_ops; /* op(ca, cb) exists only if both are operands of an op node */
    if (po && ((ca >= 0 && !(po[ca] >> op & 1)) || (cb >= 0 && !(po[cb] >> op & 1)))) return -1;
    eg_node n = {op, ca, cb, k, k2};
    eg_canon(q->eg, &n);
    uint64_t h = node_hash(&n);
    if (q->eg->bloom) {
        int64_t b = bloom_bit(q->eg, h);
        if (!(q->eg->bloom[b >> 6] >> (b & 63) & 1)) return -1;
    }
    int64_t j = eg_slot_h(q->eg, &n, h);
    return q->eg->slots[j] >= 0 ? eg_find(q->eg, q->eg->node_cls[q->eg->slots[j]]) : -1;
}

int ae_class_is_sub(const ae_query *q, int32_t c) { return c >= 0 && q->eg->reach[c]; }

int ae_pair_may(const ae_query *q, int kind, int32_t ca, int32_t cb) {
    const uint64_t *ps = q->eg->pair_sig;
    if (!ps || kind < 0 || ae_kinds[kind].arity != 2) return 1;
    return ca >= 0 && cb >= 0 && (ps[(size_t)ca * AE_OP_COUNT + (size_t)kind] >> (cb & 63) & 1);
}

uint32_t ae_class_parents(const ae_query *q, int32_t c) {
    if (!q->eg->parent_ops) return ~0u;
    return c >= 0 ? q->eg->parent_ops[c] : 0;
}

int ae_is_sub(ae_query *q, int32_t term) {
    int32_t c = q_class(q, term);
    return c >= 0 && q->eg->reach[c];
}

int ae_is_root(ae_query *q, int32_t term, int j) {
    int32_t c = q_class(q, term);
    return c >= 0 && j < q->eg->n_roots && c == q->eg->roots[j];
}

static int min_ops_of(ae_query *q, const int32_t *have, int n);

/* The answer depends only on the set of have's classes: asked once per set (q->min_memo). */
int ae_min_ops(ae_query *q, const int32_t *have, int n) {
    int32_t key[AE_MIN_KEY];
    int nk = 0;
    for (int i = 0; i < n && nk <= AE_MIN_KEY; i++) {
        int32_t c = q_class(q, have[i]);
        if (c < 0) continue;
        int j = 0; /* sorted, no repeats */
        while (j < nk && key[j] < c) j++;
        if (j < nk && key[j] == c) continue;
        if (nk == AE_MIN_KEY) {
            nk++; /* too many to key: no memo */
            break;
        }
        memmove(key + j + 1, key + j, sizeof *key * (size_t)(nk - j));
        key[j] = c, nk++;
    }
    if (nk > AE_MIN_KEY) return min_ops_of(q, have, n);
    for (int j = nk; j < AE_MIN_KEY; j++) key[j] = -2;
    uint64_t h = 1469598103934665603ull;
    for (int j = 0; j < AE_MIN_KEY; j++) h = (h ^ (uint32_t)key[j]) * 1099511628211ull;
    if (!q->min_memo) q->min_memo = base_calloc(AE_MIN_MEMO, sizeof *q->min_memo);
    if (!q->min_memo) return min_ops_of(q, have, n);
    struct ae_min_memo *m = &q->min_memo[h % AE_MIN_MEMO];
    if (m->used && !memcmp(m->key, key, sizeof key)) return m->ops;
    int ops = min_ops_of(q, have, n);
    if (ops == 0) return 0; /* out of memory (no bound): not kept */
    memcpy(m->key, key, sizeof key), m->ops = ops, m->used = 1;
    return ops;
}

static int min_ops_of(ae_query *q, const int32_t *have, int n) {
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
