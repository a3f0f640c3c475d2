/* schedule: phase 2 of a block graph, its schedules (search_int.h, docs/search.md "Block
 * graphs"): every grid and for-loop from the candidate sets over the dim classes that may be
 * split, each tiled copy checked and kept with what the kernel graph sees of it. */
#include <stdio.h>
#include <string.h>

#include "search_int.h"

/* ---- the block level, phase 2: schedules ----
 * The dims of the untiled block graph fall into classes: dims that must be split alike
 * (an elementwise op's aligned dims, a matmul's batch dims, its m and n with the result's,
 * and its two k dims, a sum's kept dims). A grid dim or the for-loop splits one class that
 * some iterator reads; every iterator dim in it is split (imap, fmap), an accumulator whose
 * operand still has a dim of the loop's class concatenates along it, and a saver maps each
 * grid dim to its dim of that class, or, when the class was reduced on the way (a split
 * reduction, FlashDecoding), to a free dim of size 1 (Mirage §4.2, split-K). */

/* One schedule being built (tile_one): the untiled block graph u of kernel depth d (bs), the
 * grid (dim classes gc[]) and for-loop fl (class fc), and the tiled copy t with, per untiled
 * node, its tiled node (map); per saver in order, its untiled node (usave) and the grid dim
 * whose partial sums it holds side by side (part_g, -1: none); the tiled nodes' terms and
 * the kernel outputs' dim labels. */
typedef struct tiler {
    worker *w;
    bstate *bs;
    const ir_graph *u;
    const dimcls *D;
    const int *grid, *gc;
    int fl, fc;
    ir_graph *t;
    int map[SR_MAX_BNODES], usave[SR_MAX_BNODES], part_g[SR_MAX_BNODES], n_sv;
    int32_t terms[SR_MAX_BNODES];
    uint64_t olab[SR_MAX_BNODES][IR_MAX_DIMS];
} tiler;

/* Untiled node i as a node of the tiled graph: its operands mapped, its imap, fmap and omap
 * from the dims each grid dim and the for-loop split. */
static ir_node tiled_copy(const tiler *T, int i) {
    const ir_graph *u = T->u;
    const ir_node *n = &u->nodes[i];
    ir_node p = *n;
    p.name = NULL;
    for (int k = 0; k < p.n_in; k++) p.in[k] = T->map[n->in[k]];
    int src = n->op == IR_OP_ACCUM || n->op == IR_OP_SAVE ? n->in[0] : i;
    if (n->op == IR_OP_ITER || n->op == IR_OP_ACCUM) p.fmap = T->fl > 1 ? sr_dim_in(T->D, u, src, T->fc) : -1;
    if (n->op == IR_OP_ITER || n->op == IR_OP_SAVE)
        for (int g = 0; g < 3; g++) p.map[g] = T->grid[g] > 1 ? sr_dim_in(T->D, u, i, T->gc[g]) : -1;
    if (n->op == IR_OP_SUM) p.group = 0;
    if (n->op == IR_OP_RESHAPE) { /* a squeeze: the tiled operand minus its last dim */
        const ir_shape *a = &T->t->nodes[p.in[0]].shape;
        p.n_ints = a->ndim - 1;
        for (int dd = 0; dd < p.n_ints; dd++) p.ints[dd] = a->d[dd];
    }
    return p;
}

/* Saver p (untiled node i) where a grid dim splits no dim of its tile: its blocks hold partial
 * sums over that grid dim, which go side by side along a new last dim of its operand (a
 * reshape added to t) that a later sum adds up; *pg gets the grid dim (-1: none). 0 if the
 * saver cannot be tiled (two such grid dims, or the dim class was not reduced on the way) or
 * on error. */
