/* parse: .mu program text -> kernel graph (docs/ir.md has the grammar).
 *
 * Recursive descent over a hand-written lexer (lex.c, which also reports errors: parse.h).
 * Errors unwind with longjmp to ir_parse_text (as Lua's parser does), which frees the
 * partial graph; every message is "file:line:col: error: ...", the source line and a caret
 * under the spot (chibicc style). Shape errors found while adding a node are reported at the
 * operator's position.
 *
 * Memory: the parser struct and the graph are the only heap objects. Tokens point into the
 * source text and every other value lives on the C stack, so unwinding with longjmp skips no
 * cleanup: ir_parse_text frees the graph, whose arena holds every name and literal copied so
 * far. Recursion depth is bounded (MAX_DEPTH) so hostile input cannot overflow the C stack. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* An integer in a dim list or attribute, with an optional leading '-'. The caller checks the
 * range. The overflow test is conservative ((INT64_MAX - 9) / 10) so v * 10 + digit never
 * overflows; "too large" points at t, where the integer (or its '-') starts. */
static int64_t parse_int(parser *p, const char *what) {
    token t = p->tok;
    int neg = 0;
    if (is_punct(p, '-')) neg = 1, lex_next(p);
    if (p->tok.kind != T_NUM) {
        char d[64];
        lex_fail(p, &p->tok, "expected an integer for %s, found %s", what,
                 lex_desc(&p->tok, d, sizeof d));
    }
    int64_t v = 0;
    for (size_t i = 0; i < p->tok.n; i++) {
        char c = p->tok.s[i];
        if (c < '0' || c > '9') lex_fail(p, &p->tok, "%s must be an integer", what);
        if (v > (INT64_MAX - 9) / 10) lex_fail(p, &t, "%s is too large", what);
        v = v * 10 + (c - '0');
    }
    lex_next(p);
    return neg ? -v : v;
}

/* The index of the lengths the identifier t names, or a failure at t. */
static int lengths_ref(parser *p, const token *t) {
    char name[MAX_NAME + 1];
    memcpy(name, t->s, t->n), name[t->n] = 0;
    int k = ir_find_lengths(p->g, name);
    if (k < 0)
        lex_fail(p, t, "'%s' is not declared (lengths %s[COUNT] max=MAX, or dim %s [LO, HI])", name, name, name);
    return k;
}

/* The symbolic dim the identifier t names (in the program, also inside a kernel), or -1. */
static int sym_ref(parser *p, const token *t) {
    char name[MAX_NAME + 1];
    if (t->kind != T_IDENT || t->n > MAX_NAME) return -1;
    memcpy(name, t->s, t->n), name[t->n] = 0;
    return ir_find_sym(p->outer ? p->outer : p->g, name);
}

/* A size that names a symbolic dim: NAME, NAME * K or K * NAME (the current token NAME, or K
 * already read as k with the current token '*'); its value at the binding. */
static int64_t sym_size(parser *p, int64_t k) {
    const ir_graph *g = p->outer ? p->outer : p->g;
    if (k) lex_next(p); /* the '*' */
    token t = p->tok;
    int s = sym_ref(p, &t);
    if (s < 0) {
        char d[64];
        lex_fail(p, &t, "expected a dim's name after '*' (dim NAME [LO, HI]), found %s", lex_desc(&t, d, sizeof d));
    }
    lex_next(p);
    if (!k && is_punct(p, '*')) {
        lex_next(p);
        token kt = p->tok;
        k = parse_int(p, "a dim's factor");
        if (k < 1) lex_fail(p, &kt, "a dim's factor is a positive integer");
    }
    int64_t v = g->syms[s].val * (k ? k : 1);
    if (v > IR_MAX_DIM) lex_fail(p, &t, "dim %s times %" PRId64 " is past %" PRId64, g->syms[s].name, k, IR_MAX_DIM);
    return v;
}

/* '[' int, ... ']' into out; returns the count. out holds IR_MAX_DIMS entries and more is an
 * error at the '['. "[]" gives 0, and a trailing comma ("[2, 4,]") is accepted. */
static int parse_int_list(parser *p, int64_t *out, const char *what) {
    token open = p->tok;
    lex_expect(p, '[', "to start a list");
    int n = 0;
    while (!is_punct(p, ']')) { /* a ',' must be followed by an entry: no trailing comma */
        if (n == IR_MAX_DIMS) lex_fail(p, &open, "%s: at most %d entries", what, IR_MAX_DIMS);
        if (p->tok.kind == T_IDENT && !strcmp(what, "shape") && sym_ref(p, &p->tok) >= 0) {
            out[n++] = sym_size(p, 0);
        } else if (p->tok.kind == T_IDENT && !strcmp(what, "shape")) { /* a ragged dim: its lengths */
            out[n++] = -1 - lengths_ref(p, &p->tok);
            lex_next(p);
        } else {
            token vt = p->tok;
            out[n++] = parse_int(p, what);
            if (out[n - 1] < 0 && !strcmp(what, "shape"))
                lex_fail(p, &vt, "shape= sizes are positive (a ragged dim is written as its lengths' name)");
            if (!strcmp(what, "shape") && is_punct(p, '*')) out[n - 1] = sym_size(p, out[n - 1]);
        }
        if (is_punct(p, ']')) break;
        lex_expect(p, ',', "between list entries");
        if (is_punct(p, ']')) lex_fail(p, &p->tok, "expected an integer for %s after ','", what);
    }
    lex_next(p);
    return n;
}

/* ---- expressions ---- */

static int parse_expr(parser *p);

/* Does `name =` start a line later in the file? (for "used before its definition")
 * A raw-text heuristic that only picks the message: lookup fails either way. */
