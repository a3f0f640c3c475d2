/* parse: .mu program text -> kernel graph (docs/ir.md has the grammar).
 *
 * Recursive descent over a hand-written lexer. Errors unwind with longjmp to ir_parse_text
 * (as Lua's parser does), which frees the partial graph; every message is
 * "file:line:col: error: ...", the source line and a caret under the spot (chibicc style).
 * Shape errors found while adding a node are reported at the operator's position. */
#include <ctype.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

enum { T_EOF, T_NL, T_IDENT, T_NUM, T_PUNCT };
enum { MAX_DEPTH = 200, MAX_NAME = 255 };

typedef struct token {
    int kind;
    const char *s;
    size_t n;
    size_t off;
    int line, col;
} token;

typedef struct parser {
    mg_ctx *ctx;
    const char *src, *file;
    size_t len, pos, line_start;
    int line, paren;
    token tok;
    ir_graph *g;
    int depth;
    mg_status rc;
    jmp_buf jb;
} parser;

/* Renders "file:line:col: error: msg" + the source line + caret into ctx and unwinds. */
static _Noreturn void fail_at(parser *p, mg_status rc, size_t off, int line, int col,
                              const char *msg) {
    size_t b = off > p->len ? p->len : off, e = b;
    while (b > 0 && p->src[b - 1] != '\n') b--;
    while (e < p->len && p->src[e] != '\n') e++;
    size_t from = b, caret = off - b;
    if (caret > 60) from = off - 40, caret = 40 + 3; /* long line: show a window */
    char src[160], mark[160];
    size_t k = 0;
    if (from > b) memcpy(src, "...", 3), k = 3;
    for (size_t i = from; i < e && k < 120; i++) {
        unsigned char c = (unsigned char)p->src[i];
        src[k++] = c == '\t' ? '\t' : (c < 32 || c > 126) ? '?' : (char)c;
    }
    src[k] = 0;
    if (caret > k) caret = k;
    for (size_t i = 0; i < caret; i++) mark[i] = src[i] == '\t' ? '\t' : ' ';
    mark[caret] = '^', mark[caret + 1] = 0;
    ctx_err(p->ctx, rc, "%s:%d:%d: error: %s\n  %s\n  %s", p->file, line, col, msg, src, mark);
    p->rc = rc;
    longjmp(p->jb, 1);
}

