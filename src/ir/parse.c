/* parse: .mu program text -> kernel graph (docs/ir.md has the grammar).
 *
 * Recursive descent over a hand-written lexer. Errors unwind with longjmp to ir_parse_text
 * (as Lua's parser does), which frees the partial graph; every message is
 * "file:line:col: error: ...", the source line and a caret under the spot (chibicc style).
 * Shape errors found while adding a node are reported at the operator's position.
 *
 * Memory: the parser struct and the graph are the only heap objects. Tokens point into the
 * source text and every other value lives on the C stack, so unwinding with longjmp skips no
 * cleanup: ir_parse_text frees the graph, whose arena holds every name and literal copied so
 * far. Recursion depth is bounded (MAX_DEPTH) so hostile input cannot overflow the C stack. */
#include <ctype.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

/* Token kinds: T_NL ends a statement, T_PUNCT is always one character. MAX_DEPTH bounds the
 * nesting of expressions and MAX_NAME the length of a name (docs/ir.md). */
enum { T_EOF, T_NL, T_IDENT, T_NUM, T_PUNCT };
enum { MAX_DEPTH = 200, MAX_NAME = 255 };

/* A token is a view into the source: s[0..n) is not NUL-terminated and lives as long as the
 * text. off is the byte offset of its first character; line and col (1-based) are what
 * messages show. */
typedef struct token {
    int kind;
    const char *s;
    size_t n;
    size_t off;
    int line, col;
} token;

/* Invariants: pos <= len; line_start is the offset where the current line begins, so a column
 * is pos - line_start + 1; paren counts the ( and [ open at pos (never negative) and, while it
 * is positive, newlines are blanks. tok is the one token of lookahead. depth counts nested
 * parse_expr / parse_unary calls. rc and jb carry an error from fail_at back to the setjmp in
 * ir_parse_text. */
typedef struct parser {
    mg_ctx *ctx;
    const char *src, *file;
    size_t len, pos, line_start;
    int line, paren;
    token tok;
    ir_graph *g;
    int depth;
    ir_graph *outer; /* inside a kernel { } block: the kernel graph; p->g is the block graph */
    const token *defining; /* the name being assigned, while its expression is parsed */
    mg_status rc;
    jmp_buf jb;
} parser;

/* Renders "file:line:col: error: msg" + the source line + caret into ctx and unwinds.
 * Only the line around off is shown: when the caret would sit past column 60 the window starts
 * 40 bytes before it, behind "...", and at most 120 bytes are copied. Control and non-ASCII
 * bytes print as '?', and tabs are copied into the caret line as well, so that a terminal
 * expands both lines alike and the caret stays under the spot. */
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
    /* the spot may lie past the copied text: at the line's end, or beyond the 120-byte cut */
    if (caret > k) caret = k;
    for (size_t i = 0; i < caret; i++) mark[i] = src[i] == '\t' ? '\t' : ' ';
    mark[caret] = '^', mark[caret + 1] = 0;
    ctx_err(p->ctx, rc, "%s:%d:%d: error: %s\n  %s\n  %s", p->file, line, col, msg, src, mark);
    p->rc = rc;
    longjmp(p->jb, 1);
}

/* A syntax error at token t (MG_ERR_PARSE): formats the message and unwinds via fail_at. */
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

/* Re-raises the message a graph call left in ctx, positioned at t: errors found by ir.c
 * (shapes, limits, duplicate names) keep their status rc. The message is copied out first
 * because fail_at formats into the same ctx->msg buffer. */
static _Noreturn void fail_ctx(parser *p, const token *t, mg_status rc) {
    char msg[sizeof p->ctx->msg];
    snprintf(msg, sizeof msg, "%s", p->ctx ? p->ctx->msg : "error");
    fail_at(p, rc ? rc : MG_ERR_PARSE, t->off, t->line, t->col, msg);
}

/* Describes t for "found ..." messages: "end of file", "end of line" or the token quoted, cut at
 * 40 characters, non-printable bytes written as \xNN; k + 5 < n keeps room for one escape and
 * the closing quote. */
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

