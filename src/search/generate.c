/* generate: the expression-guided generator, Algorithm 1 of Mirage (search.h, docs/search.md).
 * Depth-first over kernel operators in rank order (kgen), each graph-defined kernel with a
 * nested depth-first generation of its block graph's operators (start_block, bgen) and then of
 * its schedules (tile, schedule.c), each schedule group standing as one kernel operator from
 * which the kernel level goes on (tiled_kernel -> kgen). One mutual recursion, kept in one
 * file; what it only calls (dims, schedules, candidates) lives in its own. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <pthread.h>

#include "search_int.h"

/* ---- the rank (Mirage §4.1, search_int.h) ---- */

static int key_cmp(const key *a, const key *b) {
    for (int i = 0; i < SR_KEY_LEN; i++)
        if (a->v[i] != b->v[i]) return a->v[i] < b->v[i] ? -1 : 1;
    return 0;
}
static key make_key(const int *in, int n, int type, int64_t attr) {
    key k;
    int s[IR_MAX_IN];
    for (int i = 0; i < n; i++) s[i] = in[i];
    for (int i = 1; i < n; i++) /* insertion sort, decreasing */
        for (int j = i; j > 0 && s[j] > s[j - 1]; j--) {
            int t = s[j];
            s[j] = s[j - 1], s[j - 1] = t;
        }
    for (int i = 0; i < IR_MAX_IN; i++) k.v[i] = i < n ? s[i] : -1000;
    k.v[IR_MAX_IN] = type, k.v[IR_MAX_IN + 1] = attr, k.v[IR_MAX_IN + 2] = 0;
    return k;
}
/* key_cmp(make_key(in, n, type, attr), last) > 0, without building the key (the block
 * level asks it of every operator it tries) */
static int key_above(const int *in, int n, int type, int64_t attr, const key *last) {
    int s0 = n > 0 ? in[0] : -1000, s1 = n > 1 ? in[1] : -1000;
    if (n > 2) {
        key k = make_key(in, n, type, attr);
        return key_cmp(&k, last) > 0;
    }
    if (s1 > s0) {
        int t = s0;
        s0 = s1, s1 = t;
    }
    for (int i = 0; i < SR_KEY_LEN; i++) {
        int64_t x = i == 0 ? s0 : i == 1 ? s1 : i < IR_MAX_IN ? -1000 : i == IR_MAX_IN ? type
                    : i == IR_MAX_IN + 1 ? attr : 0;
        if (x != last->v[i]) return x > last->v[i];
    }
    return 0;
}
static const key key_min = {{-2000, -2000, -2000, -2000, -2000, -2000, -2000, -2000, -2000, -2000, -2000}};

/* ---- the kernel level ---- */

/* The interface of the kernel-graph prefix: per tensor its abstract expression, shape,
 * dtype and whether it is used yet. Two prefixes with the same interface have the same
 * continuations up to the values of their tensors (Mirage removes such duplicates by their
 * fingerprints); only the first one met in a task is extended, the others are still
 * checked as complete candidates. Returns 1 if the interface was seen before in this task. */
static int seen(worker *w) {
    uint64_t h = 1469598103934665603ull;
#define H(v) (h = (h ^ (uint64_t)(int64_t)(v)) * 1099511628211ull)
    for (int i = 0; i < w->n_t; i++) {
        const ir_node *n = &w->k->nodes[w->t[i].node];
        H(w->t[i].term), H(w->t[i].uses > 0), H(n->dtype), H(n->shape.ndim);
        for (int d = 0; d < n->shape.ndim; d++) H(n->shape.d[d]);
    }
#undef H
    h |= 1;
    if ((w->n_memo + 1) * 2 > w->cap_memo) {
        int64_t cap = w->cap_memo ? w->cap_memo * 2 : 4096;
        uint64_t *m = base_calloc((size_t)cap, sizeof *m);
        if (!m) return 0;
        for (int64_t i = 0; i < w->cap_memo; i++) {
            if (!w->memo[i]) continue;
            int64_t j = (int64_t)(w->memo[i] & (uint64_t)(cap - 1));
            while (m[j]) j = (j + 1) & (cap - 1);
            m[j] = w->memo[i];
        }
        base_free(w->memo);
        w->memo = m, w->cap_memo = cap;
    }
    int64_t j = (int64_t)(h & (uint64_t)(w->cap_memo - 1));
    for (; w->memo[j]; j = (j + 1) & (w->cap_memo - 1))
        if (w->memo[j] == h) return 1;
    w->memo[j] = h, w->n_memo++;
    return 0;
}

static void kgen(worker *w, const key *last);
static int k_operands_ok(const worker *w, const int *ta, int n);

/* The most operators on any path from a tensor to the outputs that ops_left more kernel
 * operators can still apply, kernels_left of them graph-defined (each of those can apply
 * max_bops less its iterator, accumulator and saver). */
static int capacity(const search *s, int ops_left, int kernels_left) {
    int k = ops_left < kernels_left ? ops_left : kernels_left, per = s->o->max_bops - 3;
    if (k < 0) k = 0;
    return k * (per > 1 ? per : 1) + (ops_left - k);
}

/* Can a tensor that the outputs must still use (term) reach them within cap operators?
 * (ae_up; with pruning off, always.) Counts the pruned ones. */
static int reaches(worker *w, int32_t term, int cap) {
    if (!w->s->o->prune || ae_up(&w->q, term) <= cap) return 1;
    w->pruned++;
    return 0;
}

/* reaches() for a block tensor, its ae_up stored (btens.up) */
static int reaches_up(worker *w, int32_t up, int cap) {
    if (!w->s->o->prune || up <= cap) return 1;
    w->pruned++;
    return 0;
}

/* Is term allowed (pruning)? Counts the pruned ones. */
int sr_keep_term(worker *w, int32_t term) {
    if (term < 0) {
        w->oom = 1;
        return 0;
    }
    if (!w->s->o->prune || ae_is_sub(&w->q, term)) return 1;
    w->pruned++;
    return 0;
}

/* The ops that the kernel and block levels share: elementwise, matmul, sum, concat.
 * Operands a, b index the level's tensor list, or -2 - c for program constant c. */
/* Does the search place op as an operator of kind k (ops.def's search column)? The unary
 * and binary ones are tried in the table's order. */
