/* api: the public entry points of include/mugen.h over the internal stages. Each call checks
 * its arguments, runs the stage, and (with MUGEN_CHECK=1) re-verifies the IR afterwards. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "eval/ff.h"
#include "ir/ir.h"
#include "driver.h"
#include "lower/lower.h"
#include "opt/opt.h"
#include "verify/verify.h"
#include "api_internal.h"
#include "search/search.h"
#include "tune/selector.h"

enum { MAX_FILE = 256 << 20 };

/* MUGEN_CHECK=1: a failed IR check after a stage is a bug in that stage. */
static void check_stage(const ir_graph *g, const char *stage) {
    const char *e = getenv("MUGEN_CHECK");
    if (!e || !*e || !strcmp(e, "0")) return;
    mg_ctx c = {{0}};
    mg_status rc = ir_check(g, &c);
    if (rc && rc != MG_ERR_NOMEM) { /* out of memory while checking is not a broken invariant */
        fprintf(stderr, "mugen: IR check failed after %s: %s\n", stage, c.msg);
        MG_ASSERT(!"IR check failed");
    }
}

mg_status mg_program_parse(mg_ctx *ctx, const char *text, size_t len, const char *filename,
                           mg_program **out) {
    if (!text || !out) return ctx_err(ctx, MG_ERR_INVALID, "mg_program_parse: NULL argument");
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    mg_program *p = base_calloc(1, sizeof *p);
    if (!p) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = i < len && text[i] == '{' ? ir_parse_json(ctx, text, len, filename, &p->g)
                                             : ir_parse_text(ctx, text, len, filename, &p->g);
    if (!rc && p->g->n_syms) { /* kept to be parsed again at each binding (mg_program_bind_dim) */
        rc = ir_sym_check(ctx, text, len, filename, p->g);
        p->src = rc ? NULL : base_alloc(len + 1), p->file = rc ? NULL : base_strdup(filename ? filename : "<input>");
        if (!rc && (!p->src || !p->file)) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        if (!rc) memcpy(p->src, text, len), p->src[len] = 0, p->src_len = len;
    }
    if (rc) {
        mg_program_free(p);
        return rc;
    }
    check_stage(p->g, "parse");
    *out = p;
    return MG_OK;
}

mg_status mg_program_load(mg_ctx *ctx, const char *path, mg_program **out) {
    if (!path || !out) return ctx_err(ctx, MG_ERR_INVALID, "mg_program_load: NULL argument");
    int is_stdin = !strcmp(path, "-");
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) return ctx_err(ctx, MG_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    strbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && !b.oom && b.len <= MAX_FILE) {
        if (b.len + n > b.cap) {
            size_t cap = b.cap ? b.cap : 65536;
            while (cap < b.len + n + 1) cap *= 2;
            char *s = base_realloc(b.s, cap);
            if (!s) b.oom = 1;
            else b.s = s, b.cap = cap;
        }
        if (!b.oom) memcpy(b.s + b.len, chunk, n), b.len += n;
    }
    int err = ferror(f) ? errno : 0;
    if (!is_stdin) fclose(f);
    mg_status rc;
    if (err) rc = ctx_err(ctx, MG_ERR_IO, "%s: cannot read: %s", path, strerror(err));
    else if (b.oom) rc = ctx_err(ctx, MG_ERR_NOMEM, "%s: out of memory reading the file", path);
    else if (b.len > MAX_FILE) rc = ctx_err(ctx, MG_ERR_LIMIT, "%s: file is larger than 256 MiB", path);
    else rc = mg_program_parse(ctx, b.s ? b.s : "", b.len, is_stdin ? "<stdin>" : path, out);
    sb_free(&b);
    return rc;
}

void mg_program_free(mg_program *prog) {
    if (!prog) return;
    for (int k = 0; k < IR_MAX_LENS; k++) base_free(prog->lens[k]);
    ir_graph_free(prog->g);
    base_free(prog->src), base_free(prog->file);
    base_free(prog);
}

static int count_inputs(const ir_graph *g) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i].op == IR_OP_INPUT;
    return n;
}
int mg_program_n_inputs(const mg_program *prog) { return prog ? count_inputs(prog->g) : 0; }
int mg_program_n_outputs(const mg_program *prog) { return prog ? prog->g->n_outputs : 0; }

mg_status mg_ragged_refuse(const ir_graph *g, mg_ctx *ctx, const char *what) {
    if (!g || !g->n_lens) return MG_OK;
    return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s of a ragged program (lengths %s) is not supported yet (docs/ragged.md "
                   "says what runs: the evaluators, verification, and run, emit, lower and optimize with bound lengths)", what, g->lens[0].name);
}