/* Advances p->tok. Blanks and '#' comments are skipped; a newline is a token (it ends a
 * statement) except inside ( ) or [ ], where it is skipped so that calls and lists can span
 * lines; line tracking advances either way. Names are bounded by MAX_NAME here, so every later
 * copy into a MAX_NAME + 1 buffer is safe. */
static void next(parser *p) {
    /* skip blanks, a comment, and newlines inside brackets, until none of them is next */
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
    /* Numbers are lexed loosely (digits and dots, then an optional exponent) and validated by
     * parse_decimal when the constant is added, so "1.2.3" is rejected there; a letter right
     * after a number ("2x") is rejected here rather than read as a name. */
    if (isdigit(c) || (c == '.' && p->pos + 1 < p->len && isdigit((unsigned char)p->src[p->pos + 1]))) {
        int dots = 0, exp_digits = 1;
        while (p->pos < p->len && (isdigit((unsigned char)p->src[p->pos]) || p->src[p->pos] == '.'))
            dots += p->src[p->pos++] == '.';
        if (p->pos < p->len && (p->src[p->pos] == 'e' || p->src[p->pos] == 'E')) {
            p->pos++;
            if (p->pos < p->len && (p->src[p->pos] == '+' || p->src[p->pos] == '-')) p->pos++;
            for (exp_digits = 0; p->pos < p->len && isdigit((unsigned char)p->src[p->pos]); p->pos++)
                exp_digits++;
        }
        t->kind = T_NUM, t->n = p->pos - s;
        int glued = p->pos < p->len && (isalnum((unsigned char)p->src[p->pos]) ||
                                        p->src[p->pos] == '_' || p->src[p->pos] == '.');
        if (dots > 1 || !exp_digits || glued) {
            char d[64];
            t->n += (size_t)glued; /* show the character that does not belong */
            fail(p, t, "malformed number %s", tok_desc(t, d, sizeof d));
        }
        return;
    }
    /* c != 0 because strchr would match the string's terminating NUL. paren never goes below 0,
     * so a stray ')' cannot hide the newlines of later lines. */
    if (strchr("()[],=:+-*/{}", c) && c) {
        t->kind = T_PUNCT, t->n = 1, p->pos++;
        if (c == '(' || c == '[') p->paren++;
        if ((c == ')' || c == ']') && p->paren > 0) p->paren--;
        return;
    }
    t->kind = T_PUNCT, t->n = 1;
    char d[64];
    fail(p, t, "unexpected character %s", tok_desc(t, d, sizeof d));
}

/* Token tests: the current token is the punctuation c; t is exactly the identifier w. */
static int is_punct(const parser *p, char c) {
    return p->tok.kind == T_PUNCT && p->tok.s[0] == c;
}
static int is_word(const token *t, const char *w) {
    return t->kind == T_IDENT && strlen(w) == t->n && !memcmp(t->s, w, t->n);
}
/* Consumes the punctuation c, or fails with "expected 'c' <context>, found ...". */
static void expect(parser *p, char c, const char *context) {
    if (!is_punct(p, c)) {
        char d[64];
        fail(p, &p->tok, "expected '%c' %s, found %s", c, context, tok_desc(&p->tok, d, sizeof d));
    }
    next(p);
}
/* An integer in a dim list or attribute, with an optional leading '-'. The caller checks the
 * range. The overflow test is conservative ((INT64_MAX - 9) / 10) so v * 10 + digit never
 * overflows; "too large" points at t, where the integer (or its '-') starts. */
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

/* '[' int, ... ']' into out; returns the count. out holds IR_MAX_DIMS entries and more is an
 * error at the '['. "[]" gives 0, and a trailing comma ("[2, 4,]") is accepted. */
static int parse_int_list(parser *p, int64_t *out, const char *what) {
    token open = p->tok;
    expect(p, '[', "to start a list");
    int n = 0;
    while (!is_punct(p, ']')) { /* a ',' must be followed by an entry: no trailing comma */
        if (n == IR_MAX_DIMS) fail(p, &open, "%s: at most %d entries", what, IR_MAX_DIMS);
        out[n++] = parse_int(p, what);
        if (is_punct(p, ']')) break;
        expect(p, ',', "between list entries");
        if (is_punct(p, ']')) fail(p, &p->tok, "expected an integer for %s after ','", what);
    }
    next(p);
    return n;
}

