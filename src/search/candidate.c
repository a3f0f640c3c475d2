/* candidate: a complete kernel graph becomes μGraphs that are screened, verified and kept
 * (search_int.h). Each graph-defined kernel of the kernel graph stands for a group of
 * interchangeable schedules; the operators are screened once, untiled and shrunk, then every
 * combination of schedules is materialised as a fresh graph and verified at full size. */
#include <stdio.h>
#include <inttypes.h>
#include <string.h>

#include "../eval/eval.h"
#include "../opt/opt.h"
#include "search_int.h"

/* ---- materialising a candidate: a fresh graph with only what reaches the outputs ---- */

/* live[i] |= node i reaches a node already marked live: one pass from the last node down
 * (operands come before their readers), no recursion however deep the graph. */
static void mark_live(const ir_graph *g, uint8_t *live) {
    for (int i = g->n_nodes - 1; i >= 0; i--)
        for (int k = 0; live[i] && k < g->nodes[i].n_in; k++) live[g->nodes[i].in[k]] = 1;
}

/* A copy of block graph b without unused constants, its savers as outputs. NULL on error. */
ir_graph *sr_clone_block(const ir_graph *b, mg_ctx *ctx) {
    ir_graph *c = ir_block_new(b->grid, b->threads, b->forloop);
    int *map = base_alloc(sizeof *map * (size_t)(b->n_nodes + 1));
    uint8_t *live = base_calloc((size_t)b->n_nodes + 1, 1);
    int ok = c && map && live;
    for (int k = 0; ok && k < b->n_kin; k++)
        ok = ir_block_add_kin(c, ctx, b->kin_name[k], b->kin_dtype[k], &b->kin_shape[k]) >= 0;
    for (int i = 0; ok && i < b->n_nodes; i++) live[i] = b->nodes[i].op == IR_OP_SAVE;
    if (ok) mark_live(b, live);
    for (int i = 0; ok && i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        if (!live[i] && n->op == IR_OP_CONST) continue;
        if (n->op == IR_OP_CONST) {
            map[i] = ir_add_const(c, ctx, n->lit, 0, 0);
        } else {
            ir_node p = *n;
            for (int k = 0; k < p.n_in; k++) p.in[k] = map[p.in[k]];
            map[i] = ir_add_node(c, ctx, &p);
        }
        ok = map[i] >= 0;
        if (ok && n->op == IR_OP_SAVE) ok = ir_add_output(c, ctx, map[i]) >= 0;
    }
    base_free(map);
    base_free(live);
    if (!ok) {
        ir_graph_free(c);
        return NULL;
    }
    return c;
}

/* The candidate of kernel graph k whose outputs are nodes outs[0..n_out): inputs named as the
 * program's, unused constants dropped, outputs named as the program's. */
static ir_graph *materialize(const search *s, const ir_graph *k, const int *outs, mg_ctx *ctx) {
    ir_graph *g = ir_graph_new();
    int *map = base_alloc(sizeof *map * (size_t)(k->n_nodes + 1));
    uint8_t *live = base_calloc((size_t)k->n_nodes + 1, 1);
    int ok = g && map && live;
    for (int j = 0; ok && j < s->n_out; j++) live[outs[j]] = 1;
    if (ok) mark_live(k, live);
    for (int i = 0; ok && i < k->n_nodes; i++) {
        const ir_node *n = &k->nodes[i];
        if (n->op == IR_OP_INPUT) {
            map[i] = ir_add_input(g, ctx, n->name, n->dtype, &n->shape);
        } else if (!live[i]) {
            continue;
        } else if (n->op == IR_OP_CONST) {
            map[i] = ir_add_const(g, ctx, n->lit, 0, 0);
        } else if (n->op == IR_OP_KERNEL) {
            if (n->index != 0) continue; /* added with its first output */
            ir_graph *body = sr_clone_block(n->body, ctx);
            int in[IR_MAX_IN];
            for (int j = 0; j < n->n_in; j++) in[j] = map[n->in[j]];
            /* the block's iterators name its inputs as the kernel graph does: an unnamed
             * intermediate gets a name, so the text parses back */
            for (int j = 0; body && j < n->n_in && ok; j++) {
                char nm[32];
                for (int v = in[j]; !g->nodes[in[j]].name; v++) {
                    snprintf(nm, sizeof nm, "v%d", v);
                    if (ir_find(g, nm) < 0) ok = ir_set_name(g, ctx, in[j], nm) >= 0;
                    if (!ok) break;
                }
                const char *dup = ok ? arena_strdup(&body->mem, g->nodes[in[j]].name) : NULL;
                if (dup) body->kin_name[j] = dup;
                else ok = 0;
            }
            int first = body ? ir_add_kernel(g, ctx, body, in, n->n_in, NULL, 0, 0) : -1;
            for (int j = 0; first >= 0 && j < n->body->n_outputs; j++) map[i + j] = first + j;
            map[i] = first;
        } else {
            ir_node p = *n;
            for (int j = 0; j < p.n_in; j++) p.in[j] = map[p.in[j]];
            map[i] = ir_add_node(g, ctx, &p);
        }
        ok = map[i] >= 0;
    }
    for (int j = 0; ok && j < s->n_out; j++) {
        const ir_node *po = &s->prog->nodes[s->out_node[j]];
        ok = ir_set_name(g, ctx, map[outs[j]], po->name) >= 0 && ir_add_output(g, ctx, map[outs[j]]) >= 0;
    }
    base_free(map);
    base_free(live);
    if (!ok) {
        ir_graph_free(g);
        return NULL;
    }
    return g;
}

