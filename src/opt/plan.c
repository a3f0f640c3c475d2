/* opt/plan: the μGraph optimizer's pass list (Mirage §6; QBE's func()). Over a kernel graph:
 * buffers and fusion at kernel level, then for each block graph the passes in the order
 * op_plan_kernel calls them, then the launch forms. The result (op_plan, opt.h) is all
 * codegen/ needs; it decides nothing itself. Each pass is a file of its own (opt_internal.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_internal.h"

const op_opts op_opts_default = {
    .reuse = 1,
    .depth = 1,
    .layout = 1,
    .pipeline = 1,
    .regacc = 1,
    .threads = 1,
    .chain = 1,
    .views = 1,
    .wgmma = 0,
    .colmajor = 1,
    .swizzle = 1,
    .persist = 0,
    .cluster = 0,
    .tma = 1,
    .prefetch = 0,
};

/* k's arrays, per node of its body b, in p's arena; 0 when out of memory. */
static int kernel_alloc(op_plan *p, op_kernel *k, const ir_graph *b) {
    size_t n = (size_t)b->n_nodes;
    k->body = b;
    k->t = arena_alloc(&p->mem, n * sizeof *k->t);
    k->step = arena_alloc(&p->mem, n * sizeof(int));
    k->sync = arena_alloc(&p->mem, n * sizeof(int));
    k->load = arena_alloc(&p->mem, n * sizeof(int));
    return k->t && k->step && k->sync && k->load;
}

/* Every tensor starts with no strategy: each pass below sets its own members (opt.h). */
static void reset_strategies(op_kernel *k) {
    for (int i = 0; i < k->body->n_nodes; i++) {
        op_tensor *t = &k->t[i];
        t->fuse.regacc = t->fuse.red = t->fuse.mm = -1;
        t->chain.of = t->chain.mm = t->chain.sum = t->chain.mw = t->chain.sw = -1;
        t->chain.wg = t->tc.wg = t->tc.swz = t->tc.tma = 0;
    }
    k->tma = k->tma_nw = 0, k->tma_bar = -1, k->min_blocks = 1;
}

/* Scheduling and memory planning, together because each may undo the other's choice: a chain
 * whose writers the schedule puts in different barrier intervals is undone (and the steps
 * change); tiles that do not move with the loop load once before it (hoist), unless that no
 * longer fits in dev's shared memory. */
static void schedule_and_place(const op_plan *p, const mg_device *dev, op_kernel *k, const int *cls,
                               const int *fixed, int *ph, int *depth, int *level, const op_force *f) {
    for (int hoist = 1; hoist >= 0; hoist--) {
        do op_schedule(k, cls, fixed, hoist, p->opts.depth, ph, depth, level);
        while (op_chains_split(k, level));
        op_place_stages(k, ph, level, &p->opts, dev->smem_per_block, f ? f->stages : 0);
        if (k->smem < 0 || k->smem <= dev->smem_per_block) break;
    }
}

/* A block graph's passes, in the order they run (opt_internal.h names each one's file);
 * MG_OK or MG_ERR_NOMEM, the shared memory checked by the caller. */
