/* ugraph: μGraphs (Mirage §2). A graph-defined kernel operator is a KERNEL node of the kernel
 * graph whose body is a block graph: an ir_graph (is_block = 1) holding what one thread block
 * computes. Its ITER nodes load the block's tile of a kernel input each for-loop iteration
 * (imap: grid dims -> tensor dims; fmap: the loop -> a tensor dim), ordinary operators run on
 * tiles, ACCUM nodes accumulate across iterations, and SAVE nodes write the block's result
 * into the kernel's output (omap). This file infers their shapes, checks Definition 2.1,
 * builds thread graphs by fusion (§4.2) and counts shared memory. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

static const char GRID[] = "xyz";

ir_graph *ir_block_new(const int grid[3], int threads, int64_t forloop) {
    ir_graph *b = ir_graph_new();
    if (!b) return NULL;
    b->is_block = 1;
    for (int k = 0; k < 3; k++) b->grid[k] = grid[k];
    b->threads = threads, b->forloop = forloop;
    return b;
}

int ir_block_add_kin(ir_graph *b, mg_ctx *ctx, const char *name, mg_dtype t, const ir_shape *s) {
    if (b->n_kin == IR_MAX_IN)
        return -(int)ctx_err(ctx, MG_ERR_LIMIT, "a kernel reads at most %d tensors", IR_MAX_IN);
    const char *nm = arena_strdup(&b->mem, name);
    if (!nm) return -(int)ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    b->kin_name[b->n_kin] = nm, b->kin_dtype[b->n_kin] = t, b->kin_shape[b->n_kin] = *s;
    return b->n_kin++;
}

/* Checks that map[g] is phi or a dim of a rank-`rank` tensor and that no two grid dims that
 * split (more than one block) share a tensor dim. */
static mg_status check_map(const ir_graph *b, mg_ctx *ctx, const char *what, const int *map,
                           int rank, int must_map) {
    for (int g = 0; g < 3; g++) {
        if (map[g] < -1 || map[g] >= rank)
            return ctx_err(ctx, MG_ERR_SHAPE, "%s: grid dim %c maps to dim %d of a rank-%d "
                           "tensor", what, GRID[g], map[g], rank);
        if (must_map && map[g] < 0 && b->grid[g] > 1)
            return ctx_err(ctx, MG_ERR_SHAPE, "%s: grid dim %c has %d blocks but maps to no "
                           "dim of the output (blocks must write disjoint parts)", what, GRID[g],
                           b->grid[g]);
        for (int h = 0; h < g; h++)
            if (map[g] >= 0 && map[g] == map[h])
                return ctx_err(ctx, MG_ERR_SHAPE, "%s: grid dims %c and %c both map to dim %d",
                               what, GRID[h], GRID[g], map[g]);
    }
    return MG_OK;
}

static mg_status infer_iter(const ir_graph *b, mg_ctx *ctx, ir_node *n) {
    if (n->index < 0 || n->index >= b->n_kin)
        return ctx_err(ctx, MG_ERR_SHAPE, "iter: reads kernel input %d of %d", n->index, b->n_kin);
    const char *x = b->kin_name[n->index];
    ir_shape s = b->kin_shape[n->index];
    char what[300] = "iter";
    if (ctx) snprintf(what, sizeof what, "iter(%s)", x); /* no ctx: no message (the search) */
    mg_status rc = check_map(b, ctx, what, n->map, s.ndim, 0);
    if (rc) return rc;
    for (int g = 0; g < 3; g++) { /* imap: the grid splits a dim into equal chunks */
        int d = n->map[g];
        if (d < 0) continue;
        if (s.d[d] % b->grid[g])
            return ctx_err(ctx, MG_ERR_SHAPE, "%s: imap splits dim %d of %s (size %" PRId64 ") "
                           "into %d blocks along %c: not divisible", what, d, x, s.d[d],
                           b->grid[g], GRID[g]);
        s.d[d] /= b->grid[g];
    }
    if (n->fmap < -1 || n->fmap >= s.ndim)
        return ctx_err(ctx, MG_ERR_SHAPE, "%s: fmap %d is not a dim of %s", what, n->fmap, x);
    if (n->fmap >= 0) { /* fmap: the for-loop splits the block's chunk further */
        if (s.d[n->fmap] % b->forloop)
            return ctx_err(ctx, MG_ERR_SHAPE, "%s: fmap splits dim %d (size %" PRId64 " per block) "
                           "into %" PRId64 " iterations: not divisible", what, n->fmap,
                           s.d[n->fmap], b->forloop);
        s.d[n->fmap] /= b->forloop;
    }
    n->shape = s, n->dtype = b->kin_dtype[n->index];
    return MG_OK;
}

