/* lower: the plain lowering (lower.h, docs/lower.md). Three steps: which tensors reach device
 * memory (mat[]), which matmuls and reductions move inside the one kernel that reads them
 * (absorb), and one kernel per remaining tensor, built by form (build). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"

enum {
    MAX_MM = 8,                  /* matmuls in one MM kernel */
    MAX_SIB = 2,                 /* sibling products built with a root (three products: x Wq, x Wk, x Wv) */
    N_SP = 1 + 2 * MAX_MM,       /* tile spaces: the output's, then each matmul's A and B */
    MAX_DEPTH = 40,              /* operators recomputed along one path inside a kernel */
    MAX_LEAVES = 6,              /* stored tensors one recomputed elementwise value reads (a LayerNorm
                                  * of x + y + b with its gain and bias: 5; kernel inputs <= 8) */
    THREADS = 128,
};
/* F_MMROW: form MM whose tiles hold whole rows of the product (64 x N), with reductions along
 * them after the loop (a LayerNorm of x + A W + b: mmrow_tiles) */
typedef enum { F_MM, F_ROW, F_EW, F_ATTN, F_MMROW } form;
/* form ATTN's tile spaces: the output, the scores' operands A and B, the scores' elementwise
 * function E, and V */
enum { SP_O, SP_A, SP_B, SP_E, SP_V };
/* MM tiling rules (mm_tiles); compile-time so bench variants can be built with OPT=-D... */
#ifndef LW_BN
#define LW_BN 64         /* output columns a block */
#endif
#ifndef LW_SPLIT_FILL
#define LW_SPLIT_FILL 150 /* split the depth while blocks < this % of the SMs (100 until session 19;
                           * 50 measured on H100: a 16-row MLP 18.0 -> 15.9 us, but RMSNorm + QKV
                           * 27.1 -> 39.7 and the decode step b1 1,483 -> 1,787:
                           * bench/results/h100-2026-11-26-s15/div2; 150: docs/notes/2026-11-27-s19.md) */
#endif
/* the default, then 128-wide columns, fewer splits, more splits (docs/notes/2026-11-27-s22.md),
 * and no form MMROW (a LayerNorm after a product as its own kernel: 1-3% faster on the ragged
 * encoder over race, H200, docs/notes/2026-11-28-s30.md) */
const lw_tiling lw_tilings[LW_TILINGS] = {{LW_BN, LW_SPLIT_FILL, 1}, {128, LW_SPLIT_FILL, 1}, {LW_BN, 50, 1},
                                          {LW_BN, 300, 1}, {LW_BN, LW_SPLIT_FILL, 0}};
#ifndef LW_BIG
#define LW_BIG 128 /* LW_BIG x LW_BIG output tiles when a product has LW_BIG_WAVES waves of them (0: never; H100,
                    * docs/notes/2026-11-28-s26.md: FFN over 46,720 tokens 902.9 -> 651.4 us, the encoder on race
                    * b32 1,001 -> 811, squad b32 465 -> 404; smaller products keep 64 x 64) */
#endif
#ifndef LW_MID_FILL
#define LW_MID_FILL 50 /* a mid-size product takes 128-row tiles while they still occupy this % of the SMs (H100,
                        * docs/notes/2026-11-28-s28.md: mnli b32 at 88 blocks faster, cola b32 at 24 slower) */
#endif
#ifndef LW_MID_LONG
#define LW_MID_LONG 8 /* ... and 128 x 128 tiles, one wave or more of them, past this many 64-deep steps */
#endif
#ifndef LW_BIG_WAVES
#define LW_BIG_WAVES 2
#endif
#ifndef LW_ROW_N
#define LW_ROW_N 512 /* form MMROW: the widest row a block's product holds (64 x 512: four m64n128 warpgroups) */
#endif
#ifndef LW_ROW_ITERS
#define LW_ROW_ITERS 8 /* form MMROW for a depth of at most this many 64-deep steps: its 72 KB stages leave
                        * room for two, one request ahead (H100, race b128: W2 + LayerNorm over K = 2048 took
                        * 349 us against 188 + 75 as two kernels; docs/notes/2026-11-28-s28.md) */
#endif
#ifndef LW_ROW_FILL
#define LW_ROW_FILL 50 /* form MMROW while its 64-row blocks fill this % of the SMs (each has a whole row's depth loop) */
#endif
#ifndef LW_SPLIT_MAX
#define LW_SPLIT_MAX 32  /* at most this many splits */
#endif

/* A tile space: values of one shape family (right-aligned broadcasts of ref), the dim of ref
 * each grid dim splits (-1 none), and the dim the loop splits (-1 none). */
typedef struct space {
    ir_shape ref;
    int gdim[3], fdim;
    int set;
} space;

typedef struct lw {
    const ir_graph *g;
    mg_ctx *ctx;
    const mg_device *dev;
    int cpu; /* for the C target (lw_lower) */
    lw_tiling tl; /* form MM's (lw_lower) */
    int n;
    int *mat, *is_out, *depth;
    int *cstart, *cons; /* consumers of node i: cons[cstart[i] .. cstart[i + 1]) */
    int *seen, stamp;
    /* the kernel being built */
    int root;
    form f;
    ir_graph *b;
    space sp[N_SP];
    int *memo; /* n * N_SP block nodes, -1 unset */
    int kin[IR_MAX_IN], n_kin, n_mm, accum; /* kin < 0: partial -kin - 1 of the split */
    int64_t k, bk, rdim_end; /* MM: depth and tile of it; ROW: reduced dim from the end */
    int64_t tile[IR_MAX_DIMS];
    int grid[3];
    /* MM split along the depth (split-K): a kernel of partial products first (bp, reading
     * kin_p), its grid dim gk taking split blocks; b then adds them and runs the epilogue */
    int split, gk, sdim, fdim, mm_node[MAX_MM], kin_p[IR_MAX_IN], n_kin_p;
    ir_graph *bp;
    int *att;       /* att[o] = S + 1: matmul o is attention over the scores matmul S */
    int *att_max;   /* att_max[o] = m + 1: its E is exp(A - m), m = max(B, keys) (attn_max) */
    int no_kernels; /* the program does not fit the device: every node stays kernel-level */
    int *to_f32;    /* node i reaches an f32 output: no tensor-core product may feed it */
    /* sibling products (find_siblings; off with MUGEN_FUSE_SIBLINGS=0): roots sib[0..n_sib)
     * built into the kernel of L->root, each a save of its own; done[j]: root j was built so */
    int siblings, n_sib, sib[MAX_SIB], *done;
} lw;

static int is_ew(ir_op op) {
    return ir_ops[op].kind == IR_KIND_UNARY || ir_ops[op].kind == IR_KIND_BINARY;
}
static int is_anchor(ir_op op) {
    return op == IR_OP_MATMUL || op == IR_OP_SUM || op == IR_OP_MAX;
}
static int shape_eq(const ir_shape *a, const ir_shape *b) {
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->d[d] != b->d[d]) return 0;
    return 1;
}
static ir_node proto(ir_op op, int a, int b) {
    ir_node p = {.op = op, .n_in = ir_ops[op].arity, .in = {a, b}, .fmap = -1,
                 .map = {-1, -1, -1}, .dim = -1};
    return p;
}

/* Dim of a rank-r tensor (right-aligned against ref) that ref dim d is, or -1 when d is -1,
 * outside it, or a broadcast dim of size 1. */
static int leaf_dim(const ir_shape *ref, const ir_shape *x, int d) {
    if (d < 0) return -1;
    int j = d - (ref->ndim - x->ndim);
    return j < 0 || x->d[j] == 1 ? -1 : j;
}

/* Grid dims for the dims of s that tiles t cut into more than one block, innermost first:
 * gdim[], grid[]. 0, or -1 when more than three dims split or one splits past 65535. */
static int assign_grid(const ir_shape *s, const int64_t *t, int gdim[3], int grid[3]) {
    int g = 0;
    for (int k = 0; k < 3; k++) gdim[k] = -1, grid[k] = 1;
    for (int d = s->ndim - 1; d >= 0; d--) {
        int64_t c = s->d[d] / t[d];
        if (c == 1) continue;
        if (g == 3 || c > 65535) return -1;
        gdim[g] = d, grid[g++] = (int)c;
    }
    return 0;
}

/* The largest divisor of n that is at most cap (1 at least). */
static int64_t div_at_most(int64_t n, int64_t cap) {
    if (n <= cap) return n;
    for (int64_t d = cap; d > 1; d--)
        if (n % d == 0) return d;
    return 1;
}

/* The smallest factor of n above 1 (n itself when prime; 2 for n < 2): a split grows by it. */
static int64_t smallest_factor(int64_t n) {
    int64_t p = 2;
    while (p * p <= n && n % p) p++;
    return n % p ? n : p;
}

/* The first grid dim left free (1 block, as every dim after it), or -1: the dim a split takes. */
static int free_grid_dim(const int grid[3]) {
    int gk = grid[0] == 1 ? 0 : grid[1] == 1 ? 1 : grid[2] == 1 ? 2 : -1;
    for (int k = gk; k >= 0 && k < 3; k++)
        if (grid[k] > 1) gk = -1;
    return gk;
}

/* Tiles of s from its innermost dim out, each the largest divisor keeping the tile at most
 * budget elements; dim keep (if >= 0) takes keep_tile. */
static void tile_dims(const ir_shape *s, int keep, int64_t keep_tile, int64_t budget, int64_t *t) {
    int64_t have = keep >= 0 ? keep_tile : 1;
    for (int d = s->ndim - 1; d >= 0; d--) {
        if (d == keep) {
            t[d] = keep_tile;
            continue;
        }
        t[d] = div_at_most(s->d[d], budget / have > 1 ? budget / have : 1);
        have *= t[d];
    }
}

/* ---- the kernel's block graph ---- */

static int emit(lw *L, int i, int s, int depth);

