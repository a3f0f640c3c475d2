/* search: Algorithm 1 of Mirage (search.h, docs/search.md). */
#include "search.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../eval/eval.h"
#include "../eval/ff.h"
#include "../verify/verify.h"
#include "aexpr.h"

enum { MAXT = 48, MAXK = 8, KEYN = IR_MAX_IN + 3, MAXC = 8 };

/* The rank of an operator (Mirage §4.1): its operand indices in decreasing order (constants
 * below every tensor), then its type, then its attributes. Operators are added in increasing
 * rank only, so each DAG is generated in exactly one order: an operator that reads another's
 * result has a larger first entry. */
typedef struct key {
    int64_t v[KEYN];
} key;

static int key_cmp(const key *a, const key *b) {
    for (int i = 0; i < KEYN; i++)
        if (a->v[i] != b->v[i]) return a->v[i] < b->v[i] ? -1 : 1;
    return 0;
}
static key make_key(const int *in, int n, int type, int64_t attr) {
    key k;
    int s[IR_MAX_IN];
    memcpy(s, in, sizeof *s * (size_t)n);
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

/* A kernel-graph tensor and a block-graph tensor of the prefix being grown. */
typedef struct ktens {
    int node, uses;
    int32_t term;
} ktens;
typedef struct btens {
    int node, uses, cls, is_save;
    int32_t term;
    uint8_t gbits[IR_MAX_DIMS]; /* grid dims that split each dim */
    uint8_t part;               /* grid dims this tile is a partial sum over */
} btens;

/* One block graph under construction (one per kernel depth). */
typedef struct bstate {
    ir_graph *b;
    btens t[MAXT];
    int n_t, n_ops, n_saves;
    int kin[IR_MAX_IN], n_kin; /* the kernel tensors it reads */
    int cnode[MAXC];           /* block node of each program constant */
    key klast;                 /* rank of the kernel graph's last operator */
} bstate;

typedef struct search search;

typedef struct worker {
    search *s;
    ae_tab tab;
    ae_query q;
    mg_ctx ctx;
    ir_graph *k;
    ktens t[MAXT];
    int n_t, n_kops;
    int last_first; /* first tensor the last kernel op produced (chain rule) */
    int kcnode[MAXC];
    int32_t const_term[MAXC]; /* the program's constants as terms of this worker's table */
    bstate bs[MAXK];
    int task, counter; /* depth-0 choices are numbered; only the one == task is explored */
    int64_t states, pruned, candidates, rejected, duplicates;
    sr_found *found;
    int n_found, cap_found;
    int oom;
    /* interfaces of kernel-graph prefixes already extended in this task (see seen()) */
    uint64_t *memo;
    int64_t n_memo, cap_memo;
} worker;

struct search {
    const ir_graph *prog;
    const sr_opts *o;
    ae_egraph *eg;
    ae_tab tab0;
    int n_in, n_out;
    int out_node[AE_MAX_ROOTS];
    int n_const;
    const char *const_lit[MAXC];
    const ir_node *const_val[MAXC]; /* the program's node of each distinct constant */
    /* the fingerprint: program outputs on fixed field inputs */
    uint32_t *fp_ip[VF_MAX_IO], *fp_iq[VF_MAX_IO], *fp_op[VF_MAX_IO], *fp_oq[VF_MAX_IO];
    uint32_t fp_omega;
    /* shared progress */
    int64_t next_task, n_tasks;
    int64_t states, pruned, candidates, rejected, duplicates, found, tasks_done;
    uint8_t *done; /* per task: finished (1) or resumed from the checkpoint (2) */
    sr_found **task_found;
    int *task_n_found;
    pthread_mutex_t mu;
    double t0;
    int stop;
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int stopped(worker *w) {
    search *s = w->s;
    if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) return 1;
    if ((w->states & 1023) == 0) {
        if ((s->o->stop && *s->o->stop) ||
            (s->o->time_limit > 0 && now_s() - s->t0 > s->o->time_limit)) {
            __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
            return 1;
        }
    }
    return 0;
}

/* ---- materialising a candidate: a fresh graph with only what reaches the outputs ---- */

static void mark_live(const ir_graph *g, int i, uint8_t *live) {
    if (live[i]) return;
    live[i] = 1;
    for (int k = 0; k < g->nodes[i].n_in; k++) mark_live(g, g->nodes[i].in[k], live);
}

/* A copy of block graph b without unused constants, its savers as outputs. NULL on error. */
static ir_graph *clone_block(const ir_graph *b, mg_ctx *ctx) {
    ir_graph *c = ir_block_new(b->grid, b->threads, b->forloop);
    int *map = base_alloc(sizeof *map * (size_t)(b->n_nodes + 1));
    uint8_t *live = base_calloc((size_t)b->n_nodes + 1, 1);
    int ok = c && map && live;
    for (int k = 0; ok && k < b->n_kin; k++)
        ok = ir_block_add_kin(c, ctx, b->kin_name[k], b->kin_dtype[k], &b->kin_shape[k]) >= 0;
    for (int i = 0; ok && i < b->n_nodes; i++)
        if (b->nodes[i].op == IR_OP_SAVE) mark_live(b, i, live);
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
    for (int j = 0; ok && j < s->n_out; j++) mark_live(k, outs[j], live);
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
            ir_graph *body = clone_block(n->body, ctx);
            int in[IR_MAX_IN];
            for (int j = 0; j < n->n_in; j++) in[j] = map[n->in[j]];
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

/* ---- the cost model ---- */

double sr_cost_us(const ir_graph *ug, const ir_device *dev) {
    (void)dev;
    const double bw = 3.0e12, rate = 660e12, launch = 2.0;
    double us = 0;
    for (int i = 0; i < ug->n_nodes; i++) {
        const ir_node *n = &ug->nodes[i];
        if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST) continue;
        double bytes = 0, flops = 0;
        if (n->op == IR_OP_KERNEL) {
            if (n->index != 0) continue;
            const ir_graph *b = n->body;
            double blocks = (double)b->grid[0] * b->grid[1] * b->grid[2];
            for (int j = 0; j < b->n_nodes; j++) {
                const ir_node *m = &b->nodes[j];
                double el = (double)ir_numel(&m->shape);
                if (m->op == IR_OP_ITER) bytes += el * (double)base_dtype_size(m->dtype) * (double)b->forloop * blocks;
                if (m->op == IR_OP_SAVE) bytes += el * (double)base_dtype_size(m->dtype) * blocks;
                if (m->op == IR_OP_MATMUL) {
                    const ir_shape *a = &b->nodes[m->in[0]].shape;
                    flops += 2.0 * el * (double)a->d[a->ndim - 1] * (double)b->forloop * blocks;
                }
            }
        } else {
            bytes += (double)ir_numel(&n->shape) * (double)base_dtype_size(n->dtype);
            for (int k = 0; k < n->n_in; k++) {
                const ir_node *m = &ug->nodes[n->in[k]];
                bytes += (double)ir_numel(&m->shape) * (double)base_dtype_size(m->dtype);
            }
            if (n->op == IR_OP_MATMUL) {
                const ir_shape *a = &ug->nodes[n->in[0]].shape;
                flops += 2.0 * (double)ir_numel(&n->shape) * (double)a->d[a->ndim - 1];
            }
        }
        us += launch + fmax(bytes / bw, flops / rate) * 1e6;
    }
    return us;
}

/* ---- candidates ---- */

static uint64_t text_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* Fingerprint: the candidate's outputs on the search's fixed field inputs must equal the
 * program's. Returns 1 if equal, 0 if not, -1 on an evaluation error (e.g. too large). */
static int fingerprint_ok(const search *s, const ir_graph *u, mg_ctx *ctx) {
    uint32_t *up[VF_MAX_IO] = {0}, *uq[VF_MAX_IO] = {0};
    int ok = 1;
    for (int j = 0; j < s->n_out && ok; j++) {
        size_t n = (size_t)ir_numel(&s->prog->nodes[s->out_node[j]].shape);
        up[j] = base_alloc(n * 4), uq[j] = base_alloc(n * 4);
        ok = up[j] && uq[j];
    }
    mg_status rc = ok ? ev_field(u, ctx, s->fp_omega, (const uint32_t *const *)s->fp_ip,
                                 (const uint32_t *const *)s->fp_iq, up, uq)
                      : MG_ERR_NOMEM;
    int r = rc == MG_ERR_DIV_ZERO ? 0 : rc ? -1 : 1;
    for (int j = 0; j < s->n_out && r == 1; j++) {
        size_t n = (size_t)ir_numel(&s->prog->nodes[s->out_node[j]].shape);
        for (size_t t = 0; t < n; t++) {
            uint32_t a = s->fp_oq[j][t], b = uq[j][t];
            if (s->fp_op[j][t] != up[j][t] || (a != b && a != FF_NONE && b != FF_NONE)) {
                r = 0;
                break;
            }
        }
    }
    for (int j = 0; j < VF_MAX_IO; j++) base_free(up[j]), base_free(uq[j]);
    return r;
}

static void add_found(worker *w, char *text, const ir_graph *u, const char *verdict) {
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
    f->cost_us = sr_cost_us(u, &ir_device_h100);
    snprintf(f->verdict, sizeof f->verdict, "%.255s", verdict);
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

/* A kernel graph whose tensors outs[] match the program's outputs (A_eq-equal, so every
 * μGraph found has aeq set): materialise, screen, verify, keep. */
static void candidate(worker *w, const int *outs) {
    search *s = w->s;
    w->candidates++;
    ir_graph *u = materialize(s, w->k, outs, &w->ctx);
    if (!u) {
        w->rejected++;
        return;
    }
    strbuf sb = {0};
    ir_print_text(u, &sb);
    char *text = sb_take(&sb);
    if (!text) {
        ir_graph_free(u);
        w->oom = 1;
        return;
    }
    for (int i = 0; i < w->n_found; i++)
        if (!strcmp(w->found[i].text, text)) {
            w->duplicates++;
            base_free(text);
            ir_graph_free(u);
            return;
        }
    int fp = fingerprint_ok(s, u, &w->ctx);
    mg_verify_report rep;
    if (fp == 1 && vf_verify(s->prog, u, &w->ctx, s->o->verify_tests, s->o->seed, &rep) == MG_OK &&
        rep.verdict == MG_EQUIVALENT) {
        add_found(w, text, u, rep.text);
        __atomic_add_fetch(&s->found, 1, __ATOMIC_RELAXED);
    } else {
        w->rejected++;
        base_free(text);
    }
    ir_graph_free(u);
}

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

/* Is term allowed (pruning)? Counts the pruned ones. */
static int keep_term(worker *w, int32_t term) {
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

/* Kernel-level: tries pre-defined op p over tensors ta[] (n_in of them). */
static void k_try(worker *w, const key *last, ir_node p, const int *ta, int64_t attr) {
    key kk = make_key(ta, p.n_in, p.op, attr);
    if (key_cmp(&kk, last) <= 0 || !k_operands_ok(w, ta, p.n_in)) return;
    int32_t tin[2];
    for (int i = 0; i < p.n_in; i++) {
        int x = ta[i];
        p.in[i] = x >= 0 ? w->t[x].node : w->kcnode[-2 - x];
        tin[i] = x >= 0 ? w->t[x].term : w->const_term[-2 - x];
    }
    int32_t term = ae_op_term(&w->tab, w->k, &p, tin[0], p.n_in > 1 ? tin[1] : -1);
    if (!keep_term(w, term)) return;
    int node = ir_add_node(w->k, &w->ctx, &p);
    if (node < 0) return;
    int32_t cls = ae_class(&w->q, term);
    for (int i = 0; i < w->n_t; i++) /* recomputes (abstractly) what is there already */
        if ((w->t[i].term == term || (cls >= 0 && ae_class(&w->q, w->t[i].term) == cls)) && !memcmp(&w->k->nodes[w->t[i].node].shape, &w->k->nodes[node].shape, sizeof(ir_shape))) {
            w->k->n_nodes--;
            return;
        }
    w->t[w->n_t] = (ktens){node, 0, term};
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
    if (w->n_kops == s->o->max_kops - 1)
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
static void kgen_kernels(worker *w, const key *last, int depth0);

static void kgen(worker *w, const key *last) {
    search *s = w->s;
    int depth0 = w->n_kops == 0;
    if (!depth0) {
        w->states++;
        if (stopped(w) || w->oom) return;
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
        if (ok && !unused) {
            int nodes[AE_MAX_ROOTS];
            for (int j = 0; j < s->n_out; j++) nodes[j] = w->t[outs[j]].node;
            candidate(w, nodes);
        }
        /* a prefix that already holds the outputs is not extended: what it would add could
         * only feed tensors nobody needs */
        if (ok || w->n_kops >= s->o->max_kops || seen(w)) return;
    }
    int n = w->n_t;
    /* pre-defined operators */
    for (int i = 0; i < n; i++)
        for (size_t u = 0; u < sizeof unary_ops / sizeof *unary_ops; u++) {
            if (!my_task(w, depth0)) continue;
            ir_node p = {.op = unary_ops[u], .n_in = 1};
            k_try(w, last, p, (int[]){i}, 0);
        }
    for (int i = 0; i < n; i++)
        for (int j = -1 - s->n_const; j < n; j++) {
            if (j == -1 || j == i) continue;
            for (size_t u = 0; u < sizeof binary_ops / sizeof *binary_ops; u++) {
                ir_op op = binary_ops[u];
                if ((op == IR_OP_ADD || op == IR_OP_MUL) && j >= 0 && j < i) continue;
                if (!my_task(w, depth0)) continue;
                ir_node p = {.op = op, .n_in = 2};
                k_try(w, last, p, (int[]){i, j}, 0);
            }
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (!my_task(w, depth0)) continue;
            ir_node p = {.op = IR_OP_MATMUL, .n_in = 2};
            k_try(w, last, p, (int[]){i, j}, 0);
        }
    for (int i = 0; i < n; i++) {
        const ir_shape *sh = &w->k->nodes[w->t[i].node].shape;
        for (int d = 0; d < sh->ndim; d++) {
            if (sh->d[d] < 2 || !my_task(w, depth0)) continue;
            ir_node p = {.op = IR_OP_SUM, .n_in = 1, .dim = d, .group = sh->d[d]};
            k_try(w, last, p, (int[]){i}, d);
        }
    }
    kgen_kernels(w, last, depth0);
}

/* ---- graph-defined kernels: inputs, grid, for-loop, imaps and fmaps ---- */

typedef struct kchoice {
    int in[IR_MAX_IN], n_in;
    int grid[3], forloop;
    int imap[IR_MAX_IN][3], fmap[IR_MAX_IN];
} kchoice;

/* Starts block generation for choice c at kernel depth d. */
static void start_block(worker *w, const kchoice *c, const key *last) {
    search *s = w->s;
    int d = w->n_kops;
    if (d >= MAXK) return;
    bstate *bs = &w->bs[d];
    ir_graph *b = ir_block_new(c->grid, 128, c->forloop);
    if (!b) {
        w->oom = 1;
        return;
    }
    bs->b = b, bs->n_t = 0, bs->n_ops = 0, bs->n_saves = 0, bs->n_kin = c->n_in;
    int ok = 1;
    for (int k = 0; k < c->n_in && ok; k++) {
        const ir_node *n = &w->k->nodes[w->t[c->in[k]].node];
        char nm[16];
        snprintf(nm, sizeof nm, "in%d", k);
        ok = ir_block_add_kin(b, &w->ctx, n->name ? n->name : nm, n->dtype, &n->shape) >= 0;
        bs->kin[k] = c->in[k];
    }
    for (int i = 0; i < s->n_const && ok; i++) ok = (bs->cnode[i] = ir_add_const(b, &w->ctx, s->const_lit[i], 0, 0)) >= 0;
    for (int k = 0; k < c->n_in && ok; k++) {
        ir_node p = {.op = IR_OP_ITER, .index = k, .fmap = c->fmap[k]};
        memcpy(p.map, c->imap[k], sizeof p.map);
        int node = ir_add_node(b, &w->ctx, &p);
        ok = node >= 0;
        if (!ok) break;
        btens *t = &bs->t[bs->n_t++];
        memset(t, 0, sizeof *t);
        t->node = node, t->cls = IR_LOOP, t->term = w->t[c->in[k]].term;
        for (int g = 0; g < 3; g++)
            if (c->imap[k][g] >= 0) t->gbits[c->imap[k][g]] |= (uint8_t)(1u << g);
        bs->n_ops++;
    }
    if (ok && ir_block_smem(b) <= ir_device_h100.smem_per_block) {
        key bl = key_min;
        bs->klast = *last;
        bgen(w, d, &bl);
    }
    ir_graph_free(b);
    bs->b = NULL;
}

/* Enumerates imap/fmap for input k onward. */
static void enum_maps(worker *w, kchoice *c, int k, const key *last) {
    if (k == c->n_in) {
        /* every grid dim with blocks splits some input, and a loop of more than one
         * iteration walks some input: otherwise blocks or iterations repeat each other */
        for (int g = 0; g < 3; g++) {
            if (c->grid[g] == 1) continue;
            int used = 0;
            for (int i = 0; i < c->n_in; i++) used |= c->imap[i][g] >= 0;
            if (!used) return;
        }
        if (c->forloop > 1) {
            int used = 0;
            for (int i = 0; i < c->n_in; i++) used |= c->fmap[i] >= 0;
            if (!used) return;
        }
        start_block(w, c, last);
        return;
    }
    const ir_shape *sh = &w->k->nodes[w->t[c->in[k]].node].shape;
    /* imap: per grid dim, phi or a distinct dim it divides evenly */
    int nd = sh->ndim;
    int choices = 1;
    for (int g = 0; g < 3; g++) choices *= c->grid[g] > 1 ? nd + 1 : 1;
    for (int ch = 0; ch < choices && !w->oom; ch++) {
        int x = ch, okm = 1;
        int64_t tile[IR_MAX_DIMS];
        for (int i = 0; i < nd; i++) tile[i] = sh->d[i];
        for (int g = 0; g < 3; g++) {
            c->imap[k][g] = -1;
            if (c->grid[g] == 1) continue;
            int dd = x % (nd + 1) - 1;
            x /= nd + 1;
            c->imap[k][g] = dd;
            if (dd < 0) continue;
            for (int h = 0; h < g; h++) okm &= c->imap[k][h] != dd;
            if (!okm || tile[dd] % c->grid[g]) okm = 0;
            else tile[dd] /= c->grid[g];
        }
        if (!okm) continue;
        for (int f = -1; f < nd; f++) {
            if (c->forloop == 1 && f >= 0) break;
            if (f >= 0 && tile[f] % c->forloop) continue;
            c->fmap[k] = f;
            enum_maps(w, c, k + 1, last);
        }
    }
}

static void kgen_kernels(worker *w, const key *last, int depth0) {
    search *s = w->s;
    const sr_opts *o = s->o;
    int n = w->n_t;
    /* the first entry of the rank is the largest input: only input sets whose key can
     * exceed last are tried (the full key is checked when the block graph completes) */
    for (int mask = 1; mask < (1 << n) && n <= 20; mask++) {
        int cnt = __builtin_popcount((unsigned)mask);
        if (cnt > o->max_kin || cnt > IR_MAX_IN) continue;
        kchoice c;
        memset(&c, 0, sizeof c);
        for (int i = n - 1; i >= 0; i--) /* ascending order of index */
            if (mask >> i & 1) c.in[c.n_in++] = i;
        for (int i = 0, j = c.n_in - 1; i < j; i++, j--) {
            int t = c.in[i];
            c.in[i] = c.in[j], c.in[j] = t;
        }
        key kk = make_key(c.in, c.n_in, IR_OP_KERNEL, INT64_MAX);
        if (key_cmp(&kk, last) <= 0 || !k_operands_ok(w, c.in, c.n_in)) continue;
        /* grids: 1..max_grid_dims dims, sizes from the candidates (x may be 1) */
        int ng = o->n_grid;
        for (int gd = 1; gd <= o->max_grid_dims; gd++) {
            int total = 1;
            for (int g = 0; g < gd; g++) total *= ng;
            for (int gi = 0; gi < total; gi++) {
                int x = gi, blocks = 1, okg = 1;
                c.grid[0] = c.grid[1] = c.grid[2] = 1;
                for (int g = 0; g < gd; g++) {
                    c.grid[g] = o->grid[x % ng];
                    x /= ng;
                    okg &= c.grid[g] > 1 || (g == 0 && gd == 1);
                    blocks *= c.grid[g];
                }
                if (!okg || blocks > o->max_blocks) continue;
                for (int f = 0; f < o->n_forloop; f++) {
                    if (!my_task(w, depth0)) continue;
                    c.forloop = o->forloop[f];
                    enum_maps(w, &c, 0, last);
                }
            }
        }
    }
}

/* ---- the block level ---- */

static void complete_block(worker *w, int d, const key *last);

/* Propagates grid-split bits for op p with operands ta (block tensors). */
static void split_bits(const bstate *bs, const ir_node *p, const int *ta, btens *t) {
    const ir_graph *b = bs->b;
    const ir_shape *out = &b->nodes[t->node].shape;
    memset(t->gbits, 0, sizeof t->gbits);
    t->part = 0;
    for (int i = 0; i < p->n_in; i++) {
        if (ta[i] < 0) continue;
        const btens *a = &bs->t[ta[i]];
        const ir_shape *as = &b->nodes[a->node].shape;
        t->part |= a->part;
        if (p->op == IR_OP_MATMUL) {
            int r = as->ndim;
            for (int dd = 0; dd < r - 2; dd++) t->gbits[dd] |= a->gbits[dd];
            if (i == 0) t->gbits[r - 2] |= a->gbits[r - 2], t->part |= a->gbits[r - 1];
            else t->gbits[r - 1] |= a->gbits[r - 1], t->part |= a->gbits[r - 2];
            continue;
        }
        if (p->op == IR_OP_SUM) {
            memcpy(t->gbits, a->gbits, sizeof t->gbits);
            t->part |= a->gbits[p->dim];
            t->gbits[p->dim] = 0;
            continue;
        }
        int off = out->ndim - as->ndim; /* right-aligned broadcast */
        for (int dd = 0; dd < as->ndim; dd++)
            if (as->d[dd] == out->d[dd + off]) t->gbits[dd + off] |= a->gbits[dd];
    }
}

/* Tries block op p over block tensors ta[] (or -2 - c for constants). */
static void b_try(worker *w, int d, const key *last, ir_node p, const int *ta, int64_t attr) {
    bstate *bs = &w->bs[d];
    key kk = make_key(ta, p.n_in, p.op, attr);
    if (key_cmp(&kk, last) <= 0) return;
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
        p.in[i] = x >= 0 ? bs->t[x].node : bs->cnode[-2 - x];
        tin[i] = x >= 0 ? bs->t[x].term : w->const_term[-2 - x];
    }
    if (p.op == IR_OP_ACCUM) {
        if (cls != IR_LOOP) return;
        cls = IR_POST;
    }
    if (p.op == IR_OP_SAVE && cls != IR_POST) return;
    int32_t term = ae_op_term(&w->tab, bs->b, &p, tin[0], p.n_in > 1 ? tin[1] : -1);
    if (p.op != IR_OP_SAVE && !keep_term(w, term)) return;
    if (p.op == IR_OP_SAVE && w->n_kops == w->s->o->max_kops - 1) {
        int root = 0; /* the last kernel op writes the program's outputs, nothing else */
        for (int j = 0; j < w->s->n_out; j++) root |= ae_is_root(&w->q, term, j);
        if (!root) return;
    }
    int node = ir_add_node(bs->b, &w->ctx, &p);
    if (node < 0) return;
    if (p.op != IR_OP_SAVE) {
        /* a tensor A_eq-equal to one of the same class and shape already in the block adds
         * nothing (the e-class stands in for Mirage's fingerprint here) */
        int32_t c = ae_class(&w->q, term);
        for (int i = 0; i < bs->n_t && c >= 0; i++)
            if (!bs->t[i].is_save && bs->t[i].cls == cls && ae_class(&w->q, bs->t[i].term) == c &&
                !memcmp(&bs->b->nodes[bs->t[i].node].shape, &bs->b->nodes[node].shape, sizeof(ir_shape))) {
                w->duplicates++;
                bs->b->n_nodes--;
                return;
            }
        if (ir_block_smem(bs->b) > ir_device_h100.smem_per_block) {
            bs->b->n_nodes--;
            return;
        }
    }
    btens *t = &bs->t[bs->n_t];
    memset(t, 0, sizeof *t);
    t->node = node, t->cls = cls, t->term = term, t->is_save = p.op == IR_OP_SAVE;
    split_bits(bs, &p, ta, t);
    if (t->is_save) {
        if (ir_add_output(bs->b, &w->ctx, node) < 0) {
            bs->b->n_nodes--;
            return;
        }
        bs->n_saves++;
    }
    for (int i = 0; i < p.n_in; i++)
        if (ta[i] >= 0) bs->t[ta[i]].uses++;
    bs->n_t++, bs->n_ops++;
    bgen(w, d, &kk);
    bs->n_t--, bs->n_ops--;
    for (int i = 0; i < p.n_in; i++)
        if (ta[i] >= 0) bs->t[ta[i]].uses--;
    if (t->is_save) bs->n_saves--, bs->b->n_outputs--;
    bs->b->n_nodes--;
}

/* Savers: each grid dim with blocks maps to the output dim it splits, or, for a grid dim the
 * tile is a partial sum over (split reduction), to any free dim. */
static void try_saves(worker *w, int d, const key *last, int i) {
    bstate *bs = &w->bs[d];
    const btens *t = &bs->t[i];
    const ir_shape *sh = &bs->b->nodes[t->node].shape;
    int nd = sh->ndim, gdims[3], ng = 0;
    for (int g = 0; g < 3; g++)
        if (bs->b->grid[g] > 1) gdims[ng++] = g;
    int total = 1;
    for (int g = 0; g < ng; g++) total *= nd;
    for (int ch = 0; ch < total; ch++) {
        int x = ch, map[3] = {-1, -1, -1}, ok = 1;
        for (int g = 0; g < ng && ok; g++) {
            int gg = gdims[g], dd = x % nd;
            x /= nd;
            for (int h = 0; h < g; h++) ok &= map[gdims[h]] != dd;
            int splits = 0;
            for (int e = 0; e < nd; e++) splits |= (t->gbits[e] >> gg) & 1;
            if (splits) ok &= (t->gbits[dd] >> gg) & 1;
            else ok &= (t->part >> gg) & 1 && t->gbits[dd] == 0;
            map[gg] = dd;
        }
        if (!ok) continue;
        ir_node p = {.op = IR_OP_SAVE, .n_in = 1, .index = bs->n_saves, .fmap = -1};
        memcpy(p.map, map, sizeof map);
        b_try(w, d, last, p, (int[]){i}, map[0] * 16 + map[1] * 4 + map[2] + 100);
    }
}

static void bgen(worker *w, int d, const key *last) {
    bstate *bs = &w->bs[d];
    search *s = w->s;
    w->states++;
    if (stopped(w) || w->oom) return;
    int unused = 0;
    for (int i = 0; i < bs->n_t; i++) unused += !bs->t[i].is_save && bs->t[i].uses == 0;
    if (bs->n_saves > 0 && unused == 0) complete_block(w, d, last);
    int left = s->o->max_bops - bs->n_ops;
    if (left <= 0 || unused > left) return; /* each op uses up at most one more tensor */
    int n = bs->n_t;
    for (int i = 0; i < n; i++) {
        if (bs->t[i].is_save) continue;
        for (size_t u = 0; u < sizeof unary_ops / sizeof *unary_ops; u++) {
            ir_node p = {.op = unary_ops[u], .n_in = 1};
            b_try(w, d, last, p, (int[]){i}, 0);
        }
        for (int j = -1 - s->n_const; j < n; j++) {
            if (j == -1 || j == i || (j >= 0 && bs->t[j].is_save)) continue;
            for (size_t u = 0; u < sizeof binary_ops / sizeof *binary_ops; u++) {
                ir_op op = binary_ops[u];
                if ((op == IR_OP_ADD || op == IR_OP_MUL) && j >= 0 && j < i) continue;
                ir_node p = {.op = op, .n_in = 2};
                b_try(w, d, last, p, (int[]){i, j}, 0);
            }
            if (j >= 0) {
                ir_node p = {.op = IR_OP_MATMUL, .n_in = 2};
                b_try(w, d, last, p, (int[]){i, j}, 0);
                const ir_shape *a = &bs->b->nodes[bs->t[i].node].shape;
                for (int dd = 0; dd < a->ndim; dd++) {
                    ir_node q = {.op = IR_OP_CONCAT, .n_in = 2, .dim = dd};
                    b_try(w, d, last, q, (int[]){i, j}, dd);
                }
            }
        }
        const ir_shape *sh = &bs->b->nodes[bs->t[i].node].shape;
        for (int dd = 0; dd < sh->ndim; dd++) {
            if (sh->d[dd] < 2) continue;
            ir_node p = {.op = IR_OP_SUM, .n_in = 1, .dim = dd, .group = sh->d[dd]};
            b_try(w, d, last, p, (int[]){i}, dd);
        }
        if (bs->t[i].cls == IR_LOOP) {
            ir_node p = {.op = IR_OP_ACCUM, .n_in = 1, .fmap = -1};
            b_try(w, d, last, p, (int[]){i}, 0);
        }
        if (bs->t[i].cls == IR_POST) try_saves(w, d, last, i);
    }
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

/* A complete block graph: becomes a kernel operator of the kernel graph, whose generation
 * then goes on from there. */
static void complete_block(worker *w, int d, const key *last) {
    (void)last;
    bstate *bs = &w->bs[d];
    if (w->n_t + bs->n_saves > MAXT || w->n_kops >= w->s->o->max_kops) return;
    key kk = make_key(bs->kin, bs->n_kin, IR_OP_KERNEL, (int64_t)block_hash(bs->b));
    if (key_cmp(&kk, &bs->klast) <= 0) return;
    if (ir_block_check(bs->b, NULL, &ir_device_h100)) return;
    ir_graph *body = clone_block(bs->b, &w->ctx);
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
    for (int i = 0; i < bs->n_t; i++)
        if (bs->t[i].is_save) {
            int j = w->n_t - n_t0;
            w->t[w->n_t++] = (ktens){first + j, 0, bs->t[i].term};
        }
    for (int k = 0; k < bs->n_kin; k++) w->t[bs->kin[k]].uses++;
    int lf = w->last_first;
    w->last_first = n_t0;
    w->n_kops++;
    kgen(w, &kk);
    w->n_kops--;
    w->last_first = lf;
    for (int k = 0; k < bs->n_kin; k++) w->t[bs->kin[k]].uses--;
    w->n_t = n_t0;
    w->k->n_nodes = n0;
    ir_graph_free(body);
}

/* ---- tasks, threads, checkpoints ---- */

static int worker_init(worker *w, search *s) {
    memset(w, 0, sizeof *w);
    w->s = s;
    ae_tab_init(&w->tab);
    for (int i = 0; i < s->prog->n_nodes; i++)
        if (s->prog->nodes[i].op == IR_OP_INPUT) ae_var(&w->tab, s->prog->nodes[i].name);
    ae_query_init(&w->q, s->eg, &w->tab);
    w->k = ir_graph_new();
    if (!w->k || w->tab.oom) return -1;
    for (int i = 0; i < s->prog->n_nodes; i++) {
        const ir_node *n = &s->prog->nodes[i];
        if (n->op != IR_OP_INPUT) continue;
        int node = ir_add_input(w->k, &w->ctx, n->name, n->dtype, &n->shape);
        if (node < 0) return -1;
        int32_t term = ae_make(&w->tab, AE_VAR, -1, -1, w->n_t, 0);
        w->t[w->n_t++] = (ktens){node, 0, term};
    }
    for (int c = 0; c < s->n_const; c++)
        if ((w->kcnode[c] = ir_add_const(w->k, &w->ctx, s->const_lit[c], 0, 0)) < 0) return -1;
    for (int c = 0; c < s->n_const; c++) {
        const ir_node *n = &w->k->nodes[w->kcnode[c]];
        w->const_term[c] = ae_make(&w->tab, AE_CONST, -1, -1, n->num, n->den);
    }
    return 0;
}

static void worker_free(worker *w) {
    base_free(w->memo);
    for (int i = 0; i < w->n_found; i++) base_free(w->found[i].text);
    base_free(w->found);
    ae_query_free(&w->q);
    ae_tab_free(&w->tab);
    ir_graph_free(w->k);
}

/* Runs task number `task`: the depth-0 choice of that number and everything below it. */
static void run_task(worker *w, int64_t task) {
    w->task = (int)task, w->counter = 0;
    if (w->memo) memset(w->memo, 0, sizeof *w->memo * (size_t)w->cap_memo);
    w->n_memo = 0;
    w->n_found = 0;
    kgen(w, &key_min);
}

/* The checkpoint: DIR/checkpoint/key names the search (program and options); a file
 * DIR/checkpoint/task-N holds task N's verified μGraphs once it has finished. */
static uint64_t search_key(const search *s) {
    strbuf sb = {0};
    ir_print_text(s->prog, &sb);
    const sr_opts *o = s->o;
    sb_printf(&sb, "|%d %d %d %d %d %d %d|", o->max_kops, o->max_bops, o->max_kin, o->max_grid_dims,
              o->max_blocks, o->prune, o->verify_tests);
    for (int i = 0; i < o->n_grid; i++) sb_printf(&sb, "g%d", o->grid[i]);
    for (int i = 0; i < o->n_forloop; i++) sb_printf(&sb, "f%d", o->forloop[i]);
    sb_printf(&sb, "s%llu", (unsigned long long)o->seed);
    uint64_t h = sb.s ? text_hash(sb.s) : 0;
    sb_free(&sb);
    return h;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    strbuf sb = {0};
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_printf(&sb, "%.*s", (int)n, buf);
    fclose(f);
    if (len) *len = sb.len;
    if (!sb.s) return base_strdup("");
    return sb_take(&sb);
}

/* Writes text to path atomically (temporary file, then rename). */
static int write_atomic(const char *path, const char *text) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path)) {
        remove(tmp);
        return -1;
    }
    return 0;
}

/* Task record format: one line "found COST KOPS BOPS KERNELS AEQ" then the verdict line, then
 * the μGraph text, then a line "%%end". */
static void save_task(search *s, int64_t task, const sr_found *f, int n) {
    if (!s->o->ckpt_dir) return;
    strbuf sb = {0};
    sb_printf(&sb, "task %lld done\n", (long long)task);
    for (int i = 0; i < n; i++)
        sb_printf(&sb, "found %.17g %d %d %d %d\n%s\n%s%%%%end\n", f[i].cost_us, f[i].kops, f[i].bops,
                  f[i].kernels, f[i].aeq, f[i].verdict, f[i].text);
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint/task-%lld", s->o->ckpt_dir, (long long)task);
    if (sb.s) write_atomic(path, sb.s);
    sb_free(&sb);
}

/* Loads a finished task's record; 0 if present and well formed. */
static int load_task(search *s, int64_t task) {
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint/task-%lld", s->o->ckpt_dir, (long long)task);
    char *text = read_file(path, NULL);
    if (!text) return -1;
    int n = 0, cap = 0, ok = !strncmp(text, "task ", 5);
    sr_found *f = NULL;
    char *p = strchr(text, '\n');
    while (ok && p && p[1]) {
        p++;
        sr_found x;
        memset(&x, 0, sizeof x);
        if (sscanf(p, "found %lf %d %d %d %d", &x.cost_us, &x.kops, &x.bops, &x.kernels, &x.aeq) != 5) {
            ok = 0;
            break;
        }
        char *v = strchr(p, '\n');
        char *body = v ? strchr(v + 1, '\n') : NULL;
        char *end = body ? strstr(body + 1, "%%end\n") : NULL;
        if (!end) {
            ok = 0;
            break;
        }
        snprintf(x.verdict, sizeof x.verdict, "%.*s", (int)(body - v - 1), v + 1);
        x.text = base_alloc((size_t)(end - body));
        if (!x.text) {
            ok = 0;
            break;
        }
        memcpy(x.text, body + 1, (size_t)(end - body - 1));
        x.text[end - body - 1] = 0;
        x.task = (int)task;
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            sr_found *nf = base_realloc(f, sizeof *nf * (size_t)cap);
            if (!nf) {
                base_free(x.text);
                ok = 0;
                break;
            }
            f = nf;
        }
        f[n++] = x;
        p = end + 5;
    }
    base_free(text);
    if (!ok) {
        for (int i = 0; i < n; i++) base_free(f[i].text);
        base_free(f);
        return -1;
    }
    s->task_found[task] = f, s->task_n_found[task] = n;
    return 0;
}