static int defined_later(const parser *p, const token *t) {
    for (size_t i = p->pos; i + t->n < p->len; i++) {
        if (p->src[i] != '\n') continue;
        size_t j = i + 1;
        while (j < p->len && (p->src[j] == ' ' || p->src[j] == '\t')) j++;
        if (j + t->n > p->len || memcmp(p->src + j, t->s, t->n)) continue;
        j += t->n;
        if (j < p->len && (isalnum((unsigned char)p->src[j]) || p->src[j] == '_')) continue;
        while (j < p->len && (p->src[j] == ' ' || p->src[j] == '\t')) j++;
        if (j < p->len && p->src[j] == '=') return 1;
    }
    return 0;
}

/* Index of the tensor named t, or an error. fail is _Noreturn, so no return follows it. */
static int lookup(parser *p, const token *t) {
    char name[MAX_NAME + 1];
    memcpy(name, t->s, t->n), name[t->n] = 0;
    int i = ir_find(p->g, name);
    if (i >= 0) return i;
    if (p->outer && ir_find(p->outer, name) >= 0)
        lex_fail(p, t,
                 "'%s' is a kernel-level tensor: read it inside the kernel with iter(%s, ...)",
                 name, name);
    if (p->defining && p->defining->n == t->n && !memcmp(p->defining->s, t->s, t->n))
        lex_fail(p, t, "'%s' is used in its own definition (a program is acyclic)", name);
    if (defined_later(p, t))
        lex_fail(p, t, "'%s' is used before its definition (a program is acyclic: define each "
                 "tensor before using it)", name);
    lex_fail(p, t, "unknown tensor '%s'", name);
}

/* Attribute keys, one table: name, the letter of ops.def's attrs column, and what its value
 * is (an integer, a list of integers, or a decimal number: eps= only). */
enum {
    A_DIM, A_GROUP, A_SHAPE, A_TIMES, A_IMAP, A_FMAP, A_OMAP, A_GRID, A_FORLOOP, A_THREADS,
    A_PERM, A_START, A_LEN, A_EPS, A_COUNT
};
enum { V_INT, V_LIST, V_NUM }; /* an attribute's value: an integer, a list, a decimal */
static const struct {
    const char *name;
    char letter;
    int kind;
} ATTR[A_COUNT] = {{"dim", 'd', V_INT},  {"group", 'g', V_INT}, {"shape", 's', V_LIST},
                   {"times", 't', V_LIST}, {"imap", 'i', V_LIST}, {"fmap", 'f', V_INT},
                   {"omap", 'o', V_LIST}, {"grid", 'r', V_LIST}, {"forloop", 'l', V_INT},
                   {"threads", 'h', V_INT}, {"perm", 'p', V_LIST}, {"start", 'b', V_INT},
                   {"len", 'n', V_INT}, {"eps", 'e', V_NUM}};

/* The key=value attributes of one call as parsed, before check_attrs decides which ones the op
 * takes; has[k] says key k was given (at most once); a decimal's token is num[k]. */
typedef struct attrs {
    int has[A_COUNT], n[A_COUNT];
    int64_t val[A_COUNT];
    int64_t list[A_COUNT][IR_MAX_DIMS];
    token num[A_COUNT];
} attrs;

static int any_attr(const attrs *a) {
    int any = 0;
    for (int k = 0; k < A_COUNT; k++) any |= a->has[k];
    return any;
}

/* Parses one key=value into a. Precondition: the current token is the key and the next
 * non-blank byte is '=' (the caller peeked), so both are skipped unchecked. */
static void parse_attr(parser *p, attrs *a, const token *fn) {
    token key = p->tok;
    lex_next(p); /* key */
    lex_next(p); /* '=' */
    int k = 0;
    while (k < A_COUNT && !is_word(&key, ATTR[k].name)) k++;
    if (k == A_COUNT) {
        char d[64];
        lex_fail(p, &key, "unknown attribute %s of '%.*s' (attributes are dim, group, shape, "
                 "times, imap, fmap, omap, grid, forloop, threads, perm, start, len, eps)",
                 lex_desc(&key, d, sizeof d), (int)fn->n, fn->s);
    }
    if (a->has[k]) lex_fail(p, &key, "attribute '%.*s' given twice", (int)key.n, key.s);
    a->has[k] = 1;
    if (ATTR[k].kind == V_LIST) a->n[k] = parse_int_list(p, a->list[k], ATTR[k].name);
    else if (ATTR[k].kind == V_INT) a->val[k] = parse_int(p, ATTR[k].name);
    else if (p->tok.kind != T_NUM) {
        char d[64];
        lex_fail(p, &p->tok, "%s= takes a decimal number (such as 1e-5), found %s",
                 ATTR[k].name, lex_desc(&p->tok, d, sizeof d));
    } else a->num[k] = p->tok, lex_next(p);
}

/* Rejects attributes the op does not take and reports missing required ones, at the call. */
static void check_attrs(parser *p, const token *fn, const attrs *a, const char *allowed) {
    for (int k = 0; k < A_COUNT; k++) {
        int ok = strchr(allowed, ATTR[k].letter) || strchr(allowed, toupper(ATTR[k].letter));
        int req = strchr(allowed, toupper(ATTR[k].letter)) != NULL;
        if (a->has[k] && !ok)
            lex_fail(p, fn, "'%.*s' takes no attribute '%s'", (int)fn->n, fn->s, ATTR[k].name);
        if (!a->has[k] && req)
            lex_fail(p, fn, "'%.*s' needs the attribute %s=", (int)fn->n, fn->s, ATTR[k].name);
    }
}

