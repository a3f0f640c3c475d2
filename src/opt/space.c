/* opt/space: the schedule space of a kernel graph (docs/tuning.md). The optimizer's choices
 * that its rules make today, as parameters with their domains (the optimizer's switches for
 * every kernel; a TMA loop or not, threads, pipeline stages and blocks an SM for each
 * graph-defined kernel), and the device limits a point must meet, checked by planning the
 * point (op_opts.force) before anything is compiled. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_internal.h"

const op_space_name op_params[OP_P_N] = {
    [OP_P_REUSE] = {"reuse", "shared memory of dead tensors reused (memory.c)"},
    [OP_P_DEPTH] = {"depth", "operators of equal depth share a barrier (schedule.c)"},
    [OP_P_LAYOUT] = {"layout", "padded rows, column-major and swizzled operands (layout.c)"},
    [OP_P_REGACC] = {"regacc", "a product summed over the loop kept in registers (fuse.c)"},
    [OP_P_CHAIN] = {"chain", "attention's exp(Q K) tile kept in registers (chain.c)"},
    [OP_P_TMA] = {"tma", "the loop's products on wgmma from TMA-loaded tiles (tma.c, sm_90a)"},
    [OP_P_THREADS] = {"threads", "threads per block (without TMA; a TMA loop has 128 a warpgroup)"},
    [OP_P_STAGES] = {"stages", "copies of each moving tile (1: loaded at its iteration)"},
    [OP_P_PAIR] = {"pair", "a TMA loop's blocks an SM (its stages in half the shared memory)"},
};

const op_space_name op_constraints[OP_C_N] = {
    [OP_C_THREADS] = {"threads", "threads a multiple of 32, at most the device's per block, at least the "
                                 "block graph's own (the warps its products are written for)"},
    [OP_C_STAGES] = {"stages", "a TMA loop 2 to 6 stages (one read by the wgmmas in flight), any other "
                               "1 to 4; two blocks an SM only for a TMA loop"},
    [OP_C_TRIP] = {"trip", "no more stages than the loop has iterations"},
    [OP_C_SMEM] = {"smem", "shared memory a block within the device's opt-in limit (half of an SM, "
                           "less 1 KB, for two blocks an SM)"},
    [OP_C_REGS] = {"regs", "register accumulators at most 128 floats a thread and threads x (accumulators + 40) "
                           "within the SM's 65,536 registers (two blocks an SM: at most 96, and 2 x threads x "
                           "(accumulators + 32))"},
    [OP_C_PLAN] = {"plan", "the optimizer plans it (a point no pass can hold, or out of memory)"},
};

static int add(op_space *s, op_param_kind kind, int kernel, const int *vals, int n, int def) {
    if (s->n >= OP_SPACE_MAX) return 0;
    op_param *p = &s->p[s->n++];
    p->kind = kind, p->kernel = kernel, p->n = n, p->def = 0;
    for (int i = 0; i < n; i++) {
        p->val[i] = vals[i];
        if (vals[i] == def) p->def = i;
    }
    return 1;
}

mg_status op_space_new(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, const op_opts *base, op_space *s) {
    memset(s, 0, sizeof *s);
    op_plan *p = NULL;
    mg_status rc = op_plan_new(g, ctx, dev, base, &p); /* the rules' point */
    if (rc) return rc;
    static const int onoff[] = {0, 1};
    const op_opts *o = &p->opts;
    int any_chain = 0;
    for (int k = 0; k < p->n_kernels; k++) {
        const op_kernel *kk = &p->kernels[k];
        for (int i = 0; i < kk->body->n_nodes; i++) any_chain |= kk->t[i].chain.of >= 0;
    }
    add(s, OP_P_REUSE, -1, onoff, 2, o->reuse), add(s, OP_P_DEPTH, -1, onoff, 2, o->depth);
    add(s, OP_P_LAYOUT, -1, onoff, 2, o->layout), add(s, OP_P_REGACC, -1, onoff, 2, o->regacc);
    if (any_chain && o->chain) add(s, OP_P_CHAIN, -1, onoff, 2, 1);
    for (int k = 0; k < p->n_kernels && k < OP_SPACE_KERNELS; k++) {
        const op_kernel *kk = &p->kernels[k];
        static const int stages[] = {1, 2, 3, 4, 5, 6}, pair[] = {1, 2};
        int threads[4] = {128, 256, 512}, nt = 3; /* and the rules' own where it is none of these */
        if (!kk->tma && kk->threads != 128 && kk->threads != 256 && kk->threads != 512) threads[nt++] = kk->threads;
        if (kk->tma) add(s, OP_P_TMA, k, onoff, 2, 1);
        add(s, OP_P_THREADS, k, threads, nt, kk->tma ? 0 : kk->threads);
        if (kk->body->forloop >= 2) add(s, OP_P_STAGES, k, stages, 6, kk->stages ? kk->stages : 1);
        if (kk->tma) add(s, OP_P_PAIR, k, pair, 2, kk->min_blocks);
    }
    s->n_kernels = p->n_kernels;
    op_plan_free(p);
    return MG_OK;
}

