/* opt/taskgraph: a plan cut into tasks with exact dependencies (opt.h, op_taskgraph), what a
 * persistent megakernel runs (issue #27). A graph-defined kernel's block is a task; it waits
 * for the blocks of the kernels it reads whose saved tiles meet its read range (the element
 * ranges codegen's tile_base places, op_block_range), so the adding kernel of a split-K
 * product waits for its own column's splits, not for the whole product. A read through a
 * view (a reshape, slice or transpose of a kernel's output, opt/buffers.c) is matched in the
 * buffer: both ranges as runs of consecutive elements (at most TG_MAX_RUNS a block, else the
 * whole launch). A kernel-level operator (the per-element path) is a task a piece of its
 * element loop (op_elem_tasks); a read through an inlined operator or of such an operator's
 * result waits for the whole launch that produced it, and such a task waits for the whole
 * launches it reads. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_internal.h"

/* The nodes that are launches, in codegen's order (codegen/emit.c, cg_emit): graph-defined
 * kernels once (their output of index 0) and stored kernel-level operators. */
static int is_launch(const op_plan *p, int i) {
    const ir_node *n = &p->g->nodes[i];
    if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST || p->inl[i] || p->view[i] >= 0) return 0;
    return n->op != IR_OP_KERNEL || n->index == 0;
}

static int64_t grid_blocks(const ir_graph *b) { return (int64_t)b->grid[0] * b->grid[1] * b->grid[2]; }

/* Runs of consecutive buffer elements, [a, b). */
typedef struct run {
    int64_t a, b;
} run;
enum { TG_MAX_RUNS = 4096 }; /* runs a block's range may take before the whole launch is waited for */

typedef struct tg_build {
    const op_plan *p;
    op_taskgraph *tg;
    int *launch_of;    /* per kernel-graph node: the launch computing it, or -1 */
    int *stamp;        /* per task: the task that last listed it as a dependency, plus 1 */
    int *list, n_list, cap_list;
    int64_t cap_dep;
    run *rr, *rw;      /* scratch: a read's and a write's runs (TG_MAX_RUNS each) */
    mg_status rc;
} tg_build;

/* Adds task d to the current task's list (once). */
static void add_dep(tg_build *B, int t, int d) {
    if (B->stamp[d] == t + 1 || B->rc) return;
    B->stamp[d] = t + 1;
    if (B->n_list == B->cap_list) {
        int cap = B->cap_list ? 2 * B->cap_list : 64;
        int *a = base_realloc(B->list, (size_t)cap * sizeof *a);
        if (!a) {
            B->rc = MG_ERR_NOMEM;
            return;
        }
        B->list = a, B->cap_list = cap;
    }
    B->list[B->n_list++] = d;
}

/* The launches whose results node x holds (through views and inlined operators), each added
 * whole to task t's list. `depth` bounds the walk through inlined operators
 * (OP_MAX_INLINE_DEPTH). */
static void whole_sources(tg_build *B, int t, int x, int depth) {
    const op_plan *p = B->p;
    const ir_node *n = &p->g->nodes[x];
    if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST || depth > 2 * OP_MAX_INLINE_DEPTH) return;
    if (p->view[x] >= 0) {
        whole_sources(B, t, p->view[x], depth + 1);
        return;
    }
    int L = B->launch_of[x];
    if (L >= 0) {
        for (int d = B->tg->first[L]; d < B->tg->first[L + 1]; d++) add_dep(B, t, d);
        return;
    }
    for (int k = 0; k < n->n_in; k++) whole_sources(B, t, n->in[k], depth + 1); /* inlined */
}

/* Is kernel-graph node x, read by a graph-defined kernel's iterator, another graph-defined
 * kernel's output, read in place or through a view of its buffer (so its blocks' tiles can be
 * matched)? Its saver then, and in *y the kernel output node whose buffer it is. */
static const ir_node *source_saver(const op_plan *p, int x, int *y) {
    *y = p->view[x] >= 0 ? p->view[x] : x;
    const ir_node *n = &p->g->nodes[*y];
    if (n->op != IR_OP_KERNEL || p->inl[*y] || (p->view[x] < 0 && p->inl[x])) return NULL;
    for (int j = 0; j < n->body->n_nodes; j++)
        if (n->body->nodes[j].op == IR_OP_SAVE && n->body->nodes[j].index == n->index) return &n->body->nodes[j];
    return NULL;
}

static int cmp_run(const void *x, const void *y) {
    const run *r = x, *s = y;
    return (r->a > s->a) - (r->a < s->a);
}