/* FNV-1a of a text. */
uint64_t sr_text_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* ---- the screen: a candidate's operators, untiled and at small sizes ----
 * Abstract expressions forget which dim an operator reduces, so A_eq admits candidates that
 * are not equivalent (sum(k, x y) = sum(k, x) y holds only when y does not vary along k), and
 * every schedule of such an operator graph is one more candidate. Before the full-size
 * verification a candidate's operators are checked once, untiled and with every large input
 * dim shrunk, against the program shrunk alike; a failed screen rejects every schedule of
 * those operators. The screen only rejects; what is kept is verified at full size. */

/* Adds node i of g, untiled and shrunk as in sr_untile, to c (map: g's nodes to c's):
 * map[i] = its node, or -1 where it cannot be untiled (repeat, a reshape other than a
 * trailing dim of 1 appended or dropped, a partial sum) or on error. 0 if a name or output could not be set, else 1. */
static ir_graph *resize(const ir_graph *g, const ir_shape *kin, const int64_t *from, const int64_t *to,
                        const int *fewer, int n, int keep, mg_ctx *ctx);

/* Does reshape nd only add or drop a dim of size 1, last (a split reduction's partial sums set
 * side by side, or squeezed once summed) or first (the plain lowering's split-K partials, saved
 * with the split as a new leading dim)? Such a reshape moves no index. 1 last, 2 first, else 0. */
static int unit_reshape(const ir_graph *g, const ir_node *nd) {
    const ir_shape *a = &g->nodes[nd->in[0]].shape;
    int n = nd->n_ints < a->ndim ? nd->n_ints : a->ndim, last = 1, first = 1;
    for (int d = 0; d < n; d++) last &= nd->ints[d] == a->d[d];
    if (last && ((nd->n_ints == a->ndim + 1 && nd->ints[a->ndim] == 1) ||
                 (nd->n_ints == a->ndim - 1 && a->d[a->ndim - 1] == 1)))
        return 1;
    if (nd->n_ints == a->ndim + 1) /* [1, a...] */
        for (int d = 0; d < a->ndim; d++) first &= nd->ints[d + 1] == a->d[d];
    else if (nd->n_ints == a->ndim - 1) /* a = [1, ints...] */
        for (int d = 0; d < nd->n_ints; d++) first &= nd->ints[d] == a->d[d + 1];
    else first = 0;
    return first && (nd->n_ints == a->ndim + 1 ? nd->ints[0] == 1 : a->d[0] == 1) ? 2 : 0;
}

static int untile_node(const ir_graph *g, int i, ir_graph *c, int *map, const int64_t *from, const int64_t *to,
                       const int *fewer, int n, int keep, mg_ctx *ctx) {
    int is_block = g->is_block, ok = 1;
    const ir_node *nd = &g->nodes[i];
    ir_node p = *nd;
    for (int k = 0; k < p.n_in; k++) p.in[k] = map[nd->in[k]];
    if (is_block) p.name = NULL;
    switch (nd->op) {
    case IR_OP_INPUT:
        for (int dd = 0; dd < p.shape.ndim; dd++)
            for (int j = 0; j < n; j++)
                if (p.shape.d[dd] == from[j]) {
                    p.shape.d[dd] = to[j];
                    break;
                }
        map[i] = ir_add_input(c, ctx, p.name, p.dtype, &p.shape);
        break;
    case IR_OP_CONST: map[i] = ir_add_const(c, ctx, nd->lit, 0, 0); break;
    case IR_OP_RESHAPE: {
        int one = unit_reshape(g, nd);
        if (one) { /* resized (or untiled) with its operand */
            const ir_shape *a = &c->nodes[p.in[0]].shape;
            for (int d = 0; d < p.n_ints; d++)
                p.ints[d] = one == 1                    ? (d < a->ndim ? a->d[d] : 1)
                            : p.n_ints == a->ndim + 1 ? (d ? a->d[d - 1] : 1)
                                                        : a->d[d + 1];
            map[i] = ir_add_node(c, ctx, &p);
            if (map[i] >= 0 && p.name) ok = ir_set_name(c, ctx, map[i], p.name) >= 0;
        } else {
            map[i] = -1;
        }
        break;
    }
    case IR_OP_REPEAT: map[i] = -1; break;
    case IR_OP_CONCAT:
    case IR_OP_TRANSPOSE:
    case IR_OP_SLICE:
        if (keep) {
            map[i] = -1;
            break;
        }
        goto plain;
    case IR_OP_KERNEL: {
        if (nd->index) {
            map[i] = map[i - nd->index] + nd->index;
            break;
        }
        ir_shape in[IR_MAX_IN];
        for (int k = 0; k < p.n_in; k++) in[k] = c->nodes[p.in[k]].shape;
        ir_graph *body = resize(nd->body, in, from, to, fewer, n, keep, ctx);
        map[i] = body ? ir_add_kernel(c, ctx, body, p.in, p.n_in, NULL, 0, 0) : -1;
        for (int j = 0; map[i] >= 0 && j < nd->body->n_outputs && ok; j++)
            if (g->nodes[i + j].name) ok = ir_set_name(c, ctx, map[i] + j, g->nodes[i + j].name) >= 0;
        break;
    }
    default:
    plain:
        if (nd->op == IR_OP_SUM) {
            if (nd->group != g->nodes[nd->in[0]].shape.d[nd->dim]) {
                map[i] = -1;
                break;
            }
            p.group = 0;
        }
        if (!keep) {
            p.fmap = -1;
            for (int k = 0; k < 3; k++) p.map[k] = -1;
        }
        map[i] = ir_add_node(c, ctx, &p);
        if (map[i] >= 0 && nd->op == IR_OP_SAVE) ok = ir_add_output(c, ctx, map[i]) >= 0;
        if (map[i] >= 0 && p.name) ok = ir_set_name(c, ctx, map[i], p.name) >= 0;
    }
    return ok;
}