static int placed(int op, ir_kind k) { return ir_ops[op].search && ir_ops[op].kind == k; }
int sr_op_on(const search *s, int op) { return (int)(s->ops >> op & 1); }

/* The --ops list as a bit set over the operators the search places; 0 and a message on an
 * unknown name. */
uint64_t sr_ops_mask(const char *list, char *why, size_t n) {
    uint64_t m = 0;
    const char *p = list;
    while (p && *p) {
        size_t len = strcspn(p, ",");
        int hit = -1;
        for (int k = 0; k < IR_OP_COUNT && hit < 0; k++)
            if (ir_ops[k].search && strlen(ir_ops[k].name) == len && !strncmp(ir_ops[k].name, p, len)) hit = k;
        if (hit < 0) {
            char names[256];
            snprintf(why, n, "unknown operator '%.*s' in the operator list; the search places %s", (int)len, p,
                     ir_search_op_names(names, sizeof names));
            return 0;
        }
        m |= 1ull << hit;
        p += len + (p[len] == ',');
    }
    if (!m) snprintf(why, n, "the operator list is empty");
    return m;
}

/* Kernel-level: tries pre-defined op p over tensors ta[] (n_in of them). */
/* Is kernel tensor x (or constant, x < 0) partial sums: a split reduction's blocks side by
 * side along a last dim of more than one (a rank above every tensor of the program's)? */
static int partial(const worker *w, int x) {
    if (x < 0) return 0;
    const ir_shape *sh = &w->k->nodes[w->t[x].node].shape;
    return sh->ndim > w->s->max_rank && sh->d[sh->ndim - 1] > 1;
}

/* Partial sums stay linear until they are summed: an operator over them is right for every
 * split only if it commutes with that sum. A sum (the combine itself, or over another dim),
 * partials added to partials, and partials times or over a tensor constant along the parts
 * (same rank, last dim 1: a total already summed) pass; anything else (exp, sqr, matmul,
 * partials over partials, a total over partials) would be a wrong combination that the
 * abstract expressions admit (sum over div is an unsound pruning axiom) and only a
 * verification at a larger size rejects. */
static int linear_in_partials(const worker *w, const ir_node *p, const int *ta) {
    int pa = partial(w, ta[0]), pb = p->n_in > 1 && partial(w, ta[1]);
    if (!pa && !pb) return 1;
    if (p->op == IR_OP_SUM) return 1;
    if (p->op == IR_OP_ADD || p->op == IR_OP_SUB) return pa && pb;
    if (p->op != IR_OP_MUL && (p->op != IR_OP_DIV || !pa)) return 0;
    if (pa && pb) return 0;
    int o = pa ? ta[1] : ta[0];
    if (o < 0) return 1; /* a program constant */
    const ir_shape *a = &w->k->nodes[w->t[pa ? ta[0] : ta[1]].node].shape, *b = &w->k->nodes[w->t[o].node].shape;
    return b->ndim == a->ndim && b->d[b->ndim - 1] == 1;
}

static void k_try(worker *w, const key *last, ir_node p, const int *ta, int64_t attr) {
    key kk = make_key(ta, p.n_in, p.op, attr);
    if (key_cmp(&kk, last) <= 0 || !k_operands_ok(w, ta, p.n_in) || !linear_in_partials(w, &p, ta)) return;
    int32_t tin[2];
    for (int i = 0; i < p.n_in; i++) {
        int x = ta[i];
        p.in[i] = x >= 0 ? w->t[x].node : w->const_node[-2 - x];
        tin[i] = x >= 0 ? w->t[x].term : w->const_term[-2 - x];
    }
    int32_t term = ae_op_term(&w->tab, w->k, &p, tin[0], p.n_in > 1 ? tin[1] : -1);
    if (!sr_keep_term(w, term)) return;
    int node = ir_add_node(w->k, NULL, &p); /* most tries do not fit: no message */
    if (node < 0) return;
    int32_t cls = ae_class(&w->q, term);
    for (int i = 0; i < w->n_t; i++) /* recomputes (abstractly) what is there already */
        if ((w->t[i].term == term || (cls >= 0 && ae_class(&w->q, w->t[i].term) == cls)) && !memcmp(&w->k->nodes[w->t[i].node].shape, &w->k->nodes[node].shape, sizeof(ir_shape))) {
            w->k->n_nodes--;
            return;
        }
    ktens *nt = &w->t[w->n_t];
    *nt = (ktens){node, 0, term, {0}};
    if (!sr_labels_op(w->s, w->k, &w->k->nodes[node], ta[0] >= 0 ? w->t[ta[0]].lab : NULL,
                   p.n_in > 1 && ta[1] >= 0 ? w->t[ta[1]].lab : NULL, nt->lab)) {
        w->k->n_nodes--;
        return;
    }
    for (int i = 0; i < p.n_in; i++)
        if (ta[i] >= 0) w->t[ta[i]].uses++;
    int lf = w->last_first;
    w->last_first = w->n_t;
    w->n_t++, w->n_kops++;
    kgen(w, &kk);
    w->n_t--, w->n_kops--;
    w->last_first = lf;
    for (int i = 0; i < p.n_in; i++)
        if (ta[i] >= 0) w->t[ta[i]].uses--;
    w->k->n_nodes--;
}

/* Exact and default rules for a kernel op reading tensors ta[0..n): after the op the kernel
 * graph must be able to finish, so the last allowed op reads every tensor not used yet;
 * and (the chain rule, docs/search.md) an op after the first reads something the op
 * before it produced. */
static int k_operands_ok(const worker *w, const int *ta, int n) {
    const search *s = w->s;
    if (w->n_kops > 0) {
        int chain = 0;
        for (int i = 0; i < n; i++) chain |= ta[i] >= w->last_first;
        if (!chain) return 0;
    }
    if (w->n_kops == w->max_kops - 1)
        for (int t = s->n_in; t < w->n_t; t++) {
            if (w->t[t].uses) continue;
            int read = 0;
            for (int i = 0; i < n; i++) read |= ta[i] == t;
            if (!read) return 0;
        }
    return 1;
}

/* Is this depth-0 choice the task being explored? (Counts choices when w->task < 0.) */
static int my_task(worker *w, int depth0) {
    if (!depth0) return 1;
    return w->counter++ == w->task;
}

static void bgen(worker *w, int d, const key *last);
static void kgen_kernels(worker *w, const key *last);