/* Packed element count of a tensor of shape s under prog's bound lengths; 0 when one is unbound. */
static int64_t packed_numel(const mg_program *prog, const ir_shape *s) {
    if (!s->rag[0]) return ir_numel(s);
    for (int k = 0; k < prog->g->n_lens; k++)
        if (!prog->lens[k]) return 0;
    int64_t n = 0;
    for (int64_t b = 0; b < s->d[0]; b++) n += ir_slab_numel(s, (const int64_t *const *)prog->lens, b);
    return n;
}

int mg_program_n_lengths(const mg_program *prog) { return prog ? prog->g->n_lens : 0; }

mg_status mg_lengths_bound(const mg_program *prog, mg_ctx *ctx) {
    for (int k = 0; k < prog->g->n_lens; k++)
        if (!prog->lens[k])
            return ctx_err(ctx, MG_ERR_INVALID, "lengths '%s' are not bound (mg_program_bind_lengths; mugen: --lengths %s=FILE)",
                           prog->g->lens[k].name, prog->g->lens[k].name);
    return MG_OK;
}

int mg_program_n_dims(const mg_program *prog) { return prog ? prog->g->n_syms : 0; }

mg_status mg_program_dim(const mg_program *prog, int k, const char **name, int64_t *lo, int64_t *hi, int64_t *val) {
    if (!prog || k < 0 || k >= prog->g->n_syms) return MG_ERR_INVALID;
    const ir_sym *s = &prog->g->syms[k];
    if (name) *name = s->name;
    if (lo) *lo = s->lo;
    if (hi) *hi = s->hi;
    if (val) *val = s->val;
    return MG_OK;
}

int mg_program_dim_reduced(const mg_program *prog, int k) {
    return prog && k >= 0 && k < prog->g->n_syms && prog->g->syms[k].reduced;
}

int64_t mg_program_dim_capacity(const mg_program *prog, int k, int64_t v) {
    return prog && k >= 0 && k < prog->g->n_syms ? ir_sym_capacity(&prog->g->syms[k], v) : v;
}

/* prog's instance with symbolic dim k at v[k] (each in its range, or a capacity) into *out */
static mg_status instance(const mg_program *prog, mg_ctx *ctx, const int64_t *v, ir_graph **out) {
    mg_status rc = ir_parse_text_at(ctx, prog->src, prog->src_len, prog->file, v, prog->g->n_syms, 0, out);
    for (int k = 0; !rc && k < prog->g->n_syms; k++) (*out)->syms[k].reduced = prog->g->syms[k].reduced; /* ir_sym_check's verdict */
    return rc;
}

mg_status mg_program_dim_bits(const mg_program *prog, mg_ctx *ctx, unsigned char *bits, int max) {
    if (prog->g->n_syms != 1 || !prog->src) return ctx_err(ctx, MG_ERR_INVALID, "a program of one symbolic dim is wanted");
    int64_t v1[IR_MAX_SYMS] = {1009}, v2[IR_MAX_SYMS] = {1013}; /* sym.c's probes: sizes no other dim has */
    ir_graph *a = NULL, *b = NULL;
    mg_status rc = ir_parse_text_at(ctx, prog->src, prog->src_len, prog->file, v1, 1, 1, &a);
    if (!rc) rc = ir_parse_text_at(ctx, prog->src, prog->src_len, prog->file, v2, 1, 1, &b);
    for (int i = 0, ni = 0; !rc && i < a->n_nodes && i < b->n_nodes; i++) {
        if (a->nodes[i].op != IR_OP_INPUT) continue;
        unsigned m = 0;
        for (int d = 0; d < a->nodes[i].shape.ndim; d++) m |= (unsigned)(a->nodes[i].shape.d[d] != b->nodes[i].shape.d[d]) << d;
        if (ni < max) bits[ni] = (unsigned char)m;
        ni++;
    }
    ir_graph_free(a), ir_graph_free(b);
    return rc;
}

mg_status mg_program_instance(const mg_program *prog, mg_ctx *ctx, int64_t cap, ir_graph **out) {
    int64_t v[IR_MAX_SYMS] = {cap};
    return prog->g->n_syms == 1 ? instance(prog, ctx, v, out) : ctx_err(ctx, MG_ERR_INVALID, "a program of one symbolic dim is wanted");
}