/* ---- expressions ---- */

static int parse_expr(parser *p);

/* Graph calls from the parser: they stamp the source position on the node (used by labels in
 * later messages) and turn a failure into an error at that position, which unwinds. */
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
        fail(p, t, "'%s' is a kernel-level tensor: read it inside the kernel with iter(%s, ...)",
             name, name);
    if (p->defining && p->defining->n == t->n && !memcmp(p->defining->s, t->s, t->n))
        fail(p, t, "'%s' is used in its own definition (a program is acyclic)", name);
    if (defined_later(p, t))
        fail(p, t, "'%s' is used before its definition (a program is acyclic: define each "
             "tensor before using it)", name);
    fail(p, t, "unknown tensor '%s'", name);
}

/* Attribute keys, one table: name, the letter of ops.def's attrs column, and whether it takes a
 * list. */
enum { A_DIM, A_GROUP, A_SHAPE, A_TIMES, A_IMAP, A_FMAP, A_OMAP, A_GRID, A_FORLOOP, A_THREADS, A_COUNT };
static const struct {
    const char *name;
    char letter;
    int list;
} ATTR[A_COUNT] = {{"dim", 'd', 0},  {"group", 'g', 0}, {"shape", 's', 1},   {"times", 't', 1},
                   {"imap", 'i', 1}, {"fmap", 'f', 0},  {"omap", 'o', 1},    {"grid", 'r', 1},
                   {"forloop", 'l', 0}, {"threads", 'h', 0}};

/* The key=value attributes of one call as parsed, before check_attrs decides which ones the op
 * takes; has[k] says key k was given (at most once). */
typedef struct attrs {
    int has[A_COUNT], n[A_COUNT];
    int64_t val[A_COUNT];
    int64_t list[A_COUNT][IR_MAX_DIMS];
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
    next(p); /* key */
    next(p); /* '=' */
    int k = 0;
    while (k < A_COUNT && !is_word(&key, ATTR[k].name)) k++;
    if (k == A_COUNT) {
        char d[64];
        fail(p, &key, "unknown attribute %s of '%.*s' (attributes are dim, group, shape, times, "
             "imap, fmap, omap, grid, forloop, threads)", tok_desc(&key, d, sizeof d), (int)fn->n, fn->s);
    }
    if (a->has[k]) fail(p, &key, "attribute '%.*s' given twice", (int)key.n, key.s);
    a->has[k] = 1;
    if (ATTR[k].list) a->n[k] = parse_int_list(p, a->list[k], ATTR[k].name);
    else a->val[k] = parse_int(p, ATTR[k].name);
}

/* Rejects attributes the op does not take and reports missing required ones, at the call. */
static void check_attrs(parser *p, const token *fn, const attrs *a, const char *allowed) {
    for (int k = 0; k < A_COUNT; k++) {
        int ok = strchr(allowed, ATTR[k].letter) || strchr(allowed, toupper(ATTR[k].letter));
        int req = strchr(allowed, toupper(ATTR[k].letter)) != NULL;
        if (a->has[k] && !ok)
            fail(p, fn, "'%.*s' takes no attribute '%s'", (int)fn->n, fn->s, ATTR[k].name);
        if (!a->has[k] && req)
            fail(p, fn, "'%.*s' needs the attribute %s=", (int)fn->n, fn->s, ATTR[k].name);
    }
}

/* A grid-dim map (imap, omap) from a list of up to 3 entries, each a dim or -1 (phi). */
static void to_map(parser *p, const token *fn, const attrs *a, int key, int map[3]) {
    map[0] = map[1] = map[2] = -1;
    if (!a->has[key]) return;
    if (a->n[key] > 3) fail(p, fn, "%s= has one entry per grid dim x, y, z (at most 3)", ATTR[key].name);
    for (int g = 0; g < a->n[key]; g++) {
        if (a->list[key][g] < -1 || a->list[key][g] >= IR_MAX_DIMS)
            fail(p, fn, "%s= entries are tensor dims or -1 (phi)", ATTR[key].name);
        map[g] = (int)a->list[key][g];
    }
}