/* The prefix's tensors that match the program's outputs: outs[j] the latest tensor (inputs
 * aside) A_eq-equal to output j, of its dtype and shape. 1 if every output has one. */
static int match_outputs(worker *w, int *outs) {
    const search *s = w->s;
    int ok = 1;
    for (int j = 0; j < s->n_out && ok; j++) {
        const ir_node *po = &s->prog->nodes[s->out_node[j]];
        outs[j] = -1;
        for (int i = w->n_t - 1; i >= s->n_in && outs[j] < 0; i--) {
            const ir_node *n = &w->k->nodes[w->t[i].node];
            if (n->dtype == po->dtype && !memcmp(&n->shape, &po->shape, sizeof n->shape) &&
                ae_is_root(&w->q, w->t[i].term, j))
                outs[j] = i;
        }
        ok = outs[j] >= 0;
    }
    return ok;
}

/* The prefix's tensors, inputs aside, that nothing reads and that are not one of outs[]. */
static int unused_tensors(const worker *w, const int *outs) {
    const search *s = w->s;
    int unused = 0;
    for (int i = s->n_in; i < w->n_t; i++) {
        int is_out = 0;
        for (int j = 0; j < s->n_out; j++) is_out |= outs[j] == i;
        unused += !is_out && w->t[i].uses == 0;
    }
    return unused;
}

/* A prefix of one operator or more: a candidate if complete (every program output matched
 * by an A_eq-equal tensor of its shape, and every other tensor used). 1 if it is to be
 * extended. */
static int visit_prefix(worker *w) {
    const search *s = w->s;
    int outs[AE_MAX_ROOTS], ok = match_outputs(w, outs);
    if (ok && !unused_tensors(w, outs) && w->n_kops >= w->min_kops) {
        int nodes[AE_MAX_ROOTS];
        for (int j = 0; j < s->n_out; j++) nodes[j] = w->t[outs[j]].node;
        sr_candidate(w, nodes);
    }
    /* a prefix that already holds the outputs is not extended: what it would add could
     * only feed tensors nobody needs */
    if (ok || w->n_kops >= w->max_kops || seen(w)) return 0;
    int cap = capacity(s, w->max_kops - w->n_kops, s->o->max_kernels - w->n_kernels);
    for (int i = 0; i < w->n_t; i++)
        if (!w->t[i].uses && !reaches(w, w->t[i].term, cap)) return 0;
    return 1;
}

/* The next kernel operator, a pre-defined one: unary, binary (over tensors and constants),
 * matmul, sum. Each one at depth 0 is a task point (my_task). */
static void kgen_predefined(worker *w, const key *last, int depth0) {
    const search *s = w->s;
    int n = w->n_t;
    for (int i = 0; i < n; i++)
        for (int op = 0; op < IR_OP_COUNT; op++) {
            if (!placed(op, IR_KIND_UNARY) || !sr_op_on(s, op) || !my_task(w, depth0)) continue;
            ir_node p = {.op = (ir_op)op, .n_in = 1};
            k_try(w, last, p, (int[]){i}, 0);
        }
    for (int i = 0; i < n; i++)
        for (int j = -1 - s->n_const; j < n; j++) {
            if (j == -1 || j == i) continue;
            for (int op = 0; op < IR_OP_COUNT; op++) {
                if (!placed(op, IR_KIND_BINARY) || (ir_ops[op].commutative && j >= 0 && j < i)) continue;
                if (!sr_op_on(s, op) || !my_task(w, depth0)) continue;
                ir_node p = {.op = (ir_op)op, .n_in = 2};
                k_try(w, last, p, (int[]){i, j}, 0);
            }
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (!sr_op_on(s, IR_OP_MATMUL) || !my_task(w, depth0)) continue;
            ir_node p = {.op = IR_OP_MATMUL, .n_in = 2};
            k_try(w, last, p, (int[]){i, j}, 0);
        }
    for (int i = 0; i < n; i++) {
        ir_shape sh = w->k->nodes[w->t[i].node].shape;
        for (int d = 0; d < sh.ndim; d++) {
            if (sh.d[d] < 2 || !sr_op_on(s, IR_OP_SUM) || !my_task(w, depth0)) continue;
            ir_node p = {.op = IR_OP_SUM, .n_in = 1, .dim = d, .group = sh.d[d]};
            k_try(w, last, p, (int[]){i}, d);
        }
    }
}

/* The kernel level (Algorithm 1): visits the prefix built so far, then extends it by one
 * operator of larger rank than last, pre-defined or graph-defined. */
static void kgen(worker *w, const key *last) {
    int depth0 = w->n_kops == 0;
    if (!depth0) {
        w->states++;
        if (sr_stopped(w) || w->oom) return;
        if (!visit_prefix(w)) return;
    }
    kgen_predefined(w, last, depth0);
    kgen_kernels(w, last);
}

/* ---- graph-defined kernels ----
 * A kernel's block graph is generated in two phases (docs/search.md, "Block graphs"): its
 * operators first, untiled (grid 1, for-loop 1: every iterator reads its whole input), then,
 * once the operator graph is complete, every schedule from the candidate sets: grid dims and
 * for-loop, with imaps, fmaps, accumulator fmaps and omaps derived from the dims each one
 * splits. Pruning in the first phase uses the untiled expressions; each tiled instance is
 * checked again with its own. */

/* Can a kernel at depth d reading kernel tensors in[0..n_in) still lead to a complete graph?
 * Every other unused tensor must reach the outputs through what may follow it, and with
 * pruning, the last kernel must be able to build a root from its inputs within --max-bops.
 * Counts the pruned ones. */
static int block_viable(worker *w, int d, const int *in, int n_in) {
    const search *s = w->s;
    int after = capacity(s, w->max_kops - d - 1, s->o->max_kernels - w->n_kernels - 1);
    for (int i = 0; i < w->n_t; i++) {
        int read = 0;
        for (int k = 0; k < n_in; k++) read |= in[k] == i;
        if (!read && !w->t[i].uses && !reaches(w, w->t[i].term, after)) return 0;
    }
    if (s->o->prune && d == w->max_kops - 1) {
        /* the last kernel writes program outputs: it needs its iterators, the operators
         * that build a root from its inputs (at least ae_min_ops), an accumulator, a saver */
        int32_t have[IR_MAX_IN];
        for (int k = 0; k < n_in; k++) have[k] = w->t[in[k]].term;
        int lb = ae_min_ops(&w->q, have, n_in);
        if (lb == INT32_MAX || n_in + lb + 2 > s->o->max_bops) {
            w->pruned++;
            return 0;
        }
    }
    return 1;
}

