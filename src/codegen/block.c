/* codegen/block: the block-kernel skeleton (a graph-defined operator, Mirage §2): shared-memory
 * tiles, the prologue, the pipelined for-loop and the epilogue, with the planned barriers.
 * Each step of the block program is written by the first strategy of the step table that
 * applies (the targets' own ones in cuda/ and c/); what is left is an element loop. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

/* ---- block kernels (graph-defined operators) ---- */

/* the comment introducing step j: what it is and its node */
static void comment(em *E, int j, const char *what) {
    char lb[128];
    const ir_node *n = &E->g->nodes[j];
    sb_printf(E->sb, "    /* %s: %s%s%s (node %d) */\n", what, ir_node_label(E->g, j, lb, sizeof lb),
              n->name ? " = " : "", n->name ? ir_ops[n->op].name : "", j);
}

/* Element offset of node n's tile in its full tensor (dims fd), Mirage §2: each mapped grid
 * dim moves the tile by one block's chunk, the for-loop dim by one tile per iteration. */
static void tile_base(em *E, const ir_node *n, const int64_t td[4], const int64_t fst[4], strbuf *o) {
    static const char *bvar[3] = {"bx", "by", "bz"};
    int pad = 4 - (int)(n->op == IR_OP_SAVE ? E->g->nodes[n->in[0]].shape.ndim : n->shape.ndim);
    int any = 0;
    for (int gd = 0; gd < 3; gd++) {
        if (n->map[gd] < 0) continue;
        int d = n->map[gd] + pad;
        int64_t chunk = td[d] * (n->op == IR_OP_ITER && n->fmap + pad == d ? E->k->body->forloop : 1);
        sb_printf(o, "%s(long long)%s * %" PRId64 "LL", any ? " + " : "", bvar[gd], chunk * fst[d]);
        any = 1;
    }
    if (n->op == IR_OP_ITER && n->fmap >= 0) {
        sb_printf(o, "%s(long long)it * %" PRId64 "LL", any ? " + " : "", td[n->fmap + pad] * fst[n->fmap + pad]);
        any = 1;
    }
    if (!any) sb_puts(o, "0LL");
}

/* iterator: copy this block's (and iteration's) tile of a kernel input into shared memory;
 * a pipelined one (t->pipe.stages) with 16-byte rows in CUDA as cp.async copies that the loop
 * waits for later, else with plain loads and stores */
static void step_iter(em *E, int j, const char *gname, int x) {
    const ir_node *n = &E->g->nodes[j];
    const op_tensor *t = &E->k->t[j];
    const int64_t *fst = E->p->kst[x]; /* kernel input x's layout */
    sb_puts(E->sb, "    {\n    const long long base_ = ");
    tile_base(E, n, t->dim, fst, E->sb);
    sb_puts(E->sb, ";\n");
    if (cg_cuda_iter_wg(E, j, gname, fst) || cg_cuda_iter_vec(E, j, x, gname, fst)) return;
    coord c;
    int perm[4] = {0, 1, 2, 3};
    /* element by element, the source's most contiguous dims fastest */
    for (int a = 1; a < 4; a++)
        for (int b = a; b > 0 && fst[perm[b - 1]] < fst[perm[b]]; b--) {
            int tmp = perm[b];
            perm[b] = perm[b - 1], perm[b - 1] = tmp;
        }
    cg_loop_open_perm(E, t->dim, c, perm);
    mg_dtype src = E->p->store[x]; /* converted when the tile's type differs (tc.cvt, f32iter) */
    if (cg_lbits(E, j) && cg_input_data(E->p, x)) { /* a reduced dim's entries past mg_L: 0 (mask.c) */
        int raw = src == t->store && src != MG_F32; /* 16-bit bits copied as they are */
        sb_puts(E->sb, "        {\n        const int ok_ = ");
        cg_mask_cond(E, E->sb, j, c);
        sb_printf(E->sb, ";\n        %s[", E->names[j]);
        cg_index_expr(E->sb, c, t->stride, 0);
        if (raw) sb_printf(E->sb, "].x = ok_ ? %s[base_ + ", gname);
        else sb_printf(E->sb, "] = %s(ok_ ? %s(%s[base_ + ", cg_stfn(t->store), cg_ldfn(src), gname);
        cg_index_expr(E->sb, c, fst, 1);
        sb_puts(E->sb, raw ? "].x : 0;\n        }\n    }\n    }\n" : "]) : 0.0f);\n        }\n    }\n    }\n");
        return;
    }
    sb_printf(E->sb, "        %s[", E->names[j]);
    cg_index_expr(E->sb, c, t->stride, 0);
    if (src == t->store)
        sb_printf(E->sb, "] = %s[base_ + ", gname);
    else
        sb_printf(E->sb, "] = %s(%s(%s[base_ + ", cg_stfn(t->store), cg_ldfn(src), gname);
    cg_index_expr(E->sb, c, fst, 1);
    sb_puts(E->sb, src == t->store ? "];\n    }\n    }\n" : "]));\n    }\n    }\n");
}

