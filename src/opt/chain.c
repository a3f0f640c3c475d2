/* opt/chain: attention chains (FlashAttention's inner step in a warp's registers) and their
 * wgmma form. Found after register accumulation, checked again after scheduling (the two
 * writers must share a barrier interval) and after the in-place conversions (wgmma's types). */
#include "opt_internal.h"

/* The step that writes sum s: s itself when stored in f32 (*mode 2), or the f32 accumulator
 * adding it (fuse.red, *mode 1); -1 otherwise. */
static int sum_writer(const ir_graph *b, const op_kernel *k, int s, int *mode) {
    if (k->t[s].mat) {
        *mode = 2;
        return k->t[s].fuse.red < 0 && k->t[s].store == MG_F32 ? s : -1;
    }
    for (int u = s + 1; u < b->n_nodes; u++)
        if (k->t[u].fuse.red == s) {
            *mode = 1;
            return b->nodes[u].op == IR_OP_ACCUM && b->nodes[u].fmap < 0 && k->t[u].mat && k->t[u].store == MG_F32 ? u : -1;
        }
    return -1;
}

/* The step that writes matmul m's value: m (stored, or summed in registers), or the
 * elementwise step written through it (fuse.mm); -1 otherwise. */
static int mm_writer(const ir_graph *b, const op_kernel *k, int m) {
    if (k->t[m].mat || k->t[m].fuse.regacc >= 0) return m;
    for (int u = m + 1; u < b->n_nodes; u++)
        if (k->t[u].fuse.mm == m) return u;
    return -1;
}

/* The iterator tile matmul operand x reads (through one-iteration accumulators read in its
 * place) when that product is its only reader; else -1. */
static int lone_iter(const ir_graph *b, const op_kernel *k, const int *uses, int x) {
    while (b->nodes[x].op == IR_OP_ACCUM && !k->t[x].mat && uses[x] == 1) x = b->nodes[x].in[0];
    return b->nodes[x].op == IR_OP_ITER && k->t[x].mat && uses[x] == 1 ? x : -1;
}

/* May iterator tile x, a chain product's [K, N] operand, take wgmma's core-matrix layout
 * (op_tensor.wg): one row-major matrix of a 16-bit type, K a multiple of 16 and N of 8,
 * copied in 16-byte pieces (its source's rows contiguous and 16-byte aligned)? */
static int wg_tile_ok(const op_plan *p, int knode, const ir_graph *b, const op_kernel *k, int x) {
    if (x < 0) return 0;
    const op_tensor *t = &k->t[x];
    const int64_t *fst = p->kst[p->g->nodes[knode].in[b->nodes[x].index]];
    if (t->colmajor || base_dtype_size(t->store) != 2 || t->dim[0] != 1 || t->dim[1] != 1) return 0;
    if (t->dim[2] % 16 || t->dim[3] % 8 || fst[3] != 1) return 0;
    for (int d = 0; d < 3; d++)
        if (t->dim[d] > 1 && fst[d] % 8) return 0;
    return 1;
}

/* The readers of a chain's head e = f(A B) (written through its matmul, fuse.mm, of a 16-bit
 * type; [M, N1] with M a multiple of 16 and N1 of 32): its row sum *s and the product
 * *m2 = e V, and nothing else; 0 when e heads no chain. */
static int chain_readers(const ir_graph *b, const op_kernel *k, const int *uses, int e, int *s,
                         int *m2) {
    const op_tensor *te = &k->t[e];
    int m1 = te->fuse.mm, bad = 0;
    if (m1 < 0 || !te->mat || uses[e] != 2 || b->nodes[m1].dtype == MG_F32) return 0;
    int64_t M = te->dim[2], N1 = te->dim[3];
    const ir_shape *as = &b->nodes[b->nodes[m1].in[0]].shape;
    if (te->dim[0] != 1 || te->dim[1] != 1 || M % 16 || N1 % 32 || as->d[as->ndim - 1] % 16) return 0;
    *s = *m2 = -1;
    for (int j = e + 1; j < b->n_nodes; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            if (b->nodes[j].in[a] != e) continue;
            const ir_node *r = &b->nodes[j];
            if (r->op == IR_OP_SUM && a == 0 && r->dim == r->shape.ndim - 1 && *s < 0) *s = j;
            else if (r->op == IR_OP_MATMUL && a == 0 && r->dtype != MG_F32 && *m2 < 0) *m2 = j;
            else bad = 1;
        }
    return !bad && *s >= 0 && *m2 >= 0 && ir_numel(&b->nodes[*s].shape) == M;
}

