/* opt/layout: the layout pass. For each tensor a block graph stores in shared memory: its
 * storage type, row or column major, and rows padded against bank conflicts or swizzled
 * (docs/codegen.md, "Layout as an optimisation": each choice is a per-tensor minimum). */
#include <string.h>

#include "opt_internal.h"

/* Is every consumer of i a matmul, and does it read i as its operand `side` (-1: either)? */
static int only_matmul(const ir_graph *b, int i, int side) {
    int any = 0;
    for (int j = i + 1; j < b->n_nodes; j++)
        for (int k = 0; k < b->nodes[j].n_in; k++) {
            if (b->nodes[j].in[k] != i) continue;
            if (b->nodes[j].op != IR_OP_MATMUL || (side >= 0 && k != side)) return 0;
            any = 1;
        }
    return any;
}

void op_matmul_readers(const ir_graph *b, int *mm) {
    memset(mm, 0, sizeof *mm * (size_t)b->n_nodes);
    for (int j = b->n_nodes - 1; j >= 0; j--) { /* j's readers come after it: mm[j] is final */
        const ir_node *r = &b->nodes[j];
        /* a one-iteration accumulator may be read in place of its operand (op_thread_graph) */
        int reads = r->op == IR_OP_MATMUL || (r->op == IR_OP_ACCUM && b->forloop == 1 && mm[j]);
        for (int a = 0; a < r->n_in && reads; a++) mm[r->in[a]] = 1;
    }
}

/* cr[i]: does a reduction read i (directly or through elementwise operators computed inside
 * it) along a dim other than the last? Its lanes then read down a column: rows a multiple of
 * 128 bytes apart put them all in one bank, so such a tile gets padded rows like a matmul
 * operand (QKNorm's K tile, normalised over its rows). One pass, readers first. */
static void column_reduced(const ir_graph *b, const op_kernel *k, int *cr) {
    memset(cr, 0, sizeof *cr * (size_t)b->n_nodes);
    for (int j = b->n_nodes - 1; j >= 0; j--) {
        const ir_node *r = &b->nodes[j];
        int through = op_is_elementwise(r->op) && !k->t[j].mat && cr[j];
        for (int a = 0; a < r->n_in; a++) {
            int i = r->in[a];
            if (through || (ir_ops[r->op].kind == IR_KIND_REDUCE && r->dim != b->nodes[i].shape.ndim - 1)) cr[i] = 1;
        }
    }
}

/* Row-major strides, or column-major over the last two dims; rows padded by 16 bytes when a
 * row is a multiple of 128 bytes (32 banks of 4 bytes), so the 8 rows a tensor-core fragment
 * load touches fall in different banks. Dims of size 1 get stride 0. */
void op_layout(op_tensor *t, int colmajor, int pad) {
    int64_t esz = (int64_t)base_dtype_size(t->store), *d = t->dim, st[4];
    int inner = colmajor ? 2 : 3, outer = colmajor ? 3 : 2;
    int64_t row = d[inner];
    if (pad && row * esz % 128 == 0) row += 16 / esz;
    st[inner] = 1, st[outer] = row;
    st[1] = row * d[outer]; /* dims 0 and 1 hold whole matrices */
    st[0] = st[1] * d[1];
    t->colmajor = colmajor;
    t->bytes = ((st[0] * d[0] * esz) + 15) & ~(int64_t)15;
    for (int k = 0; k < 4; k++) t->stride[k] = d[k] == 1 ? 0 : st[k];
}

/* bf[i]: may computed tile i be stored in bf16? When some matmul reads it (mm, from
 * op_matmul_readers) and every reader is a tensor-core matmul (not f32: the product rounds an
 * f32 operand to bf16 anyway, so nothing is lost for it), a reduction (which then adds the
 * values the matmul multiplies), or a one-iteration accumulator read in i's place whose
 * readers are such. Half the bytes, and fragments by ldmatrix instead of f32 loads and
 * conversions. One pass, readers first (bf[j] is final when j's operands are visited). */