/* The new block graph's kernel inputs (kernel tensors in[]) and the program's constants. 1,
 * or 0 on error. */
static int add_kins(worker *w, bstate *bs, const int *in, int n_in) {
    const search *s = w->s;
    ir_graph *b = bs->b;
    int ok = 1;
    for (int k = 0; k < n_in && ok; k++) {
        const ir_node *n = &w->k->nodes[w->t[in[k]].node];
        char nm[16];
        snprintf(nm, sizeof nm, "in%d", k);
        ok = ir_block_add_kin(b, &w->ctx, n->name ? n->name : nm, n->dtype, &n->shape) >= 0;
        bs->kin[k] = in[k];
    }
    for (int i = 0; i < s->n_const && ok; i++) {
        ok = (bs->const_node[i] = ir_add_const(b, &w->ctx, s->const_lit[i], 0, 0)) >= 0;
        if (ok) memset(bs->lab[bs->const_node[i]], 0, sizeof bs->lab[0]);
    }
    return ok;
}

/* The unary and binary operators the search places, in the table's order, and each
 * operator's abstract-expression root kind (ae_op_root): read once, for the block level's
 * loops (which ran over the whole table for every tensor and pair). */
static struct {
    int n_un, n_bin;
    int8_t un[IR_OP_COUNT], bin[IR_OP_COUNT], root[IR_OP_COUNT];
} pl;
static pthread_once_t pl_once = PTHREAD_ONCE_INIT;
static void pl_init(void) {
    for (int op = 0; op < IR_OP_COUNT; op++) {
        pl.root[op] = (int8_t)ae_op_root(op);
        if (placed(op, IR_KIND_UNARY)) pl.un[pl.n_un++] = (int8_t)op;
        if (placed(op, IR_KIND_BINARY)) pl.bin[pl.n_bin++] = (int8_t)op;
    }
    MG_ASSERT(pl.n_un <= SR_UN_OPS && pl.n_bin < SR_PAIR_OPS); /* bstate's masks and terms */
}

/* The operator kinds block tensor (or constant, -2 - c) x may be an operand of, as a mask
 * (ae_class_parents): with pruning, an operator of a kind no node has x's class under is
 * no subexpression and is not tried (most would be built only to be pruned; nTrans tried
 * 170 M for 7 M states). Every kind where nothing is pruned, and at a depth-0 kernel's first
 * operators (task points, numbered as b_try meets them). */
static uint32_t may_mask(const worker *w, const bstate *bs, int x) {
    if (!w->s->o->prune || (w->n_kops == 0 && bs->n_ops == bs->n_kin)) return ~0u;
    return x >= 0 ? bs->t[x].parents : w->const_parents[-2 - x];
}
/* May op be applied over operands whose masks (may_mask) intersect in m? */
static int may_op(int op, uint32_t m) { return pl.root[op] < 0 || (m >> pl.root[op] & 1); }

/* Bits of bstate.pair_mask past the binary operators (pl.bin) */
enum { PM_MATMUL = 1 << 14, PM_CONCAT = 1 << 15 };

/* Are block tensors (or constants) x, y of classes that one operator may read together
 * (b_operands: no loop value with an accumulated one)? */
static int classes_mix(const bstate *bs, int x, int y) {
    int cx = x >= 0 ? bs->t[x].cls : IR_INVARIANT, cy = y >= 0 ? bs->t[y].cls : IR_INVARIANT;
    return !((cx == IR_LOOP && cy == IR_POST) || (cx == IR_POST && cy == IR_LOOP));
}

/* Is operator p (its operands' nodes in p->in[], terms a, b) a subexpression as b_try's
 * pruning asks it of the e-graph (ae_op_class: no abstract expression counts as yes)? Then
 * *term gets its term (-1 if out of memory), its class looked up once (b_try's later
 * questions read it from the query's table). */
static int sub_op(worker *w, const bstate *bs, ir_node *p, int32_t a, int32_t ca, int32_t b, int32_t cb,
                  int32_t *term) {
    int32_t c = ae_op_class_of(&w->q, bs->b, p, ca, cb);
    if (c != -2 && !ae_class_is_sub(&w->q, c)) return 0;
    *term = ae_op_term(&w->tab, bs->b, p, a, b);
    if (*term >= 0 && c != -2) {
        if (w->s->check) MG_ASSERT(ae_class(&w->q, *term) == c); /* MUGEN_CHECK=1: looked up */
        else ae_class_note(&w->q, *term, c);
    }
    return 1;
}

/* The binary operators that may apply over block tensor x first and tensor (or constant,
 * -2 - c) y second with pruning, where b_try would not prune them at once: placed, over
 * classes that mix, of a kind both operands' classes are operands of, with a node of that
 * kind over both classes (ae_pair_may) whose class is a subexpression (the probe b_try would
 * make, made once here: b_try is told); bits as bstate.pair_mask. */
static uint16_t pair_bits(worker *w, bstate *bs, int x, int y) {
    const search *s = w->s;
    if ((y >= 0 && bs->t[y].is_save) || !classes_mix(bs, x, y)) return 0;
    int32_t *terms = bs->pair_term[x][y >= 0 ? y : SR_MAX_TENSORS - 2 - y];
    ir_shape o;
    uint32_t m = bs->t[x].parents & (y >= 0 ? bs->t[y].parents : w->const_parents[-2 - y]);
    int32_t cx = bs->t[x].ecls, cy = y >= 0 ? bs->t[y].ecls : w->const_cls[-2 - y];
    int32_t tx = bs->t[x].term, ty = y >= 0 ? bs->t[y].term : w->const_term[-2 - y];
    ir_node p = {.n_in = 2, .in = {bs->t[x].node, y >= 0 ? bs->t[y].node : bs->const_node[-2 - y]}};
    uint16_t bits = 0;
    for (int q = 0; q < pl.n_bin; q++) {
        int op = pl.bin[q];
        if ((ir_ops[op].commutative && y >= 0 && y < x) || !may_op(op, m) || !sr_op_on(s, op)) continue;
        p.op = (ir_op)op; /* shapes that do not broadcast: ir_add_node would refuse the node */
        if (ae_pair_may(&w->q, pl.root[op], cx, cy) &&
            !ir_broadcast(&bs->b->nodes[p.in[0]].shape, &bs->b->nodes[p.in[1]].shape, &o) &&
            sub_op(w, bs, &p, tx, cx, ty, cy, &terms[q]))
            bits |= (uint16_t)(1u << q);
    }
    p.op = IR_OP_MATMUL;
    if (y >= 0 && may_op(IR_OP_MATMUL, m) && sr_op_on(s, IR_OP_MATMUL) &&
        ae_pair_may(&w->q, pl.root[IR_OP_MATMUL], cx, cy) && sub_op(w, bs, &p, tx, cx, ty, cy, &terms[pl.n_bin]))
        bits |= PM_MATMUL;
    if (y >= 0 && may_op(IR_OP_CONCAT, m) && sr_op_on(s, IR_OP_CONCAT)) bits |= PM_CONCAT;
    return bits;
}