/* The iterator reading program node i (a kernel input) in space s. */
static int emit_iter(lw *L, int i, int s) {
    const ir_node *x = &L->g->nodes[i];
    const space *S = &L->sp[s];
    int k = 0;
    while (k < L->n_kin && L->kin[k] != i) k++;
    if (k == L->n_kin) {
        char nm[32];
        snprintf(nm, sizeof nm, "t%d", i);
        int r = ir_block_add_kin(L->b, L->ctx, x->name ? x->name : nm, x->dtype, &x->shape);
        if (r < 0) return r;
        L->kin[L->n_kin++] = i;
    }
    ir_node p = proto(IR_OP_ITER, 0, 0);
    p.index = k;
    for (int g = 0; g < 3; g++) p.map[g] = L->grid[g] > 1 ? leaf_dim(&S->ref, &x->shape, S->gdim[g]) : -1;
    p.fmap = L->b->forloop > 1 ? leaf_dim(&S->ref, &x->shape, S->fdim) : -1;
    return ir_add_node(L->b, L->ctx, &p);
}

/* Spaces A and B of the j-th matmul n, from the output space: the grid dims that split the
 * output's rows split A's, those that split its columns split B's, batch dims both. */
static void mm_spaces(lw *L, const ir_node *n, int j) {
    const space *O = &L->sp[0];
    space *A = &L->sp[1 + 2 * j], *B = &L->sp[2 + 2 * j];
    const ir_shape *as = &L->g->nodes[n->in[0]].shape, *bs = &L->g->nodes[n->in[1]].shape;
    int r = O->ref.ndim;
    A->ref = *as, B->ref = *bs, A->set = B->set = 1;
    A->fdim = as->ndim - 1, B->fdim = bs->ndim - 2;
    for (int g = 0; g < 3; g++) {
        int d = O->gdim[g];
        A->gdim[g] = B->gdim[g] = -1;
        if (d == r - 1) B->gdim[g] = bs->ndim - 1;
        else if (d == r - 2) A->gdim[g] = as->ndim - 2;
        else if (d >= 0) {
            A->gdim[g] = d - (r - as->ndim) >= 0 ? d - (r - as->ndim) : -1;
            B->gdim[g] = d - (r - bs->ndim) >= 0 ? d - (r - bs->ndim) : -1;
            if (A->gdim[g] >= 0 && as->d[A->gdim[g]] == 1) A->gdim[g] = -1;
            if (B->gdim[g] >= 0 && bs->d[B->gdim[g]] == 1) B->gdim[g] = -1;
        }
    }
    if (L->split > 1) A->gdim[L->gk] = as->ndim - 1, B->gdim[L->gk] = bs->ndim - 2;
}

/* With a split, the j-th matmul in the adding kernel: its partial products. With the split a
 * new leading dim (sdim 1), every split at once, summed in the block
 * (accum(reshape(sum(iter(P_j), dim=0)))): one load's latency where a split an iteration
 * waited split times (docs/notes/2026-11-27-s21.md). Folded into a dim (sdim 0), one split an
 * iteration, accumulated (accum(iter(P_j, fmap=fdim))). */
static int emit_partial(lw *L, int j) {
    if (L->n_kin == IR_MAX_IN) return -(int)ctx_err(L->ctx, MG_ERR_LIMIT, "kernel inputs");
    const space *O = &L->sp[0];
    ir_shape ps = {.ndim = O->ref.ndim + L->sdim};
    for (int d = 0; d < O->ref.ndim; d++) ps.d[d + L->sdim] = O->ref.d[d];
    ps.d[L->fdim] = L->sdim ? L->split : ps.d[L->fdim] * L->split;
    const ir_node *mm = &L->g->nodes[L->mm_node[j]];
    char nm[32];
    snprintf(nm, sizeof nm, "p%d", L->mm_node[j]);
    int r = ir_block_add_kin(L->b, L->ctx, nm, mm->dtype, &ps);
    if (r < 0) return r;
    L->kin[L->n_kin++] = -(j + 1);
    ir_node p = proto(IR_OP_ITER, 0, 0);
    p.index = r, p.fmap = L->sdim ? -1 : L->fdim;
    for (int g = 0; g < 3; g++) p.map[g] = L->grid[g] > 1 && O->gdim[g] >= 0 ? O->gdim[g] + L->sdim : -1;
    int it = ir_add_node(L->b, L->ctx, &p), rs = it;
    if (it < 0 || !L->sdim) goto accum; /* the split folded into a dim: the tile has the shape */
    p = proto(IR_OP_SUM, it, 0);
    p.dim = 0, p.group = L->split;
    if ((it = ir_add_node(L->b, L->ctx, &p)) < 0) return it;
    p = proto(IR_OP_RESHAPE, it, 0);
    p.n_ints = O->ref.ndim;
    for (int d = 0; d < O->ref.ndim; d++) p.ints[d] = L->b->nodes[it].shape.d[d + 1];
    rs = ir_add_node(L->b, L->ctx, &p);
accum:
    if (rs < 0) return rs;
    p = proto(IR_OP_ACCUM, rs, 0);
    return ir_add_node(L->b, L->ctx, &p);
}

/* A matmul of the MM form: accum(matmul(A', B')), A' and B' its operands' prologues. */
static int emit_matmul(lw *L, int i, int s, int depth) {
    const ir_node *n = &L->g->nodes[i];
    const ir_shape *o = &L->sp[0].ref;
    int r = n->shape.ndim;
    if ((L->f != F_MM && L->f != F_MMROW) || s != 0 || L->n_mm == MAX_MM || !shape_eq(&n->shape, o) ||
        L->g->nodes[n->in[0]].shape.d[L->g->nodes[n->in[0]].shape.ndim - 1] != L->k || r < 2)
        return -(int)MG_ERR_SHAPE;
    int j = L->n_mm++;
    L->mm_node[j] = i;
    if (L->split > 1) return emit_partial(L, j);
    mm_spaces(L, n, j);
    int sa = 1 + 2 * j; /* siblings reading one A share its iterator: one tile a stage for all */
    for (int k = 0; L->n_sib && k < j; k++)
        if (L->g->nodes[L->mm_node[k]].in[0] == n->in[0]) {
            sa = 1 + 2 * k;
            break;
        }
    int a = emit(L, n->in[0], sa, depth + 1);
    int b = a < 0 ? a : emit(L, n->in[1], 2 + 2 * j, depth + 1);
    if (b < 0) return b;
    ir_node p = proto(IR_OP_MATMUL, a, b);
    int m = ir_add_node(L->b, L->ctx, &p);
    if (m < 0) return m;
    p = proto(IR_OP_ACCUM, m, 0);
    return ir_add_node(L->b, L->ctx, &p);
}

/* Form ATTN's scores S = matmul(A, B), the one matmul of its E (att[root]), in space SP_E:
 * A's rows and B's keys as E's tile has them, the whole depth in one tile. */
static int emit_scores(lw *L, int i, int s, int depth) {
    const ir_node *n = &L->g->nodes[i];
    if (i != L->att[L->root] - 1 || s != SP_E) return -(int)MG_ERR_SHAPE;
    int a = emit(L, n->in[0], SP_A, depth + 1);
    int b = a < 0 ? a : emit(L, n->in[1], SP_B, depth + 1);
    if (b < 0) return b;
    ir_node p = proto(IR_OP_MATMUL, a, b);
    return ir_add_node(L->b, L->ctx, &p);
}

/* A reduction of the ROW form along the reduced dim: sum or max of its operand's tile, then
 * an accumulator when the loop walks that dim (sums only). */
static int emit_reduce(lw *L, int i, int s, int depth) {
    const ir_node *n = &L->g->nodes[i];
    if (L->f != F_ROW || n->shape.ndim - 1 - n->dim != L->rdim_end ||
        (n->op == IR_OP_SUM && n->group != L->g->nodes[n->in[0]].shape.d[n->dim]) ||
        (n->op == IR_OP_MAX && L->b->forloop > 1))
        return -(int)MG_ERR_SHAPE;
    int x = emit(L, n->in[0], s, depth + 1);
    if (x < 0) return x;
    ir_node p = proto(n->op, x, 0);
    p.dim = n->dim, p.group = L->b->nodes[x].shape.d[n->dim];
    int red = ir_add_node(L->b, L->ctx, &p);
    if (red < 0 || L->b->forloop == 1) return red;
    L->accum = 1;
    p = proto(IR_OP_ACCUM, red, 0);
    return ir_add_node(L->b, L->ctx, &p);
}

/* Form ATTN: a reduction computed inside the block from its operand's tile, where the tile
 * holds the reduced dim whole (the head dim of a norm of the queries or keys: the Q tile holds
 * the whole depth, the K tile too), or the scores' max of attn_max, each block's over its own
 * keys (one iteration: attn_try), which the combining kernel rescales (attn_combine_in). */
static int emit_local(lw *L, int i, int s, int depth) {
    const ir_node *n = &L->g->nodes[i], *a = &L->g->nodes[n->in[0]];
    if (n->op == IR_OP_SUM && n->group != a->shape.d[n->dim]) return -(int)MG_ERR_SHAPE;
    int x = emit(L, n->in[0], s, depth + 1);
    if (x < 0) return x;
    int whole = L->b->nodes[x].shape.d[n->dim] == a->shape.d[n->dim];
    if (!whole && (i != L->att_max[L->root] - 1 || L->b->forloop > 1)) return -(int)MG_ERR_SHAPE;
    ir_node p = proto(n->op, x, 0);
    p.dim = n->dim, p.group = L->b->nodes[x].shape.d[n->dim];
    return ir_add_node(L->b, L->ctx, &p);
}

/* Block node computing program node i in space s (memoised), or -rc. Kernel inputs are the
 * materialised nodes other than the root; elementwise operators are recomputed. */