/* A grid-dim map (imap, omap) from a list of up to 3 entries, each a dim or -1 (phi). */
static void to_map(parser *p, const token *fn, const attrs *a, int key, int map[3]) {
    map[0] = map[1] = map[2] = -1;
    if (!a->has[key]) return;
    if (a->n[key] > 3)
        lex_fail(p, fn, "%s= has one entry per grid dim x, y, z (at most 3)", ATTR[key].name);
    for (int g = 0; g < a->n[key]; g++) {
        if (a->list[key][g] < -1 || a->list[key][g] >= IR_MAX_DIMS)
            lex_fail(p, fn, "%s= entries are tensor dims or -1 (phi)", ATTR[key].name);
        map[g] = (int)a->list[key][g];
    }
}

/* "add sub ... slice rmsnorm mean rsqrt; in kernels iter accum save": the operators a call
 * may name, from the op table (inputs, constants and kernels have statements of their own),
 * and the parser's own sugar mean and rsqrt. */
static const char *op_list(char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int op = -1; op < IR_OP_COUNT && k < n; op++) {
            if (op < 0) { /* before the pass's operators */
                k += (size_t)snprintf(buf + k, n - k, "%s", pass ? " mean rsqrt; in kernels" : "");
                continue;
            }
            ir_kind kd = ir_ops[op].kind;
            if (kd == IR_KIND_SOURCE || kd == IR_KIND_GRAPH || (kd == IR_KIND_BLOCK) != pass)
                continue;
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? " " : "", ir_ops[op].name);
        }
    return buf;
}

/* Is the current token the key of a key=value? An identifier followed, past blanks, by '=':
 * a peek at the raw text, since the lexer has one token of lookahead. */
static int at_attr(const parser *p) {
    size_t j = p->pos;
    while (j < p->len && (p->src[j] == ' ' || p->src[j] == '\t')) j++;
    return p->tok.kind == T_IDENT && j < p->len && p->src[j] == '=';
}

/* The operator a call to fn names, from the op table (input and const excluded), so a new
 * ops.def row is callable at once, and in *sugar which sugar it is (rmsnorm; IR_OP_COUNT for
 * the parser's own mean and rsqrt). Refuses the names that are not called here: kernel and
 * save are statements, and iter and accum live in kernel blocks. */
static ir_op call_op(parser *p, const token *fn, parse_sugar_kind *sugar) {
    ir_op op = IR_OP_COUNT;
    for (int k = IR_OP_CONST + 1; k < IR_OP_COUNT; k++)
        if (is_word(fn, ir_ops[k].name)) op = (ir_op)k;
    *sugar = parse_sugar_of(fn);
    if (!*sugar && op == IR_OP_COUNT) {
        char d[64], list[256];
        lex_fail(p, fn, "unknown operator %s (operators: %s)", lex_desc(fn, d, sizeof d),
                 op_list(list, sizeof list));
    }
    if (op == IR_OP_KERNEL)
        lex_fail(p, fn,
                 "'kernel' starts a statement: NAME, ... = kernel(INPUTS, grid=[..]) { ... }");
    if (op == IR_OP_SAVE) lex_fail(p, fn, "'save(...)' is a statement of its own inside a kernel");
    if ((op == IR_OP_ITER || op == IR_OP_ACCUM) && !p->g->is_block)
        lex_fail(p, fn, "'%s' is only allowed inside a kernel { ... } block", ir_ops[op].name);
    return op;
}

/* iter(X, ...): X names a kernel input; its index goes to n->index. */
static void iter_input(parser *p, ir_node *n) {
    token x = p->tok;
    n->index = -1;
    for (int k = 0; k < p->g->n_kin; k++)
        if (strlen(p->g->kin_name[k]) == x.n && !memcmp(p->g->kin_name[k], x.s, x.n)) n->index = k;
    if (n->index < 0)
        lex_fail(p, &x, "iter reads a kernel input; '%.*s' is not one of this kernel's inputs",
                 (int)x.n, x.s);
    lex_next(p);
}

/* The arguments of a call to fn up to and including its ')': operands into n->in[], then
 * attributes into a. Operands past IR_MAX_IN are counted but not stored, and the arity check
 * then reports them. Returns the operand count. */
static int parse_args(parser *p, const token *fn, ir_node *n, attrs *a) {
    int args = 0;
    while (!is_punct(p, ')')) {
        if (n->op == IR_OP_ITER && args == 0 && p->tok.kind == T_IDENT) {
            iter_input(p, n);
            args++;
            if (is_punct(p, ',')) lex_next(p);
            continue;
        }
        if (p->tok.kind == T_EOF || p->tok.kind == T_NL) {
            char d[64];
            lex_fail(p, &p->tok, "expected ')' to close '%.*s(', found %s", (int)fn->n, fn->s,
                     lex_desc(&p->tok, d, sizeof d));
        }
        if (p->pos < p->len && at_attr(p)) {
            parse_attr(p, a, fn);
            if (!is_punct(p, ')')) {
                lex_expect(p, ',', "between arguments");
                if (is_punct(p, ')'))
                    lex_fail(p, &p->tok, "expected an operand or attribute after ','");
            }
            continue;
        }
        if (any_attr(a)) lex_fail(p, &p->tok, "operands must come before attributes");
        int v = parse_expr(p);
        if (args < IR_MAX_IN) n->in[args] = v;
        args++;
        if (!is_punct(p, ')') && !is_punct(p, ',')) {
            char d[64];
            lex_fail(p, &p->tok, "expected ',' or ')' to close '%.*s(' (opened at %d:%d), found %s",
                     (int)fn->n, fn->s, fn->line, fn->col, lex_desc(&p->tok, d, sizeof d));
        }
        if (is_punct(p, ',')) {
            lex_next(p);
            if (is_punct(p, ')'))
                lex_fail(p, &p->tok, "expected an operand or attribute after ','");
        }
    }
    lex_next(p); /* ')' */
    return args;
}

