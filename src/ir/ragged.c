/* ir/ragged: ragged shapes (issue #28, docs/ragged.md). A program declares `lengths NAME[count]
 * <= max`: a batch of `count` sequences whose lengths come at run time. A tensor whose dim 0 is
 * that batch is per-sequence (rag[0] = 1); a dim written as NAME is ragged: for sequence b its
 * extent is NAME[b]. Every operator acts on each sequence alone, so sequence b of a ragged
 * program is a static program (ir_ragged_instance): dim 0 of size 1, each ragged dim of its
 * length. That is the meaning the evaluators and the verifier use; the rules below keep every
 * program inside it (no operator mixes sequences or reads past a length). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* The codes of s are consistent with g: a ragged dim's maximum is its lengths', and a shape
 * with a ragged dim has the batch as dim 0. */
static int codes_ok(const ir_graph *g, const ir_shape *s) {
    int any = 0;
    for (int i = 1; i < s->ndim; i++) {
        if (s->rag[i] < 0 || s->rag[i] > g->n_lens) return 0;
        if (s->rag[i] && s->d[i] != g->lens[s->rag[i] - 1].max) return 0;
        any |= s->rag[i] != 0;
    }
    if (s->ndim == 0) return !s->rag[0];
    if (s->rag[0] != 0 && (s->rag[0] != 1 || !g->n_lens || s->d[0] != g->lens[0].count)) return 0;
    return !any || s->rag[0] == 1;
}

int ir_ragged_input(const ir_graph *g, mg_ctx *ctx, ir_shape *s) {
    for (int i = s->ndim; i < IR_MAX_DIMS; i++) s->rag[i] = 0, s->d[i] = 0;
    if (!g->n_lens || g->is_block) {
        memset(s->rag, 0, sizeof s->rag);
        return 0;
    }
    s->rag[0] = 0;
    for (int i = 1; i < s->ndim; i++)
        if (s->rag[i]) s->rag[0] = 1;
    if (s->rag[0] && s->d[0] != g->lens[0].count)
        return -(int)ctx_err(ctx, MG_ERR_SHAPE, "a tensor with a ragged dim has the batch as dim 0: %" PRId64
                             " sequences (lengths %s), not %" PRId64, g->lens[0].count, g->lens[0].name, s->d[0]);
    if (!codes_ok(g, s)) return -(int)ctx_err(ctx, MG_ERR_SHAPE, "bad ragged dims");
    return 0;
}

/* operand x's code at dim i of an r-dim result, right-aligned (numpy); -1: x has no such dim */
static int at(const ir_shape *x, int i, int r) {
    int j = x->ndim - r + i;
    return j >= 0 ? x->rag[j] : -1;
}
static int64_t size_at(const ir_shape *x, int i, int r) {
    int j = x->ndim - r + i;
    return j >= 0 ? x->d[j] : 1;
}

/* dims [lo, hi) of the result from two operands broadcast together (binary ops, matmul's batch) */
static mg_status merge(const ir_graph *g, mg_ctx *ctx, ir_node *n, const ir_shape *a, const ir_shape *b, int lo, int hi) {
    int r = n->shape.ndim;
    if ((a->ndim < r && a->rag[0]) || (b->ndim < r && b->rag[0]))
        return ir_shape_err(ctx, g, n, "a per-sequence operand of lower rank would move the batch from dim 0");
    for (int i = lo; i < hi; i++) {
        int ra = at(a, i, r), rb = at(b, i, r);
        int64_t sa = size_at(a, i, r), sb = size_at(b, i, r);
        if (ra > 0 && rb > 0 && ra != rb)
            return ir_shape_err(ctx, g, n, "dim %d is ragged by two lengths", i);
        if ((ra > 0 && rb == 0 && sb != 1) || (rb > 0 && ra == 0 && sa != 1))
            return ir_shape_err(ctx, g, n, "dim %d: a %s meets a static dim of size %" PRId64 " (it may only broadcast, size 1)",
                           i, i ? "ragged dim" : "batch", ra > 0 ? sb : sa);
        n->shape.rag[i] = (signed char)(ra > 0 ? ra : rb > 0 ? rb : 0);
    }
    return MG_OK;
}