static int partial_sums(tiler *T, int i, ir_node *p, int *pg) {
    const ir_node *n = &T->u->nodes[i];
    int ok = 1;
    *pg = -1;
    for (int g = 0; n->op == IR_OP_SAVE && g < 3 && ok; g++) {
        if (T->grid[g] == 1 || p->map[g] >= 0) continue;
        /* blocks hold partial sums over grid dim g (split reduction): they go side by
         * side along a new last dim, which a later sum adds up (Mirage §4.2) */
        ok = *pg < 0 && T->gc[g] < 64 && (T->D->red[i] >> T->gc[g] & 1) && n->shape.ndim < IR_MAX_DIMS;
        *pg = g;
    }
    if (ok && *pg >= 0) {
        const ir_shape *a = &T->t->nodes[p->in[0]].shape;
        int nd = a->ndim;
        ir_node q = {.op = IR_OP_RESHAPE, .n_in = 1, .in = {p->in[0]}, .n_ints = nd + 1};
        for (int dd = 0; dd < nd; dd++) q.ints[dd] = a->d[dd];
        q.ints[nd] = 1;
        p->in[0] = ir_add_node(T->t, &T->w->ctx, &q);
        p->map[*pg] = nd;
        ok = p->in[0] >= 0;
    }
    return ok;
}

/* Adds the tiled copy of untiled node i to t (a saver also as an output). The node, or -1. */
static int tile_node(tiler *T, int i) {
    const ir_node *n = &T->u->nodes[i];
    mg_ctx *ctx = &T->w->ctx;
    if (n->op == IR_OP_CONST) return ir_add_const(T->t, ctx, n->lit, 0, 0);
    ir_node p = tiled_copy(T, i);
    int pg;
    if (!partial_sums(T, i, &p, &pg)) return -1;
    int r = ir_add_node(T->t, ctx, &p);
    if (r >= 0 && n->op == IR_OP_SAVE) {
        T->usave[T->n_sv] = i, T->part_g[T->n_sv++] = pg;
        if (ir_add_output(T->t, ctx, r) < 0) r = -1;
    }
    return r;
}

/* Does tiled graph t pass the block check, and do its tensors pass pruning with their own
 * terms (T->terms), the last kernel's savers writing the program's outputs? */
static int tiled_ok(tiler *T) {
    worker *w = T->w;
    const bstate *bs = T->bs;
    const ir_graph *t = T->t;
    int32_t kin[IR_MAX_IN];
    for (int k = 0; k < bs->n_kin; k++) kin[k] = w->t[bs->kin[k]].term;
    int ok = !ir_block_check(t, NULL, mg_device_default()) && !ae_of_block(&w->tab, &w->ctx, t, kin, T->terms);
    int last = w->n_kops == w->max_kops - 1;
    for (int i = 0; ok && i < t->n_nodes; i++) {
        ir_op op = t->nodes[i].op;
        if (op == IR_OP_CONST || op == IR_OP_ITER || (op == IR_OP_SAVE && !last)) continue;
        if (op != IR_OP_SAVE) {
            ok = sr_keep_term(w, T->terms[i]);
            continue;
        }
        int root = 0;
        for (int j = 0; j < w->s->n_out; j++) root |= ae_is_root(&w->q, T->terms[i], j);
        ok = root;
    }
    return ok;
}

/* The kernel outputs' dim labels (T->olab): a side-by-side dim of partial sums is the reduced
 * one's. */
static void output_labels(tiler *T) {
    const bstate *bs = T->bs;
    const ir_graph *u = T->u, *t = T->t;
    for (int j = 0; j < t->n_outputs; j++) {
        memcpy(T->olab[j], bs->lab[T->usave[j]], sizeof T->olab[j]);
        int g = T->part_g[j];
        if (g < 0) continue;
        for (int i = 0; i < u->n_nodes; i++) {
            int e = sr_dim_in(T->D, u, i, T->gc[g]);
            if (e >= 0 && bs->lab[i][e]) {
                T->olab[j][t->nodes[t->outputs[j]].map[g]] = bs->lab[i][e];
                break;
            }
        }
    }
}