/* Takes the next task and runs it; 0 when there are none left or the search was stopped. */
static int take_task(worker *w) {
    search *s = w->s;
    if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) return 0;
    int64_t task = __atomic_fetch_add(&s->next_task, 1, __ATOMIC_RELAXED);
    if (task >= s->n_tasks) return 0;
    if (s->done[task]) return 1;
    int64_t st0 = w->states, pr0 = w->pruned, ca0 = w->candidates;
    double t0 = now_s();
    run_task(w, task);
    if (getenv("MUGEN_SEARCH_TRACE"))
        fprintf(stderr, "task %lld: %lld states, %.2f s\n", (long long)task, (long long)(w->states - st0), now_s() - t0);
    int finished = !__atomic_load_n(&s->stop, __ATOMIC_RELAXED) && !w->oom;
    /* keep what was found, finished or not; only a finished task is checkpointed */
    sr_found *copy = w->n_found ? base_alloc(sizeof *copy * (size_t)w->n_found) : NULL;
    if (copy) memcpy(copy, w->found, sizeof *copy * (size_t)w->n_found);
    else
        for (int i = 0; i < w->n_found; i++) base_free(w->found[i].text);
    int n = copy ? w->n_found : 0;
    w->n_found = 0;
    pthread_mutex_lock(&s->mu);
    s->task_found[task] = copy, s->task_n_found[task] = n;
    if (finished) s->done[task] = 1, s->tasks_done++;
    pthread_mutex_unlock(&s->mu);
    if (finished) save_task(s, task, copy, n);
    __atomic_add_fetch(&s->states, w->states - st0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->pruned, w->pruned - pr0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->candidates, w->candidates - ca0, __ATOMIC_RELAXED);
    return 1;
}

