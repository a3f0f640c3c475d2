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

/* Builds the tiled copy of kernel depth d's untiled block graph: grid (classes gc[]), for-loop
 * fl (class fc), checks it, and adds it to the depth's schedules (bs->tilings). */
static void tile_one(worker *w, int d, const dimcls *D, const int grid[3], const int gc[3], int fl, int fc) {
    bstate *bs = &w->bs[d];
    const ir_graph *u = bs->b;
    w->states++;
    ir_graph *t = ir_block_new(grid, 128, fl);
    int ok = t != NULL;
    for (int k = 0; ok && k < u->n_kin; k++)
        ok = ir_block_add_kin(t, &w->ctx, u->kin_name[k], u->kin_dtype[k], &u->kin_shape[k]) >= 0;
    int map[SR_MAX_BNODES], usave[SR_MAX_BNODES], part_g[SR_MAX_BNODES], n_sv = 0; /* untiled -> tiled node */
    for (int i = 0; ok && i < u->n_nodes; i++) {
        const ir_node *n = &u->nodes[i];
        int r;
        if (n->op == IR_OP_CONST) {
            r = ir_add_const(t, &w->ctx, n->lit, 0, 0);
        } else {
            ir_node p = *n;
            p.name = NULL;
            for (int k = 0; k < p.n_in; k++) p.in[k] = map[n->in[k]];
            int src = n->op == IR_OP_ACCUM || n->op == IR_OP_SAVE ? n->in[0] : i;
            if (n->op == IR_OP_ITER || n->op == IR_OP_ACCUM) p.fmap = fl > 1 ? sr_dim_in(D, u, src, fc) : -1;
            if (n->op == IR_OP_ITER || n->op == IR_OP_SAVE)
                for (int g = 0; g < 3; g++) p.map[g] = grid[g] > 1 ? sr_dim_in(D, u, i, gc[g]) : -1;
            if (n->op == IR_OP_SUM) p.group = 0;
            if (n->op == IR_OP_RESHAPE) { /* a squeeze: the tiled operand minus its last dim */
                const ir_shape *a = &t->nodes[p.in[0]].shape;
                p.n_ints = a->ndim - 1;
                for (int dd = 0; dd < p.n_ints; dd++) p.ints[dd] = a->d[dd];
            }
            int pg = -1;
            for (int g = 0; n->op == IR_OP_SAVE && g < 3 && ok; g++) {
                if (grid[g] == 1 || p.map[g] >= 0) continue;
                /* blocks hold partial sums over grid dim g (split reduction): they go side by
                 * side along a new last dim, which a later sum adds up (Mirage §4.2) */
                ok = pg < 0 && gc[g] < 64 && (D->red[i] >> gc[g] & 1) && n->shape.ndim < IR_MAX_DIMS;
                pg = g;
            }
            if (ok && pg >= 0) {
                const ir_shape *a = &t->nodes[p.in[0]].shape;
                ir_node q = {.op = IR_OP_RESHAPE, .n_in = 1, .in = {p.in[0]}, .n_ints = a->ndim + 1};
                for (int dd = 0; dd < a->ndim; dd++) q.ints[dd] = a->d[dd];
                q.ints[a->ndim] = 1;
                p.in[0] = ir_add_node(t, &w->ctx, &q);
                p.map[pg] = a->ndim;
                ok = p.in[0] >= 0;
            }
            r = ok ? ir_add_node(t, &w->ctx, &p) : -1;
            if (r >= 0 && n->op == IR_OP_SAVE) {
                usave[n_sv] = i, part_g[n_sv++] = pg;
                if (ir_add_output(t, &w->ctx, r) < 0) r = -1;
            }
        }
        map[i] = r;
        ok = r >= 0 && r < SR_MAX_BNODES;
    }
    int32_t terms[SR_MAX_BNODES], kin[IR_MAX_IN];
    for (int k = 0; k < bs->n_kin; k++) kin[k] = w->t[bs->kin[k]].term;
    ok = ok && !ir_block_check(t, NULL, &ir_device_h100) && !ae_of_block(&w->tab, &w->ctx, t, kin, terms);
    int last = w->n_kops == w->max_kops - 1;
    for (int i = 0; ok && i < t->n_nodes; i++) {
        ir_op op = t->nodes[i].op;
        if (op == IR_OP_CONST || op == IR_OP_ITER || (op == IR_OP_SAVE && !last)) continue;
        if (op != IR_OP_SAVE) {
            ok = sr_keep_term(w, terms[i]);
            continue;
        }
        int root = 0;
        for (int j = 0; j < w->s->n_out; j++) root |= ae_is_root(&w->q, terms[i], j);
        ok = root;
    }
    /* the kernel outputs' dim labels: a side-by-side dim of partial sums is the reduced one's */
    uint64_t olab[SR_MAX_BNODES][IR_MAX_DIMS];
    for (int j = 0; ok && j < t->n_outputs; j++) {
        memcpy(olab[j], bs->lab[usave[j]], sizeof olab[j]);
        int g = part_g[j];
        if (g < 0) continue;
        for (int i = 0; i < u->n_nodes; i++) {
            int e = sr_dim_in(D, u, i, gc[g]);
            if (e >= 0 && bs->lab[i][e]) {
                olab[j][t->nodes[t->outputs[j]].map[g]] = bs->lab[i][e];
                break;
            }
        }
    }
    ok = ok && t->n_outputs <= SR_MAX_TILE_OUTS;
    if (ok && bs->n_tilings == bs->cap_tilings) {
        int cap = bs->cap_tilings ? bs->cap_tilings * 2 : 64;
        tiling *tilings = base_realloc(bs->tilings, sizeof *tilings * (size_t)cap);
        if (tilings) bs->tilings = tilings;
        int *in_group = base_realloc(bs->in_group, sizeof *in_group * (size_t)cap);
        if (in_group) bs->in_group = in_group;
        if (tilings && in_group) bs->cap_tilings = cap;
        else ok = 0, w->oom = 1;
    }
    if (!ok) {
        ir_graph_free(t);
        return;
    }
    tiling *x = &bs->tilings[bs->n_tilings++];
    x->t = t;
    uint64_t h = 1469598103934665603ull;
#define H(v) (h = (h ^ (uint64_t)(int64_t)(v)) * 1099511628211ull)
    for (int j = 0; j < t->n_outputs; j++) {
        const ir_node *o = &t->nodes[t->outputs[j]];
        x->term[j] = terms[t->outputs[j]];
        memcpy(x->lab[j], olab[j], sizeof x->lab[j]);
        int32_t c = ae_class(&w->q, x->term[j]);
        H(c >= 0 ? c : (1 << 30) + x->term[j]), H(o->dtype), H(o->shape.ndim);
        for (int dd = 0; dd < o->shape.ndim; dd++) { /* the kernel output: tiles times grid */
            int64_t sz = o->shape.d[dd];
            for (int g = 0; g < 3; g++) sz *= o->map[g] == dd ? t->grid[g] : 1;
            H(sz), H(olab[j][dd]);
        }
    }
#undef H
    x->iface = h;
    x->us = sr_block_us(t, &w->s->dev, ~0u); /* as if every output were the program's */
}