mg_status mg_program_bind_dim(mg_ctx *ctx, mg_program *prog, const char *name, int64_t value) {
    if (!prog || !name) return ctx_err(ctx, MG_ERR_INVALID, "mg_program_bind_dim: NULL argument");
    int k = ir_find_sym(prog->g, name);
    if (k < 0) return ctx_err(ctx, MG_ERR_INVALID, "the program declares no dim '%s'", name);
    const ir_sym *s = &prog->g->syms[k];
    if (value < s->lo || value > s->hi)
        return ctx_err(ctx, MG_ERR_INVALID, "dim %s = %" PRId64 " is outside its range [%" PRId64 ", %" PRId64 "]", name, value, s->lo, s->hi);
    int64_t v[IR_MAX_SYMS];
    for (int j = 0; j < prog->g->n_syms; j++) v[j] = j == k ? value : prog->g->syms[j].val;
    ir_graph *g = NULL;
    mg_status rc = instance(prog, ctx, v, &g);
    if (rc) return rc;
    ir_graph_free(prog->g);
    prog->g = g;
    return MG_OK;
}

mg_status mg_program_set_variant(mg_ctx *ctx, mg_program *prog, const char *name, int64_t cap) {
    if (!prog || !name) return ctx_err(ctx, MG_ERR_INVALID, "mg_program_set_variant: NULL argument");
    int k = ir_find_sym(prog->g, name);
    if (k < 0) return ctx_err(ctx, MG_ERR_INVALID, "the program declares no dim '%s'", name);
    const ir_sym *s = &prog->g->syms[k];
    if (cap && (cap < s->lo || cap > s->hi || ir_sym_capacity(s, cap) != cap))
        return ctx_err(ctx, MG_ERR_INVALID, "%" PRId64 " is not a capacity of dim %s [%" PRId64 ", %" PRId64 "] (1, 2, 4, ..., 128, then multiples of 128, "
                       "at most %" PRId64 ")", cap, name, s->lo, s->hi, s->hi);
    prog->variant[k] = cap;
    return MG_OK;
}

int64_t mg_program_dim_choice(const mg_program *prog, int k) {
    return prog && k >= 0 && k < prog->g->n_syms ? mg_program_variant(prog, k, NULL) : 0;
}

int64_t mg_program_variant(const mg_program *prog, int k, int *how) {
    const ir_sym *s = &prog->g->syms[k];
    int64_t cap = ir_sym_capacity(s, s->val), c = 0;
    if (how) *how = 0;
    if (prog->variant[k]) return prog->variant[k];
    const char *path = getenv("MUGEN_SELECTOR");
    if (!path || !*path || prog->g->n_syms != 1) return cap;
    sl_model *m = NULL;
    mg_ctx c0 = {{0}};
    if (sl_model_load(&c0, path, &m) == MG_OK && sl_choose(m, s->val, &c) == MG_OK && c >= s->val && c <= s->hi &&
        ir_sym_capacity(s, c) == c)
        cap = c, c = 1;
    else
        c = 2;
    if (how) *how = (int)c;
    sl_model_free(m);
    return cap;
}

mg_status mg_token_program(const mg_program *prog, const mg_program *ugraph, mg_ctx *ctx, const char *what, ir_graph **tok) {
    *tok = NULL;
    if (prog->g->n_syms) { /* the variant whose capacities hold the bound values (docs/tuning.md) */
        if (ugraph) return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s: a program of symbolic dims is lowered at each size; a μGraph is for one size", what);
        int64_t v[IR_MAX_SYMS];
        int same = 1;
        for (int k = 0; k < prog->g->n_syms; k++) {
            const ir_sym *s = &prog->g->syms[k];
            v[k] = mg_program_variant(prog, k, NULL), same &= v[k] == s->val;
            if (v[k] < s->val)
                return ctx_err(ctx, MG_ERR_INVALID, "dim %s = %" PRId64 ": the variant for %" PRId64 " rows does not hold it", s->name, s->val, v[k]);
        }
        return same ? MG_OK : instance(prog, ctx, v, tok);
    }
    if (!prog->g->n_lens) return ugraph ? mg_ragged_refuse(ugraph->g, ctx, what) : MG_OK;
    if (ugraph && ugraph->g->n_lens) return mg_ragged_refuse(ugraph->g, ctx, "a given μGraph"); /* the token form's, static */
    mg_status rc = mg_lengths_bound(prog, ctx);
    int64_t T = 0;
    for (int64_t b = 0; !rc && b < prog->g->lens[0].count; b++) T += prog->lens[0][b];
    /* capacity: the tokens rounded up to MG_TOKEN_ROWS, whole tiles for the products (docs/ragged.md) */
    return rc ? rc : ir_token_form(prog->g, ctx, mg_token_rows(T), tok);
}

