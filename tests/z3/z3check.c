/* z3check: an independent decision procedure for Mirage's abstract-expression queries
 * (Mirage §4.3, Table 2), built on the Z3 C API. Tests use it to cross-check the e-graph in
 * src/search/aexpr.c; it shares no code with src/ (its own parser, its own encoding).
 *
 *   z3check [-t MS] [-m MB] [-p 0|1|2] [-v] [-d] [FILE]    (FILE absent or "-": stdin)
 *
 * Input, one query a line:  sub<TAB>E1<TAB>E2   (A_eq u A_sub |= subexpr(E1, E2) ?)
 *                           eq<TAB>E1<TAB>E2    (A_eq |= E1 = E2 ?)
 * optionally followed by <TAB>yes|no (an expected answer, ignored here) and <TAB># comment.
 * Lines starting with '#' and blank lines are skipped. Output, one line a query: yes, no or
 * unknown (with -v: then a TAB, the milliseconds, a TAB and how it was decided); a malformed
 * line prints "error" on stdout and a file:line:col message with a caret on stderr, and the
 * exit status becomes 2 (other lines are still answered). Exit 0 otherwise, 1 on a usage or
 * system error.
 *
 * How an answer is reached (README.md in this folder has the long form):
 *   yes: phase 1 ("prove") asserts the axioms as quantified formulas with E-matching triggers
 *        plus the negated goal; Z3 answering unsat proves entailment.
 *   no:  phase 2 ("refute") searches for a finite countermodel: the axioms instantiated over a
 *        domain of n = 2..6 elements, with sizes abstracted by a finite quotient of the positive
 *        integers. Z3 answering sat gives a model; this program re-checks every axiom in that
 *        model in plain C before it answers no. Every such model extends to a model of the
 *        real axioms (Int sizes) in which the goal fails, so "no" is a proof of non-entailment.
 * The phases run in parallel child processes (fork), so a phase stuck inside Z3 (E-matching
 * does not always honour Z3's own timeout or interrupt) is simply killed at the deadline; see
 * answer(). Needs POSIX (fork, pipe, poll) besides C11; build: cc -O2 -std=c11 z3check.c -lz3.
 * One file, past the house's ~1,500 lines, on purpose: it is a standalone tool built by one
 * cc command, and its sections (terms, parser, phase 1, phase 2, driver) read in order.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <z3.h>

#define MAX_DEPTH 1000                  /* deepest accepted nesting of parentheses */
#define MAX_LINE (16u << 20)            /* longest accepted input line, bytes */
#define MAX_SIZE 1000000000000000000ull /* largest accepted size literal */

/* ---------------------------------------------------------------------------------------------
 * Terms. One query's expressions live in a pool of nodes addressed by index; children come
 * before parents. Leaf names point into the input line, which outlives the query.
 */
enum op {
    OP_VAR,
    OP_NUM,
    OP_ADD,
    OP_MUL,
    OP_DIV,
    OP_EXP,
    OP_SQRT,
    OP_SILU,
    OP_SUM,
    OP_CONCAT,
    OP_RMS
};

typedef struct node {
    enum op op;
    int a, b;         /* children (-1 when absent) */
    uint64_t k1, k2;  /* sum, rms: k1 = K; concat: k1 = K1, k2 = K2 */
    const char *name; /* VAR, NUM: the text (not NUL-terminated) */
    int len;
} node;

typedef struct pool {
    node *v;
    int n, cap;
} pool;

enum kind { Q_SUB, Q_EQ };

typedef struct query {
    enum kind kind;
    pool p;
    int e1, e2; /* roots in p */
} query;

static const struct {
    const char *name;
    enum op op;
    int n_sizes, n_args;
} OPS[] = {
    {"add", OP_ADD, 0, 2}, {"mul", OP_MUL, 0, 2},       {"div", OP_DIV, 0, 2},
    {"exp", OP_EXP, 0, 1}, {"sqrt", OP_SQRT, 0, 1},     {"silu", OP_SILU, 0, 1},
    {"sum", OP_SUM, 1, 1}, {"concat", OP_CONCAT, 2, 2}, {"rms", OP_RMS, 1, 1},
};
#define N_OPS ((int)(sizeof OPS / sizeof OPS[0]))

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "z3check: out of memory\n");
        exit(1);
    }
    return q;
}

static int pool_add(pool *p, node nd) {
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->v = xrealloc(p->v, (size_t)p->cap * sizeof *p->v);
    }
    p->v[p->n] = nd;
    return p->n++;
}

/* ---------------------------------------------------------------------------------------------
 * Parser: one field of a line into the pool. On error it records the message and the byte
 * offset in the line; the caller prints file:line:col and a caret.
 */
typedef struct parser {
    const char *s;   /* the whole line */
    size_t pos, end; /* the field being parsed is s[pos, end) */
    pool *p;
    int depth;
    const char *err;
    size_t err_at;
} parser;

static int fail(parser *ps, size_t at, const char *msg) {
    if (!ps->err) {
        ps->err = msg;
        ps->err_at = at;
    }
    return -1;
}

static void skip_ws(parser *ps) {
    while (ps->pos < ps->end && ps->s[ps->pos] == ' ')
        ps->pos++;
}

static int is_atom_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '+' || c == '-';
}
static int is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* Scans an atom at ps->pos; returns its length (0 if the next character cannot start one). */
static size_t atom_len(const parser *ps) {
    size_t i = ps->pos;
    while (i < ps->end && is_atom_char(ps->s[i]))
        i++;
    return i - ps->pos;
}

static int is_name(const char *t, size_t n) {
    if (!n || is_digit(t[0]) || t[0] == '.' || t[0] == '+' || t[0] == '-') return 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] == '.' || t[i] == '+' || t[i] == '-') return 0;
    return 1;
}

/* Decimal number text: [+-]? (D+ (. D*)? | . D+) ([eE] [+-]? D+)? */
static int is_number(const char *t, size_t n) {
    size_t i = 0, d = 0;
    if (i < n && (t[i] == '+' || t[i] == '-')) i++;
    while (i < n && is_digit(t[i]))
        i++, d++;
    if (i < n && t[i] == '.') {
        i++;
        while (i < n && is_digit(t[i]))
            i++, d++;
    }
    if (!d) return 0;
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < n && (t[i] == '+' || t[i] == '-')) i++;
        if (i >= n || !is_digit(t[i])) return 0;
        while (i < n && is_digit(t[i]))
            i++;
    }
    return i == n;
}

static int find_op(const char *t, size_t n) {
    for (int i = 0; i < N_OPS; i++)
        if (strlen(OPS[i].name) == n && !memcmp(OPS[i].name, t, n)) return i;
    return -1;
}

/* A size: a positive decimal integer literal. */
static int parse_size(parser *ps, uint64_t *out) {
    skip_ws(ps);
    size_t at = ps->pos, n = atom_len(ps);
    if (!n) return fail(ps, at, "expected a size (a positive integer)");
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = ps->s[at + i];
        if (!is_digit(c)) return fail(ps, at, "expected a size (a positive integer)");
        if (v > (MAX_SIZE - (uint64_t)(c - '0')) / 10) return fail(ps, at, "size too large");
        v = 10 * v + (uint64_t)(c - '0');
    }
    if (v == 0) return fail(ps, at, "a size must be positive");
    ps->pos += n;
    *out = v;
    return 0;
}

static int parse_expr(parser *ps);

static int parse_app(parser *ps) {
    size_t open = ps->pos++;
    if (++ps->depth > MAX_DEPTH) return fail(ps, open, "nesting too deep");
    skip_ws(ps);
    size_t at = ps->pos, n = atom_len(ps);
    int k = n ? find_op(ps->s + at, n) : -1;
    if (k < 0) {
        if (at >= ps->end || ps->s[at] == ')') return fail(ps, at, "expected an operator name");
        return fail(ps, at, n ? "unknown operator" : "expected an operator name");
    }
    ps->pos += n;
    node nd = {OPS[k].op, -1, -1, 0, 0, NULL, 0};
    if (OPS[k].n_sizes >= 1 && parse_size(ps, &nd.k1)) return -1;
    if (OPS[k].n_sizes >= 2 && parse_size(ps, &nd.k2)) return -1;
    for (int i = 0; i < OPS[k].n_args; i++) {
        skip_ws(ps);
        if (ps->pos >= ps->end || ps->s[ps->pos] == ')')
            return fail(ps, ps->pos, "too few arguments for this operator");
        int c = parse_expr(ps);
        if (c < 0) return -1;
        if (i == 0)
            nd.a = c;
        else
            nd.b = c;
    }
    skip_ws(ps);
    if (ps->pos >= ps->end) return fail(ps, open, "unbalanced '(': no matching ')'");
    if (ps->s[ps->pos] != ')') return fail(ps, ps->pos, "too many arguments for this operator");
    ps->pos++;
    ps->depth--;
    return pool_add(ps->p, nd);
}

static int parse_expr(parser *ps) {
    skip_ws(ps);
    if (ps->pos >= ps->end) return fail(ps, ps->pos, "expected an expression");
    char c = ps->s[ps->pos];
    if (c == '(') return parse_app(ps);
    if (c == ')') return fail(ps, ps->pos, "unexpected ')'");
    size_t at = ps->pos, n = atom_len(ps);
    if (!n) return fail(ps, at, "unexpected character");
    const char *t = ps->s + at;
    node nd = {OP_VAR, -1, -1, 0, 0, t, (int)n};
    if (is_number(t, n))
        nd.op = OP_NUM;
    else if (!is_name(t, n))
        return fail(ps, at, "not a name or a number");
    else if (find_op(t, n) >= 0)
        return fail(ps, at, "an operator name cannot be a variable");
    ps->pos += n;
    return pool_add(ps->p, nd);
}

/* Parses the whole field s[beg, end) as one expression. Returns its root or -1. */
static int parse_field(parser *ps, size_t beg, size_t end) {
    ps->pos = beg;
    ps->end = end;
    ps->depth = 0;
    int r = parse_expr(ps);
    if (r < 0) return -1;
    skip_ws(ps);
    if (ps->pos < ps->end) return fail(ps, ps->pos, "text after the expression");
    return r;
}

static int field_is(const char *s, size_t beg, size_t end, const char *w) {
    while (beg < end && s[beg] == ' ')
        beg++;
    while (end > beg && s[end - 1] == ' ')
        end--;
    return end - beg == strlen(w) && !memcmp(s + beg, w, end - beg);
}

static int field_is_comment(const char *s, size_t beg, size_t end) {
    while (beg < end && s[beg] == ' ')
        beg++;
    return beg < end && s[beg] == '#';
}

