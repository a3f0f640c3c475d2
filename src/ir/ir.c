/* ir: kernel-graph construction, shape inference, the checker and structural equality.
 * Every node enters through ir_add_input / ir_add_node / ir_add_const, which infer and
 * validate its shape, so a graph in memory is always well-formed (ir_check re-verifies).
 *
 * Pipeline: the front ends (parse.c for .mu text, json.c) call ir_add_* in source order; the
 * printers, the Lax checker and partitioner (lax.c) and both evaluators only read the result.
 * infer() implements the "shape rule" column of docs/ir.md's operator table: a new op needs a
 * case there as well as its row in ops.def. */
#include "ir.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The op table, one entry per OP() row of ops.def. K, B and T are the level bits the rows are
 * written with (kernel, block, thread graph: Mirage Table 1); they exist only around the
 * include so that no other code sees one-letter macros. */
#define K IR_LEVEL_K
#define B IR_LEVEL_B
#define T IR_LEVEL_T
const ir_op_info ir_ops[IR_OP_COUNT] = {
#define OP(e, nm, ar, lv, lx, ne, kd, at, co, cs, cf, dg, tm, sr, ae)                              \
    [IR_OP_##e] = {nm, ar, lv, lx, ne, IR_KIND_##kd, at, co, cs, cf, IR_DEG_##dg, IR_TERMS_##tm,   \
                   sr},
#include "ops.def"
#undef OP
};
#undef K
#undef B
#undef T
/* One row per enum value: the enum and the table come from the same file. */
_Static_assert(sizeof ir_ops / sizeof ir_ops[0] == IR_OP_COUNT, "ops.def row missing");

int ir_op_attr(ir_op op, char c) {
    for (const char *a = ir_ops[op].attrs; *a; a++) {
        if (*a == c) return 1;
        if (*a == c - 'a' + 'A') return 2;
    }
    return 0;
}

/* Three passes over the table: unary, binary, then every other kind. */
const char *ir_search_op_names(char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int op = 0; op < IR_OP_COUNT; op++) {
            ir_kind kd = ir_ops[op].kind;
            int in_pass = pass == 0 ? kd == IR_KIND_UNARY
                          : pass == 1 ? kd == IR_KIND_BINARY
                                      : kd != IR_KIND_UNARY && kd != IR_KIND_BINARY;
            if (!ir_ops[op].search || !in_pass || k >= n) continue;
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", ir_ops[op].name);
        }
    return buf;
}

ir_graph *ir_graph_new(void) {
    ir_graph *g = base_calloc(1, sizeof *g);
    if (g) arena_init(&g->mem);
    return g;
}

/* Every name and literal a node points to lives in g->mem, so one arena_free releases them all.
 * The strmap only borrows those strings as keys, and strmap_free does not read them. */
void ir_graph_free(ir_graph *g) {
    if (!g) return;
    for (int i = 0; i < g->n_nodes; i++) /* a kernel's first output node owns its block graph */
        if (g->nodes[i].op == IR_OP_KERNEL && g->nodes[i].index == 0) ir_graph_free(g->nodes[i].body);
    arena_free(&g->mem);
    base_free(g->nodes);
    base_free(g->outputs);
    strmap_free(&g->names);
    base_free(g);
}

/* No overflow check needed: every shape in a graph passed check_shape (<= 2^40 elements). */
int64_t ir_numel(const ir_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->d[i];
    return n;
}

/* snprintf returns the untruncated length, so k may pass n after a cut; every later write is
 * guarded by k < n so that n - k never wraps. A short buf gives a truncated string. */
const char *ir_shape_gstr(const ir_graph *g, mg_dtype t, const ir_shape *s, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "%s[", base_dtype_name(t));
    for (int i = 0; i < s->ndim && k < n; i++) {
        int r = i ? s->rag[i] : 0;
        if (r && g && r <= g->n_lens) k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", g->lens[r - 1].name);
        else if (r) k += (size_t)snprintf(buf + k, n - k, "%s<=%" PRId64, i ? ", " : "", s->d[i]);
        else k += (size_t)snprintf(buf + k, n - k, "%s%" PRId64, i ? ", " : "", s->d[i]);
    }
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

const char *ir_shape_str(mg_dtype t, const ir_shape *s, char *buf, size_t n) {
    return ir_shape_gstr(NULL, t, s, buf, n);
}

int ir_shape_ragged(const ir_shape *s) {
    for (int i = 0; i < s->ndim; i++)
        if (s->rag[i]) return 1;
    return 0;
}

int ir_find_lengths(const ir_graph *g, const char *name) {
    for (int k = 0; k < g->n_lens; k++)
        if (!strcmp(g->lens[k].name, name)) return k;
    return -1;
}