mg_status mg_program_lengths(const mg_program *prog, int k, const char **name, int64_t *count, int64_t *max) {
    if (!prog || k < 0 || k >= prog->g->n_lens) return MG_ERR_INVALID;
    const ir_lengths *L = &prog->g->lens[k];
    if (name) *name = L->name;
    if (count) *count = L->count;
    if (max) *max = L->max;
    return MG_OK;
}

mg_status mg_program_bind_lengths(mg_ctx *ctx, mg_program *prog, const char *name, const int64_t *len, int64_t n) {
    if (!prog || !name || (!len && n)) return ctx_err(ctx, MG_ERR_INVALID, "mg_program_bind_lengths: NULL argument");
    int k = ir_find_lengths(prog->g, name);
    if (k < 0) return ctx_err(ctx, MG_ERR_INVALID, "the program declares no lengths '%s'", name);
    mg_status rc = ir_lengths_check(prog->g, ctx, k, len, n);
    if (rc) return rc;
    int64_t *c = base_alloc((size_t)n * sizeof *c + 1);
    if (!c) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    memcpy(c, len, (size_t)n * sizeof *c);
    base_free(prog->lens[k]);
    prog->lens[k] = c;
    return MG_OK;
}

static void describe(const mg_program *prog, int i, mg_tensor_desc *d) {
    const ir_graph *g = prog->g;
    const ir_node *n = &g->nodes[i];
    d->name = n->name, d->dtype = n->dtype, d->ndim = n->shape.ndim;
    for (int k = 0; k < MG_MAX_DIMS; k++) {
        d->dims[k] = k < n->shape.ndim ? n->shape.d[k] : 1;
        d->ragged[k] = k > 0 && k < n->shape.ndim ? n->shape.rag[k] : 0;
    }
    d->numel = packed_numel(prog, &n->shape);
    d->range = n->op == IR_OP_INPUT ? ir_input_range(n) : 0;
}

mg_status mg_program_input(const mg_program *prog, int i, mg_tensor_desc *d) {
    if (!prog || !d || i < 0) return MG_ERR_INVALID;
    for (int k = 0; k < prog->g->n_nodes; k++)
        if (prog->g->nodes[k].op == IR_OP_INPUT && i-- == 0) {
            describe(prog, k, d);
            return MG_OK;
        }
    return MG_ERR_INVALID;
}

mg_status mg_program_output(const mg_program *prog, int i, mg_tensor_desc *d) {
    if (!prog || !d || i < 0 || i >= prog->g->n_outputs) return MG_ERR_INVALID;
    describe(prog, prog->g->outputs[i], d);
    return MG_OK;
}

/* MG_FMT_TASKS: g lowered (unless a μGraph), planned, its task graph built, checked, drawn. */
static mg_status print_tasks(const ir_graph *g, mg_ctx *ctx, strbuf *sb) {
    ir_graph *owned = NULL;
    const ir_graph *use = g;
    op_plan *plan = NULL;
    op_taskgraph *tg = NULL;
    mg_status rc = dr_lower(g, ctx, NULL, CG_CUDA, &owned, &use);
    if (!rc) rc = op_plan_new(use, ctx, mg_device_default(), &op_opts_default, &plan);
    if (!rc) rc = op_taskgraph_new(plan, ctx, &tg);
    if (!rc) rc = op_taskgraph_check(plan, tg, ctx);
    if (!rc) {
        sb_printf(sb, "// task graph: %d launches, %d tasks, %" PRId64 " dependencies (%" PRId64
                  " from element ranges, the others on whole launches); checked\n", tg->n_launches, tg->n_tasks,
                  tg->n_deps, tg->n_exact);
        op_taskgraph_dot(plan, tg, sb);
    }
    op_taskgraph_free(tg), op_plan_free(plan), ir_graph_free(owned);
    return rc;
}

mg_status mg_program_format(mg_ctx *ctx, const mg_program *prog, mg_format fmt, char **out) {
    if (!prog || !out) return ctx_err(ctx, MG_ERR_INVALID, "mg_program_format: NULL argument");
    strbuf sb = {0};
    mg_status rc = MG_OK;
    switch (fmt) {
    case MG_FMT_TEXT: ir_print_text(prog->g, &sb); break;
    case MG_FMT_JSON: rc = ir_print_json(prog->g, ctx, &sb); break;
    case MG_FMT_DOT: ir_print_dot(prog->g, &sb); break;
    case MG_FMT_PARTITION:
        if (!(rc = mg_ragged_refuse(prog->g, ctx, "the Lax partition"))) rc = ir_print_partition(prog->g, ctx, &sb);
        break;
    case MG_FMT_TASKS:
        if (!(rc = mg_ragged_refuse(prog->g, ctx, "the task graph"))) rc = print_tasks(prog->g, ctx, &sb);
        break;
    default: rc = ctx_err(ctx, MG_ERR_INVALID, "unknown format %d", (int)fmt);
    }
    char *s = rc ? NULL : sb_take(&sb);
    if (!rc && !s) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    sb_free(&sb);
    if (!rc) *out = s;
    return rc;
}