/* Offset of the next TAB at or after i, or len. */
static size_t next_tab(const char *s, size_t i, size_t len) {
    while (i < len && s[i] != '\t')
        i++;
    return i;
}

/* Parses one line (without its newline) into q: KIND TAB E1 TAB E2, then optionally TAB and
 * yes|no, then optionally TAB and a '#' comment (a comment may also come right after E2, and
 * runs to the end of the line). Returns 0, or -1 with ps->err set. */
static int parse_line(parser *ps, const char *s, size_t len, query *q) {
    ps->s = s;
    ps->err = NULL;
    ps->p = &q->p;
    size_t t1 = next_tab(s, 0, len), t2 = t1 < len ? next_tab(s, t1 + 1, len) : len;
    size_t t3 = t2 < len ? next_tab(s, t2 + 1, len) : len;
    if (t1 >= len) return fail(ps, len, "expected KIND<TAB>E1<TAB>E2");
    if (field_is(s, 0, t1, "sub"))
        q->kind = Q_SUB;
    else if (field_is(s, 0, t1, "eq"))
        q->kind = Q_EQ;
    else
        return fail(ps, 0, "expected 'sub' or 'eq'");
    if ((q->e1 = parse_field(ps, t1 + 1, t2)) < 0) return -1;
    if (t2 >= len) return fail(ps, len, "expected KIND<TAB>E1<TAB>E2");
    if ((q->e2 = parse_field(ps, t2 + 1, t3)) < 0) return -1;
    if (t3 >= len || field_is_comment(s, t3 + 1, len)) return 0;
    size_t t4 = next_tab(s, t3 + 1, len);
    if (!field_is(s, t3 + 1, t4, "yes") && !field_is(s, t3 + 1, t4, "no"))
        return fail(ps, t3 + 1, "expected 'yes', 'no' or a '#' comment");
    if (t4 < len && !field_is_comment(s, t4 + 1, len))
        return fail(ps, t4 + 1, "expected a '#' comment (or nothing) after the answer");
    return 0;
}

static int debug; /* -d: per-phase progress on stderr */

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------------------------------------
 * Z3 plumbing shared by both phases.
 */
static void z3_error(Z3_context c, Z3_error_code e) {
    /* Runs in a child process: report and leave; the parent reads "unknown". */
    fprintf(stderr, "z3check: Z3 error: %s\n", Z3_get_error_msg(c, e));
    _exit(3);
}

static Z3_context new_context(void) {
    Z3_config cfg = Z3_mk_config();
    Z3_set_param_value(cfg, "model", "true");
    Z3_context c = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    Z3_set_error_handler(c, z3_error);
    return c;
}

static Z3_solver new_solver(Z3_context c, unsigned timeout_ms, int mbqi) {
    Z3_solver s = Z3_mk_simple_solver(c);
    Z3_solver_inc_ref(c, s);
    Z3_params p = Z3_mk_params(c);
    Z3_params_inc_ref(c, p);
    if (timeout_ms) Z3_params_set_uint(c, p, Z3_mk_string_symbol(c, "timeout"), timeout_ms);
    if (mbqi >= 0) Z3_params_set_bool(c, p, Z3_mk_string_symbol(c, "mbqi"), mbqi != 0);
    Z3_solver_set_params(c, s, p);
    Z3_params_dec_ref(c, p);
    return s;
}

static Z3_ast app1(Z3_context c, Z3_func_decl f, Z3_ast a) {
    return Z3_mk_app(c, f, 1, &a);
}
static Z3_ast app2(Z3_context c, Z3_func_decl f, Z3_ast a, Z3_ast b) {
    Z3_ast v[2] = {a, b};
    return Z3_mk_app(c, f, 2, v);
}

/* The Z3 constant for a leaf: "v:NAME" for a variable, "n:TEXT" for a number (distinct text,
 * distinct uninterpreted constant, as the term syntax says). */
static Z3_ast leaf_const(Z3_context c, Z3_sort e, const node *nd) {
    char buf[256], *name = buf;
    size_t need = (size_t)nd->len + 3;
    if (need > sizeof buf) name = xrealloc(NULL, need);
    name[0] = nd->op == OP_VAR ? 'v' : 'n';
    name[1] = ':';
    memcpy(name + 2, nd->name, (size_t)nd->len);
    name[nd->len + 2] = 0;
    Z3_ast k = Z3_mk_const(c, Z3_mk_string_symbol(c, name), e);
    if (name != buf) free(name);
    return k;
}

static Z3_ast size_numeral(Z3_context c, Z3_sort i, uint64_t k) {
    return Z3_mk_unsigned_int64(c, k, i);
}

/* The NUMBER constant whose text is the decimal literal of size k ("n:4096" for 4096, the
 * constant that the leaf 4096 also names), for the denominator of our rms axiom. */
static Z3_ast size_const(Z3_context c, Z3_sort e, uint64_t k) {
    char name[32];
    snprintf(name, sizeof name, "n:%llu", (unsigned long long)k);
    return Z3_mk_const(c, Z3_mk_string_symbol(c, name), e);
}

/* ---------------------------------------------------------------------------------------------
 * Phase 1, "prove": the axioms as quantified formulas, sizes as Z3 Ints (Mirage §4.3, Table 2).
 *
 * Z3 answers unsat only if the asserted formulas have no model. Every formula asserted here
 * is an axiom or a consequence of the axioms (the split lemma, per-query instances, ground
 * instances of reflexivity), plus the negated goal; so unsat means the goal is entailed.
 * Consequences only help Z3 find proofs; leaving an axiom out (or asserting only some of its
 * instances) only makes it find fewer. Neither can make an unsat answer wrong.
 * Sizes: the Int-quantified variables are restricted to i >= 1 (sizes are positive); the
 * entailment checked is that of the axioms over positive sizes.
 *
 * Triggers: every equation is asserted with a pattern on each side that can carry one, so
 * E-matching rewrites in both directions and congruence closure does the rest. Sides that
 * cannot be patterns (a bare variable, or containing i*j or i+j) get none: x = sum(1,x) is
 * only used left to right, sum(i,sum(j,x)) = sum(i*j,x) only merges nested sums; splitting a
 * sum into nested sums, which many proofs need, is done by the split lemma instead, and
 * folding sums into a concat by per-query instances (assert_query_lemmas). Our rms axiom is
 * asserted there too, at the rms sizes of the query only (it cannot be one formula over the
 * size: its denominator is the constant named by the size's text).
 */
typedef struct sig {
    Z3_context c;
    Z3_sort e, i;
    Z3_func_decl add, mul, div, exp, sqrt, silu, sum, cat, rms, sub;
    unsigned eq_weight; /* Z3 quantifier weight of the A_eq equations (see prove()) */
} sig;

static Z3_ast t_sum(const sig *g, Z3_ast i, Z3_ast x) {
    return app2(g->c, g->sum, i, x);
}
static Z3_ast t_rms(const sig *g, Z3_ast i, Z3_ast x) {
    return app2(g->c, g->rms, i, x);
}
static Z3_ast t_cat(const sig *g, Z3_ast i, Z3_ast j, Z3_ast a, Z3_ast b) {
    Z3_ast v[4] = {i, j, a, b};
    return Z3_mk_app(g->c, g->cat, 4, v);
}

static void sig_init(sig *g, Z3_context c) {
    g->c = c;
    g->e = Z3_mk_uninterpreted_sort(c, Z3_mk_string_symbol(c, "Expr"));
    g->i = Z3_mk_int_sort(c);
    Z3_sort e = g->e, ee[2] = {e, e}, ie[2] = {g->i, e}, iiee[4] = {g->i, g->i, e, e};
#define DECL(f, n, dom, rng) Z3_mk_func_decl(c, Z3_mk_string_symbol(c, f), n, dom, rng)
    g->add = DECL("add", 2, ee, e);
    g->mul = DECL("mul", 2, ee, e);
    g->div = DECL("div", 2, ee, e);
    g->exp = DECL("exp", 1, &e, e);
    g->sqrt = DECL("sqrt", 1, &e, e);
    g->silu = DECL("silu", 1, &e, e);
    g->sum = DECL("sum", 2, ie, e);
    g->cat = DECL("concat", 4, iiee, e);
    g->rms = DECL("rms", 2, ie, e);
    g->sub = DECL("subexpr", 2, ee, Z3_mk_bool_sort(c));
#undef DECL
}

static Z3_ast var(const sig *g, const char *name, Z3_sort s) {
    return Z3_mk_const(g->c, Z3_mk_string_symbol(g->c, name), s);
}

static Z3_ast pos(const sig *g, Z3_ast i) {
    return Z3_mk_ge(g->c, i, Z3_mk_int(g->c, 1, g->i));
}

static Z3_ast and2(const sig *g, Z3_ast a, Z3_ast b) {
    Z3_ast v[2] = {a, b};
    return Z3_mk_and(g->c, 2, v);
}

/* Asserts forall vars. body, with up to 2 alternative patterns; pats[k] has pat_n[k] terms. */
static void forall_w(const sig *g, Z3_solver s, unsigned weight, unsigned n_vars,
                     const Z3_ast *vars, Z3_ast body, unsigned n_pats, const Z3_ast pats[][2],
                     const unsigned *pat_n) {
    Z3_app bound[8];
    Z3_pattern p[2];
    for (unsigned k = 0; k < n_vars; k++)
        bound[k] = Z3_to_app(g->c, vars[k]);
    for (unsigned k = 0; k < n_pats; k++)
        p[k] = Z3_mk_pattern(g->c, pat_n[k], pats[k]);
    Z3_solver_assert(g->c, s, Z3_mk_forall_const(g->c, weight, n_vars, bound, n_pats, p, body));
}
static void forall(const sig *g, Z3_solver s, unsigned n_vars, const Z3_ast *vars, Z3_ast body,
                   unsigned n_pats, const Z3_ast pats[][2], const unsigned *pat_n) {
    forall_w(g, s, 0, n_vars, vars, body, n_pats, pats, pat_n);
}

/* forall vars. guard -> lhs = rhs, triggered by lhs and/or rhs (NULL: that side is no trigger) */
static void axiom_eq(const sig *g, Z3_solver s, unsigned n_vars, const Z3_ast *vars, Z3_ast guard,
                     Z3_ast lhs, Z3_ast rhs, Z3_ast trig_l, Z3_ast trig_r) {
    Z3_ast pats[2][2];
    unsigned pat_n[2] = {1, 1}, n = 0;
    if (trig_l) pats[n++][0] = trig_l;
    if (trig_r) pats[n++][0] = trig_r;
    Z3_ast body = Z3_mk_eq(g->c, lhs, rhs);
    if (guard) body = Z3_mk_implies(g->c, guard, body);
    forall_w(g, s, g->eq_weight, n_vars, vars, body, n, (const Z3_ast(*)[2])pats, pat_n);
}