int ir_add_lengths(ir_graph *g, mg_ctx *ctx, const char *name, int64_t count, int64_t max, int line, int col) {
    if (g->is_block) return -(int)ctx_err(ctx, MG_ERR_PARSE, "lengths are declared in the program, not in a kernel");
    if (ir_find(g, name) >= 0 || ir_find_lengths(g, name) >= 0)
        return -(int)ctx_err(ctx, MG_ERR_PARSE, "duplicate name '%s'", name);
    if (g->n_lens == IR_MAX_LENS)
        return -(int)ctx_err(ctx, MG_ERR_LIMIT, "a program declares at most %d lengths", IR_MAX_LENS);
    if (count < 1 || count > IR_MAX_DIM || max < 1 || max > IR_MAX_DIM)
        return -(int)ctx_err(ctx, MG_ERR_LIMIT, "lengths %s: the count (%" PRId64 ") and the maximum (%" PRId64
                             ") must be in [1, %" PRId64 "]", name, count, max, IR_MAX_DIM);
    if (g->n_lens && count != g->lens[0].count) /* one batch: rag[0] names no lengths */
        return -(int)ctx_err(ctx, MG_ERR_SHAPE, "lengths %s: a program's lengths share one batch, of %" PRId64
                             " sequences (%s), not %" PRId64, name, g->lens[0].count, g->lens[0].name, count);
    char *s = arena_strdup(&g->mem, name);
    if (!s) return -(int)ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    g->lens[g->n_lens] = (ir_lengths){s, count, max, line, col};
    return g->n_lens++;
}

int ir_find_sym(const ir_graph *g, const char *name) {
    for (int k = 0; k < g->n_syms; k++)
        if (!strcmp(g->syms[k].name, name)) return k;
    return -1;
}

int ir_add_sym(ir_graph *g, mg_ctx *ctx, const char *name, int64_t lo, int64_t hi, int64_t val, int probe, int line, int col) {
    if (g->is_block) return -(int)ctx_err(ctx, MG_ERR_PARSE, "dims are declared in the program, not in a kernel");
    if (ir_find(g, name) >= 0 || ir_find_lengths(g, name) >= 0 || ir_find_sym(g, name) >= 0)
        return -(int)ctx_err(ctx, MG_ERR_PARSE, "duplicate name '%s'", name);
    if (g->n_syms == IR_MAX_SYMS)
        return -(int)ctx_err(ctx, MG_ERR_LIMIT, "a program declares at most %d dims", IR_MAX_SYMS);
    if (lo < 1 || hi < lo || hi > IR_MAX_DIM)
        return -(int)ctx_err(ctx, MG_ERR_LIMIT, "dim %s [%" PRId64 ", %" PRId64 "]: the range must satisfy 1 <= LO <= HI <= %" PRId64,
                             name, lo, hi, IR_MAX_DIM);
    if (!probe && (val < lo || val > hi))
        return -(int)ctx_err(ctx, MG_ERR_INVALID, "dim %s = %" PRId64 " is outside its range [%" PRId64 ", %" PRId64 "]", name, val, lo, hi);
    char *s = arena_strdup(&g->mem, name);
    if (!s) return -(int)ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    g->syms[g->n_syms] = (ir_sym){s, lo, hi, val, line, col, 0};
    return g->n_syms++;
}

int64_t ir_sym_capacity(const ir_sym *s, int64_t v) {
    int64_t c = 1;
    if (s->reduced) { /* the work past v under half the variant's (docs/tuning.md "Reduced dims") */
        for (c = 128; c < v; c *= 2) {}
        return c < s->hi ? c : s->hi;
    }
    while (c < v && c < 128) c *= 2;
    if (c < v) c = (v + 127) / 128 * 128;
    return c < s->hi ? c : s->hi;
}

/* Anonymous constants are labelled by their literal, so a message says '4096', not 'const #3'. */
const char *ir_node_label(const ir_graph *g, int i, char *buf, size_t n) {
    const ir_node *nd = &g->nodes[i];
    if (nd->name) snprintf(buf, n, "%s", nd->name);
    else if (nd->op == IR_OP_CONST) snprintf(buf, n, "%s", nd->lit);
    else if (nd->line) snprintf(buf, n, "%s at %d:%d", ir_ops[nd->op].name, nd->line, nd->col);
    else snprintf(buf, n, "%s #%d", ir_ops[nd->op].name, i);
    return buf;
}

/* names[] is in mg_dtype order (MG_F16, MG_BF16, MG_F32), so the index is the dtype. */
int ir_dtype_parse(const char *s, size_t n) {
    static const char *names[] = {"f16", "bf16", "f32"};
    for (int t = 0; t < 3; t++)
        if (strlen(names[t]) == n && !memcmp(names[t], s, n)) return t;
    return -1;
}

int ir_find(const ir_graph *g, const char *name) { return strmap_get(&g->names, name); }

/* Enforces the ir_shape invariant (ir.h): rank <= 4, every size in [1, 2^31 - 1], at most 2^40
 * elements. The element bound is tested by division before multiplying, so the running
 * product never overflows. ctx may be NULL: infer uses it as a silent yes/no test. Returns 0
 * or -MG_ERR_LIMIT. */