static void bf16_tiles(const ir_graph *b, const op_kernel *k, const int *mm, int *bf) {
    for (int i = 0; i < b->n_nodes; i++) bf[i] = 1; /* every reader seen so far allows it */
    for (int j = b->n_nodes - 1; j >= 0; j--) {
        const ir_node *r = &b->nodes[j];
        bf[j] = bf[j] && mm[j];
        int ok = r->op == IR_OP_MATMUL ? r->dtype != MG_F32
                 : ir_ops[r->op].kind == IR_KIND_REDUCE ? 1
                 : r->op == IR_OP_ACCUM && b->forloop == 1 && !k->t[j].mat ? bf[j]
                                                                            : 0;
        for (int a = 0; a < r->n_in && !ok; a++) bf[r->in[a]] = 0;
    }
}

/* f16[i]: is computed node i an f16 value that no exponentiation inside the block feeds?
 * Its program declares it f16, so its range is f16's (PyTorch stores such a value in f16
 * too); below an exp the block may hold values past that range (scores not shifted by
 * their maximum) that only a later division brings back. */
static void f16_values(const ir_graph *b, int *f16) {
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        int ex = ir_ops[n->op].n_exp > 0;
        for (int a = 0; a < n->n_in; a++) ex |= !f16[n->in[a]] && b->nodes[n->in[a]].op != IR_OP_ITER && b->nodes[n->in[a]].op != IR_OP_CONST;
        f16[i] = n->dtype == MG_F16 && !ex;
    }
}

int op_mm_bf16(const op_tensor *a, const op_tensor *b) {
    return !((a->store == MG_F16 || (a->store == MG_F32 && a->tc.f16)) &&
             (b->store == MG_F16 || (b->store == MG_F32 && b->tc.f16)));
}

/* Iterator tiles keep their source's type (f32 with op_opts.f32iter), and so do concatenations, reshapes and
 * repeats of tiles that all have it (they move values, exactly); computed values stay
 * f32 like the reference's (an exp can pass f16's range before a sum brings it back), or
 * when tensor-core matmuls read them, f16 for f16 values no exp feeds (f16_values) and
 * bf16 for the others. */
static mg_dtype store_type(const ir_graph *b, const op_kernel *k, int i, const mg_dtype *kin_store, int on,
                           int f32iter, const int *bf, const int *f16) {
    const ir_node *n = &b->nodes[i];
    /* (an accumulator is stored bf16 only when a matmul's epilogue writes it whole) */
    int acc_ok = n->op != IR_OP_ACCUM || (b->forloop == 1 && k->t[i].fuse.mm >= 0);
    if (ir_ops[n->op].kind == IR_KIND_LAYOUT) {
        mg_dtype st = k->t[n->in[0]].mat ? k->t[n->in[0]].store : MG_F32;
        for (int a = 1; a < n->n_in; a++)
            if (!k->t[n->in[a]].mat || k->t[n->in[a]].store != st) st = MG_F32;
        return st;
    }
    if (n->op == IR_OP_ITER) return f32iter ? MG_F32 : kin_store[n->index];
    return !on || !acc_ok || !bf[i] ? MG_F32 : f16[i] ? MG_F16 : MG_BF16;
}

/* The layout pass (opt_internal.h); kernel inputs' tiles follow their buffers' storage types
 * and major order (kst). */
