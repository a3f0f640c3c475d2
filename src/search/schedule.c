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

/* Untiled node i as a node of the tiled graph (written to *p): its operands mapped, its imap,
 * fmap and omap from the dims each grid dim and the for-loop split. */
static void tiled_copy(const tiler *T, int i, ir_node *p) {
    const ir_graph *u = T->u;
    const ir_node *n = &u->nodes[i];
    *p = *n;
    p->name = NULL;
    for (int k = 0; k < p->n_in; k++) p->in[k] = T->map[n->in[k]];
    int src = n->op == IR_OP_ACCUM || n->op == IR_OP_SAVE ? n->in[0] : i;
    if (n->op == IR_OP_ITER || n->op == IR_OP_ACCUM) p->fmap = T->fl > 1 ? sr_dim_in(T->D, u, src, T->fc) : -1;
    if (n->op == IR_OP_ITER || n->op == IR_OP_SAVE)
        for (int g = 0; g < 3; g++) p->map[g] = T->grid[g] > 1 ? sr_dim_in(T->D, u, i, T->gc[g]) : -1;
    if (n->op == IR_OP_SUM) p->group = 0;
    if (n->op == IR_OP_RESHAPE) { /* a squeeze: the tiled operand minus its last dim */
        const ir_shape *a = &T->t->nodes[p->in[0]].shape;
        p->n_ints = a->ndim - 1;
        for (int dd = 0; dd < p->n_ints; dd++) p->ints[dd] = a->d[dd];
    }
}

/* Can untiled saver i be tiled under grid (classes gc[])? A grid dim that splits no dim of its
 * tile makes its blocks hold partial sums over that dim: at most one such dim, of a class
 * reduced on the way, and room for one more dim; *pg gets it (-1: none). Depends on the grid
 * only: a saver that fails here fails under every for-loop. */
static int save_fits(const dimcls *D, const ir_graph *u, int i, const int *grid, const int *gc, int *pg) {
    *pg = -1;
    for (int g = 0; g < 3; g++) {
        if (grid[g] == 1 || sr_dim_in(D, u, i, gc[g]) >= 0) continue;
        if (*pg >= 0 || gc[g] >= 64 || !(D->red[i] >> gc[g] & 1) || u->nodes[i].shape.ndim >= IR_MAX_DIMS)
            return 0;
        *pg = g;
    }
    return 1;
}

/* Saver p (untiled node i) where a grid dim splits no dim of its tile: its blocks hold partial
 * sums over that grid dim, which go side by side along a new last dim of its operand (a
 * reshape added to t) that a later sum adds up (Mirage §4.2); *pg gets the grid dim (-1:
 * none). 0 if the saver cannot be tiled (save_fits) or on error. */
static int partial_sums(tiler *T, int i, ir_node *p, int *pg) {
    *pg = -1;
    if (T->u->nodes[i].op != IR_OP_SAVE) return 1;
    if (!save_fits(T->D, T->u, i, T->grid, T->gc, pg)) return 0;
    if (*pg < 0) return 1;
    const ir_shape *a = &T->t->nodes[p->in[0]].shape;
    int nd = a->ndim;
    ir_node q = {.op = IR_OP_RESHAPE, .n_in = 1, .in = {p->in[0]}, .n_ints = nd + 1};
    for (int dd = 0; dd < nd; dd++) q.ints[dd] = a->d[dd];
    q.ints[nd] = 1;
    p->in[0] = ir_add_node(T->t, NULL, &q);
    p->map[*pg] = nd;
    return p->in[0] >= 0;
}

/* Adds the tiled copy of untiled node i to t (a saver also as an output). The node, or -1.
 * No messages: most schedules do not fit, and formatting why was a tenth of QKNorm's search. */
static int tile_node(tiler *T, int i) {
    const ir_node *n = &T->u->nodes[i];
    if (n->op == IR_OP_CONST) return ir_add_const(T->t, NULL, n->lit, 0, 0);
    ir_node p;
    tiled_copy(T, i, &p);
    int pg;
    if (!partial_sums(T, i, &p, &pg)) return -1;
    int r = ir_add_node(T->t, NULL, &p);
    if (r >= 0 && n->op == IR_OP_SAVE) {
        T->usave[T->n_sv] = i, T->part_g[T->n_sv++] = pg;
        if (ir_add_output(T->t, NULL, r) < 0) r = -1;
    }
    return r;
}