/* saver: write the saved tile to this block's part of the kernel output (omap) */
static void step_save(em *E, int j, const char *gname, int x) {
    const ir_node *n = &E->g->nodes[j];
    int64_t td[4];
    const int64_t *fst = E->p->kst[x]; /* kernel output x's layout */
    mg_dtype gt = E->p->store[x];
    op_pad4(&E->g->nodes[n->in[0]].shape, td);
    sb_puts(E->sb, "    {\n    const long long base_ = ");
    tile_base(E, n, td, fst, E->sb);
    sb_puts(E->sb, ";\n");
    if (cg_cuda_save4(E, td, gname, fst, n->in[0])) return; /* four consecutive elements a thread */
    coord c;
    cg_loop_open(E, td, c);
    sb_printf(E->sb, "        %s[base_ + ", gname);
    cg_index_expr(E->sb, c, fst, 1);
    sb_printf(E->sb, "] = %s(", cg_stfn(gt));
    cg_expr(E, E->sb, n->in[0], c, 0);
    sb_puts(E->sb, ");\n    }\n    }\n");
}

/* accumulator: add this iteration's value (fmap phi), or place it in its slot (fmap d); not
 * one written whole by a matmul (fuse.mm) */
static int step_accum(em *E, int j) {
    const ir_node *n = &E->g->nodes[j];
    const op_tensor *t = &E->k->t[j];
    if (n->op != IR_OP_ACCUM || t->fuse.mm >= 0) return 0;
    if (t->fuse.red >= 0) { /* the reduction's lanes add their result in place */
        const ir_node *r = &E->g->nodes[t->fuse.red];
        int lanes = cg_reduce_lanes(E, r);
        coord c;
        cg_loop_open_lanes(E, t->dim, c, lanes);
        cg_compute_reduce(E, r, c);
        if (lanes > 1) sb_puts(E->sb, "        if (ok_ && l_ == 0)\n");
        sb_printf(E->sb, "        %s[", E->names[j]);
        cg_index_expr(E->sb, c, t->stride, 0);
        sb_puts(E->sb, "] += v;\n    }\n");
        return 1;
    }
    int64_t id[4];
    op_pad4(&E->g->nodes[n->in[0]].shape, id);
    coord c, ac;
    cg_loop_open(E, id, c);
    memcpy(ac, c, sizeof ac);
    if (n->fmap >= 0) {
        int d = n->fmap + 4 - n->shape.ndim;
        snprintf(ac[d], CW, "(%s + it * %" PRId64 ")", c[d], id[d]);
    }
    sb_printf(E->sb, "        %s[", E->names[j]);
    cg_index_expr(E->sb, ac, t->stride, 0);
    sb_printf(E->sb, "] %s ", n->fmap >= 0 ? "=" : "+=");
    cg_expr(E, E->sb, n->in[0], c, 0);
    sb_puts(E->sb, ";\n    }\n");
    return 1;
}

/* The element loop, on every target: any step that no strategy before it in the table
 * takes. A reduction or matmul computed in the loop, or an elementwise value over one (fuse.red,
 * fuse.mm: the value vr_), stored to the step's tile (C: a matmul's into its private sum). */