/* A copy of μGraph or program g with every graph-defined kernel untiled (grid 1, for-loop 1,
 * no imaps, fmaps or omaps) and every input dim of size from[i] made to[i] (i < n); a block
 * graph's kernel inputs have shapes kin[]. NULL if
 * g holds an operator whose meaning depends on a size (reshape, repeat, a partial sum) or on
 * error. */
/* Grid dim gd of block graph b splits which dims (every iterator's and saver's map[gd]): the
 * shrink index j when each of them has full size from[j] with fewer[j] set, else -1. */
static int grid_shrinks(const ir_graph *b, int gd, const int64_t *from, const int *fewer, int n) {
    int j = -1;
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *t = &b->nodes[i];
        int d = t->map[gd];
        if ((t->op != IR_OP_ITER && t->op != IR_OP_SAVE) || d < 0) continue;
        int64_t full = t->op == IR_OP_ITER ? b->kin_shape[t->index].d[d]
                                           : b->nodes[t->in[0]].shape.d[d] * b->grid[gd];
        int k = 0;
        while (k < n && !(fewer && fewer[k] && from[k] == full)) k++;
        if (k == n || (j >= 0 && k != j)) return -1;
        j = k;
    }
    return j;
}

static ir_graph *resize(const ir_graph *g, const ir_shape *kin, const int64_t *from, const int64_t *to,
                        const int *fewer, int n, int keep, mg_ctx *ctx) {
    int is_block = g->is_block, grid[3] = {1, 1, 1};
    for (int gd = 0; is_block && keep && gd < 3; gd++) { /* fewer blocks along a shrunk dim: its tiles kept */
        int j = g->grid[gd] > 1 ? grid_shrinks(g, gd, from, fewer, n) : -1;
        grid[gd] = j < 0 ? g->grid[gd] : (int)(to[j] / (from[j] / g->grid[gd]));
    }
    ir_graph *c = !is_block ? ir_graph_new()
                  : keep    ? ir_block_new(grid, g->threads, g->forloop)
                            : ir_block_new((int[]){1, 1, 1}, g->threads, 1);
    int *map = base_alloc(sizeof *map * (size_t)(g->n_nodes + 1));
    int ok = c && map;
    for (int k = 0; ok && is_block && k < g->n_kin; k++)
        ok = ir_block_add_kin(c, ctx, g->kin_name[k], g->kin_dtype[k], &kin[k]) >= 0;
    for (int i = 0; ok && i < g->n_nodes; i++) {
        ok = untile_node(g, i, c, map, from, to, fewer, n, keep, ctx);
        ok = ok && map[i] >= 0;
    }
    for (int j = 0; ok && !is_block && j < g->n_outputs; j++) ok = ir_add_output(c, ctx, map[g->outputs[j]]) >= 0;
    base_free(map);
    if (!ok) {
        ir_graph_free(c);
        return NULL;
    }
    return c;
}

/* A copy of μGraph or program g with every graph-defined kernel untiled (grid 1, for-loop 1,
 * no imaps, fmaps or omaps) and every input dim of size from[i] made to[i] (i < n); a block
 * graph's kernel inputs have shapes kin[]. NULL if
 * g holds an operator whose meaning depends on a size (reshape, repeat, a partial sum) or on
 * error. */
