/* codegen/emit: writes an op_plan as CUDA or C (codegen.h): the pass list of code generation.
 * One emitter serves both targets; they differ only in how a block's threads share an element
 * loop, in barriers, in how blocks are launched and in the tensor-core matmul (CUDA only).
 *
 * Every operator is written as an element loop over its output: the threads of a block (or
 * of the grid, at kernel level) stride over the output's elements, each computing its 4-dim
 * coordinate c0..c3 and the value there. A value is read back through cg_expr() (expr.c): a
 * load from shared or device memory, a literal, or, for an inlined elementwise operator (a
 * thread graph), its expression over its own operands. A graph-defined kernel is written by
 * block.c, its steps by the step table's strategies (block.c, cuda/, c/). The kernels are
 * written first; the device code they call (c/lib.h, or the pieces of cuda/lib/ they use) is
 * put before them. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

/* ---- kernel-level operators: one element loop over the grid ---- */

/* Kernel-level operator j as a kernel of its own: 256 threads a block, at most 4096 blocks. */
static void emit_op_kernel(em *E, int j, cg_program *out) {
    const ir_node *n = &E->g->nodes[j];
    params ps = {0};
    cg_add_param(&ps, j);
    ps.n_out = 1;
    cg_collect_inputs(E->p, j, &ps);
    char kname[64], lb[128];
    snprintf(kname, sizeof kname, "k%d_%s", j, E->names[j] + 2);
    int64_t d[4];
    op_pad4(&n->shape, d);
    int64_t total = d[0] * d[1] * d[2] * d[3], st[4];
    mg_dtype t;
    sb_printf(E->sb, "/* %s = %s (node %d): kernel-level operator */\n", ir_node_label(E->g, j, lb, sizeof lb),
              ir_ops[n->op].name, j);
    cg_signature(E, kname, &ps, 256, E->names, 1);
    coord c;
    cg_loop_open(E, d, c);
    cg_compute(E, j, c);
    cg_tensor_strides(E, j, st, &t);
    cg_store_to(E, E->names[j], t, st, c, "v");
    sb_puts(E->sb, "    }\n}\n\n");
    int64_t blocks = (total + 255) / 256;
    unsigned grid[3] = {(unsigned)(blocks < 4096 ? blocks : 4096), 1, 1};
    cg_record_launch(E, out, kname, j, &ps, grid, 256, 0);
}

/* The pieces of device code a CUDA program may start with (cuda/lib/), in this order, each
 * after those it needs (tests/codegen/run.sh compiles each after exactly these):
 * scalar.cuh types, conversions, unary ops, barriers (every program); mma.cuh the tensor-core
 * block matmul; copy.cuh cp.async, put4 and in-place f16 -> bf16; chain.cuh attention chains;
 * wgmma.cuh sm_90a warpgroup products; task.cuh a persistent launch's tickets. */
static const struct {
    const char *text;
    unsigned piece, needs; /* CG_LIB_* (0: every program); every piece it calls, transitively */
} cuda_lib[] = {
    {cg_cuda_scalar, 0, 0},
    {cg_cuda_mma, CG_LIB_MMA, 0},
    {cg_cuda_copy, CG_LIB_COPY, 0},
    {cg_cuda_chain, CG_LIB_CHAIN, CG_LIB_MMA},
    {cg_cuda_wgmma, CG_LIB_WGMMA, CG_LIB_CHAIN | CG_LIB_MMA},
    {cg_cuda_task, CG_LIB_TASK, 0},
};

/* The text a program starts with: C, lib.h; CUDA, the pieces its kernels call (used, CG_LIB_*)
 * and those they need. */
static void write_lib(strbuf *sb, cg_target t, unsigned used) {
    int n = (int)(sizeof cuda_lib / sizeof *cuda_lib);
    if (t == CG_C) {
        sb_puts(sb, cg_c_lib);
        return;
    }
    for (int q = 0; q < n; q++)
        if (used & cuda_lib[q].piece) used |= cuda_lib[q].needs;
    for (int q = 0; q < n; q++)
        if (!cuda_lib[q].piece || (used & cuda_lib[q].piece)) sb_puts(sb, cuda_lib[q].text);
}

static mg_status fill_buffers(const op_plan *p, mg_ctx *ctx, cg_program *out) {
    const ir_graph *g = p->g;
    out->buf_bytes = base_calloc((size_t)p->n_bufs + 1, sizeof *out->buf_bytes);
    out->in_buf = base_calloc((size_t)g->n_nodes + 1, sizeof(int));
    out->out_buf = base_calloc((size_t)g->n_outputs + 1, sizeof(int));
    if (!out->buf_bytes || !out->in_buf || !out->out_buf) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    out->n_bufs = p->n_bufs;
    for (int i = 0; i < g->n_nodes; i++) {
        if (p->buf[i] >= 0)
            out->buf_bytes[p->buf[i]] = ir_numel(&g->nodes[i].shape) * (int64_t)base_dtype_size(p->store[i]);
        if (g->nodes[i].op == IR_OP_INPUT) out->in_buf[out->n_in++] = p->buf[i];
    }
    for (int k = 0; k < g->n_outputs; k++) out->out_buf[out->n_out++] = p->buf[g->outputs[k]];
    return MG_OK;
}

mg_status cg_emit(const op_plan *p, mg_ctx *ctx, cg_target t, cg_program *out) {
    memset(out, 0, sizeof *out);
    const ir_graph *g = p->g;
    strbuf sb = {0}, body = {0}; /* the program; its kernels, written first */
    unsigned used = 0;
    arena a;
    arena_init(&a);
    em E = {.sb = &body, .p = p, .tg = t, .g = g, .names = cg_names(g, &a, "g_"), .ctx = ctx, .reg_node = -1,
            .lib = &used};
    out->launches = base_calloc((size_t)g->n_nodes + 1, sizeof *out->launches);
    if (!E.names || !out->launches) E.rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!E.rc) E.rc = fill_buffers(p, ctx, out);
    out->sync_buf = -1;
    int one = t == CG_CUDA && (p->fused || p->clustered); /* one launch for all kernels */
    if (!E.rc && one) p->clustered ? cg_cuda_emit_clustered(&E, out, &a) : cg_cuda_emit_fused(&E, out, &a);
    for (int i = 0; !E.rc && !one && i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT || p->inl[i] || (n->op == IR_OP_KERNEL && n->index != 0)) continue;
        if (n->op == IR_OP_KERNEL) cg_emit_block_kernel(&E, i, E.names, out, &a);
        else emit_op_kernel(&E, i, out);
    }
    if (!E.rc && t == CG_C) cg_c_entry(&E, out);
    arena_free(&a);
    write_lib(&sb, t, used); /* the device code the kernels call, then the kernels */
    sb_puts(&sb, body.s ? body.s : "");
    if (!E.rc && (sb.oom || body.oom)) E.rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    sb_free(&body);
    if (E.rc) {
        sb_free(&sb);
        cg_program_free(out);
        return E.rc;
    }
    out->src = sb_take(&sb);
    return MG_OK;
}

void cg_program_free(cg_program *c) {
    if (!c) return;
    base_free(c->src), base_free(c->launches), base_free(c->buf_bytes);
    base_free(c->in_buf), base_free(c->out_buf);
    memset(c, 0, sizeof *c);
}