mg_status ir_infer_ragged(const ir_graph *g, mg_ctx *ctx, ir_node *n) {
    memset(n->shape.rag, 0, sizeof n->shape.rag);
    for (int i = n->shape.ndim; i < IR_MAX_DIMS; i++) n->shape.d[i] = 0; /* canonical: shapes compare with memcmp */
    if (!g->n_lens || g->is_block) return MG_OK;
    const ir_shape *a = n->n_in ? &g->nodes[n->in[0]].shape : NULL;
    const ir_shape *b = n->n_in > 1 ? &g->nodes[n->in[1]].shape : NULL;
    int r = n->shape.ndim, any = 0;
    for (int k = 0; k < n->n_in; k++) any |= ir_shape_ragged(&g->nodes[n->in[k]].shape);
    if (!any && n->op != IR_OP_RESHAPE) return MG_OK; /* static operands: a static result */
    mg_status rc = MG_OK;
    switch (ir_ops[n->op].kind) {
    case IR_KIND_SEQ: return ir_shape_err(ctx, g, n, "takes packed token tensors (static shapes), not ragged ones");
    case IR_KIND_UNARY: memcpy(n->shape.rag, a->rag, sizeof a->rag); break;
    case IR_KIND_BINARY: rc = merge(g, ctx, n, a, b, 0, r); break;
    case IR_KIND_REDUCE:
        memcpy(n->shape.rag, a->rag, sizeof a->rag);
        if (n->dim == 0 && a->rag[0]) return ir_shape_err(ctx, g, n, "reduces over the batch (dim 0): sequences are independent");
        if (a->rag[n->dim]) {
            if (n->group != a->d[n->dim]) return ir_shape_err(ctx, g, n, "a ragged dim is reduced whole (no group=)");
            n->shape.rag[n->dim] = 0;
        }
        break;
    case IR_KIND_MATMUL: /* [..., M, K] x [..., K, N]: K both static or ragged alike, never the batch */
        if (r == 2 ? a->rag[1] || b->rag[0] : a->rag[r - 1] != b->rag[r - 2])
            return ir_shape_err(ctx, g, n, "the contracted dims must be static, or ragged by the same lengths (never the batch)");
        rc = merge(g, ctx, n, a, b, 0, r - 2);
        n->shape.rag[r - 2] = a->rag[r - 2], n->shape.rag[r - 1] = b->rag[r - 1];
        break;
    case IR_KIND_LAYOUT:
        switch (n->op) {
        case IR_OP_TRANSPOSE:
            for (int i = 0; i < r; i++) n->shape.rag[i] = a->rag[n->ints[i]];
            if (a->rag[0] && n->ints[0] != 0) return ir_shape_err(ctx, g, n, "moves the batch from dim 0");
            break;
        case IR_OP_SLICE:
        case IR_OP_REPEAT:
            memcpy(n->shape.rag, a->rag, sizeof a->rag);
            for (int i = 0; i < r; i++)
                if (a->rag[i] && (n->op == IR_OP_SLICE ? i == n->dim : n->ints[i] != 1))
                    return ir_shape_err(ctx, g, n, "%s dim %d, the batch or a ragged dim", n->op == IR_OP_SLICE ? "slices" : "repeats", i);
            break;
        case IR_OP_CONCAT:
            if (memcmp(a->rag, b->rag, sizeof a->rag)) return ir_shape_err(ctx, g, n, "the operands' ragged dims differ");
            if (a->rag[n->dim]) return ir_shape_err(ctx, g, n, "concatenates along the batch or a ragged dim");
            memcpy(n->shape.rag, a->rag, sizeof a->rag);
            break;
        default: { /* reshape: the dims up to the last batch or ragged one stay, the static rest regroups */
            int last = -1;
            for (int i = 0; i < a->ndim; i++)
                if (a->rag[i]) last = i;
            for (int i = 0; i < r; i++) n->shape.rag[i] = n->ints[i] < 0 ? (signed char)-n->ints[i] : 0;
            if (last >= 0) n->shape.rag[0] = a->rag[0];
            int nl = -1;
            for (int i = 1; i < r; i++)
                if (n->shape.rag[i]) nl = i;
            if (nl > last || (last >= 0 && r <= last)) return ir_shape_err(ctx, g, n, "may only regroup the static dims after the last ragged dim");
            for (int i = 0; i <= last; i++)
                if (n->shape.d[i] != a->d[i] || (i && n->shape.rag[i] != a->rag[i]))
                    return ir_shape_err(ctx, g, n, "keeps the batch and the ragged dims in place (dim %d differs)", i);
            break;
        }
        }
        break;
    default: return ir_shape_err(ctx, g, n, "ragged tensors are not supported by this operator yet");
    }
    if (rc) return rc;
    if (!codes_ok(g, &n->shape)) return ir_shape_err(ctx, g, n, "a ragged dim needs the batch as dim 0 of the result");
    return MG_OK;
}

