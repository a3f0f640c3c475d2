/* opt/fuse: steps fused into other steps, and the block size. Reduction epilogues (a norm's
 * sqrt computed by the reducing lanes, a matmul's tiles written through its elementwise
 * reader), register accumulation (a matmul's sum over the loop kept in the warps' registers)
 * with its split-K groups, and the threads a block gets. */
#include "opt_internal.h"

/* ---- reduction epilogues ---- */

/* The operand of elementwise node u that is not a constant, or -1 when both are not. */
static int sole_operand(const ir_graph *b, int u) {
    const ir_node *n = &b->nodes[u];
    int x = -1;
    for (int a = 0; a < n->n_in; a++) {
        if (b->nodes[n->in[a]].op == IR_OP_CONST) continue;
        if (x >= 0) return -1;
        x = n->in[a];
    }
    return x;
}

/* Stored elementwise values computed from one reduction or matmul alone, through inlined
 * operators and constants, with as many elements: the reducing lanes compute a norm's
 * sqrt(sum(x^2) / n) right away (fuse.red); a matmul's tiles are written through exp (fuse.mm).
 * The reduction or matmul itself is then never stored nor followed by a barrier. */
static void fuse_reductions(const ir_graph *b, op_kernel *k, const int *uses) {
    for (int u = 0; u < b->n_nodes; u++) {
        ir_kind kd = ir_ops[b->nodes[u].op].kind;
        /* a stored one-iteration accumulator is its operand's value, as elementwise */
        int ident = b->nodes[u].op == IR_OP_ACCUM && b->forloop == 1;
        if (!k->t[u].mat || (kd != IR_KIND_UNARY && kd != IR_KIND_BINARY && !ident)) continue;
        int x = ident ? b->nodes[u].in[0] : sole_operand(b, u);
        while (x >= 0 && !k->t[x].mat) {
            ir_kind xk = ir_ops[b->nodes[x].op].kind;
            x = xk == IR_KIND_UNARY || xk == IR_KIND_BINARY ? sole_operand(b, x) : -1;
        }
        if (x < 0 || uses[x] != 1 || ir_numel(&b->nodes[x].shape) != ir_numel(&b->nodes[u].shape)) continue;
        if (ir_ops[b->nodes[x].op].kind == IR_KIND_REDUCE) k->t[u].fuse.red = x, k->t[x].mat = 0;
        else if (b->nodes[x].op == IR_OP_MATMUL && b->nodes[x].shape.ndim == b->nodes[u].shape.ndim)
            k->t[u].fuse.mm = x, k->t[x].mat = 0;
    }
}

/* An accumulator summing a reduction it alone reads (the exp-sum of attention): the reducing
 * lanes add to it directly (fuse.red), with no stored reduction and no barrier between. */
static void fuse_accum_reductions(const ir_graph *b, op_kernel *k, const int *uses) {
    for (int a = 0; a < b->n_nodes; a++) {
        const ir_node *n = &b->nodes[a];
        if (n->op != IR_OP_ACCUM || n->fmap >= 0 || !k->t[a].mat || b->forloop < 2) continue;
        int x = n->in[0];
        if (ir_ops[b->nodes[x].op].kind != IR_KIND_REDUCE || uses[x] != 1 || !k->t[x].mat) continue;
        k->t[a].fuse.red = x, k->t[x].mat = 0;
    }
}

/* Both kinds of reduction epilogue, stored values first. */
void op_fuse_epilogues(const ir_graph *b, op_kernel *k, const int *uses) {
    fuse_reductions(b, k, uses);
    fuse_accum_reductions(b, k, uses);
}

/* ---- block size ---- */

/* Threads per block: the block graph's own, or (opts.threads) enough that the widest step has
 * about 8 elements per thread (an iterator's tile counted in 16-byte vectors, a reduction by
 * what it reads in a loop's iteration or when it computes its operand in place), a power of
 * two from 128 to 512: a block that works alone on an SM (nTrans: one row of 4096) then has
 * 16 warps to hide latency instead of 4. In a streaming loop the
 * iterations' steps count: tiles that stream in ahead (cp.async, `pipelined`) need no threads
 * of their own, an accumulator concatenating the iterations writes one slice a step, and
 * work done once after the loop counts once per iteration's share (RMSNorm+Linear b=1: 23.4
 * us at 128 threads, 25.4 at 512; b=8 sums its X tile's squares in every iteration and
 * keeps 512). A loop streaming a swizzled tile to tensor cores (a weight stream) takes 256:
 * its copies' issue needs warps, and the rest of the step does not need more (measured
 * with swizzled W: RMSNorm+Linear b=1 23.5 us at 256, 24.8 at 128; b=8 23.6 at 256, 24.7 at
 * 512; bench/micro/stream.cu alone: 19.8 at 256, 25.1 at 128). Only block graphs written
 * for whole warps change. */