/* The checked attributes a into node n. dim= is range-checked loosely here (it must fit an
 * int); infer normalises it against the operand's rank and reports it there with the
 * operand shapes. */
static void set_attrs(parser *p, const token *fn, const attrs *a, ir_node *n) {
    to_map(p, fn, a, A_IMAP, n->map);
    if (a->has[A_DIM]) {
        if (a->val[A_DIM] < -IR_MAX_DIMS || a->val[A_DIM] >= IR_MAX_DIMS)
            lex_fail(p, fn, "dim=%" PRId64 " is out of range", a->val[A_DIM]);
        n->dim = (int)a->val[A_DIM];
    }
    if (a->has[A_GROUP]) {
        if (a->val[A_GROUP] < 1) lex_fail(p, fn, "group= must be at least 1");
        if (a->val[A_GROUP] > IR_MAX_DIM)
            lex_fail(p, fn, "group=%" PRId64 " is too large (at most %" PRId64 ")",
                     a->val[A_GROUP], IR_MAX_DIM);
        n->group = a->val[A_GROUP];
    }
    for (int k = A_SHAPE; k <= A_PERM; k++) /* reshape's new shape, repeat's factors, a perm */
        if ((k <= A_TIMES || k == A_PERM) && a->has[k])
            memcpy(n->ints, a->list[k], sizeof n->ints), n->n_ints = a->n[k];
    if (n->op == IR_OP_SLICE) { /* start= and len= (both required) */
        for (int k = A_START; k <= A_LEN; k++)
            if (a->val[k] < -IR_MAX_DIM || a->val[k] > IR_MAX_DIM)
                lex_fail(p, fn, "%s=%" PRId64 " is out of range", ATTR[k].name, a->val[k]);
        n->ints[0] = a->val[A_START], n->ints[1] = a->val[A_LEN], n->n_ints = 2;
    }
    n->fmap = -1;
    if (a->has[A_FMAP]) {
        if (a->val[A_FMAP] < -1 || a->val[A_FMAP] >= IR_MAX_DIMS)
            lex_fail(p, fn, "fmap= is a tensor dim or -1 (phi)");
        n->fmap = (int)a->val[A_FMAP];
    }
}

/* Parses a call to fn (current token '('): the operator, its arguments, then arity and
 * attributes, checked once the call is closed, at the call's name, so the message can say
 * how many operands were given. rmsnorm, mean and rsqrt are sugar (parse_sugar). */
static int parse_call(parser *p, const token *fn) {
    parse_sugar_kind sugar;
    ir_op op = call_op(p, fn, &sugar);
    lex_next(p); /* '(' */
    attrs a;
    memset(&a, 0, sizeof a);
    ir_node n = {.op = op};
    int args = parse_args(p, fn, &n, &a);
    int want = sugar || op == IR_OP_ITER ? 1 : ir_ops[op].arity;
    if (args != want)
        lex_fail(p, fn, "'%.*s' takes %d operand%s, got %d", (int)fn->n, fn->s, want,
                 want == 1 ? "" : "s", args);
    check_attrs(p, fn, &a, sugar ? parse_sugar_attrs(sugar) : ir_ops[op].attrs);
    if (sugar)
        return parse_sugar(p, fn, sugar, n.in[0], a.has[A_DIM] ? &a.val[A_DIM] : NULL,
                           a.has[A_EPS] ? &a.num[A_EPS] : NULL);
    n.n_in = op == IR_OP_ITER ? 0 : args;
    set_attrs(p, fn, &a, &n);
    return parse_add_node(p, fn, &n);
}

/* primary := NUMBER | NAME | NAME '(' args ')' | '(' expr ')'. A number becomes an anonymous
 * constant node; a name must be defined above, which keeps programs acyclic. */
static int parse_primary(parser *p) {
    token t = p->tok;
    char d[64];
    if (t.kind == T_NUM) {
        lex_next(p);
        char lit[96];
        if (t.n >= sizeof lit) lex_fail(p, &t, "number is too long");
        memcpy(lit, t.s, t.n), lit[t.n] = 0;
        return parse_add_const(p, &t, lit);
    }
    if (is_punct(p, '(')) {
        lex_next(p);
        int v = parse_expr(p);
        if (!is_punct(p, ')'))
            lex_fail(p, &p->tok, "expected ')' to close the '(' opened at %d:%d, found %s", t.line,
                     t.col, lex_desc(&p->tok, d, sizeof d));
        lex_next(p);
        return v;
    }
    if (t.kind == T_IDENT) {
        if (is_word(&t, "input") || is_word(&t, "output"))
            lex_fail(p, &t, "'%.*s' is a keyword; it starts a statement", (int)t.n, t.s);
        lex_next(p);
        if (is_punct(p, '(')) return parse_call(p, &t);
        return lookup(p, &t);
    }
    lex_fail(p, &t, "expected a tensor, a number, an operator call or '(', found %s",
             lex_desc(&t, d, sizeof d));
}

/* unary := '-' unary | primary. A '-' right before a number folds into a negative literal
 * ("-0.5" is one constant and prints back the same); any other negation becomes 0 - x, as the
 * op table has no neg. depth is counted here too because "- - - x" recurses without passing
 * through parse_expr. */