ir_graph *sr_untile(const ir_graph *g, const ir_shape *kin, const int64_t *from, const int64_t *to, int n,
                    mg_ctx *ctx) {
    return resize(g, kin, from, to, NULL, n, 0, ctx);
}

ir_graph *sr_resize(const ir_graph *g, const ir_shape *kin, const int64_t *from, const int64_t *to,
                    const int *fewer, int n, mg_ctx *ctx) {
    return resize(g, kin, from, to, fewer, n, 1, ctx);
}

/* Does the screen pass candidate u? 1 if so or if u cannot be screened, 0 if its operators,
 * untiled and shrunk, are not equivalent to the program shrunk alike. Verdicts are kept by
 * the text of the untiled graph, so each operator graph is screened once per worker. */
static int screen(worker *w, const ir_graph *u) {
    search *s = w->s;
    if (!s->screen_ref) return 1;
    ir_graph *v = sr_untile(u, NULL, s->shrink_from, s->shrink_to, s->n_shrink, &w->ctx);
    if (!v) return 1;
    strbuf sb = {0};
    ir_print_text(v, &sb);
    char *text = sb_take(&sb);
    int pass = 1;
    if (text) {
        uint64_t h = (sr_text_hash(text) | 2) & ~1ull; /* never 0; the low bit holds the verdict */
        base_free(text);
        int64_t at = -1;
        if (w->n_verdicts * 2 >= w->cap_verdicts) { /* grow the open-addressing table */
            int64_t cap = w->cap_verdicts ? w->cap_verdicts * 2 : 256;
            uint64_t *t = base_calloc((size_t)cap, sizeof *t);
            if (t) {
                for (int64_t i = 0; i < w->cap_verdicts; i++) {
                    if (!w->verdicts[i]) continue;
                    int64_t j = (int64_t)((w->verdicts[i] >> 1) % (uint64_t)cap);
                    while (t[j]) j = (j + 1) % cap;
                    t[j] = w->verdicts[i];
                }
                base_free(w->verdicts);
                w->verdicts = t, w->cap_verdicts = cap;
            }
        }
        if (w->cap_verdicts) {
            at = (int64_t)((h >> 1) % (uint64_t)w->cap_verdicts);
            while (w->verdicts[at] && (w->verdicts[at] & ~1ull) != h) at = (at + 1) % w->cap_verdicts;
        }
        if (at >= 0 && w->verdicts[at]) {
            pass = (int)(w->verdicts[at] & 1);
        } else {
            mg_verify_report rep;
            pass = vf_verify_ref(s->screen_ref, v, &w->ctx, &rep) != MG_OK || rep.verdict == MG_EQUIVALENT;
            if (at >= 0) w->verdicts[at] = h | (uint64_t)pass, w->n_verdicts++;
        }
    }
    ir_graph_free(v);
    return pass;
}


/* ---- verification at a smaller instance (docs/verify.md, "free dims") ----
 * A dim that neither the program nor the μGraph reduces over (no sum, max, rmsnorm or
 * matmul depth along it, no accumulator over a for-loop that moves along it, no layout
 * operator anywhere) holds independent copies of one computation: each index's outputs are
 * the same expressions of that index's inputs whatever the dim's size and however the grid
 * cuts it. Such a dim of size S is verified at S' = L t' instead (L: the least common multiple
 * of the parts the μGraph's kernels cut it into, so that every block keeps its tile shape's
 * form; t' >= 3 odd, S' a size found nowhere else in either graph): RMSNorm + Linear's 6,144
 * output columns become 3 x 64 = 192 for a grid of 64. Where any of this does not hold the
 * candidate is verified at full size. */

