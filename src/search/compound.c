/* compound: the compound block operator rmsnorm (Mirage's TB_RMS_NORM_OP),
 * x / sqrt(sum(sqr(x), dim) / n) over a dim of size n (search_int.h, docs/search.md). It is
 * one operator of the search (rank type and --ops bit IR_OP_RMSNORM, abstract expression
 * rms(n, x)) and five primitives in the block graph, so everything after the search
 * (verifier, planner, code) sees only primitives. */
#include <stdio.h>
#include <string.h>

#include "search_int.h"

/* The sizes a compound rmsnorm may divide by: the dims of the kernel inputs (a program
 * constant of that value where there is one, else a new constant). 1, or 0 on error. */
int sr_add_rms_divisors(worker *w, bstate *bs, const int *in, int n_in) {
    const search *s = w->s;
    int ok = 1;
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
                ok = (c = ir_add_const(bs->b, &w->ctx, lit, 0, 0)) >= 0 && c < SR_MAX_BNODES;
                if (ok) memset(bs->lab[c], 0, sizeof bs->lab[0]);
            }
            bs->rms_div_val[bs->n_rms_div] = v, bs->rms_div_node[bs->n_rms_div++] = c;
        }
    }
    return ok;
}

/* Adds p's nodes to block graph b of kernel depth d with their dim labels: one node, or the
 * primitives of a compound (and the constant it divides by). Returns the last node, or -1
 * (b->n_nodes is then as before). */
int sr_add_block_op(worker *w, bstate *bs, const ir_node *p) {
    ir_graph *b = bs->b;
    int n0 = b->n_nodes;
    ir_node steps[5];
    int n_steps = 1;
    steps[0] = *p;
    if (p->op == IR_OP_RMSNORM) {
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
        node = ir_add_node(b, NULL, &q); /* most tries do not fit: no message */
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

/* Does complete block graph b (its search tensors t[0..n_t)) hold the primitives of a compound
 * rmsnorm, added one by one, whose intermediates nothing else reads, where the compound itself
 * passes pruning? Then the same block graph is also generated with the compound
 * (sr_add_block_op), and this copy is a duplicate. */
int sr_spelled_out_rmsnorm(worker *w, const ir_graph *b, const btens *t, int n_t) {
    if (!sr_op_on(w->s, IR_OP_RMSNORM)) return 0;
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