static int step_loop(em *E, int j) {
    const op_tensor *t = &E->k->t[j];
    const ir_node *n = &E->g->nodes[j];
    coord c;
    int red = t->fuse.red >= 0 ? t->fuse.red : ir_ops[n->op].kind == IR_KIND_REDUCE ? j : -1;
    int lanes = red >= 0 ? cg_reduce_lanes(E, &E->g->nodes[red]) : 1, in = t->fuse.red >= 0 ? t->fuse.red : t->fuse.mm;
    cg_loop_open_lanes(E, t->dim, c, lanes);
    if (in >= 0) { /* the reduction or matmul, then this value over it */
        if (red >= 0) cg_compute_reduce(E, &E->g->nodes[red], c);
        else cg_compute_matmul(E, &E->g->nodes[in], c);
        sb_puts(E->sb, "        const float vr_ = v;\n");
        E->reg_node = in;
        sb_puts(E->sb, "        (void)vr_;\n        {\n        const float v = ");
        cg_expr(E, E->sb, j, c, 1);
        sb_puts(E->sb, ";\n");
        E->reg_node = -1;
        if (lanes > 1) sb_puts(E->sb, "        if (ok_ && l_ == 0)\n");
        cg_store_to(E, E->names[j], t->store, t->stride, c, "v");
        sb_puts(E->sb, "        }\n    }\n");
        return 1;
    }
    cg_compute(E, j, c);
    if (lanes > 1) sb_puts(E->sb, "        if (ok_ && l_ == 0)\n");
    if (t->fuse.regacc >= 0) cg_c_regacc_add(E, j, c); /* C: the block's private sum, for the loop */
    else cg_store_to(E, E->names[j], t->store, t->stride, c, "v");
    sb_puts(E->sb, "    }\n");
    return 1;
}

/* ---- the step table ---- */

/* The ways to write one step of a block program (an iterator or a saver aside), tried in
 * this order: the first that applies writes the step. Each serves the targets in its mask
 * (1 << cg_target); its function writes step j and returns 1, or returns 0 and writes
 * nothing. A new strategy is a row here and its function in its target's folder. The order
 * matters: a chain's writer may be an accumulator (its row sum's) or a matmul. */
#define CUDA_ONLY (1u << CG_CUDA)
#define C_ONLY (1u << CG_C)
#define ANY_TARGET (1u << CG_CUDA | 1u << CG_C)
static const struct strategy {
    const char *name;
    unsigned targets;
    int (*apply)(em *E, int j);
} strategies[] = {
    {"attention chain, at one of its two writers (cuda/mma.c)", CUDA_ONLY, cg_cuda_chain_writer},
    {"accumulator", ANY_TARGET, step_accum},
    {"matmul on tensor cores (cuda/mma.c)", CUDA_ONLY, cg_cuda_matmul},
    {"matmul on tensor cores, its reader as epilogue (cuda/mma.c)", CUDA_ONLY, cg_cuda_matmul_epilogue},
    {"elementwise, four elements a thread (cuda/vector.c)", CUDA_ONLY, cg_cuda_elementwise4},
    {"matmul as tiled vector loops, its reader as epilogue (c/matmul.c)", C_ONLY, cg_c_matmul},
    {"element loop", ANY_TARGET, step_loop}, /* takes every step */
};

/* step j (not an iterator or a saver) by the first strategy that applies */
static void step_op(em *E, int j) {
    for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++)
        if ((strategies[s].targets & 1u << E->tg) && strategies[s].apply(E, j)) return;
}

static void barrier(em *E) {
    E->mm_w0 = 0;
    if (E->wg) cg_uses(E, CG_LIB_WGMMA); /* mg_fence_async */
    if (E->tg == CG_CUDA) sb_puts(E->sb, E->wg ? "    mg_fence_async();\n    __syncthreads();\n" : "    __syncthreads();\n");
}

/* The steps of one phase of the block program, with the planned barriers; only iterators
 * (only = 1), all but iterators (only = 2) or all (0). */
static void block_steps_only(em *E, int from, int to, const char **gn, int knode, const params *ps, int only) {
    const op_kernel *k = E->k;
    const ir_graph *kg = E->p->g;
    for (int s = from; s < to; s++) {
        int j = k->step[s];
        const ir_node *n = &E->g->nodes[j];
        if (only && (n->op == IR_OP_ITER) != (only == 1)) continue;
        if (k->sync[s] && only != 1 && s + 1 != E->synced) barrier(E);
        if (s == k->loop_begin && only == 0 && k->stages && cg_cuda_convert_in_place(E, knode, 1) && k->cvt_sync) barrier(E);
        comment(E, j, ir_ops[n->op].name);
        if (n->op == IR_OP_ITER) {
            int x = kg->nodes[knode].in[n->index];
            step_iter(E, j, gn[x], x);
        } else if (n->op == IR_OP_SAVE) {
            int x = ps->node[n->index];
            step_save(E, j, gn[x], x);
        } else step_op(E, j);
    }
}

