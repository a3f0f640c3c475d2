/* lex: the .mu front end's errors and tokens (parse.h). Errors render the spot with a caret
 * and unwind to ir_parse_text; the lexer turns the source into the one token of lookahead
 * the grammar (parse.c) reads. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"

/* Renders "file:line:col: error: msg" + the source line + caret into ctx and unwinds.
 * Only the line around off is shown: when the caret would sit past column 60 the window starts
 * 40 bytes before it, behind "...", and at most 120 bytes are copied. Control and non-ASCII
 * bytes print as '?', and tabs are copied into the caret line as well, so that a terminal
 * expands both lines alike and the caret stays under the spot. */
_Noreturn void lex_fail_at(parser *p, mg_status rc, size_t off, int line, int col,
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

/* A syntax error at token t (MG_ERR_PARSE): formats the message and unwinds via lex_fail_at. */
_Noreturn void lex_fail(parser *p, const token *t, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lex_fail_at(p, MG_ERR_PARSE, t->off, t->line, t->col, msg);
}

/* Re-raises the message a graph call left in ctx, positioned at t: errors found by ir.c
 * (shapes, limits, duplicate names) keep their status rc. The message is copied out first
 * because lex_fail_at formats into the same ctx->msg buffer. */
_Noreturn void lex_fail_ctx(parser *p, const token *t, mg_status rc) {
    char msg[sizeof p->ctx->msg];
    snprintf(msg, sizeof msg, "%s", p->ctx ? p->ctx->msg : "error");
    lex_fail_at(p, rc ? rc : MG_ERR_PARSE, t->off, t->line, t->col, msg);
}

/* Describes t for "found ..." messages: "end of file", "end of line" or the token quoted, cut at
 * 40 characters, non-printable bytes written as \xNN; k + 5 < n keeps room for one escape and
 * the closing quote. */
const char *lex_desc(const token *t, char *buf, size_t n) {
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

/* Skips blanks, a comment, and newlines inside brackets, until none of them is next. */
static void skip_blanks(parser *p) {
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
}

/* The number starting at p->pos, into t. Numbers are lexed loosely (digits and dots, then an
 * optional exponent) and validated by parse_decimal when the constant is added, so "1.2.3" is
 * rejected there; a letter right after a number ("2x") is rejected here rather than read as
 * a name. */
static void lex_number(parser *p, token *t) {
    size_t s = p->pos;
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
        lex_fail(p, t, "malformed number %s", lex_desc(t, d, sizeof d));
    }
}

/* Advances p->tok. Blanks and '#' comments are skipped; a newline is a token (it ends a
 * statement) except inside ( ) or [ ], where it is skipped so that calls and lists can span
 * lines; line tracking advances either way. Names are bounded by MAX_NAME here, so every later
 * copy into a MAX_NAME + 1 buffer is safe. */
void lex_next(parser *p) {
    skip_blanks(p);
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
        if (t->n > MAX_NAME) lex_fail(p, t, "name is longer than %d characters", MAX_NAME);
        return;
    }
    if (isdigit(c) || (c == '.' && p->pos + 1 < p->len && isdigit((unsigned char)p->src[p->pos + 1]))) {
        lex_number(p, t);
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
    lex_fail(p, t, "unexpected character %s", lex_desc(t, d, sizeof d));
}

/* Consumes the punctuation c, or fails with "expected 'c' <context>, found ...". */
void lex_expect(parser *p, char c, const char *context) {
    if (!is_punct(p, c)) {
        char d[64];
        lex_fail(p, &p->tok, "expected '%c' %s, found %s", c, context,
                 lex_desc(&p->tok, d, sizeof d));
    }
    lex_next(p);
}