static int check_shape(mg_ctx *ctx, const ir_shape *s) {
    if (s->ndim < 0 || s->ndim > IR_MAX_DIMS) {
        return -(int)ctx_err(ctx, MG_ERR_LIMIT, "tensors have at most %d dims, got %d",
                             IR_MAX_DIMS, s->ndim);
    }
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) {
        if (s->d[i] < 1 || s->d[i] > IR_MAX_DIM) {
            return -(int)ctx_err(ctx, MG_ERR_LIMIT, "dim %d has size %" PRId64
                                 "; sizes must be in [1, %" PRId64 "]", i, s->d[i], IR_MAX_DIM);
        }
        if (n > IR_MAX_NUMEL / s->d[i]) {
            return -(int)ctx_err(ctx, MG_ERR_LIMIT, "tensor has more than 2^40 elements");
        }
        n *= s->d[i];
    }
    return 0;
}

/* Appends a copy of *n, doubling the array when full, and returns its index (or -rc). Nodes
 * refer to each other only by index (in[], outputs[], the name map), never by pointer, so
 * moving the array on realloc invalidates nothing. */
static int push_node(ir_graph *g, mg_ctx *ctx, const ir_node *n) {
    if (g->n_nodes >= IR_MAX_NODES) {
        return -(int)ctx_err(ctx, MG_ERR_LIMIT, "program has more than %d tensors",
                             IR_MAX_NODES);
    }
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
        ir_node *nodes = base_realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) {
            return -(int)ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        }
        g->nodes = nodes, g->cap_nodes = cap;
    }
    g->nodes[g->n_nodes] = *n;
    return g->n_nodes++;
}

int ir_set_name(ir_graph *g, mg_ctx *ctx, int i, const char *name) {
    MG_ASSERT(i >= 0 && i < g->n_nodes);
    int prev = ir_find(g, name);
    if (prev < 0 && ir_find_lengths(g, name) >= 0)
        return -(int)ctx_err(ctx, MG_ERR_PARSE, "duplicate name '%s' (the name of lengths)", name);
    if (prev < 0 && ir_find_sym(g, name) >= 0)
        return -(int)ctx_err(ctx, MG_ERR_PARSE, "duplicate name '%s' (the name of a dim)", name);
    if (prev >= 0) {
        const ir_node *p = &g->nodes[prev];
        if (p->line)
            return -(int)ctx_err(ctx, MG_ERR_PARSE, "duplicate name '%s' (first defined at "
                                 "line %d)", name, p->line);
        return -(int)ctx_err(ctx, MG_ERR_PARSE, "duplicate name '%s'", name);
    }
    if (g->nodes[i].name) {
        return -(int)ctx_err(ctx, MG_ERR_PARSE, "tensor '%s' cannot also be called '%s'",
                             g->nodes[i].name, name);
    }
    /* Copy the name into the graph's arena before it enters the map: strmap borrows its keys,
     * and the caller's buffer (a parser's stack copy, a cJSON string) does not outlive us. */
    char *s = arena_strdup(&g->mem, name);
    if (!s || strmap_put(&g->names, s, i)) {
        return -(int)ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    g->nodes[i].name = s;
    return 0;
}

int ir_add_input(ir_graph *g, mg_ctx *ctx, const char *name, mg_dtype t, const ir_shape *s0) {
    ir_shape sv = *s0, *s = &sv;
    int rc = check_shape(ctx, s);
    if (rc < 0) return rc;
    if ((rc = ir_ragged_input(g, ctx, s)) < 0) return rc;
    /* Refuse a duplicate before pushing, so a failed call leaves the graph as it was. A found
     * name implies n_nodes >= 1, so index 0 satisfies ir_set_name's assertion. */
    if (ir_find(g, name) >= 0) return ir_set_name(g, ctx, 0, name); /* reports the duplicate */
    ir_node n = {.op = IR_OP_INPUT, .dtype = t, .shape = *s, .fmap = -1, .map = {-1, -1, -1}};
    int i = push_node(g, ctx, &n);
    if (i < 0) return i;
    if ((rc = ir_set_name(g, ctx, i, name)) < 0) {
        /* undo the push: nothing refers to the new node yet */
        g->n_nodes--;
        return rc;
    }
    return i;
}

void ir_set_input_range(ir_graph *g, int i, double r) {
    MG_ASSERT(g->nodes[i].op == IR_OP_INPUT && r > 0 && isfinite(r));
    g->nodes[i].value = r == 1 ? 0 : r;
}

int ir_add_input_from(ir_graph *g, mg_ctx *ctx, const char *name, const ir_node *n) {
    int r = ir_add_input(g, ctx, name, n->dtype, &n->shape);
    if (r >= 0 && n->op == IR_OP_INPUT) ir_set_input_range(g, r, ir_input_range(n));
    return r;
}

/* outputs[] keeps declaration order: the evaluators fill out[k] for the k-th output and the
 * printers list them in that order, so ir_graph_equal compares outputs by position. */
int ir_add_output(ir_graph *g, mg_ctx *ctx, int i) {
    MG_ASSERT(i >= 0 && i < g->n_nodes);
    char lb[128];
    for (int k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] == i) {
            return -(int)ctx_err(ctx, MG_ERR_PARSE, "'%s' is already an output",
                    ir_node_label(g, i, lb, sizeof lb));
        }
    if (g->n_outputs == g->cap_outputs) {
        int cap = g->cap_outputs ? g->cap_outputs * 2 : 8;
        int *o = base_realloc(g->outputs, (size_t)cap * sizeof *o);
        if (!o) {
            return -(int)ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        }
        g->outputs = o, g->cap_outputs = cap;
    }
    g->outputs[g->n_outputs++] = i;
    return 0;
}