static _Noreturn void fail(parser *p, const token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static _Noreturn void fail(parser *p, const token *t, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fail_at(p, MG_ERR_PARSE, t->off, t->line, t->col, msg);
}

/* Re-raises the message a graph call left in ctx, positioned at t. */
static _Noreturn void fail_ctx(parser *p, const token *t, mg_status rc) {
    char msg[sizeof p->ctx->msg];
    snprintf(msg, sizeof msg, "%s", p->ctx ? p->ctx->msg : "error");
    fail_at(p, rc ? rc : MG_ERR_PARSE, t->off, t->line, t->col, msg);
}

static const char *tok_desc(const token *t, char *buf, size_t n) {
    if (t->kind == T_EOF) return "end of file";
    if (t->kind == T_NL) return "end of line";
    size_t m = t->n > 40 ? 40 : t->n;
    size_t k = 0;
    buf[k++] = '\'';
    for (size_t i = 0; i < m && k + 5 < n; i++) {
        unsigned char c = (unsigned char)t->s[i];
        if (c < 32 || c > 126) k += (size_t)snprintf(buf + k, n - k, "\\x%02x", c);
        else buf[k++] = (char)c;
    }
    snprintf(buf + k, n - k, "%s'", t->n > 40 ? "..." : "");
    return buf;
}

/* ---- lexer ---- */

static void next(parser *p) {
    for (;;) {
        while (p->pos < p->len && (p->src[p->pos] == ' ' || p->src[p->pos] == '\t' ||
                                   p->src[p->pos] == '\r'))
            p->pos++;
        if (p->pos < p->len && p->src[p->pos] == '#')
            while (p->pos < p->len && p->src[p->pos] != '\n') p->pos++;
        if (p->pos < p->len && p->src[p->pos] == '\n' && p->paren > 0) {
            p->pos++, p->line++, p->line_start = p->pos; /* newlines inside ( ) [ ] */
            continue;
        }
        break;
    }
    token *t = &p->tok;
    t->off = p->pos, t->s = p->src + p->pos, t->line = p->line;
    t->col = (int)(p->pos - p->line_start + 1);
    if (p->pos >= p->len) {
        t->kind = T_EOF, t->n = 0;
        return;
    }
    unsigned char c = (unsigned char)p->src[p->pos];
    size_t s = p->pos;
    if (c == '\n') {
        t->kind = T_NL, t->n = 1;
        p->pos++, p->line++, p->line_start = p->pos;
        return;
    }
    if (isalpha(c) || c == '_') {
        while (p->pos < p->len && (isalnum((unsigned char)p->src[p->pos]) || p->src[p->pos] == '_'))
            p->pos++;
        t->kind = T_IDENT, t->n = p->pos - s;
        if (t->n > MAX_NAME) fail(p, t, "name is longer than %d characters", MAX_NAME);
        return;
    }
    if (isdigit(c) || (c == '.' && p->pos + 1 < p->len && isdigit((unsigned char)p->src[p->pos + 1]))) {
        while (p->pos < p->len && (isdigit((unsigned char)p->src[p->pos]) || p->src[p->pos] == '.'))
            p->pos++;
        if (p->pos < p->len && (p->src[p->pos] == 'e' || p->src[p->pos] == 'E')) {
            p->pos++;
            if (p->pos < p->len && (p->src[p->pos] == '+' || p->src[p->pos] == '-')) p->pos++;
            while (p->pos < p->len && isdigit((unsigned char)p->src[p->pos])) p->pos++;
        }
        t->kind = T_NUM, t->n = p->pos - s;
        if (p->pos < p->len && (isalpha((unsigned char)p->src[p->pos]) || p->src[p->pos] == '_'))
            fail(p, t, "malformed number");
        return;
    }
    if (strchr("()[],=:+-*/", c) && c) {
        t->kind = T_PUNCT, t->n = 1, p->pos++;
        if (c == '(' || c == '[') p->paren++;
        if ((c == ')' || c == ']') && p->paren > 0) p->paren--;
        return;
    }
    t->kind = T_PUNCT, t->n = 1;
    char d[64];
    fail(p, t, "unexpected character %s", tok_desc(t, d, sizeof d));
}

static int is_punct(const parser *p, char c) {
    return p->tok.kind == T_PUNCT && p->tok.s[0] == c;
}
static int is_word(const token *t, const char *w) {
    return t->kind == T_IDENT && strlen(w) == t->n && !memcmp(t->s, w, t->n);
}
static void expect(parser *p, char c, const char *context) {
    if (!is_punct(p, c)) {
        char d[64];
        fail(p, &p->tok, "expected '%c' %s, found %s", c, context, tok_desc(&p->tok, d, sizeof d));
    }
    next(p);
}
/* An integer in a dim list or attribute, with an optional leading '-'. */
static int64_t parse_int(parser *p, const char *what) {
    token t = p->tok;
    int neg = 0;
    if (is_punct(p, '-')) neg = 1, next(p);
    if (p->tok.kind != T_NUM) {
        char d[64];
        fail(p, &p->tok, "expected an integer for %s, found %s", what, tok_desc(&p->tok, d, sizeof d));
    }
    int64_t v = 0;
    for (size_t i = 0; i < p->tok.n; i++) {
        char c = p->tok.s[i];
        if (c < '0' || c > '9') fail(p, &p->tok, "%s must be an integer", what);
        if (v > (INT64_MAX - 9) / 10) fail(p, &t, "%s is too large", what);
        v = v * 10 + (c - '0');
    }
    next(p);
    return neg ? -v : v;
}

/* '[' int, ... ']' into out; returns the count. */
static int parse_int_list(parser *p, int64_t *out, const char *what) {
    token open = p->tok;
    expect(p, '[', "to start a list");
    int n = 0;
    while (!is_punct(p, ']')) {
        if (n == IR_MAX_DIMS) fail(p, &open, "%s: at most %d entries", what, IR_MAX_DIMS);
        out[n++] = parse_int(p, what);
        if (!is_punct(p, ']')) expect(p, ',', "between list entries");
    }
    next(p);
    return n;
}

/* ---- expressions ---- */

static int parse_expr(parser *p);

static int add_node(parser *p, const token *at, ir_node *n) {
    n->line = at->line, n->col = at->col;
    int i = ir_add_node(p->g, p->ctx, n);
    if (i < 0) fail_ctx(p, at, (mg_status)-i);
    return i;
}
static int add_binary(parser *p, const token *at, ir_op op, int a, int b) {
    ir_node n = {.op = op, .n_in = 2, .in = {a, b}};
    return add_node(p, at, &n);
}
static int add_const(parser *p, const token *at, const char *lit) {
    int i = ir_add_const(p->g, p->ctx, lit, at->line, at->col);
    if (i < 0) fail_ctx(p, at, (mg_status)-i);
    return i;
}

/* Does `name =` start a line later in the file? (for "used before its definition") */
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

static int lookup(parser *p, const token *t) {
    char name[MAX_NAME + 1];
    memcpy(name, t->s, t->n), name[t->n] = 0;
    int i = ir_find(p->g, name);
    if (i >= 0) return i;
    if (defined_later(p, t))
        fail(p, t, "'%s' is used before its definition (a program is acyclic: define each "
             "tensor before using it)", name);
    fail(p, t, "unknown tensor '%s'", name);
}

typedef struct attrs {
    int has_dim, has_group, has_shape, has_times;
    int64_t dim, group;
    int n_shape, n_times;
    int64_t shape[IR_MAX_DIMS], times[IR_MAX_DIMS];
    token at;
} attrs;

static void parse_attr(parser *p, attrs *a, const token *fn) {
    token key = p->tok;
    next(p); /* key */
    next(p); /* '=' */
    int *seen = NULL;
    if (is_word(&key, "dim")) seen = &a->has_dim, a->dim = parse_int(p, "dim");
    else if (is_word(&key, "group")) seen = &a->has_group, a->group = parse_int(p, "group");
    else if (is_word(&key, "shape")) seen = &a->has_shape, a->n_shape = parse_int_list(p, a->shape, "shape");
    else if (is_word(&key, "times")) seen = &a->has_times, a->n_times = parse_int_list(p, a->times, "times");
    else {
        char d[64];
        fail(p, &key, "unknown attribute %s of '%.*s' (attributes are dim, group, shape, times)",
             tok_desc(&key, d, sizeof d), (int)fn->n, fn->s);
    }
    if (*seen) fail(p, &key, "attribute '%.*s' given twice", (int)key.n, key.s);
    *seen = 1;
}

/* Which attributes each function takes: d dim, g group, s shape, t times; upper = required. */
static const char *fn_attrs(ir_op op) {
    switch (op) {
    case IR_OP_SUM: return "Dg";
    case IR_OP_MAX: case IR_OP_CONCAT: return "D";
    case IR_OP_RESHAPE: return "S";
    case IR_OP_REPEAT: return "T";
    default: return "";
    }
}

static void check_attrs(parser *p, const token *fn, const attrs *a, const char *allowed) {
    const char *keys = "dgst";
    const int given[] = {a->has_dim, a->has_group, a->has_shape, a->has_times};
    const char *names[] = {"dim", "group", "shape", "times"};
    for (int k = 0; k < 4; k++) {
        int ok = strchr(allowed, keys[k]) || strchr(allowed, toupper(keys[k]));
        int req = strchr(allowed, toupper(keys[k])) != NULL;
        if (given[k] && !ok)
            fail(p, fn, "'%.*s' takes no attribute '%s'", (int)fn->n, fn->s, names[k]);
        if (!given[k] && req)
            fail(p, fn, "'%.*s' needs the attribute %s=", (int)fn->n, fn->s, names[k]);
    }
}

/* rmsnorm(X, dim=d) = X / sqrt(sum(sqr(X), dim=d) / n); mean(X, dim=d) = sum / n. */
static int expand_sugar(parser *p, const token *fn, int x, const attrs *a) {
    ir_node s = {.op = IR_OP_SQR, .n_in = 1, .in = {x}};
    const ir_shape *sh = &p->g->nodes[x].shape;
    int64_t d = a->has_dim ? a->dim : -1;
    if (d < 0) d += sh->ndim;
    if (d < 0 || d >= sh->ndim)
        fail(p, fn, "'%.*s': dim=%" PRId64 " is out of range for a rank-%d tensor", (int)fn->n,
             fn->s, a->has_dim ? a->dim : -1, sh->ndim);
    char lit[32];
    snprintf(lit, sizeof lit, "%" PRId64, sh->d[d]);
    int is_rms = is_word(fn, "rmsnorm");
    int v = is_rms ? add_node(p, fn, &s) : x;
    ir_node r = {.op = IR_OP_SUM, .n_in = 1, .in = {v}, .dim = (int)d};
    int m = add_binary(p, fn, IR_OP_DIV, add_node(p, fn, &r), add_const(p, fn, lit));
    if (!is_rms) return m;
    ir_node q = {.op = IR_OP_SQRT, .n_in = 1, .in = {m}};
    return add_binary(p, fn, IR_OP_DIV, x, add_node(p, fn, &q));
}

static int parse_call(parser *p, const token *fn) {
    int sugar = is_word(fn, "rmsnorm") || is_word(fn, "mean");
    ir_op op = IR_OP_COUNT;
    for (int k = IR_OP_CONST + 1; k < IR_OP_COUNT && !sugar; k++)
        if (is_word(fn, ir_ops[k].name)) op = (ir_op)k;
    if (!sugar && op == IR_OP_COUNT) {
        char d[64];
        fail(p, fn, "unknown operator %s (operators: add sub mul div exp sqr sqrt silu relu "
             "matmul sum max repeat reshape concat rmsnorm mean)", tok_desc(fn, d, sizeof d));
    }
    next(p); /* '(' */
    attrs a = {.at = *fn};
    ir_node n = {.op = op};
    int args = 0;
    while (!is_punct(p, ')')) {
        if (p->tok.kind == T_EOF || p->tok.kind == T_NL) {
            char d[64];
            fail(p, &p->tok, "expected ')' to close '%.*s(', found %s", (int)fn->n, fn->s,
                 tok_desc(&p->tok, d, sizeof d));
        }
        if (p->tok.kind == T_IDENT && p->pos < p->len) {
            /* key=value? peek past blanks for '=' */
            size_t j = p->pos;
            while (j < p->len && (p->src[j] == ' ' || p->src[j] == '\t')) j++;
            if (j < p->len && p->src[j] == '=') {
                parse_attr(p, &a, fn);
                if (!is_punct(p, ')')) expect(p, ',', "between arguments");
                continue;
            }
        }
        if (a.has_dim + a.has_group + a.has_shape + a.has_times)
            fail(p, &p->tok, "operands must come before attributes");
        int v = parse_expr(p);
        if (args < IR_MAX_IN) n.in[args] = v;
        args++;
        if (!is_punct(p, ')') && !is_punct(p, ',')) {
            char d[64];
            fail(p, &p->tok, "expected ',' or ')' to close '%.*s(' (opened at %d:%d), found %s",
                 (int)fn->n, fn->s, fn->line, fn->col, tok_desc(&p->tok, d, sizeof d));
        }
        if (is_punct(p, ',')) next(p);
    }
    next(p); /* ')' */
    int want = sugar ? 1 : ir_ops[op].arity;
    if (args != want)
        fail(p, fn, "'%.*s' takes %d operand%s, got %d", (int)fn->n, fn->s, want,
             want == 1 ? "" : "s", args);
    check_attrs(p, fn, &a, sugar ? "d" : fn_attrs(op));
    if (sugar) return expand_sugar(p, fn, n.in[0], &a);
    n.n_in = args;
    if (a.has_dim) {
        if (a.dim < -IR_MAX_DIMS || a.dim >= IR_MAX_DIMS)
            fail(p, fn, "dim=%" PRId64 " is out of range", a.dim);
        n.dim = (int)a.dim;
    }
    if (a.has_group) {
        if (a.group < 1) fail(p, fn, "group= must be at least 1");
        n.group = a.group;
    }
    if (a.has_shape) memcpy(n.ints, a.shape, sizeof n.ints), n.n_ints = a.n_shape;
    if (a.has_times) memcpy(n.ints, a.times, sizeof n.ints), n.n_ints = a.n_times;
    return add_node(p, fn, &n);
}

static int parse_primary(parser *p) {
    token t = p->tok;
    char d[64];
    if (t.kind == T_NUM) {
        next(p);
        char lit[96];
        if (t.n >= sizeof lit) fail(p, &t, "number is too long");
        memcpy(lit, t.s, t.n), lit[t.n] = 0;
        return add_const(p, &t, lit);
    }
    if (is_punct(p, '(')) {
        next(p);
        int v = parse_expr(p);
        expect(p, ')', "to close '('");
        return v;
    }
    if (t.kind == T_IDENT) {
        if (is_word(&t, "input") || is_word(&t, "output"))
            fail(p, &t, "'%.*s' is a keyword; it starts a statement", (int)t.n, t.s);
        next(p);
        if (is_punct(p, '(')) return parse_call(p, &t);
        return lookup(p, &t);
    }
    fail(p, &t, "expected a tensor, a number, an operator call or '(', found %s",
         tok_desc(&t, d, sizeof d));
}

static int parse_unary(parser *p) {
    if (++p->depth > MAX_DEPTH) fail(p, &p->tok, "expression is nested too deeply");
    int v;
    if (is_punct(p, '-')) {
        token t = p->tok;
        next(p);
        if (p->tok.kind == T_NUM) { /* negative literal */
            char lit[96];
            if (p->tok.n + 1 >= sizeof lit) fail(p, &p->tok, "number is too long");
            lit[0] = '-', memcpy(lit + 1, p->tok.s, p->tok.n), lit[p->tok.n + 1] = 0;
            token num = p->tok;
            next(p);
            v = add_const(p, &num, lit);
        } else {
            int x = parse_unary(p);
            v = add_binary(p, &t, IR_OP_SUB, add_const(p, &t, "0"), x);
        }
    } else {
        v = parse_primary(p);
    }
    p->depth--;
    return v;
}

static int parse_term(parser *p) {
    int v = parse_unary(p);
    while (is_punct(p, '*') || is_punct(p, '/')) {
        token op = p->tok;
        next(p);
        v = add_binary(p, &op, op.s[0] == '*' ? IR_OP_MUL : IR_OP_DIV, v, parse_unary(p));
    }
    return v;
}

static int parse_expr(parser *p) {
    if (++p->depth > MAX_DEPTH) fail(p, &p->tok, "expression is nested too deeply");
    int v = parse_term(p);
    while (is_punct(p, '+') || is_punct(p, '-')) {
        token op = p->tok;
        next(p);
        v = add_binary(p, &op, op.s[0] == '+' ? IR_OP_ADD : IR_OP_SUB, v, parse_term(p));
    }
    p->depth--;
    return v;
}

/* ---- statements ---- */

static void name_of(parser *p, const token *t, char *out) {
    if (t->kind != T_IDENT) {
        char d[64];
        fail(p, t, "expected a name, found %s", tok_desc(t, d, sizeof d));
    }
    memcpy(out, t->s, t->n), out[t->n] = 0;
}

static void parse_input(parser *p) {
    char name[MAX_NAME + 1];
    token nt = p->tok;
    name_of(p, &nt, name);
    next(p);
    expect(p, ':', "after the input's name (input X : f16[2, 4096])");
    token tt = p->tok;
    int dt = tt.kind == T_IDENT ? ir_dtype_parse(tt.s, tt.n) : -1;
    if (dt < 0) {
        char d[64];
        fail(p, &tt, "unknown dtype %s (dtypes: f16, bf16, f32)", tok_desc(&tt, d, sizeof d));
    }
    next(p);
    ir_shape s = {0};
    token open = p->tok;
    expect(p, '[', "to start the shape");
    while (!is_punct(p, ']')) {
        if (s.ndim == IR_MAX_DIMS) fail(p, &open, "tensors have at most %d dims", IR_MAX_DIMS);
        token dtok = p->tok;
        int64_t v = parse_int(p, "a dimension size");
        if (v < 1 || v > IR_MAX_DIM)
            fail(p, &dtok, "dimension size %" PRId64 " is out of range [1, %" PRId64 "]", v,
                 IR_MAX_DIM);
        s.d[s.ndim++] = v;
        if (!is_punct(p, ']')) expect(p, ',', "between dimension sizes");
    }
    next(p);
    int rc = ir_add_input(p->g, p->ctx, name, (mg_dtype)dt, &s);
    if (rc < 0) fail_ctx(p, &nt, (mg_status)-rc);
    p->g->nodes[rc].line = nt.line, p->g->nodes[rc].col = nt.col;
}

static void parse_output(parser *p) {
    for (;;) {
        token t = p->tok;
        char name[MAX_NAME + 1];
        name_of(p, &t, name);
        next(p);
        int i = lookup(p, &t);
        int rc = ir_add_output(p->g, p->ctx, i);
        if (rc < 0) fail_ctx(p, &t, (mg_status)-rc);
        if (!is_punct(p, ',')) break;
        next(p);
    }
}

static void parse_assign(parser *p, const token *nt) {
    char name[MAX_NAME + 1];
    name_of(p, nt, name);
    if (is_word(nt, "input") || is_word(nt, "output"))
        fail(p, nt, "'%s' is a keyword and cannot name a tensor", name);
    next(p); /* '=' */
    int prev = ir_find(p->g, name);
    if (prev >= 0) {
        const ir_node *pn = &p->g->nodes[prev];
        fail(p, nt, "duplicate name '%s' (first defined at line %d)", name, pn->line);
    }
    int n0 = p->g->n_nodes;
    int v = parse_expr(p);
    if (p->g->nodes[v].name || v < n0)
        fail(p, nt, "'%s = ...' only renames an existing tensor; use it directly", name);
    int rc = ir_set_name(p->g, p->ctx, v, name);
    if (rc < 0) fail_ctx(p, nt, (mg_status)-rc);
    p->g->nodes[v].line = nt->line, p->g->nodes[v].col = nt->col;
}

static void parse_program(parser *p) {
    next(p);
    while (p->tok.kind != T_EOF) {
        token t = p->tok;
        char d[64];
        if (t.kind == T_NL) {
            next(p);
            continue;
        }
        if (t.kind != T_IDENT)
            fail(p, &t, "expected a statement (input, output or NAME = ...), found %s",
                 tok_desc(&t, d, sizeof d));
        next(p);
        if (is_word(&t, "input") && p->tok.kind == T_IDENT) parse_input(p);
        else if (is_word(&t, "output") && p->tok.kind == T_IDENT) parse_output(p);
        else if (is_punct(p, '=')) parse_assign(p, &t);
        else
            fail(p, &p->tok, "expected '=' after '%.*s' (statements are input, output or "
                 "NAME = expression), found %s", (int)t.n, t.s, tok_desc(&p->tok, d, sizeof d));
        if (p->tok.kind != T_NL && p->tok.kind != T_EOF)
            fail(p, &p->tok, "expected end of line, found %s", tok_desc(&p->tok, d, sizeof d));
    }
    if (p->g->n_outputs == 0) {
        token t = p->tok;
        fail(p, &t, "program has no outputs (add 'output NAME')");
    }
}

mg_status ir_parse_text(mg_ctx *ctx, const char *text, size_t len, const char *file,
                        ir_graph **out) {
    parser *p = base_calloc(1, sizeof *p); /* jmp_buf is large; keep it off the stack */
    if (!p) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    p->ctx = ctx, p->src = text, p->len = len, p->file = file ? file : "<input>";
    p->line = 1;
    p->g = ir_graph_new();
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
    ir_graph_free(p->g);
    base_free(p);
    return rc;
}