int64_t ir_slab_numel(const ir_shape *s, const int64_t *const *lens, int64_t b) {
    if (!s->rag[0]) return ir_numel(s);
    int64_t n = 1;
    for (int i = 1; i < s->ndim; i++) n *= s->rag[i] ? lens[s->rag[i] - 1][b] : s->d[i];
    return n;
}

int64_t ir_packed_offsets(const ir_shape *s, const int64_t *const *lens, int64_t pad, int64_t *off) {
    if (!s->rag[0]) {
        off[0] = 0, off[1] = ir_numel(s);
        return off[1];
    }
    if (pad < 1) pad = 1;
    off[0] = 0;
    for (int64_t b = 0; b < s->d[0]; b++) {
        int64_t n = 1;
        for (int i = 1; i < s->ndim; i++) {
            int64_t e = s->rag[i] ? lens[s->rag[i] - 1][b] : s->d[i];
            n *= s->rag[i] ? (e + pad - 1) / pad * pad : e;
        }
        off[b + 1] = off[b] + n;
    }
    return off[s->d[0]];
}

/* longest first, then by index: a stable order the tests and the GPU's table agree on */
typedef struct seq_len {
    int64_t len, b;
} seq_len;
static int by_length(const void *x, const void *y) {
    const seq_len *a = x, *c = y;
    return a->len != c->len ? (a->len < c->len ? 1 : -1) : (a->b > c->b) - (a->b < c->b);
}

int64_t ir_work_items(const int64_t *len, int64_t n, int64_t tile, int32_t *items, int64_t cap) {
    seq_len *ord = base_alloc((size_t)n * sizeof *ord + 1);
    int64_t k = 0;
    if (!ord || tile < 1) {
        base_free(ord);
        return -1;
    }
    for (int64_t b = 0; b < n; b++) ord[b] = (seq_len){len[b], b};
    qsort(ord, (size_t)n, sizeof *ord, by_length);
    for (int64_t i = 0; i < n && k >= 0; i++)
        for (int64_t t = 0; t * tile < ord[i].len; t++) {
            if (k >= cap) {
                k = -1;
                break;
            }
            items[2 * k] = (int32_t)ord[i].b, items[2 * k + 1] = (int32_t)t, k++;
        }
    base_free(ord);
    return k;
}

mg_status ir_lengths_check(const ir_graph *g, mg_ctx *ctx, int k, const int64_t *len, int64_t n) {
    const ir_lengths *L = &g->lens[k];
    if (n != L->count)
        return ctx_err(ctx, MG_ERR_INVALID, "lengths %s: %" PRId64 " given, the program's batch is %" PRId64 " sequences", L->name,
                       n, L->count);
    for (int64_t b = 0; b < n; b++)
        if (len[b] < 0 || len[b] > L->max)
            return ctx_err(ctx, MG_ERR_INVALID, "lengths %s: entry %" PRId64 " is %" PRId64 ", outside [0, %" PRId64 "] (its declared maximum)",
                           L->name, b, len[b], L->max);
    /* packed storage: every tensor ragged by k holds at most its padded element count (sum of
     * lengths <= count * max), within IR_MAX_NUMEL since the padded shape passed check_shape */
    return MG_OK;
}