/* Fills the masks of block tensor x against the tensors before it and the constants: bgen
 * reads them instead of asking every pair again in every state below. */
static void pair_masks(worker *w, bstate *bs, int x) {
    const btens *t = &bs->t[x];
    if (t->is_save) return;
    uint16_t un = 0;
    ir_node p = {.n_in = 1, .in = {t->node}};
    for (int q = 0; q < pl.n_un; q++) {
        p.op = (ir_op)pl.un[q];
        if (may_op(pl.un[q], t->parents) && sr_op_on(w->s, pl.un[q]) && sub_op(w, bs, &p, t->term, t->ecls, -1, -1, &bs->un_term[x][q]))
            un |= (uint16_t)(1u << q);
    }
    bs->un_mask[x] = un;
    int nc = w->s->n_const;
    uint64_t any = 0, bx = 1ull << (x + 1 + nc);
    for (int y = 0; y < x; y++) {
        if (bs->t[y].is_save) continue;
        bs->pair_mask[x][y] = pair_bits(w, bs, x, y), bs->pair_mask[y][x] = pair_bits(w, bs, y, x);
        if (bs->pair_mask[x][y]) any |= 1ull << (y + 1 + nc);
        bs->pair_any[y] = bs->pair_mask[y][x] ? bs->pair_any[y] | bx : bs->pair_any[y] & ~bx;
    }
    for (int c = 0; c < nc; c++) {
        bs->pair_mask[x][SR_MAX_TENSORS + c] = pair_bits(w, bs, x, -2 - c);
        if (bs->pair_mask[x][SR_MAX_TENSORS + c]) any |= 1ull << (nc - 1 - c);
    }
    bs->pair_any[x] = any;
}

/* An iterator over each kernel input, the block graph's first tensors. 1, or 0 on error. */
static int add_iterators(worker *w, bstate *bs, const int *in, int n_in) {
    for (int k = 0; k < n_in; k++) {
        ir_node p = {.op = IR_OP_ITER, .index = k, .fmap = -1, .map = {-1, -1, -1}};
        int node = ir_add_node(bs->b, &w->ctx, &p);
        if (node < 0 || node >= SR_MAX_BNODES) return 0;
        memcpy(bs->lab[node], w->t[in[k]].lab, sizeof bs->lab[0]);
        btens *t = &bs->t[bs->n_t++];
        memset(t, 0, sizeof *t);
        t->node = node, t->cls = IR_LOOP, t->term = w->t[in[k]].term;
        t->ecls = ae_class(&w->q, t->term), t->parents = ae_class_parents(&w->q, t->ecls);
        t->up = ae_up(&w->q, t->term);
        bs->n_ops++;
    }
    return 1;
}

/* Starts block generation over kernel tensors in[0..n_in) at kernel depth w->n_kops. */
static void start_block(worker *w, const int *in, int n_in, const key *last) {
    int d = w->n_kops;
    if (d >= SR_MAX_KOPS || !block_viable(w, d, in, n_in)) return;
    pthread_once(&pl_once, pl_init);
    bstate *bs = &w->bs[d];
    ir_graph *b = ir_block_new((int[]){1, 1, 1}, 128, 1);
    if (!b) {
        w->oom = 1;
        return;
    }
    bs->b = b, bs->n_t = 0, bs->n_ops = 0, bs->n_saves = 0, bs->n_kin = n_in, bs->n_rms_div = 0, bs->n_masked = 0;
    if (add_kins(w, bs, in, n_in) && sr_add_rms_divisors(w, bs, in, n_in) && add_iterators(w, bs, in, n_in)) {
        key bl = key_min;
        bs->klast = *last;
        bgen(w, d, &bl);
    }
    ir_graph_free(b);
    bs->b = NULL;
}

static void kgen_kernels(worker *w, const key *last) {
    const sr_opts *o = w->s->o;
    int n = w->n_t;
    if (w->n_kernels >= o->max_kernels) return;
    /* the first entry of the rank is the largest input: only input sets whose key can
     * exceed last are tried (the full key is checked when the block graph completes) */
    for (int mask = 1; mask < (1 << n) && n <= 20; mask++) {
        int cnt = __builtin_popcount((unsigned)mask), in[IR_MAX_IN], n_in = 0;
        if (cnt > o->max_kin || cnt > IR_MAX_IN) continue;
        for (int i = 0; i < n; i++)
            if (mask >> i & 1) in[n_in++] = i;
        key kk = make_key(in, n_in, IR_OP_KERNEL, INT64_MAX);
        if (key_cmp(&kk, last) <= 0 || !k_operands_ok(w, in, n_in)) continue;
        start_block(w, in, n_in, last);
    }
}

/* ---- the block level, phase 1: the operators, untiled ---- */

static void tile(worker *w, int d);

/* Block op p's operands from block tensors ta[] (or -2 - c for constants): p->in[] and their
 * terms tin[]. The class of its result (IR_INVARIANT, IR_LOOP or IR_POST), or -1 if p may not
 * read them: a saver's result, loop and accumulated values mixed (Definition 2.1 (3)), an
 * accumulator of no loop value, a saver of no accumulated value or past --max-kout. */