/* forall vars. body, one single-term pattern. */
static void axiom_1(const sig *g, Z3_solver s, unsigned n_vars, const Z3_ast *vars, Z3_ast body,
                    Z3_ast trig) {
    Z3_ast pats[1][2] = {{trig, NULL}};
    unsigned pat_n[1] = {1};
    forall(g, s, n_vars, vars, body, 1, (const Z3_ast(*)[2])pats, pat_n);
}

/* A_eq (Mirage §4.3, Table 2) plus our concat axiom, with Int sizes restricted to >= 1.
 * Our rms axiom is asserted per query (assert_query_lemmas). */
static void assert_a_eq(const sig *g, Z3_solver s) {
    Z3_context c = g->c;
    Z3_ast x = var(g, "x", g->e), y = var(g, "y", g->e), z = var(g, "z", g->e);
    Z3_ast a = var(g, "a", g->e), b = var(g, "b", g->e), d = var(g, "d", g->e);
    Z3_ast cc = var(g, "c", g->e);
    Z3_ast i = var(g, "i", g->i), j = var(g, "j", g->i);
    Z3_ast xy[2] = {x, y}, xyz[3] = {x, y, z}, xi[2] = {x, i}, xyi[3] = {x, y, i};
    Z3_ast xij[3] = {x, i, j};
    Z3_ast t, u;
    /* add(x,y) = add(y,x); mul(x,y) = mul(y,x) */
    t = app2(c, g->add, x, y);
    axiom_eq(g, s, 2, xy, NULL, t, app2(c, g->add, y, x), t, NULL);
    t = app2(c, g->mul, x, y);
    axiom_eq(g, s, 2, xy, NULL, t, app2(c, g->mul, y, x), t, NULL);
    /* add(x,add(y,z)) = add(add(x,y),z); the same for mul */
    t = app2(c, g->add, x, app2(c, g->add, y, z));
    u = app2(c, g->add, app2(c, g->add, x, y), z);
    axiom_eq(g, s, 3, xyz, NULL, t, u, t, u);
    t = app2(c, g->mul, x, app2(c, g->mul, y, z));
    u = app2(c, g->mul, app2(c, g->mul, x, y), z);
    axiom_eq(g, s, 3, xyz, NULL, t, u, t, u);
    /* add(mul(x,z),mul(y,z)) = mul(add(x,y),z) */
    t = app2(c, g->add, app2(c, g->mul, x, z), app2(c, g->mul, y, z));
    u = app2(c, g->mul, app2(c, g->add, x, y), z);
    axiom_eq(g, s, 3, xyz, NULL, t, u, t, u);
    /* add(div(x,z),div(y,z)) = div(add(x,y),z) */
    t = app2(c, g->add, app2(c, g->div, x, z), app2(c, g->div, y, z));
    u = app2(c, g->div, app2(c, g->add, x, y), z);
    axiom_eq(g, s, 3, xyz, NULL, t, u, t, u);
    /* mul(x,div(y,z)) = div(mul(x,y),z) */
    t = app2(c, g->mul, x, app2(c, g->div, y, z));
    u = app2(c, g->div, app2(c, g->mul, x, y), z);
    axiom_eq(g, s, 3, xyz, NULL, t, u, t, u);
    /* div(div(x,y),z) = div(x,mul(y,z)) */
    t = app2(c, g->div, app2(c, g->div, x, y), z);
    u = app2(c, g->div, x, app2(c, g->mul, y, z));
    axiom_eq(g, s, 3, xyz, NULL, t, u, t, u);
    /* x = sum(1,x): trigger on sum(i,x) with the guard i = 1 (x alone cannot be a trigger) */
    t = t_sum(g, i, x);
    axiom_eq(g, s, 2, xi, Z3_mk_eq(c, i, Z3_mk_int(c, 1, g->i)), t, x, t, NULL);
    /* sum(i,sum(j,x)) = sum(i*j,x) */
    Z3_ast ij[2] = {i, j};
    t = t_sum(g, i, t_sum(g, j, x));
    axiom_eq(g, s, 3, xij, and2(g, pos(g, i), pos(g, j)), t, t_sum(g, Z3_mk_mul(c, 2, ij), x), t,
             NULL);
    /* sum(i,add(x,y)) = add(sum(i,x),sum(i,y)) */
    t = t_sum(g, i, app2(c, g->add, x, y));
    u = app2(c, g->add, t_sum(g, i, x), t_sum(g, i, y));
    axiom_eq(g, s, 3, xyi, pos(g, i), t, u, t, u);
    /* sum(i,mul(x,y)) = mul(sum(i,x),y) */
    t = t_sum(g, i, app2(c, g->mul, x, y));
    u = app2(c, g->mul, t_sum(g, i, x), y);
    axiom_eq(g, s, 3, xyi, pos(g, i), t, u, t, u);
    /* sum(i,div(x,y)) = div(sum(i,x),y) */
    t = t_sum(g, i, app2(c, g->div, x, y));
    u = app2(c, g->div, t_sum(g, i, x), y);
    axiom_eq(g, s, 3, xyi, pos(g, i), t, u, t, u);
    /* mul(exp(x),exp(y)) = exp(add(x,y)); mul(sqrt(x),sqrt(y)) = sqrt(mul(x,y)) */
    t = app2(c, g->mul, app1(c, g->exp, x), app1(c, g->exp, y));
    u = app1(c, g->exp, app2(c, g->add, x, y));
    axiom_eq(g, s, 2, xy, NULL, t, u, t, u);
    t = app2(c, g->mul, app1(c, g->sqrt, x), app1(c, g->sqrt, y));
    u = app1(c, g->sqrt, app2(c, g->mul, x, y));
    axiom_eq(g, s, 2, xy, NULL, t, u, t, u);
    /* Ours, not the paper's (concat is not in Mirage's Table 2):
     * sum(i+j, mul(concat(i,j,a,b), concat(i,j,c,d))) = add(sum(i,mul(a,c)), sum(j,mul(b,d)))
     * The left side holds i+j, so its trigger is the mul(concat, concat) inside it. The general
     * axiom is triggered only left to right (eliminating concat); the right-to-left direction,
     * which would build a concat out of every sum of two sums, is asserted per query for the
     * concat widths that occur in it (assert_query_lemmas). */
    Z3_ast ijabcd[6] = {i, j, a, b, cc, d};
    Z3_ast mcc = app2(c, g->mul, t_cat(g, i, j, a, b), t_cat(g, i, j, cc, d));
    t = t_sum(g, Z3_mk_add(c, 2, ij), mcc);
    u = app2(c, g->add, t_sum(g, i, app2(c, g->mul, a, cc)), t_sum(g, j, app2(c, g->mul, b, d)));
    axiom_eq(g, s, 6, ijabcd, and2(g, pos(g, i), pos(g, j)), t, u, mcc, NULL);
}

/* sum(k, x) with the identity x = sum(1, x) applied when k = 1 */
static Z3_ast t_sum_k(const sig *g, uint64_t k, Z3_ast x) {
    return k == 1 ? x : t_sum(g, size_numeral(g->c, g->i, k), x);
}

/* Collects the distinct size literals (sum and rms sizes, concat widths) of a query; with
 * rms_only, only the sizes of its rms terms. */
static int query_sizes(const query *q, int rms_only, uint64_t *out, int max) {
    int n = 0;
    for (int k = 0; k < q->p.n; k++) {
        const node *nd = &q->p.v[k];
        uint64_t v[2] = {nd->k1, nd->k2};
        int n_v = nd->op == OP_RMS      ? 1
                  : rms_only            ? 0
                  : nd->op == OP_CONCAT ? 2
                  : nd->op == OP_SUM    ? 1
                                        : 0;
        for (int t = 0; t < n_v; t++) {
            int seen = 0;
            for (int u = 0; u < n; u++)
                seen |= out[u] == v[t];
            if (!seen && n < max) out[n++] = v[t];
        }
    }
    return n;
}

/* Consequences of the axioms, instantiated at the sizes of this query so that they trigger
 * only where they can matter (instances of an axiom never change what is entailed):
 *  - split lemma, from sum(i,sum(j,x)) = sum(i*j,x): for a size literal K of the query and
 *    any sum(k,x) with K | k, sum(k,x) = sum(k/K, sum(K,x)) = sum(K, sum(k/K,x)). It splits
 *    E2's sums by E1's sizes (E1's sum 64 splits E2's sum 4096 into 64 x 64) and vice versa;
 *  - our concat axiom at i = K1, j = K2 for each concat(K1,K2,..) of the query, triggered by
 *    both sides (a side sum(1,t) written as t, by x = sum(1,x)), so that a sum of two sums
 *    can be folded into a concat of those widths;
 *  - our rms axiom, rms(k,x) = div(x, sqrt(div(sum(k, mul(x,x)), k))) with the last k the
 *    NUMBER constant whose text is k's decimal literal, at each size K of an rms term of the
 *    query, triggered by both sides. That is as strong as the axiom for every size: no other
 *    axiom mentions rms, so none creates an rms term, and in a model of everything else where
 *    the goal fails, redefining rms(k,x) as its right side for every other k satisfies the
 *    axiom at all sizes (and subexpr(x, rms(k,x)), as subexpr(x, div(x,y)) holds) without
 *    changing the value of any term of the query. */