/* the static attribute or shape of sequence b: a batch dim 1, a ragged dim its length */
static void instance_shape(const ir_shape *s, const int64_t *const *lens, int64_t b, ir_shape *o) {
    memset(o, 0, sizeof *o);
    o->ndim = s->ndim;
    for (int i = 0; i < s->ndim; i++)
        o->d[i] = i == 0 && s->rag[0] ? 1 : i && s->rag[i] ? lens[s->rag[i] - 1][b] : s->d[i];
}

mg_status ir_ragged_instance(const ir_graph *g, mg_ctx *ctx, const int64_t *const *lens, int64_t b, ir_graph **out) {
    for (int k = 0; k < g->n_lens; k++)
        if (lens[k][b] < 1)
            return ctx_err(ctx, MG_ERR_INVALID, "sequence %" PRId64 " has length 0 in %s: it has no static program", b,
                           g->lens[k].name);
    ir_graph *o = ir_graph_new();
    if (!o) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        int r;
        if (n->op == IR_OP_KERNEL) {
            r = -(int)ctx_err(ctx, MG_ERR_UNSUPPORTED, "graph-defined kernels over ragged tensors are not supported yet");
        } else if (n->op == IR_OP_INPUT) {
            ir_shape s;
            instance_shape(&n->shape, lens, b, &s);
            r = ir_add_input(o, ctx, n->name, n->dtype, &s);
            if (r >= 0) o->nodes[r].value = n->value, o->nodes[r].line = n->line, o->nodes[r].col = n->col;
        } else if (n->op == IR_OP_CONST) {
            r = ir_add_const(o, ctx, n->lit, n->line, n->col);
        } else {
            ir_node p = *n;
            const ir_shape *a = &g->nodes[n->in[0]].shape;
            if (n->op == IR_OP_SUM && a->rag[n->dim]) p.group = lens[a->rag[n->dim] - 1][b];
            if (n->op == IR_OP_RESHAPE)
                for (int d = 0; d < n->n_ints; d++)
                    p.ints[d] = n->ints[d] < 0 ? lens[-n->ints[d] - 1][b] : d == 0 && n->shape.rag[0] ? 1 : n->ints[d];
            r = ir_add_node(o, ctx, &p);
        }
        if (r >= 0 && n->name && !o->nodes[r].name) {
            int e = ir_set_name(o, ctx, r, n->name);
            r = e < 0 ? e : r;
        }
        if (r < 0) {
            ir_graph_free(o);
            return (mg_status)-r;
        }
        MG_ASSERT(r == i);
    }
    for (int k = 0; k < g->n_outputs; k++) {
        int r = ir_add_output(o, ctx, g->outputs[k]);
        if (r < 0) {
            ir_graph_free(o);
            return (mg_status)-r;
        }
    }
    *out = o;
    return MG_OK;
}

/* ---- token form: a token-wise ragged program as a static program over its T tokens ---- */

/* node n's shape in token form: [B, len, r...] -> [T, r...] (per-sequence tensors), the rest as is */
static void token_shape(const ir_shape *s, int64_t T, ir_shape *o) {
    memset(o, 0, sizeof *o);
    if (!s->rag[0]) {
        *o = *s;
        memset(o->rag, 0, sizeof o->rag);
        return;
    }
    o->ndim = s->ndim - 1;
    o->d[0] = T;
    for (int i = 2; i < s->ndim; i++) o->d[i - 1] = s->d[i];
}

/* a static operand x (node xi of g, new node nx of o) of an operator whose per-sequence result
 * has rank r: when x has rank r its dims 0 and 1 are 1 (broadcast over the batch and the
 * sequence), and it loses one: reshaped to [1, rest...] (rank r - 1) */
static int static_operand(ir_graph *o, mg_ctx *ctx, const ir_graph *g, int xi, int nx, int r) {
    const ir_shape *s = &g->nodes[xi].shape;
    if (s->rag[0] || s->ndim < r) return nx;
    ir_node p = {.op = IR_OP_RESHAPE, .n_in = 1, .in = {nx}, .n_ints = s->ndim - 1, .fmap = -1, .map = {-1, -1, -1}};
    for (int i = 1; i < s->ndim; i++) p.ints[i - 1] = s->d[i];
    return ir_add_node(o, ctx, &p);
}

/* ---- attention over a ragged dim, recognised for the token form (seqattn) ---- */

