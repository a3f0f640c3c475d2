/* generate: the expression-guided generator, Algorithm 1 of Mirage (search.h, docs/search.md).
 * Depth-first over kernel operators in rank order (kgen), each graph-defined kernel with a
 * nested depth-first generation of its block graph's operators (start_block, bgen) and then of
 * its schedules (tile, schedule.c), each schedule group standing as one kernel operator from
 * which the kernel level goes on (tiled_kernel -> kgen). One mutual recursion, kept in one
 * file; what it only calls (dims, schedules, candidates) lives in its own. */
#include <math.h>
#include <stdio.h>
#include <string.h>

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
static const ir_op unary_ops[] = {IR_OP_EXP, IR_OP_SQR, IR_OP_SQRT, IR_OP_SILU};
static const ir_op binary_ops[] = {IR_OP_ADD, IR_OP_SUB, IR_OP_MUL, IR_OP_DIV};
/* May the search place operator op (an ir_op, or SR_RMSNORM)? */
static int op_on(const search *s, int op) { return (int)(s->ops >> op & 1); }

/* The --ops list as a bit set over the operators the search places; 0 and a message on an
 * unknown name. */
uint64_t sr_ops_mask(const char *list, char *why, size_t n) {
    static const int placeable[] = {IR_OP_EXP, IR_OP_SQR, IR_OP_SQRT, IR_OP_SILU, IR_OP_ADD, IR_OP_SUB,
                                    IR_OP_MUL, IR_OP_DIV, IR_OP_MATMUL, IR_OP_SUM, IR_OP_CONCAT, SR_RMSNORM};
    uint64_t m = 0;
    const char *p = list;
    while (p && *p) {
        size_t len = strcspn(p, ",");
        int hit = -1;
        for (size_t k = 0; k < sizeof placeable / sizeof *placeable && hit < 0; k++) {
            const char *name = placeable[k] == SR_RMSNORM ? "rmsnorm" : ir_ops[placeable[k]].name;
            if (strlen(name) == len && !strncmp(name, p, len)) hit = placeable[k];
        }
        if (hit < 0) {
            snprintf(why, n, "unknown operator '%.*s' in the operator list; the search places exp, "
                     "sqr, sqrt, silu, add, sub, mul, div, matmul, sum, concat, rmsnorm", (int)len, p);
            return 0;
        }
        m |= 1ull << hit;
        p += len + (p[len] == ',');
    }
    if (!m) snprintf(why, n, "the operator list is empty");
    return m;
}