static mg_status plan_once(op_plan *p, mg_ctx *ctx, const mg_device *dev, int knode, op_kernel *k,
                           int threads) {
    const ir_graph *b = p->g->nodes[knode].body;
    int n = b->n_nodes;
    int *tmp = base_calloc((size_t)n * 7 + 1, sizeof(int));
    if (!kernel_alloc(p, k, b) || !tmp) {
        base_free(tmp);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    int *cls = tmp, *uses = tmp + n, *user = tmp + 2 * n, *ph = tmp + 3 * n, *depth = tmp + 4 * n,
        *level = tmp + 5 * n, *fixed = tmp + 6 * n;
    const long ki = k - p->kernels; /* a schedule point's forced choices for this kernel */
    const op_force *f = ki >= 0 && ki < p->opts.n_force && p->opts.force ? &p->opts.force[ki] : NULL;
    if (f && f->threads > 0 && threads <= 0) threads = f->threads;
    ir_block_classes(b, cls);
    op_fixed_values(b, fixed);
    op_count_uses(b, uses, user);
    reset_strategies(k);
    mg_status rr = op_reduced_block(p, ctx, knode, k);
    if (rr) {
        base_free(tmp);
        return rr;
    }
    op_thread_graph(b, k, uses, user, depth, p->opts.depth);
    op_fuse_epilogues(b, k, uses);
    op_choose_layouts(p, knode, k);
    k->threads = threads > 0 ? threads
                             : op_block_threads(b, k, cls, p->opts.threads, p->opts.pipeline, dev->n_sm);
    if (p->opts.regacc) op_register_accumulators(b, k, uses, user);
    if (p->opts.chain) op_find_chains(p, knode, b, k, uses, p->opts.threads && threads <= 0);
    if (p->opts.tma && threads <= 0 && !(f && f->tma == 1)) op_find_tma(p, dev, knode, b, k);
    if (f && f->pair > 0 && k->tma) k->min_blocks = f->pair;
    if (p->opts.layout) op_pad_regacc(b, k);
    op_pipe_init(k);
    schedule_and_place(p, dev, k, cls, fixed, ph, depth, level, f);
    if (k->smem >= 0 && p->opts.layout) op_convert_tiles(b, k, ph, level);
    op_wg_check(b, k, uses);
    base_free(tmp);
    if (k->smem < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (k->tma && k->stages < 2) op_tma_undo(b, k); /* no room for two stages: mma.sync */
    if (k->tma) k->tma_bar = (k->smem + 7) / 8 * 8, k->smem = k->tma_bar + 8 * k->stages;
    if (k->stages) op_pipeline_steps(k);
    if (k->smem <= dev->smem_per_block) op_plan_acc_scratch(b, k, dev);
    return MG_OK;
}

mg_status op_plan_kernel(op_plan *p, mg_ctx *ctx, const mg_device *dev, int knode, op_kernel *k,
                         int threads) {
    mg_status rc = plan_once(p, ctx, dev, knode, k, threads);
    if (!rc && k->smem > dev->smem_per_block && p->opts.f32iter) { /* f32 tiles do not fit: as stored */
        p->opts.f32iter = 0;
        memset(k, 0, sizeof *k);
        rc = plan_once(p, ctx, dev, knode, k, threads);
        p->opts.f32iter = 1;
    }
    if (rc) return rc;
    if (k->smem > dev->smem_per_block) {
        char lb[128];
        return ctx_err(ctx, MG_ERR_SHAPE, "kernel '%s': its plan needs %" PRId64 " bytes of shared "
                       "memory; %s allows %" PRId64 " per block", ir_node_label(p->g, knode, lb, sizeof lb),
                       k->smem, dev->name, dev->smem_per_block);
    }
    return MG_OK;
}

/* MUGEN_CHECK=1: a plan that fails op_plan_check is a bug in a pass (api.c re-checks the IR
 * after each stage the same way). */
static void check_plan(const op_plan *p) {
    const char *e = getenv("MUGEN_CHECK");
    if (!e || !*e || !strcmp(e, "0")) return;
    mg_ctx c = {{0}};
    mg_status rc = op_plan_check(p, &c);
    if (rc && rc != MG_ERR_NOMEM) { /* out of memory while checking is not a broken invariant */
        fprintf(stderr, "mugen: %s\n", c.msg);
        MG_ASSERT(!"plan check failed");
    }
}

mg_status op_plan_new(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, const op_opts *o,
                      op_plan **out) {
    op_plan *p = base_calloc(1, sizeof *p);
    int n = g->n_nodes;
    int *uses = base_calloc((size_t)n * 3 + 1, sizeof(int)); /* uses, user, scratch */
    if (!p || !uses) {
        base_free(p), base_free(uses);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    arena_init(&p->mem);
    p->g = g, p->opts = o ? *o : op_opts_default, p->n_sm = dev->n_sm, p->sm90a = !strcmp(dev->arch, "sm_90a");
    p->buf = arena_alloc(&p->mem, (size_t)n * sizeof(int) + 1);
    p->inl = arena_alloc(&p->mem, (size_t)n * sizeof(int) + 1);
    p->kern = arena_alloc(&p->mem, (size_t)n * sizeof(int) + 1);
    p->kst = arena_alloc(&p->mem, (size_t)n * sizeof *p->kst + 1);
    p->view = arena_alloc(&p->mem, (size_t)n * sizeof(int) + 1);
    p->voff = arena_alloc(&p->mem, (size_t)n * sizeof(int64_t) + 1);
    p->store = arena_alloc(&p->mem, (size_t)n * sizeof(mg_dtype) + 1);
    p->kernels = arena_alloc(&p->mem, (size_t)n * sizeof(op_kernel) + 1);
    mg_status rc = MG_OK;
    if (!p->buf || !p->inl || !p->kern || !p->store || !p->kernels || !p->kst || !p->view || !p->voff)
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc && p->opts.reduced_in) { /* masks past the call's length: the plain forms only */
        p->opts.tma = p->opts.wgmma = p->opts.persist = p->opts.cluster = p->opts.prefetch = 0;
        rc = op_reduced_masks(p, ctx, p->opts.reduced_in, p->opts.n_reduced_in);
    }
    if (!rc) {
        op_count_uses(g, uses, uses + n);
        op_plan_buffers(p, uses, uses + n, uses + 2 * n);
    }
    for (int i = 0; !rc && i < n; i++)
        if (g->nodes[i].op == IR_OP_KERNEL && g->nodes[i].index == 0) {
            p->kern[i] = p->n_kernels;
            rc = op_plan_kernel(p, ctx, dev, i, &p->kernels[p->n_kernels++], 0);
        }
    if (!rc && p->opts.cluster) op_plan_cluster(p, dev);
    if (!rc && p->opts.persist && !p->clustered) op_plan_fused(p, dev);
    base_free(uses);
    if (rc) {
        op_plan_free(p);
        return rc;
    }
    check_plan(p);
    p->opts.force = NULL, p->opts.n_force = 0; /* not owned: the plan does not keep them */
    p->opts.reduced_in = NULL, p->opts.n_reduced_in = 0;
    *out = p;
    return MG_OK;
}

void op_plan_free(op_plan *p) {
    if (!p) return;
    arena_free(&p->mem);
    base_free(p);
}