/* ---- constants: exact decimals, so both evaluators see the same number ---- */

/* Parses [-]digits[.digits][e[+-]digits] into num/den (den a power of ten). Returns 0, -1 if
 * malformed, -2 if out of range. The value is m * 10^(e - frac), m being all digits read as
 * one 128-bit integer (at most 10^36) and frac the number after the dot; |e| <= 40. Trailing
 * zeros cancel against the denominator, so equal decimals (0.5, 0.50, 5e-1) give the same
 * num/den, and the result must have |num| < 2^63 and den <= 10^18. *val is strtod of the same
 * text: the float evaluator sees the double nearest to the exact fraction. */
int ir_parse_decimal(const char *s, int64_t *num, int64_t *den, double *val) {
    const char *p = s;
    int neg = 0;
    if (*p == '-') neg = 1, p++;
    mg_i128 m = 0;
    int frac = 0, digits = 0, seen_dot = 0;
    for (; *p; p++) {
        if (*p == '.' && !seen_dot) {
            seen_dot = 1;
            continue;
        }
        if (*p < '0' || *p > '9') break;
        digits++;
        if (m > (mg_i128)1000000000000000000 * 1000000000000000000) return -2; /* > 10^36 */
        m = m * 10 + (*p - '0');
        if (seen_dot) frac++;
    }
    if (!digits) return -1;
    long e = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '+' || *p == '-') eneg = *p == '-', p++;
        if (*p < '0' || *p > '9') return -1;
        for (; *p >= '0' && *p <= '9'; p++) {
            e = e * 10 + (*p - '0');
            if (e > 40) return -2;
        }
        if (eneg) e = -e;
    }
    if (*p) return -1;
    long scale = e - frac; /* value = m * 10^scale */
    for (; scale > 0; scale--) { /* move a positive exponent into num */
        m *= 10;
        if (m > INT64_MAX) return -2;
    }
    while (scale < 0 && m && m % 10 == 0) m /= 10, scale++; /* canonical: 0.50 == 0.5 */
    if (m == 0) scale = 0;
    if (scale < -18 || m > INT64_MAX) return -2;
    mg_i128 d = 1;
    for (; scale < 0; scale++) d *= 10;
    *num = (int64_t)(neg ? -m : m), *den = (int64_t)d;
    *val = strtod(s, NULL);
    return 0;
}

/* A constant is a rank-0 node (ndim 0 from the zero initialiser): a scalar that broadcasts.
 * Its dtype is f32, but join_dtype makes an op adopt its other operand's dtype, so a literal
 * never widens an f16 computation. lit is kept verbatim for printing. */
int ir_add_const(ir_graph *g, mg_ctx *ctx, const char *lit, int line, int col) {
    ir_node n = {.op = IR_OP_CONST, .dtype = MG_F32, .line = line, .col = col, .fmap = -1,
                 .map = {-1, -1, -1}};
    int r = ir_parse_decimal(lit, &n.num, &n.den, &n.value);
    if (r == -1) return -(int)ctx_err(ctx, MG_ERR_PARSE, "malformed number '%.40s'", lit);
    if (r) {
        return -(int)ctx_err(ctx, MG_ERR_PARSE,
                             "constant '%.40s' is out of range: a constant must equal n / 10^k "
                             "with |n| < 2^63 (about 9.2e18) and k <= 18", lit);
    }
    n.lit = arena_strdup(&g->mem, lit);
    if (!n.lit) return -(int)ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    return push_node(g, ctx, &n);
}

/* ---- shape inference ---- */

/* Formats "<op>: <what>; <operand> is <dtype[shape]>, ..." (what from fmt) and returns
 * MG_ERR_SHAPE; with no ctx, formats nothing (the search tries many operators that do not
 * fit, and only counts them). n need not be in g yet: only its operands are looked up. The
 * text stops growing at 1 KB. */
mg_status ir_shape_err(mg_ctx *ctx, const ir_graph *g, const ir_node *n, const char *fmt, ...) {
    if (!ctx) return MG_ERR_SHAPE;
    char msg[1024];
    size_t k = (size_t)snprintf(msg, sizeof msg, "%s: ", ir_ops[n->op].name);
    va_list ap;
    va_start(ap, fmt);
    if (k < sizeof msg) k += (size_t)vsnprintf(msg + k, sizeof msg - k, fmt, ap);
    va_end(ap);
    for (int i = 0; i < n->n_in && k < sizeof msg; i++) {
        char lb[96], sh[96];
        const ir_node *a = &g->nodes[n->in[i]];
        k += (size_t)snprintf(msg + k, sizeof msg - k, "%s %s is %s", i ? "," : ";",
                              ir_node_label(g, n->in[i], lb, sizeof lb),
                              ir_shape_gstr(g, a->dtype, &a->shape, sh, sizeof sh));
    }
    return ctx_err(ctx, MG_ERR_SHAPE, "%s", msg);
}