static void block_steps(em *E, int from, int to, const char **gn, int knode, const params *ps) {
    block_steps_only(E, from, to, gn, knode, ps, 0);
}

static void block_decls(em *E) {
    const op_kernel *k = E->k;
    for (int j = 0; j < E->g->n_nodes; j++) {
        const op_tensor *t = &k->t[j];
        if (!t->mat) continue;
        char sh[64];
        sb_printf(E->sb, "    %s *%s%s = (%s *)(smem + %" PRId64 "); /* %s, %s%s", cg_ctype(t->store), E->names[j],
                  t->pipe.stages ? "_st" : "", cg_ctype(t->store), t->off, ir_shape_str(t->store, &E->g->nodes[j].shape, sh, sizeof sh),
                  t->colmajor ? "column-major" : "row-major",
                  (t->colmajor ? t->stride[3] != t->dim[2] && t->dim[3] > 1 : t->stride[2] != t->dim[3] && t->dim[2] > 1)
                      ? ", padded rows" : t->tc.swz ? ", 16-byte pieces swizzled" : "");
        if (t->pipe.stages) sb_printf(E->sb, "; %d stages %" PRId64 " elements apart", t->pipe.stages, t->pipe.elems);
        sb_puts(E->sb, " */\n");
    }
}

/* Points each pipelined iterator's name at its stage for iteration `it`. */
static void stage_ptrs(em *E) {
    const op_kernel *k = E->k;
    for (int q = 0; q < k->n_loads; q++) {
        int j = k->load[q];
        const op_tensor *t = &k->t[j];
        sb_printf(E->sb, "    %s *const %s = %s_st + (it %% %d) * %" PRId64 ";\n", cg_ctype(t->store), E->names[j],
                  E->names[j], k->stages, t->pipe.elems);
    }
}

/* The copies of every pipelined iterator's tile for iteration `it` (a variable in scope). */
static void issue_loads(em *E, const char **gn, int knode) {
    const op_kernel *k = E->k;
    const ir_graph *kg = E->p->g;
    stage_ptrs(E);
    for (int q = 0; q < k->n_loads; q++) {
        int j = k->load[q];
        comment(E, j, "iter, pipelined");
        int x = kg->nodes[knode].in[E->g->nodes[j].index];
        step_iter(E, j, gn[x], x);
    }
}

/* C: the next iteration's moving tiles prefetched, one __builtin_prefetch per 64 bytes along
 * each tile's contiguous dim (the CPU's pipeline: a copy waits for its loads, a prefetch
 * does not, so the next tiles arrive while this iteration computes) */
static void c_prefetch(em *E, const char **gn, int knode) {
    const op_kernel *k = E->k;
    const ir_graph *kg = E->p->g;
    sb_printf(E->sb, "    {\n    const int ahead_ = it + 1;\n    if (ahead_ < %" PRId64 ") {\n    const int it = ahead_;\n",
              k->body->forloop);
    for (int q = 0; q < k->n_loads; q++) {
        int j = k->load[q], x = kg->nodes[knode].in[E->g->nodes[j].index], in = -1;
        const op_tensor *t = &E->k->t[j];
        const int64_t *fst = E->p->kst[x];
        for (int d = 0; d < 4; d++)
            if (t->dim[d] > 1 && fst[d] == 1) in = d;
        if (in < 0) continue;
        int64_t step = 64 / (int64_t)base_dtype_size(E->p->store[x]);
        sb_puts(E->sb, "    {\n    const long long base_ = ");
        tile_base(E, &E->g->nodes[j], t->dim, fst, E->sb);
        sb_printf(E->sb, ";\n    const %s *const p_ = %s + base_;\n    (void)p_;\n", cg_ctype(E->p->store[x]), gn[x]);
        strbuf ix = {0};
        for (int d = 0; d < 4; d++) {
            if (t->dim[d] <= 1) continue;
            sb_printf(E->sb, "    for (int f%d_ = 0; f%d_ < %" PRId64 "; f%d_ += %" PRId64 ")\n", d, d, t->dim[d], d,
                      d == in ? step : 1);
            sb_printf(&ix, " + (long long)f%d_ * %" PRId64 "LL", d, fst[d]);
        }
        sb_printf(E->sb, "        __builtin_prefetch(p_ + 0LL%s);\n    }\n", ix.s ? ix.s : "");
        if (ix.oom && !E->rc) E->rc = ctx_err(E->ctx, MG_ERR_NOMEM, "out of memory");
        sb_free(&ix);
    }
    sb_puts(E->sb, "    }\n    }\n");
}