static mg_status infer_kernel(const ir_graph *g, mg_ctx *ctx, ir_node *n) {
    const ir_graph *b = n->body;
    if (!b || !b->is_block) return ctx_err(ctx, MG_ERR_SHAPE, "kernel: no block graph");
    if (n->index < 0 || n->index >= b->n_outputs)
        return ctx_err(ctx, MG_ERR_SHAPE, "kernel: output %d of %d", n->index, b->n_outputs);
    if (n->n_in != b->n_kin)
        return ctx_err(ctx, MG_ERR_SHAPE, "kernel: takes %d inputs, got %d", b->n_kin, n->n_in);
    for (int k = 0; k < n->n_in; k++) {
        const ir_node *a = &g->nodes[n->in[k]];
        if (a->dtype != b->kin_dtype[k] || memcmp(&a->shape, &b->kin_shape[k], sizeof a->shape)) {
            char s1[128], s2[128], lb[128];
            return ctx_err(ctx, MG_ERR_SHAPE, "kernel: input %d ('%s') is %s, its block graph "
                           "iterates over %s", k, ir_node_label(g, n->in[k], lb, sizeof lb),
                           ir_shape_str(a->dtype, &a->shape, s1, sizeof s1),
                           ir_shape_str(b->kin_dtype[k], &b->kin_shape[k], s2, sizeof s2));
        }
    }
    const ir_node *sv = &b->nodes[b->outputs[n->index]];
    n->shape = sv->shape, n->dtype = sv->dtype;
    for (int gd = 0; gd < 3; gd++) /* omap: blocks' results are concatenated along the dim */
        if (sv->map[gd] >= 0) {
            n->shape.d[sv->map[gd]] *= b->grid[gd];
            if (n->shape.d[sv->map[gd]] > IR_MAX_DIM)
                return ctx_err(ctx, MG_ERR_SHAPE, "kernel: output %d is too large", n->index);
        }
    return MG_OK;
}

mg_status ir_infer_ugraph(const ir_graph *g, mg_ctx *ctx, ir_node *n) {
    if (n->op == IR_OP_KERNEL) return infer_kernel(g, ctx, n);
    const ir_node *a = n->n_in ? &g->nodes[n->in[0]] : NULL;
    switch (n->op) {
    case IR_OP_ITER: return infer_iter(g, ctx, n);
    case IR_OP_ACCUM:
        n->shape = a->shape, n->dtype = a->dtype;
        if (n->fmap < -1 || n->fmap >= a->shape.ndim)
            return ctx_err(ctx, MG_ERR_SHAPE, "accum: fmap %d is not a dim of its operand",
                           n->fmap);
        if (n->fmap >= 0) { /* iterations concatenated along fmap */
            n->shape.d[n->fmap] *= g->forloop;
            if (n->shape.d[n->fmap] > IR_MAX_DIM)
                return ctx_err(ctx, MG_ERR_SHAPE, "accum: result is too large");
        }
        return MG_OK;
    case IR_OP_SAVE:
        n->shape = a->shape, n->dtype = a->dtype;
        return check_map(g, ctx, "save", n->map, a->shape.ndim, 1);
    default: MG_ASSERT(!"not a μGraph op");
    }
    return MG_OK;
}

void ir_block_classes(const ir_graph *b, int *cls) {
    /* bits while propagating: 1 a tile that moves with the loop, 2 accumulated, 4 an
     * accumulator of something that moves with no loop, 8 a tile that does not move (no
     * fmap). A value of fixed tiles only runs with the loop (class LOOP, as it always did,
     * and it takes an accumulator to be saved); one that meets an
     * accumulated value runs after the loop on the tile's last iteration, which every
     * iteration left equal (class POST): an epilogue's residual or bias. */
    enum { FIXED = 8 };
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        int c = 0;
        for (int k = 0; k < n->n_in; k++) c |= cls[n->in[k]];
        if (n->op == IR_OP_ITER) c = n->fmap < 0 ? FIXED : IR_LOOP;
        if (n->op == IR_OP_ACCUM)
            c = (c & (IR_POST | 4)) ? (c | 4) & ~FIXED : (c & (IR_LOOP | FIXED)) ? IR_POST : 4;
        cls[i] = c;
    }
    for (int i = 0; i < b->n_nodes; i++) {
        int c = cls[i];
        if (c & FIXED) cls[i] = (c & ~FIXED) ? c & ~FIXED : IR_LOOP;
    }
}

static int is_elementwise(const ir_node *n) {
    return ir_ops[n->op].kind == IR_KIND_UNARY || ir_ops[n->op].kind == IR_KIND_BINARY;
}