static int64_t gcd64_(int64_t a, int64_t b) {
    while (b) {
        int64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

/* The units a small instance of a dim of size S must be a multiple of, as least common
 * multiples over u's graph-defined kernels (0: no small instance of that kind; callers pass 1
 * or 0 in): unit[0] the parts the kernels cut the dim into (kernel input and output sizes over
 * their tiles' sizes: the same grids over smaller tiles), unit[1] the chunks each block takes
 * along a grid dim that splits only dims of size S (grid_shrinks: fewer blocks over the same
 * chunks; 0 when a kernel tiles such a dim without a grid dim, a for-loop alone walking it). */
static void units_of(const ir_graph *u, int64_t S, int64_t unit[2]) {
    static const int one = 1;
    for (int i = 0; i < u->n_nodes && (unit[0] || unit[1]); i++) {
        const ir_node *k = &u->nodes[i];
        if (k->op != IR_OP_KERNEL || k->index || !k->body) continue;
        const ir_graph *b = k->body;
        for (int j = 0; j < b->n_nodes; j++) {
            const ir_node *t = &b->nodes[j];
            if (t->op != IR_OP_ITER && t->op != IR_OP_SAVE) continue;
            const ir_shape *full = t->op == IR_OP_ITER ? &b->kin_shape[t->index] : &u->nodes[i + t->index].shape;
            const ir_shape *tile = t->op == IR_OP_ITER ? &t->shape : &b->nodes[t->in[0]].shape;
            if (full->ndim != tile->ndim) unit[0] = unit[1] = 0;
            for (int d = 0; d < full->ndim && (unit[0] || unit[1]); d++) {
                if (full->d[d] != S) continue;
                if (tile->d[d] < 1 || S % tile->d[d]) unit[0] = 0;
                int64_t p = unit[0] ? S / tile->d[d] : 1;
                unit[0] = unit[0] / gcd64_(unit[0], p) * p;
                if (unit[0] > S) unit[0] = 0;
                int gd = 0;
                while (gd < 3 && !(t->map[gd] == d && b->grid[gd] > 1)) gd++;
                int64_t c = gd < 3 ? S / b->grid[gd] : S;
                if (gd < 3 ? S % b->grid[gd] || grid_shrinks(b, gd, &S, &one, 1) < 0
                           : tile->d[d] * (t->op == IR_OP_ITER && t->fmap == d ? b->forloop : 1) != S)
                    unit[1] = 0;
                else if (unit[1]) unit[1] = unit[1] / gcd64_(unit[1], c) * c;
            }
        }
    }
}

/* Does any dim of any tensor of g (its block graphs' too) have size v? */
static int size_used(const ir_graph *g, int64_t v) {
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        for (int d = 0; d < n->shape.ndim; d++)
            if (n->shape.d[d] == v) return 1;
        if (n->op == IR_OP_KERNEL && !n->index && n->body && size_used(n->body, v)) return 1;
    }
    return 0;
}

/* Does program g reduce over a dim of size S (sum, max, rmsnorm, a matmul's depth)? */
static int reduces_over(const ir_graph *g, int64_t S) {
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        ir_kind k = ir_ops[n->op].kind;
        const ir_shape *a = n->n_in ? &g->nodes[n->in[0]].shape : NULL;
        if ((k == IR_KIND_REDUCE || k == IR_KIND_COMPOUND) && a->d[n->dim] == S) return 1;
        if (k == IR_KIND_MATMUL && a->d[a->ndim - 1] == S) return 1;
    }
    return 0;
}

/* The small instance of candidate u: sizes from[i] -> to[i], those of the program inputs'
 * sizes above 16 (the screen's list) that the program does not reduce over and that shrink
 * by half or more, each the smaller of the same grids over smaller tiles (a multiple of the
 * parts) and fewer blocks over the same chunks (fewer[i], a multiple of the chunks:
 * docs/verify.md). Returns how many (0: none). */
static int small_plan(const search *s, const ir_graph *u, int64_t *from, int64_t *to, int *fewer) {
    int n = 0;
    for (int j = 0; j < s->n_shrink && n < SR_MAX_SMALL_DIMS; j++) {
        int64_t S = s->shrink_from[j], unit[2] = {reduces_over(s->prog, S) ? 0 : 1, 0}, best[2] = {0, 0};
        unit[1] = unit[0];
        units_of(u, S, unit);
        for (int m = 0; m < 2; m++)
            for (int64_t t = 3, l = unit[m]; l && l * t * 2 <= S && !best[m]; t += 2) {
                int64_t v = l * t, taken = size_used(s->prog, v) || size_used(u, v);
                for (int q = 0; q < n; q++) taken |= to[q] == v;
                if (!taken) best[m] = v;
            }
        int m = !best[0] || (best[1] && best[1] < best[0]);
        if (best[m]) from[n] = S, to[n] = best[m], fewer[n] = m, n++;
    }
    return n;
}

/* Does h (g resized) reduce over the same extents as g everywhere, and does no summing
 * accumulator's for-loop move along a dim whose size changed? */
static int same_reductions(const ir_graph *g, const ir_graph *h) {
    if (g->n_nodes != h->n_nodes) return 0;
    int sums = 0, moves = 0; /* (block graphs) a summing accumulator; a loop along a resized dim */
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *a = &g->nodes[i], *b = &h->nodes[i];
        if (a->op != b->op || a->n_in != b->n_in) return 0;
        const ir_shape *ia = a->n_in ? &g->nodes[a->in[0]].shape : NULL, *ib = b->n_in ? &h->nodes[b->in[0]].shape : NULL;
        switch (ir_ops[a->op].kind) {
        case IR_KIND_REDUCE:
        case IR_KIND_COMPOUND:
            if (ia->d[a->dim] != ib->d[b->dim] || a->group != b->group) return 0;
            break;
        case IR_KIND_MATMUL:
            if (ia->d[ia->ndim - 1] != ib->d[ib->ndim - 1]) return 0;
            break;
        case IR_KIND_LAYOUT:
            if (a->op != IR_OP_RESHAPE || !unit_reshape(g, a)) return 0;
            break;
        default: break;
        }
        if (a->op == IR_OP_KERNEL && !a->index && a->body && (!b->body || !same_reductions(a->body, b->body)))
            return 0;
        if (a->op == IR_OP_ACCUM && a->fmap < 0 && g->forloop > 1) sums = 1;
        if (a->op == IR_OP_ITER && a->fmap >= 0 && g->kin_shape[a->index].d[a->fmap] != h->kin_shape[b->index].d[b->fmap])
            moves = 1;
    }
    return !(sums && moves);
}