/* Point x's value of the parameter of kind for kernel k (k = -1: a switch), or dflt when the
 * space has no such parameter. */
static int value(const op_space *s, const int *x, op_param_kind kind, int k, int dflt) {
    for (int i = 0; i < s->n; i++)
        if (s->p[i].kind == kind && s->p[i].kernel == k) return s->p[i].val[x[i]];
    return dflt;
}

/* op_space_opts, forcing only kernel `only`'s choices when only >= 0 (the others' rules
 * choose). */
static op_opts opts_at(const op_space *s, const int *x, const op_opts *base, op_force *f, int only) {
    op_opts o = *base;
    o.reuse = value(s, x, OP_P_REUSE, -1, o.reuse), o.depth = value(s, x, OP_P_DEPTH, -1, o.depth);
    o.layout = value(s, x, OP_P_LAYOUT, -1, o.layout), o.regacc = value(s, x, OP_P_REGACC, -1, o.regacc);
    o.chain = value(s, x, OP_P_CHAIN, -1, o.chain);
    for (int k = 0; k < s->n_kernels && k < OP_SPACE_KERNELS; k++) {
        int tma = value(s, x, OP_P_TMA, k, 0);
        f[k] = (op_force){.tma = tma ? 0 : 1, .threads = tma ? 0 : value(s, x, OP_P_THREADS, k, 0),
                          .stages = value(s, x, OP_P_STAGES, k, 0), .pair = tma ? value(s, x, OP_P_PAIR, k, 1) : 0};
        if (only >= 0 && k != only) f[k] = (op_force){0};
    }
    o.force = f, o.n_force = s->n_kernels < OP_SPACE_KERNELS ? s->n_kernels : OP_SPACE_KERNELS;
    return o;
}

/* Floats of register accumulators a thread of k holds (fuse.c's split of each product). */
static int64_t acc_floats(const op_kernel *k) {
    const ir_graph *b = k->body;
    int64_t f = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        if (b->nodes[i].op != IR_OP_MATMUL) continue;
        if (k->tma) f += k->tma == 2 ? op_tma_rows(&k->t[b->nodes[i].in[0]]) / 2 : k->tma_nw / 2;
        else if (k->t[i].fuse.regacc >= 0) {
            int64_t T;
            int sk;
            op_regacc_split(b, k, i, &T, &sk);
            f += 16 * T;
        }
    }
    return f;
}

/* op_space_check, forcing only kernel `only`'s choices when only >= 0 (the others' rules
 * choose, under x's switches). */