static int emit(lw *L, int i, int s, int depth) {
    int *m = &L->memo[(size_t)i * N_SP + s];
    if (*m >= 0) return *m;
    const ir_node *n = &L->g->nodes[i];
    int r;
    if (depth > MAX_DEPTH) return -(int)MG_ERR_LIMIT;
    int self = i == L->root;
    for (int q = 0; q < L->n_sib; q++) self |= i == L->sib[q];
    if (L->mat[i] && !self) r = emit_iter(L, i, s);
    else if (n->op == IR_OP_CONST) r = ir_add_const(L->b, L->ctx, n->lit, 0, 0);
    else if (n->op == IR_OP_MATMUL)
        r = L->f == F_ATTN ? emit_scores(L, i, s, depth) : emit_matmul(L, i, s, depth);
    else if (n->op == IR_OP_SUM || n->op == IR_OP_MAX)
        r = L->f == F_ATTN || L->f == F_MMROW ? emit_local(L, i, s, depth) : emit_reduce(L, i, s, depth);
    else if (is_ew(n->op)) {
        ir_node p = proto(n->op, 0, 0);
        for (int k = 0; k < n->n_in; k++)
            if ((p.in[k] = emit(L, n->in[k], s, depth + 1)) < 0) return p.in[k];
        r = ir_add_node(L->b, L->ctx, &p);
    } else r = -(int)MG_ERR_SHAPE;
    if (r >= 0) *m = r;
    return r;
}

/* ---- forms: the group of a root, its tiles, and its block graph ---- */

typedef struct group {
    int n_mm, n_red, n_max, other;
    int64_t k;
    int rdim_end;
    ir_shape ref; /* the broadcast of every shape in the group */
} group;

/* What the kernel of root computes: walks its operands through non-materialised nodes
 * (under: below a matmul, whose operands' shapes are not the output's family). */
static void scan(lw *L, int i, group *G, int depth, int under) {
    if (L->seen[i] == L->stamp) return;
    L->seen[i] = L->stamp;
    const ir_node *n = &L->g->nodes[i];
    if (n->op == IR_OP_CONST) return;
    if (!under && ir_broadcast(&G->ref, &n->shape, &G->ref)) G->other++;
    if (L->mat[i] && i != L->root) return;
    if (depth > MAX_DEPTH) {
        G->other++;
        return;
    }
    if (n->op == IR_OP_MATMUL) {
        int64_t k = L->g->nodes[n->in[0]].shape.d[L->g->nodes[n->in[0]].shape.ndim - 1];
        if (G->n_mm++ && k != G->k) G->other++;
        G->k = k;
    } else if (n->op == IR_OP_SUM || n->op == IR_OP_MAX) {
        int e = n->shape.ndim - 1 - n->dim;
        if (G->n_red++ && e != G->rdim_end) G->other++;
        G->rdim_end = e, G->n_max += n->op == IR_OP_MAX;
    } else if (!is_ew(n->op)) G->other++;
    for (int k = 0; k < n->n_in; k++) scan(L, n->in[k], G, depth + 1, under || n->op == IR_OP_MATMUL);
}

/* Is a product of output shape o big: LW_BIG x LW_BIG tiles, LW_BIG_WAVES waves of them on the GPU? */
static int big_product(const lw *L, const ir_shape *o) {
    const int64_t big = LW_BIG > 0 ? LW_BIG : 1;
    int r = o->ndim;
    int64_t m = o->d[r - 2], n = o->d[r - 1], tiles = m / big * (n / big);
    for (int d = 0; d < r - 2; d++) tiles *= o->d[d];
    return LW_BIG > 0 && !L->cpu && m % big == 0 && n % big == 0 && tiles >= (int64_t)LW_BIG_WAVES * L->dev->n_sm;
}

/* Tiles and schedule of form MM for output shape o, try t (0: the first choice; each
 * further try halves the depth tile): 64 x 64 output tiles, 64 deep; on the GPU 128 x 128
 * for big products (big_product), and for mid-size ones whose rows divide by 128, 128 x 128
 * when a long loop (LW_MID_LONG) has a wave of them, else 128 x 64 while those fill
 * LW_MID_FILL % of the SMs (short loops then pair two blocks an SM, opt/tma.c); not for a depth
 * under 256 (2 steps: bmm_scale_add 6.72 -> 6.79 us at 128 rows). With fewer blocks than
 * the GPU has SMs, the depth splits over up to 32 blocks (split-K) while each keeps 4
 * iterations and the partial products (f32, written and read back) move at most half the
 * operands' bytes (A counted as f32: often a stored intermediate): decode shapes and
 * attention's P V split, prefill ones seldom; a
 * grid without a free dim for the split takes narrower columns instead. *forloop is the
 * adding kernel's (the split) or the only one's. 0 or -1 when no tiling fits. */
static int mm_tiles(lw *L, const ir_shape *o, const group *G, int t, int *forloop) {
    /* for C, as if one SM: no split and no narrowing (2 cores, bench/suite_cpu.py: residual_mlp
     * 3.74 -> 2.19 ms, mlp_relu 8.94 -> 7.83; docs/notes/2026-11-27-cpu.md) */
    int r = o->ndim, sms = L->cpu ? 1 : L->dev->n_sm;
    int64_t k = G->k, n = o->d[r - 1], m = o->d[r - 2];
    /* siblings keep 64 columns whatever the tiling asks (at 128, three 128 x 128 mma.sync
     * accumulators were 192 floats a thread: `mugen space` found it, constraint regs) */
    int64_t bn = div_at_most(n, L->n_sib ? 64 : L->tl.bn), bm = div_at_most(m, 64), lead = 1;
    int64_t bk = div_at_most(k, 64 >> t), f = k / bk;
    if (t > 2 || (t > 0 && bk == div_at_most(k, 64 >> (t - 1))) || f > IR_MAX_DIM) return -1;
    for (int d = 0; d < r - 2; d++) lead *= o->d[d];
    /* siblings (find_siblings) keep 64 columns: their three accumulators within a thread's 128;
     * mid-size products: 128-row tiles read each B tile for twice the rows */
    int mid = !L->cpu && m % 128 == 0 && k >= 256;
    if (!L->n_sib && big_product(L, o)) /* big tiles for big products */
        bm = bn = LW_BIG;
    else if (mid && !L->n_sib && n % 128 == 0 && k / 64 > LW_MID_LONG && lead * (m / 128) * (n / 128) >= sms)
        bm = bn = 128;
    else if (mid && 100 * lead * (m / 128) * (n / bn) >= (int64_t)sms * LW_MID_FILL)
        bm = 128;
    int64_t blocks = lead * (m / bm) * (n / bn);
    for (int d = 0; d < r - 2; d++) L->tile[d] = 1;
    L->tile[r - 2] = bm, L->tile[r - 1] = bn;
    L->k = k, L->bk = bk, L->split = 1;
    if (assign_grid(o, L->tile, L->sp[0].gdim, L->grid)) return -1;
    L->gk = free_grid_dim(L->grid); /* the split takes the first grid dim left free */
    /* the partials' split: a new leading dim (sdim 1), or folded into a dim of a 4-dim
     * output (sdim 0): its leading dim of 1, or its rows when one tile holds them all (split
     * s's rows at s * m: P V of a decode step at b = 8, [8, 8, 4, 64]) */
    L->sdim = r <= 3 || o->d[0] == 1 || L->tile[r - 2] == m ? r <= 3 : -1;
    L->fdim = r <= 3 || o->d[0] == 1 ? 0 : r - 2;
    while (L->gk >= 0 && L->sdim >= 0 && 100 * blocks * L->split < (int64_t)sms * L->tl.split_fill) {
        int64_t rest = f / L->split, p = smallest_factor(rest); /* the smallest factor left */
        if (L->split * p > LW_SPLIT_MAX || rest / p < 4 || 32 * L->split * m * n > 4 * m * k + 2 * k * n) break;
        L->split *= (int)p;
    }
    /* a 64-row tile with 8 or more iterations a block takes twice the depth an iteration:
     * half the barriers (128 x 1024 x 4096: 13.1 -> 10.1 us on H100, SwiGLU at 128 tokens
     * 45.0 -> 39.5); thinner tiles keep theirs (16-row decode MLPs 0.5-5% slower), and so do
     * blocks of fewer iterations (a split's fewer blocks or a shallower pipeline cost more) */
    if (bm == 64 && f / L->split >= 8 && (f / L->split) % 2 == 0) L->bk = bk *= 2, f /= 2;
    if (L->split == 1)
        while (blocks < sms / 3 && bn >= 64 && n % (bn / 2) == 0) bn /= 2, blocks *= 2;
    L->tile[r - 1] = bn;
    if (assign_grid(o, L->tile, L->sp[0].gdim, L->grid)) return -1;
    *forloop = L->split == 1 ? (int)f : L->sdim ? 1 : L->split;
    return 0;
}

/* Tiles of form MMROW for output shape o (one try): 64 rows a block, the whole row (at most
 * LW_ROW_N columns, a multiple of 64), 64 deep, on the GPU while the blocks fill LW_ROW_FILL %
 * of the SMs: the product's f32 result then never leaves the block, and the row reductions
 * after it (a LayerNorm's) need no kernel of their own. */
static int mmrow_tiles(lw *L, const ir_shape *o, const group *G, int t, int *forloop) {
    int r = o->ndim;
    int64_t k = G->k, n = o->d[r - 1], m = o->d[r - 2], blocks = m / 64;
    for (int d = 0; d < r - 2; d++) blocks *= o->d[d];
    if (t > 0 || L->cpu || !L->tl.row || r < 2 || n % 64 || n > LW_ROW_N || m % 64 || k % 64 || k / 64 > LW_ROW_ITERS ||
        100 * blocks < (int64_t)L->dev->n_sm * LW_ROW_FILL)
        return -1;
    for (int d = 0; d < r - 2; d++) L->tile[d] = 1;
    L->tile[r - 2] = 64, L->tile[r - 1] = n;
    L->k = k, L->bk = 64, L->split = 1;
    if (assign_grid(o, L->tile, L->sp[0].gdim, L->grid)) return -1;
    *forloop = (int)(k / 64);
    return 0;
}

/* The kernel of partial products of a split MM: for each matmul the adding kernel read
 * (mm_node[]), accum(matmul(A', B')) over its share of the depth, saved with the split as a
 * new leading dim. Built into L->bp (kin_p); L->b, its kin and grid are kept. */
