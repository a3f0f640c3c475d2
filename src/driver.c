/* driver: the pipeline from a kernel graph to checked, timed code, as one readable list of
 * stage calls (mg_run, mg_emit in include/mugen.h):
 *   plan (opt/) -> emit (codegen/) -> compile and run (runtime/) -> compare with the float
 *   reference (eval/).
 * The target GPU is detected when the code runs on one (ir/device.c); `mugen optimize`
 * (cli/search.c) runs the search first and then this for its best μGraphs. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_internal.h"
#include "driver.h"
#include "codegen/codegen.h"
#include "eval/eval.h"
#include "lower/lower.h"
#include "opt/opt.h"
#include "runtime/runtime.h"
#include "verify/verify.h"

enum { MAX_OUT = 64, MAX_SETS = 8 }; /* MAX_OUT: mg_run_report.out[] */

typedef struct job {
    const ir_graph *prog, *ug;
    ir_graph *lowered; /* owned: prog lowered (lower/), when run without a μGraph */
    vf_io_map io;
    op_plan *plan;
    cg_program cg;
    double *in[VF_MAX_IO];  /* prog's inputs, in prog's order */
    double *ref[MAX_OUT];   /* prog's reference outputs */
    void *host[VF_MAX_IO + MAX_OUT]; /* storage-format copies, by cg buffer (see bufs below) */
    int reps;
    int reps_default; /* mg_run_opts.reps was 0: on C, timing stops after C_BUDGET_S */
    int pdl; /* !mg_run_opts.no_pdl */
    int specials; /* mg_run_opts.specials: the sign of a zero output counts too */
    mg_device dev; /* the target: detected from the GPU, else the default (ir/device.c) */
    const char *lens_name; /* a ragged program's token form: its lengths input, and their values */
    const int64_t *lens;
    int64_t n_seq, tokens, rows; /* and its sequences, tokens and capacity rows (report_text) */
    const ir_graph *bound; /* a program of one symbolic dim run as a capacity's variant (prog):
                            * the program at the call's B; outputs are compared on its rows */
    int64_t dim_b, dim_cap; /* then B and the capacity; run-time grids cover B's rows */
    const mg_program *dims; /* that program (its symbolic dims), or NULL */
    int bound_sub;          /* its dim is reduced: the reference reads each input's leading box */
    ir_shape in_shape[VF_MAX_IO]; /* the shapes in[] were made at (prog's, at reference time): a
                                   * variant of a smaller capacity takes each one's leading box */
    dr_reduced red;         /* its dim is reduced: the inputs' dims that follow it (dr_reduced_of);
                             * the code masks past dim_b (long long len) */
    long long len;
    int n_cut;              /* launches whose grid was cut to B's rows (row_grids) */
    int64_t blocks, waves;  /* then the blocks launched, and their waves: each launch's blocks
                             * over the target's SMs, rounded up, summed (the selector's cost
                             * model, bench/selector/train.py) */
} job;

enum { C_BUDGET_S = 1 }; /* seconds of timed runs the C backend's default reps stop after */

static double tol_of(mg_dtype t) { return t == MG_F16 ? 1e-2 : t == MG_BF16 ? 2e-2 : 1e-4; }

static void to_store(const double *x, int64_t n, mg_dtype t, void *dst) {
    for (int64_t i = 0; i < n; i++)
        if (t == MG_F32) ((float *)dst)[i] = (float)x[i];
        else ((uint16_t *)dst)[i] = t == MG_F16 ? base_f32_to_f16((float)x[i]) : base_f32_to_bf16((float)x[i]);
}

static double from_store(const void *src, int64_t i, mg_dtype t) {
    if (t == MG_F32) return ((const float *)src)[i];
    uint16_t h = ((const uint16_t *)src)[i];
    return t == MG_F16 ? base_f16_to_f32(h) : base_bf16_to_f32(h);
}

static op_opts opts_of(const mg_run_opts *o) {
    op_opts oo = op_opts_default;
    if (o) {
        oo.reuse = !o->no_reuse, oo.depth = !o->no_depth, oo.layout = !o->no_layout;
        oo.pipeline = !o->no_pipeline, oo.regacc = !o->no_regacc, oo.threads = !o->no_blocksize;
        oo.chain = !o->no_chain, oo.wgmma = o->wgmma, oo.persist = o->persist, oo.cluster = o->cluster;
        oo.tma = !o->no_tma, oo.prefetch = o->prefetch;
    }
    return oo;
}

int dr_sketch(const char *spec, const char **rest) {
    *rest = spec;
    if (strncmp(spec, "sketch=", 7)) return 0;
    char *end;
    long v = strtol(spec + 7, &end, 10);
    if (end == spec + 7 || (*end && *end != ',') || v < 0 || v >= LW_TILINGS) return -1;
    *rest = *end ? end + 1 : end;
    return (int)v;
}

mg_status dr_lower(const ir_graph *g, mg_ctx *ctx, const mg_run_opts *o, cg_target t, ir_graph **owned,
                   const ir_graph **use) {
    *use = g;
    int kernels = o && o->plain;
    for (int i = 0; i < g->n_nodes && !kernels; i++) kernels = g->nodes[i].op == IR_OP_KERNEL;
    if (kernels && o && o->schedule && !strncmp(o->schedule, "sketch=", 7))
        return ctx_err(ctx, MG_ERR_INVALID, "schedule '%s': sketch= chooses how mugen lowers a program; %s", o->schedule,
                       o->plain ? "--plain does not lower it" : "this one is a μGraph already");
    if (kernels) return MG_OK;
    /* the lowering's sketch (lw_tilings): the schedule's, else the tuning cache's for this
     * program on the default device (the one lowering plans for), else the default */
    const mg_device *dev = mg_device_default();
    const char *rest;
    char spec[DR_POINT_MAX];
    double us;
    int sk = 0;
    if (o && o->schedule && *o->schedule) {
        if ((sk = dr_sketch(o->schedule, &rest)) < 0)
            return ctx_err(ctx, MG_ERR_INVALID, "schedule '%s': sketch= takes 0 to %d, the lowerings 'mugen space' lists",
                           o->schedule, LW_TILINGS - 1);
    } else if (t == CG_CUDA && !(o && o->untuned) && dr_tuned_get(dev->name, dr_graph_key(g), spec, &us) &&
               (sk = dr_sketch(spec, &rest)) < 0)
        sk = 0; /* an entry naming no sketch: the default */
    mg_status rc = lw_lower(g, ctx, dev, t == CG_C, &lw_tilings[sk], owned, NULL);
    if (!rc) *use = *owned;
    return rc;
}

mg_status dr_schedule_point(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, const char *spec, op_opts *o,
                                op_force f[OP_SPACE_KERNELS]) {
    op_space *s = base_calloc(1, sizeof *s);
    int x[OP_SPACE_MAX];
    if (!s) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = op_space_new(g, ctx, dev, o, s);
    if (!rc) rc = op_space_parse(s, spec, ctx, x);
    int bad = rc ? 0 : op_space_check(g, dev, o, s, x);
    if (bad < 0) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    else if (bad) {
        char names[128] = "";
        for (int c = 0; c < OP_C_N; c++)
            if (bad >> c & 1) snprintf(names + strlen(names), sizeof names - strlen(names), " %s", op_constraints[c].name);
        rc = ctx_err(ctx, MG_ERR_INVALID, "schedule '%s': the device's limits reject it:%s (docs/tuning.md)", spec, names);
    }
    if (!rc) *o = op_space_opts(s, x, o, f);
    base_free(s);
    return rc;
}