/* The buffer elements of the box [lo, hi) over 4 dims with element strides st (0 where a dim
 * is 1) from offset off, as sorted, merged runs into out (room for TG_MAX_RUNS): their
 * number, or -1 when there would be more. */
static int box_runs(const int64_t lo[4], const int64_t hi[4], const int64_t st[4], int64_t off, run *out) {
    int c = -1; /* the contiguous dim, if any: stride 1 and more than one element */
    for (int d = 3; d >= 0; d--)
        if (st[d] == 1 && hi[d] - lo[d] > 1) c = d;
    int64_t count = 1, len = c >= 0 ? hi[c] - lo[c] : 1;
    for (int d = 0; d < 4; d++)
        if (d != c && st[d]) count *= hi[d] - lo[d];
    if (count > TG_MAX_RUNS) return -1;
    int n = 0;
    int64_t idx[4];
    for (int d = 0; d < 4; d++) idx[d] = lo[d];
    for (;;) {
        int64_t a = off;
        for (int d = 0; d < 4; d++) a += idx[d] * st[d];
        out[n++] = (run){a, a + len};
        int d = 3;
        for (; d >= 0; d--) { /* the next index over the dims that move (not c, not stride 0) */
            if (d == c || !st[d]) continue;
            if (++idx[d] < hi[d]) break;
            idx[d] = lo[d];
        }
        if (d < 0) break;
    }
    qsort(out, (size_t)n, sizeof *out, cmp_run);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m && out[i].a <= out[m - 1].b) {
            if (out[i].b > out[m - 1].b) out[m - 1].b = out[i].b;
        } else out[m++] = out[i];
    }
    return m;
}

/* Elements two sorted, merged run lists share. */
static int64_t runs_meet(const run *r, int nr, const run *s, int ns) {
    int64_t both = 0;
    for (int i = 0, j = 0; i < nr && j < ns;) {
        int64_t a = r[i].a > s[j].a ? r[i].a : s[j].a, b = r[i].b < s[j].b ? r[i].b : s[j].b;
        if (b > a) both += b - a;
        if (r[i].b < s[j].b) i++;
        else j++;
    }
    return both;
}

/* What block b2 of g2 reads through iterator `it` (kernel input x) and what block b1 of g1
 * writes through saver sv (kernel output y, x's buffer), as element ranges matched in the
 * buffer: in place, the boxes over the tensor's dims (*meet the intersection's volume, *want
 * the read's); through a view, runs in the buffer (scratch rr, rw of TG_MAX_RUNS each). 0, or
 * -1 when a range takes more than TG_MAX_RUNS runs (then the whole launch is waited for). */
static int read_meets(const op_plan *p, const ir_graph *g2, const ir_node *it, const int b2[3], int x, const ir_graph *g1,
                      const ir_node *sv, const int b1[3], int y, run *rr, run *rw, int64_t *meet, int64_t *want) {
    int64_t l2[4], h2[4], l1[4], h1[4];
    op_block_range(g2, it, b2, l2, h2);
    op_block_range(g1, sv, b1, l1, h1);
    *want = 1, *meet = 1;
    if (x == y) {
        for (int q = 0; q < 4; q++) {
            int64_t lo = l1[q] > l2[q] ? l1[q] : l2[q], hi = h1[q] < h2[q] ? h1[q] : h2[q];
            *want *= h2[q] - l2[q], *meet *= hi > lo ? hi - lo : 0;
        }
        return 0;
    }
    int nr = box_runs(l2, h2, p->kst[x], p->voff[x], rr), nw = nr < 0 ? -1 : box_runs(l1, h1, p->kst[y], 0, rw);
    if (nw < 0) return -1;
    *want = 0;
    for (int i = 0; i < nr; i++) *want += rr[i].b - rr[i].a;
    *meet = runs_meet(rr, nr, rw, nw);
    return 0;
}