static void assert_query_lemmas(const sig *g, Z3_solver s, const query *q) {
    Z3_context c = g->c;
    Z3_ast x = var(g, "x", g->e), k = var(g, "k", g->i);
    Z3_ast a = var(g, "a", g->e), b = var(g, "b", g->e), cc = var(g, "c", g->e);
    Z3_ast d = var(g, "d", g->e);
    Z3_ast xk[2] = {x, k}, abcd[4] = {a, b, cc, d};
    uint64_t sizes[64];
    int n_sizes = query_sizes(q, 0, sizes, 64);
    for (int t = 0; t < n_sizes; t++) {
        if (sizes[t] == 1) continue;
        Z3_ast kk = size_numeral(c, g->i, sizes[t]);
        Z3_ast jj = Z3_mk_div(c, k, kk), skx = t_sum(g, k, x);
        Z3_ast guard = and2(g, pos(g, k), Z3_mk_eq(c, Z3_mk_mod(c, k, kk), Z3_mk_int(c, 0, g->i)));
        Z3_ast both = and2(g, Z3_mk_eq(c, skx, t_sum(g, jj, t_sum(g, kk, x))),
                           Z3_mk_eq(c, skx, t_sum(g, kk, t_sum(g, jj, x))));
        axiom_1(g, s, 2, xk, Z3_mk_implies(c, guard, both), skx);
    }
    for (int n = 0; n < q->p.n; n++) {
        const node *nd = &q->p.v[n];
        if (nd->op != OP_CONCAT) continue;
        Z3_ast ki = size_numeral(c, g->i, nd->k1), kj = size_numeral(c, g->i, nd->k2);
        Z3_ast mcc = app2(c, g->mul, t_cat(g, ki, kj, a, b), t_cat(g, ki, kj, cc, d));
        Z3_ast l = t_sum_k(g, nd->k1 + nd->k2, mcc);
        Z3_ast r = app2(c, g->add, t_sum_k(g, nd->k1, app2(c, g->mul, a, cc)),
                        t_sum_k(g, nd->k2, app2(c, g->mul, b, d)));
        axiom_eq(g, s, 4, abcd, NULL, l, r, mcc, r);
    }
    n_sizes = query_sizes(q, 1, sizes, 64);
    for (int t = 0; t < n_sizes; t++) {
        Z3_ast l = t_rms(g, size_numeral(c, g->i, sizes[t]), x);
        Z3_ast sq = t_sum_k(g, sizes[t], app2(c, g->mul, x, x));
        Z3_ast r = app2(c, g->div, x,
                        app1(c, g->sqrt, app2(c, g->div, sq, size_const(c, g->e, sizes[t]))));
        axiom_eq(g, s, 1, &x, NULL, l, r, l, r);
    }
}

/* A_sub (Mirage §4.3, Table 2) plus our two concat axioms and our rms one. Reflexivity is
 * asserted as ground instances on the query's terms (see prove()); transitivity has the
 * two-term trigger. */
static void assert_a_sub(const sig *g, Z3_solver s) {
    Z3_context c = g->c;
    Z3_ast x = var(g, "x", g->e), y = var(g, "y", g->e), z = var(g, "z", g->e);
    Z3_ast i = var(g, "i", g->i), j = var(g, "j", g->i);
    Z3_ast xy[2] = {x, y}, xyz[3] = {x, y, z}, xi[2] = {x, i}, xyij[4] = {x, y, i, j};
    Z3_ast t;
#define SUB(a, b) app2(c, g->sub, a, b)
    /* subexpr(y, add(x,y)) and subexpr(y, mul(x,y)) follow by commutativity; asserting
     * them saves E-matching the detour through add(y,x) */
    t = app2(c, g->add, x, y);
    axiom_1(g, s, 2, xy, and2(g, SUB(x, t), SUB(y, t)), t);
    t = app2(c, g->mul, x, y);
    axiom_1(g, s, 2, xy, and2(g, SUB(x, t), SUB(y, t)), t);
    t = app2(c, g->div, x, y);
    axiom_1(g, s, 2, xy, and2(g, SUB(x, t), SUB(y, t)), t);
    t = app1(c, g->exp, x);
    axiom_1(g, s, 1, &x, SUB(x, t), t);
    t = app1(c, g->sqrt, x);
    axiom_1(g, s, 1, &x, SUB(x, t), t);
    t = app1(c, g->silu, x);
    axiom_1(g, s, 1, &x, SUB(x, t), t);
    t = t_sum(g, i, x);
    axiom_1(g, s, 2, xi, SUB(x, t), t);
    /* ours: subexpr(x, rms(i,x)); it follows from our rms axiom and subexpr(x, div(x,y)),
     * asserting it saves E-matching that detour */
    t = t_rms(g, i, x);
    axiom_1(g, s, 2, xi, SUB(x, t), t);
    /* ours: subexpr(x, concat(i,j,x,y)) and subexpr(y, concat(i,j,x,y)) */
    t = t_cat(g, i, j, x, y);
    axiom_1(g, s, 4, xyij, and2(g, SUB(x, t), SUB(y, t)), t);
    /* transitivity */
    Z3_ast pats[1][2] = {{SUB(x, y), SUB(y, z)}};
    unsigned pat_n[1] = {2};
    forall(g, s, 3, xyz, Z3_mk_implies(c, and2(g, SUB(x, y), SUB(y, z)), SUB(x, z)), 1,
           (const Z3_ast(*)[2])pats, pat_n);
#undef SUB
}

static Z3_ast p1_term(const sig *g, const pool *p, int k) {
    const node *nd = &p->v[k];
    Z3_context c = g->c;
    switch (nd->op) {
    case OP_VAR:
    case OP_NUM:
        return leaf_const(c, g->e, nd);
    case OP_ADD:
        return app2(c, g->add, p1_term(g, p, nd->a), p1_term(g, p, nd->b));
    case OP_MUL:
        return app2(c, g->mul, p1_term(g, p, nd->a), p1_term(g, p, nd->b));
    case OP_DIV:
        return app2(c, g->div, p1_term(g, p, nd->a), p1_term(g, p, nd->b));
    case OP_EXP:
        return app1(c, g->exp, p1_term(g, p, nd->a));
    case OP_SQRT:
        return app1(c, g->sqrt, p1_term(g, p, nd->a));
    case OP_SILU:
        return app1(c, g->silu, p1_term(g, p, nd->a));
    case OP_SUM:
        return t_sum(g, size_numeral(c, g->i, nd->k1), p1_term(g, p, nd->a));
    case OP_CONCAT:
        return t_cat(g, size_numeral(c, g->i, nd->k1), size_numeral(c, g->i, nd->k2),
                     p1_term(g, p, nd->a), p1_term(g, p, nd->b));
    case OP_RMS:
        return t_rms(g, size_numeral(c, g->i, nd->k1), p1_term(g, p, nd->a));
    }
    return NULL;
}

/* Returns 1 if Z3 proves the query (unsat), 0 if not (sat is not expected: E-matching
 * without MBQI cannot build models, so it ends in unknown or runs until killed).
 * eq_weight is the Z3 weight of the rewriting equations of A_eq. Z3 instantiates eagerly
 * while weight + generation <= 10 (smt.qi.eager_threshold) and lazily after that; with 0
 * most proofs here take milliseconds, but associativity and commutativity enumerate every
 * bracketing and order of a long add or mul chain before the subexpr steps up the chain get
 * their turn. With 5 the rewriting stops early and the subexpr chain goes first: a leaf of a
 * 1024-term sum is found in a second, where weight 0 runs for minutes; but a few deep
 * rewrites are then never made. The driver runs both (see answer()). */
static int prove(const query *q, unsigned timeout_ms, unsigned eq_weight) {
    Z3_context c = new_context();
    sig g;
    sig_init(&g, c);
    g.eq_weight = eq_weight;
    Z3_solver s = new_solver(c, timeout_ms, 0);
    assert_a_eq(&g, s);
    assert_query_lemmas(&g, s, q);
    Z3_ast e1 = p1_term(&g, &q->p, q->e1), e2 = p1_term(&g, &q->p, q->e2);
    if (q->kind == Q_SUB) {
        assert_a_sub(&g, s);
        /* ground instances of reflexivity: enough, since a chain E1 <= ... <= E2 of A_sub
         * steps needs reflexivity only when it has no step, that is when E1 = E2 */
        Z3_solver_assert(c, s, app2(c, g.sub, e1, e1));
        Z3_solver_assert(c, s, app2(c, g.sub, e2, e2));
        Z3_solver_assert(c, s, Z3_mk_not(c, app2(c, g.sub, e1, e2)));
    } else {
        Z3_solver_assert(c, s, Z3_mk_not(c, Z3_mk_eq(c, e1, e2)));
    }
    double t0 = now_s();
    Z3_lbool r = Z3_solver_check(c, s);
    if (debug)
        fprintf(stderr, "z3check: prove (weight %u): %s in %.0f ms (%s)\n", eq_weight,
                r == Z3_L_TRUE    ? "sat"
                : r == Z3_L_FALSE ? "unsat"
                                  : "unknown",
                (now_s() - t0) * 1000.0, r == Z3_L_UNDEF ? Z3_solver_get_reason_unknown(c, s) : "");
    return r == Z3_L_FALSE;
}

/* ---------------------------------------------------------------------------------------------
 * Phase 2, "refute": finite countermodels.
 *
 * Sizes. For t, m >= 1 let h(i) = i if i < t, else t + ((i - t) mod m). The relation
 * i ~ j <=> h(i) = h(j) is a congruence of (positive integers, +, *): if i ~ j then i+k ~ j+k
 * and i*k ~ j*k. So Q = {1, .., t+m-1} with q (+) r = h(q+r), q (*) r = h(q*r) is a finite
 * quotient semiring. A phase-2 model gives, for each q in Q, a unary function sum_q (sum_1
 * is the identity: that is the axiom x = sum(1,x)) and for each q, r a binary concat_{q,r};
 * it is extended to Int sizes by sum(i,x) = sum_{h(i)}(x), concat(i,j,a,b) = concat_{h(i),h(j)}.
 *
 * Elements. The sort Expr is a finite set of n elements (an enumeration sort) and every axiom
 * is asserted for every tuple of elements and every tuple of sizes in Q, with i*j and i+j
 * computed in Q. Because h is a homomorphism, the extended model satisfies each axiom for all
 * positive Int sizes exactly when the finite model satisfies it for all sizes in Q. Hence a
 * finite model of (axioms over Q, n) + (negated goal) is a model of (axioms over Int) +
 * (negated goal): the goal is not entailed. Z3's answer sat is a proof of "no"; unsat only
 * says that no countermodel of this shape exists, so it is never read as "yes".
 *
 * rms. The finite model has no rms table: our rms axiom defines rms, so an rms term is read
 * as its right side, div(x, sqrt(div(sum_{h(k)}(mul(x,x)), n_k))) with n_k the constant named
 * by k's text (p2_term, fin_eval). The extended model sets rms(k,x) to that for every k; it
 * satisfies the rms axiom at every size by construction and subexpr(x, rms(k,x)) because
 * subexpr(x, div(x,y)) holds, and no other axiom mentions rms, so nothing else is to check.
 *
 * Which shapes find models: 2 elements refute "E1 uses exp, silu, a variable or a constant
 * that E2 cannot contain"; 3 to 5 elements refute many prefixes that combine inputs in a way
 * E2 never does (Q*V in attention). Size maps refute sizes E2 cannot produce when their
 * classes differ (mod 3: 3 against powers of 2), in eq queries also 2048 against 4096. Beyond
 * this search, so answered unknown:
 *  - a sum that only sums more than E2 does: in ANY finite model x <= sum(2,x) <= sum(4,x) ..
 *    becomes periodic, so sum(8192,m) <= sum(4096,m) unless the model has over 13 elements;
 *  - E2 holding add of products, e.g. the paper's X*Y against X*Z+Y*Z: with our concat axiom
 *    every add(mul(a,c), mul(b,d)) equals sum(2, mul(concat(1,1,a,b), concat(1,1,c,d))), so a
 *    countermodel needs concat to pair its arguments apart, and the shapes tried have none
 *    with <= 4 elements (Z3 proves unsat); without the concat axiom 3 elements suffice.
 */