/* rmsnorm(X, dim=d) = X / sqrt(sum(sqr(X), dim=d) / n); mean(X, dim=d) = sum / n.
 * dim defaults to the last one and may be negative. n, the size of the reduced dim, becomes
 * a decimal constant, so both evaluators divide by exactly that value. Every node of the
 * expansion is positioned at the call, so an error inside it points there. */
static int expand_sugar(parser *p, const token *fn, int x, const attrs *a) {
    ir_node s = {.op = IR_OP_SQR, .n_in = 1, .in = {x}};
    const ir_shape *sh = &p->g->nodes[x].shape;
    int64_t d = a->has[A_DIM] ? a->val[A_DIM] : -1;
    if (d < 0) d += sh->ndim;
    if (d < 0 || d >= sh->ndim)
        fail(p, fn, "'%.*s': dim=%" PRId64 " is out of range for a rank-%d tensor", (int)fn->n,
             fn->s, d, sh->ndim);
    char lit[32];
    snprintf(lit, sizeof lit, "%" PRId64, sh->d[d]);
    int is_rms = is_word(fn, ir_ops[IR_OP_RMSNORM].name);
    int v = is_rms ? add_node(p, fn, &s) : x;
    ir_node r = {.op = IR_OP_SUM, .n_in = 1, .in = {v}, .dim = (int)d};
    int m = add_binary(p, fn, IR_OP_DIV, add_node(p, fn, &r), add_const(p, fn, lit));
    if (!is_rms) return m;
    ir_node q = {.op = IR_OP_SQRT, .n_in = 1, .in = {m}};
    return add_binary(p, fn, IR_OP_DIV, x, add_node(p, fn, &q));
}

/* "add sub ... concat rmsnorm mean; in kernels iter accum save": the operators a call may
 * name, from the op table (inputs, constants and kernels have statements of their own), and
 * the parser's own sugar mean. */
static const char *op_list(char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int op = -1; op < IR_OP_COUNT && k < n; op++) {
            if (op < 0) { /* before the pass's operators */
                k += (size_t)snprintf(buf + k, n - k, "%s", pass ? " mean; in kernels" : "");
                continue;
            }
            ir_kind kd = ir_ops[op].kind;
            if (kd == IR_KIND_SOURCE || kd == IR_KIND_GRAPH || (kd == IR_KIND_BLOCK) != pass)
                continue;
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? " " : "", ir_ops[op].name);
        }
    return buf;
}

/* Parses the arguments of a call to fn (current token '('). Operator names come from the op
 * table (input and const excluded), so a new ops.def row is callable at once. A compound
 * (rmsnorm) and mean are sugar. Operands come first, then attributes; an identifier is a key
 * when the next non-blank byte is '=', a peek at the raw text since the lexer has one token
 * of lookahead. Operands past IR_MAX_IN are counted but not stored, and the arity check then
 * reports them. */