static int parse_unary(parser *p) {
    if (++p->depth > MAX_DEPTH) lex_fail(p, &p->tok, "expression is nested too deeply");
    int v;
    if (is_punct(p, '-')) {
        token t = p->tok;
        lex_next(p);
        if (p->tok.kind == T_NUM) { /* negative literal */
            char lit[96];
            if (p->tok.n + 1 >= sizeof lit) lex_fail(p, &p->tok, "number is too long");
            lit[0] = '-', memcpy(lit + 1, p->tok.s, p->tok.n), lit[p->tok.n + 1] = 0;
            token num = p->tok;
            lex_next(p);
            v = parse_add_const(p, &num, lit);
        } else {
            int x = parse_unary(p);
            v = parse_add_binary(p, &t, IR_OP_SUB, parse_add_const(p, &t, "0"), x);
        }
    } else {
        v = parse_primary(p);
    }
    p->depth--;
    return v;
}

/* term := unary {('*' | '/') unary}, left-associative: a / b / c is (a / b) / c. */
static int parse_term(parser *p) {
    int v = parse_unary(p);
    while (is_punct(p, '*') || is_punct(p, '/')) {
        token op = p->tok;
        lex_next(p);
        v = parse_add_binary(p, &op, op.s[0] == '*' ? IR_OP_MUL : IR_OP_DIV, v, parse_unary(p));
    }
    return v;
}

/* expr := term {('+' | '-') term}, left-associative; the entry point for every expression. */
static int parse_expr(parser *p) {
    if (++p->depth > MAX_DEPTH) lex_fail(p, &p->tok, "expression is nested too deeply");
    int v = parse_term(p);
    while (is_punct(p, '+') || is_punct(p, '-')) {
        token op = p->tok;
        lex_next(p);
        v = parse_add_binary(p, &op, op.s[0] == '+' ? IR_OP_ADD : IR_OP_SUB, v, parse_term(p));
    }
    p->depth--;
    return v;
}

/* ---- statements ---- */

/* Copies the identifier t into out (MAX_NAME + 1 bytes: lex_next() bounds the length). */
static void name_of(parser *p, const token *t, char *out) {
    if (t->kind != T_IDENT) {
        char d[64];
        lex_fail(p, t, "expected a name, found %s", lex_desc(t, d, sizeof d));
    }
    memcpy(out, t->s, t->n), out[t->n] = 0;
}

/* input NAME ':' DTYPE '[' sizes ']' ['range' '=' NUMBER] (keyword consumed). Sizes are
 * range-checked here so the error points at the size; ir_add_input adds the element-count
 * bound. The position is set afterwards because ir_add_input takes none. */
static void parse_input(parser *p) {
    char name[MAX_NAME + 1];
    token nt = p->tok;
    name_of(p, &nt, name);
    lex_next(p);
    lex_expect(p, ':', "after the input's name (input X : f16[2, 4096])");
    token tt = p->tok;
    int dt = tt.kind == T_IDENT ? ir_dtype_parse(tt.s, tt.n) : -1;
    if (dt < 0) {
        char d[64];
        lex_fail(p, &tt, "unknown dtype %s (dtypes: f16, bf16, f32)", lex_desc(&tt, d, sizeof d));
    }
    lex_next(p);
    ir_shape s = {0};
    token open = p->tok;
    lex_expect(p, '[', "to start the shape");
    while (!is_punct(p, ']')) {
        if (s.ndim == IR_MAX_DIMS) lex_fail(p, &open, "tensors have at most %d dims", IR_MAX_DIMS);
        token dtok = p->tok;
        if (dtok.kind == T_IDENT && sym_ref(p, &dtok) >= 0) { /* a symbolic dim, at its binding */
            s.d[s.ndim++] = sym_size(p, 0);
            if (is_punct(p, ']')) break;
            lex_expect(p, ',', "between dimension sizes");
            continue;
        }
        if (dtok.kind == T_IDENT) { /* a ragged dim: lengths NAME's, up to its maximum */
            int k = lengths_ref(p, &dtok);
            s.rag[s.ndim] = (signed char)(k + 1), s.d[s.ndim++] = p->g->lens[k].max;
            lex_next(p);
            if (is_punct(p, ']')) break;
            lex_expect(p, ',', "between dimension sizes");
            continue;
        }
        int64_t v = parse_int(p, "a dimension size");
        if (v < 1 || v > IR_MAX_DIM)
            lex_fail(p, &dtok, "dimension size %" PRId64 " is out of range [1, %" PRId64 "]", v,
                     IR_MAX_DIM);
        if (is_punct(p, '*')) v = sym_size(p, v);
        s.d[s.ndim++] = v;
        if (is_punct(p, ']')) break;
        lex_expect(p, ',', "between dimension sizes");
        if (is_punct(p, ']')) lex_fail(p, &p->tok, "expected a dimension size after ','");
    }
    lex_next(p);
    double range = 1; /* random test inputs' half-width (ir_input_range) */
    if (p->tok.kind == T_IDENT && is_word(&p->tok, "range")) {
        lex_next(p);
        lex_expect(p, '=', "after range (input W : f16[4096, 4096] range=0.0156)");
        token rt = p->tok;
        char buf[64], d[64];
        if (rt.kind != T_NUM || rt.n >= sizeof buf)
            lex_fail(p, &rt, "range= takes a positive decimal number (its random test values are "
                     "uniform in [-range, range)), found %s", lex_desc(&rt, d, sizeof d));
        memcpy(buf, rt.s, rt.n), buf[rt.n] = 0;
        range = strtod(buf, NULL);
        if (!(range > 0) || !isfinite(range) || range > 1e30)
            lex_fail(p, &rt, "range= must be positive and at most 1e30, not %s", buf);
        lex_next(p);
    }
    int rc = ir_add_input(p->g, p->ctx, name, (mg_dtype)dt, &s);
    if (rc < 0) lex_fail_ctx(p, &nt, (mg_status)-rc);
    p->g->nodes[rc].line = nt.line, p->g->nodes[rc].col = nt.col;
    ir_set_input_range(p->g, rc, range);
}