static mg_status build_partial(lw *L) {
    ir_graph *b = L->b;
    int kin[IR_MAX_IN], n_kin = L->n_kin, grid[3], v = 0;
    memcpy(kin, L->kin, sizeof kin), memcpy(grid, L->grid, sizeof grid);
    L->grid[L->gk] = L->split;
    L->bp = L->b = ir_block_new(L->grid, THREADS, L->k / L->bk / L->split);
    if (!L->b) v = -(int)ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    memset(L->memo, -1, (size_t)L->n * N_SP * sizeof *L->memo);
    L->n_kin = 0;
    for (int j = 0; j < L->n_mm && v >= 0; j++) {
        const ir_node *n = &L->g->nodes[L->mm_node[j]];
        mm_spaces(L, n, j);
        int a = emit(L, n->in[0], 1 + 2 * j, 1);
        int c = a < 0 ? a : emit(L, n->in[1], 2 + 2 * j, 1);
        ir_node p = proto(IR_OP_MATMUL, a, c);
        v = c < 0 ? c : ir_add_node(L->b, L->ctx, &p);
        p = proto(IR_OP_ACCUM, v, 0);
        if (v >= 0) v = ir_add_node(L->b, L->ctx, &p);
        if (v >= 0 && L->sdim) { /* a leading dim of 1 for the splits (sdim: the output has at most 3) */
            p = proto(IR_OP_RESHAPE, v, 0);
            p.n_ints = n->shape.ndim + 1, p.ints[0] = 1;
            for (int d = 0; d < n->shape.ndim; d++) p.ints[d + 1] = L->b->nodes[v].shape.d[d];
            v = ir_add_node(L->b, L->ctx, &p);
        }
        p = proto(IR_OP_SAVE, v, 0);
        p.index = L->b->n_outputs;
        for (int g = 0; g < 3; g++)
            p.map[g] = g == L->gk ? L->fdim : grid[g] > 1 ? L->sp[0].gdim[g] + L->sdim : -1;
        if (v >= 0) v = ir_add_node(L->b, L->ctx, &p);
        if (v >= 0) v = ir_add_output(L->b, L->ctx, v);
    }
    memcpy(L->kin_p, L->kin, sizeof kin), L->n_kin_p = L->n_kin;
    memcpy(L->kin, kin, sizeof kin), L->n_kin = n_kin, memcpy(L->grid, grid, sizeof grid);
    L->b = b;
    return v < 0 ? (mg_status)-v : L->bp ? ir_block_check(L->bp, L->ctx, L->dev) : MG_ERR_NOMEM;
}

/* Tiles of form ROW (reduced dim rd of ref) or EW (rd = -1), try t: ROW tries the loop over
 * the reduced dim first (sums only), then whole rows. */
static int row_tiles(lw *L, const group *G, int rd, int t, int *forloop) {
    const ir_shape *s = &G->ref;
    int64_t numel = ir_numel(s), per_sm = numel / L->dev->n_sm;
    int64_t budget = per_sm < 256 ? 256 : per_sm > 4096 ? 4096 : per_sm;
    *forloop = 1;
    if (rd < 0) {
        if (t > 0) return -1;
        tile_dims(s, -1, 0, budget, L->tile);
    } else {
        int can_loop = G->n_max == 0 && s->d[rd] > 1024, loop = can_loop && t == 0;
        if (t > can_loop) return -1;
        int64_t keep = loop ? div_at_most(s->d[rd], 1024) : s->d[rd];
        if (loop) *forloop = (int)(s->d[rd] / keep);
        tile_dims(s, rd, keep, budget > keep ? budget : keep, L->tile);
        L->tile[rd] = s->d[rd]; /* the grid never splits the reduced dim */
    }
    int rc = assign_grid(s, L->tile, L->sp[0].gdim, L->grid);
    if (rd >= 0) L->tile[rd] = s->d[rd] / *forloop;
    return rc;
}

/* Frees the bodies being built. */
static void drop(lw *L) {
    ir_graph_free(L->b), ir_graph_free(L->bp);
    L->b = L->bp = NULL;
}

/* Builds root's kernel body for form f, try t, into L->b: MG_OK, or a status when this
 * try does not hold it (L->b then NULL). */
static mg_status build_try(lw *L, const group *G, form f, int t) {
    const ir_node *root = &L->g->nodes[L->root];
    int forloop = 1, rd = f == F_ROW ? G->ref.ndim - 1 - G->rdim_end : -1;
    memset(L->sp, 0, sizeof L->sp);
    L->sp[0].ref = f == F_MM || f == F_MMROW ? root->shape : G->ref, L->sp[0].set = 1, L->sp[0].fdim = -1;
    L->split = 1, L->bp = NULL;
    int rc = f == F_MM ? mm_tiles(L, &root->shape, G, t, &forloop)
             : f == F_MMROW ? mmrow_tiles(L, &root->shape, G, t, &forloop)
                            : row_tiles(L, G, rd, t, &forloop);
    if (rc || (L->n_sib && (f != F_MM || L->split > 1))) return MG_ERR_SHAPE;
    if (f == F_ROW && forloop > 1) L->sp[0].fdim = rd;
    /* a split's adding kernel takes columns 16 at a time: 4 times the blocks of its 64-wide
     * partial products, each with a quarter of the reading (16 x 4096 x 1024: 16 blocks of 16
     * partial tiles each took 12.7 us alone, 64 blocks 10.7; the SiLU MLP 20.9 -> 17.9 us) */
    int r = root->shape.ndim;
    int64_t wide = L->tile[r - 1], tall = r > 1 ? L->tile[r - 2] : 1;
    if (f == F_MM && L->split > 1 && wide > 16 && wide % 16 == 0) L->tile[r - 1] = 16;
    /* reading every split at once (emit_partial), a block holds at most 32 KB of partials */
    if (f == F_MM && L->split > 1 && L->sdim)
        while (L->tile[r - 2] % 2 == 0 && G->n_mm * L->split * L->tile[r - 2] * L->tile[r - 1] * 4 > 32768)
            L->tile[r - 2] /= 2;
    if (f == F_MM && L->split > 1 && assign_grid(&root->shape, L->tile, L->sp[0].gdim, L->grid)) return MG_ERR_SHAPE;
    L->b = ir_block_new(L->grid, THREADS, forloop);
    if (!L->b) return ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    memset(L->memo, -1, (size_t)L->n * N_SP * sizeof *L->memo);
    L->f = f, L->n_kin = 0, L->n_mm = 0, L->accum = f == F_MM || f == F_MMROW;
    L->rdim_end = G->rdim_end;
    int v = emit(L, L->root, 0, 0);
    if (v >= 0 && !L->accum) {
        ir_node p = proto(IR_OP_ACCUM, v, 0);
        v = ir_add_node(L->b, L->ctx, &p);
    }
    for (int q = -1; v >= 0 && q < L->n_sib; q++) { /* the root's save, then each sibling's */
        if (q >= 0 && (v = emit(L, L->sib[q], 0, 0)) < 0) break;
        ir_node p = proto(IR_OP_SAVE, v, 0);
        p.index = L->b->n_outputs;
        for (int g = 0; g < 3; g++)
            p.map[g] = L->grid[g] > 1 ? leaf_dim(&L->sp[0].ref, &root->shape, L->sp[0].gdim[g]) : -1;
        v = ir_add_node(L->b, L->ctx, &p);
        if (v >= 0) v = ir_add_output(L->b, L->ctx, v);
    }
    mg_status st = v < 0 ? (mg_status)-v : ir_block_check(L->b, L->ctx, L->dev);
    for (int q = 0; !st && q <= L->n_sib; q++)
        if (L->b->nodes[L->b->outputs[q]].dtype != L->g->nodes[q ? L->sib[q - 1] : L->root].dtype) st = MG_ERR_SHAPE;
    if (!st && L->split > 1) { /* the partial products at the wide tile */
        L->tile[r - 1] = wide, L->tile[r - 2] = tall;
        if (assign_grid(&root->shape, L->tile, L->sp[0].gdim, L->grid)) st = MG_ERR_SHAPE;
        else st = build_partial(L);
    }
    if (st) drop(L);
    return st == MG_ERR_NOMEM ? st : st ? MG_ERR_SHAPE : MG_OK;
}

static mg_status build(lw *L, int root);
static int sole_root(lw *L, int i, int *stack);

/* ---- form ATTN: O = matmul(E / sum(E, last dim), V), E elementwise over S = matmul(A, B) ---- */

/* The parts of attention root o: x = E / s, e (E), s = sum(E). */
static void attn_parts(const lw *L, int o, int *x, int *e, int *s) {
    *x = L->g->nodes[o].in[0];
    *e = L->g->nodes[*x].in[0], *s = L->g->nodes[*x].in[1];
}

/* Adds a reshape of v to the given dims, or -rc. */
static int reshape_to(lw *L, int v, const int64_t *dims, int nd) {
    if (v < 0) return v;
    ir_node p = proto(IR_OP_RESHAPE, v, 0);
    p.n_ints = nd;
    for (int d = 0; d < nd; d++) p.ints[d] = dims[d];
    return ir_add_node(L->b, L->ctx, &p);
}

/* Saves value v (a tile of the output space SP_O) of the kernel being built through the
 * grid dims that split the output; with `partial`, as a split's partial: the output's
 * leading dims of size 1 dropped (L->sdim of them) and the split a new last dim, taken by
 * grid dim gk. Index of the output, or -rc. */
static int attn_save(lw *L, int v, int partial) {
    if (v < 0) return v;
    if (partial) {
        const ir_shape *vs = &L->b->nodes[v].shape;
        int64_t dims[IR_MAX_DIMS];
        int nd = 0;
        for (int d = L->sdim; d < vs->ndim; d++) dims[nd++] = vs->d[d];
        dims[nd++] = 1;
        v = reshape_to(L, v, dims, nd);
        if (v < 0) return v;
    }
    ir_node p = proto(IR_OP_SAVE, v, 0);
    p.index = L->b->n_outputs;
    for (int g = 0; g < 3; g++) {
        int d = L->sp[SP_O].gdim[g];
        p.map[g] = partial && g == L->gk ? L->b->nodes[v].shape.ndim - 1
                   : L->grid[g] > 1 && d >= 0 ? d - (partial ? L->sdim : 0) : -1;
    }
    v = ir_add_node(L->b, L->ctx, &p);
    return v < 0 ? v : ir_add_output(L->b, L->ctx, v);
}

