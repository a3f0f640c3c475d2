/* aexpr: abstract expressions (Mirage §4.3, Table 1) and the subexpression test that prunes
 * the search (Table 2), docs/search.md.
 *
 * A term table hash-conses terms over uninterpreted functions: input variables, constants,
 * add, mul, div, exp, sqrt, silu, sum(k, x), concat(k1, k2, x, y) and rms(k, x), the FN()
 * entries of ops.def's ae column. add and mul (commutative in ops.def) keep their operands in
 * a canonical order and sum(1, x) is x, so those A_eq axioms hold by construction.
 * The program's expression is saturated once under the rest of A_eq in an e-graph (node and
 * iteration bounds, deterministic); a prefix expression E is then a subexpression of some
 * expression A_eq-equal to the program's iff E's e-class exists and is reachable from the
 * program's class (A_sub: every operand is a subexpression; reflexive, transitive). Each
 * answer is one hash lookup per new term. The e-graph is read-only after construction, so
 * search threads share it; each thread owns its term table and query cache.
 */
#ifndef MG_AEXPR_H
#define MG_AEXPR_H

#include "../ir/ir.h"

enum { AE_MAX_ROOTS = 16 };

/* ops.def's ae column, read by the preprocessor. Around an include of ops.def, FN, AS, ID and
 * NONE are defined to rewrite each row's entry into a triple (kind, name, defines) (below, and
 * again in aexpr.c; they exist only there, like ir.c's K, B and T); AE_ROW then calls
 * AE_DEF_1(kind, name, arity, comm) for a row that defines a kind (FN) and AE_DEF_0 for the
 * others, which each reader defines. */
#define AE_ROW(ar, co, ...) AE_ROW_(ar, co, __VA_ARGS__)
#define AE_ROW_(ar, co, kind, name, def) AE_DEF_##def(kind, name, ar, co)

/* The kinds of term: one per FN() of ops.def's ae column, numbered in row order, so the
 * input's VAR and the constant's CONST come first, then ADD, MUL, DIV, EXP, SQRT, SILU, SUM,
 * CONCAT and RMS (rmsnorm's). */
#define FN(kind, name) kind, name, 1
#define AS(kind) kind, NULL, 0
#define ID ID_, NULL, 0
#define NONE NONE_, NULL, 0
#define AE_DEF_0(kind, name, ar, co)
#define AE_DEF_1(kind, name, ar, co) AE_##kind,
typedef enum ae_op {
#define OP(e, nm, ar, lv, lx, ne, kd, at, co, cs, cf, dg, tm, sr, ae) AE_ROW(ar, co, ae)
#include "../ir/ops.def"
#undef OP
    AE_OP_COUNT
} ae_op;
#undef AE_DEF_0
#undef AE_DEF_1
#undef FN
#undef AS
#undef ID
#undef NONE

/* Each kind's s-expression name ("add"), arity and commutativity: those of the ops.def row
 * that defines it (aexpr.c). */
typedef struct ae_kind_info {
    const char *name;
    int arity, commutative;
} ae_kind_info;
extern const ae_kind_info ae_kinds[AE_OP_COUNT];

/* The hash of a term's key (op, operands, sizes), shared by the term table and the e-graph's
 * hash-consing of e-nodes (operands are then e-classes). */
static inline uint64_t ae_mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}
static inline uint64_t ae_key_hash(int32_t op, int32_t a, int32_t b, int64_t k, int64_t k2) {
    uint64_t h = ae_mix(1469598103934665603ull, (uint64_t)op);
    h = ae_mix(ae_mix(ae_mix(ae_mix(h, (uint64_t)a), (uint64_t)b), (uint64_t)k), (uint64_t)k2);
    return h ^ (h >> 29);
}

/* A term. VAR: k = input index. CONST: k/k2 = the value as a reduced fraction.
 * SUM: k = elements summed (>= 2). CONCAT: k, k2 = widths of a and b. RMS: k = elements
 * normalised over; rms(k, x) = div(x, sqrt(div(sum(k, mul(x, x)), k))), the search's compound
 * block operator rmsnorm (docs/search.md). a, b = operand ids. */