/* Room for one more schedule in bs; -1 (w->oom set) if out of memory. */
static int grow_tilings(worker *w, bstate *bs) {
    if (bs->n_tilings < bs->cap_tilings) return 0;
    int cap = bs->cap_tilings ? bs->cap_tilings * 2 : 64;
    tiling *tilings = base_realloc(bs->tilings, sizeof *tilings * (size_t)cap);
    if (tilings) bs->tilings = tilings;
    int *in_group = base_realloc(bs->in_group, sizeof *in_group * (size_t)cap);
    if (in_group) bs->in_group = in_group;
    if (!tilings || !in_group) {
        w->oom = 1;
        return -1;
    }
    bs->cap_tilings = cap;
    return 0;
}

/* Adds T's tiled graph (owned) to the depth's schedules, with what the kernel graph sees of
 * it: its outputs' terms and labels, their hash iface and the cost model's time. */
static void add_tiling(tiler *T) {
    worker *w = T->w;
    const ir_graph *t = T->t;
    tiling *x = &T->bs->tilings[T->bs->n_tilings++];
    x->t = T->t;
    uint64_t h = 1469598103934665603ull;
#define H(v) (h = (h ^ (uint64_t)(int64_t)(v)) * 1099511628211ull)
    for (int j = 0; j < t->n_outputs; j++) {
        const ir_node *o = &t->nodes[t->outputs[j]];
        x->term[j] = T->terms[t->outputs[j]];
        memcpy(x->lab[j], T->olab[j], sizeof x->lab[j]);
        int32_t c = ae_class(&w->q, x->term[j]);
        H(c >= 0 ? c : (1 << 30) + x->term[j]), H(o->dtype), H(o->shape.ndim);
        for (int dd = 0; dd < o->shape.ndim; dd++) { /* the kernel output: tiles times grid */
            int64_t sz = o->shape.d[dd];
            for (int g = 0; g < 3; g++) sz *= o->map[g] == dd ? t->grid[g] : 1;
            H(sz), H(T->olab[j][dd]);
        }
    }
#undef H
    x->iface = h;
    x->us = sr_block_us(t, &w->s->dev, ~0u); /* as if every output were the program's */
}

/* Builds the tiled copy of kernel depth d's untiled block graph: grid (classes gc[]), for-loop
 * fl (class fc), checks it, and adds it to the depth's schedules (bs->tilings). */
static void tile_one(worker *w, int d, const dimcls *D, const int grid[3], const int gc[3], int fl, int fc) {
    tiler T = {.w = w, .bs = &w->bs[d], .u = w->bs[d].b, .D = D, .grid = grid, .gc = gc, .fl = fl, .fc = fc};
    const ir_graph *u = T.u;
    w->states++;
    T.t = ir_block_new(grid, 128, fl);
    int ok = T.t != NULL;
    for (int k = 0; ok && k < u->n_kin; k++)
        ok = ir_block_add_kin(T.t, &w->ctx, u->kin_name[k], u->kin_dtype[k], &u->kin_shape[k]) >= 0;
    for (int i = 0; ok && i < u->n_nodes; i++) { /* untiled -> tiled node */
        T.map[i] = tile_node(&T, i);
        ok = T.map[i] >= 0 && T.map[i] < SR_MAX_BNODES;
    }
    ok = ok && tiled_ok(&T);
    if (ok) output_labels(&T);
    ok = ok && T.t->n_outputs <= SR_MAX_TILE_OUTS && !grow_tilings(w, T.bs);
    if (!ok) {
        ir_graph_free(T.t);
        return;
    }
    add_tiling(&T);
}

/* The choices for one block graph's schedules: the dim classes a grid dim or the for-loop may
 * split (cand), and the grid sizes and for-loop ranges above 1 (--grid, --forloop). */
typedef struct choices {
    worker *w;
    int d;
    dimcls D;
    int cand[SR_DIM_SLOTS], nc;
    int sizes[16], ns, fls[16], nf;
} choices;

