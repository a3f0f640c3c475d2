/* opt/tma: plain product loops on Hopper's tensor memory accelerator and warpgroup wgmma.
 *
 * A for-loop whose body holds nothing but its moving iterator tiles and the products of those
 * tiles, each summed in registers (the lowering's matmul kernels, bias_relu's or SwiGLU's
 * X W1, X W3), is where mma.sync fed by cp.async is slowest against cuBLAS: 10.4 against
 * 6.1 µs for 128 x 1024 x 4096 (docs/notes/2026-11-27-tma.md). There each moving tile is one
 * TMA box copy a stage (a single thread's request, counted by the stage's mbarrier), stored
 * 128-byte swizzled (op_tensor.tc.tma), and each product runs as one m64nNk16 wgmma a k-step
 * and warpgroup from shared-memory descriptors, its registers accumulating across the loop;
 * an iteration waits only for the previous iteration's wgmmas (codegen/block.c). Products of
 * 8, 16 or 32 rows (decode sizes) run swapped, (A B)^T = B^T A^T: B's tile, read transposed,
 * is wgmma's 64-row operand and A's rows its N (op_kernel.tma 2); 1-7 rows (a decode step's
 * tokens) load as boxes of 8 rows, wgmma's narrowest N (op_tma_rows). */
#include <string.h>

#include "opt_internal.h"

#ifndef OP_TMA_WGS
#define OP_TMA_WGS 2 /* warpgroups a block's 64-row pieces make at most before they widen to 128 columns
                      * (4: 128 x 128 tiles as four 64 x 64 pieces, sessions 14-26) */
#endif
#ifndef OP_TMA_PAIR
#define OP_TMA_PAIR 1 /* 0: one block an SM, the deepest pipeline (sessions 14-26) */
#endif
#ifndef OP_TMA_PAIR_ITERS
#define OP_TMA_PAIR_ITERS 8 /* the longest loop that takes two blocks an SM (8 measured faster, 32 slower) */
#endif
int64_t op_tma_row(const op_plan *p, int kx) {
    int64_t d[4];
    op_pad4(&p->g->nodes[kx].shape, d);
    return p->kst[kx][2] ? p->kst[kx][2] : d[3];
}

/* Can iterator x's tile load as TMA boxes: [R, C] of a 16-bit type stored as its source's, the
 * source's rows contiguous, 16-byte aligned (a view only as a reshape: the map starts at its
 * first element, 16-byte aligned by make_view, and its rows are the buffer's),
 * C a multiple of 64 (128-byte box rows) or 32 (one box of 64-byte rows), R a multiple of 8 up
 * to 256 (a box's rows) or below 8 (a swapped product's A, in boxes of 8 rows)? */
static int tile_ok(const op_plan *p, int knode, const ir_graph *b, const op_kernel *k, int x) {
    const op_tensor *t = &k->t[x];
    int kx = p->g->nodes[knode].in[b->nodes[x].index];
    const int64_t *fst = p->kst[kx], row = op_tma_row(p, kx);
    if (!t->mat || t->colmajor || t->tc.cvt || base_dtype_size(t->store) != 2 || t->store != p->store[kx]) return 0;
    if ((p->view[kx] >= 0 && p->g->nodes[kx].op != IR_OP_RESHAPE) || t->dim[0] != 1 || t->dim[1] != 1 || (t->dim[3] % 64 && t->dim[3] != 32) ||
        (t->dim[2] % 8 && t->dim[2] > 8) || t->dim[2] > 256)
        return 0;
    for (int d = 0; d < 2; d++) /* the leading dims step whole rows: the 2-D view's rows */
        if (fst[d] % row) return 0;
    return fst[3] == 1 && row % 8 == 0 && row >= t->dim[3];
}

/* Rows M of the products: whole warpgroups of 64, or (swapped) 1-8, 16 or 32 as wgmma's N
 * (1-7 padded to 8). */
static int shape_ok(int64_t M) { return M % 64 == 0 || M <= 8 || M == 16 || M == 32; }

void op_tma_undo(const ir_graph *b, op_kernel *k) {
    for (int i = 0; i < b->n_nodes; i++) k->t[i].tc.tma = 0;
    k->tma = k->tma_nw = 0, k->tma_bar = -1, k->min_blocks = 1;
}