/* ---- product loops on TMA and wgmma (op_kernel.tma, opt/tma.c) ---- */

/* The rows of kernel input x's 2-D view (rows `row` elements apart, op_tma_row): the last
 * row its elements reach, plus one. */
static int64_t view_rows(const ir_graph *kg, int x, const int64_t fst[4], int64_t row) {
    int64_t d[4], last = 0;
    op_pad4(&kg->nodes[x].shape, d);
    for (int q = 0; q < 4; q++) last += (d[q] - 1) * fst[q];
    return last / row + 1;
}

void cg_tma_params(em *E) {
    for (int q = 0; q < E->k->n_loads; q++)
        sb_printf(E->sb, ", const __grid_constant__ mg_tmap tm_%s", E->names[E->k->load[q]]);
}

void cg_tma_record(const em *E, int knode, const params *ps, cg_launch *l) {
    const op_kernel *k = E->k;
    const ir_graph *kg = E->p->g;
    MG_ASSERT(k->n_loads <= CG_MAX_TMAPS); /* opt/tma.c keeps a TMA loop within OP_MAX_TMA_TILES */
    for (int q = 0; q < k->n_loads; q++) {
        const op_tensor *t = &k->t[k->load[q]];
        int x = kg->nodes[knode].in[E->g->nodes[k->load[q]].index], arg = 0;
        const int64_t *fst = E->p->kst[x];
        while (arg < ps->n && ps->node[arg] != x) arg++;
        cg_tmap *m = &l->tmaps[l->n_tmaps++];
        int64_t row = op_tma_row(E->p, x);
        m->arg = arg, m->dims[0] = row, m->dims[1] = view_rows(kg, x, fst, row), m->row_bytes = row * 2;
        m->box[0] = t->dim[3] < 64 ? (unsigned)t->dim[3] : 64, m->box[1] = (unsigned)op_tma_rows(t);
    }
}

/* Iteration `it`'s tiles (a variable in scope) into stage it % S: thread 0 arms the stage's
 * mbarrier with their bytes and requests each tile's [R, 64] boxes at its element offset
 * base_, column base_ % W and row base_ / W of the input's 2-D view. */
static void tma_issue(em *E, int knode) {
    const op_kernel *k = E->k;
    const ir_graph *kg = E->p->g;
    int64_t bytes = 0;
    for (int q = 0; q < k->n_loads; q++) bytes += k->t[k->load[q]].pipe.elems * 2;
    sb_printf(E->sb, "    if (threadIdx.x == 0) {\n    unsigned long long *const bar_ = (unsigned long long *)(smem + %" PRId64
              ") + it %% %d;\n    mg_mbar_expect(bar_, %" PRId64 "u);\n", k->tma_bar, k->stages, bytes);
    for (int q = 0; q < k->n_loads; q++) {
        int j = k->load[q];
        const op_tensor *t = &k->t[j];
        int x = kg->nodes[knode].in[E->g->nodes[j].index];
        const int64_t *fst = E->p->kst[x], row = op_tma_row(E->p, x);
        comment(E, j, "iter, by TMA");
        sb_puts(E->sb, "    {\n    const long long base_ = ");
        tile_base(E, &E->g->nodes[j], t->dim, fst, E->sb);
        sb_printf(E->sb, ";\n    %s *const dst_ = %s_st + (it %% %d) * %" PRId64 ";\n", cg_ctype(t->store), E->names[j],
                  k->stages, t->pipe.elems);
        for (int64_t c = 0; c < t->dim[3]; c += 64) /* boxes of 64 columns, or the one of 32 */
            sb_printf(E->sb, "    mg_tma2(dst_ + %" PRId64 ", &tm_%s, base_ %% %" PRId64 "LL + %" PRId64 ", base_ / %" PRId64 "LL, bar_);\n",
                      c * op_tma_rows(t), E->names[j], row, c, row);
        sb_puts(E->sb, "    }\n");
    }
    sb_puts(E->sb, "    }\n");
}