/* The combining kernel's tile of partial j (value shape vs, type t): every split at once,
 * the split the last dim, L->sdim leading dims of 1 dropped. */
static int attn_split_in(lw *L, int j, const ir_shape *vs, mg_dtype t, const char *nm) {
    if (L->n_kin == IR_MAX_IN) return -(int)ctx_err(L->ctx, MG_ERR_LIMIT, "kernel inputs");
    ir_shape ps = {.ndim = 0};
    for (int d = L->sdim; d < vs->ndim; d++) ps.d[ps.ndim++] = vs->d[d];
    ps.d[ps.ndim++] = L->split;
    int r = ir_block_add_kin(L->b, L->ctx, nm, t, &ps);
    if (r < 0) return r;
    L->kin[L->n_kin++] = -(j + 1);
    ir_node p = proto(IR_OP_ITER, 0, 0);
    p.index = r;
    for (int g = 0; g < 3; g++) {
        int d = L->sp[SP_O].gdim[g];
        p.map[g] = L->grid[g] > 1 && d >= 0 && vs->d[d] > 1 ? d - L->sdim : -1;
    }
    int v = ir_add_node(L->b, L->ctx, &p);
    p = proto(IR_OP_ACCUM, v, 0);
    return v < 0 ? v : ir_add_node(L->b, L->ctx, &p);
}

/* The combining kernel's value of partial j: its splits (attn_split_in), each times its
 * weight w (a block node, or -1 for none), summed, reshaped to vs's rank. */
static int attn_combine_in(lw *L, int j, const ir_shape *vs, mg_dtype t, const char *nm, int w) {
    int v = attn_split_in(L, j, vs, t, nm);
    ir_node p = proto(IR_OP_MUL, v, w);
    if (v >= 0 && w >= 0) v = ir_add_node(L->b, L->ctx, &p);
    if (v < 0) return v;
    p = proto(IR_OP_SUM, v, 0);
    p.dim = L->b->nodes[v].shape.ndim - 1, p.group = L->split;
    if ((v = ir_add_node(L->b, L->ctx, &p)) < 0) return v;
    int64_t dims[IR_MAX_DIMS];
    for (int d = 0; d < vs->ndim; d++) dims[d] = d < L->sdim ? 1 : L->b->nodes[v].shape.d[d - L->sdim];
    return reshape_to(L, v, dims, vs->ndim);
}

/* The combining kernel's weights of the splits of an attention with a max (attn_max): each
 * split's numerator and denominator were taken with its own keys' max m_j, so split j weighs
 * exp(m_j - M), M the largest (exp(A - M) = exp(A - m_j) exp(m_j - M)): every exponent at
 * most 0, as the program's. Partial 2 holds the m_j (value shape vs, type t). */
static int attn_weights(lw *L, const ir_shape *vs, mg_dtype t, const char *nm) {
    int v = attn_split_in(L, 2, vs, t, nm);
    if (v < 0) return v;
    ir_node p = proto(IR_OP_MAX, v, 0);
    p.dim = L->b->nodes[v].shape.ndim - 1, p.group = L->split;
    int m = ir_add_node(L->b, L->ctx, &p);
    p = proto(IR_OP_SUB, v, m);
    int d = m < 0 ? m : ir_add_node(L->b, L->ctx, &p);
    p = proto(IR_OP_EXP, d, 0);
    return d < 0 ? d : ir_add_node(L->b, L->ctx, &p);
}

/* Form ATTN's spaces for grid dims gdim of the output (rows r - 2, batch dims before) and
 * the split of the keys on grid dim gk: A moves with the rows, B and V with the keys, E
 * with both; the loop walks the keys. */
static void attn_spaces(lw *L, int o, int S) {
    const ir_graph *g = L->g;
    const ir_shape *os = &g->nodes[o].shape;
    int r = os->ndim, x, e, s;
    attn_parts(L, o, &x, &e, &s);
    space *P = L->sp;
    P[SP_A].ref = g->nodes[g->nodes[S].in[0]].shape, P[SP_B].ref = g->nodes[g->nodes[S].in[1]].shape;
    P[SP_E].ref = g->nodes[e].shape, P[SP_V].ref = g->nodes[g->nodes[o].in[1]].shape;
    int nb = P[SP_B].ref.ndim, nv = P[SP_V].ref.ndim;
    for (int k = SP_A; k <= SP_V; k++) P[k].set = 1;
    P[SP_A].fdim = -1, P[SP_B].fdim = nb - 1, P[SP_E].fdim = r - 1, P[SP_V].fdim = nv - 2;
    for (int k = 0; k < 3; k++) {
        int d = P[SP_O].gdim[k];
        if (L->split > 1 && k == L->gk) {
            P[SP_A].gdim[k] = -1, P[SP_B].gdim[k] = nb - 1, P[SP_E].gdim[k] = r - 1, P[SP_V].gdim[k] = nv - 2;
            continue;
        }
        P[SP_E].gdim[k] = d;
        P[SP_A].gdim[k] = leaf_dim(os, &P[SP_A].ref, d);
        P[SP_B].gdim[k] = d == r - 2 ? -1 : leaf_dim(os, &P[SP_B].ref, d);
        P[SP_V].gdim[k] = d == r - 2 ? -1 : leaf_dim(os, &P[SP_V].ref, d);
    }
}

/* Builds attention root L->root, try t (rows and keys a block takes: try_rows, try_keys):
 * one kernel when its blocks fill the GPU, else the keys split over grid dim gk
 * (FlashDecoding) with partial numerators E V and denominators sum(E) saved, and a second
 * kernel adding them one split an iteration and dividing. Every block: S = A B over the
 * whole depth, E = f(S, ...), its row sum and E V accumulated over its keys, and (no split)
 * (E V) / sum(E), which is (E / sum(E)) V. */
static mg_status attn_try(lw *L, int t) {
    const ir_graph *g = L->g;
    int o = L->root, S = L->att[o] - 1, m = L->att_max[o] - 1, x, e, s;
    attn_parts(L, o, &x, &e, &s);
    const ir_node *O = &g->nodes[o];
    const ir_shape *os = &O->shape, *ss = &g->nodes[s].shape;
    int r = os->ndim, sms = L->cpu ? 1 : L->dev->n_sm, v = 0;
    int64_t M = os->d[r - 2], D = os->d[r - 1], N = g->nodes[e].shape.d[r - 1];
    /* rows and keys a block takes, try by try: 256 rows read each K and V tile for twice the
     * rows of 128 (as the guided searches' μGraphs at 8 tokens) */
    static const int64_t try_rows[] = {256, 128, 128, 32}, try_keys[] = {128, 128, 64, 32};
    if (t >= (int)(sizeof try_rows / sizeof *try_rows)) return MG_ERR_SHAPE;
    int64_t bm = div_at_most(M, try_rows[t]), blocks = ir_numel(os) / (bm * D);
    memset(L->sp, 0, sizeof L->sp);
    L->sp[SP_O].ref = *os, L->sp[SP_O].set = 1, L->sp[SP_O].fdim = -1;
    for (int d = 0; d < r - 2; d++) L->tile[d] = 1;
    L->tile[r - 2] = bm, L->tile[r - 1] = D;
    if (assign_grid(os, L->tile, L->sp[SP_O].gdim, L->grid)) return MG_ERR_SHAPE;
    /* the split: the first grid dim left free; the partials drop the output's leading dims
     * (all of size 1) down to three and take the split as a last dim */
    L->gk = free_grid_dim(L->grid);
    L->sdim = r > 3 ? r - 3 : 0;
    for (int d = 0; d < L->sdim; d++)
        if (os->d[d] > 1) L->gk = -1;
    L->split = 1;
    /* split the keys while the blocks stay within one wave on the SMs, each keeping 64 keys
     * or more (H100, bench/results/h100-2026-11-27-s19-attn/: capping the split at 4, 8, 16,
     * 32 and 64 on nine attention shapes, this rule picks the fastest or within 10% of it) */
    while (L->gk >= 0) {
        int64_t rest = N / L->split, p = smallest_factor(rest);
        if (blocks * L->split * p > sms || L->split * p > 64 || rest / p < 64) break;
        L->split *= (int)p;
    }
    /* with a max over the keys (attn_max) each block takes its keys in one iteration, its
     * own max over them: the keys split further until a block holds at most 128 */
    while (m >= 0 && L->gk >= 0 && N / L->split > 128) {
        int64_t p = smallest_factor(N / L->split);
        if (L->split * p > 64) break;
        L->split *= (int)p;
    }
    int64_t chunk = N / L->split, bn = m >= 0 ? chunk : div_at_most(chunk, try_keys[t]), f = chunk / bn;
    if (f > IR_MAX_DIM || (m >= 0 && chunk > 256)) return MG_ERR_SHAPE;
    /* 256 rows only for blocks that loop over their keys (2 or more tiles, each read once
     * for the 256): with one tile a block, 128 rows in twice the blocks were faster (GQA at
     * 1 token, 2 heads: 8.5 against 11.0 us; at 8 tokens, 16 heads 25.1 against 23.7 with
     * 256; bench/results/h100-2026-11-27-s20/attn-rows.txt) */
    if (bm > 128 && f < 2) return MG_ERR_SHAPE;
    int grid1[3];
    memcpy(grid1, L->grid, sizeof grid1);
    if (L->split > 1) grid1[L->gk] = L->split;
    attn_spaces(L, o, S);
    int grid0[3];
    memcpy(grid0, L->grid, sizeof grid0);
    memcpy(L->grid, grid1, sizeof grid1); /* emit_iter maps the grid dims that split */
    L->b = ir_block_new(grid1, THREADS, f);
    if (!L->b) return ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    memset(L->memo, -1, (size_t)L->n * N_SP * sizeof *L->memo);
    L->f = F_ATTN, L->n_kin = 0, L->n_mm = 0, L->bp = NULL;
    int ev = emit(L, e, SP_E, 1), vv = ev < 0 ? ev : emit(L, O->in[1], SP_V, 1), sa = -1, na = -1;
    ir_node p;
    if (vv >= 0) {
        p = proto(IR_OP_SUM, ev, 0);
        p.dim = L->b->nodes[ev].shape.ndim - 1, p.group = L->b->nodes[ev].shape.d[p.dim];
        sa = ir_add_node(L->b, L->ctx, &p);
        p = proto(IR_OP_ACCUM, sa, 0);
        if (sa >= 0) sa = ir_add_node(L->b, L->ctx, &p);
        p = proto(IR_OP_MATMUL, ev, vv);
        na = sa < 0 ? sa : ir_add_node(L->b, L->ctx, &p);
        p = proto(IR_OP_ACCUM, na, 0);
        if (na >= 0) na = ir_add_node(L->b, L->ctx, &p);
    } else na = vv;
    if (na >= 0 && L->split == 1) {
        p = proto(IR_OP_DIV, na, sa);
        v = attn_save(L, ir_add_node(L->b, L->ctx, &p), 0);
    } else if (na >= 0) {
        v = attn_save(L, na, 1);
        if (v >= 0) v = attn_save(L, sa, 1);
        if (v >= 0 && m >= 0) { /* the block's max, for the combining kernel's weights */
            p = proto(IR_OP_ACCUM, L->memo[(size_t)m * N_SP + SP_E], 0);
            v = attn_save(L, p.in[0] < 0 ? -(int)MG_ERR_SHAPE : ir_add_node(L->b, L->ctx, &p), 1);
        }
    } else v = na;
    mg_status st = v < 0 ? (mg_status)-v : ir_block_check(L->b, L->ctx, L->dev);
    memcpy(L->grid, grid0, sizeof grid0);
    if (st || L->split == 1) goto out;
    /* the combining kernel: every split of its tile at once (forloop 1), summed; columns 16
     * at a time and rows few enough for two blocks an SM (looping over the splits one an
     * iteration, 16 blocks of 64 splits took 19 us on gqa_b1, the whole attention 10) */
    mg_dtype tn = L->b->nodes[L->b->outputs[0]].dtype, td = L->b->nodes[L->b->outputs[1]].dtype;
    mg_dtype tm = m >= 0 ? L->b->nodes[L->b->outputs[2]].dtype : td;
    L->bp = L->b, L->b = NULL;
    memcpy(L->kin_p, L->kin, sizeof L->kin), L->n_kin_p = L->n_kin;
    if (D > 16 && D % 16 == 0) L->tile[r - 1] = 16;
    int64_t want = ir_numel(os) / (L->tile[r - 1] * 2 * sms), cap = 8192 / (L->tile[r - 1] * L->split);
    if (want > cap) want = cap;
    L->tile[r - 2] = div_at_most(M, want > 1 ? want : 1);
    if (assign_grid(os, L->tile, L->sp[SP_O].gdim, L->grid)) {
        st = MG_ERR_SHAPE;
        goto out;
    }
    L->b = ir_block_new(L->grid, THREADS, 1);
    if (!L->b) {
        st = ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
        goto out;
    }
    L->n_kin = 0;
    char nm[3][32];
    snprintf(nm[0], sizeof nm[0], "n%d", o), snprintf(nm[1], sizeof nm[1], "d%d", o);
    snprintf(nm[2], sizeof nm[2], "m%d", o);
    int w = m >= 0 ? attn_weights(L, ss, tm, nm[2]) : -1;
    int pn = m >= 0 && w < 0 ? w : attn_combine_in(L, 0, os, tn, nm[0], w);
    int pd = pn < 0 ? pn : attn_combine_in(L, 1, ss, td, nm[1], w);
    p = proto(IR_OP_DIV, pn, pd);
    v = pd < 0 ? pd : attn_save(L, ir_add_node(L->b, L->ctx, &p), 0);
    st = v < 0 ? (mg_status)-v : ir_block_check(L->b, L->ctx, L->dev);
out:
    if (!st && L->b->nodes[L->b->outputs[0]].dtype != O->dtype) st = MG_ERR_SHAPE;
    if (st) drop(L);
    return st == MG_ERR_NOMEM ? st : st ? MG_ERR_SHAPE : MG_OK;
}