/* Result dtype of a two-operand op (docs/ir.md): a constant adopts the other operand's dtype,
 * equal dtypes are kept, mixed dtypes widen to f32. */
static mg_dtype join_dtype(const ir_node *a, const ir_node *b) {
    if (a->op == IR_OP_CONST) return b->dtype;
    if (b->op == IR_OP_CONST) return a->dtype;
    return a->dtype == b->dtype ? a->dtype : MG_F32;
}

int ir_broadcast(const ir_shape *a, const ir_shape *b, ir_shape *out) {
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    out->ndim = nd;
    for (int i = 0; i < nd; i++) {
        /* right-aligned: a missing leading dim (ia or ib < 0) acts as size 1 */
        int ia = a->ndim - nd + i, ib = b->ndim - nd + i;
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out->d[i] = da == 1 ? db : da;
    }
    return 0;
}

/* Normalises a negative dim= (counted from the end, as in numpy) in place; 1 if in range. */
static int norm_dim(ir_node *n, int rank) {
    if (n->dim < 0) n->dim += rank;
    return n->dim >= 0 && n->dim < rank;
}

/* [..., m, k] x [..., k, n] -> [..., m, n]. Both operands need the same rank (no implicit rank
 * promotion, unlike numpy); each batch dim must match or be 1, and a 1 broadcasts
 * (ev_matmul_init gives it offset 0). */
static mg_status infer_matmul(const ir_graph *g, mg_ctx *ctx, ir_node *n) {
    const ir_shape *a = &g->nodes[n->in[0]].shape, *b = &g->nodes[n->in[1]].shape;
    if (a->ndim < 2 || b->ndim < 2 || a->ndim != b->ndim)
        return ir_shape_err(ctx, g, n, "operands need the same rank, at least 2");
    int r = a->ndim;
    if (a->d[r - 1] != b->d[r - 2]) {
        return ir_shape_err(ctx, g, n, "inner dimensions differ (%" PRId64 " vs %" PRId64 ")",
                 a->d[r - 1], b->d[r - 2]);
    }
    n->shape.ndim = r;
    for (int i = 0; i < r - 2; i++) {
        if (a->d[i] != b->d[i] && a->d[i] != 1 && b->d[i] != 1)
            return ir_shape_err(ctx, g, n, "batch dimensions differ");
        n->shape.d[i] = a->d[i] == 1 ? b->d[i] : a->d[i];
    }
    n->shape.d[r - 2] = a->d[r - 2], n->shape.d[r - 1] = b->d[r - 1];
    return MG_OK;
}

/* transpose: result dim i is operand dim perm[i]; perm lists every dim of the operand once. */
static mg_status infer_transpose(const ir_graph *g, mg_ctx *ctx, ir_node *n) {
    const ir_shape *a = &g->nodes[n->in[0]].shape;
    if (n->n_ints != a->ndim) {
        return ir_shape_err(ctx, g, n, "perm= needs one entry per dim (%d), got %d", a->ndim,
                         n->n_ints);
    }
    int seen = 0;
    n->shape.ndim = a->ndim;
    for (int i = 0; i < a->ndim; i++) {
        int64_t p = n->ints[i];
        if (p < 0 || p >= a->ndim || (seen >> p & 1)) {
            return ir_shape_err(ctx, g, n,
                             "perm= must list each dim 0..%d once (entry %d is %" PRId64 ")",
                             a->ndim - 1, i, p);
        }
        seen |= 1 << p;
        n->shape.d[i] = a->d[p];
    }
    return MG_OK;
}

/* slice: dim d keeps elements [start, start + len), which must lie inside it. */
static mg_status infer_slice(const ir_graph *g, mg_ctx *ctx, ir_node *n) {
    const ir_shape *a = &g->nodes[n->in[0]].shape;
    if (a->ndim == 0) return ir_shape_err(ctx, g, n, "the operand needs rank at least 1");
    if (!norm_dim(n, a->ndim)) return ir_shape_err(ctx, g, n, "dim= is out of range");
    if (n->n_ints != 2) return ir_shape_err(ctx, g, n, "needs start= and len=");
    int64_t start = n->ints[0], len = n->ints[1], size = a->d[n->dim];
    if (start < 0 || len < 1 || start >= size || len > size - start) {
        return ir_shape_err(ctx, g, n,
                         "start=%" PRId64 ", len=%" PRId64 " is not inside dim %d (size %" PRId64
                         "): need 0 <= start, 1 <= len, start + len <= size",
                         start, len, n->dim, size);
    }
    n->shape = *a;
    n->shape.d[n->dim] = len;
    return MG_OK;
}

/* Layout ops move elements without arithmetic. reshape: the shape comes from ints[] and keeps
 * the element count (a row-major reinterpretation). repeat: each dim times its factor, tiling
 * the whole tensor rather than repeating each element; a factor and a size both below 2^31
 * cannot overflow int64, and infer's final check_shape rejects a result that is too large.
 * concat: dim d adds up, every other dim must be equal. */