#define FIN_N 6 /* largest domain tried */
#define FIN_Q 8 /* largest |Q| + 1 (sizes mod 7) */

typedef struct sizemap {
    uint64_t t, m;
} sizemap;

static int h_size(sizemap h, uint64_t k) {
    return (int)(k < h.t ? k : h.t + (k - h.t) % h.m);
}
static int q_count(sizemap h) {
    return (int)(h.t + h.m - 1);
}

/* The finite signature in Z3 for one (n, h). */
typedef struct fsig {
    Z3_context c;
    int n, nq;
    sizemap h;
    Z3_sort e;
    Z3_ast el[FIN_N];
    Z3_func_decl add, mul, div, exp, sqrt, silu, sub;
    Z3_func_decl sum[FIN_Q];        /* sum[q], q = 2..nq (sum_1 is the identity) */
    Z3_func_decl cat[FIN_Q][FIN_Q]; /* cat[q][r], q, r = 1..nq */
} fsig;

/* A finite model read back from Z3, checked by fin_check(). */
typedef struct fmodel {
    int n, nq;
    sizemap h;
    uint8_t add[FIN_N][FIN_N], mul[FIN_N][FIN_N], div[FIN_N][FIN_N];
    uint8_t exp[FIN_N], sqrt[FIN_N], silu[FIN_N];
    uint8_t sum[FIN_Q][FIN_N];
    uint8_t cat[FIN_Q][FIN_Q][FIN_N][FIN_N];
    uint8_t sub[FIN_N][FIN_N];
} fmodel;

static void fsig_init(fsig *g, Z3_context c, int n, sizemap h) {
    char name[64];
    Z3_symbol names[FIN_N];
    Z3_func_decl consts[FIN_N], testers[FIN_N];
    g->c = c;
    g->n = n;
    g->h = h;
    g->nq = q_count(h);
    /* fresh names per shape, so that shapes never share a declaration */
    snprintf(name, sizeof name, "E%d_%llu_%llu", n, (unsigned long long)h.t,
             (unsigned long long)h.m);
    for (int k = 0; k < n; k++) {
        char en[80];
        snprintf(en, sizeof en, "%s_e%d", name, k);
        names[k] = Z3_mk_string_symbol(c, en);
    }
    g->e = Z3_mk_enumeration_sort(c, Z3_mk_string_symbol(c, name), (unsigned)n, names, consts,
                                  testers);
    for (int k = 0; k < n; k++)
        g->el[k] = Z3_mk_app(c, consts[k], 0, NULL);
    Z3_sort e = g->e, ee[2] = {e, e};
    char fn[96];
#define FDECL(f, ar, dom, rng)                                                                     \
    (snprintf(fn, sizeof fn, "%s_%s", name, f),                                                    \
     Z3_mk_func_decl(c, Z3_mk_string_symbol(c, fn), ar, dom, rng))
    g->add = FDECL("add", 2, ee, e);
    g->mul = FDECL("mul", 2, ee, e);
    g->div = FDECL("div", 2, ee, e);
    g->exp = FDECL("exp", 1, &e, e);
    g->sqrt = FDECL("sqrt", 1, &e, e);
    g->silu = FDECL("silu", 1, &e, e);
    g->sub = FDECL("subexpr", 2, ee, Z3_mk_bool_sort(c));
    for (int q = 2; q <= g->nq; q++) {
        char f[32];
        snprintf(f, sizeof f, "sum%d", q);
        g->sum[q] = FDECL(f, 1, &e, e);
    }
    for (int q = 1; q <= g->nq; q++)
        for (int r = 1; r <= g->nq; r++) {
            char f[32];
            snprintf(f, sizeof f, "concat%d_%d", q, r);
            g->cat[q][r] = FDECL(f, 2, ee, e);
        }
#undef FDECL
}

static Z3_ast f_sum(const fsig *g, int q, Z3_ast x) {
    return q == 1 ? x : app1(g->c, g->sum[q], x);
}
static int q_mul(const fsig *g, int q, int r) {
    return h_size(g->h, (uint64_t)q * (uint64_t)r);
}
static int q_add(const fsig *g, int q, int r) {
    return h_size(g->h, (uint64_t)q + (uint64_t)r);
}

static void f_assert_eq(const fsig *g, Z3_solver s, Z3_ast a, Z3_ast b) {
    Z3_solver_assert(g->c, s, Z3_mk_eq(g->c, a, b));
}

/* A_eq, instantiated over the n elements and the sizes Q (Mirage §4.3, Table 2; concat ours). */
static void f_assert_a_eq(const fsig *g, Z3_solver s) {
    Z3_context c = g->c;
    int n = g->n, nq = g->nq;
#define ADD(a, b) app2(c, g->add, a, b)
#define MUL(a, b) app2(c, g->mul, a, b)
#define DIV(a, b) app2(c, g->div, a, b)
    for (int xi = 0; xi < n; xi++) {
        Z3_ast x = g->el[xi];
        for (int q = 1; q <= nq; q++)
            for (int r = 1; r <= nq; r++)
                f_assert_eq(g, s, f_sum(g, q, f_sum(g, r, x)), f_sum(g, q_mul(g, q, r), x));
        for (int yi = 0; yi < n; yi++) {
            Z3_ast y = g->el[yi];
            f_assert_eq(g, s, ADD(x, y), ADD(y, x));
            f_assert_eq(g, s, MUL(x, y), MUL(y, x));
            f_assert_eq(g, s, MUL(app1(c, g->exp, x), app1(c, g->exp, y)),
                        app1(c, g->exp, ADD(x, y)));
            f_assert_eq(g, s, MUL(app1(c, g->sqrt, x), app1(c, g->sqrt, y)),
                        app1(c, g->sqrt, MUL(x, y)));
            for (int q = 2; q <= nq; q++) {
                f_assert_eq(g, s, f_sum(g, q, ADD(x, y)), ADD(f_sum(g, q, x), f_sum(g, q, y)));
                f_assert_eq(g, s, f_sum(g, q, MUL(x, y)), MUL(f_sum(g, q, x), y));
                f_assert_eq(g, s, f_sum(g, q, DIV(x, y)), DIV(f_sum(g, q, x), y));
            }
            for (int zi = 0; zi < n; zi++) {
                Z3_ast z = g->el[zi];
                f_assert_eq(g, s, ADD(x, ADD(y, z)), ADD(ADD(x, y), z));
                f_assert_eq(g, s, MUL(x, MUL(y, z)), MUL(MUL(x, y), z));
                f_assert_eq(g, s, ADD(MUL(x, z), MUL(y, z)), MUL(ADD(x, y), z));
                f_assert_eq(g, s, ADD(DIV(x, z), DIV(y, z)), DIV(ADD(x, y), z));
                f_assert_eq(g, s, MUL(x, DIV(y, z)), DIV(MUL(x, y), z));
                f_assert_eq(g, s, DIV(DIV(x, y), z), DIV(x, MUL(y, z)));
            }
        }
    }
    /* ours: sum(i+j, mul(concat(i,j,a,b), concat(i,j,c,d))) = add(sum(i,mul(a,c)), sum(j,mul(b,d)))
     */
    for (int q = 1; q <= nq; q++)
        for (int r = 1; r <= nq; r++)
            for (int ai = 0; ai < n; ai++)
                for (int bi = 0; bi < n; bi++)
                    for (int ci = 0; ci < n; ci++)
                        for (int di = 0; di < n; di++) {
                            Z3_ast a = g->el[ai], b = g->el[bi], cc = g->el[ci], d = g->el[di];
                            Z3_ast l = f_sum(
                                g, q_add(g, q, r),
                                MUL(app2(c, g->cat[q][r], a, b), app2(c, g->cat[q][r], cc, d)));
                            Z3_ast rr = ADD(f_sum(g, q, MUL(a, cc)), f_sum(g, r, MUL(b, d)));
                            f_assert_eq(g, s, l, rr);
                        }
#undef ADD
#undef MUL
#undef DIV
}

/* A_sub over the n elements and Q (concat ones ours). */
static void f_assert_a_sub(const fsig *g, Z3_solver s) {
    Z3_context c = g->c;
    int n = g->n, nq = g->nq;
#define SUB(a, b) Z3_solver_assert(c, s, app2(c, g->sub, a, b))
    for (int xi = 0; xi < n; xi++) {
        Z3_ast x = g->el[xi];
        SUB(x, x);
        SUB(x, app1(c, g->exp, x));
        SUB(x, app1(c, g->sqrt, x));
        SUB(x, app1(c, g->silu, x));
        for (int q = 2; q <= nq; q++)
            SUB(x, f_sum(g, q, x));
        for (int yi = 0; yi < n; yi++) {
            Z3_ast y = g->el[yi];
            SUB(x, app2(c, g->add, x, y));
            SUB(x, app2(c, g->mul, x, y));
            SUB(x, app2(c, g->div, x, y));
            SUB(y, app2(c, g->div, x, y));
            for (int q = 1; q <= nq; q++)
                for (int r = 1; r <= nq; r++) {
                    SUB(x, app2(c, g->cat[q][r], x, y));
                    SUB(y, app2(c, g->cat[q][r], x, y));
                }
            for (int zi = 0; zi < n; zi++) {
                Z3_ast z = g->el[zi];
                Z3_ast v[2] = {app2(c, g->sub, x, y), app2(c, g->sub, y, z)};
                Z3_solver_assert(c, s, Z3_mk_implies(c, Z3_mk_and(c, 2, v), app2(c, g->sub, x, z)));
            }
        }
    }
#undef SUB
}

/* rms(k, x) read as the right side of our rms axiom (see above) */
static Z3_ast f_rms(const fsig *g, uint64_t k, Z3_ast x) {
    Z3_context c = g->c;
    Z3_ast q =
        app2(c, g->div, f_sum(g, h_size(g->h, k), app2(c, g->mul, x, x)), size_const(c, g->e, k));
    return app2(c, g->div, x, app1(c, g->sqrt, q));
}