/* The warp split of a chain of `strips` 16-row strips over N1 score columns: *ts strips a
 * warp, *sk groups of warps over the columns (only when split_ok). With `size` the block is
 * sized to the chain (k->threads), with `wg` for wgmma; else the chain follows its warps. */
static void warp_split(op_kernel *k, int64_t strips, int64_t N1, int split_ok, int size, int wg,
                       int64_t *ts_out, int64_t *sk_out) {
    int64_t W = k->threads / 32, sk = 1, ts;
    if (size && wg && strips % 4 == 0 && strips <= 8) {
        /* one strip a warp up to 8 warps: B is read once a warpgroup, so more warps cost
         * no more shared-memory reads (16 warps leave 128 registers a thread: spills) */
        ts = 1, W = strips;
        k->threads = (int)W * 32;
    } else if (size) {
        /* the block sized to the chain: two strips a warp (each B fragment serves both;
         * with fewer than 8 strips one, so no warp of the four holds only clamped rows)
         * and at most 128 score columns a warp (registers), up to 16 warps; split
         * groups only past that (their partial sums meet through shared memory) */
        ts = strips >= 8 ? 2 : 1; /* two only where that still leaves four warps */
        while ((strips + ts - 1) / ts > 16) ts++;
        while (split_ok && N1 / (32 * sk) > 4 && N1 % (64 * sk) == 0 && (strips + ts - 1) / ts * sk * 2 <= 16) sk *= 2;
        W = (strips + ts - 1) / ts * sk;
        k->threads = (int)(W < 4 ? 4 : W) * 32;
    } else {
        ts = (strips + W - 1) / W;
        if (strips < W && split_ok) {
            ts = 1;
            while (strips * sk * 2 <= W && N1 % (32 * sk * 2) == 0) sk *= 2;
        }
    }
    *ts_out = ts, *sk_out = sk;
}

/* Puts chain e's two products on wgmma: the B and V tiles tb and tv in the core-matrix
 * layout (op_tensor.wg), and A's too when its rows come in whole warpgroups' 64. */
static void take_wgmma(const op_plan *p, int knode, const ir_graph *b, op_kernel *k, const int *uses,
                       int e, int tb, int tv) {
    op_tensor *te = &k->t[e];
    int64_t M = te->dim[2];
    te->chain.wg = 1, k->t[tb].tc.wg = k->t[tv].tc.wg = 1;
    op_layout(&k->t[tb], 0, 0), op_layout(&k->t[tv], 0, 0);
    /* A too when its rows come in whole warpgroups' 64 (chain.wg 2) */
    int ta = lone_iter(b, k, uses, b->nodes[te->fuse.mm].in[0]);
    if (ta >= 0 && M % 64 == 0 && wg_tile_ok(p, knode, b, k, ta) && k->t[ta].dim[2] == M)
        te->chain.wg = 2, k->t[ta].tc.wg = 1, op_layout(&k->t[ta], 0, 0);
}

/* Attention's chain (FlashAttention's inner step, Mirage's thread-graph fusion taken to the
 * warp): a tile e = f(A B) written through its matmul (fuse.mm) whose only readers are its row
 * sum and the A operand of one more tensor-core matmul e V. Each warp then computes its
 * 16-row strips of A B in registers, applies f, sums the rows and multiplies by V from
 * those registers: e is never stored (no shared memory, no barrier between the three). The
 * warps split e's columns into SK groups when the block has more warps than strips (their
 * partial sums meet in shared memory in a fixed order, so the products must be f32 sums
 * without an epilogue). Whether the two writers share a barrier interval is checked after
 * scheduling (op_chains_split). */