/* lengths NAME '[' COUNT ']' max '=' MAX (keyword consumed): a batch of COUNT sequences whose
 * lengths, each at most MAX, come at run time (docs/ragged.md). */
static void parse_lengths(parser *p) {
    char name[MAX_NAME + 1];
    token nt = p->tok;
    name_of(p, &nt, name);
    lex_next(p);
    lex_expect(p, '[', "after the lengths' name (lengths len[32] max=512)");
    token ct = p->tok;
    int64_t count = parse_int(p, "the number of sequences");
    lex_expect(p, ']', "after the number of sequences");
    if (!is_word(&p->tok, "max")) lex_fail(p, &p->tok, "expected max=MAX (the longest a sequence may be)");
    lex_next(p);
    lex_expect(p, '=', "after max");
    token mt = p->tok;
    int64_t max = parse_int(p, "the maximum length");
    int rc = ir_add_lengths(p->g, p->ctx, name, count, max, nt.line, nt.col);
    if (rc < 0) lex_fail_ctx(p, count < 1 || count > IR_MAX_DIM ? &ct : max < 1 || max > IR_MAX_DIM ? &mt : &nt, (mg_status)-rc);
}

/* dim NAME '[' LO ',' HI ']' (keyword consumed): a size each call gives, in [LO, HI]; bound to
 * the parse's binding (ir_parse_text_at), else HI. */
static void parse_dim(parser *p) {
    char name[MAX_NAME + 1];
    token nt = p->tok;
    name_of(p, &nt, name);
    lex_next(p);
    lex_expect(p, '[', "after the dim's name (dim B [1, 512])");
    token lt = p->tok;
    int64_t lo = parse_int(p, "the smallest size");
    lex_expect(p, ',', "between the smallest and the largest size");
    token ht = p->tok;
    int64_t hi = parse_int(p, "the largest size");
    lex_expect(p, ']', "after the largest size");
    int k = p->g->n_syms;
    int64_t v = k < p->n_bind && p->bind[k] > 0 ? p->bind[k] : hi;
    int rc = ir_add_sym(p->g, p->ctx, name, lo, hi, v, p->probe, nt.line, nt.col);
    if (rc < 0) lex_fail_ctx(p, lo < 1 || lo > IR_MAX_DIM ? &lt : hi < lo || hi > IR_MAX_DIM ? &ht : &nt, (mg_status)-rc);
}

/* output NAME {',' NAME}: every name must be defined above; naming one twice is an error. */
static void parse_output(parser *p) {
    for (;;) {
        token t = p->tok;
        char name[MAX_NAME + 1];
        name_of(p, &t, name);
        lex_next(p);
        int i = lookup(p, &t);
        int rc = ir_add_output(p->g, p->ctx, i);
        if (rc < 0) lex_fail_ctx(p, &t, (mg_status)-rc);
        if (!is_punct(p, ',')) break;
        lex_next(p);
    }
}

/* NAME '=' expr: the expression's result node takes the name. An expression that creates no
 * node ("Y = X", "Y = (X)") would only add an alias, and a node has one name, so it is
 * refused. */
static void parse_assign(parser *p, const token *nt);

/* save(EXPR, omap=[..]): a saver of the block graph being parsed; the k-th save is the
 * kernel's k-th output. */
static void parse_save(parser *p) {
    token fn = p->tok;
    lex_next(p); /* 'save' */
    lex_expect(p, '(', "after 'save'");
    ir_node n = {.op = IR_OP_SAVE, .n_in = 1, .fmap = -1, .index = p->g->n_outputs};
    n.in[0] = parse_expr(p);
    attrs a;
    memset(&a, 0, sizeof a);
    if (is_punct(p, ',')) {
        lex_next(p);
        if (p->tok.kind != T_IDENT) lex_fail(p, &p->tok, "expected omap=[...] after ','");
        parse_attr(p, &a, &fn);
    }
    lex_expect(p, ')', "to close 'save('");
    check_attrs(p, &fn, &a, ir_ops[IR_OP_SAVE].attrs);
    to_map(p, &fn, &a, A_OMAP, n.map);
    int i = parse_add_node(p, &fn, &n);
    int rc = ir_add_output(p->g, p->ctx, i);
    if (rc < 0) lex_fail_ctx(p, &fn, (mg_status)-rc);
}

/* kernel's arguments up to and including ')': the input tensors into in[] (returns their
 * count), then the attributes into a, checked against the kernel's. */
static int kernel_args(parser *p, const token *kw, int *in, attrs *a) {
    int n_in = 0;
    while (!is_punct(p, ')')) {
        token t = p->tok;
        if (at_attr(p)) parse_attr(p, a, kw);
        else {
            if (any_attr(a)) lex_fail(p, &t, "kernel inputs must come before attributes");
            if (t.kind != T_IDENT) lex_fail(p, &t, "kernel inputs are tensor names");
            if (n_in == IR_MAX_IN) lex_fail(p, &t, "a kernel reads at most %d tensors", IR_MAX_IN);
            lex_next(p);
            in[n_in++] = lookup(p, &t);
        }
        if (is_punct(p, ')')) break;
        lex_expect(p, ',', "between kernel arguments");
    }
    lex_next(p); /* ')' */
    check_attrs(p, kw, a, ir_ops[IR_OP_KERNEL].attrs);
    return n_in;
}