static int b_operands(const worker *w, const bstate *bs, ir_node *p, const int *ta, int32_t *tin) {
    int cls = IR_INVARIANT;
    for (int i = 0; i < p->n_in; i++) {
        int x = ta[i];
        if (x >= 0) {
            if (bs->t[x].is_save) return -1;
            if ((cls == IR_LOOP && bs->t[x].cls == IR_POST) || (cls == IR_POST && bs->t[x].cls == IR_LOOP))
                return -1; /* Definition 2.1 (3): no mixing of loop and accumulated values */
            if (bs->t[x].cls > cls) cls = bs->t[x].cls;
        }
        p->in[i] = x >= 0 ? bs->t[x].node : bs->const_node[-2 - x];
        tin[i] = x >= 0 ? bs->t[x].term : w->const_term[-2 - x];
    }
    if (p->op == IR_OP_ACCUM) {
        if (cls != IR_LOOP) return -1;
        cls = IR_POST;
    }
    if (p->op == IR_OP_SAVE && (cls != IR_POST || bs->n_saves >= w->s->o->max_kout)) return -1;
    return cls;
}

/* Does block op p of kernel depth d with term pass pruning? An operator's term must be
 * allowed; a saver's must reach the outputs through what follows the kernel, and the last
 * kernel's savers write the program's outputs, nothing else. */
static int b_keep(worker *w, int d, const ir_node *p, int32_t term) {
    if (p->op != IR_OP_SAVE) return sr_keep_term(w, term);
    if (!reaches(w, term, capacity(w->s, w->max_kops - d - 1, w->s->o->max_kernels - w->n_kernels - 1)))
        return 0;
    if (w->n_kops == w->max_kops - 1) {
        int root = 0; /* the last kernel op writes the program's outputs, nothing else */
        for (int j = 0; j < w->s->n_out; j++) root |= ae_is_root(&w->q, term, j);
        if (!root) return 0;
    }
    return 1;
}

/* Is new block node `node` (class cls, term) A_eq-equal to a tensor of the same class and
 * shape already in the block? Then it adds nothing (the e-class stands in for Mirage's
 * fingerprint here). */
static int b_duplicate(worker *w, const bstate *bs, int node, int cls, int32_t term) {
    int32_t c = ae_class(&w->q, term);
    for (int i = 0; i < bs->n_t && c >= 0; i++)
        if (!bs->t[i].is_save && bs->t[i].cls == cls && bs->t[i].ecls == c &&
            !memcmp(&bs->b->nodes[bs->t[i].node].shape, &bs->b->nodes[node].shape, sizeof(ir_shape)))
            return 1;
    return 0;
}

/* Block node `node` (op p over ta[], class cls, term) becomes a tensor of the block graph while
 * the generation goes on from it (rank kk). */
static void b_push(worker *w, int d, const key *kk, const ir_node *p, const int *ta, int node, int cls,
                   int32_t term) {
    bstate *bs = &w->bs[d];
    btens *t = &bs->t[bs->n_t];
    memset(t, 0, sizeof *t);
    t->node = node, t->cls = cls, t->term = term, t->is_save = p->op == IR_OP_SAVE;
    t->ecls = ae_class(&w->q, term), t->parents = ae_class_parents(&w->q, t->ecls);
    t->up = ae_up(&w->q, term);
    if (bs->n_masked > bs->n_t) bs->n_masked = bs->n_t; /* t's masks are not yet filled */
    bs->n_saves += t->is_save;
    for (int i = 0; i < p->n_in; i++)
        if (ta[i] >= 0) bs->t[ta[i]].uses++;
    bs->n_t++, bs->n_ops++;
    bgen(w, d, kk);
    bs->n_t--, bs->n_ops--;
    for (int i = 0; i < p->n_in; i++)
        if (ta[i] >= 0) bs->t[ta[i]].uses--;
    if (t->is_save) bs->n_saves--, bs->b->n_outputs--;
}

/* Tries block op *p over block tensors ta[] (or -2 - c for constants); writes p->in[]
 * (the callers' loops change only the operator between tries: a 224-byte node built and
 * copied per try was a tenth of nTrans's search). The first operator of a depth-0 kernel
 * is a task point (my_task). */
static void b_try(worker *w, int d, const key *last, ir_node *p, const int *ta, int64_t attr, int known, int32_t kterm) {
    bstate *bs = &w->bs[d];
    int op = (int)p->op;
    if (op != IR_OP_ACCUM && op != IR_OP_SAVE && op != IR_OP_RESHAPE && !sr_op_on(w->s, op)) return;
    if (w->n_kops == 0 && bs->n_ops == bs->n_kin && !my_task(w, 1)) return;
    if (!key_above(ta, p->n_in, p->op, attr, last)) return;
    int32_t tin[2] = {-1, -1};
    int cls = b_operands(w, bs, p, ta, tin);
    if (cls < 0) return;
    if (!known && p->op != IR_OP_SAVE && w->s->o->prune) { /* most tries are no subexpression: asked of the
        * e-graph first, with no term built (b_keep's verdict and count; nTrans ...) */
        int32_t c = ae_op_class(&w->q, bs->b, p, tin[0], p->n_in > 1 ? tin[1] : -1);
        if (c != -2 && !ae_class_is_sub(&w->q, c)) {
            w->pruned++;
            return;
        }
    }
    int32_t term = known ? kterm : ae_op_term(&w->tab, bs->b, p, tin[0], p->n_in > 1 ? tin[1] : -1);
    if (!b_keep(w, d, p, term)) return;
    int n0 = bs->b->n_nodes, node = sr_add_block_op(w, bs, p);
    if (node < 0) return;
    if (p->op != IR_OP_SAVE && b_duplicate(w, bs, node, cls, term)) {
        w->duplicates++;
        bs->b->n_nodes = n0;
        return;
    }
    if (p->op == IR_OP_SAVE && ir_add_output(bs->b, &w->ctx, node) < 0) {
        bs->b->n_nodes = n0;
        return;
    }
    key kk = make_key(ta, p->n_in, p->op, attr);
    b_push(w, d, &kk, p, ta, node, cls, term);
    bs->b->n_nodes = n0;
}

/* The block graph's unused tensors (no saver reads them yet), or -1 if one cannot reach the
 * outputs through the rest of this block (a saver at least follows) and what comes after the
 * kernel. */