void op_find_tma(const op_plan *p, const mg_device *dev, int knode, const ir_graph *b, op_kernel *k) {
    int n = b->n_nodes;
    if (strcmp(dev->arch, "sm_90a") || p->opts.persist || p->opts.cluster || b->forloop < 2) return;
    int64_t M = 0, N = 0;
    int n_mm = 0, ok = 1, n_tiles = 0;
    for (int i = 0; i < n && ok; i++) {
        const ir_node *nd = &b->nodes[i];
        const op_tensor *t = &k->t[i];
        if (t->chain.of >= 0 || t->chain.wg) return;
        n_tiles += nd->op == IR_OP_ITER && nd->fmap >= 0;
        if (nd->op != IR_OP_MATMUL) continue;
        int ia = nd->in[0], ib = nd->in[1];
        const ir_node *a = &b->nodes[ia], *bb = &b->nodes[ib];
        int moving = a->op == IR_OP_ITER && a->fmap >= 0 && bb->op == IR_OP_ITER && bb->fmap >= 0;
        if (!moving && (a->fmap >= 0 || bb->fmap >= 0)) ok = 0;
        if (!moving) continue;
        const op_tensor *ta = &k->t[ia], *tb = &k->t[ib];
        if (t->fuse.regacc < 0 || t->dim[0] != 1 || t->dim[1] != 1) ok = 0;
        else if (!tile_ok(p, knode, b, k, ia) || !tile_ok(p, knode, b, k, ib) || ta->store != tb->store) ok = 0;
        else if (op_mm_bf16(ta, tb) != (ta->store == MG_BF16) || ta->dim[3] != tb->dim[2] || ta->dim[3] % 64) ok = 0;
        else if (!shape_ok(t->dim[2]) || (t->dim[3] % 64 && !(t->dim[3] == 32 && t->dim[2] % 64 == 0))) ok = 0;
        else if (n_mm && (t->dim[2] != M || t->dim[3] != N)) ok = 0;
        M = t->dim[2], N = t->dim[3], n_mm++;
    }
    if (!ok || !n_mm || n_tiles > OP_MAX_TMA_TILES) return; /* a tensor map each (codegen.h) */
    /* the loop holds nothing else: every node reading a moving value (a moving iterator or such a
     * product) is such a product or its register accumulator */
    for (int i = 0; i < n; i++) {
        const ir_node *nd = &b->nodes[i];
        for (int q = 0; q < nd->n_in; q++) {
            const ir_node *x = &b->nodes[nd->in[q]];
            int mv = (x->op == IR_OP_ITER && x->fmap >= 0) || (x->op == IR_OP_MATMUL && k->t[nd->in[q]].fuse.regacc >= 0);
            if (!mv) continue;
            if (nd->op == IR_OP_MATMUL && k->t[i].fuse.regacc >= 0) continue;
            if (nd->op == IR_OP_ACCUM && k->t[nd->in[q]].fuse.regacc == i) continue;
            return;
        }
    }
    /* warpgroups: 64 rows each, 64 columns each while that makes at most OP_TMA_WGS of them,
     * else wider; fewer than 64 rows (swapped): 64 columns each, the rows as wgmma's N */
    int swap = M % 64 != 0;
    int64_t nw = N < 64 ? N : 64; /* 32 columns: one m64n32 a warpgroup */
    while (!swap && (M / 64) * (N / nw) > OP_TMA_WGS && nw < 128 && N % (2 * nw) == 0) nw *= 2;
    int64_t wgs = swap ? N / 64 : (M / 64) * (N / nw), regs = swap ? (M < 8 ? 8 : M) / 2 : nw / 2;
    if (wgs > 4 || n_mm * regs > 128) return; /* accumulators: regs floats a thread and product */
    for (int i = 0; i < n; i++) {
        const ir_node *nd = &b->nodes[i];
        if (nd->op != IR_OP_MATMUL || b->nodes[nd->in[0]].fmap < 0 || b->nodes[nd->in[0]].op != IR_OP_ITER) continue;
        k->t[i].tc.tma = 1;
        for (int q = 0; q < 2; q++) {
            op_tensor *t = &k->t[nd->in[q]];
            t->tc.tma = 1, t->tc.swz = 0;
            op_layout(t, 0, 0);
            if (t->dim[2] < 8) t->bytes = op_tma_rows(t) * t->dim[3] * 2; /* the box's 8 rows */
        }
    }
    k->tma = swap ? 2 : 1, k->tma_nw = (int)nw, k->threads = (int)(128 * wgs);
    /* two blocks an SM (memory.c fits their stages in half of it), each thread's accumulators
     * then at most 96 floats of its 128 registers (op_pair_regs_ok), for a short loop: its
     * pipeline's fill and its stores are then a large share, which the other block's products
     * hide (H200, the encoder's K = 512 products 70.0 -> 65.0 us; K = 2048, 32 iterations:
     * 185.4 -> 208.5 us, the 3 stages too shallow; bench/results/h200-2026-11-28-s27/
     * tiles-ab-call4.log). Session 32: the encoder's Q/K/V kernel (three products, 96
     * accumulators, 2 stages of 40 KB in half the SM; 122 registers, no spills) paired: race b32
     * 264.7 -> 255.6 us, race b128 994.0 -> 984.6, squad within 1.5%, mnli b128 +0.8% (H200). */
    const int64_t blocks = (int64_t)b->grid[0] * b->grid[1] * b->grid[2]; /* enough to fill two an SM */
    k->min_blocks = OP_TMA_PAIR && !swap && op_pair_regs_ok(128 * wgs, n_mm * regs) && b->forloop <= OP_TMA_PAIR_ITERS &&
                    blocks >= 2 * dev->n_sm ? 2 : 1;
}