/* Every for-loop for grid (classes gc[], div[c]: the grid size splitting class c, 0 if none):
 * none, then each candidate class with each range that divides its chunk. */
static void loops(const choices *C, const int grid[3], const int gc[3], const int64_t *div) {
    worker *w = C->w;
    for (int f = -1; f < C->nc * C->nf; f++) {
        if (sr_stopped(w) || w->oom) break;
        if (f < 0) {
            tile_one(w, C->d, &C->D, grid, gc, 1, -1);
            continue;
        }
        int fc = C->cand[f / C->nf], fl = C->fls[f % C->nf];
        int64_t chunk = C->D.size[fc] / (div[fc] ? div[fc] : 1);
        if (chunk % fl) continue;
        tile_one(w, C->d, &C->D, grid, gc, fl, fc);
    }
}

/* Every grid over the gd classes cand[pick[0..gd)] (x, y, z), each with a size, within
 * --max-blocks and dividing its class; each with its for-loops. */
static void grids(const choices *C, const int *pick, int gd) {
    int combos = 1;
    for (int g = 0; g < gd; g++) combos *= C->ns;
    for (int sc = 0; sc < combos; sc++) {
        int grid[3] = {1, 1, 1}, gc[3] = {-1, -1, -1}, x = sc;
        int64_t div[SR_DIM_SLOTS] = {0}, blocks = 1;
        for (int g = 0; g < gd; g++) {
            grid[g] = C->sizes[x % C->ns], x /= C->ns;
            gc[g] = C->cand[pick[g]];
            blocks *= grid[g];
        }
        if (blocks > C->w->s->o->max_blocks) continue;
        int okg = 1;
        for (int g = 0; g < gd; g++) okg &= C->D.size[gc[g]] % grid[g] == 0;
        if (!okg) continue;
        for (int g = 0; g < gd; g++) div[gc[g]] = grid[g];
        loops(C, grid, gc, div);
    }
}

/* The next combination of gd classes out of nc in pick[] (increasing); 0 after the last. */
static int next_pick(int *pick, int gd, int nc) {
    int g = gd - 1;
    while (g >= 0 && pick[g] == nc - gd + g) g--;
    if (g < 0) return 0;
    pick[g]++;
    for (int h = g + 1; h < gd; h++) pick[h] = pick[h - 1] + 1;
    return 1;
}

int sr_schedules(worker *w, int d) {
    const sr_opts *o = w->s->o;
    bstate *bs = &w->bs[d];
    int compute = 0; /* a block graph of iterators, accumulators and savers only is a copy */
    for (int i = 0; i < bs->b->n_nodes; i++) {
        ir_op op = bs->b->nodes[i].op;
        compute |= op != IR_OP_CONST && op != IR_OP_ITER && op != IR_OP_ACCUM && op != IR_OP_SAVE && op != IR_OP_RESHAPE;
    }
    choices C = {.w = w, .d = d};
    if (!compute || sr_dims_of(bs->b, &C.D)) return -1;
    bs->n_tilings = 0;
    for (int c = 0; c < C.D.nc; c++)
        if (C.D.split_ok[c]) C.cand[C.nc++] = c;
    for (int i = 0; i < o->n_grid && C.ns < 16; i++)
        if (o->grid[i] > 1) C.sizes[C.ns++] = o->grid[i];
    for (int i = 0; i < o->n_forloop && C.nf < 16; i++)
        if (o->forloop[i] > 1) C.fls[C.nf++] = o->forloop[i];
    /* grid: gd classes in increasing order (x, y, z), each with a size */
    int gd_max = o->max_grid_dims < 3 ? o->max_grid_dims : 3;
    for (int gd = 0; gd <= gd_max && gd <= C.nc; gd++) {
        int pick[3] = {0, 1, 2};
        do grids(&C, pick, gd);
        while (next_pick(pick, gd, C.nc));
    }
    return 0;
}