/* Task t (launch L, block `blk`): its dependencies into B->list. */
static void task_deps(tg_build *B, int t, int L, int blk) {
    const op_plan *p = B->p;
    int node = B->tg->node[L];
    const ir_node *kn = &p->g->nodes[node];
    if (kn->op != IR_OP_KERNEL) {
        for (int k = 0; k < kn->n_in; k++) whole_sources(B, t, kn->in[k], 0);
        return;
    }
    const ir_graph *g2 = kn->body;
    int b2[3];
    op_block_coord(g2->grid, blk, b2);
    for (int i = 0; i < g2->n_nodes && !B->rc; i++) {
        const ir_node *it = &g2->nodes[i];
        if (it->op != IR_OP_ITER) continue;
        int x = kn->in[it->index], y;
        const ir_node *sv = source_saver(p, x, &y);
        if (!sv) {
            whole_sources(B, t, x, 0);
            continue;
        }
        int L1 = B->launch_of[y];
        const ir_graph *g1 = p->g->nodes[y].body;
        int n1 = (int)grid_blocks(g1), b1[3], whole = 0, first = B->n_list;
        int64_t meet, want;
        for (int j = 0; j < n1 && !whole; j++) {
            op_block_coord(g1->grid, j, b1);
            if (read_meets(p, g2, it, b2, x, g1, sv, b1, y, B->rr, B->rw, &meet, &want)) whole = 1;
            else if (meet > 0) add_dep(B, t, B->tg->first[L1] + j);
        }
        if (whole) whole_sources(B, t, x, 0); /* too many runs to match: the whole launch */
        else B->tg->n_exact += B->n_list - first;
    }
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void op_taskgraph_free(op_taskgraph *tg) {
    if (!tg) return;
    base_free(tg->node), base_free(tg->first), base_free(tg->launch), base_free(tg->block);
    base_free(tg->dep_at), base_free(tg->dep), base_free(tg);
}

mg_status op_taskgraph_new(const op_plan *p, mg_ctx *ctx, op_taskgraph **out) {
    const ir_graph *g = p->g;
    int n = g->n_nodes;
    *out = NULL;
    op_taskgraph *tg = base_calloc(1, sizeof *tg);
    tg_build B = {.p = p, .tg = tg};
    B.launch_of = base_alloc(((size_t)n + 1) * sizeof(int));
    if (tg) tg->node = base_alloc(((size_t)n + 1) * sizeof(int)), tg->first = base_alloc(((size_t)n + 2) * sizeof(int));
    if (!tg || !B.launch_of || !tg->node || !tg->first) goto nomem;
    int64_t tasks = 0;
    for (int i = 0; i < n; i++) {
        B.launch_of[i] = -1;
        if (!is_launch(p, i)) continue;
        tg->first[tg->n_launches] = (int)tasks;
        tg->node[tg->n_launches] = i;
        tasks += g->nodes[i].op == IR_OP_KERNEL ? grid_blocks(g->nodes[i].body) : op_elem_tasks(&g->nodes[i]);
        if (tasks > INT32_MAX / 2) {
            op_taskgraph_free(tg), base_free(B.launch_of);
            return ctx_err(ctx, MG_ERR_LIMIT, "the task graph would hold %" PRId64 " tasks or more", tasks);
        }
        B.launch_of[i] = tg->n_launches++;
    }
    for (int i = 0; i < n; i++) /* a kernel's other outputs: the launch of its first */
        if (g->nodes[i].op == IR_OP_KERNEL && g->nodes[i].index > 0) B.launch_of[i] = B.launch_of[i - g->nodes[i].index];
    tg->n_tasks = (int)tasks;
    tg->first[tg->n_launches] = tg->n_tasks;
    tg->launch = base_alloc(((size_t)tasks + 1) * sizeof(int));
    tg->block = base_alloc(((size_t)tasks + 1) * sizeof(int));
    tg->dep_at = base_alloc(((size_t)tasks + 1) * sizeof(int64_t));
    B.stamp = base_calloc((size_t)tasks + 1, sizeof(int));
    B.rr = base_alloc(2 * TG_MAX_RUNS * sizeof *B.rr), B.rw = B.rr ? B.rr + TG_MAX_RUNS : NULL;
    if (!tg->launch || !tg->block || !tg->dep_at || !B.stamp || !B.rr) goto nomem;
    for (int L = 0; L < tg->n_launches; L++)
        for (int t = tg->first[L]; t < tg->first[L + 1]; t++) tg->launch[t] = L, tg->block[t] = t - tg->first[L];
    for (int t = 0; t < tg->n_tasks && !B.rc; t++) {
        B.n_list = 0;
        task_deps(&B, t, tg->launch[t], tg->block[t]);
        if (B.rc) break;
        if (B.n_list > 1) qsort(B.list, (size_t)B.n_list, sizeof *B.list, cmp_int);
        tg->dep_at[t] = tg->n_deps;
        if (tg->n_deps + B.n_list > INT32_MAX) {
            B.rc = MG_ERR_LIMIT;
            break;
        }
        if (tg->n_deps + B.n_list > B.cap_dep) {
            int64_t cap = B.cap_dep ? 2 * B.cap_dep : 1024;
            while (cap < tg->n_deps + B.n_list) cap *= 2;
            int *a = base_realloc(tg->dep, (size_t)cap * sizeof *a);
            if (!a) goto nomem;
            tg->dep = a, B.cap_dep = cap;
        }
        if (B.n_list) memcpy(tg->dep + tg->n_deps, B.list, (size_t)B.n_list * sizeof *B.list);
        tg->n_deps += B.n_list;
    }
    if (B.rc == MG_ERR_NOMEM) goto nomem;
    tg->dep_at[tg->n_tasks] = tg->n_deps;
    base_free(B.launch_of), base_free(B.stamp), base_free(B.list), base_free(B.rr);
    if (B.rc) {
        op_taskgraph_free(tg);
        return ctx_err(ctx, B.rc, "the task graph would hold more than 2^31 dependencies");
    }
    *out = tg;
    return MG_OK;
nomem:
    base_free(B.launch_of), base_free(B.stamp), base_free(B.list), base_free(B.rr);
    op_taskgraph_free(tg);
    return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
}

/* "launch NAME, block (x, y, z)" of task t, for messages. */
static const char *task_name(const op_plan *p, const op_taskgraph *tg, int t, char *buf, size_t n) {
    int node = tg->node[tg->launch[t]];
    const ir_node *nd = &p->g->nodes[node];
    char lb[96];
    ir_node_label(p->g, node, lb, sizeof lb);
    if (nd->op == IR_OP_KERNEL) {
        int b[3];
        op_block_coord(nd->body->grid, tg->block[t], b);
        snprintf(buf, n, "task %d (%s, block (%d, %d, %d))", t, lb, b[0], b[1], b[2]);
    } else snprintf(buf, n, "task %d (%s)", t, lb);
    return buf;
}

/* Does task t list task d? (its dependencies are sorted) */
static int has_dep(const op_taskgraph *tg, int t, int d) {
    size_t n = (size_t)(tg->dep_at[t + 1] - tg->dep_at[t]);
    return n && bsearch(&d, tg->dep + tg->dep_at[t], n, sizeof *tg->dep, cmp_int) != NULL;
}

/* Whole-launch dependencies of a read of x: every task of each producing launch listed. */
static int whole_ok(const op_plan *p, const op_taskgraph *tg, const int *launch_of, int t, int x, int depth, int *missing) {
    const ir_node *n = &p->g->nodes[x];
    if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST || depth > 2 * OP_MAX_INLINE_DEPTH) return 1;
    if (p->view[x] >= 0) return whole_ok(p, tg, launch_of, t, p->view[x], depth + 1, missing);
    int L = launch_of[x];
    if (L >= 0) {
        for (int d = tg->first[L]; d < tg->first[L + 1]; d++)
            if (!has_dep(tg, t, d)) return *missing = d, 0;
        return 1;
    }
    for (int k = 0; k < n->n_in; k++)
        if (!whole_ok(p, tg, launch_of, t, n->in[k], depth + 1, missing)) return 0;
    return 1;
}