static int b_unused(worker *w, int d) {
    const bstate *bs = &w->bs[d];
    const search *s = w->s;
    int unused = 0, after = capacity(s, w->max_kops - d - 1, s->o->max_kernels - w->n_kernels - 1);
    for (int i = 0; i < bs->n_t; i++) {
        if (bs->t[i].is_save || bs->t[i].uses) continue;
        unused++;
        /* it must reach the outputs through the rest of this block (a saver at least
         * follows) and what comes after the kernel */
        if (!reaches_up(w, bs->t[i].up, s->o->max_bops - bs->n_ops - 1 + after)) return -1;
    }
    return unused;
}

/* The nodes bgen's tries describe (b_try writes only their operands), zeroed once per graph
 * bgen extends rather than once per try (224 bytes each: a fifth of bgen's own time). */
typedef struct tries {
    ir_node un, pair, sum, rms, acc, save;
} tries;

/* The binary block operators with tensor i first: elementwise with a tensor or constant j,
 * matmul and concat (each dim) with a tensor j, described in *p; lo as in bgen; mi is i's may_mask. With
 * pruning, past a depth-0 kernel's first operator, the pairs' masks (pair_masks) say which. */
static void bgen_pairs(worker *w, int d, const key *last, int i, int n, int64_t lo, uint32_t mi, ir_node *p) {
    const bstate *bs = &w->bs[d];
    int open = !w->s->o->prune || (w->n_kops == 0 && bs->n_ops == bs->n_kin), nc = w->s->n_const;
    if (!open) { /* the js whose pair has a mask (bit j + 1 + nc), in the order of the loop below */
        uint64_t any = bs->pair_any[i] & ((2ull << (n + nc)) - 1);
        if (i < lo) any &= ~((1ull << (lo + 1 + nc)) - 1);
        for (; any; any &= any - 1) {
            int j = __builtin_ctzll(any) - nc - 1, col = j >= 0 ? j : SR_MAX_TENSORS - 2 - j, ta[2] = {i, j};
            unsigned bits = bs->pair_mask[i][col];
            for (unsigned b = bits & ~(unsigned)(PM_MATMUL | PM_CONCAT); b; b &= b - 1) {
                int q = __builtin_ctz(b);
                p->op = (ir_op)pl.bin[q], p->dim = 0;
                b_try(w, d, last, p, ta, 0, 1, bs->pair_term[i][col][q]);
            }
            if (bits & PM_MATMUL) {
                p->op = IR_OP_MATMUL, p->dim = 0;
                b_try(w, d, last, p, ta, 0, 1, bs->pair_term[i][col][pl.n_bin]);
            }
            for (int dd = 0; (bits & PM_CONCAT) && dd < bs->b->nodes[bs->t[i].node].shape.ndim; dd++) {
                p->op = IR_OP_CONCAT, p->dim = dd;
                b_try(w, d, last, p, ta, dd, 0, -1);
            }
        }
        return;
    }
    for (int j = -1 - nc; j < n; j++) {
        if (j == -1 || j == i || (j >= 0 && bs->t[j].is_save) || (i < lo && j < lo)) continue;
        int ta[2] = {i, j};
        uint32_t m = mi & may_mask(w, bs, j);
        for (int q = 0; q < pl.n_bin; q++) {
            int op = pl.bin[q];
            if ((ir_ops[op].commutative && j >= 0 && j < i) || !may_op(op, m)) continue;
            p->op = (ir_op)op, p->dim = 0;
            b_try(w, d, last, p, ta, 0, 0, -1);
        }
        if (j >= 0 && may_op(IR_OP_MATMUL, m)) {
            p->op = IR_OP_MATMUL, p->dim = 0;
            b_try(w, d, last, p, ta, 0, 0, -1);
        }
        if (j >= 0 && may_op(IR_OP_CONCAT, m)) {
            ir_shape a = bs->b->nodes[bs->t[i].node].shape;
            for (int dd = 0; dd < a.ndim; dd++) {
                p->op = IR_OP_CONCAT, p->dim = dd;
                b_try(w, d, last, p, ta, dd, 0, -1);
            }
        }
    }
}

/* The reducing and structural block operators of tensor i: sum and rmsnorm over each dim,
 * the squeeze of a partial-sum dim, an accumulator, a saver. */
static void bgen_reduce(worker *w, int d, const key *last, int i, tries *T) {
    const bstate *bs = &w->bs[d];
    uint32_t mi = may_mask(w, bs, i);
    ir_shape sh = bs->b->nodes[bs->t[i].node].shape;
    for (int dd = 0; dd < sh.ndim; dd++) {
        if (sh.d[dd] < 2) continue;
        T->sum.dim = dd, T->sum.group = sh.d[dd];
        if (may_op(IR_OP_SUM, mi)) b_try(w, d, last, &T->sum, (int[]){i}, dd, 0, -1);
        T->rms.dim = dd;
        if (may_op(IR_OP_RMSNORM, mi)) b_try(w, d, last, &T->rms, (int[]){i}, dd, 0, -1);
    }
    if (sh.ndim > w->s->max_rank && sh.d[sh.ndim - 1] == 1) { /* squeeze a partial-sum dim */
        ir_node p = {.op = IR_OP_RESHAPE, .n_in = 1, .n_ints = sh.ndim - 1};
        for (int dd = 0; dd < p.n_ints; dd++) p.ints[dd] = sh.d[dd];
        b_try(w, d, last, &p, (int[]){i}, 0, 0, -1);
    }
    if (bs->t[i].cls == IR_LOOP) b_try(w, d, last, &T->acc, (int[]){i}, 0, 0, -1);
    if (bs->t[i].cls == IR_POST) b_try(w, d, last, &T->save, (int[]){i}, 0, 0, -1);
}

/* The block level, phase 1: the untiled block graph of kernel depth d built so far goes to
 * phase 2 if complete (tile), then is extended by one operator of larger rank than last. */
