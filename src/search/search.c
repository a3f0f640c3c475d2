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
#include "../opt/opt.h"
#include "../verify/verify.h"
#include "aexpr.h"

enum { MAXT = 48, MAXK = 8, KEYN = IR_MAX_IN + 3, MAXC = 8 };
/* the compound block operator rmsnorm's rank type (add_block_op) and its --ops bit */
enum { SR_RMSNORM = IR_OP_COUNT };
/* Bumped whenever the generator changes what a task explores: a checkpoint written by
 * another version is refused rather than mixed in. */
enum { SEARCH_VERSION = 13 };

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

/* A kernel-graph tensor and a block-graph tensor of the prefix being grown. */
typedef struct ktens {
    int node, uses;
    int32_t term;
    uint64_t lab[IR_MAX_DIMS]; /* the program's dim label of each dim (dim_labels) */
} ktens;
typedef struct btens {
    int node, uses, cls, is_save;
    int32_t term;
} btens;
enum { MAXBN = 64, NSLOT = MAXBN * IR_MAX_DIMS, MAXRC = IR_MAX_IN * IR_MAX_DIMS };

/* One schedule of a complete untiled block graph (phase 2): the tiled graph and what the
 * kernel graph sees of it (its outputs' expressions and dim labels, and their hash iface:
 * schedules with the same iface are interchangeable for the rest of the search). */
enum { MAXS = 8 };
typedef struct tiling {
    ir_graph *t;
    int32_t term[MAXS];
    uint64_t lab[MAXS][IR_MAX_DIMS];
    uint64_t iface;
    double us; /* the cost model's time for it (block_us) */
} tiling;

/* One block graph under construction (one per kernel depth). */
typedef struct bstate {
    ir_graph *b;
    btens t[MAXT];
    int n_t, n_ops, n_saves;
    int kin[IR_MAX_IN], n_kin; /* the kernel tensors it reads */
    int cnode[MAXC];           /* block node of each program constant */
    int rcnode[MAXRC], n_rc;   /* constants the compound rmsnorm divides by (add_block_op) */
    int64_t rcval[MAXRC];
    uint64_t lab[MAXBN][IR_MAX_DIMS]; /* dim labels of each block node */
    key klast;                 /* rank of the kernel graph's last operator */
    /* phase 2: the schedules of the complete block graph; grp[0..n_grp) those of the group
     * standing as kernel node knode in the kernel graph while active */
    tiling *tl;
    int n_tl, cap_tl;
    int *grp, n_grp;
    int knode, active;
} bstate;

typedef struct search search;

typedef struct worker {
    search *s;
    ae_tab tab;
    ae_query q;
    mg_ctx ctx;
    ir_graph *k;
    ktens t[MAXT];
    int n_t, n_kops, n_kernels; /* tensors, kernel ops, graph-defined ones among them */
    int last_first; /* first tensor the last kernel op produced (chain rule) */
    int kcnode[MAXC];
    int32_t const_term[MAXC]; /* the program's constants as terms of this worker's table */
    bstate bs[MAXK];
    int task, counter; /* depth-0 choices are numbered; only the one == task is explored */
    int max_kops, min_kops; /* this task's pass: kernel graphs of min_kops..max_kops ops */
    int64_t states, pruned, candidates, rejected, duplicates;
    sr_found *found;
    int n_found, cap_found;
    int oom;
    /* interfaces of kernel-graph prefixes already extended in this task (see seen()) */
    uint64_t *memo;
    int64_t n_memo, cap_memo;
    /* the screen's verdicts (screen()) */
    uint64_t *scr;
    int64_t n_scr, cap_scr;
    int64_t screened, dominated, unfit;
    double verify_s; /* time in candidate() */
    int64_t pub[3]; /* states, pruned, candidates as of the last publish() */
} worker;

struct search {
    const ir_graph *prog;
    const sr_opts *o;
    mg_device dev; /* the target: the default device with o->n_sm multiprocessors */
    ae_egraph *eg;
    ae_tab tab0;
    int n_in, n_out;
    int out_node[AE_MAX_ROOTS];
    int n_const;
    const char *const_lit[MAXC];
    const ir_node *const_val[MAXC]; /* the program's node of each distinct constant */
    /* dim labels (labels_op): the program inputs' dims, and the labels the program reduces */
    uint64_t in_lab[MAXT][IR_MAX_DIMS], red_lab;
    int max_rank; /* the program's largest tensor rank: a larger one may be squeezed */
    uint64_t ops; /* the operators it may place (--ops): bit op, SR_RMSNORM for the compound */
    vf_ref *ref; /* the verifier's program side, shared by the workers */
    /* the screen (screen()): the program untiled at small sizes, its verifier side */
    vf_ref *screen_ref;
    ir_graph *shrunk;
    int64_t shrink_from[MAXT * IR_MAX_DIMS], shrink_to[MAXT * IR_MAX_DIMS];
    int n_shrink;
    /* shared progress */
    int64_t next_task, n_tasks, n_tasks1; /* n_tasks1: those of the first pass (set_pass) */
    int64_t states, pruned, candidates, rejected, duplicates, found, tasks_done;
    uint8_t *done; /* per task: finished (1) or resumed from the checkpoint (2) */
    sr_found **task_found;
    int *task_n_found;
    pthread_mutex_t mu;
    double t0;
    int stop;
    int running; /* worker threads not finished */
    double first_s; /* when the first μGraph was verified */
};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Has the search been stopped (time limit, stop request)? Looks at the clock when `now` is
 * set or every 1024 states. */
static void publish(worker *w);
static int stopped_at(worker *w, int now) {
    search *s = w->s;
    if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) return 1;
    if (now || (w->states & 1023) == 0) {
        publish(w);
        if ((s->o->stop && *s->o->stop) ||
            (s->o->time_limit > 0 && now_s() - s->t0 > s->o->time_limit)) {
            __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
            return 1;
        }
    }
    return 0;
}
static int stopped(worker *w) { return stopped_at(w, 0); }