mg_status mg_program_lax(mg_ctx *ctx, const mg_program *prog, int *is_lax, const char **why) {
    if (!prog || !is_lax) return ctx_err(ctx, MG_ERR_INVALID, "mg_program_lax: NULL argument");
    char buf[1024] = "";
    int r = ir_is_lax(prog->g, buf, sizeof buf);
    if (r < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    *is_lax = r;
    ctx_err(ctx, MG_OK, "%s", buf);
    if (why) *why = ctx ? ctx->msg : "";
    return MG_OK;
}

mg_status mg_program_lower(mg_ctx *ctx, const mg_program *prog, mg_program **out) {
    if (!prog || !out) return ctx_err(ctx, MG_ERR_INVALID, "mg_program_lower: NULL argument");
    *out = NULL;
    ir_graph *tok = NULL; /* a ragged program lowers in token form (bound lengths) */
    mg_status rc = mg_token_program(prog, NULL, ctx, "lowering", &tok);
    if (rc) return rc;
    mg_program *p = base_calloc(1, sizeof *p);
    if (!p) return ir_graph_free(tok), ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    rc = lw_lower(tok ? tok : prog->g, ctx, mg_device_default(), 0, NULL, &p->g, NULL);
    if (rc) base_free(p), p = NULL;
    ir_graph_free(tok);
    *out = p;
    return rc;
}

mg_status mg_eval_float(mg_ctx *ctx, const mg_program *prog, int f64, const double *const *inputs,
                        double *const *outputs) {
    if (!prog || (!inputs && count_inputs(prog->g)) || !outputs)
        return ctx_err(ctx, MG_ERR_INVALID, "mg_eval_float: NULL argument");
    if (prog->g->n_lens) { /* ragged: sequence by sequence, on packed tensors */
        mg_status rc = mg_lengths_bound(prog, ctx);
        if (rc) return rc;
        return ev_float_ragged(prog->g, ctx, f64 ? EV_F64 : 0, (const int64_t *const *)prog->lens, inputs, outputs);
    }
    return ev_float(prog->g, ctx, f64 ? EV_F64 : 0, inputs, outputs);
}

void mg_field_draw(uint64_t seed, mg_field *f) {
    ff_needs none = {.n_qr = 0};
    ff_field F;
    ff_field_draw(seed, &none, &F);
    *f = (mg_field){F.P.m, F.Q.m, F.omega};
}

mg_status mg_eval_field(mg_ctx *ctx, const mg_program *prog, const mg_field *f,
                        const uint32_t *const *in_p, const uint32_t *const *in_q,
                        uint32_t *const *out_p, uint32_t *const *out_q) {
    if (!prog || !f || ((!in_p || !in_q) && count_inputs(prog->g)) || !out_p || !out_q)
        return ctx_err(ctx, MG_ERR_INVALID, "mg_eval_field: NULL argument");
    mg_status bound = mg_lengths_bound(prog, ctx);
    if (bound) return bound;
    if (f->q < (1u << 30) || f->q >= (1u << 31) || f->q % 8 != 7 || f->p != 2 * f->q + 1 ||
        !ff_is_prime(f->q) || !ff_is_prime(f->p))
        return ctx_err(ctx, MG_ERR_INVALID, "mg_eval_field: p = %u, q = %u is not a field of the "
                       "family (q prime in [2^30, 2^31), q = 7 mod 8, p = 2q + 1 prime)", f->p, f->q);
    ff_field F = {ff_mod_make(f->p), ff_mod_make(f->q), f->omega};
    const ir_graph *g = prog->g;
    for (int i = 0, k = 0; i < g->n_nodes; i++) { /* ev_field trusts its inputs to be reduced */
        if (g->nodes[i].op != IR_OP_INPUT) continue;
        int64_t total = packed_numel(prog, &g->nodes[i].shape);
        for (int64_t t = 0; t < total; t++)
            if (in_p[k][t] >= f->p || (in_q[k][t] >= f->q && in_q[k][t] != FF_NONE)) {
                char lb[128];
                return ctx_err(ctx, MG_ERR_INVALID, "input '%s' element %lld is not in Z_p x Z_q",
                               ir_node_label(g, i, lb, sizeof lb), (long long)t);
            }
        k++;
    }
    if (g->n_lens)
        return ev_field_ragged(g, ctx, &F, (const int64_t *const *)prog->lens, in_p, in_q, out_p, out_q);
    return ev_field(prog->g, ctx, &F, in_p, in_q, out_p, out_q);
}

/* A ragged program against a static μGraph of its token form (what mugen search --lengths and
 * optimize --lengths write): the token form over the μGraph's rows (its input named as a
 * per-sequence input of the program gives them), verified as a static program. Each of its rows
 * is computed from that row alone, so the verdict holds for every batch of at most that many
 * tokens, whatever its lengths. Not with attention over the ragged dim (seqattn has no field
 * evaluation). */
static mg_status verify_token_form(mg_ctx *ctx, const ir_graph *p, const ir_graph *u, int tests, uint64_t seed,
                                   mg_verify_report *r) {
    int64_t T = 0;
    for (int i = 0; i < p->n_nodes && !T; i++) {
        const ir_node *x = &p->nodes[i];
        if (x->op != IR_OP_INPUT || !x->shape.rag[0] || !x->name) continue;
        for (int j = 0; j < u->n_nodes && !T; j++)
            if (u->nodes[j].op == IR_OP_INPUT && u->nodes[j].name && !strcmp(u->nodes[j].name, x->name) && u->nodes[j].shape.ndim)
                T = u->nodes[j].shape.d[0];
    }
    if (!T)
        return ctx_err(ctx, MG_ERR_INVALID, "the program is ragged and the μGraph is not, and no per-sequence input of the "
                       "program is an input of the μGraph (a token form's μGraph has them as [tokens, ...])");
    ir_graph *tok = NULL;
    mg_status rc = ir_token_form(p, ctx, T, &tok);
    for (int i = 0; !rc && i < tok->n_nodes; i++)
        if (tok->nodes[i].op == IR_OP_SEQATTN)
            rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "verifying a token form with attention over the ragged dim (seqattn, which "
                         "has no field evaluation) is not supported; mugen run --lengths checks the μGraph against the "
                         "per-sequence reference");
    if (!rc) rc = vf_verify(tok, u, ctx, tests, seed, r);
    ir_graph_free(tok);
    if (rc || r->verdict != MG_EQUIVALENT) return rc;
    char text[sizeof r->text];
    snprintf(text, sizeof text, "as the program's token form over %" PRId64 " rows, each row computed from its own row "
             "alone, so for every batch of at most %" PRId64 " tokens, whatever its lengths: %.1800s", T, T, r->text);
    memcpy(r->text, text, sizeof text);
    return MG_OK;
}