/* The program's verifier side at sizes from -> to (n of them), made once per search and
 * shared; NULL if the program cannot be resized so (then candidates verify at full size). */
static vf_ref *small_ref(search *s, const int64_t *from, const int64_t *to, int n, mg_ctx *ctx) {
    vf_ref *ref = NULL;
    pthread_mutex_lock(&s->shrink_mu);
    int i = 0;
    for (; i < s->n_small; i++)
        if (s->small[i].n == n && !memcmp(s->small[i].from, from, sizeof *from * (size_t)n) &&
            !memcmp(s->small[i].to, to, sizeof *to * (size_t)n))
            break;
    if (i < s->n_small) ref = s->small[i].ref;
    else if (i < SR_MAX_SMALL) {
        struct sr_small *e = &s->small[s->n_small++];
        memset(e, 0, sizeof *e);
        e->n = n;
        memcpy(e->from, from, sizeof *from * (size_t)n), memcpy(e->to, to, sizeof *to * (size_t)n);
        e->prog = sr_resize(s->prog, NULL, from, to, NULL, n, ctx);
        if (e->prog && same_reductions(s->prog, e->prog) &&
            vf_ref_new(e->prog, NULL, ctx, s->o->verify_tests, s->o->seed, 1, &e->ref) == MG_OK)
            vf_ref_set_stop(e->ref, &s->stop);
        else
            e->ref = NULL;
        ref = e->ref;
    }
    pthread_mutex_unlock(&s->shrink_mu);
    return ref;
}

void sr_small_free(search *s) {
    for (int i = 0; i < s->n_small; i++) {
        vf_ref_free(s->small[i].ref);
        ir_graph_free(s->small[i].prog);
    }
    s->n_small = 0;
}

/* Verifies u at its small instance: 0 with *rep (its text says so), or -1 where there is
 * none (verify at full size). MUGEN_SEARCH_FULL_VERIFY=1 turns this off. */
static int verify_small(worker *w, const ir_graph *u, mg_verify_report *rep, mg_status *rc) {
    search *s = w->s;
    int64_t from[SR_MAX_SMALL_DIMS], to[SR_MAX_SMALL_DIMS];
    int fewer[SR_MAX_SMALL_DIMS], n = s->full_verify ? 0 : small_plan(s, u, from, to, fewer);
    if (!n) return -1;
    ir_graph *us = sr_resize(u, NULL, from, to, fewer, n, &w->ctx);
    vf_ref *ref = us && same_reductions(u, us) ? small_ref(s, from, to, n, &w->ctx) : NULL;
    if (!ref) {
        ir_graph_free(us);
        return -1;
    }
    *rc = vf_verify_ref(ref, us, &w->ctx, rep);
    ir_graph_free(us);
    char head[160];
    size_t len = (size_t)snprintf(head, sizeof head, "at a smaller instance (free dims");
    for (int i = 0; i < n && len < sizeof head; i++)
        len += (size_t)snprintf(head + len, sizeof head - len, "%s %" PRId64 " -> %" PRId64 "%s", i ? "," : "", from[i],
                                to[i], fewer[i] ? " in fewer blocks" : "");
    char *text = base_alloc(sizeof rep->text);
    if (text) { /* the verdict says where it was reached, first */
        size_t h = (size_t)snprintf(text, sizeof rep->text, "%s, docs/verify.md) ", head);
        memcpy(text + h, rep->text, sizeof rep->text - h - 1);
        text[sizeof rep->text - 1] = 0;
        memcpy(rep->text, text, sizeof rep->text);
        base_free(text);
    }
    return 0;
}

/* ---- candidates ---- */

/* The program's verifier side at full size (s->ref), built by the first candidate that needs
 * it, under ref_mu (the others wait for it); NULL with *rc set where it cannot be built
 * (MG_ERR_LIMIT: stopped). The same tests as if built before the search: they depend only on
 * the program and the seed. */
static vf_ref *full_ref(worker *w, mg_status *rc) {
    search *s = w->s;
    pthread_mutex_lock(&s->ref_mu);
    if (!s->ref && !s->ref_rc) {
        ev_set_stop(&s->stop); /* seconds at full size: a stop is seen inside them */
        s->ref_rc = vf_ref_new(s->prog, NULL, &w->ctx, s->o->verify_tests, s->o->seed, 1, &s->ref);
        ev_set_stop(NULL);
        if (s->ref) vf_ref_set_stop(s->ref, &s->stop);
        else snprintf(s->ref_msg, sizeof s->ref_msg, "%s", mg_ctx_error(&w->ctx));
    }
    vf_ref *ref = s->ref;
    *rc = s->ref_rc;
    pthread_mutex_unlock(&s->ref_mu);
    return ref;
}