/* Adds what worker w counted since last time to the shared counters (progress line). */
static void publish(worker *w) {
    search *s = w->s;
    __atomic_add_fetch(&s->states, w->states - w->pub[0], __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->pruned, w->pruned - w->pub[1], __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->candidates, w->candidates - w->pub[2], __ATOMIC_RELAXED);
    w->pub[0] = w->states, w->pub[1] = w->pruned, w->pub[2] = w->candidates;
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
static uint64_t text_hash(const char *s) {
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

/* A copy of μGraph or program g with every graph-defined kernel untiled (grid 1, for-loop 1,
 * no imaps, fmaps or omaps) and every input dim of size from[i] made to[i] (i < n); a block
 * graph's kernel inputs have shapes kin[]. NULL if
 * g holds an operator whose meaning depends on a size (reshape, repeat, a partial sum) or on
 * error. */
static ir_graph *untile(const ir_graph *g, const ir_shape *kin, const int64_t *from, const int64_t *to, int n,
                        mg_ctx *ctx) {
    int is_block = g->is_block;
    ir_graph *c = is_block ? ir_block_new((int[]){1, 1, 1}, g->threads, 1) : ir_graph_new();
    int *map = base_alloc(sizeof *map * (size_t)(g->n_nodes + 1));
    int ok = c && map;
    for (int k = 0; ok && is_block && k < g->n_kin; k++)
        ok = ir_block_add_kin(c, ctx, g->kin_name[k], g->kin_dtype[k], &kin[k]) >= 0;
    for (int i = 0; ok && i < g->n_nodes; i++) {
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
        case IR_OP_RESHAPE:
        case IR_OP_REPEAT: map[i] = -1; break;
        case IR_OP_KERNEL: {
            if (nd->index) {
                map[i] = map[i - nd->index] + nd->index;
                break;
            }
            ir_shape in[IR_MAX_IN];
            for (int k = 0; k < p.n_in; k++) in[k] = c->nodes[p.in[k]].shape;
            ir_graph *body = untile(nd->body, in, from, to, n, ctx);
            map[i] = body ? ir_add_kernel(c, ctx, body, p.in, p.n_in, NULL, 0, 0) : -1;
            for (int j = 0; map[i] >= 0 && j < nd->body->n_outputs && ok; j++)
                if (g->nodes[i + j].name) ok = ir_set_name(c, ctx, map[i] + j, g->nodes[i + j].name) >= 0;
            break;
        }
        default:
            if (nd->op == IR_OP_SUM) {
                if (nd->group != g->nodes[nd->in[0]].shape.d[nd->dim]) {
                    map[i] = -1;
                    break;
                }
                p.group = 0;
            }
            p.fmap = -1;
            for (int k = 0; k < 3; k++) p.map[k] = -1;
            map[i] = ir_add_node(c, ctx, &p);
            if (map[i] >= 0 && nd->op == IR_OP_SAVE) ok = ir_add_output(c, ctx, map[i]) >= 0;
            if (map[i] >= 0 && p.name) ok = ir_set_name(c, ctx, map[i], p.name) >= 0;
        }
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

/* Does the screen pass candidate u? 1 if so or if u cannot be screened, 0 if its operators,
 * untiled and shrunk, are not equivalent to the program shrunk alike. Verdicts are kept by
 * the text of the untiled graph, so each operator graph is screened once per worker. */
static int screen(worker *w, const ir_graph *u) {
    search *s = w->s;
    if (!s->screen_ref) return 1;
    ir_graph *v = untile(u, NULL, s->shrink_from, s->shrink_to, s->n_shrink, &w->ctx);
    if (!v) return 1;
    strbuf sb = {0};
    ir_print_text(v, &sb);
    char *text = sb_take(&sb);
    int pass = 1;
    if (text) {
        uint64_t h = (text_hash(text) | 2) & ~1ull; /* never 0; the low bit holds the verdict */
        base_free(text);
        int64_t at = -1;
        if (w->n_scr * 2 >= w->cap_scr) { /* grow the open-addressing table */
            int64_t cap = w->cap_scr ? w->cap_scr * 2 : 256;
            uint64_t *t = base_calloc((size_t)cap, sizeof *t);
            if (t) {
                for (int64_t i = 0; i < w->cap_scr; i++) {
                    if (!w->scr[i]) continue;
                    int64_t j = (int64_t)((w->scr[i] >> 1) % (uint64_t)cap);
                    while (t[j]) j = (j + 1) % cap;
                    t[j] = w->scr[i];
                }
                base_free(w->scr);
                w->scr = t, w->cap_scr = cap;
            }
        }
        if (w->cap_scr) {
            at = (int64_t)((h >> 1) % (uint64_t)w->cap_scr);
            while (w->scr[at] && (w->scr[at] & ~1ull) != h) at = (at + 1) % w->cap_scr;
        }
        if (at >= 0 && w->scr[at]) {
            pass = (int)(w->scr[at] & 1);
        } else {
            mg_verify_report rep;
            pass = vf_verify_ref(s->screen_ref, v, &w->ctx, &rep) != MG_OK || rep.verdict == MG_EQUIVALENT;
            if (at >= 0) w->scr[at] = h | (uint64_t)pass, w->n_scr++;
        }
    }
    ir_graph_free(v);
    return pass;
}

/* ---- the cost model ---- */

enum { COST_BW = 3000, COST_LAUNCH_US = 2 }; /* GB/s; µs */
static const double cost_rate = 660e12; /* FLOP/s */
/* µs each for-loop iteration adds per wave of blocks (its barriers and pipeline wait), and
 * how far one SM may pull more than its share of the bandwidth when others idle. Fitted on
 * H100 (RMSNorm+Linear, docs/notes/2026-11-22-hopper-codegen.md): grid 128 with 8, 16, 32,
 * 64 iterations took 29.7, 28.1, 25.6, 34.7 µs; grid 96 (128-byte rows) 24.4 µs. */
static const double cost_iter_us = 0.05, cost_sm_share = 1.5;
/* mugen's pre-defined operators (kernel-level loops): scalar matmul FLOP/s, and µs per
 * element a reducing thread reads */
static const double cost_scalar_rate = 0.34e12, cost_serial_us = 0.5e-3;

/* Bytes device memory moves for rows of w bytes read at offsets that are multiples of w:
 * whole 64-byte bursts (HBM), averaged over the offsets. A 96-byte row costs 128. */
static double row_bytes(double w) {
    if (w <= 0) return 0;
    double sum = 0;
    for (int k = 0; k < 64; k++) {
        double lo = floor(k * w / 64), hi = ceil((k * w + w) / 64);
        sum += (hi - lo) * 64;
    }
    return sum / 64;
}

/* The cost model's time for graph-defined kernel body b, its launch not included:
 *   memory: bytes (every iterator's tile each iteration in each block, in 64-byte bursts per
 *   row where a tile is narrower than its tensor; every saved tile) over bandwidth, the
 *   blocks of a wave pulling at most cost_sm_share of an SM's share each;
 *   compute: FLOPs over the tensor-core rate, divided by the share of SMs its waves keep busy;
 *   plus the pipeline's fill (one iteration's tiles of a wave) and cost_iter_us per iteration
 *   and wave. */
static double block_us(const ir_graph *b, const mg_device *dev, unsigned outs) {
    double n_sm = dev && dev->n_sm > 0 ? dev->n_sm : 1, bytes = 0, flops = 0, iter_bytes = 0;
    double blocks = (double)b->grid[0] * b->grid[1] * b->grid[2], waves = ceil(blocks / n_sm);
    double util = blocks / (waves * n_sm), mem_util = fmin(1.0, cost_sm_share * util);
    for (int j = 0; j < b->n_nodes; j++) {
        const ir_node *m = &b->nodes[j];
        double el = (double)ir_numel(&m->shape), esz = (double)base_dtype_size(m->dtype);
        if (m->op == IR_OP_ITER) {
            const ir_shape *full = &b->kin_shape[m->index];
            double w = m->shape.ndim ? (double)m->shape.d[m->shape.ndim - 1] : 1, t = el * esz;
            if (full->ndim && (double)full->d[full->ndim - 1] > w) t = el / w * row_bytes(w * esz);
            bytes += t * (double)b->forloop * blocks;
            iter_bytes += t * fmin(blocks, n_sm);
        }
        if (m->op == IR_OP_SAVE) {
            /* a program output is row-major: rows of w elements when a grid dim splits its last
             * dim; codegen lays intermediates out so that each block's tile is contiguous */
            const ir_shape *src = &b->nodes[m->in[0]].shape;
            int last = src->ndim - 1, split = 0;
            for (int g = 0; g < 3 && (outs >> m->index & 1); g++) split |= last >= 0 && m->map[g] == last && b->grid[g] > 1;
            double w = last >= 0 ? (double)src->d[last] : 1;
            bytes += (split ? el / w * row_bytes(w * esz) : el * esz) * blocks;
        }
        if (m->op == IR_OP_MATMUL) {
            const ir_shape *a = &b->nodes[m->in[0]].shape;
            flops += 2.0 * el * (double)a->d[a->ndim - 1] * (double)b->forloop * blocks;
        }
    }
    double bw = COST_BW * 1e9;
    return (fmax(bytes / bw / mem_util, flops / cost_rate / util) + (b->forloop > 1 ? iter_bytes / bw : 0)) * 1e6 +
           cost_iter_us * (double)b->forloop * waves;
}

double sr_cost_us(const ir_graph *ug, const mg_device *dev) {
    double us = 0;
    for (int i = 0; i < ug->n_nodes; i++) {
        const ir_node *n = &ug->nodes[i];
        if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST) continue;
        if (n->op == IR_OP_KERNEL) {
            if (n->index) continue;
            unsigned outs = 0; /* which of its outputs are the program's */
            for (int j = i; j < ug->n_nodes; j++)
                for (int q = 0; q < ug->n_outputs; q++)
                    if (ug->outputs[q] == j && ug->nodes[j].op == IR_OP_KERNEL && ug->nodes[j].body == n->body)
                        outs |= 1u << ug->nodes[j].index;
            us += COST_LAUNCH_US + block_us(n->body, dev, outs);
            continue;
        }
        /* a pre-defined operator: mugen's kernel-level code, a grid-stride loop with one
         * thread per output element (codegen/emit.c): memory-bound for elementwise
         * operators; a reduction's thread reads its group serially; a matmul's thread runs
         * its dot product in scalar f32 (measured on H100: 2x4096 @ 4096x6144 in 294 µs,
         * 0.34 TFLOP/s), far from a tensor-core library */
        double bytes = (double)ir_numel(&n->shape) * (double)base_dtype_size(n->dtype), flops = 0, serial = 0;
        for (int k = 0; k < n->n_in; k++) {
            const ir_node *m = &ug->nodes[n->in[k]];
            bytes += (double)ir_numel(&m->shape) * (double)base_dtype_size(m->dtype);
        }
        if (n->op == IR_OP_MATMUL) {
            const ir_shape *a = &ug->nodes[n->in[0]].shape;
            flops = 2.0 * (double)ir_numel(&n->shape) * (double)a->d[a->ndim - 1];
        }
        if (ir_ops[n->op].kind == IR_KIND_REDUCE) serial = (double)n->group * cost_serial_us;
        us += COST_LAUNCH_US + fmax(fmax(bytes / (COST_BW * 1e9), flops / cost_scalar_rate) * 1e6, serial);
    }
    return us;
}

/* ---- candidates ---- */

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
    f->cost_us = sr_cost_us(u, &w->s->dev);
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

/* Candidate u (owned): deduplicated by text, verified, kept if equivalent. */
static void verify_one(worker *w, ir_graph *u) {
    search *s = w->s;
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
    mg_verify_report rep; /* its first field test is Mirage's fingerprint screen */
    mg_status rc = vf_verify_ref(s->ref, u, &w->ctx, &rep);
    if (rc == MG_OK && rep.verdict == MG_EQUIVALENT) {
        add_found(w, text, u, rep.text);
        if (__atomic_fetch_add(&s->found, 1, __ATOMIC_RELAXED) == 0) s->first_s = now_s() - s->t0;
    } else {
        w->rejected += rc != MG_ERR_LIMIT; /* stopped midway: neither kept nor rejected */
        base_free(text);
    }
    ir_graph_free(u);
}

/* A kernel graph whose tensors outs[] match the program's outputs (A_eq-equal, so every
 * μGraph found has aeq set). Each of its kernels stands for a group of interchangeable
 * schedules (tiled_kernel), so this is one candidate per combination of them: the operators
 * are screened once (screen()), then every combination is materialised and verified. */
static void candidate_in(worker *w, const int *outs);
static void candidate(worker *w, const int *outs) {
    double t0 = now_s();
    candidate_in(w, outs);
    w->verify_s += now_s() - t0;
}
static void candidate_in(worker *w, const int *outs) {
    search *s = w->s;
    int ds[MAXK], nd = 0, idx[MAXK] = {0};
    ir_graph *rep[MAXK];
    int64_t combos = 1;
    for (int d = 0; d < MAXK; d++)
        if (w->bs[d].active) {
            rep[nd] = w->k->nodes[w->bs[d].knode].body;
            ds[nd++] = d, combos *= w->bs[d].n_grp;
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
        if (c && stopped_at(w, 1)) break;
        for (int i = 0; i < nd; i++) {
            const bstate *bs = &w->bs[ds[i]];
            w->k->nodes[bs->knode].body = bs->tl[bs->grp[idx[i]]].t;
        }
        u = materialize(s, w->k, outs, &w->ctx);
        if (u) verify_one(w, u);
        else w->rejected++;
        for (int i = 0; i < nd && ++idx[i] == w->bs[ds[i]].n_grp; i++) idx[i] = 0;
    }
    for (int i = 0; i < nd; i++) w->k->nodes[w->bs[ds[i]].knode].body = rep[i];
}

typedef struct dimcls {
    int16_t cls[MAXBN][IR_MAX_DIMS]; /* class of each node dim */
    int nc;
    int64_t size[NSLOT];       /* the class's untiled size */
    uint8_t split_ok[NSLOT];   /* read by an iterator, size > 1, not a concat dim */
    uint64_t red[MAXBN];       /* classes (ids < 64) reduced on the way to each node */
} dimcls;

static int uf_find(int *uf, int x) {
    while (uf[x] != x) x = uf[x] = uf[uf[x]];
    return x;
}
static void uf_join(int *uf, int a, int b) {
    a = uf_find(uf, a), b = uf_find(uf, b);
    if (a != b) uf[a > b ? a : b] = a < b ? a : b;
}

/* Fills D for untiled block graph b; -1 if it has too many nodes. */
static int dims_of(const ir_graph *b, dimcls *D) {
    int n = b->n_nodes, uf[NSLOT];
    uint8_t concat_dim[NSLOT] = {0};
    if (n > MAXBN) return -1;
#define S(i, dd) ((i) * IR_MAX_DIMS + (dd))
    for (int x = 0; x < n * IR_MAX_DIMS; x++) uf[x] = x;
    for (int i = 0; i < n; i++) {
        const ir_node *p = &b->nodes[i];
        const ir_shape *o = &p->shape;
        int r = o->ndim;
        switch (p->op) {
        case IR_OP_ITER:
        case IR_OP_INPUT:
        case IR_OP_CONST: break;
        case IR_OP_RESHAPE: { /* only a squeeze of the last dim is followed */
            const ir_shape *a = &b->nodes[p->in[0]].shape;
            if (a->ndim != r + 1 || a->d[r] != 1 || memcmp(a->d, o->d, sizeof *o->d * (size_t)r)) return -1;
            for (int dd = 0; dd < r; dd++) uf_join(uf, S(i, dd), S(p->in[0], dd));
            break;
        }
        case IR_OP_REPEAT:
        case IR_OP_KERNEL:
        case IR_OP_MAX: return -1; /* not analysed: no dim labels (docs/search.md) */
        case IR_OP_MATMUL: {
            const ir_shape *as = &b->nodes[p->in[0]].shape, *bs = &b->nodes[p->in[1]].shape;
            for (int dd = 0; dd < r - 2; dd++) {
                if (as->d[dd] == o->d[dd]) uf_join(uf, S(i, dd), S(p->in[0], dd));
                if (bs->d[dd] == o->d[dd]) uf_join(uf, S(i, dd), S(p->in[1], dd));
            }
            uf_join(uf, S(i, r - 2), S(p->in[0], r - 2));
            uf_join(uf, S(i, r - 1), S(p->in[1], r - 1));
            uf_join(uf, S(p->in[0], r - 1), S(p->in[1], r - 2));
            break;
        }
        case IR_OP_SUM:
        case IR_OP_CONCAT:
            for (int k = 0; k < p->n_in; k++)
                for (int dd = 0; dd < r; dd++)
                    if (dd != p->dim) uf_join(uf, S(i, dd), S(p->in[k], dd));
                    else if (p->op == IR_OP_CONCAT) concat_dim[S(i, dd)] = concat_dim[S(p->in[k], dd)] = 1;
            break;
        default: /* elementwise, accum, save: aligned from the right, broadcast dims apart */
            for (int k = 0; k < p->n_in; k++) {
                const ir_shape *a = &b->nodes[p->in[k]].shape;
                for (int dd = 0; dd < a->ndim; dd++)
                    if (a->d[dd] == o->d[dd + r - a->ndim]) uf_join(uf, S(i, dd + r - a->ndim), S(p->in[k], dd));
            }
        }
    }
    int id[NSLOT];
    D->nc = 0;
    for (int x = 0; x < n * IR_MAX_DIMS; x++) id[x] = -1;
    for (int i = 0; i < n; i++)
        for (int dd = 0; dd < b->nodes[i].shape.ndim; dd++) {
            int root = uf_find(uf, S(i, dd));
            if (id[root] < 0) {
                id[root] = D->nc++;
                D->size[id[root]] = b->nodes[i].shape.d[dd];
                D->split_ok[id[root]] = 0;
            }
            D->cls[i][dd] = (int16_t)id[root];
        }
    uint8_t bad[NSLOT] = {0}, read[NSLOT] = {0};
    for (int i = 0; i < n; i++)
        for (int dd = 0; dd < b->nodes[i].shape.ndim; dd++) {
            int c = D->cls[i][dd];
            bad[c] |= concat_dim[S(i, dd)] || b->nodes[i].shape.d[dd] != D->size[c];
            read[c] |= b->nodes[i].op == IR_OP_ITER;
        }
    for (int c = 0; c < D->nc; c++) D->split_ok[c] = read[c] && !bad[c] && D->size[c] > 1;
    for (int i = 0; i < n; i++) {
        const ir_node *p = &b->nodes[i];
        uint64_t m = 0;
        for (int k = 0; k < p->n_in; k++) m |= D->red[p->in[k]];
        int rc = -1;
        if (p->op == IR_OP_MATMUL) rc = D->cls[p->in[0]][b->nodes[p->in[0]].shape.ndim - 1];
        if (p->op == IR_OP_SUM) rc = D->cls[p->in[0]][p->dim];
        if (rc >= 0 && rc < 64) m |= 1ull << rc;
        D->red[i] = m;
    }
#undef S
    return 0;
}

/* The dim of node i in class c, or -1. */
static int dim_in(const dimcls *D, const ir_graph *b, int i, int c) {
    for (int dd = 0; dd < b->nodes[i].shape.ndim; dd++)
        if (D->cls[i][dd] == c) return dd;
    return -1;
}

/* ---- dim labels ----
 * Every dim of every tensor carries the label of the program dim it stands for (a bit per
 * dim class of the program, dims_of; 0 for size 1). Labels follow the operators; a prefix
 * whose operator aligns dims of different labels (elementwise, batch or concat dims),
 * contracts two different labels (matmul) or reduces a label the program never reduces is
 * not generated. This is a restriction of the search space (docs/search.md), applied with
 * pruning on or off. Returns 1 and fills out[], or 0 if op p (in g, its shape inferred) breaks
 * the rules; la, lb are its operands' labels (NULL for a constant). */
static int labels_op(const search *s, const ir_graph *g, const ir_node *p, const uint64_t *la,
                     const uint64_t *lb, uint64_t *out) {
    const ir_shape *o = &p->shape;
    int r = o->ndim;
    static const uint64_t none[IR_MAX_DIMS];
    const uint64_t *l[2] = {la ? la : none, lb ? lb : none};
    memset(out, 0, sizeof *out * IR_MAX_DIMS);
    /* merges operand k's dims into out, right-aligned; skip: a dim not merged (-1: none) */
#define MERGE(k, skip)                                                                 \
    do {                                                                               \
        const ir_shape *ks = &g->nodes[p->in[k]].shape;                                \
        int off = r - ks->ndim;                                                        \
        for (int dd = 0; dd < ks->ndim; dd++) {                                        \
            if (dd == (skip) || ks->d[dd] != o->d[dd + off] || ks->d[dd] < 2) continue; \
            uint64_t *x = &out[dd + off];                                              \
            if (*x && *x != l[k][dd]) return 0;                                        \
            *x = l[k][dd];                                                             \
        }                                                                              \
    } while (0)
    switch (p->op) {
    case IR_OP_SUM:
        if (l[0][p->dim] & ~s->red_lab) return 0;
        MERGE(0, p->dim);
        return 1;
    case IR_OP_MATMUL: {
        const ir_shape *as = &g->nodes[p->in[0]].shape;
        if (as->d[r - 1] > 1 && (l[0][r - 1] != l[1][r - 2] || (l[0][r - 1] & ~s->red_lab))) return 0;
        MERGE(0, r - 1);
        out[r - 1] = 0;
        for (int dd = 0; dd < r - 2; dd++) { /* batch dims of the second operand */
            const ir_shape *bs = &g->nodes[p->in[1]].shape;
            if (bs->d[dd] < 2) continue;
            if (out[dd] && out[dd] != l[1][dd]) return 0;
            out[dd] = l[1][dd];
        }
        out[r - 1] = g->nodes[p->in[1]].shape.d[r - 1] > 1 ? l[1][r - 1] : 0;
        return 1;
    }
    case IR_OP_RESHAPE: /* a squeeze of the last dim, or a new last dim (partial sums) */
        memcpy(out, l[0], sizeof *out * (size_t)(r < g->nodes[p->in[0]].shape.ndim ? r : g->nodes[p->in[0]].shape.ndim));
        return 1;
    case IR_OP_CONCAT:
        MERGE(0, p->dim);
        MERGE(1, p->dim);
        out[p->dim] = l[0][p->dim] | l[1][p->dim];
        return 1;
    default:
        for (int k = 0; k < p->n_in; k++)
            if (g->nodes[p->in[k]].op != IR_OP_CONST) MERGE(k, -1);
        return 1;
    }
#undef MERGE
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
/* May the search place operator op (an ir_op, or SR_RMSNORM)? */
static int op_on(const search *s, int op) { return (int)(s->ops >> op & 1); }

/* The --ops list as a bit set over the operators the search places; 0 and a message on an
 * unknown name. */
static uint64_t ops_mask(const char *list, char *why, size_t n) {
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
    ktens *nt = &w->t[w->n_t];
    *nt = (ktens){node, 0, term, {0}};
    if (!labels_op(w->s, w->k, &w->k->nodes[node], ta[0] >= 0 ? w->t[ta[0]].lab : NULL,
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
        if (ok && !unused && w->n_kops >= w->min_kops) {
            int nodes[AE_MAX_ROOTS];
            for (int j = 0; j < s->n_out; j++) nodes[j] = w->t[outs[j]].node;
            candidate(w, nodes);
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
    if (d >= MAXK) return;
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
        ok = (bs->cnode[i] = ir_add_const(b, &w->ctx, s->const_lit[i], 0, 0)) >= 0;
        if (ok) memset(bs->lab[bs->cnode[i]], 0, sizeof bs->lab[0]);
    }
    /* the sizes a compound rmsnorm may divide by: the dims of the kernel inputs (a program
     * constant of that value where there is one) */
    bs->n_rc = 0;
    for (int k = 0; k < n_in && ok; k++) {
        const ir_shape *sh = &w->k->nodes[w->t[in[k]].node].shape;
        for (int dd = 0; dd < sh->ndim && ok; dd++) {
            int64_t v = sh->d[dd];
            int c = -1;
            for (int i = 0; i < bs->n_rc; i++)
                if (bs->rcval[i] == v) c = i;
            if (v < 2 || c >= 0) continue;
            for (int i = 0; i < s->n_const; i++)
                if (s->const_val[i]->num == v && s->const_val[i]->den == 1) c = bs->cnode[i];
            if (c < 0) {
                char lit[24];
                snprintf(lit, sizeof lit, "%lld", (long long)v);
                ok = (c = ir_add_const(b, &w->ctx, lit, 0, 0)) >= 0 && c < MAXBN;
                if (ok) memset(bs->lab[c], 0, sizeof bs->lab[0]);
            }
            bs->rcval[bs->n_rc] = v, bs->rcnode[bs->n_rc++] = c;
        }
    }
    for (int k = 0; k < n_in && ok; k++) {
        ir_node p = {.op = IR_OP_ITER, .index = k, .fmap = -1, .map = {-1, -1, -1}};
        int node = ir_add_node(b, &w->ctx, &p);
        ok = node >= 0 && node < MAXBN;
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
        for (int i = 0; i < bs->n_rc; i++)
            if (bs->rcval[i] == n) c = bs->rcnode[i];
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
        if (node >= MAXBN || !labels_op(w->s, b, &b->nodes[node], bs->lab[q.in[0]],
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
        p.in[i] = x >= 0 ? bs->t[x].node : bs->cnode[-2 - x];
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
    if (p.op != IR_OP_SAVE && !keep_term(w, term)) return;
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
    if (stopped(w) || w->oom) return;
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

/* ---- the block level, phase 2: schedules ----
 * The dims of the untiled block graph fall into classes: dims that must be split alike
 * (an elementwise op's aligned dims, a matmul's batch dims, its m and n with the result's,
 * and its two k dims, a sum's kept dims). A grid dim or the for-loop splits one class that
 * some iterator reads; every iterator dim in it is split (imap, fmap), an accumulator whose
 * operand still has a dim of the loop's class concatenates along it, and a saver maps each
 * grid dim to its dim of that class, or, when the class was reduced on the way (a split
 * reduction, FlashDecoding), to a free dim of size 1 (Mirage §4.2, split-K). */
static void tiled_kernel(worker *w, int d);

/* Builds the tiled copy of kernel depth d's untiled block graph: grid (classes gc[]), for-loop
 * fl (class fc), checks it, and adds it to the depth's schedules (bs->tl). */
static void tile_one(worker *w, int d, const dimcls *D, const int grid[3], const int gc[3], int fl, int fc) {
    bstate *bs = &w->bs[d];
    const ir_graph *u = bs->b;
    w->states++;
    ir_graph *t = ir_block_new(grid, 128, fl);
    int ok = t != NULL;
    for (int k = 0; ok && k < u->n_kin; k++)
        ok = ir_block_add_kin(t, &w->ctx, u->kin_name[k], u->kin_dtype[k], &u->kin_shape[k]) >= 0;
    int map[MAXBN], usave[MAXBN], part_g[MAXBN], n_sv = 0; /* untiled -> tiled node */
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
            if (n->op == IR_OP_ITER || n->op == IR_OP_ACCUM) p.fmap = fl > 1 ? dim_in(D, u, src, fc) : -1;
            if (n->op == IR_OP_ITER || n->op == IR_OP_SAVE)
                for (int g = 0; g < 3; g++) p.map[g] = grid[g] > 1 ? dim_in(D, u, i, gc[g]) : -1;
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
        ok = r >= 0 && r < MAXBN;
    }
    int32_t terms[MAXBN], kin[IR_MAX_IN];
    for (int k = 0; k < bs->n_kin; k++) kin[k] = w->t[bs->kin[k]].term;
    ok = ok && !ir_block_check(t, NULL, mg_device_default()) && !ae_of_block(&w->tab, &w->ctx, t, kin, terms);
    int last = w->n_kops == w->max_kops - 1;
    for (int i = 0; ok && i < t->n_nodes; i++) {
        ir_op op = t->nodes[i].op;
        if (op == IR_OP_CONST || op == IR_OP_ITER || (op == IR_OP_SAVE && !last)) continue;
        if (op != IR_OP_SAVE) {
            ok = keep_term(w, terms[i]);
            continue;
        }
        int root = 0;
        for (int j = 0; j < w->s->n_out; j++) root |= ae_is_root(&w->q, terms[i], j);
        ok = root;
    }
    /* the kernel outputs' dim labels: a side-by-side dim of partial sums is the reduced one's */
    uint64_t olab[MAXBN][IR_MAX_DIMS];
    for (int j = 0; ok && j < t->n_outputs; j++) {
        memcpy(olab[j], bs->lab[usave[j]], sizeof olab[j]);
        int g = part_g[j];
        if (g < 0) continue;
        for (int i = 0; i < u->n_nodes; i++) {
            int e = dim_in(D, u, i, gc[g]);
            if (e >= 0 && bs->lab[i][e]) {
                olab[j][t->nodes[t->outputs[j]].map[g]] = bs->lab[i][e];
                break;
            }
        }
    }
    ok = ok && t->n_outputs <= MAXS;
    if (ok && bs->n_tl == bs->cap_tl) {
        int cap = bs->cap_tl ? bs->cap_tl * 2 : 64;
        tiling *tl = base_realloc(bs->tl, sizeof *tl * (size_t)cap);
        if (tl) bs->tl = tl;
        int *grp = base_realloc(bs->grp, sizeof *grp * (size_t)cap);
        if (grp) bs->grp = grp;
        if (tl && grp) bs->cap_tl = cap;
        else ok = 0, w->oom = 1;
    }
    if (!ok) {
        ir_graph_free(t);
        return;
    }
    tiling *x = &bs->tl[bs->n_tl++];
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
    x->us = block_us(t, &w->s->dev, ~0u); /* as if every output were the program's */
}

/* Does complete block graph b (its search tensors t[0..n_t)) hold the primitives of a compound
 * rmsnorm, added one by one, whose intermediates nothing else reads, where the compound itself
 * passes pruning? Then the same block graph is also generated with the compound
 * (add_block_op), and this copy is a duplicate. */
static int spelled_out_rmsnorm(worker *w, const ir_graph *b, const btens *t, int n_t) {
    if (!op_on(w->s, SR_RMSNORM)) return 0;
    int uses[MAXBN] = {0};
    int32_t term[MAXBN];
    for (int i = 0; i < b->n_nodes && i < MAXBN; i++) {
        term[i] = -1;
        for (int k = 0; k < b->nodes[i].n_in; k++) uses[b->nodes[i].in[k]]++;
    }
    for (int i = 0; i < n_t; i++) term[t[i].node] = t[i].term;
#define ONE(i, o) (uses[i] == 1 && b->nodes[i].op == (o))
    for (int i = 0; i < b->n_nodes && i < MAXBN; i++) {
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

/* Every schedule of the complete untiled block graph of kernel depth d. */
static void tile(worker *w, int d) {
    const sr_opts *o = w->s->o;
    bstate *bs = &w->bs[d];
    if (w->n_t + bs->n_saves > MAXT || w->n_kops >= w->max_kops) return;
    if (spelled_out_rmsnorm(w, bs->b, bs->t, bs->n_t)) {
        w->duplicates++;
        return;
    }
    int compute = 0; /* a block graph of iterators, accumulators and savers only is a copy */
    for (int i = 0; i < bs->b->n_nodes; i++) {
        ir_op op = bs->b->nodes[i].op;
        compute |= op != IR_OP_CONST && op != IR_OP_ITER && op != IR_OP_ACCUM && op != IR_OP_SAVE && op != IR_OP_RESHAPE;
    }
    dimcls D;
    if (!compute || dims_of(bs->b, &D)) return;
    bs->n_tl = 0;
    int cand[NSLOT], nc = 0;
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
                int64_t div[NSLOT] = {0}, blocks = 1;
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
                    if (stopped(w) || w->oom) break;
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
    /* the generation goes on once per group of interchangeable schedules; a candidate then
     * stands for every schedule of its group (candidate()) */
    for (int i = 0; i < bs->n_tl && !stopped(w) && !w->oom; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++) first = bs->tl[j].iface != bs->tl[i].iface;
        if (!first) continue;
        /* a schedule slower than slack times the group's best is not pursued (--slack) */
        double best = INFINITY;
        for (int j = i; j < bs->n_tl; j++)
            if (bs->tl[j].iface == bs->tl[i].iface) best = fmin(best, bs->tl[j].us);
        bs->n_grp = 0;
        for (int j = i; j < bs->n_tl; j++) {
            if (bs->tl[j].iface != bs->tl[i].iface) continue;
            if (o->slack > 0 && bs->tl[j].us > o->slack * best) w->dominated++;
            else bs->grp[bs->n_grp++] = j;
        }
        tiled_kernel(w, d);
    }
    for (int i = 0; i < bs->n_tl; i++) ir_graph_free(bs->tl[i].t);
    bs->n_tl = 0;
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

/* The group bs->grp of kernel depth d's schedules becomes a kernel operator of the kernel
 * graph (its first schedule standing for all), whose generation then goes on from there. */
static void tiled_kernel(worker *w, int d) {
    bstate *bs = &w->bs[d];
    const tiling *x = &bs->tl[bs->grp[0]];
    const ir_graph *t = x->t;
    key kk = make_key(bs->kin, bs->n_kin, IR_OP_KERNEL, (int64_t)block_hash(t));
    if (key_cmp(&kk, &bs->klast) <= 0) return;
    ir_graph *body = clone_block(t, &w->ctx);
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
        w->t[w->n_t] = (ktens){node, 0, term, {0}};
        memcpy(w->t[w->n_t].lab, s->in_lab[w->n_t], sizeof s->in_lab[0]);
        w->n_t++;
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
    base_free(w->scr);
    for (int d = 0; d < MAXK; d++) base_free(w->bs[d].tl), base_free(w->bs[d].grp);
    for (int i = 0; i < w->n_found; i++) base_free(w->found[i].text);
    base_free(w->found);
    ae_query_free(&w->q);
    ae_tab_free(&w->tab);
    ir_graph_free(w->k);
}

/* The search runs in two passes (docs/search.md): first the μGraphs of one kernel operator,
 * then those of 2 to --max-kops. Sets w's pass for task number `task` (its number within the
 * pass in w->task); the first pass has s->n_tasks1 tasks. */
static void set_pass(worker *w, int64_t task) {
    search *s = w->s;
    int two = s->o->max_kops > 1;
    if (two && task < s->n_tasks1) {
        w->max_kops = 1, w->min_kops = 1, w->task = (int)task;
    } else {
        w->max_kops = s->o->max_kops, w->min_kops = two ? 2 : 1, w->task = (int)(task - s->n_tasks1);
    }
}

/* Runs task number `task`: the depth-0 choice of that number and everything below it. */
static void run_task(worker *w, int64_t task) {
    set_pass(w, task);
    w->counter = 0;
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
    sb_printf(&sb, "|v%d %d %d %d %d %d %d %d %d %d|", SEARCH_VERSION, o->max_kops, o->max_bops, o->max_kin, o->max_kout,
              o->max_kernels, o->max_grid_dims, o->max_blocks, o->prune, o->verify_tests);
    for (int i = 0; i < o->n_grid; i++) sb_printf(&sb, "g%d", o->grid[i]);
    for (int i = 0; i < o->n_forloop; i++) sb_printf(&sb, "f%d", o->forloop[i]);
    sb_printf(&sb, "s%llu l%g m%d o%llx", (unsigned long long)o->seed, o->slack, o->n_sm, (unsigned long long)s->ops);
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
    int64_t st0 = w->states;
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
    publish(w);
    return 1;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    while (take_task(w)) {
    }
    __atomic_sub_fetch(&w->s->running, 1, __ATOMIC_RELEASE);
    return NULL;
}

void sr_grid_for_sms(sr_opts *o, int n_sm) {
    int p = 1;
    while (p * 2 <= n_sm) p *= 2;
    int cand[] = {1, 2, p / 16, p / 2, p * 3 / 4, p}, n = 0;
    o->n_sm = n_sm;
    for (int i = 0; i < 6; i++)
        if (cand[i] >= 1 && (!n || cand[i] > o->grid[n - 1])) o->grid[n++] = cand[i];
    o->n_grid = n;
}

void sr_opts_default(sr_opts *o) {
    memset(o, 0, sizeof *o);
    o->max_kops = 5, o->max_bops = 11, o->max_kin = 3, o->max_kout = 2, o->max_grid_dims = 2, o->max_blocks = 1024;
    o->max_kernels = 1;
    o->slack = 1.5;
    sr_grid_for_sms(o, mg_device_default()->n_sm);
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
    s.ops = ~0ull;
    if (o->ops) {
        char why[200];
        if (!(s.ops = ops_mask(o->ops, why, sizeof why))) return ctx_err(ctx, MG_ERR_INVALID, "%s", why);
    }
    s.dev = *mg_device_default();
    if (o->n_sm > 0) s.dev.n_sm = o->n_sm;
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
    /* dim labels from the program's dim classes (all-ones, no restriction, where the program
     * has operators dims_of does not follow or too many classes) */
    dimcls *pd = base_alloc(sizeof *pd);
    if (!pd) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    int labeled = !dims_of(prog, pd) && pd->nc <= 64;
    s.red_lab = labeled ? 0 : ~0ull;
    for (int j = 0; labeled && j < s.n_out; j++) s.red_lab |= pd->red[prog->outputs[j]];
    for (int i = 0, k = 0; i < prog->n_nodes; i++) {
        const ir_node *n = &prog->nodes[i];
        if (n->op != IR_OP_INPUT) continue;
        for (int dd = 0; dd < n->shape.ndim; dd++)
            s.in_lab[k][dd] = !labeled ? ~0ull : n->shape.d[dd] > 1 ? 1ull << pd->cls[i][dd] : 0;
        k++;
    }
    base_free(pd);
    for (int i = 0; i < prog->n_nodes; i++)
        if (prog->nodes[i].shape.ndim > s.max_rank) s.max_rank = prog->nodes[i].shape.ndim;
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
    /* the verifier's tests of the program, once for every candidate */
    rc = vf_ref_new(prog, ctx, o->verify_tests, o->seed, 1, &s.ref);
    if (!rc) vf_ref_set_stop(s.ref, &s.stop);
    /* the screen's program: every input dim larger than 16 shrunk, distinct sizes kept
     * distinct (17, 18, ...) */
    for (int i = 0; !rc && i < prog->n_nodes; i++) {
        const ir_node *n = &prog->nodes[i];
        for (int dd = 0; n->op == IR_OP_INPUT && dd < n->shape.ndim; dd++) {
            int have = n->shape.d[dd] <= 16;
            for (int j = 0; j < s.n_shrink; j++) have |= s.shrink_from[j] == n->shape.d[dd];
            if (!have) s.shrink_from[s.n_shrink] = n->shape.d[dd], s.shrink_to[s.n_shrink] = 17 + s.n_shrink, s.n_shrink++;
        }
    }
    if (!rc && s.n_shrink && !getenv("MUGEN_SEARCH_NO_SCREEN") && (s.shrunk = untile(prog, NULL, s.shrink_from, s.shrink_to, s.n_shrink, ctx)) &&
        vf_ref_new(s.shrunk, ctx, o->verify_tests, o->seed, 1, &s.screen_ref))
        s.screen_ref = NULL; /* no screen: every candidate is verified at full size */
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
        if (o->max_kops > 1) { /* the first pass: one kernel operator */
            ws[0].task = -1, ws[0].counter = 0, ws[0].max_kops = 1, ws[0].min_kops = 1;
            kgen(&ws[0], &key_min);
            s.n_tasks1 = ws[0].counter;
        }
        ws[0].task = -1, ws[0].counter = 0, ws[0].max_kops = o->max_kops;
        kgen(&ws[0], &key_min);
        s.n_tasks = s.n_tasks1 + ws[0].counter;
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
        s.running = nt;
        for (int i = 0; i < nt; i++)
            if (!pthread_create(&th[i], NULL, worker_main, &ws[i])) started++;
            else break;
        __atomic_sub_fetch(&s.running, nt - started, __ATOMIC_RELAXED);
        if (!started) { /* no thread: the caller's thread does the work */
            s.running = 1;
            worker_main(&ws[0]);
        }
        /* the main thread prints progress once a second while the workers run, and ends the
         * search at the time limit or a stop request even while every worker verifies */
        double last = now_s();
        while (__atomic_load_n(&s.running, __ATOMIC_ACQUIRE) > 0) {
            nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
            if ((o->stop && *o->stop) || (o->time_limit > 0 && now_s() - s.t0 > o->time_limit))
                __atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
            if (o->progress && now_s() - last >= 1.0) {
                last = now_s();
                progress(&s, 0);
            }
        }
        for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
        pthread_mutex_destroy(&s.mu);
        if (o->progress) progress(&s, 1);
    }
    /* merge in task order, dedupe by text, rank by the cost model */
    for (int i = 0; ws && i < nt; i++) {
        r->candidates += ws[i].candidates, r->rejected += ws[i].rejected, r->duplicates += ws[i].duplicates;
        r->screened += ws[i].screened, r->dominated += ws[i].dominated, r->unfit += ws[i].unfit;
        r->verify_seconds += ws[i].verify_s;
        r->first_seconds = s.first_s;
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
                     "expression, but none is equivalent (%lld rejected by the screen, %lld by the "
                     "verifier): an equivalent μGraph may need more than the limits allow (raise "
                     "--max-kops, --max-bops or --max-kernels)", (long long)r->candidates,
                     (long long)r->screened, (long long)(r->rejected - r->screened));
    }
    r->seconds = now_s() - s.t0;
    for (int i = 0; ws && i < nt; i++) worker_free(&ws[i]);
    base_free(ws);
    for (int64_t t = 0; t < s.n_tasks && s.task_found; t++) base_free(s.task_found[t]);
    base_free(s.task_found);
    base_free(s.task_n_found);
    base_free(s.done);
    vf_ref_free(s.ref);
    vf_ref_free(s.screen_ref);
    ir_graph_free(s.shrunk);
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