static int parse_call(parser *p, const token *fn) {
    ir_op op = IR_OP_COUNT;
    for (int k = IR_OP_CONST + 1; k < IR_OP_COUNT; k++)
        if (is_word(fn, ir_ops[k].name)) op = (ir_op)k;
    int mean = is_word(fn, "mean");
    int sugar = mean || (op != IR_OP_COUNT && ir_ops[op].kind == IR_KIND_COMPOUND);
    if (!mean && op == IR_OP_COUNT) {
        char d[64], list[256];
        fail(p, fn, "unknown operator %s (operators: %s)", tok_desc(fn, d, sizeof d),
             op_list(list, sizeof list));
    }
    if (op == IR_OP_KERNEL)
        fail(p, fn, "'kernel' starts a statement: NAME, ... = kernel(INPUTS, grid=[..]) { ... }");
    if (op == IR_OP_SAVE) fail(p, fn, "'save(...)' is a statement of its own inside a kernel");
    if ((op == IR_OP_ITER || op == IR_OP_ACCUM) && !p->g->is_block)
        fail(p, fn, "'%s' is only allowed inside a kernel { ... } block", ir_ops[op].name);
    next(p); /* '(' */
    attrs a;
    memset(&a, 0, sizeof a);
    ir_node n = {.op = op};
    int args = 0;
    while (!is_punct(p, ')')) {
        if (op == IR_OP_ITER && args == 0 && p->tok.kind == T_IDENT) { /* iter(X, ...): X names a kernel input */
            token x = p->tok;
            n.index = -1;
            for (int k = 0; k < p->g->n_kin; k++)
                if (strlen(p->g->kin_name[k]) == x.n && !memcmp(p->g->kin_name[k], x.s, x.n)) n.index = k;
            if (n.index < 0)
                fail(p, &x, "iter reads a kernel input; '%.*s' is not one of this kernel's inputs",
                     (int)x.n, x.s);
            next(p);
            args++;
            if (is_punct(p, ',')) next(p);
            continue;
        }
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
                if (!is_punct(p, ')')) {
                    expect(p, ',', "between arguments");
                    if (is_punct(p, ')'))
                        fail(p, &p->tok, "expected an operand or attribute after ','");
                }
                continue;
            }
        }
        if (any_attr(&a))
            fail(p, &p->tok, "operands must come before attributes");
        int v = parse_expr(p);
        if (args < IR_MAX_IN) n.in[args] = v;
        args++;
        if (!is_punct(p, ')') && !is_punct(p, ',')) {
            char d[64];
            fail(p, &p->tok, "expected ',' or ')' to close '%.*s(' (opened at %d:%d), found %s",
                 (int)fn->n, fn->s, fn->line, fn->col, tok_desc(&p->tok, d, sizeof d));
        }
        if (is_punct(p, ',')) {
            next(p);
            if (is_punct(p, ')')) fail(p, &p->tok, "expected an operand or attribute after ','");
        }
    }
    next(p); /* ')' */
    /* Arity and attributes are checked once the call is closed, at the call's name: the
     * message can then say how many operands were given. */
    int want = sugar || op == IR_OP_ITER ? 1 : ir_ops[op].arity;
    if (args != want)
        fail(p, fn, "'%.*s' takes %d operand%s, got %d", (int)fn->n, fn->s, want,
             want == 1 ? "" : "s", args);
    check_attrs(p, fn, &a, mean ? "d" : ir_ops[op].attrs);
    if (sugar) return expand_sugar(p, fn, n.in[0], &a);
    n.n_in = op == IR_OP_ITER ? 0 : args;
    to_map(p, fn, &a, A_IMAP, n.map);
    /* dim= is range-checked loosely here (it must fit an int); infer normalises it against
     * the operand's rank and reports it there with the operand shapes. */
    if (a.has[A_DIM]) {
        if (a.val[A_DIM] < -IR_MAX_DIMS || a.val[A_DIM] >= IR_MAX_DIMS)
            fail(p, fn, "dim=%" PRId64 " is out of range", a.val[A_DIM]);
        n.dim = (int)a.val[A_DIM];
    }
    if (a.has[A_GROUP]) {
        if (a.val[A_GROUP] < 1) fail(p, fn, "group= must be at least 1");
        n.group = a.val[A_GROUP];
    }
    if (a.has[A_SHAPE]) memcpy(n.ints, a.list[A_SHAPE], sizeof n.ints), n.n_ints = a.n[A_SHAPE];
    if (a.has[A_TIMES]) memcpy(n.ints, a.list[A_TIMES], sizeof n.ints), n.n_ints = a.n[A_TIMES];
    n.fmap = -1;
    if (a.has[A_FMAP]) {
        if (a.val[A_FMAP] < -1 || a.val[A_FMAP] >= IR_MAX_DIMS)
            fail(p, fn, "fmap= is a tensor dim or -1 (phi)");
        n.fmap = (int)a.val[A_FMAP];
    }
    return add_node(p, fn, &n);
}

/* primary := NUMBER | NAME | NAME '(' args ')' | '(' expr ')'. A number becomes an anonymous
 * constant node; a name must be defined above, which keeps programs acyclic. */
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
        if (!is_punct(p, ')'))
            fail(p, &p->tok, "expected ')' to close the '(' opened at %d:%d, found %s", t.line,
                 t.col, tok_desc(&p->tok, d, sizeof d));
        next(p);
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