/* The loop of a TMA kernel: L = S - 2 iterations' tiles requested ahead (S - 1 with two
 * stages), so that the stage an iteration refills was read by wgmmas two iterations back,
 * which every warpgroup waited for before this iteration's barrier; each iteration waits for
 * its stage's mbarrier, passes the barrier, requests it + L's tiles, issues its products and
 * waits for the previous iteration's (all of them with two stages). With two blocks an SM
 * (op_kernel.min_blocks) each iteration waits for its own products instead and requests
 * S - 1 ahead: the other block's products fill the tensor cores meanwhile, and its 3 stages
 * keep 2 requests in flight instead of 1 (H100: race b32 294.8 -> 283.0 us, squad b128
 * 581.2 -> 560.1, mid sizes within 0.5%; docs/notes/2026-11-28-s28.md). */
static void tma_loop(em *E, const char **gn, int knode, const params *ps) {
    const op_kernel *k = E->k;
    int S = k->stages, L = S >= 3 ? S - 2 : 1, W = S >= 3 ? 1 : 0;
    if (k->min_blocks == 2) L = S - 1, W = 0; /* two blocks an SM: see above */
    int64_t F = k->body->forloop;
    cg_uses(E, CG_LIB_TMA);
    sb_printf(E->sb, "    if (threadIdx.x == 0)\n        for (int s_ = 0; s_ < %d; s_++) mg_mbar_init((unsigned long long *)(smem + %" PRId64
              ") + s_);\n    __syncthreads();\n", S, k->tma_bar);
    sb_printf(E->sb, "    for (int it = 0; it < %" PRId64 "; it++) { /* the first %d iterations' tiles */\n", F < L ? F : L, L);
    tma_issue(E, knode);
    sb_puts(E->sb, "    }\n    mg_cp_wait<0>(); /* the fixed tiles */\n");
    block_steps_only(E, 0, k->loop_begin, gn, knode, ps, 2);
    barrier(E);
    sb_printf(E->sb, "    for (int it = 0; it < %" PRId64 "; it++) {\n", F);
    sb_printf(E->sb, "    mg_mbar_wait((unsigned long long *)(smem + %" PRId64 ") + it %% %d, (it / %d) & 1);\n", k->tma_bar, S, S);
    stage_ptrs(E);
    barrier(E);
    sb_printf(E->sb, "    {\n    const int ahead_ = it + %d;\n    if (ahead_ < %" PRId64 ") {\n    const int it = ahead_;\n", L, F);
    tma_issue(E, knode);
    sb_puts(E->sb, "    }\n    }\n    mg_wg_fence();\n");
    E->synced = k->loop_begin + 1;
    block_steps(E, k->loop_begin, k->loop_end, gn, knode, ps);
    E->synced = 0;
    sb_printf(E->sb, "    mg_wg_commit();\n    mg_wg_wait<%d>();\n    }\n    mg_wg_wait<0>();\n", W);
    barrier(E); /* the stages may hold the sums' tiles next */
}

/* The loop of a cp.async (or C) kernel, from the first iterations' requests to its end: see
 * cg_block_body. */