uint64_t dr_graph_key(const ir_graph *g) {
    strbuf txt = {0};
    ir_print_text(g, &txt);
    uint64_t h = 1469598103934665603ull;
    for (const char *c = txt.oom ? "" : txt.s; c && *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    int bad = txt.oom || !txt.s;
    sb_free(&txt);
    return bad ? 0 : h;
}

/* the cache entry's extension: "tune-" and the device's name */
static void tuned_ext(const char *dev, char *ext, size_t n) { snprintf(ext, n, "tune-%s", dev ? dev : "none"); }

int dr_tuned_get(const char *dev, uint64_t key, char *spec, double *us) {
    char ext[64];
    tuned_ext(dev, ext, sizeof ext);
    void *data = NULL;
    size_t n = 0;
    if (!key || !rt_cache_get(key, ext, &data, &n)) return 0;
    /* "point SPEC\ntime_us US\n...": the text as dr_tuned_put wrote it */
    char *t = data, *nl = memchr(t, '\n', n);
    int ok = n > 6 && !memcmp(t, "point ", 6) && nl && (size_t)(nl - t - 6) < DR_POINT_MAX;
    if (ok) {
        memcpy(spec, t + 6, (size_t)(nl - t - 6)), spec[nl - t - 6] = 0;
        *us = (size_t)(nl + 1 - t) + 8 < n && !memcmp(nl + 1, "time_us ", 8) ? atof(nl + 9) : 0;
    }
    base_free(data);
    return ok;
}

void dr_tuned_put(const char *dev, uint64_t key, const char *spec, double us, const char *model) {
    char ext[64], text[DR_POINT_MAX + 512];
    tuned_ext(dev, ext, sizeof ext);
    int n = snprintf(text, sizeof text, "point %s\ntime_us %.3f\nmeasured_on %s\n", spec, us, model ? model : "");
    if (key && n > 0 && (size_t)n < sizeof text) rt_cache_put(key, ext, text, (size_t)n);
}

mg_status dr_reduced_of(const mg_program *prog, const ir_graph *ug, dr_reduced *r, mg_ctx *ctx) {
    memset(r, 0, sizeof *r);
    if (!prog || prog->g->n_syms != 1 || !prog->g->syms[0].reduced) return MG_OK;
    unsigned char bits[VF_MAX_IO] = {0};
    mg_status rc = mg_program_dim_bits(prog, ctx, bits, VF_MAX_IO);
    for (int i = 0; !rc && i < ug->n_nodes; i++) { /* by name: a μGraph's inputs are the program's */
        const ir_node *n = &ug->nodes[i];
        if (n->op != IR_OP_INPUT) continue;
        if (r->n == VF_MAX_IO) return ctx_err(ctx, MG_ERR_LIMIT, "more than %d inputs", VF_MAX_IO);
        for (int k = 0, ni = 0; k < prog->g->n_nodes; k++) {
            const ir_node *pn = &prog->g->nodes[k];
            if (pn->op != IR_OP_INPUT) continue;
            if (n->name && pn->name && !strcmp(n->name, pn->name) && ni < VF_MAX_IO) r->in[r->n] = bits[ni];
            ni++;
        }
        r->n++;
    }
    return rc;
}

mg_status dr_generate(const ir_graph *g, mg_ctx *ctx, const mg_run_opts *o, cg_target t, const mg_device *dev,
                          op_plan **plan, cg_program *cg, char *tuned, const dr_reduced *red) {
    op_opts oo = opts_of(o);
    if (red && red->n) oo.reduced_in = red->in, oo.n_reduced_in = red->n;
    if (t == CG_C) oo.chain = 0, oo.swizzle = 0, oo.persist = 0, oo.cluster = 0, oo.tma = 0; /* CUDA only (opt.h) */
    if (t == CG_C) oo.colmajor = 0; /* the C matmul reads B along its rows (opt.h) */
    /* C: tiles converted to f32 once, in their copy; no loads ahead (a copy on the CPU is
     * synchronous: the same six suite programs within 1% with and without the pipeline) */
    if (t == CG_C) oo.f32iter = 1, oo.pipeline = 0;
    op_force force[OP_SPACE_KERNELS];
    const char *point = NULL; /* the schedule's choices for these kernels (its sketch= was the lowering's) */
    if (t == CG_CUDA && o && o->schedule && *o->schedule && dr_sketch(o->schedule, &point) < 0) point = o->schedule;
    mg_status rc = point && *point ? dr_schedule_point(g, ctx, dev, point, &oo, force) : MG_OK;
    char spec[DR_POINT_MAX];
    double us = 0;
    if (tuned) *tuned = 0;
    if (!rc && t == CG_CUDA && !(o && ((o->schedule && *o->schedule) || o->untuned)) &&
        dr_tuned_get(dev->name, dr_graph_key(g), spec, &us)) {
        /* the tuning cache's point; one the space no longer takes (another build's rules, a
         * hand-edited entry) is passed over for the rules' */
        mg_ctx tc = {{0}};
        op_opts to = oo;
        if (dr_schedule_point(g, &tc, dev, spec, &to, force) == MG_OK) {
            oo = to;
            if (tuned) snprintf(tuned, DR_POINT_MAX, "%s", spec);
        }
    }
    if (!rc) rc = op_plan_new(g, ctx, dev, &oo, plan);
    if (!rc) rc = cg_emit(*plan, ctx, t, cg);
    return rc;
}

/* Input element t of input k with mg_run_opts.specials: every third element one of NaN,
 * +inf, -inf, -0, +0 (in turn, offset per input so that pairs of operands meet every
 * combination), the others x as drawn. */
static double special(double x, int64_t t, int k) {
    static const double v[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
    return t % 3 ? x : v[(t / 3 + 2 * k) % 5];
}

int64_t dr_sub_index(const ir_shape *big, const ir_shape *small, int64_t t) {
    int64_t at = 0, stride = 1;
    for (int d = small->ndim - 1; d >= 0; d--) {
        at += t % small->d[d] * stride;
        t /= small->d[d], stride *= big->d[d];
    }
    return at;
}

int dr_sub_holds(const ir_shape *big, const ir_shape *small, int64_t t) {
    for (int d = big->ndim - 1; d >= 0; d--) {
        if (t % big->d[d] >= small->d[d]) return 0;
        t /= big->d[d];
    }
    return 1;
}

/* Random inputs (uniform in [-r, r) for an input of range= r, 1 by default; rounded to dtype;
 * with specials some special values) and prog's f32 reference outputs. */
static mg_status reference(job *J, mg_ctx *ctx, uint64_t seed, int specials) {
    rng rg = {seed ^ 0x72756e31ull};
    int np = 0;
    for (int i = 0; i < J->prog->n_nodes; i++) {
        const ir_node *n = &J->prog->nodes[i];
        if (n->op != IR_OP_INPUT) continue;
        int64_t cnt = ir_numel(&n->shape);
        mg_status rc = ev_check_size(J->prog, ctx, i, sizeof(double));
        if (rc) return rc;
        if (!(J->in[np] = base_alloc((size_t)cnt * sizeof(double)))) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        J->in_shape[np] = n->shape;
        int is_lens = J->lens_name && n->name && !strcmp(n->name, J->lens_name);
        for (int64_t t = 0; t < cnt; t++) {
            double x = base_round_dtype((rng_uniform(&rg) * 2 - 1) * ir_input_range(n), n->dtype);
            J->in[np][t] = is_lens ? (double)J->lens[t] : specials ? special(x, t, np) : x;
        }
        np++;
    }
    for (int k = 0; k < J->prog->n_outputs; k++) {
        size_t cnt = (size_t)ir_numel(&J->prog->nodes[J->prog->outputs[k]].shape);
        mg_status rc = ev_check_size(J->prog, ctx, J->prog->outputs[k], sizeof(double));
        if (rc) return rc;
        if (!(J->ref[k] = base_alloc(cnt * sizeof(double)))) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    /* a capacity's variant: the reference is the program at the call's B, on the inputs' first
     * rows; for a reduced dim, on each input's entries before L, those past it NaN (the code
     * must not read them: codegen/mask.c) */
    if (!J->bound || !J->bound_sub) return ev_float(J->bound ? J->bound : J->prog, ctx, 0, (const double *const *)J->in, J->ref);
    double *sub[VF_MAX_IO] = {0};
    mg_status rc = MG_OK;
    for (int i = 0, k = 0; i < J->prog->n_nodes && !rc; i++) {
        if (J->prog->nodes[i].op != IR_OP_INPUT) continue;
        const ir_shape *big = &J->prog->nodes[i].shape, *small = &J->bound->nodes[i].shape;
        int64_t n = ir_numel(small), nb = ir_numel(big);
        if (!(sub[k] = base_alloc((size_t)n * sizeof(double) + 1))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        for (int64_t t = 0; !rc && t < n; t++) sub[k][t] = J->in[k][dr_sub_index(big, small, t)];
        for (int64_t t = 0; !rc && t < nb; t++)
            if (!dr_sub_holds(big, small, t)) J->in[k][t] = NAN;
        k++;
    }
    if (!rc) rc = ev_float(J->bound, ctx, 0, (const double *const *)sub, J->ref);
    for (int k = 0; k < VF_MAX_IO; k++) base_free(sub[k]);
    return rc;
}

/* Host buffers in storage format: inputs filled, a persistent launch's counters zeroed,
 * everything else poisoned with 0xFF bytes (NaN in f16, bf16 and f32), so an element the
 * code never writes cannot pass. */
static mg_status host_buffers(job *J, mg_ctx *ctx, void **bufs) {
    const cg_program *cg = &J->cg;
    for (int b = 0; b < cg->n_bufs; b++) {
        if (!(bufs[b] = base_alloc((size_t)cg->buf_bytes[b] + 1))) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        memset(bufs[b], b == cg->sync_buf ? 0 : 0xFF, (size_t)cg->buf_bytes[b]);
    }
    int ni = 0;
    for (int i = 0; i < J->ug->n_nodes; i++) {
        const ir_node *n = &J->ug->nodes[i];
        if (n->op != IR_OP_INPUT) continue;
        const double *x = J->in[J->io.in[ni]];
        const ir_shape *made = &J->in_shape[J->io.in[ni]];
        if (made->ndim == n->shape.ndim && memcmp(made->d, n->shape.d, sizeof(int64_t) * (size_t)n->shape.ndim)) {
            double *box = base_alloc((size_t)ir_numel(&n->shape) * sizeof(double) + 1); /* its leading box */
            if (!box) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
            for (int64_t t = 0; t < ir_numel(&n->shape); t++) box[t] = x[dr_sub_index(made, &n->shape, t)];
            to_store(box, ir_numel(&n->shape), n->dtype, bufs[cg->in_buf[ni]]);
            base_free(box);
        } else to_store(x, ir_numel(&n->shape), n->dtype, bufs[cg->in_buf[ni]]);
        ni++;
    }
    return MG_OK;
}

/* The class of a value where outputs must agree exactly: NaN, +inf, -inf, -0, +0; 0 for the
 * other finite values (compared by the relative error). */
static int value_class(double x) {
    return isnan(x) ? 1 : isinf(x) ? (x > 0 ? 2 : 3) : x == 0 ? (signbit(x) ? 4 : 5) : 0;
}

int dr_near_overflow(double a, double b, mg_dtype t) {
    double big = t == MG_F16 ? 65504.0 : t == MG_BF16 ? 3.3895313892515355e38 : 3.4028234663852886e38;
    if (isinf(b)) {
        double x = a;
        a = b, b = x;
    }
    return isinf(a) && isfinite(b) && (a > 0) == (b > 0) && fabs(b) >= big / (1 + tol_of(t));
}

/* Compares every output with the reference; fills r->out and r->ok. Where either is NaN or
 * infinite both must be the same (counted in n_nan otherwise; an infinity beside a finite
 * value past the dtype's largest over its tolerance is the same value, dr_near_overflow), and
 * with specials a zero must have the reference zero's sign; the relative error is taken over
 * the rest. */
static void compare(job *J, void *const *bufs, mg_run_report *r) {
    r->ok = 1;
    r->n_outputs = J->ug->n_outputs < MAX_OUT ? J->ug->n_outputs : MAX_OUT;
    for (int k = 0; k < r->n_outputs; k++) {
        const ir_node *n = &J->ug->nodes[J->ug->outputs[k]];
        const double *ref = J->ref[J->io.out[k]];
        mg_run_output *o = &r->out[k];
        memset(o, 0, sizeof *o);
        snprintf(o->name, sizeof o->name, "%s", n->name ? n->name : "?");
        double num = 0, den = 0;
        /* a variant for a capacity: the first rows, B's, are the call's (dim 0 of every output) */
        const ir_graph *bg = J->bound;
        const ir_shape *bs = bg ? &bg->nodes[bg->outputs[J->io.out[k]]].shape : &n->shape;
        int64_t cnt = ir_numel(bs);
        for (int64_t t = 0; t < cnt; t++) {
            double v = from_store(bufs[J->cg.out_buf[k]], dr_sub_index(&n->shape, bs, t), n->dtype), e = fabs(v - ref[t]);
            int cr = value_class(ref[t]), cv = value_class(v);
            if (cr > 3 || cv > 3) { /* a zero: its sign must agree only where the reference is 0 */
                if (cr > 3 && cv > 3 && cr != cv && J->specials) o->n_nan++;
                cr = cr > 3 ? 0 : cr, cv = cv > 3 ? 0 : cv;
            }
            if (cr != cv && dr_near_overflow(ref[t], v, n->dtype)) continue;
            if (cr != cv) o->n_nan++;
            else if (!cr && e > o->max_abs) o->max_abs = e;
            if (!cr && !cv) num += e * e, den += ref[t] * ref[t];
        }
        o->rel_err = den > 0 ? sqrt(num / den) : sqrt(num);
        o->tol = tol_of(n->dtype);
        o->ok = o->n_nan == 0 && o->rel_err <= o->tol;
        r->ok &= o->ok;
    }
}

/* ---- the C backend ---- */

static mg_status run_c(job *J, mg_ctx *ctx, mg_run_report *r) {
    const cg_program *cg = &J->cg;
    /* as many buffers as the plan has: a deep expression stored every few dozen levels
     * (opt/inline.c) can need thousands */
    void **bufs = base_calloc((size_t)cg->n_bufs + 1, sizeof *bufs);
    size_t *sizes = base_calloc((size_t)cg->n_bufs + 1, sizeof *sizes);
    char *so = NULL;
    if (!bufs || !sizes) {
        base_free(bufs), base_free(sizes);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    mg_status rc = rt_c_build(ctx, cg->src, &so, &r->cached, NULL);
    if (!rc) rc = host_buffers(J, ctx, bufs);
    for (int b = 0; b < cg->n_bufs; b++) sizes[b] = (size_t)cg->buf_bytes[b];
    /* the default reps stop after C_BUDGET_S of timed runs: a plain program's scalar loops
     * can take a second a run */
    rt_c_timing tm = {.reps = J->reps > 0 ? J->reps : 0, .budget_s = J->reps_default ? C_BUDGET_S : 0, .has_len = cg->reduced, .len = J->len};
    if (!rc) rc = rt_c_run_timed(ctx, so, "mg_entry", cg->n_bufs, bufs, sizes, &tm, 600);
    if (!rc) {
        compare(J, bufs, r);
        r->time_us = J->reps > 0 ? tm.ms * 1e3 : 0, r->n_sets = 1, r->n_timed = J->reps > 0 ? tm.n_timed : 0;
        r->backend = MG_BACKEND_C;
        snprintf(r->device, sizeof r->device, "C (OpenMP) on the host");
    }
    for (int b = 0; b < cg->n_bufs; b++) base_free(bufs[b]);
    base_free(bufs), base_free(sizes);
    base_free(so);
    return rc;
}

/* Run-time grids (docs/tuning.md): a call of B rows on the variant for cap rows launches only
 * the blocks over its first B rows, where cg_mark_rows finds the grid axis over them. The C
 * backend's loops stay whole (its mg_entry ignores grids). */
static void count_blocks(job *J) {
    J->blocks = J->waves = 0;
    for (int l = 0; l < J->cg.n_launches; l++) {
        const unsigned *g = J->cg.launches[l].grid;
        int64_t n = (int64_t)g[0] * g[1] * g[2], sm = J->dev.n_sm > 0 ? J->dev.n_sm : 1;
        J->blocks += n, J->waves += (n + sm - 1) / sm;
    }
}

void dr_mark_rows(cg_program *cg, const ir_graph *g, const ir_graph *other, const vf_io_map *io, int64_t cap) {
    unsigned char varies[VF_MAX_IO] = {0};
    int64_t ks[64];
    int n_ks = 0; /* the K of the program's tensors that hold B's rows (K * cap of them at cap) */
    for (int i = 0, np = 0; i < g->n_nodes && i < other->n_nodes; i++) { /* the same text: the same nodes (sym.c) */
        const ir_shape *a = &g->nodes[i].shape, *b = &other->nodes[i].shape;
        if (g->nodes[i].op == IR_OP_INPUT) {
            for (int ni = 0; ni < cg->n_in && ni < VF_MAX_IO; ni++)
                if (io->in[ni] == np) varies[ni] = a->d[0] != b->d[0];
            np++;
        }
        if (a->ndim < 1 || a->d[0] == b->d[0] || a->d[0] % cap) continue;
        int seen = 0;
        for (int q = 0; q < n_ks; q++) seen |= ks[q] == a->d[0] / cap;
        if (!seen && n_ks < 64) ks[n_ks++] = a->d[0] / cap;
    }
    cg_mark_rows(cg, varies, cap, ks, n_ks);
}

/* Cuts the grids of J->cg's launches over B's rows (dr_mark_rows, cg_row_grid). */
static void cut_rows(job *J) {
    dr_mark_rows(&J->cg, J->prog, J->bound, &J->io, J->dim_cap);
    for (int l = 0; l < J->cg.n_launches; l++) {
        cg_launch *L = &J->cg.launches[l];
        unsigned g[3];
        cg_row_grid(L, J->dim_b, J->dim_cap, g);
        J->n_cut += memcmp(g, L->grid, sizeof g) != 0;
        memcpy(L->grid, g, sizeof g);
    }
}

static void row_grids(job *J) {
    if (J->bound && !J->red.n && J->dim_b < J->dim_cap && J->prog->n_nodes == J->bound->n_nodes) cut_rows(J);
    count_blocks(J);
}

/* ---- the GPU backend ---- */

typedef struct gpu_run {
    int pdl; /* launch dependent kernels programmatically (cg_launch.pdl) */
    rt_gpu *gpu;
    rt_module *mod;
    rt_dptr *dev[MAX_SETS]; /* per input set, n_bufs each: input buffers own, others shared */
    int n_sets;
} gpu_run;

mg_status dr_params(mg_ctx *ctx, const cg_launch *L, unsigned long long *val, dr_tmap *maps,
                    void **params, const long long *len) {
    if (L->packed) { /* one struct of the first n_args - 1 addresses, then the last */
        params[0] = &val[0], params[1] = &val[L->n_args - 1], params[2] = NULL;
        return MG_OK;
    }
    for (int a = 0; a < L->n_args; a++) params[a] = &val[a];
    for (int i = 0; i < L->n_tmaps; i++) {
        const cg_tmap *t = &L->tmaps[i];
        mg_status rc = rt_tmap(ctx, L->name, maps[i].b, (rt_dptr)val[t->arg], t->dims, t->row_bytes, t->box);
        if (rc) return rc;
        params[L->n_args + i] = maps[i].b;
    }
    params[L->n_args + L->n_tmaps] = NULL;
    if (L->len_param) params[L->n_args + L->n_tmaps] = (void *)len, params[L->n_args + L->n_tmaps + 1] = NULL;
    return MG_OK;
}

static mg_status launch_all(gpu_run *G, mg_ctx *ctx, const cg_program *cg, int set, const long long *len) {
    for (int l = 0; l < cg->n_launches; l++) {
        const cg_launch *L = &cg->launches[l];
        void *params[CG_MAX_ARGS + CG_MAX_TMAPS + 2];
        unsigned long long val[CG_MAX_ARGS];
        dr_tmap maps[CG_MAX_TMAPS];
        for (int a = 0; a < L->n_args; a++) val[a] = G->dev[set][L->args[a]];
        mg_status rc = dr_params(ctx, L, val, maps, params, len);
        if (!rc) rc = rt_launch(G->gpu, ctx, G->mod, L->name, L->grid, L->block, (size_t)L->smem, params,
                                 (G->pdl && L->pdl ? RT_PDL : 0) | (L->coresident ? RT_CORESIDENT : 0), L->cluster);
        if (rc) return rc;
    }
    return MG_OK;
}

static int is_input_buf(const cg_program *cg, int b) {
    for (int i = 0; i < cg->n_in; i++)
        if (cg->in_buf[i] == b) return 1;
    return 0;
}

static mg_status gpu_buffers(gpu_run *G, job *J, mg_ctx *ctx, void **host) {
    const cg_program *cg = &J->cg;
    double in_bytes = 0;
    for (int i = 0; i < cg->n_in; i++) in_bytes += (double)cg->buf_bytes[cg->in_buf[i]];
    /* rotating past twice the L2 keeps timing out of the cache */
    G->n_sets = J->reps > 0 ? (int)(2 * (double)J->dev.l2_bytes / (in_bytes > 1 ? in_bytes : 1)) + 1 : 1;
    if (G->n_sets > MAX_SETS) G->n_sets = MAX_SETS;
    mg_status rc = MG_OK;
    for (int s = 0; s < G->n_sets && !rc; s++)
        for (int b = 0; b < cg->n_bufs && !rc; b++) {
            if (cg->buf_alias[b] >= 0) { /* a view: inside a buffer allocated before it */
                G->dev[s][b] = G->dev[s][cg->buf_alias[b]] + (rt_dptr)cg->buf_off[b];
                continue;
            }
            if (s > 0 && !is_input_buf(cg, b)) {
                G->dev[s][b] = G->dev[0][b];
                continue;
            }
            rc = rt_alloc(G->gpu, ctx, (size_t)cg->buf_bytes[b], &G->dev[s][b]);
            if (!rc) rc = rt_upload(G->gpu, ctx, G->dev[s][b], host[b], (size_t)cg->buf_bytes[b]);
        }
    return rc;
}

size_t dr_stall_at(int n_tasks) { return 4 * ((size_t)n_tasks + 2); }

/* "task t", with its kernel and block when cg's task map and the graph ug are given */
static void task_name(char *out, size_t n, int t, const cg_program *cg, const ir_graph *ug) {
    char lab[128];
    int l = 0;
    if (!cg || !ug || !cg->n_task_launches || t < 0) {
        snprintf(out, n, "task %d", t);
        return;
    }
    while (l + 1 < cg->n_task_launches && cg->task_first[l + 1] <= t) l++;
    snprintf(out, n, "task %d (%s, block %d)", t, ir_node_label(ug, cg->task_node[l], lab, sizeof lab), t - cg->task_first[l]);
}

mg_status dr_stall_error(mg_ctx *ctx, const unsigned w[3], const cg_program *cg, const ir_graph *ug) {
    char who[160], what[192], lab[128];
    task_name(who, sizeof who, (int)w[0] - 1, cg, ug);
    unsigned L = w[1] & 0x7FFFFFFFu;
    if (!(w[1] & 0x80000000u)) task_name(what, sizeof what, (int)w[1] - 1, cg, ug);
    else if (cg && ug && (int)L < cg->n_task_launches)
        snprintf(what, sizeof what, "every task of %s", ir_node_label(ug, cg->task_node[L], lab, sizeof lab));
    else snprintf(what, sizeof what, "every task of launch %u", L);
    return ctx_err(ctx, MG_ERR_LAUNCH, "persistent launch stalled: %s waited past the watchdog's limit for %s to finish; "
                                       "every block left early, its outputs are not valid", who, what);
}

/* After a persistent launch (cg_program.sync_buf) has finished: MG_ERR_LAUNCH when its
 * watchdog gave up (cuda/lib/task.cuh), naming the task that waited and what it waited for;
 * the watchdog's words are zeroed, so the next launch starts clean. */
static mg_status stall_check(gpu_run *G, job *J, mg_ctx *ctx) {
    const cg_program *cg = &J->cg;
    if (cg->sync_buf < 0) return MG_OK;
    unsigned w[3] = {0, 0, 0};
    rt_dptr at = G->dev[0][cg->sync_buf] + (rt_dptr)dr_stall_at(cg->n_tasks);
    mg_status rc = rt_download(G->gpu, ctx, w, at, sizeof w);
    if (rc || !w[2]) return rc;
    const unsigned zero[3] = {0, 0, 0};
    rt_upload(G->gpu, ctx, at, zero, sizeof zero);
    return dr_stall_error(ctx, w, cg, J->ug);
}

/* MUGEN_TRACE=FILE (docs/env.md): the last run's persistent launch, each task's times from
 * its trace (cg_program.trace_at, cuda/lib/task.cuh mg_trace) written to FILE, one line a task
 * (tools/trace.py reads it). MG_ERR_IO when FILE cannot be written. */
static mg_status trace_write(gpu_run *G, job *J, mg_ctx *ctx) {
    const cg_program *cg = &J->cg;
    const char *path = getenv("MUGEN_TRACE");
    if (!path || !*path || cg->sync_buf < 0 || cg->trace_at < 0 || cg->n_tasks <= 0) return MG_OK;
    int n = cg->n_tasks;
    unsigned long long *r = base_alloc((size_t)n * 32);
    if (!r) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = rt_download(G->gpu, ctx, r, G->dev[0][cg->sync_buf] + (rt_dptr)cg->trace_at, (size_t)n * 32);
    FILE *f = rc ? NULL : fopen(path, "w");
    if (!rc && !f) rc = ctx_err(ctx, MG_ERR_IO, "cannot write the trace to '%s'", path);
    if (!rc) {
        unsigned long long t0 = ~0ull;
        for (int t = 0; t < n; t++) t0 = r[4 * t] < t0 ? r[4 * t] : t0;
        char lab[128];
        fprintf(f, "# mugen trace: %d tasks in %d launches; times in ns from the first task's start\n"
                   "# launch L first_task n_tasks label\n", n, cg->n_task_launches);
        for (int l = 0; l < cg->n_task_launches; l++)
            fprintf(f, "launch %d %d %d %s\n", l, cg->task_first[l], cg->task_first[l + 1] - cg->task_first[l],
                    J->ug ? ir_node_label(J->ug, cg->task_node[l], lab, sizeof lab) : "?");
        fprintf(f, "# task t launch block_of_launch sm block start may_run end\n");
        for (int t = 0, l = 0; t < n; t++) {
            while (l + 1 < cg->n_task_launches && cg->task_first[l + 1] <= t) l++;
            const unsigned long long *q = r + 4 * t;
            fprintf(f, "task %d %d %d %u %u %lld %lld %lld\n", t, l, t - cg->task_first[l], (unsigned)(q[3] >> 32),
                    (unsigned)q[3], (long long)(q[0] - t0), (long long)(q[1] - t0), (long long)(q[2] - t0));
        }
        if (fclose(f)) rc = ctx_err(ctx, MG_ERR_IO, "cannot write the trace to '%s'", path);
    }
    base_free(r);
    return rc;
}

/* Replays gr for at least WARM_S seconds of the device's time (the clocks up from idle, as
 * triton.testing.do_bench warms for 25 ms): a short kernel timed right after a quiet spell
 * (the host's compile and checks) reads up to 10% slow on an H200 otherwise. */
enum { WARM_MAX_ROUNDS = 64 };
#define WARM_S 0.025
static mg_status gpu_warm(gpu_run *G, mg_ctx *ctx, rt_graph *gr) {
    double t0 = base_now_s();
    mg_status rc = MG_OK;
    for (int round = 0, n = 3; round < WARM_MAX_ROUNDS && !rc && base_now_s() - t0 < WARM_S;
         round++, n = n < 2048 ? 2 * n : 4096) {
        for (int w = 0; w < n && !rc; w++) rc = rt_graph_launch(G->gpu, ctx, gr);
        if (!rc) rc = rt_sync(G->gpu, ctx);
    }
    return rc;
}

/* Median time of one run: a CUDA graph replays one run per input set; reps replays, after
 * gpu_warm. */
static mg_status gpu_time(gpu_run *G, job *J, mg_ctx *ctx, double *us) {
    rt_graph *gr = NULL;
    double *t = base_alloc((size_t)J->reps * sizeof *t);
    if (!t) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = rt_capture_begin(G->gpu, ctx);
    for (int s = 0; s < G->n_sets && !rc; s++) rc = launch_all(G, ctx, &J->cg, s, &J->len);
    mg_status rc2 = rc ? MG_OK : rt_capture_end(G->gpu, ctx, &gr);
    if (!rc) rc = rc2;
    if (!rc) rc = gpu_warm(G, ctx, gr);
    for (int i = 0; i < J->reps && !rc; i++) {
        rc = rt_timer_start(G->gpu, ctx);
        if (!rc) rc = rt_graph_launch(G->gpu, ctx, gr);
        if (!rc) rc = rt_timer_stop(G->gpu, ctx, &t[i]);
    }
    if (!rc) rc = rt_sync(G->gpu, ctx);
    if (!rc) rc = stall_check(G, J, ctx);
    if (!rc) { /* median */
        for (int a = 1; a < J->reps; a++)
            for (int b = a; b > 0 && t[b] < t[b - 1]; b--) {
                double x = t[b];
                t[b] = t[b - 1], t[b - 1] = x;
            }
        *us = t[J->reps / 2] * 1e3 / G->n_sets;
    }
    rt_graph_free(G->gpu, gr);
    base_free(t);
    return rc;
}

/* MUGEN_PROFILE=1 (docs/env.md): each launch timed alone (median of 5, input set 0, no
 * PDL), the slowest 40 printed to stderr with the node each computes, and their sum beside
 * the graph's time: where a program's time goes. */
static mg_status gpu_profile(gpu_run *G, job *J, mg_ctx *ctx) {
    const cg_program *cg = &J->cg;
    int n = cg->n_launches, *ord = base_alloc(((size_t)n + 1) * sizeof *ord);
    double *us = base_alloc(((size_t)n + 1) * sizeof *us), total = 0;
    mg_status rc = ord && us ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int l = 0; l < n && !rc; l++) {
        const cg_launch *L = &cg->launches[l];
        void *params[CG_MAX_ARGS + CG_MAX_TMAPS + 2];
        unsigned long long val[CG_MAX_ARGS];
        dr_tmap maps[CG_MAX_TMAPS];
        double t[5];
        for (int a = 0; a < L->n_args; a++) val[a] = G->dev[0][L->args[a]];
        rc = dr_params(ctx, L, val, maps, params, &J->len);
        for (int i = 0; i < 5 && !rc; i++) {
            rc = rt_timer_start(G->gpu, ctx);
            if (!rc) rc = rt_launch(G->gpu, ctx, G->mod, L->name, L->grid, L->block, (size_t)L->smem, params,
                                    L->coresident ? RT_CORESIDENT : 0, L->cluster);
            if (!rc) rc = rt_timer_stop(G->gpu, ctx, &t[i]);
        }
        for (int a = 1; a < 5; a++)
            for (int b = a; b > 0 && t[b] < t[b - 1]; b--) {
                double x = t[b];
                t[b] = t[b - 1], t[b - 1] = x;
            }
        us[l] = t[2] * 1e3, total += us[l], ord[l] = l;
    }
    for (int a = 1; a < n && !rc; a++)
        for (int b = a; b > 0 && us[ord[b]] > us[ord[b - 1]]; b--) {
            int x = ord[b];
            ord[b] = ord[b - 1], ord[b - 1] = x;
        }
    if (!rc) {
        fprintf(stderr, "profile: %d launches, %.1f us when each runs alone (median of 5)\n", n, total);
        for (int i = 0; i < n && i < 40; i++) {
            const cg_launch *L = &cg->launches[ord[i]];
            char lab[128];
            fprintf(stderr, "  %9.2f us  %-12s grid [%u, %u, %u] x %u, %lld B smem  %s\n", us[ord[i]], L->name, L->grid[0],
                    L->grid[1], L->grid[2], L->block, (long long)L->smem,
                    L->node >= 0 ? ir_node_label(J->ug, L->node, lab, sizeof lab) : "");
        }
    }
    base_free(ord), base_free(us);
    return rc;
}

/* After the timed replays: set 0 once more, its outputs poisoned first, compared again into
 * r. What a run leaves behind (a persistent launch's counters, cg_program.sync_buf) must not
 * change the next run's results. */
static mg_status rerun_check(gpu_run *G, job *J, mg_ctx *ctx, void **host, mg_run_report *r) {
    const cg_program *cg = &J->cg;
    mg_status rc = MG_OK;
    for (int k = 0; k < cg->n_out && !rc; k++) {
        int b = cg->out_buf[k];
        memset(host[b], 0xFF, (size_t)cg->buf_bytes[b]);
        rc = rt_upload(G->gpu, ctx, G->dev[0][b], host[b], (size_t)cg->buf_bytes[b]);
    }
    if (!rc) rc = launch_all(G, ctx, cg, 0, &J->len);
    if (!rc) rc = rt_sync(G->gpu, ctx);
    if (!rc) rc = stall_check(G, J, ctx);
    for (int k = 0; k < cg->n_out && !rc; k++)
        rc = rt_download(G->gpu, ctx, host[cg->out_buf[k]], G->dev[0][cg->out_buf[k]], (size_t)cg->buf_bytes[cg->out_buf[k]]);
    if (!rc) compare(J, host, r);
    return rc;
}

static mg_status run_gpu(job *J, mg_ctx *ctx, rt_gpu *gpu, mg_run_report *r) {
    const cg_program *cg = &J->cg;
    const rt_gpu_info *info = rt_gpu_get_info(gpu);
    gpu_run G = {.gpu = gpu, .pdl = J->pdl};
    void **host = base_calloc((size_t)cg->n_bufs + 1, sizeof *host);
    void *img = NULL;
    size_t n_img = 0;
    for (int s = 0; s < MAX_SETS; s++) G.dev[s] = base_calloc((size_t)cg->n_bufs + 1, sizeof *G.dev[s]);
    mg_status rc = host && G.dev[MAX_SETS - 1] ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int s = 0; s < MAX_SETS && !rc; s++)
        if (!G.dev[s]) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc) rc = rt_nvrtc_compile(ctx, cg->src, info->arch, &img, &n_img, &r->cached, NULL);
    if (!rc) rc = rt_module_load(gpu, ctx, img, n_img, &G.mod);
    if (!rc) rc = host_buffers(J, ctx, host);
    if (!rc) rc = gpu_buffers(&G, J, ctx, host);
    if (!rc) rc = launch_all(&G, ctx, cg, 0, &J->len);
    if (!rc) rc = rt_sync(gpu, ctx);
    if (!rc) rc = stall_check(&G, J, ctx);
    for (int k = 0; k < cg->n_out && !rc; k++)
        rc = rt_download(gpu, ctx, host[cg->out_buf[k]], G.dev[0][cg->out_buf[k]], (size_t)cg->buf_bytes[cg->out_buf[k]]);
    if (!rc) {
        compare(J, host, r);
        r->backend = MG_BACKEND_GPU, r->n_sets = G.n_sets;
        snprintf(r->device, sizeof r->device, "%s", info->name);
    }
    if (!rc && J->reps > 0) rc = gpu_time(&G, J, ctx, &r->time_us);
    if (!rc && J->reps > 0 && r->ok) rc = rerun_check(&G, J, ctx, host, r);
    if (!rc) rc = trace_write(&G, J, ctx);
    const char *prof = getenv("MUGEN_PROFILE");
    if (!rc && prof && *prof && strcmp(prof, "0")) rc = gpu_profile(&G, J, ctx);
    for (int s = 0; s < G.n_sets; s++)
        for (int b = 0; b < cg->n_bufs; b++)
            if ((s == 0 || is_input_buf(cg, b)) && cg->buf_alias[b] < 0) rt_free_dev(gpu, G.dev[s][b]);
    for (int b = 0; host && b < cg->n_bufs; b++) base_free(host[b]);
    for (int s = 0; s < MAX_SETS; s++) base_free(G.dev[s]);
    base_free(host);
    rt_module_free(gpu, G.mod);
    base_free(img);
    return rc;
}

/* Test hook (docs/env.md): MUGEN_PLANT=compile|smem|fault|stall breaks the generated program
 * on purpose (a syntax error; 1 MB of shared memory for the first launch; a store through an
 * invalid address at the start of the first kernel; in a persistent launch, task 0 never
 * setting its done flag), so tests can show that each failure comes back as a status. */
mg_status dr_plant(cg_program *cg, mg_ctx *ctx) {
    const char *w = getenv("MUGEN_PLANT");
    if (!w || !*w) return MG_OK;
    static const char done[] = "mg_task_done(g_sync_, ";
    char *d = !strcmp(w, "stall") ? strstr(cg->src, done) : NULL;
    if (d) {
        strbuf sb = {0};
        sb_printf(&sb, "%.*sif (t_ != 0) /* planted stall */ %s", (int)(d - cg->src), cg->src, d);
        if (sb.oom) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        base_free(cg->src);
        cg->src = sb_take(&sb);
        return MG_OK;
    }
    if (!strcmp(w, "smem") && cg->n_launches) cg->launches[0].smem = 1 << 20;
    if (strcmp(w, "compile") && strcmp(w, "fault")) return MG_OK;
    const char *at = strstr(cg->src, strstr(cg->src, "__global__") ? "__global__" : "void mg_entry(void **bufs) {");
    const char *brace = at ? strchr(at, '{') : NULL;
    if (!brace) return MG_OK;
    strbuf sb = {0};
    sb_printf(&sb, "%.*s", (int)(brace + 1 - cg->src), cg->src);
    sb_puts(&sb, !strcmp(w, "compile") ? "\n    this is not code; /* planted */\n"
                                       : "\n    *(volatile int *)16 = 0; /* planted fault */\n");
    sb_puts(&sb, brace + 1);
    if (sb.oom) {
        sb_free(&sb);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    base_free(cg->src);
    cg->src = sb_take(&sb);
    return MG_OK;
}

static void launch_stats(const cg_program *cg, mg_run_report *r) {
    r->n_launches = cg->n_launches;
    for (int l = 0; l < cg->n_launches; l++)
        if (cg->launches[l].smem > r->smem_max) r->smem_max = cg->launches[l].smem;
}

/* What the GPU worker hands back through shared memory. */
typedef struct gpu_result {
    mg_status rc;
    char msg[2048];
    mg_run_report r;
    int n_cut; /* job.n_cut, blocks and waves in the worker */
    int64_t blocks, waves;
} gpu_result;

/* The GPU part runs in a forked worker: CUDA cannot recover a context after a fault, so a
 * faulting candidate must take down only its own process. The parent never initialises CUDA
 * (a child of a process that did cannot use it). */
static mg_status run_gpu_isolated(job *J, mg_ctx *ctx, const mg_run_opts *o, mg_run_report *r) {
    gpu_result *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return ctx_err(ctx, MG_ERR_NOMEM, "cannot map memory for the GPU worker");
    sh->rc = MG_ERR_LAUNCH;
    snprintf(sh->msg, sizeof sh->msg, "the GPU worker ended without a result");
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        mg_ctx c = {{0}};
        rt_gpu *gpu = NULL;
        char tuned[DR_POINT_MAX] = "";
        mg_status rc = rt_gpu_open(&c, &gpu);
        if (!rc) {
            const rt_gpu_info *in = rt_gpu_get_info(gpu);
            mg_device_detect(in->name, in->cc_major, in->cc_minor, in->n_sm, in->smem_optin, in->mem_bytes, &J->dev);
            rc = dr_generate(J->ug, &c, o, CG_CUDA, &J->dev, &J->plan, &J->cg, tuned, &J->red);
        }
        if (!rc) rc = dr_plant(&J->cg, &c);
        if (!rc) row_grids(J), launch_stats(&J->cg, &sh->r), rc = run_gpu(J, &c, gpu, &sh->r);
        sh->n_cut = J->n_cut, sh->blocks = J->blocks, sh->waves = J->waves;
        snprintf(sh->r.tuned, sizeof sh->r.tuned, "%s", tuned);
        rt_gpu_free(gpu);
        memcpy(sh->msg, c.msg, sizeof sh->msg);
        sh->rc = rc;
        _exit(0);
    }
    int st = 0;
    mg_status rc;
    if (pid < 0) rc = ctx_err(ctx, MG_ERR_LAUNCH, "cannot start the GPU worker: fork failed");
    else if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
        rc = ctx_err(ctx, MG_ERR_LAUNCH, "the GPU worker died: %s", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "?");
    else {
        rc = sh->rc;
        if (rc) ctx_err(ctx, rc, "%s", sh->msg);
        else *r = sh->r, J->n_cut = sh->n_cut, J->blocks = sh->blocks, J->waves = sh->waves;
    }
    munmap(sh, sizeof *sh);
    return rc;
}

static void report_text(const job *J, mg_run_report *r) {
    strbuf sb = {0};
    sb_printf(&sb, "%s on %s: %d kernel launch%s, up to %lld bytes of shared memory per block\n",
              r->ok ? "ok" : "MISMATCH", r->device, r->n_launches, r->n_launches == 1 ? "" : "es",
              (long long)r->smem_max);
    for (int k = 0; k < r->n_outputs; k++) {
        const mg_run_output *o = &r->out[k];
        sb_printf(&sb, "  %-8s max abs err %.3g, rel err %.3g (tol %.0e)", o->name, o->max_abs, o->rel_err, o->tol);
        if (o->n_nan) sb_printf(&sb, ", %lld elements NaN, infinite or zero where the reference is not the same", (long long)o->n_nan);
        sb_puts(&sb, o->ok ? "\n" : "  FAIL\n");
    }
    if (J->lens) {
        int n_sa = 0;
        for (int i = 0; i < J->prog->n_nodes; i++) n_sa += J->prog->nodes[i].op == IR_OP_SEQATTN;
        sb_printf(&sb, "  ragged   %lld sequences, %lld tokens in %lld rows (token form, docs/ragged.md); %d attention%s as seqattn\n",
                  (long long)J->n_seq, (long long)J->tokens, (long long)J->rows, n_sa, n_sa == 1 ? "" : "s");
    }
    if (*r->tuned) sb_printf(&sb, "  schedule the tuning cache's point %s (docs/tuning.md; --untuned: the rules')\n", r->tuned);
    if (r->time_us > 0 && r->backend == MG_BACKEND_GPU)
        sb_printf(&sb, "  time     %.2f us (median of %d CUDA graph replays, rotating input sets)\n", r->time_us, J->reps);
    else if (r->time_us > 0)
        sb_printf(&sb, "  time     %.2f us (median of %d run%s%s)\n", r->time_us, r->n_timed, r->n_timed == 1 ? "" : "s",
                  J->reps_default ? ", timing stops after 1 s" : "");
    snprintf(r->text, sizeof r->text, "%s", sb.s ? sb.s : "");
    sb_free(&sb);
}

/* Lowers J->prog (unless ugraph is given), then runs it on the GPU (or C, as o says) on J's
 * inputs against J's reference (reference() first): r filled as mg_run says. */
static mg_status run_job(job *J, const mg_program *ugraph, mg_ctx *ctx, const mg_run_opts *o, mg_run_report *r) {
    int on_gpu = 0;
    mg_status rc = ugraph ? MG_OK : dr_lower(J->prog, ctx, o, o->backend == MG_BACKEND_C ? CG_C : CG_CUDA, &J->lowered, &J->ug);
    if (!rc) rc = vf_match_io(J->prog, J->ug, ctx, &J->io);
    if (!rc) rc = dr_reduced_of(J->dims, J->ug, &J->red, ctx);
    if (!rc && J->prog->n_outputs > MAX_OUT) rc = ctx_err(ctx, MG_ERR_LIMIT, "mg_run compares at most %d outputs", MAX_OUT);
    if (!rc && o->backend != MG_BACKEND_C) {
        rc = run_gpu_isolated(J, ctx, o, r);
        on_gpu = !rc;
        if (rc == MG_ERR_NO_DEVICE && o->backend == MG_BACKEND_AUTO) rc = MG_OK; /* fall back to C */
    }
    if (!rc && !on_gpu && J->lowered && o->backend != MG_BACKEND_C) { /* no GPU: lowered again, for C */
        ir_graph_free(J->lowered), J->lowered = NULL;
        rc = dr_lower(J->prog, ctx, o, CG_C, &J->lowered, &J->ug);
        if (!rc) rc = vf_match_io(J->prog, J->ug, ctx, &J->io);
        if (!rc) rc = dr_reduced_of(J->dims, J->ug, &J->red, ctx);
    }
    if (!rc && !on_gpu) {
        rc = dr_generate(J->ug, ctx, o, CG_C, &J->dev, &J->plan, &J->cg, NULL, &J->red);
        if (!rc) rc = dr_plant(&J->cg, ctx);
        if (!rc) row_grids(J), launch_stats(&J->cg, r), rc = run_c(J, ctx, r);
    }
    if (!rc) report_text(J, r);
    return rc;
}

/* Appends to r->text the variant each symbolic dim of prog ran as (J: the run). */
static void variant_text(const job *J, const mg_program *prog, mg_run_report *r) {
    for (int k = 0; k < prog->g->n_syms; k++) {
        const ir_sym *s = &prog->g->syms[k];
        int how = 0;
        int64_t cap = mg_program_variant(prog, k, &how);
        if (J->dim_cap && J->dim_cap != cap) cap = J->dim_cap, how = 0; /* a sweep's variant */
        size_t n = strlen(r->text);
        if (s->reduced) /* a KV length: every grid whole, masked past the value */
            snprintf(r->text + n, sizeof r->text - n, "  dim      %s = %" PRId64 " ran as the variant for %" PRId64 "%s, a reduced dim: entries past %" PRId64
                     " masked, never read (docs/tuning.md)\n           %" PRId64 " blocks in %" PRId64 " waves of %d SMs\n",
                     s->name, s->val, cap, r->cached ? ", its code from the compile cache" : "", s->val, J->blocks, J->waves, J->dev.n_sm);
        else
            snprintf(r->text + n, sizeof r->text - n, "  dim      %s = %" PRId64 " ran as the variant for %" PRId64 " rows%s, %d of %d launches cut to its rows "
                     "(docs/tuning.md)\n           %" PRId64 " blocks in %" PRId64 " waves of %d SMs\n",
                     s->name, s->val, cap, r->cached ? ", its code from the compile cache" : "",
                     J->n_cut, r->n_launches, J->blocks, J->waves, J->dev.n_sm);
        n = strlen(r->text);
        if (how) snprintf(r->text + n, sizeof r->text - n, "           %s\n", how == 1 ? "chosen by the selector (MUGEN_SELECTOR)" :
                          "the smallest that holds it: the selector (MUGEN_SELECTOR) could not choose");
    }
}

/* mg_run_opts.sweep: every variant of prog's one dim that holds its bound value B, on one set
 * of inputs (made at the largest capacity: each variant's inputs are their first rows) and one
 * reference (the program at B), each run, checked and timed as mg_run runs one. r->text: a
 * line a variant (`variant C: ok, time T us, ...` or `variant C: FAILED ...`); the rest of r is
 * the fastest correct variant's report, with r->ok 0 when any variant failed (all still run). */
static mg_status sweep(job *J, const mg_program *prog, const mg_program *ugraph, mg_ctx *ctx, const mg_run_opts *o, mg_run_report *r) {
    const ir_sym *s = &prog->g->syms[0];
    int64_t caps[64];
    int n = 0;
    for (int64_t c = ir_sym_capacity(s, s->val); n < 64; c = ir_sym_capacity(s, c + 1)) {
        caps[n++] = c;
        if (c >= s->hi) break;
    }
    if (ugraph) return ctx_err(ctx, MG_ERR_UNSUPPORTED, "a sweep of variants: a program of symbolic dims is lowered at each size; a μGraph is for one size");
    ir_graph *big = NULL;
    mg_status rc = mg_program_instance(prog, ctx, caps[n - 1], &big);
    int failed = 0;
    J->prog = big, J->bound = prog->g, J->dim_b = J->len = s->val, J->dims = prog, J->bound_sub = s->reduced;
    if (!rc) rc = reference(J, ctx, o->seed, o->specials);
    strbuf sb = {0};
    mg_run_report *v = rc ? NULL : base_calloc(1, sizeof *v);
    if (!rc && !v) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    double best = 0;
    for (int i = 0; !rc && i < n; i++) {
        ir_graph *g = NULL;
        mg_ctx c = {{0}};
        memset(v, 0, sizeof *v);
        J->n_cut = 0, J->blocks = J->waves = 0, J->dim_cap = caps[i];
        mg_status vr = caps[i] == caps[n - 1] ? MG_OK : mg_program_instance(prog, &c, caps[i], &g);
        J->prog = g ? g : big, J->ug = NULL;
        if (!vr) vr = run_job(J, NULL, &c, o, v);
        if (!vr && v->ok) {
            sb_printf(&sb, "  variant  %" PRId64 ": ok, time %.2f us, %d of %d launches cut, %" PRId64 " blocks in %" PRId64 " waves\n",
                      caps[i], v->time_us, J->n_cut, v->n_launches, J->blocks, J->waves);
            if (!best || (v->time_us > 0 && v->time_us < best)) {
                best = v->time_us, *r = *v;
                variant_text(J, prog, r);
            }
        } else {
            sb_printf(&sb, "  variant  %" PRId64 ": FAILED: %s\n", caps[i], vr ? c.msg : v->text);
            failed++;
        }
        cg_program_free(&J->cg), op_plan_free(J->plan), ir_graph_free(J->lowered), ir_graph_free(g);
        memset(&J->cg, 0, sizeof J->cg), J->plan = NULL, J->lowered = NULL;
    }
    if (!rc) {
        if (failed) r->ok = 0; /* the caller reports a mismatch */
        size_t m = strlen(r->text);
        snprintf(r->text + m, sizeof r->text - m, "  sweep    %s = %" PRId64 " on each of %d variants, one set of inputs (the fastest above):\n%s",
                 s->name, s->val, n, sb.s ? sb.s : "");
    }
    sb_free(&sb), base_free(v);
    J->prog = NULL;
    ir_graph_free(big);
    return rc;
}

mg_status mg_run(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph, const mg_run_opts *o,
                 mg_run_report *r) {
    if (!prog || !r) return ctx_err(ctx, MG_ERR_INVALID, "mg_run: NULL argument");
    ir_graph *tok = NULL; /* a ragged program runs in token form: static over its T tokens (docs/ragged.md) */
    mg_status tr = mg_token_program(prog, ugraph, ctx, "running", &tok);
    if (tr) return tr;
    mg_run_opts def = {0};
    if (!o) o = &def;
    memset(r, 0, sizeof *r);
    const ir_graph *pg = tok ? tok : prog->g;
    job J = {.prog = pg, .ug = ugraph ? ugraph->g : pg, .dev = *mg_device_default()};
    if (tok) {
        J.lens_name = prog->g->lens[0].name, J.lens = prog->lens[0], J.n_seq = prog->g->lens[0].count;
        for (int64_t b = 0; b < J.n_seq; b++) J.tokens += J.lens[b];
        J.rows = mg_token_rows(J.tokens);
    }
    if (prog->g->n_syms == 1) { /* the variant for a capacity: compared on B's rows (or L's entries) */
        J.lens_name = NULL, J.lens = NULL, J.n_seq = J.tokens = J.rows = 0;
        J.dims = prog, J.dim_b = J.len = prog->g->syms[0].val, J.dim_cap = mg_program_variant(prog, 0, NULL);
        if (tok) J.bound = prog->g, J.bound_sub = prog->g->syms[0].reduced;
    }
    J.reps = o->reps == 0 ? 50 : o->reps, J.reps_default = o->reps == 0;
    J.pdl = !o->no_pdl, J.specials = o->specials;
    mg_status rc = MG_OK;
    if (o->sweep && prog->g->n_syms != 1)
        rc = ctx_err(ctx, MG_ERR_INVALID, "every variant (--variant all) is for a program of one symbolic dim; this one has %d", prog->g->n_syms);
    else if (o->sweep) { /* every variant that holds B, on one set of inputs */
        rc = sweep(&J, prog, ugraph, ctx, o, r);
    } else {
        rc = reference(&J, ctx, o->seed, o->specials);
        if (!rc) rc = run_job(&J, ugraph, ctx, o, r);
        if (!rc) variant_text(&J, prog, r);
    }
    cg_program_free(&J.cg);
    op_plan_free(J.plan);
    ir_graph_free(J.lowered);
    ir_graph_free(tok);
    for (int i = 0; i < VF_MAX_IO; i++) base_free(J.in[i]);
    for (int k = 0; k < MAX_OUT; k++) base_free(J.ref[k]);
    return rc;
}

mg_status mg_emit(mg_ctx *ctx, const mg_program *prog, mg_target t, const mg_run_opts *o, int compile,
                  char **src) {
    if (!prog || !src) return ctx_err(ctx, MG_ERR_INVALID, "mg_emit: NULL argument");
    ir_graph *tok = NULL; /* a ragged program's code is its token form's (bound lengths) */
    mg_status rc = mg_token_program(prog, NULL, ctx, "code generation", &tok);
    if (rc) return rc;
    op_plan *plan = NULL;
    cg_program cg = {0};
    const mg_device *dev = mg_device_default();
    ir_graph *lowered = NULL;
    const ir_graph *g = NULL;
    rc = dr_lower(tok ? tok : prog->g, ctx, o, t == MG_TARGET_C ? CG_C : CG_CUDA, &lowered, &g);
    dr_reduced red;
    if (!rc) rc = dr_reduced_of(prog, g, &red, ctx);
    if (!rc) rc = dr_generate(g, ctx, o, t == MG_TARGET_C ? CG_C : CG_CUDA, dev, &plan, &cg, NULL, &red);
    if (!rc) rc = dr_plant(&cg, ctx);
    if (!rc && compile && t == MG_TARGET_CUDA) {
        void *img = NULL;
        size_t n = 0;
        rc = rt_nvrtc_compile(ctx, cg.src, dev->arch, &img, &n, NULL, NULL);
        base_free(img);
    } else if (!rc && compile) {
        char *so = NULL;
        rc = rt_c_build(ctx, cg.src, &so, NULL, NULL);
        base_free(so);
    }
    if (!rc) *src = cg.src, cg.src = NULL;
    cg_program_free(&cg);
    op_plan_free(plan);
    ir_graph_free(lowered);
    ir_graph_free(tok);
    return rc;
}

mg_status mg_space(mg_ctx *ctx, const mg_program *prog, const mg_space_opts *o, char **report) {
    if (!prog || !report) return ctx_err(ctx, MG_ERR_INVALID, "mg_space: NULL argument");
    *report = NULL;
    int samples = o && o->samples > 0 ? o->samples : 1000;
    uint64_t seed = o && o->seed ? o->seed : 1;
    ir_graph *tok = NULL;
    mg_status rc = mg_token_program(prog, NULL, ctx, "the schedule space", &tok);
    const ir_graph *g = tok ? tok : prog->g;
    int has_kernels = 0;
    for (int i = 0; i < g->n_nodes; i++) has_kernels |= g->nodes[i].op == IR_OP_KERNEL;
    strbuf sb = {0};
    if (!rc && has_kernels) rc = op_space_report(g, ctx, mg_device_default(), &op_opts_default, samples, seed, &sb, NULL);
    /* a program: a sketch a lowering (lw_tilings, the products' tiles; the same kernels once),
     * each with its own space of the optimizer's choices */
    char *seen[LW_TILINGS] = {0};
    double all[2] = {0, 0};
    int distinct = 0;
    for (int t = 0; !rc && !has_kernels && t < LW_TILINGS; t++) {
        ir_graph *low = NULL;
        strbuf txt = {0};
        rc = lw_lower(g, ctx, mg_device_default(), 0, &lw_tilings[t], &low, NULL);
        if (!rc) ir_print_text(low, &txt);
        int dup = -1;
        for (int u = 0; !rc && u < t && dup < 0; u++)
            if (seen[u] && txt.s && !strcmp(seen[u], txt.s)) dup = u;
        if (!rc && txt.oom) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        if (!rc) {
            sb_printf(&sb, "%ssketch %d: the lowering with products %d columns wide, the depth split while blocks "
                      "fill less than %d%% of the SMs%s%s\n", t ? "\n" : "", t, lw_tilings[t].bn, lw_tilings[t].split_fill,
                      lw_tilings[t].row ? "" : ", no product with its row reductions (form MMROW)", t == 0 ? " (the default)" : "");
            if (dup >= 0) sb_printf(&sb, "  the same kernels as sketch %d\n", dup);
            else {
                double c[2] = {0, 0};
                rc = op_space_report(low, ctx, mg_device_default(), &op_opts_default, samples, seed, &sb, c);
                all[0] += c[0], all[1] += c[1], distinct++;
            }
        }
        seen[t] = rc ? NULL : sb_take(&txt);
        sb_free(&txt);
        ir_graph_free(low);
    }
    for (int t = 0; t < LW_TILINGS; t++) base_free(seen[t]);
    if (!rc && !has_kernels)
        sb_printf(&sb, "\nin all: %d sketches (%d distinct), %.0f points, %.0f valid\n", LW_TILINGS, distinct, all[0], all[1]);
    if (!rc && !(*report = sb_take(&sb))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    sb_free(&sb);
    ir_graph_free(tok);
    return rc;
}