/* The schedule a kernel's grid=, forloop= and threads= give, range-checked. */
static void kernel_schedule(parser *p, const token *kw, const attrs *a, int grid[3],
                            int64_t *forloop, int64_t *threads) {
    grid[0] = grid[1] = grid[2] = 1;
    if (a->n[A_GRID] < 1 || a->n[A_GRID] > 3) lex_fail(p, kw, "grid= lists 1 to 3 sizes (x, y, z)");
    for (int g = 0; g < a->n[A_GRID]; g++) {
        if (a->list[A_GRID][g] < 1 || a->list[A_GRID][g] > 65535)
            lex_fail(p, kw, "grid sizes are in [1, 65535]");
        grid[g] = (int)a->list[A_GRID][g];
    }
    *forloop = a->has[A_FORLOOP] ? a->val[A_FORLOOP] : 1;
    *threads = a->has[A_THREADS] ? a->val[A_THREADS] : 128;
    if (*forloop < 1) lex_fail(p, kw, "forloop= must be at least 1");
    if (*forloop > IR_MAX_DIM)
        lex_fail(p, kw, "forloop=%" PRId64 " is too large (at most %" PRId64 ")", *forloop,
                 IR_MAX_DIM);
    if (*threads < 1 || *threads > 1024) lex_fail(p, kw, "threads= must be in [1, 1024]");
}

/* The statements of a kernel's block graph (p->g), up to and including the '}' closing the
 * '{' at open: NAME = EXPR (block operators, iter, accum) and save(...). */
static void block_statements(parser *p, const token *open) {
    for (;;) {
        while (p->tok.kind == T_NL) lex_next(p);
        token t = p->tok;
        char d[64];
        if (is_punct(p, '}')) break;
        if (t.kind == T_EOF)
            lex_fail(p, &t, "expected '}' to close the kernel block opened at %d:%d", open->line,
                     open->col);
        if (is_word(&t, "save")) parse_save(p);
        else if (t.kind == T_IDENT) {
            lex_next(p);
            if (!is_punct(p, '='))
                lex_fail(p, &p->tok, "expected '=' after '%.*s' (kernel blocks hold NAME = EXPR "
                         "and save(...) statements), found %s", (int)t.n, t.s,
                         lex_desc(&p->tok, d, sizeof d));
            parse_assign(p, &t);
        } else
            lex_fail(p, &t, "expected a block-graph statement or '}', found %s",
                     lex_desc(&t, d, sizeof d));
        if (p->tok.kind != T_NL && !is_punct(p, '}'))
            lex_fail(p, &p->tok, "expected end of line, found %s", lex_desc(&p->tok, d, sizeof d));
    }
    lex_next(p); /* '}' */
}

/* Adds the complete block graph body (owned here: freed on a failure) to p->g as the kernel's
 * output nodes, named names[0..n_names). */
static void kernel_outputs(parser *p, const token *kw, ir_graph *body, const int *in, int n_in,
                           const token *names, int n_names) {
    int saves = body->n_outputs; /* read before body is freed: the message needs it */
    if (saves != n_names) {
        ir_graph_free(body);
        lex_fail(p, kw, "the kernel saves %d tensor%s but %d name%s given", saves,
                 saves == 1 ? "" : "s", n_names, n_names == 1 ? " is" : "s are");
    }
    char buf[IR_MAX_IN][MAX_NAME + 1];
    const char *nm[IR_MAX_IN];
    for (int k = 0; k < n_names; k++) {
        memcpy(buf[k], names[k].s, names[k].n), buf[k][names[k].n] = 0, nm[k] = buf[k];
        if (ir_find(p->g, nm[k]) >= 0) {
            ir_graph_free(body);
            lex_fail(p, &names[k], "duplicate name '%s'", nm[k]);
        }
    }
    int r = ir_add_kernel(p->g, p->ctx, body, in, n_in, nm, names[0].line, names[0].col);
    if (r < 0) lex_fail_ctx(p, kw, (mg_status)-r); /* body was freed or is owned by p->g */
}

/* NAME {, NAME} = kernel(INPUT {, INPUT}, grid=[x, y, z], forloop=N, threads=N) {
 *     block-graph statements: NAME = EXPR (block operators, iter, accum) and save(...)
 * }
 * A graph-defined kernel operator (Mirage §2): the names receive the savers' results in
 * order. The block graph is parsed into its own graph (own names); p->outer is the kernel
 * graph meanwhile, so a failure frees both (ir_parse_text). */
static void parse_kernel(parser *p, const token *names, int n_names) {
    token kw = p->tok;
    lex_next(p); /* 'kernel' */
    lex_expect(p, '(', "after 'kernel'");
    int in[IR_MAX_IN];
    attrs a;
    memset(&a, 0, sizeof a);
    int n_in = kernel_args(p, &kw, in, &a), grid[3];
    int64_t forloop, threads;
    kernel_schedule(p, &kw, &a, grid, &forloop, &threads);
    token open = p->tok;
    lex_expect(p, '{', "to open the kernel's block graph");
    if (p->tok.kind != T_NL) lex_fail(p, &p->tok, "the block graph starts on the line after '{'");
    ir_graph *body = ir_block_new(grid, (int)threads, forloop);
    if (!body) lex_fail_at(p, MG_ERR_NOMEM, kw.off, kw.line, kw.col, "out of memory");
    ir_graph *outer = p->g;
    p->g = body, p->outer = outer; /* from here a failure frees body too */
    for (int k = 0; k < n_in; k++) {
        const ir_node *x = &outer->nodes[in[k]];
        char lb[128];
        int r = ir_block_add_kin(body, p->ctx, ir_node_label(outer, in[k], lb, sizeof lb),
                                 x->dtype, &x->shape);
        if (r < 0) lex_fail_ctx(p, &kw, (mg_status)-r);
    }
    block_statements(p, &open);
    p->g = outer, p->outer = NULL;
    kernel_outputs(p, &kw, body, in, n_in, names, n_names);
}