static void *worker_main(void *arg) {
    while (take_task(arg)) {
    }
    return NULL;
}

void sr_opts_default(sr_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_kops = 5, o->max_bops = 11, o->max_kin = 4, o->max_grid_dims = 2, o->max_blocks = 1024;
    static const int grid[] = {1, 2, 8, 64};
    memcpy(o->grid, grid, sizeof grid), o->n_grid = (int)(sizeof grid / sizeof *grid);
    static const int fl[] = {1, 8, 64};
    memcpy(o->forloop, fl, sizeof fl), o->n_forloop = (int)(sizeof fl / sizeof *fl);
    o->prune = 1;
    o->seed = 1;
}

static int cmp_found(const void *a, const void *b) {
    const sr_found *x = a, *y = b;
    if (x->cost_us != y->cost_us) return x->cost_us < y->cost_us ? -1 : 1;
    return strcmp(x->text, y->text);
}

static void progress(search *s, int final) {
    double t = now_s() - s->t0;
    int64_t st = __atomic_load_n(&s->states, __ATOMIC_RELAXED);
    fprintf(stderr, "%ssearch: %.0f s, %lld states (%.0f/s), %lld pruned, %lld candidates, %lld found, tasks %lld/%lld%s",
            isatty(2) ? "\r" : "", t, (long long)st, t > 0 ? (double)st / t : 0.0,
            (long long)__atomic_load_n(&s->pruned, __ATOMIC_RELAXED),
            (long long)__atomic_load_n(&s->candidates, __ATOMIC_RELAXED),
            (long long)__atomic_load_n(&s->found, __ATOMIC_RELAXED),
            (long long)s->tasks_done, (long long)s->n_tasks, final || !isatty(2) ? "\n" : "  ");
    fflush(stderr);
}