static Z3_ast p2_term(const fsig *g, const pool *p, int k) {
    const node *nd = &p->v[k];
    Z3_context c = g->c;
    switch (nd->op) {
    case OP_VAR:
    case OP_NUM:
        return leaf_const(c, g->e, nd);
    case OP_ADD:
        return app2(c, g->add, p2_term(g, p, nd->a), p2_term(g, p, nd->b));
    case OP_MUL:
        return app2(c, g->mul, p2_term(g, p, nd->a), p2_term(g, p, nd->b));
    case OP_DIV:
        return app2(c, g->div, p2_term(g, p, nd->a), p2_term(g, p, nd->b));
    case OP_EXP:
        return app1(c, g->exp, p2_term(g, p, nd->a));
    case OP_SQRT:
        return app1(c, g->sqrt, p2_term(g, p, nd->a));
    case OP_SILU:
        return app1(c, g->silu, p2_term(g, p, nd->a));
    case OP_SUM:
        return f_sum(g, h_size(g->h, nd->k1), p2_term(g, p, nd->a));
    case OP_CONCAT:
        return app2(c, g->cat[h_size(g->h, nd->k1)][h_size(g->h, nd->k2)], p2_term(g, p, nd->a),
                    p2_term(g, p, nd->b));
    case OP_RMS:
        return f_rms(g, nd->k1, p2_term(g, p, nd->a));
    }
    return NULL;
}

/* Index of the element a model gives to t (-1 if it is not one of the enumeration constants). */
static int f_value(const fsig *g, Z3_model m, Z3_ast t) {
    Z3_ast v;
    if (!Z3_model_eval(g->c, m, t, true, &v)) return -1;
    for (int k = 0; k < g->n; k++)
        if (Z3_is_eq_ast(g->c, v, g->el[k])) return k;
    return -1;
}

static int f_read(const fsig *g, Z3_model m, fmodel *fm) {
    Z3_context c = g->c;
    int n = g->n, nq = g->nq, bad = 0;
    memset(fm, 0, sizeof *fm);
    fm->n = n;
    fm->nq = nq;
    fm->h = g->h;
#define RD(dst, t)                                                                                 \
    do {                                                                                           \
        int v_ = f_value(g, m, t);                                                                 \
        bad |= v_ < 0;                                                                             \
        dst = (uint8_t)(v_ < 0 ? 0 : v_);                                                          \
    } while (0)
    for (int x = 0; x < n; x++) {
        Z3_ast ex = g->el[x];
        RD(fm->exp[x], app1(c, g->exp, ex));
        RD(fm->sqrt[x], app1(c, g->sqrt, ex));
        RD(fm->silu[x], app1(c, g->silu, ex));
        fm->sum[1][x] = (uint8_t)x;
        for (int q = 2; q <= nq; q++)
            RD(fm->sum[q][x], app1(c, g->sum[q], ex));
        for (int y = 0; y < n; y++) {
            Z3_ast ey = g->el[y], sb;
            RD(fm->add[x][y], app2(c, g->add, ex, ey));
            RD(fm->mul[x][y], app2(c, g->mul, ex, ey));
            RD(fm->div[x][y], app2(c, g->div, ex, ey));
            for (int q = 1; q <= nq; q++)
                for (int r = 1; r <= nq; r++)
                    RD(fm->cat[q][r][x][y], app2(c, g->cat[q][r], ex, ey));
            if (!Z3_model_eval(c, m, app2(c, g->sub, ex, ey), true, &sb))
                bad = 1;
            else
                fm->sub[x][y] = Z3_get_bool_value(c, sb) == Z3_L_TRUE;
        }
    }
#undef RD
    return bad ? -1 : 0;
}

/* Independent re-check of a finite model, in plain C: every axiom for every element tuple and
 * every size class. Returns NULL if all hold, else the name of a violated axiom. */
static const char *fin_check(const fmodel *m, int with_sub) {
    int n = m->n, nq = m->nq;
#define HQ(v) h_size(m->h, (uint64_t)(v))
    for (int x = 0; x < n; x++) {
        for (int q = 1; q <= nq; q++)
            for (int r = 1; r <= nq; r++)
                if (m->sum[q][m->sum[r][x]] != m->sum[HQ(q * r)][x]) return "sum(i,sum(j,x))";
        for (int y = 0; y < n; y++) {
            if (m->add[x][y] != m->add[y][x]) return "add commutes";
            if (m->mul[x][y] != m->mul[y][x]) return "mul commutes";
            if (m->mul[m->exp[x]][m->exp[y]] != m->exp[m->add[x][y]]) return "exp";
            if (m->mul[m->sqrt[x]][m->sqrt[y]] != m->sqrt[m->mul[x][y]]) return "sqrt";
            for (int q = 1; q <= nq; q++) {
                const uint8_t *s = m->sum[q];
                if (s[m->add[x][y]] != m->add[s[x]][s[y]]) return "sum(i,add(x,y))";
                if (s[m->mul[x][y]] != m->mul[s[x]][y]) return "sum(i,mul(x,y))";
                if (s[m->div[x][y]] != m->div[s[x]][y]) return "sum(i,div(x,y))";
            }
            for (int z = 0; z < n; z++) {
                if (m->add[x][m->add[y][z]] != m->add[m->add[x][y]][z]) return "add assoc";
                if (m->mul[x][m->mul[y][z]] != m->mul[m->mul[x][y]][z]) return "mul assoc";
                if (m->add[m->mul[x][z]][m->mul[y][z]] != m->mul[m->add[x][y]][z]) return "distrib";
                if (m->add[m->div[x][z]][m->div[y][z]] != m->div[m->add[x][y]][z]) return "div add";
                if (m->mul[x][m->div[y][z]] != m->div[m->mul[x][y]][z]) return "mul div";
                if (m->div[m->div[x][y]][z] != m->div[x][m->mul[y][z]]) return "div div";
            }
        }
    }
    for (int q = 1; q <= nq; q++)
        for (int r = 1; r <= nq; r++)
            for (int a = 0; a < n; a++)
                for (int b = 0; b < n; b++)
                    for (int c = 0; c < n; c++)
                        for (int d = 0; d < n; d++) {
                            int l =
                                m->sum[HQ(q + r)][m->mul[m->cat[q][r][a][b]][m->cat[q][r][c][d]]];
                            int rr = m->add[m->sum[q][m->mul[a][c]]][m->sum[r][m->mul[b][d]]];
                            if (l != rr) return "concat";
                        }
    if (!with_sub) return NULL;
    for (int x = 0; x < n; x++) {
        if (!m->sub[x][x]) return "reflexivity";
        if (!m->sub[x][m->exp[x]] || !m->sub[x][m->sqrt[x]] || !m->sub[x][m->silu[x]])
            return "subexpr unary";
        for (int q = 1; q <= nq; q++)
            if (!m->sub[x][m->sum[q][x]]) return "subexpr sum";
        for (int y = 0; y < n; y++) {
            if (!m->sub[x][m->add[x][y]] || !m->sub[x][m->mul[x][y]]) return "subexpr add/mul";
            if (!m->sub[x][m->div[x][y]] || !m->sub[y][m->div[x][y]]) return "subexpr div";
            for (int q = 1; q <= nq; q++)
                for (int r = 1; r <= nq; r++)
                    if (!m->sub[x][m->cat[q][r][x][y]] || !m->sub[y][m->cat[q][r][x][y]])
                        return "subexpr concat";
            for (int z = 0; z < n; z++)
                if (m->sub[x][y] && m->sub[y][z] && !m->sub[x][z]) return "transitivity";
        }
    }
#undef HQ
    return NULL;
}

/* Value of pool term k in the finite model; leaves[] holds, by node index, the leaf values
 * and for an rms node the value of its size's constant n_K. */
static int fin_eval(const fmodel *m, const pool *p, const int *leaves, int k) {
    const node *nd = &p->v[k];
    switch (nd->op) {
    case OP_VAR:
    case OP_NUM:
        return leaves[k];
    case OP_ADD:
        return m->add[fin_eval(m, p, leaves, nd->a)][fin_eval(m, p, leaves, nd->b)];
    case OP_MUL:
        return m->mul[fin_eval(m, p, leaves, nd->a)][fin_eval(m, p, leaves, nd->b)];
    case OP_DIV:
        return m->div[fin_eval(m, p, leaves, nd->a)][fin_eval(m, p, leaves, nd->b)];
    case OP_EXP:
        return m->exp[fin_eval(m, p, leaves, nd->a)];
    case OP_SQRT:
        return m->sqrt[fin_eval(m, p, leaves, nd->a)];
    case OP_SILU:
        return m->silu[fin_eval(m, p, leaves, nd->a)];
    case OP_SUM:
        return m->sum[h_size(m->h, nd->k1)][fin_eval(m, p, leaves, nd->a)];
    case OP_CONCAT:
        return m->cat[h_size(m->h, nd->k1)][h_size(m->h, nd->k2)][fin_eval(m, p, leaves, nd->a)]
                     [fin_eval(m, p, leaves, nd->b)];
    case OP_RMS: { /* the right side of our rms axiom */
        int x = fin_eval(m, p, leaves, nd->a);
        return m->div[x][m->sqrt[m->div[m->sum[h_size(m->h, nd->k1)][m->mul[x][x]]][leaves[k]]]];
    }
    }
    return 0;
}

/* -d: prints a countermodel on stderr (elements 0..n-1; tables indexed [row][column]). */
static void fin_print(const fmodel *m, const pool *p, const int *leaves, int v1, int v2) {
    int n = m->n;
    FILE *f = stderr;
    fprintf(f,
            "z3check: countermodel, %d elements, sizes h(i) = i < %llu ? i : %llu + (i - %llu) "
            "mod %llu\n",
            n, (unsigned long long)m->h.t, (unsigned long long)m->h.t, (unsigned long long)m->h.t,
            (unsigned long long)m->h.m);
    for (int k = 0; k < p->n; k++)
        if (p->v[k].op == OP_VAR || p->v[k].op == OP_NUM)
            fprintf(f, "  %.*s = %d\n", p->v[k].len, p->v[k].name, leaves[k]);
        else if (p->v[k].op == OP_RMS)
            fprintf(f, "  %llu (rms size) = %d\n", (unsigned long long)p->v[k].k1, leaves[k]);
    fprintf(f, "  E1 = %d, E2 = %d\n", v1, v2);
    const char *names[] = {"add", "mul", "div", "subexpr"};
    const uint8_t(*tabs[])[FIN_N] = {m->add, m->mul, m->div, m->sub};
    for (int t = 0; t < 4; t++) {
        fprintf(f, "  %-7s", names[t]);
        for (int x = 0; x < n; x++) {
            fputs(x ? " |" : "", f);
            for (int y = 0; y < n; y++)
                fprintf(f, " %d", tabs[t][x][y]);
        }
        fputc('\n', f);
    }
    const char *unames[] = {"exp", "sqrt", "silu"};
    const uint8_t *utabs[] = {m->exp, m->sqrt, m->silu};
    for (int t = 0; t < 3; t++) {
        fprintf(f, "  %-7s", unames[t]);
        for (int x = 0; x < n; x++)
            fprintf(f, " %d", utabs[t][x]);
        fputc('\n', f);
    }
    for (int q = 2; q <= m->nq; q++) {
        fprintf(f, "  sum[%d] ", q);
        for (int x = 0; x < n; x++)
            fprintf(f, " %d", m->sum[q][x]);
        fputc('\n', f);
    }
}