mg_status op_taskgraph_check(const op_plan *p, const op_taskgraph *tg, mg_ctx *ctx) {
    const ir_graph *g = p->g;
    char a[160], b[160];
    int *launch_of = base_alloc(((size_t)g->n_nodes + 1) * sizeof(int));
    run *rr = base_alloc(2 * TG_MAX_RUNS * sizeof *rr);
    if (!launch_of || !rr) {
        base_free(launch_of), base_free(rr);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++) launch_of[i] = -1;
    for (int L = 0; L < tg->n_launches; L++) launch_of[tg->node[L]] = L;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == IR_OP_KERNEL && g->nodes[i].index > 0) launch_of[i] = launch_of[i - g->nodes[i].index];
    mg_status rc = MG_OK;
    for (int t = 0; t < tg->n_tasks && !rc; t++) {
        for (int64_t e = tg->dep_at[t]; e < tg->dep_at[t + 1] && !rc; e++) {
            int d = tg->dep[e];
            if (d < 0 || d >= t || (e > tg->dep_at[t] && tg->dep[e - 1] >= d))
                rc = ctx_err(ctx, MG_ERR_INVALID, "task graph: %s depends on task %d, not an earlier task listed once "
                             "in order", task_name(p, tg, t, a, sizeof a), d);
        }
        const ir_node *kn = &g->nodes[tg->node[tg->launch[t]]];
        int missing = -1;
        if (kn->op != IR_OP_KERNEL) {
            for (int k = 0; k < kn->n_in && !rc; k++)
                if (!whole_ok(p, tg, launch_of, t, kn->in[k], 0, &missing))
                    rc = ctx_err(ctx, MG_ERR_INVALID, "task graph: %s does not wait for %s, which computes what it reads",
                                 task_name(p, tg, t, a, sizeof a), task_name(p, tg, missing, b, sizeof b));
            continue;
        }
        const ir_graph *g2 = kn->body;
        int b2[3], b1[3];
        op_block_coord(g2->grid, tg->block[t], b2);
        for (int i = 0; i < g2->n_nodes && !rc; i++) {
            const ir_node *it = &g2->nodes[i];
            if (it->op != IR_OP_ITER) continue;
            int x = kn->in[it->index], y, runs_ok = 1;
            const ir_node *sv = source_saver(p, x, &y);
            /* the read range, and how much of it the tasks waited for write (savers of
             * distinct blocks write disjoint tiles) */
            int64_t want = 0, got = 0, meet;
            if (sv) {
                int L1 = launch_of[y];
                const ir_graph *g1 = g->nodes[y].body;
                for (int64_t e = tg->dep_at[t]; e < tg->dep_at[t + 1] && runs_ok; e++) {
                    int d = tg->dep[e];
                    if (d < tg->first[L1] || d >= tg->first[L1 + 1]) continue;
                    op_block_coord(g1->grid, tg->block[d], b1);
                    runs_ok = !read_meets(p, g2, it, b2, x, g1, sv, b1, y, rr, rr + TG_MAX_RUNS, &meet, &want);
                    got += meet;
                }
                if (runs_ok && want == 0) { /* no dependency on it: the read's size alone */
                    op_block_coord(g1->grid, 0, b1);
                    runs_ok = !read_meets(p, g2, it, b2, x, g1, sv, b1, y, rr, rr + TG_MAX_RUNS, &meet, &want);
                }
            }
            if (!sv || !runs_ok) {
                if (!whole_ok(p, tg, launch_of, t, x, 0, &missing))
                    rc = ctx_err(ctx, MG_ERR_INVALID, "task graph: %s does not wait for %s, which computes what it reads",
                                 task_name(p, tg, t, a, sizeof a), task_name(p, tg, missing, b, sizeof b));
                continue;
            }
            if (got < want) {
                char lb[96];
                ir_node_label(g, x, lb, sizeof lb);
                rc = ctx_err(ctx, MG_ERR_INVALID, "task graph: %s reads %" PRId64 " elements of %s, but the tasks it waits "
                             "for write only %" PRId64 " of them", task_name(p, tg, t, a, sizeof a), want, lb, got);
            }
        }
    }
    base_free(launch_of), base_free(rr);
    return rc;
}