typedef struct ae_term {
    int32_t op, a, b;
    int64_t k, k2;
} ae_term;

/* A hash-consing term table. Invariant: terms[i] only refers to ids < i; no two equal. */
typedef struct ae_tab {
    ae_term *terms;
    int32_t n, cap;
    int32_t *slots; /* open addressing, -1 empty */
    int32_t n_slots;
    const char **var_names; /* var id -> name (owned copies), for printing and parsing */
    int32_t n_vars, cap_vars;
    int oom;
} ae_tab;

void ae_tab_init(ae_tab *t);
void ae_tab_free(ae_tab *t);
/* Returns the id of op(a, b) with k, k2, applying the canonical forms above; -1 if out of
 * memory (t->oom set). Operands that the op does not take are -1. */
int32_t ae_make(ae_tab *t, ae_op op, int32_t a, int32_t b, int64_t k, int64_t k2);
/* The variable called name (created on first use), for the s-expression reader. */
int32_t ae_var(ae_tab *t, const char *name);

/* Parses one s-expression (docs/search.md: NAME, NUMBER, (add e e), (sum K e),
 * (concat K1 K2 e e), ...). Returns the term id, or -1 with *err_col set to the 0-based
 * column of the problem and ctx holding a message. */
int32_t ae_parse(ae_tab *t, mg_ctx *ctx, const char *text, size_t *pos, int *err_col);
/* Appends term id as an s-expression. */
void ae_print(const ae_tab *t, int32_t id, strbuf *sb);

/* Table 1 for one operator node n of graph g (a block graph for accum), its operands'
 * terms a and b (-1 where it has fewer): the term, -1 if out of memory, -2 if the operator
 * has no abstract expression here (not Lax; inputs, constants, iterators and kernels are the
 * callers' business). The rule is ops.def's ae column; n may be the compound rmsnorm, which
 * gives rms(n, a) for the size n of its dim. n need not be in g yet; its operands must be. */
int32_t ae_op_term(ae_tab *t, const ir_graph *g, const ir_node *n, int32_t a, int32_t b);
/* Abstract expressions of every node of kernel graph g (Table 1, graph-defined kernels
 * inlined): out[i] = term of node i, or -1 for a node that has none (non-Lax). Variables
 * are g's inputs by position (names from g). MG_OK, MG_ERR_UNSUPPORTED naming a non-Lax
 * node, or MG_ERR_NOMEM. */
mg_status ae_of_graph(ae_tab *t, mg_ctx *ctx, const ir_graph *g, int32_t *out);
/* The terms of a block graph's nodes given the terms of its kernel inputs (kin[k]). */
mg_status ae_of_block(ae_tab *t, mg_ctx *ctx, const ir_graph *b, const int32_t *kin,
                      int32_t *out);

/* ---- the e-graph (egraph.c) ---- */
typedef struct ae_limits {
    int64_t max_nodes; /* stop saturating past this many e-nodes (default 200000) */
    int max_iters;     /* at most this many rounds of rule application (default 40) */
    int64_t max_sum;   /* no sum(k, x) with k above this (0: from the roots, see .c) */
    /* polled while saturating (about every thousand nodes and every rebuild pass): when it
     * returns 1 the e-graph stops growing and is finished as it is (stats.stopped); NULL:
     * never stops early */
    int (*stopped)(void *arg);
    void *stop_arg;
} ae_limits;
typedef struct ae_egraph ae_egraph;
typedef struct ae_egraph_stats {
    int64_t nodes, classes, reachable;
    int iters, saturated; /* saturated = a round added nothing (complete under A_eq) */
    int stopped;          /* ae_limits.stopped asked it to stop: incomplete, usable */
    double seconds;
} ae_egraph_stats;

/* Builds the e-graph of terms roots[0..n) of t and saturates it under A_eq (with the
 * concat rule, docs/search.md). NULL if out of memory. lim may be NULL (defaults). */
ae_egraph *ae_egraph_new(const ae_tab *t, const int32_t *roots, int n, const ae_limits *lim,
                         ae_egraph_stats *st);