/* The constant that node nd stands for in phase 2: the leaf's own, or for an rms node the
 * constant n_K of its size's text (its rms axiom's denominator); NULL for other nodes. */
static Z3_ast f_leaf(const fsig *g, const node *nd) {
    if (nd->op == OP_VAR || nd->op == OP_NUM) return leaf_const(g->c, g->e, nd);
    return nd->op == OP_RMS ? size_const(g->c, g->e, nd->k1) : NULL;
}

/* Reads the model, re-checks the axioms and the negated goal. Returns NULL if the model is a
 * countermodel, else why not (which would be a bug in this file or in Z3). */
static const char *f_confirm(const fsig *g, Z3_model mdl, const query *q) {
    static fmodel fm; /* large-ish; one phase-2 search runs per process */
    if (f_read(g, mdl, &fm)) return "model has a value outside the domain";
    const char *bad = fin_check(&fm, q->kind == Q_SUB);
    if (bad) return bad;
    int *leaves = xrealloc(NULL, (size_t)q->p.n * sizeof *leaves);
    for (int k = 0; k < q->p.n; k++) {
        Z3_ast v = f_leaf(g, &q->p.v[k]);
        leaves[k] = v ? f_value(g, mdl, v) : 0;
        if (leaves[k] < 0) {
            free(leaves);
            return "leaf outside the domain";
        }
    }
    int v1 = fin_eval(&fm, &q->p, leaves, q->e1), v2 = fin_eval(&fm, &q->p, leaves, q->e2);
    if (debug) fin_print(&fm, &q->p, leaves, v1, v2);
    free(leaves);
    if (q->kind == Q_SUB ? fm.sub[v1][v2] : v1 == v2) return "goal holds in the model";
    return NULL;
}

/* Symmetry breaking: the n elements are interchangeable, so every model is isomorphic to one
 * in which the k-th distinct leaf (in input order; an rms node's constant n_K counts as a
 * leaf) takes element j only if some earlier leaf takes j - 1. Asserting that loses no model
 * up to isomorphism (so no countermodel), and spares Z3 the n! renamings of each partial
 * model. */
static void f_break_symmetry(const fsig *g, Z3_solver s, const query *q) {
    Z3_context c = g->c;
    Z3_ast seen[64];
    int n_seen = 0;
    for (int k = 0; k < q->p.n && n_seen < 64; k++) {
        Z3_ast v = f_leaf(g, &q->p.v[k]);
        if (!v) continue;
        int dup = 0;
        for (int i = 0; i < n_seen; i++)
            dup |= Z3_is_eq_ast(c, seen[i], v);
        if (dup) continue;
        for (int j = 1; j < g->n; j++) {
            Z3_ast prev[64];
            for (int i = 0; i < n_seen; i++)
                prev[i] = Z3_mk_eq(c, seen[i], g->el[j - 1]);
            Z3_ast some = n_seen ? Z3_mk_or(c, (unsigned)n_seen, prev) : Z3_mk_false(c);
            Z3_solver_assert(c, s, Z3_mk_implies(c, Z3_mk_eq(c, v, g->el[j]), some));
        }
        seen[n_seen++] = v;
    }
}

/* One search: domain n, size map h. Returns 1 with a confirmed countermodel, 0 otherwise. */
static int refute_one(Z3_context c, const query *q, int n, sizemap h, unsigned timeout_ms) {
    fsig g;
    fsig_init(&g, c, n, h);
    Z3_solver s = new_solver(c, timeout_ms, -1);
    f_assert_a_eq(&g, s);
    f_break_symmetry(&g, s, q);
    Z3_ast e1 = p2_term(&g, &q->p, q->e1), e2 = p2_term(&g, &q->p, q->e2);
    if (q->kind == Q_SUB) {
        f_assert_a_sub(&g, s);
        Z3_solver_assert(c, s, Z3_mk_not(c, app2(c, g.sub, e1, e2)));
    } else {
        Z3_solver_assert(c, s, Z3_mk_not(c, Z3_mk_eq(c, e1, e2)));
    }
    int found = 0;
    double t0 = now_s();
    Z3_lbool r = Z3_solver_check(c, s);
    if (debug)
        fprintf(stderr, "z3check: refute n=%d t=%llu m=%llu: %s in %.0f ms\n", n,
                (unsigned long long)h.t, (unsigned long long)h.m,
                r == Z3_L_TRUE    ? "sat"
                : r == Z3_L_FALSE ? "unsat"
                                  : "unknown",
                (now_s() - t0) * 1000.0);
    if (r == Z3_L_TRUE) {
        Z3_model m = Z3_solver_get_model(c, s);
        Z3_model_inc_ref(c, m);
        const char *why = f_confirm(&g, m, q);
        if (why)
            fprintf(stderr, "z3check: internal error: Z3 model rejected (%s)\n", why);
        else
            found = 1;
        Z3_model_dec_ref(c, m);
    }
    Z3_solver_dec_ref(c, s);
    return found;
}

/* A hash of the term at k with its sizes replaced by their classes under h: equal hashes
 * mean (up to collisions, which only cost a skipped shape) the same term in every finite
 * model with that size map. hs[] receives the hash of every node up to k. */
static uint64_t mapped_hash(const pool *p, int k, sizemap h, uint64_t *hs) {
    for (int i = 0; i <= k; i++) {
        const node *nd = &p->v[i];
        uint64_t x = 1469598103934665603ull ^ (uint64_t)nd->op;
#define MIX(v) (x = (x ^ (uint64_t)(v)) * 1099511628211ull)
        if (nd->op == OP_VAR || nd->op == OP_NUM)
            for (int c = 0; c < nd->len; c++)
                MIX((unsigned char)nd->name[c]);
        if (nd->op == OP_SUM || nd->op == OP_CONCAT) MIX(h_size(h, nd->k1));
        if (nd->op == OP_CONCAT) MIX(h_size(h, nd->k2));
        if (nd->op == OP_RMS) MIX(nd->k1); /* its n_K differs between sizes of one class */
        if (nd->a >= 0) MIX(hs[nd->a]);
        if (nd->b >= 0) MIX(hs[nd->b]);
#undef MIX
        hs[i] = x;
    }
    return hs[k];
}

/* Whether the size map h can matter: some size literal lands outside class 1 (else h acts
 * like t = m = 1), and the goal does not hold syntactically once sizes are mapped (eq: both
 * sides map to the same term; sub: E1 maps to a subterm of E2), which no model can refute. */
static int map_useful(const query *q, sizemap h) {
    int outside = 0;
    for (int i = 0; i < q->p.n; i++) {
        const node *nd = &q->p.v[i];
        if (nd->op == OP_SUM || nd->op == OP_CONCAT || nd->op == OP_RMS)
            outside |= h_size(h, nd->k1) != 1;
        if (nd->op == OP_CONCAT) outside |= h_size(h, nd->k2) != 1;
    }
    if (!outside) return 0;
    uint64_t *hs = xrealloc(NULL, (size_t)q->p.n * sizeof *hs);
    /* e1 is parsed first, so its nodes are [0, e1] and e2's are [e1 + 1, e2] */
    uint64_t h1 = mapped_hash(&q->p, q->e1, h, hs);
    int trivial = 0;
    mapped_hash(&q->p, q->e2, h, hs);
    if (q->kind == Q_EQ)
        trivial = hs[q->e2] == h1;
    else
        for (int i = q->e1 + 1; i <= q->e2; i++)
            trivial |= hs[i] == h1;
    free(hs);
    return !trivial;
}

/* Tries shapes from small to large until a countermodel is found or the deadline passes.
 * Size maps: all sizes alike (t = m = 1) first, then "1 or more than 1" (t = 2, m = 1) and
 * sizes mod p for p = 2, 3, 5, 7, each only where map_useful(). Mod 5, for example, tells
 * 64 (class 4) from 4096 (class 1), mod 3 tells 3 (class 3) from any power of 2. Per-shape
 * time caps keep one slow unsat answer from starving the other shapes. On success writes
 * the shape into how[]. */
