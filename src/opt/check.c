/* opt/check: the plan checker (QBE's ssacheck, tinygrad's SPEC). Re-checks on a finished plan
 * every invariant opt.h states: shared-memory offsets and live ranges, which tensors may stay
 * unstored, the steps, barriers and loads of each block, the fused steps and attention chains,
 * and the kernel-level buffers and launch forms. op_plan_new runs it under MUGEN_CHECK=1,
 * where a failure is a bug in a pass; the unit tests run it on every plan they make. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "opt_internal.h"

/* What a kernel's checks need: the plan, the kernel, its label for messages, its body's readers. */
typedef struct ck {
    const op_plan *p;
    const op_kernel *k;
    const ir_graph *b;
    const int *uses, *user; /* op_count_uses of b */
    char label[128];
    mg_ctx *ctx;
} ck;

static mg_status fail(const ck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* MG_ERR_INVALID with "plan check: kernel 'K': <what>". */
static mg_status fail(const ck *c, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ctx_err(c->ctx, MG_ERR_INVALID, "plan check: kernel '%s': %s", c->label, what);
}

/* Position of node i in k's steps, or -1. */
static int step_of(const op_kernel *k, int i) {
    for (int s = 0; s < k->n_steps; s++)
        if (k->step[s] == i) return s;
    return -1;
}

/* Memory: mat => bytes > 0, 16-byte aligned, inside smem (and before the split-K scratch);
 * tensors whose live ranges overlap share no byte. */
static mg_status check_memory(const ck *c) {
    const op_kernel *k = c->k;
    int n = c->b->n_nodes;
    if (k->smem < 0) return fail(c, "smem %" PRId64, k->smem);
    if (k->acc_scratch >= 0 && (k->acc_scratch % 16 || k->acc_scratch >= k->smem))
        return fail(c, "split-K scratch at %" PRId64 " of %" PRId64 " bytes", k->acc_scratch,
                    k->smem);
    int64_t end = k->acc_scratch >= 0 ? k->acc_scratch : k->smem;
    for (int i = 0; i < n; i++) {
        const op_tensor *a = &k->t[i];
        if (!a->mat) continue;
        if (a->bytes <= 0 || a->off < 0 || a->off % 16 || a->off + a->bytes > end)
            return fail(c,
                        "node %d: %" PRId64 " bytes at offset %" PRId64
                        " (16-byte aligned, within %" PRId64 ")",
                        i, a->bytes, a->off, end);
        if (a->level > a->last)
            return fail(c, "node %d: live from interval %d to %d", i, a->level, a->last);
        for (int j = i + 1; j < n; j++) {
            const op_tensor *o = &k->t[j];
            if (!o->mat || a->last < o->level || o->last < a->level) continue;
            if (a->off < o->off + o->bytes && o->off < a->off + a->bytes)
                return fail(c, "nodes %d and %d are live together but overlap in shared memory", i,
                            j);
        }
    }
    return MG_OK;
}

/* Is unstored node i one of the kinds opt.h allows: a constant, a saver, a reshape read
 * through, a one-iteration accumulator, or computed inside another step? */
static int may_stay_unstored(const ck *c, int i) {
    const ir_graph *b = c->b;
    const op_tensor *t = c->k->t;
    ir_op op = b->nodes[i].op;
    if (op == IR_OP_CONST || op == IR_OP_SAVE || op == IR_OP_RESHAPE) return 1;
    if (op == IR_OP_ACCUM) return b->forloop == 1;
    if (op_is_elementwise(op))
        return t[i].chain.mm >= 0 || op_inlined(b, i, c->uses, c->user, c->p->opts.depth);
    if (op == IR_OP_MATMUL && t[i].fuse.regacc >= 0) return 1;
    for (int u = i + 1; u < b->n_nodes; u++) /* a reduction or matmul its reader computes */
        if ((ir_ops[op].kind == IR_KIND_REDUCE && t[u].fuse.red == i) ||
            (op == IR_OP_MATMUL && t[u].fuse.mm == i))
            return 1;
    return 0;
}

/* Each node has one step or one load exactly when it is stored (but a register accumulator,
 * stored after the loop without one), a saver, or a register-accumulated matmul; a load
 * exactly when it is pipelined. */
static mg_status check_step_nodes(const ck *c) {
    const op_kernel *k = c->k;
    for (int i = 0; i < c->b->n_nodes; i++) {
        const op_tensor *t = &k->t[i];
        ir_op op = c->b->nodes[i].op;
        if (!t->mat && !may_stay_unstored(c, i))
            return fail(c, "node %d (%s) is neither stored nor computed inside another step", i,
                        ir_ops[op].name);
        if (t->mat && (op == IR_OP_CONST || op == IR_OP_SAVE))
            return fail(c, "node %d (%s) is stored", i, ir_ops[op].name);
        int regacc = t->fuse.regacc >= 0, steps = 0, loads = 0;
        int want = (t->mat && !(op == IR_OP_ACCUM && regacc)) || op == IR_OP_SAVE ||
                   (op == IR_OP_MATMUL && regacc);
        for (int s = 0; s < k->n_steps; s++)
            steps += k->step[s] == i;
        for (int l = 0; l < k->n_loads; l++)
            loads += k->load[l] == i;
        if (steps + loads != want || loads != (t->pipe.stages > 0))
            return fail(c, "node %d: %d steps and %d loads (%d stages), %d wanted", i, steps, loads,
                        t->pipe.stages, want);
    }
    return MG_OK;
}

/* Steps, barriers, loop bounds and the pipeline's loads. */
static mg_status check_steps(const ck *c) {
    const op_kernel *k = c->k;
    int n = c->b->n_nodes, bars = 2 + k->post_sync + k->cvt_sync, regacc = 0;
    if (k->threads <= 0 || k->threads > 1024) return fail(c, "%d threads", k->threads);
    if (k->n_steps < 0 || k->n_steps > n || k->loop_begin < 0 || k->loop_begin > k->loop_end ||
        k->loop_end > k->n_steps)
        return fail(c, "steps [0, %d) with the loop [%d, %d)", k->n_steps, k->loop_begin,
                    k->loop_end);
    for (int s = 0; s < k->n_steps; s++) {
        if (k->step[s] < 0 || k->step[s] >= n || (k->sync[s] != 0 && k->sync[s] != 1))
            return fail(c, "step %d: node %d, sync %d", s, k->step[s], k->sync[s]);
        bars += k->sync[s];
    }
    if (bars != k->n_barriers)
        return fail(c, "%d barriers counted, %d planned", bars, k->n_barriers);
    if (k->n_loads < 0 || k->n_loads > n || (k->n_loads > 0) != (k->stages > 0))
        return fail(c, "%d loads at %d stages", k->n_loads, k->stages);
    for (int l = 0; l < k->n_loads; l++) {
        int i = k->load[l];
        if (i < 0 || i >= n || (l && i <= k->load[l - 1]) || c->b->nodes[i].op != IR_OP_ITER ||
            !k->t[i].mat || k->t[i].pipe.stages != k->stages)
            return fail(c, "load %d: node %d, not a pipelined iterator tile in node order", l, i);
        const op_tensor *t = &k->t[i];
        if (t->bytes != t->pipe.elems * (int64_t)base_dtype_size(t->store) * t->pipe.stages)
            return fail(c, "node %d: %" PRId64 " bytes for %d stages of %" PRId64 " elements", i,
                        t->bytes, t->pipe.stages, t->pipe.elems);
    }
    if (k->stages && k->loop_begin < k->loop_end && !k->sync[k->loop_begin])
        return fail(c, "no barrier after the wait for the pipelined tiles");
    for (int i = 0; i < n; i++)
        regacc |= k->t[i].fuse.regacc >= 0;
    if (k->post_sync != regacc)
        return fail(c, "post_sync %d with register accumulators %d", k->post_sync, regacc);
    return check_step_nodes(c);
}

/* Fused steps and the tile forms for tensor cores. */
static mg_status check_fusion(const ck *c) {
    const op_tensor *t = c->k->t;
    const ir_graph *b = c->b;
    int n = b->n_nodes;
    for (int i = 0; i < n; i++) {
        int r = t[i].fuse.regacc, x = t[i].fuse.red, m = t[i].fuse.mm;
        int mm = b->nodes[i].op == IR_OP_MATMUL ? i : r, acc = mm == i ? r : i; /* when r >= 0 */
        if (r >= 0 && (r >= n || t[r].fuse.regacc != i || b->nodes[mm].op != IR_OP_MATMUL ||
                       b->nodes[acc].op != IR_OP_ACCUM || t[mm].mat || !t[acc].mat))
            return fail(c, "node %d: register accumulation with node %d", i, r);
        if (x >= i || (x >= 0 && (ir_ops[b->nodes[x].op].kind != IR_KIND_REDUCE || t[x].mat)))
            return fail(c, "node %d computes reduction %d", i, x);
        if (m >= i || (m >= 0 && (b->nodes[m].op != IR_OP_MATMUL || t[m].mat)))
            return fail(c, "node %d is the epilogue of matmul %d", i, m);
        if (t[i].tc.swz < 0 || t[i].tc.swz > 2 ||
            (t[i].tc.swz && (b->nodes[i].op != IR_OP_ITER || t[i].colmajor)))
            return fail(c, "node %d: swizzle %d", i, t[i].tc.swz);
        if (t[i].tc.cvt && (b->nodes[i].op != IR_OP_ITER || !t[i].mat || t[i].store != MG_BF16))
            return fail(c, "node %d: converted in place but not a stored bf16 iterator tile", i);
        if (t[i].tc.wg && !t[i].mat) return fail(c, "node %d: a wgmma tile not stored", i);
    }
    int cvt = 0;
    for (int i = 0; i < n; i++)
        cvt |= t[i].tc.cvt;
    if (c->k->cvt_sync && (!cvt || !c->k->stages))
        return fail(c, "a barrier after no in-place conversion");
    return MG_OK;
}

/* Attention chain e: its nodes, their back links, and its writers in one barrier interval. */
static mg_status check_chain(const ck *c, int e) {
    const op_kernel *k = c->k;
    const op_tensor *h = &k->t[e];
    const ir_graph *b = c->b;
    int n = b->n_nodes, mm = h->chain.mm, sum = h->chain.sum, mw = h->chain.mw, sw = h->chain.sw;
    if (h->mat || h->fuse.mm < 0 || mm >= n || sum < 0 || sum >= n || mw < 0 || mw >= n || sw < 0 ||
        sw >= n || b->nodes[mm].op != IR_OP_MATMUL || b->nodes[sum].op != IR_OP_SUM ||
        h->chain.sk < 1 || h->chain.ts < 1 || h->chain.wg < 0 || h->chain.wg > 2 || k->threads % 32)
        return fail(c, "chain %d: nodes %d, %d, writers %d, %d, split %d x %d", e, mm, sum, mw, sw,
                    h->chain.sk, h->chain.ts);
    if (k->t[mm].chain.of != e || k->t[mw].chain.of != e || k->t[sw].chain.of != e)
        return fail(c, "chain %d: its nodes do not link back to it", e);
    int p1 = step_of(k, mw), p2 = step_of(k, sw);
    if (p1 < 0 || p2 < 0) return fail(c, "chain %d: writers %d, %d are not steps", e, mw, sw);
    for (int q = (p1 < p2 ? p1 : p2) + 1; q <= (p1 < p2 ? p2 : p1); q++)
        if (k->sync[q])
            return fail(c, "chain %d: a barrier between its writers %d and %d", e, mw, sw);
    return MG_OK;
}

static mg_status check_chains(const ck *c) {
    const op_tensor *t = c->k->t;
    int n = c->b->n_nodes, wg = 0;
    for (int i = 0; i < n; i++) {
        mg_status rc = MG_OK;
        if (t[i].chain.mm >= 0)
            rc = check_chain(c, i);
        else if (t[i].chain.sum != -1 || t[i].chain.mw != -1 || t[i].chain.sw != -1 ||
                 t[i].chain.wg)
            rc = fail(c, "node %d heads no chain but has its fields", i);
        int e = t[i].chain.of;
        if (!rc && e >= 0 &&
            (e >= n || t[e].chain.mm < 0 ||
             (i != t[e].chain.mm && i != t[e].chain.mw && i != t[e].chain.sw)))
            rc = fail(c, "node %d: in chain %d, which does not hold it", i, e);
        if (rc) return rc;
        wg |= t[i].chain.wg != 0;
    }
    for (int i = 0; i < n; i++)
        if (t[i].tc.wg && !wg) return fail(c, "node %d: a wgmma tile without a wgmma chain", i);
    return MG_OK;
}

/* Kernel q of p, the body of KERNEL node knode. */
static mg_status check_kernel(const op_plan *p, int q, int knode, mg_ctx *ctx) {
    const op_kernel *k = &p->kernels[q];
    ck c = {.p = p, .k = k, .b = k->body, .ctx = ctx};
    ir_node_label(p->g, knode, c.label, sizeof c.label);
    if (k->body != p->g->nodes[knode].body) return fail(&c, "not the body of its node");
    int n = c.b->n_nodes, *uses = base_calloc((size_t)n * 2 + 1, sizeof(int));
    if (!uses) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    op_count_uses(c.b, uses, uses + n);
    c.uses = uses, c.user = uses + n;
    mg_status rc = check_memory(&c);
    if (!rc) rc = check_steps(&c);
    if (!rc) rc = check_fusion(&c);
    if (!rc) rc = check_chains(&c);
    base_free(uses);
    return rc;
}

/* The kernel level: buffers, kernels[] against their nodes, the launch forms. */
static mg_status check_launches(const op_plan *p, mg_ctx *ctx) {
    const ir_graph *g = p->g;
    int bufs = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        int owns = n->op == IR_OP_KERNEL && n->index == 0;
        if ((p->buf[i] < 0) != (p->inl[i] != 0) || p->buf[i] >= p->n_bufs)
            return ctx_err(ctx, MG_ERR_INVALID, "plan check: node %d: buffer %d of %d, inlined %d",
                           i, p->buf[i], p->n_bufs, p->inl[i]);
        for (int j = 0; j < i && p->buf[i] >= 0; j++)
            if (p->buf[j] == p->buf[i])
                return ctx_err(ctx, MG_ERR_INVALID, "plan check: nodes %d and %d share a buffer", j,
                               i);
        bufs += p->buf[i] >= 0;
        if (owns != (p->kern[i] >= 0) || p->kern[i] >= p->n_kernels)
            return ctx_err(ctx, MG_ERR_INVALID, "plan check: node %d: kernel %d of %d", i,
                           p->kern[i], p->n_kernels);
    }
    if (bufs != p->n_bufs)
        return ctx_err(ctx, MG_ERR_INVALID, "plan check: %d buffers of %d", bufs, p->n_bufs);
    for (int q = 1; q < p->n_kernels && (p->fused || p->clustered); q++)
        if (p->kernels[q].threads != p->kernels[0].threads)
            return ctx_err(ctx, MG_ERR_INVALID,
                           "plan check: one launch, kernels of %d and %d threads",
                           p->kernels[0].threads, p->kernels[q].threads);
    if (p->fused && (p->clustered || p->n_kernels < 2))
        return ctx_err(ctx, MG_ERR_INVALID, "plan check: a persistent launch of %d kernels",
                       p->n_kernels);
    if (!p->clustered) return MG_OK;
    const int *cl = p->cluster, *g0 = p->kernels[0].body->grid;
    int wide = (cl[0] > 1) + (cl[1] > 1) + (cl[2] > 1), blocks = g0[0] * g0[1] * g0[2];
    if (p->n_kernels != 2 || wide != 1 || cl[0] < 1 || cl[1] < 1 || cl[2] < 1 ||
        cl[0] * cl[1] * cl[2] > 16 || !p->cluster_map)
        return ctx_err(ctx, MG_ERR_INVALID, "plan check: clusters of [%d, %d, %d] over %d kernels",
                       cl[0], cl[1], cl[2], p->n_kernels);
    for (int i = 0; i < blocks; i++) {
        int ok = p->cluster_map[i] >= 0 && p->cluster_map[i] < blocks;
        for (int j = 0; j < i && ok; j++)
            ok = p->cluster_map[j] != p->cluster_map[i];
        if (!ok)
            return ctx_err(ctx, MG_ERR_INVALID, "plan check: cluster_map[%d] = %d", i,
                           p->cluster_map[i]);
    }
    return MG_OK;
}

mg_status op_plan_check(const op_plan *p, mg_ctx *ctx) {
    mg_status rc = check_launches(p, ctx);
    for (int i = 0; !rc && i < p->g->n_nodes; i++)
        if (p->kern[i] >= 0) rc = check_kernel(p, p->kern[i], i, ctx);
    return rc;
}