/* unary := '-' unary | primary. A '-' right before a number folds into a negative literal
 * ("-0.5" is one constant and prints back the same); any other negation becomes 0 - x, as the
 * op table has no neg. depth is counted here too because "- - - x" recurses without passing
 * through parse_expr. */
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

/* term := unary {('*' | '/') unary}, left-associative: a / b / c is (a / b) / c. */
static int parse_term(parser *p) {
    int v = parse_unary(p);
    while (is_punct(p, '*') || is_punct(p, '/')) {
        token op = p->tok;
        next(p);
        v = add_binary(p, &op, op.s[0] == '*' ? IR_OP_MUL : IR_OP_DIV, v, parse_unary(p));
    }
    return v;
}

/* expr := term {('+' | '-') term}, left-associative; the entry point for every expression. */
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

/* Copies the identifier t into out (MAX_NAME + 1 bytes: next() bounds the length). */
static void name_of(parser *p, const token *t, char *out) {
    if (t->kind != T_IDENT) {
        char d[64];
        fail(p, t, "expected a name, found %s", tok_desc(t, d, sizeof d));
    }
    memcpy(out, t->s, t->n), out[t->n] = 0;
}

/* input NAME ':' DTYPE '[' sizes ']' (keyword consumed). Sizes are range-checked here so the
 * error points at the size; ir_add_input adds the element-count bound. The position is set
 * afterwards because ir_add_input takes none. */
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
        if (is_punct(p, ']')) break;
        expect(p, ',', "between dimension sizes");
        if (is_punct(p, ']')) fail(p, &p->tok, "expected a dimension size after ','");
    }
    next(p);
    int rc = ir_add_input(p->g, p->ctx, name, (mg_dtype)dt, &s);
    if (rc < 0) fail_ctx(p, &nt, (mg_status)-rc);
    p->g->nodes[rc].line = nt.line, p->g->nodes[rc].col = nt.col;
}

/* output NAME {',' NAME}: every name must be defined above; naming one twice is an error. */
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

/* NAME '=' expr: the expression's result node takes the name. An expression that creates no
 * node ("Y = X", "Y = (X)") would only add an alias, and a node has one name, so it is
 * refused. */
static void parse_assign(parser *p, const token *nt);

/* save(EXPR, omap=[..]): a saver of the block graph being parsed; the k-th save is the
 * kernel's k-th output. */
static void parse_save(parser *p) {
    token fn = p->tok;
    next(p); /* 'save' */
    expect(p, '(', "after 'save'");
    ir_node n = {.op = IR_OP_SAVE, .n_in = 1, .fmap = -1, .index = p->g->n_outputs};
    n.in[0] = parse_expr(p);
    attrs a;
    memset(&a, 0, sizeof a);
    if (is_punct(p, ',')) {
        next(p);
        if (p->tok.kind != T_IDENT) fail(p, &p->tok, "expected omap=[...] after ','");
        parse_attr(p, &a, &fn);
    }
    expect(p, ')', "to close 'save('");
    check_attrs(p, &fn, &a, ir_ops[IR_OP_SAVE].attrs);
    to_map(p, &fn, &a, A_OMAP, n.map);
    int i = add_node(p, &fn, &n);
    int rc = ir_add_output(p->g, p->ctx, i);
    if (rc < 0) fail_ctx(p, &fn, (mg_status)-rc);
}

/* NAME {, NAME} = kernel(INPUT {, INPUT}, grid=[x, y, z], forloop=N, threads=N) {
 *     block-graph statements: NAME = EXPR (block operators, iter, accum) and save(...)
 * }
 * A graph-defined kernel operator (Mirage §2): the names receive the savers' results in
 * order. The block graph is parsed into its own graph (own names); p->outer is the kernel
 * graph meanwhile, so a failure frees both (ir_parse_text). */