void ae_egraph_free(ae_egraph *eg);

/* A per-thread query handle: memoises the e-class of every term of one table, and
 * ae_min_ops's answers by the set of classes asked (a direct-mapped table: a slot holds its
 * classes, sorted, -2 past the last; a whole pass over the e-graph per call was 4% of nTrans). */
enum { AE_MIN_MEMO = 256, AE_MIN_KEY = 8 };
typedef struct ae_query {
    const ae_egraph *eg;
    const ae_tab *t;
    int32_t *cls; /* term id -> class, -1 absent, -2 not yet computed */
    int32_t cap;
    int64_t hits, lookups;
    struct ae_min_memo {
        int32_t key[AE_MIN_KEY];
        int32_t ops;
        int used;
    } *min_memo; /* AE_MIN_MEMO slots, allocated on first use */
} ae_query;
void ae_query_init(ae_query *q, const ae_egraph *eg, const ae_tab *t);
void ae_query_free(ae_query *q);
/* The e-class of term (equal classes: A_eq-equal terms), or -1 if the e-graph has none. */
int32_t ae_class(ae_query *q, int32_t term);
/* 1 if A_eq ∪ A_sub ⊨ subexpr(term, some root), else 0 (also when out of memory). */
int ae_is_sub(ae_query *q, int32_t term);
/* The e-class that ae_make(op, a, b, k, k2) would get, from its operands' classes ca, cb
 * (ae_class), without adding the term to any table: -1 if the e-graph has none. The search
 * asks this before building a term, as most terms it tries are not subexpressions. */
int32_t ae_probe(ae_query *q, ae_op op, int32_t ca, int32_t cb, int64_t k, int64_t k2);
/* ae_is_sub for a class (ae_probe's). */
int ae_class_is_sub(const ae_query *q, int32_t c);
/* The kind of the node that IR operator op builds over its operands' terms (a matmul: mul),
 * or -1 where its term is an operand's own or none (accum, save, layout). */
int ae_op_root(int op);
/* The kinds (bit kind) of the nodes that have class c as an operand: with no bit for a
 * kind, no operator of that kind over a term of class c is a subexpression. Every bit where
 * the e-graph keeps no masks (stopped, or out of memory), none for c < 0. */
uint32_t ae_class_parents(const ae_query *q, int32_t c);
/* 0 if no node of kind `kind` has classes ca and cb as its two operands (in either order),
 * so that operator over them is no subexpression; 1 if one may (a 64-bit signature of each
 * class's partners per kind: false positives, no false negatives; 1 with no filters). */
int ae_pair_may(const ae_query *q, int kind, int32_t ca, int32_t cb);
/* The e-class of ae_op_term's term (its operands' terms a, b) by ae_probe, building no term:
 * -1 if none, -2 where ae_op_term gives -2 (no abstract expression here). */
int32_t ae_op_class(ae_query *q, const ir_graph *g, const ir_node *n, int32_t a, int32_t b);
/* ae_op_class from the operands' classes ca, cb (ae_class of a, b: -1 none) instead of their
 * terms. */
int32_t ae_op_class_of(ae_query *q, const ir_graph *g, const ir_node *n, int32_t ca, int32_t cb);
/* Records that term's class is c (ae_op_class's answer for the operator that built it), so
 * that ae_class does not look it up again; c must be what ae_class would give. */
void ae_class_note(ae_query *q, int32_t term, int32_t c);
/* 1 if A_eq ⊨ term = roots[j] (within the saturation bounds). */
int ae_is_root(ae_query *q, int32_t term, int j);
/* A lower bound on the operators (sums not counted) that build some root from the terms
 * have[0..n) and constants; INT32_MAX if no root can be built from them at all. 0 if out
 * of memory (no bound). */
int ae_min_ops(ae_query *q, const int32_t *have, int n);
/* A lower bound on the operators (sums not counted) between term and a root in any
 * expression A_eq-equal to a root that has term as a subexpression: a tensor that must
 * still be used by the outputs needs that many more operators. INT32_MAX / 2 if term has
 * no e-class. */
int ae_up(ae_query *q, int32_t term);

#endif