static void bgen(worker *w, int d, const key *last) {
    bstate *bs = &w->bs[d];
    w->states++;
    if (sr_stopped(w) || w->oom) return;
    int unused = b_unused(w, d);
    if (unused < 0) return;
    if (bs->n_saves > 0 && unused == 0) tile(w, d);
    int left = w->s->o->max_bops - bs->n_ops;
    if (left <= 0 || unused > left) return; /* each op uses up at most one more tensor */
    int n = bs->n_t;
    /* an operator whose operands are all below the last operator's largest one ranks below
     * it (key_cmp): skipped here, before its node is even built */
    int64_t lo = last->v[0];
    pthread_once(&pl_once, pl_init);
    tries T = {.un = {.n_in = 1}, .pair = {.n_in = 2}, .sum = {.op = IR_OP_SUM, .n_in = 1},
               .rms = {.op = IR_OP_RMSNORM, .n_in = 1}, .acc = {.op = IR_OP_ACCUM, .n_in = 1, .fmap = -1},
               .save = {.op = IR_OP_SAVE, .n_in = 1, .index = bs->n_saves, .fmap = -1, .map = {-1, -1, -1}}};
    int open = !w->s->o->prune || (w->n_kops == 0 && bs->n_ops == bs->n_kin);
    for (; !open && bs->n_masked < n; bs->n_masked++) pair_masks(w, bs, bs->n_masked);
    for (int i = 0; i < n; i++) {
        if (bs->t[i].is_save) continue;
        uint32_t mi = may_mask(w, bs, i);
        for (unsigned b = open ? (1u << pl.n_un) - 1 : bs->un_mask[i]; i >= lo && b; b &= b - 1) {
            int q = __builtin_ctz(b), op = pl.un[q];
            if (!may_op(op, mi)) continue;
            T.un.op = (ir_op)op;
            b_try(w, d, last, &T.un, (int[]){i}, 0, !open, open ? -1 : bs->un_term[i][q]);
        }
        bgen_pairs(w, d, last, i, n, lo, mi, &T.pair);
        if (i >= lo) bgen_reduce(w, d, last, i, &T);
    }
}

/* ---- the block level, phase 2: schedules (schedule.c builds them) ---- */

static void tiled_kernel(worker *w, int d);

/* Is schedule i of kernel depth d the first of its group (same iface)? Then bs->in_group gets
 * the group's schedules, less those slower than --slack times the group's best (counted as
 * dominated). */
static int group_of(worker *w, bstate *bs, int i) {
    const sr_opts *o = w->s->o;
    int first = 1;
    for (int j = 0; j < i && first; j++) first = bs->tilings[j].iface != bs->tilings[i].iface;
    if (!first) return 0;
    /* a schedule slower than slack times the group's best is not pursued (--slack) */
    double best = INFINITY;
    for (int j = i; j < bs->n_tilings; j++)
        if (bs->tilings[j].iface == bs->tilings[i].iface) best = fmin(best, bs->tilings[j].us);
    bs->n_in_group = 0;
    for (int j = i; j < bs->n_tilings; j++) {
        if (bs->tilings[j].iface != bs->tilings[i].iface) continue;
        if (o->slack > 0 && bs->tilings[j].us > o->slack * best) w->dominated++;
        else bs->in_group[bs->n_in_group++] = j;
    }
    return 1;
}

/* Every schedule of the complete untiled block graph of kernel depth d. */
static void tile(worker *w, int d) {
    bstate *bs = &w->bs[d];
    if (w->n_t + bs->n_saves > SR_MAX_TENSORS || w->n_kops >= w->max_kops) return;
    if (sr_spelled_out_rmsnorm(w, bs->b, bs->t, bs->n_t)) {
        w->duplicates++;
        return;
    }
    if (sr_schedules(w, d)) return;
    /* the generation goes on once per group of interchangeable schedules; a candidate then
     * stands for every schedule of its group (sr_candidate) */
    for (int i = 0; i < bs->n_tilings && !sr_stopped(w) && !w->oom; i++)
        if (group_of(w, bs, i)) tiled_kernel(w, d);
    for (int i = 0; i < bs->n_tilings; i++) ir_graph_free(bs->tilings[i].t);
    bs->n_tilings = 0;
}

/* A hash of a block graph's schedule and operators: the last entry of a kernel's rank. */
static uint64_t block_hash(const ir_graph *b) {
    uint64_t h = 1469598103934665603ull;
#define H(v) (h = (h ^ (uint64_t)(int64_t)(v)) * 1099511628211ull)
    for (int g = 0; g < 3; g++) H(b->grid[g]);
    H(b->forloop);
    for (int i = 0; i < b->n_nodes; i++) {
        const ir_node *n = &b->nodes[i];
        H(n->op), H(n->dim), H(n->group), H(n->index), H(n->fmap), H(n->num), H(n->den);
        for (int k = 0; k < n->n_in; k++) H(n->in[k]);
        for (int g = 0; g < 3; g++) H(n->map[g]);
    }
#undef H
    return h >> 2;
}

/* The group bs->in_group of kernel depth d's schedules becomes a kernel operator of the kernel
 * graph (its first schedule standing for all), whose generation then goes on from there. */
static void tiled_kernel(worker *w, int d) {
    bstate *bs = &w->bs[d];
    const tiling *x = &bs->tilings[bs->in_group[0]];
    const ir_graph *t = x->t;
    key kk = make_key(bs->kin, bs->n_kin, IR_OP_KERNEL, (int64_t)block_hash(t));
    if (key_cmp(&kk, &bs->klast) <= 0) return;
    ir_graph *body = sr_clone_block(t, &w->ctx);
    if (!body) return;
    int in[IR_MAX_IN];
    for (int k = 0; k < bs->n_kin; k++) in[k] = w->t[bs->kin[k]].node;
    int n0 = w->k->n_nodes;
    int first = ir_add_kernel(w->k, &w->ctx, body, in, bs->n_kin, NULL, 0, 0);
    if (first < 0) { /* ir_add_kernel freed body unless a node owns it */
        if (w->k->n_nodes > n0) {
            w->k->n_nodes = n0;
            ir_graph_free(body);
        }
        return;
    }
    int n_t0 = w->n_t;
    for (int i = 0; i < t->n_outputs; i++) {
        ktens *nt = &w->t[w->n_t++];
        *nt = (ktens){first + i, 0, x->term[i], {0}};
        memcpy(nt->lab, x->lab[i], sizeof nt->lab);
    }
    bs->knode = first, bs->active = 1;
    for (int k = 0; k < bs->n_kin; k++) w->t[bs->kin[k]].uses++;
    int lf = w->last_first;
    w->last_first = n_t0;
    w->n_kops++, w->n_kernels++;
    kgen(w, &kk);
    bs->active = 0;
    w->n_kops--, w->n_kernels--;
    w->last_first = lf;
    for (int k = 0; k < bs->n_kin; k++) w->t[bs->kin[k]].uses--;
    w->n_t = n_t0;
    w->k->n_nodes = n0;
    ir_graph_free(body);
}



void sr_generate(worker *w) { kgen(w, &key_min); }