/* Whether matmul o is attention, O = matmul(E / sum(E, last dim), V) with E an elementwise
 * value (none of the three stored, read by nothing else) over exactly one matmul S of E's
 * shape and other stored tensors or constants, of one batch with O; *S then. */
static int attn_match(lw *L, int o, int *S, int *stack) {
    const ir_graph *g = L->g;
    const ir_node *O = &g->nodes[o];
    if (O->op != IR_OP_MATMUL || L->to_f32[o] || O->shape.ndim < 2) return 0;
    int x, e, s, r = O->shape.ndim;
    attn_parts(L, o, &x, &e, &s);
    const ir_node *X = &g->nodes[x], *E = &g->nodes[e], *Sm = &g->nodes[s];
    if (X->op != IR_OP_DIV || L->mat[x] || Sm->op != IR_OP_SUM || Sm->in[0] != e || !is_ew(E->op) ||
        L->mat[e] || L->is_out[s] || E->shape.ndim != r || Sm->dim != r - 1 ||
        Sm->group != E->shape.d[r - 1] || Sm->shape.ndim != r || !shape_eq(&X->shape, &E->shape))
        return 0;
    for (int d = 0; d < r - 1; d++)
        if (E->shape.d[d] != O->shape.d[d]) return 0;
    /* the one matmul E's elementwise tree reads */
    int top = 0, found = -1;
    L->seen[e] = ++L->stamp, stack[top++] = e;
    while (top) {
        const ir_node *n = &g->nodes[stack[--top]];
        for (int k = 0; k < n->n_in; k++) {
            int a = n->in[k];
            if (L->seen[a] == L->stamp) continue;
            L->seen[a] = L->stamp;
            if (g->nodes[a].op == IR_OP_MATMUL && !L->is_out[a] && shape_eq(&g->nodes[a].shape, &E->shape)) {
                if (found >= 0) return 0;
                found = a;
            } else if (!L->mat[a] && is_ew(g->nodes[a].op)) stack[top++] = a;
        }
    }
    if (found < 0) return 0;
    *S = found;
    return 1;
}

/* The max of a stable softmax's E = exp(A - m), m = max(B, last dim) read by nothing else
 * (A and B elementwise over the scores and stored tensors), or -1. */
static int attn_max(const lw *L, int e) {
    const ir_graph *g = L->g;
    const ir_node *E = &g->nodes[e], *d = &g->nodes[E->in[0]];
    if (E->op != IR_OP_EXP || L->mat[E->in[0]] || d->op != IR_OP_SUB) return -1;
    int m = d->in[1];
    const ir_node *M = &g->nodes[m];
    if (M->op != IR_OP_MAX || L->is_out[m] || d->in[0] == m || M->shape.ndim != E->shape.ndim ||
        M->dim != M->shape.ndim - 1 || L->cstart[m + 1] - L->cstart[m] != 1)
        return -1;
    return m;
}

/* Attention roots (attn_match) whose form ATTN builds: their scores and row sums are then
 * computed inside them (mat 0), last first. */
static mg_status attend(lw *L, int *fused) {
    int *stack = base_alloc(((size_t)L->n + 1) * sizeof *stack);
    if (!stack) return ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = MG_OK;
    for (int o = L->n - 1; o >= 0 && !rc; o--) {
        int S, x, e, s, m;
        if (!attn_match(L, o, &S, stack)) continue;
        attn_parts(L, o, &x, &e, &s);
        m = attn_max(L, e);
        L->mat[S] = L->mat[s] = 0;
        if (m >= 0) L->mat[m] = 0;
        if (sole_root(L, S, stack) == o && sole_root(L, s, stack) == o && (m < 0 || sole_root(L, m, stack) == o)) {
            L->att[o] = S + 1, L->att_max[o] = m + 1;
            rc = build(L, o);
            if (L->b) {
                drop(L), *fused += 2 + (m >= 0);
                continue;
            }
            L->att[o] = L->att_max[o] = 0;
        }
        L->mat[S] = L->mat[s] = 1; /* not this form: they stay stored */
        if (m >= 0) L->mat[m] = 1;
    }
    base_free(stack);
    return rc;
}

/* Builds the kernel body of materialised node root into L->b (NULL when no form holds it).
 * MG_OK either way; MG_ERR_NOMEM. */
static mg_status build(lw *L, int root) {
    group G = {0};
    L->root = root, L->b = NULL, L->stamp++;
    const ir_node *r = &L->g->nodes[root];
    if ((!is_ew(r->op) && !is_anchor(r->op)) || L->no_kernels) return MG_OK;
    for (int t = 0; L->att[root] && t < 4; t++) {
        mg_status st = attn_try(L, t);
        if (st != MG_ERR_SHAPE) return st;
    }
    if (L->att[root]) return MG_OK;
    G.ref = r->shape;
    scan(L, root, &G, 0, 0);
    /* a product on the tensor cores (16-bit operands, computed ones in bf16: docs/lower.md)
     * is about 1e-3 off, within an f16 output's tolerance but not an f32 one's (1e-4): a
     * matmul that reaches an f32 output stays the per-operator f32 dot product */
    if (G.other || (G.n_mm && L->to_f32[root])) return MG_OK;
    /* products and reductions together: sums along the products' rows, whole in a tile */
    if (G.n_mm && G.n_red && (G.n_max || G.rdim_end != 0 || !shape_eq(&G.ref, &r->shape))) return MG_OK;
    form f = G.n_mm ? (G.n_red ? F_MMROW : F_MM) : G.n_red ? F_ROW : F_EW;
    for (int t = 0; t < 3; t++) {
        mg_status st = build_try(L, &G, f, t);
        if (st != MG_ERR_SHAPE) return st;
    }
    return MG_OK;
}

/* ---- which tensors reach device memory ---- */

/* Consumers, outputs, and mat[]: inputs, outputs and every operator but the elementwise ones
 * and constants; an elementwise chain deeper than MAX_DEPTH / 2, or reading more than
 * MAX_LEAVES stored tensors, is cut by storing a node; an
 * elementwise operator of a matmul's result that a matmul reads is stored (it is the
 * epilogue of an MM kernel, as silu(X W1) * (X W3) before W2, not a prologue that would need
 * a matmul inside another's operand). */