/* One attention over each sequence's own keys: out = reshape(transpose(O)) of O = softmax(S) V
 * per head, S = scale(Q K^T) (docs/ragged.md "What runs"). q, k, v: the token-wise
 * [B, len, H, D] tensors the heads are taken from; sop/sc: the scale (MUL or DIV by constant
 * node sc; sop 0: none). node[0..n): the region's per-sequence nodes, out last. */
typedef struct attn_region {
    int out, q, k, v, sop, sc, n;
    int node[24];
} attn_region;

static int op_is(const ir_graph *g, int i, ir_op op) { return i >= 0 && g->nodes[i].op == op; }
static int perm_is(const ir_node *n, int a, int b, int c, int d) {
    return n->n_ints == 4 && n->ints[0] == a && n->ints[1] == b && n->ints[2] == c && n->ints[3] == d;
}
static void region_add(attn_region *R, int i) {
    for (int k = 0; k < R->n; k++)
        if (R->node[k] == i) return;
    if (R->n < (int)(sizeof R->node / sizeof *R->node)) R->node[R->n++] = i;
}
/* x = transpose(reshape(t, [B, len, H, D]), perm=[0, 2, 1, 3]): the token-wise t (in *t), else -1 */
static int heads_of(const ir_graph *g, int x, attn_region *R) {
    if (!op_is(g, x, IR_OP_TRANSPOSE) || !perm_is(&g->nodes[x], 0, 2, 1, 3)) return -1;
    int t = g->nodes[x].in[0];
    const ir_shape *s = &g->nodes[t].shape;
    if (s->ndim != 4 || s->rag[0] != 1 || !s->rag[1] || s->rag[2] || s->rag[3]) return -1;
    region_add(R, x);
    return t;
}
/* e = exp(S) or exp(S - max(S, dim=3)): S, else -1 */
static int exp_arg(const ir_graph *g, int e, attn_region *R) {
    if (!op_is(g, e, IR_OP_EXP)) return -1;
    region_add(R, e);
    int z = g->nodes[e].in[0];
    if (op_is(g, z, IR_OP_SUB) && op_is(g, g->nodes[z].in[1], IR_OP_MAX) && g->nodes[g->nodes[z].in[1]].dim == 3 &&
        g->nodes[g->nodes[z].in[1]].in[0] == g->nodes[z].in[0]) {
        region_add(R, z), region_add(R, g->nodes[z].in[1]);
        return g->nodes[z].in[0];
    }
    return z;
}
static int is_rowsum_of(const ir_graph *g, int r, int e) {
    return op_is(g, r, IR_OP_SUM) && g->nodes[r].dim == 3 && g->nodes[r].in[0] == e;
}