/* A lower bound on ir_block_smem(t) (bytes[i]: node i's tile, 0 for constants and savers): its
 * peak counts, at each node p, every iterator's tile still to be read and every tile made at p
 * or before and read at p or after; tiles of operators that are not elementwise (iterators,
 * matmuls, reductions, accumulators, layout) never stay in registers, so they alone bound it. */
static int64_t smem_floor(const ir_graph *t, const int64_t *bytes) {
    int n = t->n_nodes, last[SR_MAX_BNODES];
    for (int i = 0; i < n; i++) {
        last[i] = i;
        for (int k = 0; k < t->nodes[i].n_in; k++) last[t->nodes[i].in[k]] = i;
    }
    int64_t best = 0;
    for (int p = 0; p < n; p++) {
        int64_t b = 0;
        for (int i = 0; i < n; i++) {
            ir_kind k = ir_ops[t->nodes[i].op].kind;
            if (k == IR_KIND_UNARY || k == IR_KIND_BINARY || last[i] < p) continue;
            if (i <= p || t->nodes[i].op == IR_OP_ITER) b += bytes[i];
        }
        if (b > best) best = b;
    }
    return best;
}

/* ir_block_check(t) == MG_OK, without its messages (it names every node it looks at) and
 * with the shared-memory peak (ir_block_smem) computed only where bounds leave it open:
 * every tile but constants and savers live at once bounds it above, smem_floor below. Most
 * schedules that reach here fail on shared memory. */
static int block_ok(const ir_graph *t, const mg_device *dev) {
    int n = t->n_nodes, cls[SR_MAX_BNODES + 1];
    for (int g = 0; g < 3; g++)
        if (t->grid[g] < 1 || t->grid[g] > 65535) return 0;
    if (n > SR_MAX_BNODES) return !ir_block_check(t, NULL, dev);
    if (t->forloop < 1 || t->forloop > IR_MAX_DIM || t->threads < 1 || t->threads > dev->max_threads ||
        t->n_outputs == 0)
        return 0;
    ir_block_classes(t, cls);
    int64_t hi = 0, bytes[SR_MAX_BNODES];
    for (int i = 0; i < n; i++) {
        const ir_node *nd = &t->nodes[i];
        if (!(ir_ops[nd->op].levels & IR_LEVEL_B) || (cls[i] & 3) == 3) return 0;
        if (nd->op == IR_OP_ACCUM && cls[i] != IR_POST) return 0;
        if (nd->op == IR_OP_SAVE && cls[nd->in[0]] != IR_POST) return 0;
        for (int k = 0; k < nd->n_in; k++)
            if (t->nodes[nd->in[k]].op == IR_OP_SAVE) return 0;
        bytes[i] = nd->op == IR_OP_CONST || nd->op == IR_OP_SAVE ? 0 : ir_numel(&nd->shape) * (int64_t)base_dtype_size(nd->dtype);
        hi += bytes[i];
    }
    if (hi <= dev->smem_per_block) return 1;
    if (smem_floor(t, bytes) > dev->smem_per_block) return 0;
    int64_t smem = ir_block_smem(t);
    return smem >= 0 && smem <= dev->smem_per_block;
}

/* Does tiled graph t pass the block check, and do its tensors pass pruning with their own
 * terms (T->terms), the last kernel's savers writing the program's outputs? */