static int refute(const query *q, double deadline, char *how, size_t how_len) {
    static const double cap_s[FIN_N + 1] = {0, 0, 0.5, 1.0, 3.0, 6.0, 1e9};
    static const sizemap cand[] = {{2, 1}, {1, 2}, {1, 3}, {1, 5}, {1, 7}};
    sizemap maps[1 + sizeof cand / sizeof cand[0]];
    int n_maps = 0;
    maps[n_maps++] = (sizemap){1, 1};
    for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++)
        if (map_useful(q, cand[k])) maps[n_maps++] = cand[k];
    Z3_context c = new_context();
    for (int n = 2; n <= FIN_N; n++) {
        for (int k = 0; k < n_maps; k++) {
            double left = deadline - now_s();
            if (left <= 0.01) return 0;
            double lim = left < cap_s[n] ? left : cap_s[n];
            if (refute_one(c, q, n, maps[k], (unsigned)(lim * 1000.0) + 1)) {
                if (maps[k].t == 1 && maps[k].m == 1)
                    snprintf(how, how_len, "countermodel n=%d, sizes all alike", n);
                else if (maps[k].t == 2)
                    snprintf(how, how_len, "countermodel n=%d, sizes 1 or >1", n);
                else
                    snprintf(how, how_len, "countermodel n=%d, sizes mod %llu", n,
                             (unsigned long long)maps[k].m);
                return 1;
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Driver: each query runs both phases in child processes and takes the first decisive answer.
 */
typedef struct opts {
    unsigned timeout_ms;
    unsigned mem_mb;
    int phases; /* bit 0: prove, bit 1: refute */
    int verbose;
} opts;

/* One phase run as a child process, between its start and stop times. */
typedef struct child {
    int phase;       /* 1 prove, 2 refute */
    unsigned weight; /* prove: weight of the A_eq equations */
    double start, stop;
    int state; /* 0 not started, 1 running, 2 over */
    pid_t pid;
    int fd; /* read end of the pipe the child answers on */
    char buf[256];
    size_t len;
} child;

/* The child's work: one line on fd, "yes <how>", "no <how>" or "unknown". */
static void child_main(const child *ch, const query *q, const opts *o, int fd) {
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = (rlim_t)o->mem_mb << 20;
    if (o->mem_mb) setrlimit(RLIMIT_AS, &rl);
    char out[220] = "unknown\n", how[160];
    double left = ch->stop - now_s();
    if (ch->phase == 1) {
        if (left > 0 && prove(q, (unsigned)(left * 1000.0) + 1, ch->weight))
            snprintf(out, sizeof out, "yes proof%s\n", ch->weight ? ", rewrites weighted" : "");
    } else if (refute(q, ch->stop, how, sizeof how)) {
        snprintf(out, sizeof out, "no %s\n", how);
    }
    ssize_t w = write(fd, out, strlen(out));
    (void)w;
}

static int spawn(child *ch, const query *q, const opts *o) {
    int fds[2];
    if (pipe(fds)) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(ch, q, o, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    ch->pid = pid;
    ch->fd = fds[0];
    ch->state = 1;
    return 0;
}

static void reap(child *ch) {
    if (ch->state != 1) return;
    kill(ch->pid, SIGKILL);
    while (waitpid(ch->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    close(ch->fd);
    ch->state = 2;
}

/* Reads what child ch wrote; returns 1 when its line is complete (or it died). */
static int drain(child *ch) {
    ssize_t got = read(ch->fd, ch->buf + ch->len, sizeof ch->buf - 1 - ch->len);
    if (got < 0 && errno == EINTR) return 0;
    if (got > 0) ch->len += (size_t)got;
    ch->buf[ch->len] = 0;
    return got <= 0 || strchr(ch->buf, '\n') || ch->len == sizeof ch->buf - 1;
}

/* Answers one query: "yes", "no" or "unknown"; how[] says what decided it.
 * Children: the refuter for the whole time; the prover with weight 0 for the first quarter
 * (at most 2 s: its proofs of the corpus take under 0.1 s), then the prover with weight 5
 * for the rest (see prove()). The first decisive answer wins; the others are killed. A
 * child stuck inside Z3 past its stop time (E-matching rounds ignore Z3's own timeout) is
 * killed too. */
static const char *answer(const query *q, const opts *o, char *how, size_t how_len) {
    double t0 = now_s(), deadline = t0 + o->timeout_ms / 1000.0;
    double t1 = t0 + (o->timeout_ms / 4 < 2000 ? o->timeout_ms / 4 : 2000) / 1000.0;
    child ch[3];
    int n_ch = 0;
    if (o->phases & 1) {
        ch[n_ch++] = (child){.phase = 1, .weight = 0, .start = t0, .stop = t1};
        ch[n_ch++] = (child){.phase = 1, .weight = 5, .start = t1, .stop = deadline};
    }
    if (o->phases & 2) ch[n_ch++] = (child){.phase = 2, .start = t0, .stop = deadline};
    const char *res = NULL;
    snprintf(how, how_len, "timeout");
    for (;;) {
        double t = now_s(), next = deadline;
        struct pollfd pf[3];
        int map[3], np = 0, pending = 0;
        for (int k = 0; k < n_ch; k++) {
            child *c = &ch[k];
            if (c->state == 0 && t >= c->start && spawn(c, q, o)) {
                snprintf(how, how_len, "cannot start a process: %s", strerror(errno));
                c->state = 2;
            }
            if (c->state == 1 && t >= c->stop) reap(c);
            if (c->state == 0) next = c->start < next ? c->start : next;
            if (c->state == 1) {
                next = c->stop < next ? c->stop : next;
                pf[np] = (struct pollfd){.fd = c->fd, .events = POLLIN};
                map[np++] = k;
            }
            pending += c->state != 2;
        }
        if (!pending || t >= deadline) break;
        int r = poll(pf, (nfds_t)np, (int)((next - t) * 1000.0) + 1);
        if (r < 0 && errno != EINTR) break;
        for (int k = 0; k < np && r > 0; k++) {
            child *c = &ch[map[k]];
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)) || !drain(c)) continue;
            reap(c);
            const char *got = !strncmp(c->buf, "yes ", 4)  ? "yes"
                              : !strncmp(c->buf, "no ", 3) ? "no"
                                                           : NULL;
            if (!got) continue;
            if (res && strcmp(res, got)) {
                /* a proof and a countermodel for one query: a bug here or in Z3 */
                fprintf(stderr, "z3check: internal error: both a proof and a countermodel\n");
                snprintf(how, how_len, "conflict: both a proof and a countermodel");
                res = "unknown";
                break;
            }
            res = got;
            char *nl = strchr(c->buf, '\n');
            if (nl) *nl = 0;
            snprintf(how, how_len, "%s", c->buf + strlen(got) + 1);
        }
        if (res) break;
    }
    int all_over = 1;
    for (int k = 0; k < n_ch; k++) {
        all_over &= ch[k].state == 2;
        reap(&ch[k]);
    }
    if (!res && all_over && now_s() < deadline) snprintf(how, how_len, "neither phase decided");
    return res ? res : "unknown";
}

/* ---------------------------------------------------------------------------------------------
 * Input: lines of any length up to MAX_LINE; reports errors with file:line:col and a caret.
 */
static char *read_line(FILE *f, char **buf, size_t *cap, size_t *len, int *too_long) {
    size_t n = 0;
    int ch;
    *too_long = 0;
    while ((ch = getc(f)) != EOF && ch != '\n') {
        if (n + 1 >= *cap) {
            if (*cap >= MAX_LINE) {
                *too_long = 1;
                continue; /* drain the rest of the line */
            }
            *cap = *cap ? 2 * *cap : 4096;
            *buf = xrealloc(*buf, *cap);
        }
        (*buf)[n++] = (char)ch;
    }
    if (ch == EOF && n == 0 && !*too_long) return NULL;
    if (!*buf) *buf = xrealloc(NULL, *cap = 4096);
    if (n > 0 && (*buf)[n - 1] == '\r') n--;
    (*buf)[n] = 0;
    *len = n;
    return *buf;
}

/* Prints "file:line:col: error: msg", the line (a window around col if it is long; tabs and
 * other control characters shown as spaces) and a caret under col (1-based byte column). */
static void report(const char *file, long line_no, const char *s, size_t len, size_t at,
                   const char *msg) {
    fprintf(stderr, "%s:%ld:%zu: error: %s\n", file, line_no, at + 1, msg);
    size_t from = at > 60 ? at - 60 : 0, to = len - from > 140 ? from + 140 : len;
    if (at >= len) to = len;
    fputs(from ? "..." : "", stderr);
    for (size_t i = from; i < to; i++) {
        unsigned char c = (unsigned char)s[i];
        fputc(c < 0x20 || c >= 0x7f ? ' ' : c, stderr);
    }
    fputs(to < len ? "...\n" : "\n", stderr);
    fprintf(stderr, "%*s^\n", (int)(at - from + (from ? 3 : 0)), "");
}

static int blank_or_comment(const char *s, size_t len) {
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i == len || s[i] == '#';
}

static void usage(FILE *f) {
    fprintf(f, "usage: z3check [-t MS] [-m MB] [-p 0|1|2] [-v] [-d] [FILE]\n"
               "  reads lines  sub<TAB>E1<TAB>E2  or  eq<TAB>E1<TAB>E2  (optional <TAB>yes|no)\n"
               "  prints yes, no or unknown per line\n"
               "  -t MS   time limit per query in milliseconds (default 10000)\n"
               "  -m MB   memory limit per Z3 process in MiB (default 2048, 0: none)\n"
               "  -p N    phases: 0 both (default), 1 prove only, 2 refute only\n"
               "  -v      also print the time in ms and what decided the answer\n"
               "  -d      debug: each phase's steps and their times on stderr\n");
}

static int parse_uint(const char *s, unsigned *out) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > 100000000ul) return -1;
    *out = (unsigned)v;
    return 0;
}

int main(int argc, char **argv) {
    opts o = {10000, 2048, 3, 0};
    const char *file = NULL;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        unsigned v;
        if ((!strcmp(a, "-t") || !strcmp(a, "-m") || !strcmp(a, "-p")) && k + 1 < argc) {
            if (parse_uint(argv[++k], &v) || (a[1] == 't' && v == 0) || (a[1] == 'p' && v > 2)) {
                fprintf(stderr, "z3check: bad value for %s: %s\n", a, argv[k]);
                return 1;
            }
            if (a[1] == 't')
                o.timeout_ms = v;
            else if (a[1] == 'm')
                o.mem_mb = v;
            else
                o.phases = v == 0 ? 3 : (int)v;
        } else if (!strcmp(a, "-v")) {
            o.verbose = 1;
        } else if (!strcmp(a, "-d")) {
            debug = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            usage(stderr);
            return 1;
        } else if (!file) {
            file = a;
        } else {
            usage(stderr);
            return 1;
        }
    }
    FILE *in = stdin;
    if (file && strcmp(file, "-")) {
        in = fopen(file, "rb");
        if (!in) {
            fprintf(stderr, "z3check: %s: %s\n", file, strerror(errno));
            return 1;
        }
    }
    const char *fname = file && strcmp(file, "-") ? file : "<stdin>";
    char *buf = NULL;
    size_t cap = 0, len = 0;
    long line_no = 0;
    int rc = 0, too_long;
    query q;
    memset(&q, 0, sizeof q);
    while (read_line(in, &buf, &cap, &len, &too_long)) {
        line_no++;
        if (too_long) {
            fprintf(stderr, "%s:%ld:1: error: line longer than %u bytes\n", fname, line_no,
                    MAX_LINE);
            puts(o.verbose ? "error\t0\tmalformed line" : "error");
            rc = 2;
            continue;
        }
        if (blank_or_comment(buf, len)) continue;
        parser ps;
        q.p.n = 0;
        if (parse_line(&ps, buf, len, &q)) {
            report(fname, line_no, buf, len, ps.err_at, ps.err);
            puts(o.verbose ? "error\t0\tmalformed line" : "error");
            fflush(stdout);
            rc = 2;
            continue;
        }
        char how[200];
        double t0 = now_s();
        const char *res = answer(&q, &o, how, sizeof how);
        if (o.verbose)
            printf("%s\t%.0f\t%s\n", res, (now_s() - t0) * 1000.0, how);
        else
            puts(res);
        fflush(stdout);
    }
    if (ferror(in)) {
        fprintf(stderr, "z3check: %s: read error\n", fname);
        rc = rc ? rc : 1;
    }
    free(buf);
    free(q.p.v);
    if (in != stdin) fclose(in);
    return rc;
}