/* Whether node a (token-wise [B, len, H D]) is an attention over the ragged dim, filling R. */
static int match_attention(const ir_graph *g, int a, attn_region *R) {
    memset(R, 0, sizeof *R);
    R->out = a, R->sc = -1;
    const ir_node *A = &g->nodes[a];
    if (A->op != IR_OP_RESHAPE || A->shape.ndim != 3 || A->shape.rag[1] != 1) return 0;
    int x = A->in[0];
    if (!op_is(g, x, IR_OP_TRANSPOSE) || !perm_is(&g->nodes[x], 0, 2, 1, 3)) return 0;
    region_add(R, x);
    int o = g->nodes[x].in[0], pv = -1, e = -1, v4 = -1;
    if (op_is(g, o, IR_OP_DIV) && op_is(g, g->nodes[o].in[0], IR_OP_MATMUL)) { /* (E V) / rowsum(E) */
        int m = g->nodes[o].in[0];
        e = g->nodes[m].in[0], v4 = g->nodes[m].in[1];
        if (!is_rowsum_of(g, g->nodes[o].in[1], e)) return 0;
        region_add(R, o), region_add(R, m), region_add(R, g->nodes[o].in[1]);
    } else if (op_is(g, o, IR_OP_MATMUL)) { /* (E / rowsum(E)) V */
        pv = g->nodes[o].in[0], v4 = g->nodes[o].in[1];
        if (!op_is(g, pv, IR_OP_DIV) || !is_rowsum_of(g, g->nodes[pv].in[1], g->nodes[pv].in[0])) return 0;
        e = g->nodes[pv].in[0];
        region_add(R, o), region_add(R, pv), region_add(R, g->nodes[pv].in[1]);
    } else return 0;
    int S = exp_arg(g, e, R);
    if (S < 0) return 0;
    if (op_is(g, S, IR_OP_MUL) || op_is(g, S, IR_OP_DIV)) { /* a scale: S0 * c, c * S0, S0 / c */
        const ir_node *m = &g->nodes[S];
        int c0 = op_is(g, m->in[0], IR_OP_CONST), c1 = op_is(g, m->in[1], IR_OP_CONST);
        if (c1 || (c0 && m->op == IR_OP_MUL)) {
            R->sop = m->op, R->sc = c1 ? m->in[1] : m->in[0];
            region_add(R, S);
            S = c1 ? m->in[0] : m->in[1];
        }
    }
    if (!op_is(g, S, IR_OP_MATMUL)) return 0;
    int kt = g->nodes[S].in[1];
    if (!op_is(g, kt, IR_OP_TRANSPOSE) || !perm_is(&g->nodes[kt], 0, 1, 3, 2)) return 0;
    region_add(R, S), region_add(R, kt);
    R->q = heads_of(g, g->nodes[S].in[0], R), R->k = heads_of(g, g->nodes[kt].in[0], R), R->v = heads_of(g, v4, R);
    if (R->q < 0 || R->k < 0 || R->v < 0) return 0;
    const ir_shape *qs = &g->nodes[R->q].shape;
    if (memcmp(qs, &g->nodes[R->k].shape, sizeof *qs) || memcmp(qs, &g->nodes[R->v].shape, sizeof *qs) ||
        A->shape.d[2] != qs->d[2] * qs->d[3])
        return 0;
    region_add(R, a); /* last: the region's output */
    return 1;
}

/* The attention regions of g (into regs, at most cap; *n their count) and in_region[i] = 1 +
 * the region holding per-sequence node i. Refuses, naming it, a node of a region that
 * something outside it reads, and a per-sequence node in no region. */
static mg_status find_regions(const ir_graph *g, mg_ctx *ctx, attn_region *regs, int cap, int *n, int *in_region) {
    char lb[128];
    *n = 0;
    for (int i = 0; i < g->n_nodes; i++) in_region[i] = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        attn_region R;
        if (in_region[i] || !g->nodes[i].shape.rag[0] || !match_attention(g, i, &R)) continue;
        if (*n == cap) return ctx_err(ctx, MG_ERR_LIMIT, "token form: more than %d attentions", cap);
        for (int k = 0; k < R.n; k++)
            if (in_region[R.node[k]])
                return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s: shared by two attentions (docs/ragged.md)",
                               ir_node_label(g, R.node[k], lb, sizeof lb));
        for (int k = 0; k < R.n; k++) in_region[R.node[k]] = *n + 1;
        regs[(*n)++] = R;
    }
    for (int j = 0; j < g->n_nodes; j++) { /* a region's inside is read only inside it */
        for (int k = 0; k < g->nodes[j].n_in; k++) {
            int x = g->nodes[j].in[k], r = in_region[x];
            if (r && regs[r - 1].out != x && in_region[j] != r)
                return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s: part of an attention over sequences, also read by %s; "
                               "only the attention's result may be used (docs/ragged.md)", ir_node_label(g, x, lb, sizeof lb),
                               ir_node_label(g, j, lb + 64, sizeof lb - 64));
        }
        for (int k = 0; k < g->n_outputs; k++)
            if (g->outputs[k] == j && in_region[j] && regs[in_region[j] - 1].out != j)
                return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s: an output inside an attention over sequences (docs/ragged.md)",
                               ir_node_label(g, j, lb, sizeof lb));
    }
    return MG_OK;
}