static int check(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, const int *x, int only) {
    op_force f[OP_SPACE_KERNELS];
    op_opts o = opts_at(s, x, base, f, only);
    int bad = 0, tma_arch = !strcmp(dev->arch, "sm_90a");
    int kn = 0; /* kernel k's block graph: the k-th graph-defined kernel (op_plan_new's order) */
    const ir_graph *body[OP_SPACE_KERNELS];
    for (int i = 0; i < g->n_nodes && kn < OP_SPACE_KERNELS; i++)
        if (g->nodes[i].op == IR_OP_KERNEL && g->nodes[i].index == 0) body[kn++] = g->nodes[i].body;
    for (int k = 0; k < o.n_force && k < kn; k++) {
        const op_force *fk = &f[k];
        int tma = !fk->tma && tma_arch;
        if (fk->threads && (fk->threads % 32 || fk->threads > dev->max_threads || fk->threads < body[k]->threads))
            bad |= 1 << OP_C_THREADS;
        if (fk->stages && (tma ? fk->stages < 2 : fk->stages > 4)) bad |= 1 << OP_C_STAGES;
        if (fk->stages > 1 && fk->stages > body[k]->forloop) bad |= 1 << OP_C_TRIP;
    }
    if (bad) return bad; /* planned only when its choices are each possible */
    mg_ctx ctx = {{0}};
    op_plan *p = NULL;
    mg_status rc = op_plan_new(g, &ctx, dev, &o, &p);
    if (rc == MG_ERR_NOMEM) return -1;
    if (rc) return 1 << (rc == MG_ERR_SHAPE && strstr(ctx.msg, "shared memory") ? OP_C_SMEM : OP_C_PLAN);
    for (int k = 0; k < p->n_kernels; k++) {
        const op_kernel *kk = &p->kernels[k];
        int64_t lim = kk->min_blocks > 1 ? (dev->smem_per_block + 1024) / 2 - 1024 : dev->smem_per_block;
        if (kk->smem > lim) bad |= 1 << OP_C_SMEM;
        int64_t acc = acc_floats(kk);
        if (kk->min_blocks > 1 ? !op_pair_regs_ok(kk->threads, acc) : acc > 128 || (int64_t)kk->threads * (acc + 40) > 65536)
            bad |= 1 << OP_C_REGS;
        const op_force *fk = k < o.n_force ? &f[k] : NULL;
        if (fk && fk->pair > 1 && !kk->tma) bad |= 1 << OP_C_STAGES;
    }
    op_plan_free(p);
    return bad;
}

int op_space_check(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, const int *x) {
    return check(g, dev, base, s, x, -1);
}

op_opts op_space_opts(const op_space *s, const int *x, const op_opts *base, op_force f[OP_SPACE_KERNELS]) {
    return opts_at(s, x, base, f, -1);
}

/* Does parameter i not apply at x (threads under a TMA loop, blocks an SM without one)? */
static int moot(const op_space *s, const int *x, int i) {
    const op_param *p = &s->p[i];
    if (p->kind != OP_P_THREADS && p->kind != OP_P_PAIR) return 0;
    int tma = value(s, x, OP_P_TMA, p->kernel, 0);
    return p->kind == OP_P_THREADS ? tma : !tma;
}

/* Kernel k's distinct points (a moot parameter at the rules' value) under the switches in x,
 * its own parameters each value in turn; with g, those valid (the other kernels chosen by the
 * rules), -1 out of memory. x is restored. */
static double kernel_points(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, int *x,
                            int k) {
    int idx[OP_SPACE_MAX], n = 0, combos = 1;
    for (int i = 0; i < s->n; i++)
        if (s->p[i].kernel == k) idx[n++] = i, combos *= s->p[i].n;
    int keep[OP_SPACE_MAX];
    memcpy(keep, x, sizeof keep);
    double v = 0;
    for (int c = 0; c < combos && v >= 0; c++) {
        int q = c, dup = 0;
        for (int j = 0; j < n; j++) x[idx[j]] = q % s->p[idx[j]].n, q /= s->p[idx[j]].n;
        for (int j = 0; j < n; j++) dup |= moot(s, x, idx[j]) && x[idx[j]] != s->p[idx[j]].def;
        if (dup) continue;
        int bad = g ? check(g, dev, base, s, x, k) : 0;
        v = bad < 0 ? -1 : v + !bad;
    }
    memcpy(x, keep, sizeof keep);
    return v;
}

/* The distinct points of s (g NULL) or the valid ones, counted exactly: kernels are planned
 * one at a time, so for each setting of the switches the valid points are the product over
 * kernels of each kernel's own (kernel_points). -1 out of memory. */