static mg_status infer_layout(const ir_graph *g, mg_ctx *ctx, ir_node *n) {
    const ir_shape *a = &g->nodes[n->in[0]].shape;
    if (n->op == IR_OP_TRANSPOSE) return infer_transpose(g, ctx, n);
    if (n->op == IR_OP_SLICE) return infer_slice(g, ctx, n);
    if (n->op == IR_OP_RESHAPE) {
        n->shape.ndim = n->n_ints;
        for (int i = 0; i < n->n_ints; i++) {
            if (n->ints[i] < 0 && -n->ints[i] <= g->n_lens) { /* a ragged dim: ir_infer_ragged */
                n->shape.d[i] = g->lens[-n->ints[i] - 1].max;
                continue;
            }
            if (n->ints[i] > IR_MAX_DIM) {
                return ir_shape_err(ctx, g, n,
                                 "shape= size %" PRId64 " is too large (at most %" PRId64 ")",
                                 n->ints[i], IR_MAX_DIM);
            }
            n->shape.d[i] = n->ints[i];
        }
        if (n->n_ints < 1 || check_shape(NULL, &n->shape))
            return ir_shape_err(ctx, g, n, "shape= needs 1 to 4 sizes, each at least 1");
        if (ir_numel(&n->shape) != ir_numel(a))
            return ir_shape_err(ctx, g, n, "the element count must not change");
        return MG_OK;
    }
    if (n->op == IR_OP_REPEAT) {
        if (n->n_ints != a->ndim) {
            return ir_shape_err(ctx, g, n, "times= needs one factor per dim (%d), got %d", a->ndim,
                             n->n_ints);
        }
        n->shape = *a;
        for (int i = 0; i < a->ndim; i++) {
            if (n->ints[i] < 1) return ir_shape_err(ctx, g, n, "repeat factors must be at least 1");
            if (n->ints[i] > IR_MAX_DIM) {
                return ir_shape_err(ctx, g, n,
                                 "repeat factor %" PRId64 " is too large (at most %" PRId64 ")",
                                 n->ints[i], IR_MAX_DIM);
            }
            n->shape.d[i] = a->d[i] * n->ints[i];
        }
        return MG_OK;
    }
    /* concat */
    const ir_shape *b = &g->nodes[n->in[1]].shape;
    if (a->ndim == 0 || b->ndim == 0) return ir_shape_err(ctx, g, n, "operands need rank at least 1");
    if (a->ndim != b->ndim) return ir_shape_err(ctx, g, n, "ranks differ");
    if (!norm_dim(n, a->ndim)) return ir_shape_err(ctx, g, n, "dim= is out of range");
    for (int i = 0; i < a->ndim; i++)
        if (i != n->dim && a->d[i] != b->d[i])
            return ir_shape_err(ctx, g, n, "sizes differ outside the concat dim");
    n->shape = *a;
    n->shape.d[n->dim] = a->d[n->dim] + b->d[n->dim];
    return MG_OK;
}

/* Infers n->shape and n->dtype from its operands; validates attributes. Preconditions: n is
 * an op node and n->in[] index nodes already in g. ir_check also runs it on a copy of an
 * existing node, which is why it writes only into *n. Attributes are normalised in place (dim
 * becomes non-negative, a sum's group 0 becomes the whole dim), so that equal programs
 * compare equal. The result dtype is the operand's, or for two operands join_dtype's. */