/* In o: reshape(seqattn(scale(q), k, v, lens), [T, H D]) for region R; map[] maps g's nodes. */
static int emit_seqattn(ir_graph *o, mg_ctx *ctx, const ir_graph *g, const attn_region *R, const int *map, int lens, int64_t T) {
    const ir_shape *qs = &g->nodes[R->q].shape;
    int qk = map[R->q];
    if (R->sop && g->nodes[R->q].op == IR_OP_RESHAPE) /* scale the projection before its heads: its epilogue */
        qk = map[g->nodes[R->q].in[0]];
    if (R->sop) {
        const ir_node *c = &g->nodes[R->sc];
        int ci = ir_add_const(o, ctx, c->lit, c->line, c->col);
        ir_node m = {.op = R->sop, .n_in = 2, .in = {qk, ci}, .fmap = -1, .map = {-1, -1, -1}};
        qk = ci < 0 ? ci : ir_add_node(o, ctx, &m);
    }
    if (qk < 0) return qk;
    ir_node sa = {.op = IR_OP_SEQATTN, .n_in = 4, .fmap = -1, .map = {-1, -1, -1}};
    int in3[3] = {qk, map[R->k], map[R->v]};
    for (int k = 0; k < 3; k++) { /* [T, H, D] views of the token tensors */
        ir_node rs = {.op = IR_OP_RESHAPE, .n_in = 1, .in = {in3[k]}, .n_ints = 3, .ints = {T, qs->d[2], qs->d[3]},
                      .fmap = -1, .map = {-1, -1, -1}};
        if ((sa.in[k] = ir_add_node(o, ctx, &rs)) < 0) return sa.in[k];
    }
    sa.in[3] = lens;
    int r = ir_add_node(o, ctx, &sa);
    if (r < 0) return r;
    ir_node back = {.op = IR_OP_RESHAPE, .n_in = 1, .in = {r}, .n_ints = 2, .ints = {T, qs->d[2] * qs->d[3]},
                    .fmap = -1, .map = {-1, -1, -1}};
    return ir_add_node(o, ctx, &back);
}