mg_status mg_verify(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph, int tests,
                    uint64_t seed, mg_verify_report *r) {
    if (!prog || !ugraph || !r) return ctx_err(ctx, MG_ERR_INVALID, "mg_verify: NULL argument");
    if (prog->g->n_lens && !ugraph->g->n_lens) return verify_token_form(ctx, prog->g, ugraph->g, tests, seed, r);
    if (prog->g->n_lens || ugraph->g->n_lens) /* sequence by sequence, at length vectors drawn (docs/ragged.md) */
        return vf_verify_ragged(prog->g, ugraph->g, ctx, tests, seed, 4, r);
    return vf_verify(prog->g, ugraph->g, ctx, tests, seed, r);
}

/* ---- the superoptimizer ---- */
void mg_search_defaults(mg_search_opts *o) { sr_opts_default(o); }
void mg_search_set_sms(mg_search_opts *o, int n_sm) { sr_grid_for_sms(o, n_sm); }

mg_status mg_search_set_device(mg_ctx *ctx, mg_search_opts *o, const char *name) {
    const mg_device *d = mg_device_lookup(name ? name : "", ctx);
    if (!d) return MG_ERR_INVALID;
    o->device = d->name;
    sr_grid_for_sms(o, d->n_sm);
    return MG_OK;
}

/* The limits mg_search_set names (as `mugen search` spells them, less the dashes), each an int
 * field of mg_search_opts and its range. */
static const struct search_int_opt {
    const char *name;
    size_t off;
    long lo, hi;
} SEARCH_INTS[] = {
    {"max-kops", offsetof(mg_search_opts, max_kops), 1, 8},
    {"max-bops", offsetof(mg_search_opts, max_bops), 2, 40},
    {"max-kin", offsetof(mg_search_opts, max_kin), 1, 8},
    {"max-kout", offsetof(mg_search_opts, max_kout), 1, 8},
    {"max-kernels", offsetof(mg_search_opts, max_kernels), 0, 8},
    {"grid-dims", offsetof(mg_search_opts, max_grid_dims), 1, 3},
    {"max-blocks", offsetof(mg_search_opts, max_blocks), 1, 1 << 20},
    {"threads", offsetof(mg_search_opts, threads), 1, 256},
    {"tests", offsetof(mg_search_opts, verify_tests), 1, 1000},
};