static void add_found(worker *w, char *text, const ir_graph *u, const mg_verify_report *rep) {
    if (w->n_found == w->cap_found) {
        int cap = w->cap_found ? w->cap_found * 2 : 8;
        sr_found *f = base_realloc(w->found, sizeof *f * (size_t)cap);
        if (!f) {
            base_free(text);
            w->oom = 1;
            return;
        }
        w->found = f, w->cap_found = cap;
    }
    sr_found *f = &w->found[w->n_found++];
    memset(f, 0, sizeof *f);
    f->text = text;
    f->task = w->task;
    f->cost_us = sr_cost_us(u, &w->s->dev);
    f->float_error = rep->float_error;
    snprintf(f->verdict, sizeof f->verdict, "%.255s", rep->text);
    for (int i = 0; i < u->n_nodes; i++) {
        const ir_node *n = &u->nodes[i];
        if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST) continue;
        if (n->op == IR_OP_KERNEL && n->index) continue;
        f->kops++;
        if (n->op != IR_OP_KERNEL) continue;
        f->kernels++;
        for (int j = 0; j < n->body->n_nodes; j++) f->bops += n->body->nodes[j].op != IR_OP_CONST;
    }
    f->aeq = 1;
}

/* u's verdict into *rep and *rc: at its small instance where one decides it, else at full
 * size. Counts the search's first μGraph. */
static void verify_now(worker *w, const ir_graph *u, mg_verify_report *rep, mg_status *rc) {
    search *s = w->s;
    if (verify_small(w, u, rep, rc) < 0) {
        vf_ref *ref = full_ref(w, rc);
        if (ref) *rc = vf_verify_ref(ref, u, &w->ctx, rep);
    }
    if (*rc == MG_OK && rep->verdict == MG_EQUIVALENT && __atomic_fetch_add(&s->found, 1, __ATOMIC_RELAXED) == 0)
        s->first_s = base_now_s() - s->t0;
}

/* Keeps u (text, both owned) in w->found when its verdict is equivalent, else counts it
 * rejected (not when stopped midway: neither kept nor rejected). */
static void keep(worker *w, char *text, ir_graph *u, mg_status rc, const mg_verify_report *rep) {
    if (rc == MG_OK && rep->verdict == MG_EQUIVALENT) add_found(w, text, u, rep);
    else {
        w->rejected += rc != MG_ERR_LIMIT;
        base_free(text);
    }
    ir_graph_free(u);
}

/* Hands u and text to the queue while a thread is idle (a task's candidates are otherwise
 * verified by the thread that made them, and the last tasks of a search would run their
 * verifications on one thread while the others wait: QKNorm b=1 spent 70 of its 112 s so).
 * 1 when queued; 0 to verify here. */
static int queue_job(worker *w, ir_graph *u, char *text) {
    search *s = w->s;
    if (w->task < 0 || s->n_ranks > 1 || (!s->queue_all && !__atomic_load_n(&s->idle, __ATOMIC_RELAXED)))
        return 0;
    sr_job *j = base_calloc(1, sizeof *j);
    if (!j) return 0;
    if (w->n_jobs == w->cap_jobs) {
        int cap = w->cap_jobs ? 2 * w->cap_jobs : 16;
        sr_job **a = base_realloc(w->jobs, sizeof *a * (size_t)cap);
        if (!a) return base_free(j), 0;
        w->jobs = a, w->cap_jobs = cap;
    }
    pthread_mutex_lock(&s->mu);
    if (s->n_queue == s->cap_queue) {
        int cap = s->cap_queue ? 2 * s->cap_queue : 16;
        sr_job **a = base_realloc(s->queue, sizeof *a * (size_t)cap);
        if (!a) {
            pthread_mutex_unlock(&s->mu);
            return base_free(j), 0;
        }
        s->queue = a, s->cap_queue = cap;
    }
    *j = (sr_job){.owner = w, .u = u, .text = text};
    s->queue[s->n_queue++] = j, w->jobs[w->n_jobs++] = j;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 1;
}

/* Takes the queued job at q (under s->mu) for the calling thread. */
static sr_job *take_job(search *s, int q) {
    sr_job *j = s->queue[q];
    memmove(&s->queue[q], &s->queue[q + 1], sizeof *s->queue * (size_t)(--s->n_queue - q));
    j->taken = 1;
    return j;
}

/* Verifies job j (taken from the queue) on thread w and marks it done. */
static void run_job(worker *w, sr_job *j) {
    double t0 = base_now_s();
    verify_now(w, j->u, &j->rep, &j->rc);
    w->verify_s += base_now_s() - t0;
    pthread_mutex_lock(&w->s->mu);
    j->done = 1;
    pthread_cond_broadcast(&w->s->cv);
    pthread_mutex_unlock(&w->s->mu);
}