void op_taskgraph_dot(const op_plan *p, const op_taskgraph *tg, strbuf *sb) {
    sb_puts(sb, "digraph tasks {\n  rankdir=LR;\n  node [shape=box, fontsize=9];\n");
    for (int L = 0; L < tg->n_launches; L++) {
        const ir_node *n = &p->g->nodes[tg->node[L]];
        char lb[96];
        ir_node_label(p->g, tg->node[L], lb, sizeof lb);
        sb_printf(sb, "  subgraph cluster_%d {\n    label=\"%s", L, lb);
        if (n->op == IR_OP_KERNEL)
            sb_printf(sb, ", grid [%d, %d, %d]", n->body->grid[0], n->body->grid[1], n->body->grid[2]);
        sb_puts(sb, "\";\n");
        for (int t = tg->first[L]; t < tg->first[L + 1]; t++) {
            if (n->op != IR_OP_KERNEL) {
                sb_printf(sb, "    t%d [label=\"%d\"];\n", t, t);
                continue;
            }
            int b[3];
            op_block_coord(n->body->grid, tg->block[t], b);
            sb_printf(sb, "    t%d [label=\"%d, %d, %d\"];\n", t, b[0], b[1], b[2]);
        }
        sb_puts(sb, "  }\n");
    }
    for (int t = 0; t < tg->n_tasks; t++)
        for (int64_t e = tg->dep_at[t]; e < tg->dep_at[t + 1]; e++) sb_printf(sb, "  t%d -> t%d;\n", tg->dep[e], t);
    sb_puts(sb, "}\n");
}