static void cp_loop(em *E, const char **gn, int knode, const params *ps) {
    const op_kernel *k = E->k;
    int S = k->stages, cuda = E->tg == CG_CUDA;
    if (S > 1) {
        sb_printf(E->sb, "    for (int it = 0; it < %d; it++) { /* the pipeline's first %d iterations */\n", S - 1, S - 1);
        issue_loads(E, gn, knode);
        if (cuda) sb_puts(E->sb, "    mg_cp_commit();\n");
        sb_puts(E->sb, "    }\n");
    }
    if (cuda) sb_printf(E->sb, "    mg_cp_wait<%d>(); /* the fixed tiles */\n", S > 1 ? S - 1 : 0);
    block_steps_only(E, 0, k->loop_begin, gn, knode, ps, 2);
    barrier(E);
    if (cg_cuda_convert_in_place(E, knode, 0)) barrier(E);
    sb_printf(E->sb, "    for (int it = 0; it < %" PRId64 "; it++) {\n", k->body->forloop);
    int top = cuda && S >= 2; /* the barrier at the top ends the iteration before */
    if (top) {
        sb_printf(E->sb, "    mg_cp_wait<%d>(); /* this iteration's tiles */\n", S - 2);
        stage_ptrs(E);
        barrier(E);
        sb_printf(E->sb, "    {\n    const int ahead_ = it + %d;\n    if (ahead_ < %" PRId64 ") {\n    const int it = ahead_;\n",
                  S - 1, k->body->forloop);
        issue_loads(E, gn, knode);
        sb_puts(E->sb, "    }\n    }\n    mg_cp_commit();\n");
        E->synced = k->loop_begin + 1;
    } else if (S) {
        if (!cuda && S == 1 && k->body->forloop > 1) c_prefetch(E, gn, knode);
        sb_printf(E->sb, "    {\n    const int ahead_ = it + %d;\n    if (ahead_ < %" PRId64 ") {\n    const int it = ahead_;\n",
                  S - 1, k->body->forloop);
        issue_loads(E, gn, knode);
        sb_puts(E->sb, "    }\n    }\n");
        if (cuda) sb_printf(E->sb, "    mg_cp_commit();\n    mg_cp_wait<%d>();\n", S - 1);
        stage_ptrs(E);
    }
    block_steps(E, k->loop_begin, k->loop_end, gn, knode, ps);
    E->synced = 0;
    if (!top) barrier(E);
    sb_puts(E->sb, "    }\n    (void)0;\n");
    if (top) barrier(E); /* the loop's last iteration ends */
}

/* The block's program. With a pipeline of S stages, the tiles of iterations 0..S-2 are
 * requested before the prologue's operators; iteration it requests it + S - 1's, waits for
 * its own (cp.async groups: one per iteration, empty past the end) and starts after a
 * barrier. In CUDA with S >= 2 an iteration waits for its tiles, passes the barrier, and
 * only then requests it + S - 1's into the stage iteration it - 1 read: that barrier, which
 * every thread passes after its part of iteration it - 1, is then also the end of it - 1,
 * so an iteration has one barrier fewer (one after the loop instead). A TMA kernel's loop
 * (op_kernel.tma) is tma_loop's. Register accumulators are zeroed fragments before the loop
 * and stored after it. */
void cg_block_body(em *E, const char **gn, int knode, const params *ps) {
    const op_kernel *k = E->k;
    int cuda = E->tg == CG_CUDA;
    cg_uses(E, CG_LIB_COPY); /* mg_cp_commit, mg_cp_wait */
    block_decls(E);
    for (int j = 0; j < E->g->n_nodes; j++) { /* zero the summing accumulators */
        const ir_node *n = &E->g->nodes[j];
        if (n->op != IR_OP_ACCUM || n->fmap >= 0 || !k->t[j].mat || k->t[j].fuse.mm >= 0) continue; /* fuse.mm: written whole */
        if (k->t[j].fuse.regacc >= 0) { /* a register accumulator */
            if (cuda) cg_cuda_regacc_decl(E, j);
            else cg_c_regacc_decl(E, j);
            continue;
        }
        coord c;
        comment(E, j, "zero");
        cg_loop_open(E, k->t[j].dim, c);
        cg_store_to(E, E->names[j], MG_F32, k->t[j].stride, c, "0.0f");
        sb_puts(E->sb, "    }\n");
    }
    /* the tiles that do not move with the loop: requested first, as one group */
    E->async = cuda;
    block_steps_only(E, 0, k->loop_begin, gn, knode, ps, 1);
    E->async = 0;
    if (cuda) sb_puts(E->sb, "    mg_cp_commit();\n");
    if (k->tma) tma_loop(E, gn, knode, ps);
    else cp_loop(E, gn, knode, ps);
    for (int j = 0; j < E->g->n_nodes; j++)
        if (E->g->nodes[j].op == IR_OP_ACCUM && k->t[j].fuse.regacc >= 0) {
            if (cuda) cg_cuda_store_regacc(E, j);
            else cg_c_store_regacc(E, j);
        }
    if (k->post_sync) barrier(E);
    block_steps(E, k->loop_end, k->n_steps, gn, knode, ps);
}