int op_block_threads(const ir_graph *b, const op_kernel *k, const int *cls, int on, int pipelined, int n_sm) {
    if (!on || b->threads % 32 || b->threads > 512) return b->threads;
    int64_t widest = 0, F = b->forloop;
    for (int i = 0; i < b->n_nodes && pipelined && F > 1 && b->threads <= 256; i++)
        if (b->nodes[i].op == IR_OP_ITER && b->nodes[i].fmap >= 0 && k->t[i].tc.swz) return 256;
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        int red = ir_ops[n->op].kind == IR_KIND_REDUCE && ((F > 1 && cls[i] == IR_LOOP) || !k->t[n->in[0]].mat);
        if (!k->t[i].mat && n->op != IR_OP_MATMUL && !red) continue;
        if (pipelined && n->op == IR_OP_ITER && n->fmap >= 0 && F > 1) continue;
        int64_t el = ir_numel(red ? &b->nodes[n->in[0]].shape : &n->shape);
        if (n->op == IR_OP_ITER) el /= 8;
        if (n->op == IR_OP_ACCUM && n->fmap >= 0) el /= F;
        else if (F > 1 && cls[i] != IR_LOOP) el /= F;
        if (el > widest) widest = el;
    }
    /* 8 elements a thread; 16 in a grid of many waves without a product (ROW and EW kernels
     * of 16 blocks an SM or more: half the threads, twice the blocks resident an SM, a
     * 512-wide row's sums within one warp; the encoder's second LayerNorm, race b128, 67.9
     * -> 50.5 us, docs/notes/2026-11-28-s29.md) */
    int t = 128, ept = (int64_t)b->grid[0] * b->grid[1] * b->grid[2] >= 16LL * n_sm ? 16 : 8;
    for (int i = 0; i < b->n_nodes; i++) ept = b->nodes[i].op == IR_OP_MATMUL ? 8 : ept;
    while (t < 512 && widest >= (int64_t)t * 2 * ept) t *= 2;
    return t > b->threads ? t : b->threads;
}

/* ---- register accumulation ---- */

/* A matmul whose only reader is an accumulator summing it over the loop, on whole warps:
 * codegen keeps the sum in each warp's registers (tensor-core fragments) for the whole loop
 * and stores it to the accumulator's shared memory once, after the loop. The matmul's own
 * tile is never stored. */
void op_register_accumulators(const ir_graph *b, op_kernel *k, const int *uses, const int *user) {
    if (b->threads % 32) return;
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        if (n->op != IR_OP_MATMUL || uses[i] != 1 || n->dtype == MG_F32) continue;
        const ir_node *a = &b->nodes[user[i]];
        if (a->op != IR_OP_ACCUM || a->fmap >= 0 || !k->t[user[i]].mat) continue;
        k->t[i].mat = 0;
        k->t[i].fuse.regacc = user[i], k->t[user[i]].fuse.regacc = i;
        k->post_sync = 1;
    }
}

void op_regacc_split(const ir_graph *b, const op_kernel *k, int mm, int64_t *T, int *SK) {
    const op_tensor *h = k->t[mm].chain.of >= 0 ? &k->t[k->t[mm].chain.of] : NULL;
    if (h) { /* a chain's: TS strips a warp, each N2 / 32 tiles of 16x32 */
        *SK = h->chain.sk;
        *T = h->chain.ts * (k->t[mm].dim[3] / 32);
        return;
    }
    const ir_shape *as = &b->nodes[b->nodes[mm].in[0]].shape;
    const int64_t *d = k->t[mm].dim, K = as->d[as->ndim - 1];
    int64_t tiles = d[0] * d[1] * ((d[2] + 15) / 16) * ((d[3] + 31) / 32), warps = k->threads / 32;
    int sk = 1;
    while (tiles * sk * 2 <= warps && K % (16 * sk * 2) == 0) sk *= 2;
    *SK = sk;
    *T = (tiles + warps / sk - 1) / (warps / sk);
}

/* Scratch for the register accumulators' split-K groups (op_kernel.acc_scratch): SK - 1
 * dense copies of the largest such accumulator, after everything else, when it still fits
 * (measured: RMSNorm+Linear b=1's four groups adding one after another, three barriers, took
 * 0.77 us after the loop, side by side then one pass 0.26; notes §27). */
void op_plan_acc_scratch(const ir_graph *b, op_kernel *k, const mg_device *dev) {
    int64_t need = 0;
    k->acc_scratch = -1;
    for (int i = 0; i < b->n_nodes; i++) {
        const op_tensor *t = &k->t[i];
        if (b->nodes[i].op != IR_OP_ACCUM || t->fuse.regacc < 0 || k->t[t->fuse.regacc].chain.of >= 0) continue;
        int64_t T;
        int SK;
        op_regacc_split(b, k, t->fuse.regacc, &T, &SK);
        int64_t bytes = (SK - 1) * t->dim[0] * t->dim[1] * t->dim[2] * t->dim[3] * 4;
        need = bytes > need ? bytes : need;
    }
    int64_t off = (k->smem + 15) / 16 * 16;
    if (need > 0 && off + need <= dev->smem_per_block) k->acc_scratch = off, k->smem = off + need;
}