mg_status sr_search(const ir_graph *prog, const sr_opts *o, mg_ctx *ctx, sr_result *r) {
    memset(r, 0, sizeof *r);
    search s;
    memset(&s, 0, sizeof s);
    s.prog = prog, s.o = o, s.t0 = now_s();
    char why[512];
    int lax = ir_is_lax(prog, why, sizeof why);
    if (lax < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!lax)
        return ctx_err(ctx, MG_ERR_UNSUPPORTED, "the program is not Lax (%s); search one Lax part "
                       "at a time (mugen partition)", why);
    if (prog->n_outputs > AE_MAX_ROOTS || prog->n_outputs > VF_MAX_IO)
        return ctx_err(ctx, MG_ERR_LIMIT, "the search handles at most %d outputs", AE_MAX_ROOTS);
    for (int i = 0; i < prog->n_nodes; i++) {
        const ir_node *n = &prog->nodes[i];
        if (n->op == IR_OP_KERNEL)
            return ctx_err(ctx, MG_ERR_INVALID, "the program already contains kernels; search takes "
                           "a program of pre-defined operators");
        if (n->op == IR_OP_INPUT) s.n_in++;
        if (n->op != IR_OP_CONST) continue;
        int dup = 0;
        for (int c = 0; c < s.n_const; c++) dup |= s.const_val[c]->num == n->num && s.const_val[c]->den == n->den;
        if (dup) continue;
        if (s.n_const == MAXC) return ctx_err(ctx, MG_ERR_LIMIT, "the search handles at most %d distinct constants", MAXC);
        s.const_val[s.n_const] = n;
        s.const_lit[s.n_const++] = n->lit;
    }
    if (s.n_in > MAXT / 2) return ctx_err(ctx, MG_ERR_LIMIT, "the search handles at most %d inputs", MAXT / 2);
    s.n_out = prog->n_outputs;
    for (int j = 0; j < s.n_out; j++) s.out_node[j] = prog->outputs[j];
    /* the program's abstract expressions and their e-graph */
    ae_tab_init(&s.tab0);
    for (int i = 0; i < prog->n_nodes; i++)
        if (prog->nodes[i].op == IR_OP_INPUT) ae_var(&s.tab0, prog->nodes[i].name);
    int32_t *terms = base_alloc(sizeof *terms * (size_t)(prog->n_nodes + 1));
    if (!terms) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = ae_of_graph(&s.tab0, ctx, prog, terms);
    int32_t roots[AE_MAX_ROOTS];
    for (int j = 0; !rc && j < s.n_out; j++) roots[j] = terms[prog->outputs[j]];
    base_free(terms);
    if (rc) {
        ae_tab_free(&s.tab0);
        return rc;
    }
    strbuf eb = {0};
    for (int j = 0; j < s.n_out; j++) {
        if (j) sb_puts(&eb, "; ");
        ae_print(&s.tab0, roots[j], &eb);
    }
    r->expr = sb_take(&eb);
    ae_limits lim = {o->eg_max_nodes, 0, 0};
    ae_egraph_stats est;
    s.eg = ae_egraph_new(&s.tab0, roots, s.n_out, &lim, &est);
    if (!s.eg) {
        ae_tab_free(&s.tab0);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory building the e-graph");
    }
    r->eg_nodes = est.nodes, r->eg_classes = est.classes, r->eg_saturated = est.saturated;
    r->eg_seconds = est.seconds;
    /* the fingerprint inputs and the program's outputs on them */
    rng rg = {o->seed ^ 0x5eedf00dull};
    int np = 0;
    for (int i = 0; i < prog->n_nodes && !rc; i++) {
        if (prog->nodes[i].op != IR_OP_INPUT) continue;
        int64_t n = ir_numel(&prog->nodes[i].shape);
        s.fp_ip[np] = base_alloc((size_t)n * 4), s.fp_iq[np] = base_alloc((size_t)n * 4);
        if (!s.fp_ip[np] || !s.fp_iq[np]) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        for (int64_t t = 0; !rc && t < n; t++) s.fp_ip[np][t] = rng_below(&rg, FF_P), s.fp_iq[np][t] = rng_below(&rg, FF_Q);
        np++;
    }
    for (int j = 0; j < s.n_out && !rc; j++) {
        size_t n = (size_t)ir_numel(&prog->nodes[prog->outputs[j]].shape) * 4;
        s.fp_op[j] = base_alloc(n), s.fp_oq[j] = base_alloc(n);
        if (!s.fp_op[j] || !s.fp_oq[j]) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    s.fp_omega = mg_field_omega(rng_next(&rg));
    if (!rc) rc = ev_field(prog, ctx, s.fp_omega, (const uint32_t *const *)s.fp_ip,
                           (const uint32_t *const *)s.fp_iq, s.fp_op, s.fp_oq);
    /* count the tasks: the depth-0 choices */
    worker *ws = NULL;
    int nt = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nt < 1) nt = 1;
    if (nt > 256) nt = 256;
    if (!rc) {
        ws = base_calloc((size_t)nt, sizeof *ws);
        if (!ws) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        for (int i = 0; !rc && i < nt; i++)
            if (worker_init(&ws[i], &s)) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    if (!rc) {
        ws[0].task = -1, ws[0].counter = 0;
        kgen(&ws[0], &key_min);
        s.n_tasks = ws[0].counter;
        s.done = base_calloc((size_t)s.n_tasks + 1, 1);
        s.task_found = base_calloc((size_t)s.n_tasks + 1, sizeof *s.task_found);
        s.task_n_found = base_calloc((size_t)s.n_tasks + 1, sizeof *s.task_n_found);
        if (!s.done || !s.task_found || !s.task_n_found) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    /* the checkpoint: resume finished tasks */
    if (!rc && o->ckpt_dir) {
        char path[4096], keytext[64];
        snprintf(path, sizeof path, "%s/checkpoint", o->ckpt_dir);
        mkdir(o->ckpt_dir, 0777);
        if (mkdir(path, 0777) && errno != EEXIST)
            rc = ctx_err(ctx, MG_ERR_IO, "cannot create %s: %s", path, strerror(errno));
        snprintf(keytext, sizeof keytext, "%016llx %lld\n", (unsigned long long)search_key(&s), (long long)s.n_tasks);
        snprintf(path, sizeof path, "%s/checkpoint/key", o->ckpt_dir);
        char *old = rc ? NULL : read_file(path, NULL);
        if (old && strcmp(old, keytext)) {
            rc = ctx_err(ctx, MG_ERR_IO, "%s belongs to another search (other program or options); "
                         "remove %s/checkpoint or choose another --out", path, o->ckpt_dir);
        } else if (!rc && !old && write_atomic(path, keytext)) {
            rc = ctx_err(ctx, MG_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        }
        for (int64_t t = 0; !rc && old && t < s.n_tasks; t++)
            if (!load_task(&s, t)) s.done[t] = 2, s.tasks_done++, r->tasks_resumed++;
        base_free(old);
    }
    if (!rc) {
        pthread_mutex_init(&s.mu, NULL);
        pthread_t th[256];
        int started = 0;
        for (int i = 1; i < nt; i++)
            if (!pthread_create(&th[i], NULL, worker_main, &ws[i])) started++;
            else break;
        /* the main thread works too and prints progress between its tasks */
        double last = now_s();
        while (take_task(&ws[0]))
            if (o->progress && now_s() - last >= 1.0) {
                last = now_s();
                progress(&s, 0);
            }
        for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
        pthread_mutex_destroy(&s.mu);
        if (o->progress) progress(&s, 1);
    }
    /* merge in task order, dedupe by text, rank by the cost model */
    for (int i = 0; ws && i < nt; i++) {
        r->candidates += ws[i].candidates, r->rejected += ws[i].rejected, r->duplicates += ws[i].duplicates;
    }
    r->states = s.states, r->pruned = s.pruned;
    r->tasks = s.n_tasks, r->tasks_done = s.tasks_done;
    r->stopped = s.stop;
    int total = 0;
    for (int64_t t = 0; !rc && t < s.n_tasks; t++) total += s.task_n_found[t];
    if (!rc && total) {
        r->found = base_calloc((size_t)total, sizeof *r->found);
        if (!r->found) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    for (int64_t t = 0; !rc && t < s.n_tasks; t++)
        for (int i = 0; i < s.task_n_found[t]; i++) {
            sr_found *f = &s.task_found[t][i];
            int dup = 0;
            for (int j = 0; j < r->n_found && !dup; j++) dup = !strcmp(r->found[j].text, f->text);
            if (dup) {
                base_free(f->text);
                r->duplicates++;
            } else {
                r->found[r->n_found++] = *f;
            }
            f->text = NULL;
        }
    if (r->n_found) qsort(r->found, (size_t)r->n_found, sizeof *r->found, cmp_found);
    if (!rc && !r->n_found) {
        if (r->stopped)
            snprintf(r->why_none, sizeof r->why_none, "the search was stopped after %lld of %lld tasks "
                     "before any μGraph was verified", (long long)r->tasks_done, (long long)r->tasks);
        else if (!r->candidates)
            snprintf(r->why_none, sizeof r->why_none, "no complete μGraph within the limits: %s "
                     "(raise --max-kops/--max-bops or widen --grid/--forloop)",
                     s.pruned && o->prune ? "every other prefix was pruned by its abstract expression"
                                          : "no prefix reached the program's expression");
        else
            snprintf(r->why_none, sizeof r->why_none, "%lld candidates reached the program's abstract "
                     "expression, but none passed the fingerprint and the verifier", (long long)r->candidates);
    }
    r->seconds = now_s() - s.t0;
    for (int i = 0; ws && i < nt; i++) worker_free(&ws[i]);
    base_free(ws);
    for (int64_t t = 0; t < s.n_tasks && s.task_found; t++) base_free(s.task_found[t]);
    base_free(s.task_found);
    base_free(s.task_n_found);
    base_free(s.done);
    for (int j = 0; j < VF_MAX_IO; j++) {
        base_free(s.fp_ip[j]), base_free(s.fp_iq[j]), base_free(s.fp_op[j]), base_free(s.fp_oq[j]);
    }
    ae_egraph_free(s.eg);
    ae_tab_free(&s.tab0);
    if (rc) sr_result_free(r);
    return rc;
}

void sr_result_free(sr_result *r) {
    for (int i = 0; i < r->n_found; i++) base_free(r->found[i].text);
    base_free(r->found);
    base_free(r->expr);
    memset(r, 0, sizeof *r);
}