static mg_status infer(const ir_graph *g, mg_ctx *ctx, ir_node *n) {
    const ir_op_info *info = &ir_ops[n->op];
    if (!(info->levels & (g->is_block ? IR_LEVEL_B : IR_LEVEL_K)))
        return ctx_err(ctx, MG_ERR_SHAPE, "%s: not allowed in a %s graph", info->name,
                       g->is_block ? "block" : "kernel");
    if (info->arity < 0 ? n->n_in < 1 || n->n_in > IR_MAX_IN : n->n_in != info->arity) {
        return ir_shape_err(ctx, g, n, "takes %d operand%s, got %d", info->arity,
                 info->arity == 1 ? "" : "s", n->n_in);
    }
    const ir_node *a = n->n_in ? &g->nodes[n->in[0]] : NULL;
    /* docs/ir.md's rule for every op of two operands (binary, matmul, concat); a kernel's
     * outputs take their savers' dtypes (ir_infer_ugraph) */
    if (a) n->dtype = info->arity == 2 ? join_dtype(a, &g->nodes[n->in[1]]) : a->dtype;
    mg_status rc = MG_OK;
    switch (info->kind) {
    case IR_KIND_SOURCE: return MG_OK;
    case IR_KIND_GRAPH:
    case IR_KIND_BLOCK: /* static (a kernel over ragged tensors is refused): no ragged codes */
        rc = ir_infer_ugraph(g, ctx, n);
        if (!rc) rc = ir_infer_ragged(g, ctx, n);
        return rc;
    case IR_KIND_COMPOUND: /* never a node (levels 0 stops it above): its expansion is */
        return ir_shape_err(ctx, g, n, "a compound operator is expanded into primitives");
    case IR_KIND_UNARY: n->shape = a->shape; break;
    case IR_KIND_BINARY: {
        const ir_node *b = &g->nodes[n->in[1]];
        if (ir_broadcast(&a->shape, &b->shape, &n->shape))
            return ir_shape_err(ctx, g, n, "shapes do not broadcast");
        break;
    }
    case IR_KIND_REDUCE:
        if (!norm_dim(n, a->shape.ndim)) return ir_shape_err(ctx, g, n, "dim= is out of range");
        /* sum(dim=d, group=g) reduces runs of g consecutive elements along d, which shrinks
         * to size / g (Mirage's sum(k_r, .)); max always reduces the whole dim */
        if (n->op == IR_OP_MAX || n->group == 0) n->group = a->shape.d[n->dim];
        if (n->group < 1 || a->shape.d[n->dim] % n->group)
            return ir_shape_err(ctx, g, n, "group= must divide the size of the reduced dim");
        n->shape = a->shape;
        n->shape.d[n->dim] /= n->group;
        break;
    case IR_KIND_MATMUL: rc = infer_matmul(g, ctx, n); break;
    case IR_KIND_SEQ: { /* seqattn(Q, K, V, lens): [T, H, D] thrice, lens [B] f32 */
        const ir_node *k = &g->nodes[n->in[1]], *v = &g->nodes[n->in[2]], *l = &g->nodes[n->in[3]];
        if (a->shape.ndim != 3 || memcmp(&a->shape, &k->shape, sizeof a->shape) || memcmp(&a->shape, &v->shape, sizeof a->shape))
            return ir_shape_err(ctx, g, n, "Q, K and V are [tokens, heads, head dim], all three the same shape");
        if (a->dtype != k->dtype || a->dtype != v->dtype) return ir_shape_err(ctx, g, n, "Q, K and V have one dtype");
        if (l->shape.ndim != 1 || l->dtype != MG_F32)
            return ir_shape_err(ctx, g, n, "lens is f32[batch]: the sequences' lengths, whole numbers");
        n->shape = a->shape;
        break;
    }
    case IR_KIND_LAYOUT:
        rc = infer_layout(g, ctx, n);
        break;
    }
    if (rc) return rc;
    if (check_shape(NULL, &n->shape) < 0) return ir_shape_err(ctx, g, n, "result is too large");
    return ir_infer_ragged(g, ctx, n);
}

int ir_add_node(ir_graph *g, mg_ctx *ctx, const ir_node *proto) {
    ir_node n = *proto;
    /* Names are set afterwards with ir_set_name, which also indexes them. Inputs and constants
     * have their own constructors. Operands must already be in g: that is what keeps the node
     * array in topological order (and programs acyclic). */
    n.name = NULL;
    MG_ASSERT(n.op > IR_OP_CONST && n.op < IR_OP_COUNT);
    if (ir_ops[n.op].kind != IR_KIND_GRAPH && ir_ops[n.op].kind != IR_KIND_BLOCK) {
        /* canonical: the μGraph fields are unused here, and equality compares them */
        n.body = NULL, n.index = 0, n.fmap = -1;
        n.map[0] = n.map[1] = n.map[2] = -1;
    }
    for (int i = 0; i < n.n_in; i++) MG_ASSERT(n.in[i] >= 0 && n.in[i] < g->n_nodes);
    mg_status rc = infer(g, ctx, &n);
    if (rc) return -(int)rc;
    return push_node(g, ctx, &n);
}

/* ---- checker ---- */

mg_status ir_check(const ir_graph *g, mg_ctx *ctx) {
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if ((unsigned)n->op >= IR_OP_COUNT)
            return ctx_err(ctx, MG_ERR_INVALID, "ir_check: node %d has a bad op", i);
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] < 0 || n->in[k] >= i)
                return ctx_err(ctx, MG_ERR_INVALID, "ir_check: node %d reads node %d", i,
                               n->in[k]);
        if (n->name && ir_find(g, n->name) != i)
            return ctx_err(ctx, MG_ERR_INVALID, "ir_check: name '%s' not indexed", n->name);
        /* Sources have no rule to re-run, only a shape to check; every other node is inferred
         * again on a copy and must match what was stored. */
        if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST) {
            if (check_shape(ctx, &n->shape) < 0) return MG_ERR_INVALID;
            continue;
        }
        ir_node copy = *n;
        if (infer(g, ctx, &copy)) return MG_ERR_INVALID;
        if (memcmp(&copy.shape, &n->shape, sizeof n->shape) || copy.dtype != n->dtype)
            return ctx_err(ctx, MG_ERR_INVALID, "ir_check: node %d has a stale shape", i);
        if (n->op == IR_OP_KERNEL && n->index == 0) { /* the block graph, once per kernel */
            mg_status rc = ir_check(n->body, ctx);
            if (!rc) rc = ir_block_check(n->body, ctx, mg_device_default());
            if (rc) return rc == MG_ERR_NOMEM ? rc : MG_ERR_INVALID;
        }
    }
    for (int k = 0; k < g->n_outputs; k++)
        if (g->outputs[k] < 0 || g->outputs[k] >= g->n_nodes)
            return ctx_err(ctx, MG_ERR_INVALID, "ir_check: output %d is out of range", k);
    return MG_OK;
}