static int tiled_ok(tiler *T) {
    worker *w = T->w;
    const bstate *bs = T->bs;
    const ir_graph *t = T->t;
    int32_t kin[IR_MAX_IN];
    for (int k = 0; k < bs->n_kin; k++) kin[k] = w->t[bs->kin[k]].term;
    const mg_device *dev = mg_device_default();
    int ok = block_ok(t, dev);
    if (w->s->check) { /* MUGEN_CHECK=1 (out of memory while checking is no disagreement) */
        mg_status rc = ir_block_check(t, NULL, dev);
        MG_ASSERT(rc == MG_ERR_NOMEM || ok == !rc);
    }
    ok = ok && !ae_of_block(&w->tab, &w->ctx, t, kin, T->terms);
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

/* The choices for one block graph's schedules: the dim classes a grid dim or the for-loop may
 * split (cand), and the grid sizes and for-loop ranges above 1 (--grid, --forloop); scratch: a
 * tiled graph holding the kernel inputs and the leading n_pre constants of the untiled graph,
 * reused by the next schedule unless the last one was kept (most are not: 7% on QKNorm). */
typedef struct choices {
    worker *w;
    int d;
    dimcls D;
    int cand[SR_DIM_SLOTS], nc;
    int sizes[16], ns, fls[16], nf;
    ir_graph *scratch;
    int n_pre;
} choices;

/* C's scratch graph emptied down to its kernel inputs and leading constants, for grid and fl;
 * NULL if out of memory. */
static ir_graph *scratch_graph(choices *C, const int grid[3], int fl) {
    const ir_graph *u = C->w->bs[C->d].b;
    if (!C->scratch) {
        ir_graph *t = ir_block_new(grid, 128, fl);
        int ok = t != NULL;
        for (int k = 0; ok && k < u->n_kin; k++)
            ok = ir_block_add_kin(t, NULL, u->kin_name[k], u->kin_dtype[k], &u->kin_shape[k]) >= 0;
        for (int i = 0; ok && i < C->n_pre; i++) ok = ir_add_const(t, NULL, u->nodes[i].lit, 0, 0) == i;
        if (!ok) {
            ir_graph_free(t);
            C->w->oom = 1;
            return NULL;
        }
        C->scratch = t;
    }
    ir_graph *t = C->scratch;
    t->n_nodes = C->n_pre, t->n_outputs = 0;
    for (int g = 0; g < 3; g++) t->grid[g] = grid[g];
    t->forloop = fl;
    return t;
}

/* Builds the tiled copy of kernel depth d's untiled block graph: grid (classes gc[]), for-loop
 * fl (class fc), checks it, and adds it to the depth's schedules (bs->tilings). */
static void tile_one(choices *C, const int grid[3], const int gc[3], int fl, int fc) {
    worker *w = C->w;
    tiler T = {.w = w, .bs = &w->bs[C->d], .u = w->bs[C->d].b, .D = &C->D, .grid = grid, .gc = gc, .fl = fl, .fc = fc};
    const ir_graph *u = T.u;
    w->states++;
    T.t = scratch_graph(C, grid, fl);
    int ok = T.t != NULL;
    for (int i = 0; ok && i < C->n_pre; i++) T.map[i] = i;
    int64_t iters = 0; /* the iterators' tiles: more than shared memory fails block_ok */
    for (int i = C->n_pre; ok && i < u->n_nodes; i++) { /* untiled -> tiled node */
        T.map[i] = tile_node(&T, i);
        ok = T.map[i] >= 0 && T.map[i] < SR_MAX_BNODES;
        if (ok && u->nodes[i].op == IR_OP_ITER) {
            const ir_node *it = &T.t->nodes[T.map[i]];
            iters += ir_numel(&it->shape) * (int64_t)base_dtype_size(it->dtype);
            ok = iters <= mg_device_default()->smem_per_block;
        }
    }
    ok = ok && tiled_ok(&T);
    if (ok) output_labels(&T);
    ok = ok && T.t->n_outputs <= SR_MAX_TILE_OUTS && !grow_tilings(w, T.bs);
    if (!ok) return;
    add_tiling(&T); /* the scratch graph is the schedule's now */
    C->scratch = NULL;
}

/* Every for-loop for grid (classes gc[], div[c]: the grid size splitting class c, 0 if none):
 * none, then each candidate class with each range that divides its chunk. With a saver that
 * no for-loop lets this grid tile (save_fits), each is only counted. */
static void loops(choices *C, const int grid[3], const int gc[3], const int64_t *div) {
    worker *w = C->w;
    const ir_graph *u = w->bs[C->d].b;
    int fits = 1, pg;
    for (int i = 0; i < u->n_nodes && fits; i++)
        fits = u->nodes[i].op != IR_OP_SAVE || save_fits(&C->D, u, i, grid, gc, &pg);
    for (int f = -1; f < C->nc * C->nf; f++) {
        if (fits && (sr_stopped(w) || w->oom)) break;
        int fc = f < 0 ? -1 : C->cand[f / C->nf], fl = f < 0 ? 1 : C->fls[f % C->nf];
        if (f >= 0 && (C->D.size[fc] / (div[fc] ? div[fc] : 1)) % fl) continue;
        if (fits) tile_one(C, grid, gc, fl, fc);
        else w->states++; /* a schedule tried (tile_one would fail at that saver) */
    }
}

/* Every grid over the gd classes cand[pick[0..gd)] (x, y, z), each with a size, within
 * --max-blocks and dividing its class; each with its for-loops. */
static void grids(choices *C, const int *pick, int gd) {
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
    while (C.n_pre < bs->b->n_nodes && bs->b->nodes[C.n_pre].op == IR_OP_CONST) C.n_pre++;
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
    ir_graph_free(C.scratch);
    return 0;
}