/* E set up to write block kernel knode's body (0), or 1 after an error in KE->rc. */
int cg_block_em(em *KE, int knode, arena *a, em *E) {
    const op_plan *p = KE->p;
    const ir_graph *b = p->g->nodes[knode].body;
    const op_kernel *k = &p->kernels[p->kern[knode]];
    *E = *KE;
    E->g = b, E->k = k, E->block = 1, E->names = cg_names(b, a, "s_");
    for (int i = 0; i < b->n_nodes; i++) E->wg |= k->t[i].chain.wg;
    if (!E->names) KE->rc = ctx_err(KE->ctx, MG_ERR_NOMEM, "out of memory");
    return !E->names;
}

void cg_block_comment(em *E, int knode) {
    char lb[128];
    const ir_graph *b = E->k->body;
    sb_printf(E->sb, "/* %s: graph-defined kernel (node %d); grid [%d, %d, %d] x %d threads, for-loop %" PRId64
                     ", %" PRId64 " bytes of shared memory, %d barriers per iteration */\n",
              ir_node_label(E->p->g, knode, lb, sizeof lb), knode, b->grid[0], b->grid[1], b->grid[2], E->k->threads,
              b->forloop, E->k->smem, E->k->n_barriers);
}

/* The grid axis of block kernel knode whose blocks split dim 0 of every output in equal parts
 * (each save's omap sends it to dim 0 and no other axis there, and no iterator's imap sends it
 * to an input's other dims: a split-K kernel's partial sums, whose dim 0 is the split, keep
 * their grid even where the splits number K x C), into l->row_axis and the
 * outputs' rows into l->row_rows; -1 where there is none (docs/tuning.md "Run-time grids"). */
static void row_axis(const op_plan *p, int knode, cg_launch *l) {
    const ir_graph *kg = p->g, *b = kg->nodes[knode].body;
    int axis = -1;
    for (int g = 0; g < 3; g++) {
        int all = b->n_outputs > 0, any = 0;
        for (int q = 0; q < b->n_outputs; q++) {
            int to0 = b->nodes[b->outputs[q]].map[g] == 0;
            all &= to0, any |= to0;
        }
        if (any && (!all || axis >= 0)) return; /* dim 0 split by two axes, or by one only in part */
        if (all) axis = g;
    }
    int64_t rows = -1;
    for (int i = knode; axis >= 0 && i < kg->n_nodes; i++) {
        const ir_node *n = &kg->nodes[i];
        if (n->op != IR_OP_KERNEL || n->body != b) continue;
        if (n->shape.ndim < 1 || (rows >= 0 && n->shape.d[0] != rows)) return;
        rows = n->shape.d[0];
    }
    if (axis < 0 || rows <= 0 || rows % b->grid[axis]) return;
    for (int i = 0; i < b->n_nodes; i++) /* an axis that splits another dim of an input (the depth */
        if (b->nodes[i].op == IR_OP_ITER && b->nodes[i].map[axis] > 0) return; /* of split-K partials) */
    l->row_axis = axis, l->row_rows = rows;
}

void cg_emit_block_kernel(em *KE, int knode, const char **gn, cg_program *out, arena *a) {
    const ir_graph *b = KE->p->g->nodes[knode].body;
    params ps = {0};
    cg_block_params(KE->p, knode, &ps);
    char kname[64];
    snprintf(kname, sizeof kname, "k%d_%s", knode, gn[knode] + 2);
    em E;
    if (cg_block_em(KE, knode, a, &E)) return;
    const op_kernel *k = E.k;
    cg_block_comment(&E, knode);
    cg_signature(&E, kname, &ps, E.tg == CG_CUDA ? k->threads : 1, gn, 0); /* CUDA: cg_cuda_blocks waits */
    if (E.tg == CG_CUDA) cg_cuda_blocks(&E, gn, knode, &ps);
    else cg_c_blocks(&E, gn, knode, &ps);
    sb_puts(E.sb, "}\n\n");
    unsigned grid[3] = {(unsigned)b->grid[0], (unsigned)b->grid[1], (unsigned)b->grid[2]};
    cg_record_launch(&E, out, kname, knode, &ps, grid, (unsigned)k->threads, k->smem);
    row_axis(KE->p, knode, &out->launches[out->n_launches - 1]);
    if (E.tg == CG_CUDA && k->tma) cg_tma_record(&E, knode, &ps, &out->launches[out->n_launches - 1]);
    if (E.rc) KE->rc = E.rc;
}