/* An option's name as mg_search_set and mg_optimize_set read it: leading dashes dropped, '_'
 * as '-', into buf (n bytes). 0 when it does not fit. */
static int option_key(const char *name, char *buf, size_t n) {
    while (*name == '-') name++;
    size_t k = 0;
    for (; name[k] && k + 1 < n; k++) buf[k] = name[k] == '_' ? '-' : name[k];
    buf[k] = 0;
    return !name[k];
}

/* The int in s within [lo, hi] into *v; 0 when s is none. */
static int option_int(const char *s, long lo, long hi, long *v) {
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    return !errno && end != s && !*end && *v >= lo && *v <= hi;
}

mg_status mg_search_set(mg_ctx *ctx, mg_search_opts *o, const char *name, const char *value) {
    char key[32];
    if (!o || !name || !value) return ctx_err(ctx, MG_ERR_INVALID, "mg_search_set: NULL argument");
    if (!option_key(name, key, sizeof key)) return ctx_err(ctx, MG_ERR_INVALID, "unknown option '%s'", name);
    char *end;
    for (size_t k = 0; k < sizeof SEARCH_INTS / sizeof *SEARCH_INTS; k++) {
        const struct search_int_opt *t = &SEARCH_INTS[k];
        long v;
        if (strcmp(key, t->name)) continue;
        if (!option_int(value, t->lo, t->hi, &v))
            return ctx_err(ctx, MG_ERR_INVALID, "%s takes %ld to %ld, got '%s'", name, t->lo, t->hi, value);
        *(int *)((char *)o + t->off) = (int)v;
        return MG_OK;
    }
    if (!strcmp(key, "time-limit")) {
        double t = strtod(value, &end);
        if (end == value || *end || !(t > 0) || t > 1e9)
            return ctx_err(ctx, MG_ERR_INVALID, "%s takes seconds > 0, got '%s'", name, value);
        o->time_limit = t;
    } else if (!strcmp(key, "slack")) {
        double t = strtod(value, &end);
        if (end == value || *end || !(t == 0 || t >= 1) || t > 1e6)
            return ctx_err(ctx, MG_ERR_INVALID, "%s takes 0 (verify every schedule) or a factor >= 1, got '%s'", name, value);
        o->slack = t;
    } else if (!strcmp(key, "seed")) {
        errno = 0;
        unsigned long long sd = strtoull(value, &end, 10);
        if (errno || end == value || *end || value[0] == '-') return ctx_err(ctx, MG_ERR_INVALID, "bad seed '%s'", value);
        o->seed = sd;
    } else if (!strcmp(key, "ops")) {
        o->ops = value;
    } else {
        return ctx_err(ctx, MG_ERR_INVALID, "unknown option '%s' (the search's: max-kops, max-bops, max-kin, max-kout, "
                       "max-kernels, grid-dims, max-blocks, threads, tests, time-limit, slack, seed, ops; optimize's also "
                       "max-piece-ops, max-piece-heavy)", name);
    }
    return MG_OK;
}

mg_status mg_optimize_set(mg_ctx *ctx, mg_optimize_opts *o, const char *name, const char *value) {
    if (!o || !name || !value) return ctx_err(ctx, MG_ERR_INVALID, "mg_optimize_set: NULL argument");
    char key[32];
    int *dst = !option_key(name, key, sizeof key) ? NULL : !strcmp(key, "max-piece-ops") ? &o->max_piece_ops
             : !strcmp(key, "max-piece-heavy") ? &o->max_piece_heavy : NULL;
    if (!dst) return mg_search_set(ctx, &o->search, name, value);
    long v;
    if (!option_int(value, 1, 1000, &v)) return ctx_err(ctx, MG_ERR_INVALID, "%s takes 1 to 1000, got '%s'", name, value);
    *dst = (int)v;
    return MG_OK;
}

/* What a search of prog searches: prog itself, or for a ragged program with bound lengths its
 * token form at that batch's capacity (the representative batch) when the token form computes
 * every row from that row alone (no attention over the ragged dim): a μGraph of it then holds
 * for every batch of that capacity, whatever its lengths (docs/ragged.md). *tok: the token form
 * to free (NULL for a static program). */