/* Kernel-level: tries pre-defined op p over tensors ta[] (n_in of them). */
static void k_try(worker *w, const key *last, ir_node p, const int *ta, int64_t attr) {
    key kk = make_key(ta, p.n_in, p.op, attr);
    if (key_cmp(&kk, last) <= 0 || !k_operands_ok(w, ta, p.n_in)) return;
    int32_t tin[2];
    for (int i = 0; i < p.n_in; i++) {
        int x = ta[i];
        p.in[i] = x >= 0 ? w->t[x].node : w->const_node[-2 - x];
        tin[i] = x >= 0 ? w->t[x].term : w->const_term[-2 - x];
    }
    int32_t term = ae_op_term(&w->tab, w->k, &p, tin[0], p.n_in > 1 ? tin[1] : -1);
    if (!sr_keep_term(w, term)) return;
    int node = ir_add_node(w->k, &w->ctx, &p);
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

static void kgen(worker *w, const key *last) {
    search *s = w->s;
    int depth0 = w->n_kops == 0;
    if (!depth0) {
        w->states++;
        if (sr_stopped(w) || w->oom) return;
        /* complete? every program output matched by an A_eq-equal tensor of its shape, and
         * every other tensor used */
        int outs[AE_MAX_ROOTS], ok = 1, unused = 0;
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
        for (int i = s->n_in; ok && i < w->n_t; i++) {
            int is_out = 0;
            for (int j = 0; j < s->n_out; j++) is_out |= outs[j] == i;
            unused += !is_out && w->t[i].uses == 0;
        }
        if (ok && !unused && w->n_kops >= w->min_kops) {
            int nodes[AE_MAX_ROOTS];
            for (int j = 0; j < s->n_out; j++) nodes[j] = w->t[outs[j]].node;
            sr_candidate(w, nodes);
        }
        /* a prefix that already holds the outputs is not extended: what it would add could
         * only feed tensors nobody needs */
        if (ok || w->n_kops >= w->max_kops || seen(w)) return;
        int cap = capacity(s, w->max_kops - w->n_kops, s->o->max_kernels - w->n_kernels);
        for (int i = 0; i < w->n_t; i++)
            if (!w->t[i].uses && !reaches(w, w->t[i].term, cap)) return;
    }
    int n = w->n_t;
    /* pre-defined operators */
    for (int i = 0; i < n; i++)
        for (size_t u = 0; u < sizeof unary_ops / sizeof *unary_ops; u++) {
            if (!op_on(s, unary_ops[u]) || !my_task(w, depth0)) continue;
            ir_node p = {.op = unary_ops[u], .n_in = 1};
            k_try(w, last, p, (int[]){i}, 0);
        }
    for (int i = 0; i < n; i++)
        for (int j = -1 - s->n_const; j < n; j++) {
            if (j == -1 || j == i) continue;
            for (size_t u = 0; u < sizeof binary_ops / sizeof *binary_ops; u++) {
                ir_op op = binary_ops[u];
                if ((op == IR_OP_ADD || op == IR_OP_MUL) && j >= 0 && j < i) continue;
                if (!op_on(s, op) || !my_task(w, depth0)) continue;
                ir_node p = {.op = op, .n_in = 2};
                k_try(w, last, p, (int[]){i, j}, 0);
            }
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (!op_on(s, IR_OP_MATMUL) || !my_task(w, depth0)) continue;
            ir_node p = {.op = IR_OP_MATMUL, .n_in = 2};
            k_try(w, last, p, (int[]){i, j}, 0);
        }
    for (int i = 0; i < n; i++) {
        const ir_shape *sh = &w->k->nodes[w->t[i].node].shape;
        for (int d = 0; d < sh->ndim; d++) {
            if (sh->d[d] < 2 || !op_on(s, IR_OP_SUM) || !my_task(w, depth0)) continue;
            ir_node p = {.op = IR_OP_SUM, .n_in = 1, .dim = d, .group = sh->d[d]};
            k_try(w, last, p, (int[]){i}, d);
        }
    }
    kgen_kernels(w, last);
}

/* ---- graph-defined kernels ----
 * A kernel's block graph is generated in two phases (docs/search.md, "Block graphs"): its
 * operators first, untiled (grid 1, for-loop 1: every iterator reads its whole input), then,
 * once the operator graph is complete, every schedule from the candidate sets: grid dims and
 * for-loop, with imaps, fmaps, accumulator fmaps and omaps derived from the dims each one
 * splits. Pruning in the first phase uses the untiled expressions; each tiled instance is
 * checked again with its own. */

/* Starts block generation over kernel tensors in[0..n_in) at kernel depth w->n_kops. */
static void start_block(worker *w, const int *in, int n_in, const key *last) {
    search *s = w->s;
    int d = w->n_kops;
    if (d >= SR_MAX_KOPS) return;
    bstate *bs = &w->bs[d];
    int after = capacity(s, w->max_kops - d - 1, s->o->max_kernels - w->n_kernels - 1);
    for (int i = 0; i < w->n_t; i++) {
        int read = 0;
        for (int k = 0; k < n_in; k++) read |= in[k] == i;
        if (!read && !w->t[i].uses && !reaches(w, w->t[i].term, after)) return;
    }
    if (s->o->prune && d == w->max_kops - 1) {
        /* the last kernel writes program outputs: it needs its iterators, the operators
         * that build a root from its inputs (at least ae_min_ops), an accumulator, a saver */
        int32_t have[IR_MAX_IN];
        for (int k = 0; k < n_in; k++) have[k] = w->t[in[k]].term;
        int lb = ae_min_ops(&w->q, have, n_in);
        if (lb == INT32_MAX || n_in + lb + 2 > s->o->max_bops) {
            w->pruned++;
            return;
        }
    }
    ir_graph *b = ir_block_new((int[]){1, 1, 1}, 128, 1);
    if (!b) {
        w->oom = 1;
        return;
    }
    bs->b = b, bs->n_t = 0, bs->n_ops = 0, bs->n_saves = 0, bs->n_kin = n_in;
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
    /* the sizes a compound rmsnorm may divide by: the dims of the kernel inputs (a program
     * constant of that value where there is one) */
    bs->n_rms_div = 0;
    for (int k = 0; k < n_in && ok; k++) {
        const ir_shape *sh = &w->k->nodes[w->t[in[k]].node].shape;
        for (int dd = 0; dd < sh->ndim && ok; dd++) {
            int64_t v = sh->d[dd];
            int c = -1;
            for (int i = 0; i < bs->n_rms_div; i++)
                if (bs->rms_div_val[i] == v) c = i;
            if (v < 2 || c >= 0) continue;
            for (int i = 0; i < s->n_const; i++)
                if (s->const_val[i]->num == v && s->const_val[i]->den == 1) c = bs->const_node[i];
            if (c < 0) {
                char lit[24];
                snprintf(lit, sizeof lit, "%lld", (long long)v);
                ok = (c = ir_add_const(b, &w->ctx, lit, 0, 0)) >= 0 && c < SR_MAX_BNODES;
                if (ok) memset(bs->lab[c], 0, sizeof bs->lab[0]);
            }
            bs->rms_div_val[bs->n_rms_div] = v, bs->rms_div_node[bs->n_rms_div++] = c;
        }
    }
    for (int k = 0; k < n_in && ok; k++) {
        ir_node p = {.op = IR_OP_ITER, .index = k, .fmap = -1, .map = {-1, -1, -1}};
        int node = ir_add_node(b, &w->ctx, &p);
        ok = node >= 0 && node < SR_MAX_BNODES;
        if (!ok) break;
        memcpy(bs->lab[node], w->t[in[k]].lab, sizeof bs->lab[0]);
        btens *t = &bs->t[bs->n_t++];
        memset(t, 0, sizeof *t);
        t->node = node, t->cls = IR_LOOP, t->term = w->t[in[k]].term;
        bs->n_ops++;
    }
    if (ok) {
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

/* The compound block operator rmsnorm (Mirage's TB_RMS_NORM_OP): x / sqrt(sum(sqr(x), dim) / n)
 * over a dim of size n. It is one operator of the search (rank type SR_RMSNORM, abstract
 * expression rms(n, x)) and five primitives in the block graph, so everything after the
 * search (verifier, planner, code) sees only primitives. Its rank type and --ops bit is
 * SR_RMSNORM (top of this file). */

/* Adds p's nodes to block graph b of kernel depth d with their dim labels: one node, or the
 * primitives of a compound (and the constant it divides by). Returns the last node, or -1
 * (b->n_nodes is then as before). */
static int add_block_op(worker *w, bstate *bs, const ir_node *p) {
    ir_graph *b = bs->b;
    int n0 = b->n_nodes;
    ir_node steps[5];
    int n_steps = 1;
    steps[0] = *p;
    if ((int)p->op == SR_RMSNORM) {
        int x = p->in[0], c = -1;
        int64_t n = b->nodes[x].shape.d[p->dim];
        for (int i = 0; i < bs->n_rms_div; i++)
            if (bs->rms_div_val[i] == n) c = bs->rms_div_node[i];
        if (c < 0) return -1; /* a size no kernel input has */
        /* each step reads the node added before it (-1) or x */
        steps[0] = (ir_node){.op = IR_OP_SQR, .n_in = 1, .in = {x}};
        steps[1] = (ir_node){.op = IR_OP_SUM, .n_in = 1, .in = {-1}, .dim = p->dim, .group = n};
        steps[2] = (ir_node){.op = IR_OP_DIV, .n_in = 2, .in = {-1, c}};
        steps[3] = (ir_node){.op = IR_OP_SQRT, .n_in = 1, .in = {-1}};
        steps[4] = (ir_node){.op = IR_OP_DIV, .n_in = 2, .in = {x, -1}};
        n_steps = 5;
    }
    int node = -1;
    for (int i = 0; i < n_steps; i++) {
        ir_node q = steps[i];
        for (int k = 0; k < q.n_in; k++)
            if (q.in[k] < 0) q.in[k] = node;
        node = ir_add_node(b, &w->ctx, &q);
        if (node < 0) goto fail;
        if (node >= SR_MAX_BNODES || !sr_labels_op(w->s, b, &b->nodes[node], bs->lab[q.in[0]],
                                        q.n_in > 1 ? bs->lab[q.in[1]] : NULL, bs->lab[node]))
            goto fail;
    }
    return node;
fail:
    b->n_nodes = n0;
    return -1;
}

/* Tries block op p over block tensors ta[] (or -2 - c for constants). The first operator
 * of a depth-0 kernel is a task point (my_task). */
static void b_try(worker *w, int d, const key *last, const ir_node *pp, const int *ta, int64_t attr) {
    bstate *bs = &w->bs[d];
    int op = (int)pp->op;
    if (op != IR_OP_ACCUM && op != IR_OP_SAVE && op != IR_OP_RESHAPE && !op_on(w->s, op)) return;
    if (w->n_kops == 0 && bs->n_ops == bs->n_kin && !my_task(w, 1)) return;
    key kk = make_key(ta, pp->n_in, pp->op, attr);
    if (key_cmp(&kk, last) <= 0) return;
    ir_node p = *pp;
    int cls = IR_INVARIANT;
    int32_t tin[2];
    for (int i = 0; i < p.n_in; i++) {
        int x = ta[i];
        if (x >= 0) {
            if (bs->t[x].is_save) return;
            if ((cls == IR_LOOP && bs->t[x].cls == IR_POST) || (cls == IR_POST && bs->t[x].cls == IR_LOOP))
                return; /* Definition 2.1 (3): no mixing of loop and accumulated values */
            if (bs->t[x].cls > cls) cls = bs->t[x].cls;
        }
        p.in[i] = x >= 0 ? bs->t[x].node : bs->const_node[-2 - x];
        tin[i] = x >= 0 ? bs->t[x].term : w->const_term[-2 - x];
    }
    if (p.op == IR_OP_ACCUM) {
        if (cls != IR_LOOP) return;
        cls = IR_POST;
    }
    if (p.op == IR_OP_SAVE && (cls != IR_POST || bs->n_saves >= w->s->o->max_kout)) return;
    int32_t term = (int)p.op == SR_RMSNORM
                       ? ae_make(&w->tab, AE_RMS, tin[0], -1, bs->b->nodes[p.in[0]].shape.d[p.dim], 0)
                       : ae_op_term(&w->tab, bs->b, &p, tin[0], p.n_in > 1 ? tin[1] : -1);
    if (p.op != IR_OP_SAVE && !sr_keep_term(w, term)) return;
    if (p.op == IR_OP_SAVE && !reaches(w, term, capacity(w->s, w->max_kops - d - 1, w->s->o->max_kernels - w->n_kernels - 1)))
        return;
    if (p.op == IR_OP_SAVE && w->n_kops == w->max_kops - 1) {
        int root = 0; /* the last kernel op writes the program's outputs, nothing else */
        for (int j = 0; j < w->s->n_out; j++) root |= ae_is_root(&w->q, term, j);
        if (!root) return;
    }
    int n0 = bs->b->n_nodes, node = add_block_op(w, bs, &p);
    if (node < 0) return;
    if (p.op != IR_OP_SAVE) {
        /* a tensor A_eq-equal to one of the same class and shape already in the block adds
         * nothing (the e-class stands in for Mirage's fingerprint here) */
        int32_t c = ae_class(&w->q, term);
        for (int i = 0; i < bs->n_t && c >= 0; i++)
            if (!bs->t[i].is_save && bs->t[i].cls == cls && ae_class(&w->q, bs->t[i].term) == c &&
                !memcmp(&bs->b->nodes[bs->t[i].node].shape, &bs->b->nodes[node].shape, sizeof(ir_shape))) {
                w->duplicates++;
                bs->b->n_nodes = n0;
                return;
            }
    } else if (ir_add_output(bs->b, &w->ctx, node) < 0) {
        bs->b->n_nodes = n0;
        return;
    }
    btens *t = &bs->t[bs->n_t];
    memset(t, 0, sizeof *t);
    t->node = node, t->cls = cls, t->term = term, t->is_save = p.op == IR_OP_SAVE;
    bs->n_saves += t->is_save;
    for (int i = 0; i < p.n_in; i++)
        if (ta[i] >= 0) bs->t[ta[i]].uses++;
    bs->n_t++, bs->n_ops++;
    bgen(w, d, &kk);
    bs->n_t--, bs->n_ops--;
    for (int i = 0; i < p.n_in; i++)
        if (ta[i] >= 0) bs->t[ta[i]].uses--;
    if (t->is_save) bs->n_saves--, bs->b->n_outputs--;
    bs->b->n_nodes = n0;
}

static void bgen(worker *w, int d, const key *last) {
    bstate *bs = &w->bs[d];
    search *s = w->s;
    w->states++;
    if (sr_stopped(w) || w->oom) return;
    int unused = 0, after = capacity(s, w->max_kops - d - 1, s->o->max_kernels - w->n_kernels - 1);
    for (int i = 0; i < bs->n_t; i++) {
        if (bs->t[i].is_save || bs->t[i].uses) continue;
        unused++;
        /* it must reach the outputs through the rest of this block (a saver at least
         * follows) and what comes after the kernel */
        if (!reaches(w, bs->t[i].term, s->o->max_bops - bs->n_ops - 1 + after)) return;
    }
    if (bs->n_saves > 0 && unused == 0) tile(w, d);
    int left = s->o->max_bops - bs->n_ops;
    if (left <= 0 || unused > left) return; /* each op uses up at most one more tensor */
    int n = bs->n_t;
    /* an operator whose operands are all below the last operator's largest one ranks below
     * it (key_cmp): skipped here, before its node is even built */
    int64_t lo = last->v[0];
    for (int i = 0; i < n; i++) {
        if (bs->t[i].is_save) continue;
        for (size_t u = 0; i >= lo && u < sizeof unary_ops / sizeof *unary_ops; u++) {
            ir_node p = {.op = unary_ops[u], .n_in = 1};
            b_try(w, d, last, &p, (int[]){i}, 0);
        }
        for (int j = -1 - s->n_const; j < n; j++) {
            if (j == -1 || j == i || (j >= 0 && bs->t[j].is_save) || (i < lo && j < lo)) continue;
            for (size_t u = 0; u < sizeof binary_ops / sizeof *binary_ops; u++) {
                ir_op op = binary_ops[u];
                if ((op == IR_OP_ADD || op == IR_OP_MUL) && j >= 0 && j < i) continue;
                ir_node p = {.op = op, .n_in = 2};
                b_try(w, d, last, &p, (int[]){i, j}, 0);
            }
            if (j >= 0) {
                ir_node p = {.op = IR_OP_MATMUL, .n_in = 2};
                b_try(w, d, last, &p, (int[]){i, j}, 0);
                const ir_shape *a = &bs->b->nodes[bs->t[i].node].shape;
                for (int dd = 0; dd < a->ndim; dd++) {
                    ir_node q = {.op = IR_OP_CONCAT, .n_in = 2, .dim = dd};
                    b_try(w, d, last, &q, (int[]){i, j}, dd);
                }
            }
        }
        if (i < lo) continue;
        const ir_shape *sh = &bs->b->nodes[bs->t[i].node].shape;
        for (int dd = 0; dd < sh->ndim; dd++) {
            if (sh->d[dd] < 2) continue;
            ir_node p = {.op = IR_OP_SUM, .n_in = 1, .dim = dd, .group = sh->d[dd]};
            b_try(w, d, last, &p, (int[]){i}, dd);
            ir_node r = {.op = (ir_op)SR_RMSNORM, .n_in = 1, .dim = dd};
            b_try(w, d, last, &r, (int[]){i}, dd);
        }
        if (sh->ndim > s->max_rank && sh->d[sh->ndim - 1] == 1) { /* squeeze a partial-sum dim */
            ir_node p = {.op = IR_OP_RESHAPE, .n_in = 1, .n_ints = sh->ndim - 1};
            for (int dd = 0; dd < p.n_ints; dd++) p.ints[dd] = sh->d[dd];
            b_try(w, d, last, &p, (int[]){i}, 0);
        }
        if (bs->t[i].cls == IR_LOOP) {
            ir_node p = {.op = IR_OP_ACCUM, .n_in = 1, .fmap = -1};
            b_try(w, d, last, &p, (int[]){i}, 0);
        }
        if (bs->t[i].cls == IR_POST) {
            ir_node p = {.op = IR_OP_SAVE, .n_in = 1, .index = bs->n_saves, .fmap = -1, .map = {-1, -1, -1}};
            b_try(w, d, last, &p, (int[]){i}, 0);
        }
    }
}

/* ---- the block level, phase 2: schedules (schedule.c builds them) ---- */

static void tiled_kernel(worker *w, int d);

/* Does complete block graph b (its search tensors t[0..n_t)) hold the primitives of a compound
 * rmsnorm, added one by one, whose intermediates nothing else reads, where the compound itself
 * passes pruning? Then the same block graph is also generated with the compound
 * (add_block_op), and this copy is a duplicate. */
static int spelled_out_rmsnorm(worker *w, const ir_graph *b, const btens *t, int n_t) {
    if (!op_on(w->s, SR_RMSNORM)) return 0;
    int uses[SR_MAX_BNODES] = {0};
    int32_t term[SR_MAX_BNODES];
    for (int i = 0; i < b->n_nodes && i < SR_MAX_BNODES; i++) {
        term[i] = -1;
        for (int k = 0; k < b->nodes[i].n_in; k++) uses[b->nodes[i].in[k]]++;
    }
    for (int i = 0; i < n_t; i++) term[t[i].node] = t[i].term;
#define ONE(i, o) (uses[i] == 1 && b->nodes[i].op == (o))
    for (int i = 0; i < b->n_nodes && i < SR_MAX_BNODES; i++) {
        const ir_node *o = &b->nodes[i];
        if (o->op != IR_OP_DIV || !ONE(o->in[1], IR_OP_SQRT)) continue;
        int x = o->in[0], m = b->nodes[o->in[1]].in[0];
        if (!ONE(m, IR_OP_DIV)) continue;
        const ir_node *sm = &b->nodes[b->nodes[m].in[0]], *c = &b->nodes[b->nodes[m].in[1]];
        if (!ONE(b->nodes[m].in[0], IR_OP_SUM) || c->op != IR_OP_CONST || c->den != 1 ||
            c->num != sm->group || !ONE(sm->in[0], IR_OP_SQR) || b->nodes[sm->in[0]].in[0] != x ||
            term[x] < 0 || term[sm->in[0]] < 0)
            continue; /* (a compound's own sqr is no tensor of the search: term -1) */
        if (!w->s->o->prune || ae_is_sub(&w->q, ae_make(&w->tab, AE_RMS, term[x], -1, sm->group, 0)))
            return 1;
    }
#undef ONE
    return 0;
}

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
    if (spelled_out_rmsnorm(w, bs->b, bs->t, bs->n_t)) {
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
