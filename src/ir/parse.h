/* parse.h: what the two files of the .mu front end share (docs/ir.md has the grammar):
 * lex.c reports errors and cuts the text into tokens, parse.c is the recursive-descent
 * grammar that builds the graph. Only these two include it.
 *
 * Errors unwind with longjmp to ir_parse_text (as Lua's parser does), which frees the partial
 * graph; every message is "file:line:col: error: ...", the source line and a caret under the
 * spot (chibicc style). */
#ifndef MG_IR_PARSE_H
#define MG_IR_PARSE_H

#include <setjmp.h>
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
 * parse_expr / parse_unary calls. rc and jb carry an error from lex_fail_at back to the setjmp in
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
    const int64_t *bind;   /* the symbolic dims' values by declaration order (ir_parse_text_at) */
    int n_bind, probe;
    mg_status rc;
    jmp_buf jb;
} parser;

/* ---- errors (lex.c): each formats into ctx and unwinds to ir_parse_text ---- */
/* "file:line:col: error: msg", the source line and a caret under byte off; status rc. */
_Noreturn void lex_fail_at(parser *p, mg_status rc, size_t off, int line, int col,
                           const char *msg);
/* A syntax error at token t (MG_ERR_PARSE). */
_Noreturn void lex_fail(parser *p, const token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The message a graph call left in ctx, positioned at t, keeping its status rc. */
_Noreturn void lex_fail_ctx(parser *p, const token *t, mg_status rc);
/* t for "found ..." messages: "end of file", "end of line" or the token quoted, in buf. */
const char *lex_desc(const token *t, char *buf, size_t n);

/* ---- tokens (lex.c) ---- */
/* Advances p->tok to the next token; a malformed one is an error. */
void lex_next(parser *p);
/* Consumes the punctuation c, or fails with "expected 'c' <context>, found ...". */
void lex_expect(parser *p, char c, const char *context);
/* Token tests: the current token is the punctuation c; t is exactly the identifier w. */
static inline int is_punct(const parser *p, char c) {
    return p->tok.kind == T_PUNCT && p->tok.s[0] == c;
}
static inline int is_word(const token *t, const char *w) {
    return t->kind == T_IDENT && strlen(w) == t->n && !memcmp(t->s, w, t->n);
}

/* ---- graph calls and sugar (sugar.c) ---- */
/* ir_add_node / a binary node / ir_add_const, with the node positioned at token at; a failure
 * becomes an error there, which unwinds. Return the node's index. */
int parse_add_node(parser *p, const token *at, ir_node *n);
int parse_add_binary(parser *p, const token *at, ir_op op, int a, int b);
int parse_add_const(parser *p, const token *at, const char *lit);
/* The calls that expand into primitives when parsed (docs/ir.md): the compound rmsnorm and
 * the parser's own mean and rsqrt. */
typedef enum parse_sugar_kind { SG_NONE, SG_MEAN, SG_RSQRT, SG_RMSNORM } parse_sugar_kind;
/* Which sugar the call name fn is (SG_NONE: none). */
parse_sugar_kind parse_sugar_of(const token *fn);
/* The attribute letters sugar k takes (ops.def's attrs notation). */
const char *parse_sugar_attrs(parse_sugar_kind k);
/* Expands sugar k applied to node x with its dim= (NULL: absent, the last dim) and eps= (a
 * number token, NULL: absent) into primitives; returns the result's node index. */
int parse_sugar(parser *p, const token *fn, parse_sugar_kind k, int x, const int64_t *dim,
                const token *eps);

#endif