static mg_status search_graph(const mg_program *prog, mg_ctx *ctx, ir_graph **tok, const ir_graph **g) {
    *g = prog->g;
    mg_status rc = mg_token_program(prog, NULL, ctx, "the search", tok);
    if (rc || !*tok) return rc;
    for (int i = 0; i < (*tok)->n_nodes; i++)
        if ((*tok)->nodes[i].op == IR_OP_SEQATTN) {
            ir_graph_free(*tok), *tok = NULL;
            return ctx_err(ctx, MG_ERR_UNSUPPORTED, "the search of a ragged program with attention over its ragged dim "
                           "is not supported: the attention runs as seqattn's kernel (docs/ragged.md); 'mugen optimize "
                           "--lengths' searches the program's token-wise pieces");
        }
    *g = *tok;
    return MG_OK;
}

mg_status mg_search(mg_ctx *ctx, const mg_program *prog, const mg_search_opts *o,
                    mg_search_result *r) {
    if (!prog || !o || !r) return ctx_err(ctx, MG_ERR_INVALID, "mg_search: NULL argument");
    ir_graph *tok = NULL;
    const ir_graph *g;
    mg_status rc = search_graph(prog, ctx, &tok, &g);
    if (!rc) rc = sr_search(g, o, ctx, r);
    ir_graph_free(tok);
    return rc;
}

static mg_status search_cached(mg_ctx *ctx, const ir_graph *g, const mg_search_opts *o, int flags, mg_search_result *r);

mg_status mg_search_cached(mg_ctx *ctx, const mg_program *prog, const mg_search_opts *o, int flags,
                           mg_search_result *r) {
    if (!prog || !o || !r) return ctx_err(ctx, MG_ERR_INVALID, "mg_search_cached: NULL argument");
    ir_graph *tok = NULL;
    const ir_graph *g;
    mg_status rr = search_graph(prog, ctx, &tok, &g);
    if (rr) return rr;
    rr = search_cached(ctx, g, o, flags, r);
    ir_graph_free(tok);
    return rr;
}

static mg_status search_cached(mg_ctx *ctx, const ir_graph *g, const mg_search_opts *o, int flags, mg_search_result *r) {
    int hit = 0, root = sr_rank() == 0, store = 1;
    mg_status rc = flags & MG_CACHE_REFRESH || !root ? MG_OK : sr_cache_lookup(g, o, ctx, r, &hit);
    if (rc && rc != MG_ERR_NOMEM) rc = MG_OK, hit = 0, store = 0; /* the search says what is wrong */
    /* with ranks, rank 0 decides: searched (0), from the cache (1), out of memory (2) */
    int how = sr_ranks_bcast(rc ? 2 : hit);
    if (how == 2) return root ? rc : ctx_err(ctx, MG_ERR_NOMEM, "rank 0 ran out of memory reading the search cache");
    if (how == 1) {
        if (!root) memset(r, 0, sizeof *r);
        return MG_OK;
    }
    /* no checkpoint of its own: the finished tasks kept in the cache's partial folder until the
     * search ends, so that a search stopped part way resumes them */
    sr_opts so = *o;
    char part[4400] = "";
    if (!o->ckpt_dir && root && store && !sr_cache_partial_dir(g, o, ctx, part, sizeof part)) so.ckpt_dir = part;
    rc = sr_search(g, &so, ctx, r);
    if (rc == MG_ERR_IO && part[0]) { /* a checkpoint there it cannot take: searched without */
        sr_cache_partial_drop(part);
        so.ckpt_dir = o->ckpt_dir, part[0] = 0;
        rc = sr_search(g, &so, ctx, r);
    }
    if (part[0] && (rc || (!r->stopped && r->tasks_done == r->tasks))) sr_cache_partial_drop(part);
    if (rc || !root || !store) return rc;
    mg_ctx *c2 = mg_ctx_new(); /* a failed store leaves ctx's message as it was */
    if (c2 && sr_cache_store(g, o, r, c2))
        fprintf(stderr, "mugen: note: the result was not stored in the search cache: %s\n", mg_ctx_error(c2));
    mg_ctx_free(c2);
    return MG_OK;
}

mg_status mg_ranks_start(mg_ctx *ctx, int *argc, char ***argv, int *rank, int *n_ranks) {
    mg_status rc = sr_ranks_start(argc, argv, ctx);
    if (rank) *rank = sr_rank();
    if (n_ranks) *n_ranks = sr_n_ranks();
    return rc;
}

void mg_ranks_end(void) { sr_ranks_end(); }

void mg_search_result_free(mg_search_result *r) {
    if (r) sr_result_free(r);
}