static double count_points(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, int *x) {
    if (s->n > OP_SPACE_MAX) return -1;
    int sw[OP_SPACE_MAX], n = 0, combos = 1;
    for (int i = 0; i < s->n; i++) {
        x[i] = s->p[i].def;
        if (s->p[i].kernel < 0) sw[n++] = i, combos *= s->p[i].n;
    }
    double total = 0;
    for (int c = 0; c < combos; c++) {
        int q = c;
        for (int j = 0; j < n; j++) x[sw[j]] = q % s->p[sw[j]].n, q /= s->p[sw[j]].n;
        double prod = 1;
        for (int k = 0; k < s->n_kernels && k < OP_SPACE_KERNELS && prod > 0; k++) {
            double v = kernel_points(g, dev, base, s, x, k);
            if (v < 0) return -1;
            prod *= v;
        }
        total += prod;
    }
    return total;
}

mg_status op_space_report(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, const op_opts *base, int samples,
                          uint64_t seed, strbuf *out, double counts[2]) {
    op_space *s = base_calloc(1, sizeof *s);
    int *x = base_calloc(OP_SPACE_MAX, sizeof *x);
    if (!s || !x) return base_free(s), base_free(x), ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = op_space_new(g, ctx, dev, base, s);
    if (rc) return base_free(s), base_free(x), rc;
    double total = count_points(NULL, dev, base, s, x);
    sb_printf(out, "schedule space on %s (%s, %d SMs, %" PRId64 " bytes of shared memory a block): %d kernel%s\n",
              dev->name, dev->arch, dev->n_sm, dev->smem_per_block, s->n_kernels, s->n_kernels == 1 ? "" : "s");
    if (s->n_kernels > OP_SPACE_KERNELS)
        sb_printf(out, "  (kernels past the first %d keep the rules' choices)\n", OP_SPACE_KERNELS);
    sb_printf(out, "parameters (%d; the rules' choice in brackets):\n", s->n);
    for (int i = 0; i < s->n; i++) {
        const op_param *p = &s->p[i];
        char name[32], dom[96];
        int w = 0;
        if (p->kernel < 0) snprintf(name, sizeof name, "%s", op_params[p->kind].name);
        else snprintf(name, sizeof name, "k%d.%s", p->kernel, op_params[p->kind].name);
        for (int v = 0; v < p->n && w < (int)sizeof dom - 16; v++)
            w += snprintf(dom + w, sizeof dom - (size_t)w, "%s%s%d%s", v ? ", " : "{", v == p->def ? "[" : "", p->val[v],
                          v == p->def ? "]" : "");
        snprintf(dom + w, sizeof dom - (size_t)w, "}");
        sb_printf(out, "  %-14s %-26s %s\n", name, dom, op_params[p->kind].what);
    }
    double valid = count_points(g, dev, base, s, x);
    for (int i = 0; i < s->n; i++) x[i] = s->p[i].def;
    int at_rules = valid < 0 ? -1 : op_space_check(g, dev, base, s, x);
    /* each constraint's rejections among random points (a point may break several); every
     * distinct point when the space has at most `samples` */
    double raw = 1;
    for (int i = 0; i < s->n; i++) raw *= s->p[i].n;
    int all = raw <= samples, n = 0, fails[OP_C_N] = {0};
    rng r = {seed};
    for (int t = 0; (all ? t < raw : n < samples) && at_rules >= 0; t++) {
        int dup = 0;
        if (all) {
            int q = t;
            for (int i = 0; i < s->n; i++) x[i] = q % s->p[i].n, q /= s->p[i].n;
            for (int i = 0; i < s->n; i++) dup |= moot(s, x, i) && x[i] != s->p[i].def;
        } else {
            for (int i = 0; i < s->n; i++) x[i] = (int)rng_below(&r, (uint32_t)s->p[i].n);
            for (int i = 0; i < s->n; i++) /* a moot parameter at the rules' value: one point */
                if (moot(s, x, i)) x[i] = s->p[i].def;
        }
        if (dup) continue;
        n++;
        int bad = op_space_check(g, dev, base, s, x);
        if (bad < 0) {
            at_rules = -1;
            break;
        }
        for (int c = 0; c < OP_C_N; c++) fails[c] += bad >> c & 1;
    }
    if (at_rules < 0) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    else {
        if (all) sb_printf(out, "constraints (points rejected of all %d):\n", n);
        else sb_printf(out, "constraints (points rejected of %d drawn at random, seed %" PRIu64 "):\n", n, seed);
        for (int c = 0; c < OP_C_N; c++)
            sb_printf(out, "  %-8s %6d  %s\n", op_constraints[c].name, fails[c], op_constraints[c].what);
        sb_printf(out, "points: %.0f, valid %.0f (%.3g%%; counted kernel by kernel)\n", total, valid, 100 * valid / total);
        sb_printf(out, "the rules' point: %s", at_rules ? "rejected by" : "valid");
        for (int c = 0; c < OP_C_N; c++)
            if (at_rules >> c & 1) sb_printf(out, " %s", op_constraints[c].name);
        sb_puts(out, "\n");
        if (counts) counts[0] = total, counts[1] = valid;
    }
    base_free(s), base_free(x);
    return rc;
}