static mg_status setup(lw *L) {
    int n = L->n;
    size_t nn = (size_t)n + 2;
    L->mat = base_calloc(nn, sizeof *L->mat), L->is_out = base_calloc(nn, sizeof *L->is_out);
    L->depth = base_calloc(nn, sizeof *L->depth), L->cstart = base_calloc(nn, sizeof *L->cstart);
    L->seen = base_calloc(nn, sizeof *L->seen);
    L->to_f32 = base_calloc(nn, sizeof *L->to_f32);
    L->att = base_calloc(nn, sizeof *L->att), L->att_max = base_calloc(nn, sizeof *L->att_max);
    L->memo = base_alloc(nn * N_SP * sizeof *L->memo);
    int64_t edges = 0;
    for (int i = 0; i < n; i++) edges += L->g->nodes[i].n_in;
    L->cons = base_calloc((size_t)edges + 1, sizeof *L->cons);
    if (!L->mat || !L->is_out || !L->depth || !L->cstart || !L->seen || !L->memo || !L->cons || !L->to_f32 || !L->att || !L->att_max)
        return ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    for (int k = 0; k < L->g->n_outputs; k++) L->is_out[L->g->outputs[k]] = 1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < L->g->nodes[i].n_in; k++) L->cstart[L->g->nodes[i].in[k] + 2]++;
    for (int i = 0; i < n; i++) L->cstart[i + 2] += L->cstart[i + 1];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < L->g->nodes[i].n_in; k++) L->cons[L->cstart[L->g->nodes[i].in[k] + 1]++] = i;
    for (int i = n - 1; i >= 0; i--) {
        L->to_f32[i] = L->is_out[i] && L->g->nodes[i].dtype == MG_F32;
        for (int c = L->cstart[i]; c < L->cstart[i + 1]; c++) L->to_f32[i] |= L->to_f32[L->cons[c]];
    }
    /* leaves[i * (MAX_LEAVES + 1)]: how many distinct stored tensors node i's recomputed
     * value reads, then their nodes */
    int *leaves = base_calloc(nn * (MAX_LEAVES + 1), sizeof *leaves), *from_mm = base_calloc(nn, sizeof *from_mm);
    if (!leaves || !from_mm) return base_free(leaves), base_free(from_mm), ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        const ir_node *nd = &L->g->nodes[i];
        L->mat[i] = nd->op != IR_OP_CONST && (!is_ew(nd->op) || L->is_out[i]);
        if (L->mat[i] || nd->op == IR_OP_CONST) continue;
        for (int k = 0; k < nd->n_in; k++)
            if (!L->mat[nd->in[k]] && L->depth[nd->in[k]] + 1 > L->depth[i]) L->depth[i] = L->depth[nd->in[k]] + 1;
        if (L->depth[i] >= MAX_DEPTH / 2) L->mat[i] = 1, L->depth[i] = 0;
        /* the distinct stored tensors it reads (a residual stream x + d1 + d2 + ... would
         * otherwise reach past a kernel's inputs within a few layers) */
        int *li = &leaves[(size_t)i * (MAX_LEAVES + 1)], over = 0;
        for (int k = 0; k < nd->n_in && !over; k++) {
            int a = nd->in[k], one[2] = {1, a};
            if (L->g->nodes[a].op == IR_OP_CONST) continue;
            const int *la = L->mat[a] ? one : &leaves[(size_t)a * (MAX_LEAVES + 1)];
            for (int q = 1; q <= la[0] && !over; q++) {
                int seen = 0;
                for (int r = 1; r <= li[0]; r++) seen |= li[r] == la[q];
                if (seen) continue;
                if (li[0] == MAX_LEAVES) over = 1;
                else li[++li[0]] = la[q];
            }
        }
        if (over) L->mat[i] = 1, L->depth[i] = 0, li[0] = 0;
        /* a matmul's result, directly or through elementwise operators not stored that read
         * no reduction (relu(X W1 + b1) before W2; not a softmax, which attention forms take) */
        int mm_in = 0, chain = 0, reads_red = 0, mm_out = 0;
        for (int k = 0; k < nd->n_in; k++) {
            mm_in |= L->g->nodes[nd->in[k]].op == IR_OP_MATMUL;
            chain |= from_mm[nd->in[k]];
            reads_red |= ir_ops[L->g->nodes[nd->in[k]].op].kind == IR_KIND_REDUCE;
        }
        mm_in |= chain && !reads_red;
        for (int c = L->cstart[i]; c < L->cstart[i + 1]; c++) mm_out |= L->g->nodes[L->cons[c]].op == IR_OP_MATMUL;
        if (mm_in && mm_out) L->mat[i] = 1, L->depth[i] = 0;
        from_mm[i] = mm_in && !reads_red && !L->mat[i];
    }
    base_free(from_mm);
    for (int i = 0; i < n; i++) /* what a kernel the program has, a layout or seqattn in use reads is stored (a view of */
        if (L->g->nodes[i].op == IR_OP_KERNEL || /* it, or its epilogue) */
            ((ir_ops[L->g->nodes[i].op].kind == IR_KIND_LAYOUT || ir_ops[L->g->nodes[i].op].kind == IR_KIND_SEQ) &&
             (L->cstart[i] < L->cstart[i + 1] || L->is_out[i])))
            for (int k = 0; k < L->g->nodes[i].n_in; k++)
                L->mat[L->g->nodes[i].in[k]] |= L->g->nodes[L->g->nodes[i].in[k]].op != IR_OP_CONST;
    base_free(leaves);
    return MG_OK;
}

/* The one materialised node that node i's value reaches through non-materialised ones, or
 * -1 when it reaches none or several. stack: n ints. */
static int sole_root(lw *L, int i, int *stack) {
    int top = 0, root = -1;
    L->seen[i] = ++L->stamp, stack[top++] = i;
    while (top) {
        int x = stack[--top];
        for (int c = L->cstart[x]; c < L->cstart[x + 1]; c++) {
            int u = L->cons[c];
            if (L->seen[u] == L->stamp) continue;
            L->seen[u] = L->stamp;
            if (!L->mat[u]) stack[top++] = u;
            else if (root >= 0) return -1;
            else root = u;
        }
    }
    return root;
}

/* A matmul's left operand computed from a reduction (a norm, X / sqrt(sum(sqr(X))) * G) is
 * stored by a kernel of its own, the reduction moving into it (absorb), when it has at most a
 * quarter of the right operand's elements (decode and prefill shapes): the product then reads
 * two stored tiles, a plain product loop (TMA and wgmma where the shapes allow, opt/tma.c),
 * where it re-applied the norm to A's tile every iteration (H100: l2norm_linear_b16 8.62 ->
 * 6.90 µs, rmsnorm_eps_linear_b1 17.35 -> 16.29; docs/notes/2026-11-27-s21.md). Attention
 * keeps its operands' norms inside its tiles (attend decides first). Not for the C target,
 * whose blocks gain nothing from a plain loop. */
static mg_status store_normed(lw *L) {
    if (L->cpu) return MG_OK;
    int *stack = base_alloc(((size_t)L->n + 1) * sizeof *stack);
    if (!stack) return ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < L->n; i++) {
        const ir_node *nd = &L->g->nodes[i];
        int a = nd->in[0], found = 0, top = 0;
        if (nd->op != IR_OP_MATMUL || !L->mat[i] || L->att[i] || L->mat[a] || !is_ew(L->g->nodes[a].op) ||
            4 * ir_numel(&L->g->nodes[a].shape) > ir_numel(&L->g->nodes[nd->in[1]].shape))
            continue;
        L->seen[a] = ++L->stamp, stack[top++] = a;
        while (top && !found) { /* the stored tensors a's recomputed value reads */
            const ir_node *x = &L->g->nodes[stack[--top]];
            for (int k = 0; k < x->n_in; k++) {
                int y = x->in[k];
                if (L->seen[y] == L->stamp) continue;
                L->seen[y] = L->stamp;
                if (!L->mat[y]) stack[top++] = y;
                else found |= L->g->nodes[y].op == IR_OP_SUM || L->g->nodes[y].op == IR_OP_MAX;
            }
        }
        if (found) L->mat[a] = 1, L->depth[a] = 0;
    }
    base_free(stack);
    return MG_OK;
}

/* Matmuls and reductions that one kernel alone reads move into it when its form still
 * holds them, last first (a consumer's decision is made before its producers'). */
static mg_status absorb(lw *L, int *fused) {
    int *stack = base_alloc(((size_t)L->n + 1) * sizeof *stack);
    if (!stack) return ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = MG_OK;
    for (int i = L->n - 1; i >= 0 && !rc; i--) {
        if (!is_anchor(L->g->nodes[i].op) || L->is_out[i] || !L->mat[i]) continue;
        int root = sole_root(L, i, stack);
        if (root < 0) continue;
        L->mat[i] = 0;
        rc = build(L, root);
        if (L->b) drop(L), (*fused)++;
        else L->mat[i] = 1;
    }
    base_free(stack);
    return rc;
}

/* A big product's operands are stored, not recomputed as its prologue: its tiles then load
 * by TMA (opt/tma.c), which a computed operand cannot (the encoder's FFN after a LayerNorm over
 * 46,720 tokens: docs/notes/2026-11-28-s26.md). After attend(): an attention's two products
 * keep their form (QK-norm's norms stay inside it). */
static mg_status store_big_operands(lw *L) {
    uint8_t *att = base_calloc((size_t)L->n + 1, 1);
    if (!att) return ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    for (int o = 0; o < L->n; o++)
        if (L->att[o]) att[o] = att[L->att[o] - 1] = 1;
    for (int i = 0; i < L->n; i++)
        if (L->g->nodes[i].op == IR_OP_MATMUL && !att[i] && big_product(L, &L->g->nodes[i].shape))
            for (int k = 0; k < 2; k++) {
                int a = L->g->nodes[i].in[k];
                if (is_ew(L->g->nodes[a].op)) L->mat[a] = 1, L->depth[a] = 0;
            }
    base_free(att);
    return MG_OK;
}

/* ---- sibling products (MUGEN_FUSE_SIBLINGS): x Wq, x Wk, x Wv as one kernel ---- */