static void parse_kernel(parser *p, const token *names, int n_names) {
    token kw = p->tok;
    next(p); /* 'kernel' */
    expect(p, '(', "after 'kernel'");
    int in[IR_MAX_IN], n_in = 0;
    attrs a;
    memset(&a, 0, sizeof a);
    while (!is_punct(p, ')')) {
        token t = p->tok;
        size_t j = p->pos;
        while (j < p->len && (p->src[j] == ' ' || p->src[j] == '\t')) j++;
        if (t.kind == T_IDENT && j < p->len && p->src[j] == '=') parse_attr(p, &a, &kw);
        else {
            if (any_attr(&a)) fail(p, &t, "kernel inputs must come before attributes");
            if (t.kind != T_IDENT) fail(p, &t, "kernel inputs are tensor names");
            if (n_in == IR_MAX_IN) fail(p, &t, "a kernel reads at most %d tensors", IR_MAX_IN);
            next(p);
            in[n_in++] = lookup(p, &t);
        }
        if (is_punct(p, ')')) break;
        expect(p, ',', "between kernel arguments");
    }
    next(p); /* ')' */
    check_attrs(p, &kw, &a, ir_ops[IR_OP_KERNEL].attrs);
    int grid[3] = {1, 1, 1};
    if (a.n[A_GRID] < 1 || a.n[A_GRID] > 3) fail(p, &kw, "grid= lists 1 to 3 sizes (x, y, z)");
    for (int g = 0; g < a.n[A_GRID]; g++) {
        if (a.list[A_GRID][g] < 1 || a.list[A_GRID][g] > 65535) fail(p, &kw, "grid sizes are in [1, 65535]");
        grid[g] = (int)a.list[A_GRID][g];
    }
    int64_t forloop = a.has[A_FORLOOP] ? a.val[A_FORLOOP] : 1;
    int64_t threads = a.has[A_THREADS] ? a.val[A_THREADS] : 128;
    if (forloop < 1 || forloop > IR_MAX_DIM) fail(p, &kw, "forloop= must be at least 1");
    if (threads < 1 || threads > 1024) fail(p, &kw, "threads= must be in [1, 1024]");
    token open = p->tok;
    expect(p, '{', "to open the kernel's block graph");
    if (p->tok.kind != T_NL) fail(p, &p->tok, "the block graph starts on the line after '{'");
    ir_graph *body = ir_block_new(grid, (int)threads, forloop);
    if (!body) fail_at(p, MG_ERR_NOMEM, kw.off, kw.line, kw.col, "out of memory");
    ir_graph *outer = p->g;
    p->g = body, p->outer = outer; /* from here a failure frees body too */
    for (int k = 0; k < n_in; k++) {
        const ir_node *x = &outer->nodes[in[k]];
        char lb[128];
        int r = ir_block_add_kin(body, p->ctx, ir_node_label(outer, in[k], lb, sizeof lb), x->dtype, &x->shape);
        if (r < 0) fail_ctx(p, &kw, (mg_status)-r);
    }
    for (;;) {
        while (p->tok.kind == T_NL) next(p);
        token t = p->tok;
        char d[64];
        if (is_punct(p, '}')) break;
        if (t.kind == T_EOF)
            fail(p, &t, "expected '}' to close the kernel block opened at %d:%d", open.line, open.col);
        if (is_word(&t, "save")) parse_save(p);
        else if (t.kind == T_IDENT) {
            next(p);
            if (!is_punct(p, '='))
                fail(p, &p->tok, "expected '=' after '%.*s' (kernel blocks hold NAME = EXPR and "
                     "save(...) statements), found %s", (int)t.n, t.s, tok_desc(&p->tok, d, sizeof d));
            parse_assign(p, &t);
        } else
            fail(p, &t, "expected a block-graph statement or '}', found %s", tok_desc(&t, d, sizeof d));
        if (p->tok.kind != T_NL && !is_punct(p, '}'))
            fail(p, &p->tok, "expected end of line, found %s", tok_desc(&p->tok, d, sizeof d));
    }
    next(p); /* '}' */
    p->g = outer, p->outer = NULL;
    if (body->n_outputs != n_names) {
        ir_graph_free(body);
        fail(p, &kw, "the kernel saves %d tensor%s but %d name%s given", body->n_outputs,
             body->n_outputs == 1 ? "" : "s", n_names, n_names == 1 ? " is" : "s are");
    }
    char buf[IR_MAX_IN][MAX_NAME + 1];
    const char *nm[IR_MAX_IN];
    for (int k = 0; k < n_names; k++) {
        memcpy(buf[k], names[k].s, names[k].n), buf[k][names[k].n] = 0, nm[k] = buf[k];
        if (ir_find(outer, nm[k]) >= 0) {
            ir_graph_free(body);
            fail(p, &names[k], "duplicate name '%s'", nm[k]);
        }
    }
    int r = ir_add_kernel(outer, p->ctx, body, in, n_in, nm, names[0].line, names[0].col);
    if (r < 0) fail_ctx(p, &kw, (mg_status)-r); /* body was freed or is owned by outer */
}