void op_find_chains(const op_plan *p, int knode, const ir_graph *b, op_kernel *k, const int *uses,
                    int size_threads) {
    if (k->threads % 32 || b->threads % 32) return;
    int chained = 0; /* the first chain sizes the block (size_threads), the others follow */
    int wg_taken = 0; /* one chain a kernel takes wgmma (wg_undo) */
    for (int e = 0; e < b->n_nodes; e++) {
        op_tensor *te = &k->t[e];
        int m1 = te->fuse.mm, s, m2;
        if (!chain_readers(b, k, uses, e, &s, &m2)) continue;
        int64_t M = te->dim[2], N1 = te->dim[3];
        const op_tensor *to = &k->t[m2];
        int v = b->nodes[m2].in[1];
        while (b->nodes[v].op == IR_OP_ACCUM && !k->t[v].mat) v = b->nodes[v].in[0];
        if (!k->t[v].mat || to->dim[0] != 1 || to->dim[1] != 1 || to->dim[2] != M || to->dim[3] % 32) continue;
        int rs_mode, sw = sum_writer(b, k, s, &rs_mode), mw = mm_writer(b, k, m2);
        if (sw < 0 || mw < 0) continue;
        /* split groups add partial products: only into f32, with nothing applied after */
        int split_ok = mw == m2 && (to->fuse.regacc >= 0 || to->store == MG_F32);
        int64_t sk, ts;
        /* wgmma: warpgroups of four warps hold four consecutive strips (G a multiple of
         * 4); B and V only the chain reads, whole tiles the copies lay out for it */
        int tb = lone_iter(b, k, uses, b->nodes[m1].in[1]), tv = lone_iter(b, k, uses, b->nodes[m2].in[1]);
        int wg = p->opts.wgmma && !wg_taken && tb >= 0 && tv >= 0 && wg_tile_ok(p, knode, b, k, tb) &&
                 wg_tile_ok(p, knode, b, k, tv);
        warp_split(k, M / 16, N1, split_ok, size_threads && !chained, wg, &ts, &sk);
        /* a chain's K and V keep padded rows: swizzled, GQA b=8 measured 25.4 -> 27.1 us
         * (both; 186 -> 254 registers) and 26.6 (V alone) */
        int kb = b->nodes[m1].in[1];
        while (b->nodes[kb].op == IR_OP_ACCUM && !k->t[kb].mat) kb = b->nodes[kb].in[0];
        if (k->t[kb].tc.swz) k->t[kb].tc.swz = 0, op_layout(&k->t[kb], 0, 1);
        if (k->t[v].tc.swz) k->t[v].tc.swz = 0, op_layout(&k->t[v], 0, 1);
        if (wg && (k->threads / 32 / sk) % 4 == 0) take_wgmma(p, knode, b, k, uses, e, tb, tv), wg_taken = 1;
        chained = 1;
        te->mat = 0;
        te->chain.mm = m2, te->chain.sum = s, te->chain.mw = mw, te->chain.sw = sw;
        te->chain.sk = (int)sk, te->chain.ts = (int)ts;
        k->t[m2].chain.of = k->t[mw].chain.of = k->t[sw].chain.of = e;
    }
}

/* Takes chain e's products off wgmma: its tiles keep their unpadded row-major layout. */
static void wg_undo(const ir_graph *b, op_kernel *k, int e) {
    if (!k->t[e].chain.wg) return;
    k->t[e].chain.wg = 0;
    for (int i = 0; i < b->n_nodes; i++) k->t[i].tc.wg = 0; /* one chain a kernel takes wgmma */
}

/* Keeps wgmma only where the tiles' final types are the products' (known once the in-place
 * conversions are): V bf16 (P is bf16), B the type of the A B product. */
void op_wg_check(const ir_graph *b, op_kernel *k, const int *uses) {
    for (int e = 0; e < b->n_nodes; e++) {
        const op_tensor *te = &k->t[e];
        if (!te->chain.wg) continue;
        const ir_node *m1 = &b->nodes[te->fuse.mm], *m2 = &b->nodes[te->chain.mm];
        int a = m1->in[0];
        while (b->nodes[a].op == IR_OP_ACCUM && !k->t[a].mat) a = b->nodes[a].in[0];
        mg_dtype ta = k->t[a].store, tb = k->t[lone_iter(b, k, uses, m1->in[1])].store;
        mg_dtype tv = k->t[lone_iter(b, k, uses, m2->in[1])].store;
        int bf = !(ta == MG_F16 && tb == MG_F16);
        if (tv != MG_BF16 || (bf && tb != MG_BF16)) wg_undo(b, k, e);
    }
}

/* Undoes the chains whose two writers landed in different barrier intervals (a step between
 * them would read a value written too early); 1 if any was undone (the steps change). */
int op_chains_split(op_kernel *k, const int *level) {
    int undone = 0;
    for (int e = 0; e < k->body->n_nodes; e++) {
        op_tensor *te = &k->t[e];
        if (te->chain.mm < 0 || level[te->chain.mw] == level[te->chain.sw]) continue;
        k->t[te->chain.mm].chain.of = k->t[te->chain.mw].chain.of = k->t[te->chain.sw].chain.of = -1;
        te->chain.mm = te->chain.sum = te->chain.mw = te->chain.sw = -1;
        te->mat = 1, undone = 1;
        wg_undo(k->body, k, e);
    }
    return undone;
}