int sr_schedules(worker *w, int d) {
    const sr_opts *o = w->s->o;
    bstate *bs = &w->bs[d];
    int compute = 0; /* a block graph of iterators, accumulators and savers only is a copy */
    for (int i = 0; i < bs->b->n_nodes; i++) {
        ir_op op = bs->b->nodes[i].op;
        compute |= op != IR_OP_CONST && op != IR_OP_ITER && op != IR_OP_ACCUM && op != IR_OP_SAVE && op != IR_OP_RESHAPE;
    }
    dimcls D;
    if (!compute || sr_dims_of(bs->b, &D)) return -1;
    bs->n_tilings = 0;
    int cand[SR_DIM_SLOTS], nc = 0;
    for (int c = 0; c < D.nc; c++)
        if (D.split_ok[c]) cand[nc++] = c;
    int sizes[16], ns = 0, fls[16], nf = 0;
    for (int i = 0; i < o->n_grid && ns < 16; i++)
        if (o->grid[i] > 1) sizes[ns++] = o->grid[i];
    for (int i = 0; i < o->n_forloop && nf < 16; i++)
        if (o->forloop[i] > 1) fls[nf++] = o->forloop[i];
    /* grid: gd classes in increasing order (x, y, z), each with a size */
    int gd_max = o->max_grid_dims < 3 ? o->max_grid_dims : 3;
    for (int gd = 0; gd <= gd_max && gd <= nc; gd++) {
        int pick[3] = {0, 1, 2};
        for (;;) {
            int combos = 1;
            for (int g = 0; g < gd; g++) combos *= ns;
            for (int sc = 0; sc < combos; sc++) {
                int grid[3] = {1, 1, 1}, gc[3] = {-1, -1, -1}, x = sc;
                int64_t div[SR_DIM_SLOTS] = {0}, blocks = 1;
                for (int g = 0; g < gd; g++) {
                    grid[g] = sizes[x % ns], x /= ns;
                    gc[g] = cand[pick[g]];
                    blocks *= grid[g];
                }
                if (blocks > o->max_blocks) continue;
                int okg = 1;
                for (int g = 0; g < gd; g++) okg &= D.size[gc[g]] % grid[g] == 0;
                if (!okg) continue;
                for (int g = 0; g < gd; g++) div[gc[g]] = grid[g];
                for (int f = -1; f < nc * nf; f++) {
                    if (sr_stopped(w) || w->oom) break;
                    if (f < 0) {
                        tile_one(w, d, &D, grid, gc, 1, -1);
                        continue;
                    }
                    int fc = cand[f / nf], fl = fls[f % nf];
                    int64_t chunk = D.size[fc] / (div[fc] ? div[fc] : 1);
                    if (chunk % fl) continue;
                    tile_one(w, d, &D, grid, gc, fl, fc);
                }
            }
            /* next combination of gd classes out of nc */
            int g = gd - 1;
            while (g >= 0 && pick[g] == nc - gd + g) g--;
            if (g < 0) break;
            pick[g]++;
            for (int h = g + 1; h < gd; h++) pick[h] = pick[h - 1] + 1;
        }
    }
    return 0;
}