void op_choose_layouts(const op_plan *p, int knode, op_kernel *k) {
    const ir_graph *b = k->body;
    int on = p->opts.layout, swizzle = p->opts.swizzle;
    mg_dtype kin_store[IR_MAX_IN];
    int kin_col[IR_MAX_IN];
    for (int a = 0; a < p->g->nodes[knode].n_in; a++) {
        int x = p->g->nodes[knode].in[a];
        kin_store[a] = p->store[x];
        kin_col[a] = p->kst[x][2] == 1 && p->kst[x][3] > 1;
    }
    int *tab = base_calloc((size_t)b->n_nodes * 4 + 1, sizeof *tab), *some_mm = tab, *cr, *bf, *f16;
    if (!tab) { /* out of memory: plain row-major f32 tiles, correct if slower */
        for (int i = 0; i < b->n_nodes; i++) {
            op_pad4(&b->nodes[i].shape, k->t[i].dim);
            if (k->t[i].mat)
                k->t[i].store = b->nodes[i].op == IR_OP_ITER && !p->opts.f32iter ? kin_store[b->nodes[i].index] : MG_F32;
            if (k->t[i].mat) op_layout(&k->t[i], 0, 0);
        }
        return;
    }
    cr = tab + b->n_nodes, bf = tab + 2 * b->n_nodes, f16 = tab + 3 * b->n_nodes;
    f16_values(b, f16);
    op_matmul_readers(b, some_mm);
    column_reduced(b, k, cr);
    bf16_tiles(b, k, some_mm, bf);
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        op_tensor *t = &k->t[i];
        op_pad4(&n->shape, t->dim);
        if (!t->mat) continue;
        int mm = some_mm[i];
        t->store = store_type(b, k, i, kin_store, on, p->opts.f32iter, bf, f16);
        t->tc.f16 = f16[i];
        /* iterator tiles follow their source so their loads from device memory stay
         * contiguous: row-major, or column-major from a buffer whose next-to-last dim is the
         * contiguous one (a split-K partial laid out splits outermost), read by no matmul
         * or only as its B operand; such a tile's rows are padded like a matmul operand's,
         * so a reduction along its columns reads 32 banks */
        int col = on && n->shape.ndim >= 2 &&
                  (n->op == IR_OP_ITER ? kin_col[n->index] && (!mm || only_matmul(b, i, 1))
                                       : p->opts.colmajor && only_matmul(b, i, 1));
        /* an elementwise value over a stored tile of its shape keeps that tile's layout: its
         * threads then read and write along the same rows (QKNorm's K / rms(K), a B operand
         * over a row-major K tile, transposed in the writing would conflict in banks) */
        if (col && op_is_elementwise(n->op))
            for (int a = 0; a < n->n_in; a++) {
                const op_tensor *x = &k->t[n->in[a]];
                if (x->mat && ir_numel(&b->nodes[n->in[a]].shape) == ir_numel(&n->shape) && !x->colmajor) col = 0;
            }
        /* a row-major 16-bit iterator tile read only as a B operand (ldmatrix.trans, 8 rows of
         * 16 bytes at a time) is swizzled instead of padded: padded rows cost its copies
         * a second 128-byte line each (measured on the weight stream: 19.8 us unpadded, 22.1
         * padded, bench/micro/stream.cu) */
        int64_t rb = t->dim[3] * (int64_t)base_dtype_size(t->store);
        t->tc.swz = 0;
        if (on && swizzle && n->op == IR_OP_ITER && !col && t->store != MG_F32 && only_matmul(b, i, 1) &&
            t->dim[2] % 16 == 0 && (rb % 128 == 0 || rb == 64)) {
            t->tc.swz = rb == 64 ? 2 : 1;
            op_layout(t, 0, 0);
            continue;
        }
        /* padded: matmul operands (ldmatrix reads 8 rows), tiles reduced down their columns,
         * and matmul results, which mma fragments write 8 rows at a time (register
         * accumulators get the same once known: op_pad_regacc, after the chains) */
        op_layout(t, col, on && (mm || n->op == IR_OP_MATMUL || (col && n->op == IR_OP_ITER) || cr[i]));
    }
    base_free(tab);
}

/* A register accumulator's tile is written from mma fragments after the loop (rows g and
 * g + 8 of each 16-row strip, two columns a lane): rows a multiple of 128 bytes apart put
 * a warp's eight rows in the same banks, 8-way; padded like a matmul result, 2-way. */
void op_pad_regacc(const ir_graph *b, op_kernel *k) {
    for (int i = 0; i < b->n_nodes; i++)
        if (b->nodes[i].op == IR_OP_ACCUM && k->t[i].fuse.regacc >= 0 && k->t[i].mat && !k->t[i].colmajor)
            op_layout(&k->t[i], 0, 1);
}