int ir_block_fuse(const ir_graph *b, int *tgroup) {
    /* node u joins its consumer's group when both are elementwise and u has no other
     * consumer: u's value then never needs to leave the registers of the thread computing it */
    int n = b->n_nodes, groups = 0;
    int *uses = base_calloc((size_t)n + 1, sizeof *uses), *user = base_calloc((size_t)n + 1, sizeof *user);
    if (!uses || !user) {
        base_free(uses), base_free(user);
        for (int i = 0; i < n; i++) tgroup[i] = -1;
        return 0;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < b->nodes[i].n_in; k++) uses[b->nodes[i].in[k]]++, user[b->nodes[i].in[k]] = i;
    for (int i = n - 1; i >= 0; i--) { /* consumers first: a chain takes its last op's group */
        tgroup[i] = -1;
        if (!is_elementwise(&b->nodes[i])) continue;
        int u = user[i];
        if (uses[i] == 1 && is_elementwise(&b->nodes[u]) && tgroup[u] >= 0) tgroup[i] = tgroup[u];
        else tgroup[i] = groups++;
    }
    base_free(uses), base_free(user);
    return groups;
}

/* Is node i's value kept only in registers (fused into its single elementwise consumer)? */
static int in_registers(const ir_graph *b, int i, const int *tgroup, const int *uses) {
    if (tgroup[i] < 0 || uses[i] != 1) return 0;
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int k = 0; k < b->nodes[j].n_in; k++)
            if (b->nodes[j].in[k] == i) return tgroup[j] == tgroup[i];
    return 0;
}

int64_t ir_block_smem(const ir_graph *b) {
    int n = b->n_nodes;
    int *tgroup = base_calloc((size_t)n + 1, sizeof *tgroup), *uses = base_calloc((size_t)n + 1, sizeof *uses);
    int *last = base_calloc((size_t)n + 1, sizeof *last);
    int64_t *size = base_calloc((size_t)n + 1, sizeof *size);
    if (!tgroup || !uses || !last || !size) {
        base_free(tgroup), base_free(uses), base_free(last), base_free(size);
        return -1;
    }
    ir_block_fuse(b, tgroup);
    for (int i = 0; i < n; i++) {
        last[i] = i;
        for (int k = 0; k < b->nodes[i].n_in; k++) uses[b->nodes[i].in[k]]++, last[b->nodes[i].in[k]] = i;
    }
    /* a tile lives from its operator (an iterator's: the start, as the planner loads the
     * tiles before the steps that read them) to its last reader, in node order: the peak of
     * the live bytes (the planner reuses a dead tile's space the same way) */
    for (int i = 0; i < n; i++) {
        const ir_node *nd = &b->nodes[i];
        if (nd->op != IR_OP_CONST && nd->op != IR_OP_SAVE && !in_registers(b, i, tgroup, uses))
            size[i] = ir_numel(&nd->shape) * (int64_t)base_dtype_size(nd->dtype);
    }
    int64_t peak = 0;
    for (int p = 0; p < n; p++) {
        int64_t bytes = 0;
        for (int i = 0; i < n; i++)
            if ((i <= p || b->nodes[i].op == IR_OP_ITER) && last[i] >= p) bytes += size[i];
        if (bytes > peak) peak = bytes;
    }
    base_free(tgroup), base_free(uses), base_free(last), base_free(size);
    return peak;
}