void sr_finish_jobs(worker *w) {
    search *s = w->s;
    if (!w->n_jobs) return;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        int q = -1;
        for (int i = 0; i < w->n_jobs && q < 0; i++)
            if (!w->jobs[i]->taken) /* still queued: this thread takes it */
                for (q = 0; s->queue[q] != w->jobs[i]; q++) {
                }
        if (q >= 0) {
            sr_job *j = take_job(s, q);
            pthread_mutex_unlock(&s->mu);
            run_job(w, j);
            pthread_mutex_lock(&s->mu);
            continue;
        }
        int all = 1;
        for (int i = 0; i < w->n_jobs; i++) all &= w->jobs[i]->done;
        if (all) break;
        pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < w->n_jobs; i++) {
        sr_job *j = w->jobs[i];
        keep(w, j->text, j->u, j->rc, &j->rep);
        base_free(j);
    }
    w->n_jobs = 0;
}

void sr_help(worker *w) {
    search *s = w->s;
    if (s->n_ranks > 1) return;
    pthread_mutex_lock(&s->mu);
    __atomic_add_fetch(&s->idle, 1, __ATOMIC_RELAXED);
    while (s->busy > 0 || s->n_queue > 0) {
        if (!s->n_queue) {
            pthread_cond_wait(&s->cv, &s->mu);
            continue;
        }
        sr_job *j = take_job(s, 0);
        pthread_mutex_unlock(&s->mu);
        run_job(w, j);
        pthread_mutex_lock(&s->mu);
    }
    __atomic_sub_fetch(&s->idle, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&s->mu);
}

/* Candidate u (owned): deduplicated by text, verified, kept if equivalent (search_int.h). */
void sr_verify_one(worker *w, ir_graph *u) {
    search *s = w->s;
    strbuf sb = {0};
    ir_print_text(u, &sb);
    char *text = sb_take(&sb);
    if (!text) {
        ir_graph_free(u);
        w->oom = 1;
        return;
    }
    for (int i = 0; i < w->n_found + w->n_jobs; i++)
        if (!strcmp(i < w->n_found ? w->found[i].text : w->jobs[i - w->n_found]->text, text)) {
            w->duplicates++;
            base_free(text);
            ir_graph_free(u);
            return;
        }
    /* what codegen would run: the optimizer's plan must fit in shared memory (the block
     * check's estimate counts neither f32 storage of computed values nor pipeline stages) */
    op_plan *plan = NULL;
    mg_status prc = op_plan_new(u, &w->ctx, &s->dev, &op_opts_default, &plan);
    op_plan_free(plan);
    if (prc == MG_ERR_SHAPE) {
        w->unfit++;
        base_free(text);
        ir_graph_free(u);
        return;
    }
    if (queue_job(w, u, text)) return;
    mg_verify_report rep; /* its first field test is Mirage's fingerprint screen */
    mg_status rc = MG_OK;
    verify_now(w, u, &rep, &rc);
    keep(w, text, u, rc, &rep);
}

/* A kernel graph whose tensors outs[] match the program's outputs (A_eq-equal, so every
 * μGraph found has aeq set). Each of its kernels stands for a group of interchangeable
 * schedules (tiled_kernel), so this is one candidate per combination of them: the operators
 * are screened once (screen()), then every combination is materialised and verified. */
static void candidate_in(worker *w, const int *outs) {
    search *s = w->s;
    int ds[SR_MAX_KOPS], nd = 0, idx[SR_MAX_KOPS] = {0};
    ir_graph *rep[SR_MAX_KOPS];
    int64_t combos = 1;
    for (int d = 0; d < SR_MAX_KOPS; d++)
        if (w->bs[d].active) {
            rep[nd] = w->k->nodes[w->bs[d].knode].body;
            ds[nd++] = d, combos *= w->bs[d].n_in_group;
        }
    w->candidates += combos;
    ir_graph *u = materialize(s, w->k, outs, &w->ctx);
    if (!u || !screen(w, u)) {
        w->rejected += combos;
        w->screened += u ? combos : 0;
        ir_graph_free(u);
        return;
    }
    ir_graph_free(u);
    for (int64_t c = 0; c < combos && !w->oom; c++) {
        if (c && sr_stopped_at(w, 1)) break;
        for (int i = 0; i < nd; i++) {
            const bstate *bs = &w->bs[ds[i]];
            w->k->nodes[bs->knode].body = bs->tilings[bs->in_group[idx[i]]].t;
        }
        u = materialize(s, w->k, outs, &w->ctx);
        if (u) sr_verify_one(w, u);
        else w->rejected++;
        for (int i = 0; i < nd && ++idx[i] == w->bs[ds[i]].n_in_group; i++) idx[i] = 0;
    }
    for (int i = 0; i < nd; i++) w->k->nodes[w->bs[ds[i]].knode].body = rep[i];
}

/* sr_candidate: candidate_in, its time counted as verification time (search_int.h). */
void sr_candidate(worker *w, const int *outs) {
    double t0 = base_now_s();
    candidate_in(w, outs);
    w->verify_s += base_now_s() - t0;
}