/* The one matmul root's value reaches through nodes not stored, with no reduction or other
 * anchor on the way (an MM kernel's epilogue: x W + b), or -1; also -1 when a stored tensor
 * it reads is one of avoid[0..n_avoid) or comes at or after node `before` (not yet in the
 * lowered graph when the kernel is added), but for a layout operator of earlier nodes (a
 * weight's reshape: assemble adds it early). */
static int sole_matmul(lw *L, int root, const int *avoid, int n_avoid, int before, int *stack) {
    int top = 0, mm = -1;
    L->seen[root] = ++L->stamp, stack[top++] = root;
    while (top) {
        int x = stack[--top];
        const ir_node *n = &L->g->nodes[x];
        if (x != root && L->mat[x]) {
            for (int q = 0; q < n_avoid; q++)
                if (x == avoid[q]) return -1;
            if (x >= before && ir_ops[n->op].kind != IR_KIND_LAYOUT) return -1; /* a view is added early */
            for (int k = 0; x >= before && k < n->n_in; k++)
                if (n->in[k] >= before) return -1;
            continue;
        }
        if (n->op == IR_OP_MATMUL) {
            if (mm >= 0) return -1;
            mm = x;
        } else if (n->op != IR_OP_CONST && !is_ew(n->op)) return -1;
        for (int k = 0; k < n->n_in; k++)
            if (L->seen[n->in[k]] != L->stamp) L->seen[n->in[k]] = L->stamp, stack[top++] = n->in[k];
    }
    return mm;
}

/* Roots after i whose kernels would be MM kernels of one product with i's shape, depth and A
 * operand (a stored tensor), reading neither i nor each other: they become saves of i's kernel
 * (find at most MAX_SIB), which loads A's tile once a stage for all of them and launches once.
 * On unless MUGEN_FUSE_SIBLINGS=0 (docs/env.md); not for the C target. */
static int find_siblings(lw *L, int i, int *sib, int *stack) {
    if (!L->siblings || L->cpu || L->att[i] || L->to_f32[i]) return 0;
    int avoid[1 + MAX_SIB] = {i}, na = 1;
    int mi = sole_matmul(L, i, NULL, 0, i, stack);
    if (mi < 0 || !L->mat[L->g->nodes[mi].in[0]]) return 0;
    const ir_node *a = &L->g->nodes[mi];
    for (int j = i + 1; j < L->n && na <= MAX_SIB; j++) {
        const ir_node *r = &L->g->nodes[j], *ri = &L->g->nodes[i];
        if (!L->mat[j] || L->done[j] || L->att[j] || L->to_f32[j] || r->dtype != ri->dtype ||
            !shape_eq(&r->shape, &ri->shape) || (!is_ew(r->op) && r->op != IR_OP_MATMUL))
            continue;
        int mj = sole_matmul(L, j, avoid, na, i, stack);
        if (mj < 0) continue;
        const ir_node *b = &L->g->nodes[mj];
        if (b->in[0] != a->in[0] || !shape_eq(&b->shape, &a->shape) ||
            !shape_eq(&L->g->nodes[b->in[1]].shape, &L->g->nodes[a->in[1]].shape))
            continue;
        sib[na - 1] = j, avoid[na++] = j;
    }
    return na - 1;
}

/* ---- the lowered graph ---- */

/* Copies program node i into out as a kernel-level operator (with the non-materialised
 * operators it reads, once each); newi[] maps program nodes to out's. Index or -rc. */
static int copy_plain(lw *L, ir_graph *out, int i, int *newi) {
    const ir_node *n = &L->g->nodes[i];
    if (newi[i] >= 0) return newi[i];
    if (n->op == IR_OP_CONST) return newi[i] = ir_add_const(out, L->ctx, n->lit, 0, 0);
    ir_node p = *n;
    p.name = NULL, p.body = NULL, p.line = p.col = 0;
    for (int k = 0; k < n->n_in; k++)
        if ((p.in[k] = copy_plain(L, out, n->in[k], newi)) < 0) return p.in[k];
    int r = ir_add_node(out, L->ctx, &p);
    if (r >= 0 && L->mat[i] && n->name && ir_set_name(out, L->ctx, r, n->name) < 0) return -(int)MG_ERR_NOMEM;
    return newi[i] = r;
}

/* One kernel (or a kernel-level operator) per materialised node, in program order. */
/* build(L, i) with i's siblings (find_siblings) as saves of its kernel, or alone when they do
 * not fit one. */
static mg_status build_with_siblings(lw *L, int i, int *stack) {
    L->n_sib = find_siblings(L, i, L->sib, stack);
    mg_status rc = build(L, i);
    if (!rc && !L->b && L->n_sib) L->n_sib = 0, rc = build(L, i);
    return rc;
}

static mg_status assemble(lw *L, ir_graph *out, lw_stats *st) {
    int *newi = base_alloc(((size_t)L->n + 1) * sizeof *newi), *stack = base_alloc(((size_t)L->n + 1) * sizeof *stack);
    if (!newi || !stack) return base_free(newi), base_free(stack), ctx_err(L->ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = MG_OK;
    for (int i = 0; i < L->n; i++) newi[i] = -1;
    for (int i = 0; i < L->n && !rc; i++) {
        const ir_node *n = &L->g->nodes[i];
        int r = 0;
        if (n->op == IR_OP_INPUT) r = newi[i] = ir_add_input_from(out, L->ctx, n->name, n);
        else if (n->op == IR_OP_KERNEL) { /* a kernel the program has (a searched piece's): copied */
            if (n->index) continue;
            int in[IR_MAX_IN], nb = 0;
            const char *names[IR_MAX_IN] = {0};
            for (int k = 0; k < n->n_in; k++) in[k] = copy_plain(L, out, n->in[k], newi);
            for (int j = i; j < L->n && L->g->nodes[j].body == n->body; j++) names[nb++] = L->g->nodes[j].name;
            r = ir_copy_kernel(out, L->ctx, L->g, i, in, names);
            for (int q = 0; q < nb && r >= 0; q++) newi[i + q] = r + q;
            if (r >= 0) st->kernels++;
        } else if (!L->mat[i] || L->done[i] || newi[i] >= 0 || (L->cstart[i] == L->cstart[i + 1] && !L->is_out[i])) continue;
        else if ((rc = build_with_siblings(L, i, stack))) break;
        else if (L->b) {
            int in[IR_MAX_IN], part = 0;
            if (L->bp) { /* split-K: the partial products' kernel first */
                for (int k = 0; k < L->n_kin_p; k++) in[k] = newi[L->kin_p[k]];
                part = ir_add_kernel(out, L->ctx, L->bp, in, L->n_kin_p, NULL, 0, 0);
                L->bp = NULL, st->kernels++;
            }
            for (int k = 0; k < L->n_kin && part >= 0; k++) /* a sibling's view of a weight, added early */
                if (L->kin[k] >= 0 && newi[L->kin[k]] < 0) {
                    int v = copy_plain(L, out, L->kin[k], newi);
                    if (v < 0) part = v;
                }
            for (int k = 0; k < L->n_kin; k++) in[k] = L->kin[k] >= 0 ? newi[L->kin[k]] : part - L->kin[k] - 1;
            const char *names[1 + MAX_SIB] = {n->name};
            for (int q = 0; q < L->n_sib; q++) names[1 + q] = L->g->nodes[L->sib[q]].name;
            r = part < 0 ? part : ir_add_kernel(out, L->ctx, L->b, in, L->n_kin, names, 0, 0);
            if (part < 0) ir_graph_free(L->b);
            newi[i] = r, L->b = NULL, st->kernels++;
            for (int q = 0; q < L->n_sib && r >= 0; q++) newi[L->sib[q]] = r + 1 + q, L->done[L->sib[q]] = 1;
            L->n_sib = 0;
        } else r = copy_plain(L, out, i, newi), st->plain++;
        if (r < 0) rc = (mg_status)-r;
    }
    for (int k = 0; k < L->g->n_outputs && !rc; k++) {
        int r = ir_add_output(out, L->ctx, newi[L->g->outputs[k]]);
        if (r < 0) rc = (mg_status)-r;
    }
    base_free(newi), base_free(stack);
    return rc;
}

mg_status lw_lower(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, int cpu, const lw_tiling *tiling,
                   ir_graph **out, lw_stats *stats) {
    lw_stats dummy;
    if (!stats) stats = &dummy;
    memset(stats, 0, sizeof *stats);
    *out = NULL;
    const char *fs = getenv("MUGEN_FUSE_SIBLINGS");
    lw L = {.g = g, .ctx = ctx, .dev = dev, .cpu = cpu, .tl = tiling ? *tiling : lw_tilings[0], .n = g->n_nodes,
            .siblings = !fs || atoi(fs) > 0};
    ir_graph *o = NULL;
    mg_status rc = setup(&L);
    if (!rc && !(L.done = base_calloc((size_t)g->n_nodes + 1, sizeof *L.done))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    /* a program whose tensors do not fit the device's memory gets no kernel (ir_add_kernel
     * would refuse one): it stays the per-operator program, whose run says what is too big */
    int64_t bytes = 0;
    for (int i = 0; i < g->n_nodes; i++)
        bytes += ir_numel(&g->nodes[i].shape) * (int64_t)base_dtype_size(g->nodes[i].dtype);
    L.no_kernels = bytes > dev->dmem;
    if (!rc && !L.no_kernels) rc = attend(&L, &stats->fused);
    if (!rc && !L.no_kernels) rc = store_big_operands(&L);
    if (!rc && !L.no_kernels) rc = store_normed(&L);
    if (!rc && !L.no_kernels) rc = absorb(&L, &stats->fused);
    if (!rc && !(o = ir_graph_new())) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc) rc = assemble(&L, o, stats);
    if (!rc) *out = o, o = NULL;
    ir_graph_free(o);
    base_free(L.mat), base_free(L.is_out), base_free(L.depth), base_free(L.cstart);
    base_free(L.seen), base_free(L.memo), base_free(L.cons), base_free(L.to_f32), base_free(L.att);
    base_free(L.att_max), base_free(L.done);
    return rc;
}