double op_space_count(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, int valid) {
    int x[OP_SPACE_MAX];
    return count_points(valid ? g : NULL, dev, base, s, x);
}

mg_status op_space_parse(const op_space *s, const char *spec, mg_ctx *ctx, int *x) {
    for (int i = 0; i < s->n; i++) x[i] = s->p[i].def;
    const char *c = spec ? spec : "";
    while (*c) {
        size_t len = strcspn(c, ","), eq = strcspn(c, "=");
        char name[32];
        if (eq >= len || eq == 0 || eq >= sizeof name)
            return ctx_err(ctx, MG_ERR_INVALID, "schedule '%s': '%.*s' is not NAME=VALUE", spec, (int)len, c);
        memcpy(name, c, eq), name[eq] = 0;
        char *end = NULL;
        long v = strtol(c + eq + 1, &end, 10);
        if (end == c + eq + 1 || end != c + len)
            return ctx_err(ctx, MG_ERR_INVALID, "schedule '%s': '%.*s' wants a whole number", spec, (int)len, c);
        int found = -1;
        for (int i = 0; i < s->n && found < 0; i++) {
            char full[32];
            if (s->p[i].kernel < 0) snprintf(full, sizeof full, "%s", op_params[s->p[i].kind].name);
            else snprintf(full, sizeof full, "k%d.%s", s->p[i].kernel, op_params[s->p[i].kind].name);
            if (!strcmp(full, name)) found = i;
        }
        if (found < 0)
            return ctx_err(ctx, MG_ERR_INVALID, "schedule '%s': no parameter '%s' in this program's space (mugen space "
                           "lists them)", spec, name);
        int at = -1;
        for (int q = 0; q < s->p[found].n; q++)
            if (s->p[found].val[q] == v) at = q;
        if (at < 0) return ctx_err(ctx, MG_ERR_INVALID, "schedule '%s': %s takes none of %ld", spec, name, v);
        x[found] = at;
        c += len + (c[len] == ',');
    }
    return MG_OK;
}

int op_space_format(const op_space *s, const int *x, char *buf, int n) {
    int w = 0;
    buf[0] = 0;
    for (int i = 0; i < s->n && w < n; i++) {
        if (moot(s, x, i)) continue;
        const op_param *p = &s->p[i];
        char name[32];
        if (p->kernel < 0) snprintf(name, sizeof name, "%s", op_params[p->kind].name);
        else snprintf(name, sizeof name, "k%d.%s", p->kernel, op_params[p->kind].name);
        w += snprintf(buf + w, (size_t)(n - w), "%s%s=%d", w ? "," : "", name, p->val[x[i]]);
    }
    return w < n ? w : -1;
}

int op_space_draw(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, rng *r, int *x) {
    for (int t = 0; t < 1000; t++) {
        for (int i = 0; i < s->n; i++) x[i] = (int)rng_below(r, (uint32_t)s->p[i].n);
        for (int i = 0; i < s->n; i++)
            if (moot(s, x, i)) x[i] = s->p[i].def;
        int bad = op_space_check(g, dev, base, s, x);
        if (bad <= 0) return bad;
    }
    return 1;
}