/* ---- structural equality ---- */

/* Is node i of a the same computation as node j of b? Compares op, attributes, dtype, shape,
 * input names and constant values (as fractions: 0.5 == 0.50; the 128-bit cross products
 * cannot overflow), then the operands recursively. memo[i] is the node of b already matched
 * with node i of a, or -1, and memo_b[j] the node of a matched with node j of b. A match is
 * final and one-to-one: a subexpression shared in one graph must be shared in the other.
 * Failures are not memoised because the first one ends the whole comparison; each node of a
 * is expanded at most once, so the walk is linear. */
static int block_equal(const ir_graph *a, const ir_graph *b);

static int node_equal(const ir_graph *a, int i, const ir_graph *b, int j, int *memo,
                      int *memo_b) {
    if (memo[i] >= 0) return memo[i] == j;
    if (memo_b[j] >= 0) return 0; /* j already stands for another node of a */
    const ir_node *x = &a->nodes[i], *y = &b->nodes[j];
    if (x->op != y->op || x->n_in != y->n_in || x->dtype != y->dtype ||
        memcmp(&x->shape, &y->shape, sizeof x->shape) || x->dim != y->dim ||
        x->group != y->group || x->n_ints != y->n_ints ||
        memcmp(x->ints, y->ints, sizeof x->ints) || x->index != y->index ||
        memcmp(x->map, y->map, sizeof x->map) || x->fmap != y->fmap)
        return 0;
    if (x->op == IR_OP_KERNEL && !block_equal(x->body, y->body)) return 0;
    if (x->op == IR_OP_INPUT && (strcmp(x->name, y->name) || ir_input_range(x) != ir_input_range(y))) return 0;
    if (x->op == IR_OP_CONST && (mg_i128)x->num * y->den != (mg_i128)y->num * x->den) return 0;
    for (int k = 0; k < x->n_in; k++)
        if (!node_equal(a, x->in[k], b, y->in[k], memo, memo_b)) return 0;
    memo[i] = j, memo_b[j] = i;
    return 1;
}

int ir_graph_equal(const ir_graph *a, const ir_graph *b) {
    if (a->n_outputs != b->n_outputs || a->n_lens != b->n_lens) return 0;
    for (int k = 0; k < a->n_lens; k++)
        if (strcmp(a->lens[k].name, b->lens[k].name) || a->lens[k].count != b->lens[k].count ||
            a->lens[k].max != b->lens[k].max)
            return 0;
    int na = 0, nb = 0;
    for (int i = 0; i < a->n_nodes; i++) na += a->nodes[i].op == IR_OP_INPUT;
    for (int i = 0; i < b->n_nodes; i++) nb += b->nodes[i].op == IR_OP_INPUT;
    if (na != nb) return 0;
    /* Equal input counts also keep the pairing loop below inside b's nodes. memo has one extra
     * slot so that an empty graph allocates a non-zero size; out of memory reads as unequal. */
    int *memo = base_alloc((size_t)(a->n_nodes + b->n_nodes + 1) * sizeof *memo);
    if (!memo) return 0;
    int *memo_b = memo + a->n_nodes;
    for (int i = 0; i < a->n_nodes + b->n_nodes; i++) memo[i] = -1;
    int eq = 1;
    /* Inputs are paired in declaration order, the order in which the evaluators take their
     * input arrays; outputs by position and name. Intermediates are matched only via memo. */
    for (int i = 0, j = 0; eq && i < a->n_nodes; i++) { /* inputs in the same order */
        if (a->nodes[i].op != IR_OP_INPUT) continue;
        while (b->nodes[j].op != IR_OP_INPUT) j++;
        eq = node_equal(a, i, b, j++, memo, memo_b);
    }
    for (int k = 0; eq && k < a->n_outputs; k++) {
        const ir_node *x = &a->nodes[a->outputs[k]], *y = &b->nodes[b->outputs[k]];
        eq = node_equal(a, a->outputs[k], b, b->outputs[k], memo, memo_b) &&
             !strcmp(x->name ? x->name : "", y->name ? y->name : "");
    }
    base_free(memo);
    return eq;
}

/* Two block graphs are equal when their schedules, kernel inputs and (via ir_graph_equal,
 * which walks back from the savers) their operators are. */
static int block_equal(const ir_graph *a, const ir_graph *b) {
    if (a == b) return 1;
    if (memcmp(a->grid, b->grid, sizeof a->grid) || a->threads != b->threads ||
        a->forloop != b->forloop || a->n_kin != b->n_kin)
        return 0;
    for (int k = 0; k < a->n_kin; k++)
        if (a->kin_dtype[k] != b->kin_dtype[k] ||
            memcmp(&a->kin_shape[k], &b->kin_shape[k], sizeof a->kin_shape[k]))
            return 0;
    return ir_graph_equal(a, b);
}