static void parse_assign(parser *p, const token *nt) {
    char name[MAX_NAME + 1];
    name_of(p, nt, name);
    if (is_word(nt, "input") || is_word(nt, "output"))
        fail(p, nt, "'%s' is a keyword and cannot name a tensor", name);
    next(p); /* '=' */
    if (is_word(&p->tok, "kernel") && !p->outer) {
        parse_kernel(p, nt, 1);
        return;
    }
    /* a redefinition is reported first, before any error in the right-hand side */
    int prev = ir_find(p->g, name);
    if (prev >= 0) {
        const ir_node *pn = &p->g->nodes[prev];
        fail(p, nt, "duplicate name '%s' (first defined at line %d)", name, pn->line);
    }
    int n0 = p->g->n_nodes;
    p->defining = nt;
    int v = parse_expr(p);
    p->defining = NULL;
    if (p->tok.kind != T_NL && p->tok.kind != T_EOF) {
        char d[64];
        fail(p, &p->tok, "expected an operator or end of line, found %s",
             tok_desc(&p->tok, d, sizeof d));
    }
    if (p->g->nodes[v].name || v < n0)
        fail(p, nt, "'%s = ...' only renames an existing tensor; use it directly", name);
    int rc = ir_set_name(p->g, p->ctx, v, name);
    if (rc < 0) fail_ctx(p, nt, (mg_status)-rc);
    p->g->nodes[v].line = nt->line, p->g->nodes[v].col = nt->col;
}

/* program := {[statement] NEWLINE}. 'input' and 'output' are keywords only when a name
 * follows, so "input = ..." reaches parse_assign, which rejects it with a clearer message. */
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
        int kw = is_word(&t, "input") || is_word(&t, "output");
        if (is_word(&t, "input") && p->tok.kind == T_IDENT) parse_input(p);
        else if (is_word(&t, "output") && p->tok.kind == T_IDENT) parse_output(p);
        else if (is_punct(p, '=')) parse_assign(p, &t);
        else if (is_punct(p, ',')) { /* A, B = kernel(...) { ... } */
            token names[IR_MAX_IN];
            int n = 0;
            names[n++] = t;
            while (is_punct(p, ',')) {
                next(p);
                if (p->tok.kind != T_IDENT) fail(p, &p->tok, "expected a tensor name after ','");
                if (n == IR_MAX_IN) fail(p, &p->tok, "a kernel has at most %d outputs", IR_MAX_IN);
                names[n++] = p->tok;
                next(p);
            }
            expect(p, '=', "after the kernel's output names");
            if (!is_word(&p->tok, "kernel")) fail(p, &p->tok, "only a kernel(...) { } gives several tensors");
            parse_kernel(p, names, n);
        }
        else if (kw)
            fail(p, &p->tok, "expected a tensor name after '%.*s', found %s", (int)t.n, t.s,
                 tok_desc(&p->tok, d, sizeof d));
        else
            fail(p, &p->tok, "expected '=' after '%.*s' (statements are input, output or "
                 "NAME = expression), found %s", (int)t.n, t.s, tok_desc(&p->tok, d, sizeof d));
        if (p->tok.kind != T_NL && p->tok.kind != T_EOF)
            fail(p, &p->tok, "expected end of line, found %s", tok_desc(&p->tok, d, sizeof d));
    }
    /* An empty program, or one without an output line, is refused: every consumer (printers,
     * evaluators, partitioner) works from the outputs. */
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