static void parse_assign(parser *p, const token *nt) {
    char name[MAX_NAME + 1];
    name_of(p, nt, name);
    if (is_word(nt, "input") || is_word(nt, "output"))
        lex_fail(p, nt, "'%s' is a keyword and cannot name a tensor", name);
    lex_next(p); /* '=' */
    if (is_word(&p->tok, "kernel") && !p->outer) {
        parse_kernel(p, nt, 1);
        return;
    }
    /* a redefinition is reported first, before any error in the right-hand side */
    int prev = ir_find(p->g, name);
    if (prev >= 0) {
        const ir_node *pn = &p->g->nodes[prev];
        lex_fail(p, nt, "duplicate name '%s' (first defined at line %d)", name, pn->line);
    }
    int n0 = p->g->n_nodes;
    p->defining = nt;
    int v = parse_expr(p);
    p->defining = NULL;
    if (p->tok.kind != T_NL && p->tok.kind != T_EOF) {
        char d[64];
        lex_fail(p, &p->tok, "expected an operator or end of line, found %s",
                 lex_desc(&p->tok, d, sizeof d));
    }
    if (p->g->nodes[v].name || v < n0)
        lex_fail(p, nt, "'%s = ...' only renames an existing tensor; use it directly", name);
    int rc = ir_set_name(p->g, p->ctx, v, name);
    if (rc < 0) lex_fail_ctx(p, nt, (mg_status)-rc);
    p->g->nodes[v].line = nt->line, p->g->nodes[v].col = nt->col;
}

/* program := {[statement] NEWLINE}. 'input' and 'output' are keywords only when a name
 * follows, so "input = ..." reaches parse_assign, which rejects it with a clearer message. */
static void parse_program(parser *p) {
    lex_next(p);
    while (p->tok.kind != T_EOF) {
        token t = p->tok;
        char d[64];
        if (t.kind == T_NL) {
            lex_next(p);
            continue;
        }
        if (t.kind != T_IDENT)
            lex_fail(p, &t, "expected a statement (input, output or NAME = ...), found %s",
                     lex_desc(&t, d, sizeof d));
        lex_next(p);
        int kw = is_word(&t, "input") || is_word(&t, "output") || is_word(&t, "lengths") || is_word(&t, "dim");
        if (is_word(&t, "input") && p->tok.kind == T_IDENT) parse_input(p);
        else if (is_word(&t, "lengths") && p->tok.kind == T_IDENT && !p->outer) parse_lengths(p);
        else if (is_word(&t, "dim") && p->tok.kind == T_IDENT && !p->outer) parse_dim(p);
        else if (is_word(&t, "output") && p->tok.kind == T_IDENT) parse_output(p);
        else if (is_punct(p, '=')) parse_assign(p, &t);
        else if (is_punct(p, ',')) { /* A, B = kernel(...) { ... } */
            token names[IR_MAX_IN];
            int n = 0;
            names[n++] = t;
            while (is_punct(p, ',')) {
                lex_next(p);
                if (p->tok.kind != T_IDENT)
                    lex_fail(p, &p->tok, "expected a tensor name after ','");
                if (n == IR_MAX_IN)
                    lex_fail(p, &p->tok, "a kernel has at most %d outputs", IR_MAX_IN);
                names[n++] = p->tok;
                lex_next(p);
            }
            lex_expect(p, '=', "after the kernel's output names");
            if (!is_word(&p->tok, "kernel"))
                lex_fail(p, &p->tok, "only a kernel(...) { } gives several tensors");
            parse_kernel(p, names, n);
        }
        else if (kw)
            lex_fail(p, &p->tok, "expected a tensor name after '%.*s', found %s", (int)t.n, t.s,
                     lex_desc(&p->tok, d, sizeof d));
        else
            lex_fail(p, &p->tok, "expected '=' after '%.*s' (statements are input, output or "
                     "NAME = expression), found %s", (int)t.n, t.s, lex_desc(&p->tok, d, sizeof d));
        if (p->tok.kind != T_NL && p->tok.kind != T_EOF)
            lex_fail(p, &p->tok, "expected end of line, found %s", lex_desc(&p->tok, d, sizeof d));
    }
    /* An empty program, or one without an output line, is refused: every consumer (printers,
     * evaluators, partitioner) works from the outputs. */
    if (p->g->n_outputs == 0) {
        token t = p->tok;
        lex_fail(p, &t, "program has no outputs (add 'output NAME')");
    }
}

mg_status ir_parse_text(mg_ctx *ctx, const char *text, size_t len, const char *file,
                        ir_graph **out) {
    return ir_parse_text_at(ctx, text, len, file, NULL, 0, 0, out);
}

mg_status ir_parse_text_at(mg_ctx *ctx, const char *text, size_t len, const char *file,
                           const int64_t *val, int n_val, int probe, ir_graph **out) {
    parser *p = base_calloc(1, sizeof *p); /* jmp_buf is large; keep it off the stack */
    if (!p) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    p->ctx = ctx, p->src = text, p->len = len, p->file = file ? file : "<input>";
    p->bind = val, p->n_bind = val ? n_val : 0, p->probe = probe;
    p->line = 1;
    p->g = ir_graph_new();
    /* Ownership: on success the graph moves to *out and p->g becomes NULL, so the cleanup
     * below frees only the parser; after a longjmp p->g still holds the partial graph, freed
     * there. Nothing needs volatile: p's fields live on the heap, and no local is modified
     * between setjmp and a longjmp. */
    mg_status rc = MG_OK;
    if (!p->g) {
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    } else if (setjmp(p->jb) == 0) {
        parse_program(p);
        *out = p->g;
        p->g = NULL;
    } else {
        rc = p->rc;
    }
    if (p->outer) { /* failed inside a kernel block: free the block graph and the program */
        ir_graph_free(p->g);
        p->g = p->outer;
    }
    ir_graph_free(p->g);
    base_free(p);
    return rc;
}