mg_status ir_token_form(const ir_graph *g, mg_ctx *ctx, int64_t T, ir_graph **out) {
    *out = NULL;
    if (g->n_lens != 1) return ctx_err(ctx, MG_ERR_UNSUPPORTED, "token form: a program with %d lengths declarations (one only)", g->n_lens);
    if (T < 1) return ctx_err(ctx, MG_ERR_INVALID, "token form: no tokens (every sequence empty)");
    char lb[128];
    attn_region regs[16];
    int n_regs = 0, lens = -1, *in_region = base_alloc((size_t)g->n_nodes * sizeof *in_region + 1);
    if (!in_region) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = find_regions(g, ctx, regs, 16, &n_regs, in_region);
    if (rc) return base_free(in_region), rc;
    /* what the outputs need: a dead node is neither refused nor written (it would read as a
     * use: a projection read by both its heads' reshape and the scale before seqattn would
     * be no epilogue) */
    int *need = base_calloc((size_t)g->n_nodes + 1, sizeof *need);
    if (!need) return base_free(in_region), ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int k = 0; k < g->n_outputs; k++) need[g->outputs[k]] = 1;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        if (!need[i]) continue;
        const attn_region *R = in_region[i] ? &regs[in_region[i] - 1] : NULL;
        if (R && R->out == i) {
            need[R->sop && g->nodes[R->q].op == IR_OP_RESHAPE ? g->nodes[R->q].in[0] : R->q] = 1;
            need[R->k] = need[R->v] = 1;
        } else if (!R)
            for (int k = 0; k < g->nodes[i].n_in; k++) need[g->nodes[i].in[k]] = 1;
    }
    for (int i = 0; i < g->n_nodes; i++) { /* token-wise: per-sequence tensors are [B, len, static...] */
        const ir_shape *s = &g->nodes[i].shape;
        if (!s->rag[0] || in_region[i] || !need[i]) continue;
        int ok = s->ndim >= 2 && s->rag[1] == 1 && g->nodes[i].op != IR_OP_KERNEL;
        for (int d = 2; d < s->ndim; d++) ok &= !s->rag[d];
        if (!ok) {
            base_free(in_region), base_free(need);
            return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s: a per-sequence operator that is not an attention over each sequence's "
                           "own positions (token-wise operators and attention run; docs/ragged.md)", ir_node_label(g, i, lb, sizeof lb));
        }
    }
    ir_graph *o = ir_graph_new();
    int *map = base_alloc((size_t)g->n_nodes * sizeof *map + 1);
    rc = o && map ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc && n_regs) { /* the lengths, input 0: f32[B] */
        ir_shape ls = {.ndim = 1, .d = {g->lens[0].count}};
        lens = ir_add_input(o, ctx, g->lens[0].name, MG_F32, &ls);
        if (lens < 0) rc = (mg_status)-lens;
    }
    for (int i = 0; !rc && i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        int tok = n->shape.rag[0] != 0, r;
        if ((in_region[i] && regs[in_region[i] - 1].out != i) || (!need[i] && n->op != IR_OP_INPUT)) {
            map[i] = -1;
            continue;
        }
        if (in_region[i]) {
            r = emit_seqattn(o, ctx, g, &regs[in_region[i] - 1], map, lens, T);
        } else if (n->op == IR_OP_INPUT) {
            ir_shape s;
            token_shape(&n->shape, T, &s);
            r = ir_add_input(o, ctx, n->name, n->dtype, &s);
            if (r >= 0) o->nodes[r].value = n->value, o->nodes[r].line = n->line, o->nodes[r].col = n->col;
        } else if (n->op == IR_OP_CONST) {
            r = ir_add_const(o, ctx, n->lit, n->line, n->col);
        } else if (!tok) { /* static: as it was */
            ir_node p = *n;
            for (int k = 0; k < n->n_in; k++) p.in[k] = map[n->in[k]];
            r = ir_add_node(o, ctx, &p);
        } else {
            ir_node p = *n;
            int R = n->shape.ndim, bad = 0;
            for (int k = 0; k < n->n_in && !bad; k++) {
                int x = n->in[k];
                p.in[k] = g->nodes[x].shape.rag[0] ? map[x] : static_operand(o, ctx, g, x, map[x], R);
                bad = p.in[k] < 0 ? p.in[k] : 0;
            }
            if (bad) {
                rc = (mg_status)-bad;
                break;
            }
            switch (ir_ops[n->op].kind) {
            case IR_KIND_REDUCE:
            case IR_KIND_LAYOUT:
                if (n->op == IR_OP_TRANSPOSE) { /* dims 0 and 1 stay (the rules keep the batch; token-wise keeps len) */
                    if (n->ints[0] != 0 || n->ints[1] != 1) {
                        ir_graph_free(o), base_free(map);
                        return ctx_err(ctx, MG_ERR_UNSUPPORTED, "%s: moves the ragged dim: not token-wise (docs/ragged.md)",
                                       ir_node_label(g, i, lb, sizeof lb));
                    }
                    p.n_ints = R - 1, p.ints[0] = 0;
                    for (int d = 2; d < R; d++) p.ints[d - 1] = n->ints[d] - 1;
                } else if (n->op == IR_OP_RESHAPE) {
                    p.n_ints = n->n_ints - 1, p.ints[0] = T;
                    for (int d = 2; d < n->n_ints; d++) p.ints[d - 1] = n->ints[d];
                } else if (n->op == IR_OP_REPEAT) {
                    p.n_ints = R - 1, p.ints[0] = 1;
                    for (int d = 2; d < R; d++) p.ints[d - 1] = n->ints[d];
                } else p.dim = n->dim - 1; /* sum, max, slice, concat: dims >= 2 (the rules refuse 0 and 1) */
                break;
            default: break; /* unary, binary, matmul: operands mapped above */
            }
            r = ir_add_node(o, ctx, &p);
        }
        if (r >= 0 && n->name && !o->nodes[r].name) {
            int e = ir_set_name(o, ctx, r, n->name);
            r = e < 0 ? e : r;
        }
        if (r < 0) rc = (mg_status)-r;
        else map[i] = r;
    }
    for (int k = 0; !rc && k < g->n_outputs; k++) {
        int e = ir_add_output(o, ctx, map[g->outputs[k]]);
        if (e < 0) rc = (mg_status)-e;
    }
    base_free(map), base_free(in_region), base_free(need);
    if (rc) {
        ir_graph_free(o);
        return rc;
    }
    *out = o;
    return MG_OK;
}