mg_status ir_block_check(const ir_graph *b, mg_ctx *ctx, const mg_device *dev) {
    char lb[128];
    for (int g = 0; g < 3; g++)
        if (b->grid[g] < 1 || b->grid[g] > 65535)
            return ctx_err(ctx, MG_ERR_SHAPE, "kernel: grid dim %c is %d; it must be in [1, 65535]",
                           GRID[g], b->grid[g]);
    if (b->forloop < 1 || b->forloop > IR_MAX_DIM)
        return ctx_err(ctx, MG_ERR_SHAPE, "kernel: forloop must be at least 1");
    if (b->threads < 1 || b->threads > dev->max_threads)
        return ctx_err(ctx, MG_ERR_SHAPE, "kernel: %d threads per block; %s allows 1 to %d",
                       b->threads, dev->name, dev->max_threads);
    if (b->n_outputs == 0) return ctx_err(ctx, MG_ERR_SHAPE, "kernel: its block graph saves nothing");
    int *cls = base_calloc((size_t)b->n_nodes + 1, sizeof *cls);
    if (!cls) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    ir_block_classes(b, cls);
    mg_status rc = MG_OK;
    for (int i = 0; i < b->n_nodes && !rc; i++) {
        const ir_node *n = &b->nodes[i];
        ir_node_label(b, i, lb, sizeof lb);
        if (!(ir_ops[n->op].levels & IR_LEVEL_B))
            rc = ctx_err(ctx, MG_ERR_SHAPE, "'%s': %s is not a block-graph operator", lb, ir_ops[n->op].name);
        else if ((cls[i] & 3) == 3)
            rc = ctx_err(ctx, MG_ERR_SHAPE, "'%s' (%s) mixes for-loop values with accumulated ones "
                         "(a path would pass an accumulator on one side only)", lb, ir_ops[n->op].name);
        else if (n->op == IR_OP_ACCUM && cls[i] != IR_POST)
            rc = ctx_err(ctx, MG_ERR_SHAPE, "'%s' (accum): its operand %s", lb,
                         cls[n->in[0]] == IR_INVARIANT ? "reads no iterator" : "already passed an accumulator");
        else if (n->op == IR_OP_SAVE && cls[n->in[0]] != IR_POST)
            rc = ctx_err(ctx, MG_ERR_SHAPE, "save #%d: the path from %s", n->index,
                         cls[n->in[0]] == IR_LOOP ? "an iterator to it passes no accumulator"
                                                   : "an iterator is missing (it saves a constant)");
        for (int k = 0; k < n->n_in && !rc; k++)
            if (b->nodes[n->in[k]].op == IR_OP_SAVE)
                rc = ctx_err(ctx, MG_ERR_SHAPE, "'%s' reads a saver; savers end the block graph", lb);
    }
    base_free(cls);
    if (rc) return rc;
    int64_t smem = ir_block_smem(b);
    if (smem < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (smem > dev->smem_per_block)
        return ctx_err(ctx, MG_ERR_SHAPE, "kernel: its block graph needs %" PRId64 " bytes of "
                       "shared memory; %s has %" PRId64 " per block", smem, dev->name,
                       dev->smem_per_block);
    return MG_OK;
}

int ir_add_kernel(ir_graph *g, mg_ctx *ctx, ir_graph *body, const int *in, int n_in,
                  const char *const *names, int line, int col) {
    mg_status rc = ir_block_check(body, ctx, mg_device_default());
    int first = -1;
    for (int k = 0; !rc && k < body->n_outputs; k++) {
        ir_node n = {.op = IR_OP_KERNEL, .n_in = n_in, .body = body, .index = k, .line = line, .col = col};
        if (n_in > IR_MAX_IN) {
            rc = ctx_err(ctx, MG_ERR_LIMIT, "a kernel reads at most %d tensors", IR_MAX_IN);
            break;
        }
        memcpy(n.in, in, (size_t)n_in * sizeof *in);
        int r = ir_add_node(g, ctx, &n);
        if (r >= 0 && k == 0) first = r; /* from here on g owns body */
        if (r >= 0 && names && names[k]) r = ir_set_name(g, ctx, r, names[k]);
        if (r < 0) rc = (mg_status)-r;
    }
    if (first < 0) ir_graph_free(body); /* not yet owned by a node of g */
    if (!rc) { /* Definition 2.1 (2) at kernel level: the kernel graph's tensors in device memory */
        int64_t bytes = 0;
        for (int i = 0; i < g->n_nodes; i++)
            bytes += ir_numel(&g->nodes[i].shape) * (int64_t)base_dtype_size(g->nodes[i].dtype);
        if (bytes > mg_device_default()->dmem)
            rc = ctx_err(ctx, MG_ERR_SHAPE, "kernel: the kernel graph's tensors need %.1f GB of device "
                         "memory; %s has %.0f GB", (double)bytes / 1e9, mg_device_default()->name,
                         (double)mg_device_default()->dmem / 1e9);
    }
    return rc ? -(int)rc : first;
}

ir_graph *ir_block_clone(const ir_graph *b, mg_ctx *ctx) {
    ir_graph *c = ir_block_new(b->grid, b->threads, b->forloop);
    int r = c ? 0 : -(int)ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int k = 0; k < b->n_kin && r >= 0; k++) r = ir_block_add_kin(c, ctx, b->kin_name[k], b->kin_dtype[k], &b->kin_shape[k]);
    for (int i = 0; i < b->n_nodes && r >= 0; i++) {
        ir_node n = b->nodes[i];
        n.name = NULL, n.body = NULL;
        r = n.op == IR_OP_CONST ? ir_add_const(c, ctx, n.lit, n.line, n.col) : ir_add_node(c, ctx, &n);
        if (r >= 0 && b->nodes[i].name) r = ir_set_name(c, ctx, r, b->nodes[i].name);
    }
    for (int k = 0; k < b->n_outputs && r >= 0; k++) r = ir_add_output(c, ctx, b->outputs[k]);
    if (r < 0) ir_graph_free(c), c = NULL;
    return c;
}

int ir_copy_kernel(ir_graph *g, mg_ctx *ctx, const ir_graph *from, int i, const int *in, const char *const *names) {
    ir_graph *body = ir_block_clone(from->nodes[i].body, ctx);
    if (!body) return -(int)MG_ERR_NOMEM;
    return ir_add_kernel(g, ctx, body, in, from->nodes[i].n_in, names, 0, 0);
}
