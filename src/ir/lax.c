/* lax: the Lax check (Mirage Definition 5.1) and the partition of a program into maximal Lax
 * subprograms cut at non-Lax operators. The finite-field evaluator and the verifier accept
 * only Lax programs; the search (later) works on each Lax part separately. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Mirage Definition 5.1: only multilinear ops, division and exponentiation, and at most one
 * exponentiation (exp, or silu = x / (1 + exp(-x))) on every path from an input to an
 * output. Returns 1 if Lax, else 0 with a reason in why[0..n). */
static int lax_depths(const ir_graph *g, char *why, size_t n, int *max_out);

int ir_is_lax(const ir_graph *g, char *why, size_t n) {
    int max_out = 0;
    return lax_depths(g, why, n, &max_out);
}

/* ir_is_lax, also giving the most exponentiations on a path to an output (*max_out). A
 * KERNEL node counts the most its block graph applies between an iterator and a saver
 * (conservative: any input of the kernel is taken to reach any output). */
static int lax_depths(const ir_graph *g, char *why, size_t n, int *max_out) {
    int *depth = base_calloc((size_t)g->n_nodes + 1, sizeof *depth);
    int *first = base_calloc((size_t)g->n_nodes + 1, sizeof *first);
    int lax = 1;
    char lb[128], lb2[128];
    if (!depth || !first) {
        snprintf(why, n, "out of memory");
        lax = -1;
    }
    /* One pass in node order (topological): depth[i] is the largest number of exponentiations
     * on any path from a source to i, i included, and first[i] the exponentiation on such a
     * path (for the message). The rule is per path, not per program: exp(A) + exp(B) is Lax,
     * exp(exp(A)) is not. Sources keep depth 0. */
    for (int i = 0; lax == 1 && i < g->n_nodes; i++) {
        const ir_node *nd = &g->nodes[i];
        if (!ir_ops[nd->op].lax) {
            snprintf(why, n, "'%s' (%s) is not Lax: only multilinear operators, division and "
                     "exponentiation are", ir_node_label(g, i, lb, sizeof lb), ir_ops[nd->op].name);
            lax = 0;
            break;
        }
        first[i] = -1;
        for (int k = 0; k < nd->n_in; k++)
            if (depth[nd->in[k]] > depth[i]) depth[i] = depth[nd->in[k]], first[i] = first[nd->in[k]];
        int n_exp = ir_ops[nd->op].n_exp;
        if (nd->op == IR_OP_KERNEL) {
            int inner = 0, r = lax_depths(nd->body, why, n, &inner);
            if (r != 1) {
                lax = r;
                break;
            }
            n_exp = inner;
        }
        if (nd->op == IR_OP_KERNEL && (n_exp > 1 || (n_exp && depth[i] >= 1))) {
            snprintf(why, n, "'%s' (kernel) applies a second exponentiation on a path%s%s%s",
                     ir_node_label(g, i, lb, sizeof lb), first[i] >= 0 ? " that already went through '" : "",
                     first[i] >= 0 ? ir_node_label(g, first[i], lb2, sizeof lb2) : "", first[i] >= 0 ? "'" : "");
            lax = 0;
            break;
        }
        if (nd->op == IR_OP_KERNEL) {
            if (n_exp) depth[i] += 1, first[i] = i;
        } else if (ir_ops[nd->op].n_exp) {
            if (depth[i] >= 1) {
                snprintf(why, n, "'%s' (%s) applies a second exponentiation on a path that "
                         "already went through '%s'", ir_node_label(g, i, lb, sizeof lb),
                         ir_ops[nd->op].name, ir_node_label(g, first[i], lb2, sizeof lb2));
                lax = 0;
            }
            depth[i] += 1, first[i] = i;
        }
    }
    for (int k = 0; lax == 1 && k < g->n_outputs; k++)
        if (depth[g->outputs[k]] > *max_out) *max_out = depth[g->outputs[k]];
    base_free(depth);
    base_free(first);
    return lax;
}

/* ---- partition ---- */

/* State of the greedy partition. Invariants once nodes 0..v are assigned: part[i] is set for
 * every i <= v; a part with lax[id] == 0 holds exactly one node; a part id emptied by a merge
 * stays allocated (ir_partition drops it when renumbering); the graph of parts, with an edge
 * q -> r when a node of r reads a node of q, is acyclic. mark, back, depth: can_merge's
 * scratch, n_nodes + 1 entries each (n_parts <= n_nodes). */
typedef struct part_state {
    const ir_graph *g;
    int *part;  /* node -> part id, -1 for inputs and constants */
    int *lax;   /* part id -> 1 Lax, 0 a single non-Lax op */
    int *depth; /* node -> exponentiations on the longest path inside its own part */
    int *head, *next, *tail; /* members of each part as a list, in node order of joining */
    int *fwd, *back, *queue; /* scratch per part: reachability flags and a BFS queue */
    int *deg_out, *deg_in, *out_adj, *in_adj, *adj_tmp; /* part graph in CSR, rebuilt per test */
    int *newd;  /* scratch per node: tentative depths of a multi-part merge */
    int n_parts;
} part_state;

static int in_set(const int *set, int n, int x) {
    for (int i = 0; i < n; i++)
        if (set[i] == x) return 1;
    return 0;
}

/* Builds the part graph of nodes < v in CSR form: out_adj[deg_out[q]..deg_out[q+1]) are the
 * parts reading q, in_adj likewise the parts q reads. O(nodes + edges). */
static void build_part_graph(part_state *s, int v) {
    const ir_graph *g = s->g;
    int P = s->n_parts;
    for (int q = 0; q <= P; q++) s->deg_out[q] = s->deg_in[q] = 0;
    for (int i = 0; i < v; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++) {
            int q = s->part[g->nodes[i].in[k]], pi = s->part[i];
            if (q >= 0 && pi >= 0 && q != pi) s->deg_out[q + 1]++, s->deg_in[pi + 1]++;
        }
    for (int q = 0; q < P; q++) s->deg_out[q + 1] += s->deg_out[q], s->deg_in[q + 1] += s->deg_in[q];
    int *fill_o = s->adj_tmp, *fill_i = s->adj_tmp + P + 1;
    for (int q = 0; q < P; q++) fill_o[q] = s->deg_out[q], fill_i[q] = s->deg_in[q];
    for (int i = 0; i < v; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++) {
            int q = s->part[g->nodes[i].in[k]], pi = s->part[i];
            if (q >= 0 && pi >= 0 && q != pi) s->out_adj[fill_o[q]++] = pi, s->in_adj[fill_i[pi]++] = q;
        }
}

/* Marks in flag[] every part reachable from the already-flagged ones along adj. */
static void bfs(part_state *s, int *flag, const int *deg, const int *adj) {
    int h = 0, t = 0;
    for (int q = 0; q < s->n_parts; q++)
        if (flag[q]) s->queue[t++] = q;
    while (h < t) {
        int q = s->queue[h++];
        for (int e = deg[q]; e < deg[q + 1]; e++)
            if (!flag[adj[e]]) flag[adj[e]] = 1, s->queue[t++] = adj[e];
    }
}

/* Would putting node v together with parts set[0..n) keep one Lax, acyclic part?
 * Precondition: v is a Lax op, set holds distinct Lax parts, nodes < v are assigned.
 *
 * Acyclicity is decided on the graph of parts, not of nodes. A part runs as a unit (one
 * standalone program, later one kernel), so it can start only after every part it reads has
 * finished. The everyday case is exp(S - max(S)) (docs/ir.md): the sub cannot join S's part,
 * which would then both feed max and read its result. Node-level reachability is not enough:
 * with a part Q = {a, b}, S -> a and b -> S', no node path leads from S to S', yet merging S
 * and S' gives M -> Q -> M. A cycle appears iff some part outside the set is reachable from
 * the set and reaches the set or v. When v reads only from one part, which is the set, no
 * such part exists (it would close a cycle in the part graph already), so the common chain
 * case costs O(1); otherwise two BFS over the part graph cost O(nodes + edges). */
static int can_merge(part_state *s, int v, const int *set, int n) {
    const ir_graph *g = s->g;
    const ir_node *nv = &g->nodes[v];
    int outside = 0;
    for (int k = 0; k < nv->n_in; k++) {
        int q = s->part[nv->in[k]];
        outside |= q >= 0 && !in_set(set, n, q);
    }
    if (n > 1 || outside) {
        build_part_graph(s, v);
        for (int q = 0; q < s->n_parts; q++) s->fwd[q] = s->back[q] = in_set(set, n, q);
        for (int k = 0; k < nv->n_in; k++) /* v joins the merged part: what it reads reaches it */
            if (s->part[nv->in[k]] >= 0) s->back[s->part[nv->in[k]]] = 1;
        bfs(s, s->fwd, s->deg_out, s->out_adj);
        bfs(s, s->back, s->deg_in, s->in_adj);
        for (int q = 0; q < s->n_parts; q++)
            if (s->fwd[q] && s->back[q] && !in_set(set, n, q)) return 0;
    }
    /* Lax: at most one exponentiation on any path inside the merged part (Mirage Definition
     * 5.1), counted over its nodes only: what it reads from other parts becomes an input of
     * the standalone part (depth 0). With one part, old depths stand and only v's is new; a
     * merge of several parts turns edges between them internal, so their depths are redone. */
    int d = 0;
    if (n == 1) {
        for (int k = 0; k < nv->n_in; k++)
            if (s->part[nv->in[k]] == set[0] && s->depth[nv->in[k]] > d) d = s->depth[nv->in[k]];
        return d + ir_ops[nv->op].n_exp <= 1;
    }
    for (int i = 0; i <= v; i++) {
        if (i < v && (s->part[i] < 0 || !in_set(set, n, s->part[i]))) continue;
        const ir_node *nd = &g->nodes[i];
        d = 0;
        for (int k = 0; k < nd->n_in; k++) {
            int a = nd->in[k];
            if (s->part[a] >= 0 && in_set(set, n, s->part[a]) && s->newd[a] > d) d = s->newd[a];
        }
        s->newd[i] = d + ir_ops[nd->op].n_exp;
        if (s->newd[i] > 1) return 0;
    }
    return 1;
}

/* Moves every member of part q into part p (list splice and relabel). */
static void absorb(part_state *s, int p, int q) {
    for (int i = s->head[q]; i >= 0; i = s->next[i]) s->part[i] = p;
    if (s->head[q] < 0) return;
    if (s->head[p] < 0) s->head[p] = s->head[q];
    else s->next[s->tail[p]] = s->head[q];
    s->tail[p] = s->tail[q];
    s->head[q] = s->tail[q] = -1;
}

static void add_member(part_state *s, int p, int v) {
    s->part[v] = p, s->next[v] = -1;
    if (s->head[p] < 0) s->head[p] = v;
    else s->next[s->tail[p]] = v;
    s->tail[p] = v;
}

/* Puts node v into a part (nodes < v are assigned). Sources belong to no part: each part that
 * reads them gets its own input or copy. A Lax op first tries to join all the distinct Lax
 * parts of its operands at once, then each of them alone in operand order; if none works, or
 * the op is not Lax, it opens a new part. So a non-Lax part always holds exactly one op. */
static void assign(part_state *s, int v) {
    const ir_node *nv = &s->g->nodes[v];
    s->depth[v] = 0;
    if (nv->op == IR_OP_INPUT || nv->op == IR_OP_CONST) {
        s->part[v] = -1;
        return;
    }
    if (ir_ops[nv->op].lax) {
        int cand[IR_MAX_IN], n = 0;
        for (int k = 0; k < nv->n_in; k++) {
            int p = s->part[nv->in[k]];
            if (p >= 0 && s->lax[p] && !in_set(cand, n, p)) cand[n++] = p;
        }
        int ok = n && can_merge(s, v, cand, n);
        for (int c = 0; !ok && n > 1 && c < n; c++)
            if (can_merge(s, v, &cand[c], 1)) cand[0] = cand[c], n = 1, ok = 1;
        if (ok) {
            if (n > 1) /* commit the depths can_merge computed for the merged part */
                for (int i = 0; i < v; i++)
                    if (s->part[i] >= 0 && in_set(cand, n, s->part[i])) s->depth[i] = s->newd[i];
            for (int c = 1; c < n; c++) absorb(s, cand[0], cand[c]);
            int d = 0;
            for (int k = 0; k < nv->n_in; k++)
                if (s->part[nv->in[k]] == cand[0] && s->depth[nv->in[k]] > d) d = s->depth[nv->in[k]];
            s->depth[v] = d + ir_ops[nv->op].n_exp;
            add_member(s, cand[0], v);
            return;
        }
        s->depth[v] = ir_ops[nv->op].n_exp;
    }
    s->lax[s->n_parts] = ir_ops[nv->op].lax;
    s->head[s->n_parts] = s->tail[s->n_parts] = -1;
    add_member(s, s->n_parts++, v);
}

/* Renumbers the non-empty parts 0..n-1 in a topological order of the part graph (Kahn);
 * returns n. */
static int renumber(part_state *s, int *newid, int *lax_out) {
    const ir_graph *g = s->g;
    build_part_graph(s, g->n_nodes);
    int P = s->n_parts, n = 0, h = 0, t = 0;
    int *indeg = s->fwd;
    for (int q = 0; q < P; q++) indeg[q] = s->deg_in[q + 1] - s->deg_in[q], newid[q] = -1;
    for (int q = 0; q < P; q++)
        if (s->head[q] >= 0 && indeg[q] == 0) s->queue[t++] = q;
    while (h < t) {
        int q = s->queue[h++];
        newid[q] = n, lax_out[n++] = s->lax[q];
        for (int e = s->deg_out[q]; e < s->deg_out[q + 1]; e++)
            if (--indeg[s->out_adj[e]] == 0) s->queue[t++] = s->out_adj[e];
    }
    return n;
}

/* Partitions g: part[i] in [0, *n_parts) for every op node, -1 for inputs and constants;
 * parts are numbered in a topological order; lax[p] says whether part p is Lax (a non-Lax
 * part is a single non-Lax op). Greedy in node order: a node joins its operands' Lax parts
 * when the union stays Lax and acyclic (docs/ir.md, "Lax programs and partitions"). part and
 * lax hold n_nodes entries. Cost: O(1) per node on chains, O(nodes + edges) for a node that
 * joins parts or reads from a part it cannot join. Returns MG_OK or MG_ERR_NOMEM. */
mg_status ir_partition(const ir_graph *g, mg_ctx *ctx, int *part, int *lax, int *n_parts) {
    size_t N = (size_t)g->n_nodes + 2, E = N * IR_MAX_IN;
    part_state s = {.g = g, .part = part};
    int **bufs[] = {&s.lax, &s.depth, &s.head, &s.next, &s.tail, &s.fwd, &s.back, &s.queue,
                    &s.deg_out, &s.deg_in, &s.newd};
    int *newid = base_alloc(N * sizeof(int)), ok = newid != NULL;
    for (size_t b = 0; b < sizeof bufs / sizeof *bufs; b++) ok &= (*bufs[b] = base_alloc(N * sizeof(int))) != NULL;
    ok &= (s.out_adj = base_alloc(E * sizeof(int))) != NULL;
    ok &= (s.in_adj = base_alloc(E * sizeof(int))) != NULL;
    ok &= (s.adj_tmp = base_alloc(2 * N * sizeof(int))) != NULL;
    mg_status rc = MG_OK;
    if (!ok) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int v = 0; !rc && v < g->n_nodes; v++) assign(&s, v);
    if (!rc) {
        int n = renumber(&s, newid, lax);
        for (int i = 0; i < g->n_nodes; i++) {
            if (part[i] >= 0) MG_ASSERT(newid[part[i]] >= 0); /* the part graph is acyclic */
            if (part[i] >= 0) part[i] = newid[part[i]];
        }
        *n_parts = n;
    }
    for (size_t b = 0; b < sizeof bufs / sizeof *bufs; b++) base_free(*bufs[b]);
    base_free(s.out_adj), base_free(s.in_adj), base_free(s.adj_tmp), base_free(newid);
    return rc;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Builds part p of g as a standalone program. members[0..n) are its nodes in node order;
 * used_out[i] says node i is read by another part or is a program output. Tensors it reads
 * from outside become inputs, in node order (so program inputs keep their order), with the
 * same names; constants are copied in; used_out members become outputs. names =
 * ir_node_names(g, a, 0); map and stamp are scratch of n_nodes entries (stamp all != p). */
static mg_status extract(const ir_graph *g, mg_ctx *ctx, const int *part, int p, const int *members,
                         int n, const char *used_out, const char **names, int *map, int *stamp,
                         ir_graph **out) {
    ir_graph *sub = ir_graph_new();
    int *ext = base_alloc(((size_t)n * IR_MAX_IN + 1) * sizeof *ext), n_ext = 0;
    mg_status rc = MG_OK;
    if (!sub || !ext) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int m = 0; !rc && m < n; m++)
        for (int k = 0; k < g->nodes[members[m]].n_in; k++) {
            int a = g->nodes[members[m]].in[k];
            map[a] = -1;
            if (part[a] != p && g->nodes[a].op != IR_OP_CONST && stamp[a] != p) stamp[a] = p, ext[n_ext++] = a;
        }
    if (!rc) qsort(ext, (size_t)n_ext, sizeof *ext, cmp_int);
    for (int e = 0; !rc && e < n_ext; e++) {
        const ir_node *an = &g->nodes[ext[e]];
        int r = ir_add_input_from(sub, ctx, names[ext[e]], an);
        if (r < 0) rc = (mg_status)-r;
        else map[ext[e]] = r;
    }
    for (int m = 0; !rc && m < n; m++) {
        int i = members[m];
        const ir_node *nd = &g->nodes[i];
        ir_node proto = *nd;
        for (int k = 0; k < nd->n_in && !rc; k++) {
            int a = nd->in[k];
            if (map[a] < 0) { /* a constant: copied into the part */
                const ir_node *an = &g->nodes[a];
                int r = ir_add_const(sub, ctx, an->lit, an->line, an->col);
                if (r < 0) rc = (mg_status)-r;
                map[a] = r;
            }
            proto.in[k] = map[a];
        }
        if (rc) break;
        int r = ir_add_node(sub, ctx, &proto);
        int r2 = r < 0 ? r : ir_set_name(sub, ctx, r, names[i]);
        if (r2 < 0) rc = (mg_status)-r2;
        map[i] = r;
    }
    for (int m = 0; !rc && m < n; m++) {
        int r = used_out[members[m]] ? ir_add_output(sub, ctx, map[members[m]]) : 0;
        if (r < 0) rc = (mg_status)-r;
    }
    base_free(ext);
    if (rc) ir_graph_free(sub);
    else *out = sub;
    return rc;
}

/* Renders the partition as .mu text: a comment line per part, then the part as a program. */
mg_status ir_print_partition(const ir_graph *g, mg_ctx *ctx, strbuf *sb) {
    for (int i = 0; i < g->n_nodes; i++) /* parts feed the search: they come from programs */
        if (g->nodes[i].op == IR_OP_KERNEL)
            return ctx_err(ctx, MG_ERR_UNSUPPORTED, "partition takes a program; this is a μGraph "
                           "(it has kernel blocks)");
    size_t N = (size_t)g->n_nodes + 1;
    int *part = base_alloc(N * sizeof(int)), *lax = base_alloc(N * sizeof(int));
    int *start = base_calloc(N + 1, sizeof(int)), *members = base_alloc(N * sizeof(int));
    int *map = base_alloc(N * sizeof(int)), *stamp = base_alloc(N * sizeof(int));
    char *used_out = base_calloc(N, 1);
    arena a;
    arena_init(&a);
    const char **names = ir_node_names(g, &a, 0);
    int n = 0;
    mg_status rc = !part || !lax || !start || !members || !map || !stamp || !used_out || !names
                       ? ctx_err(ctx, MG_ERR_NOMEM, "out of memory")
                       : ir_partition(g, ctx, part, lax, &n);
    if (!rc) { /* bucket the nodes by part, in node order; find tensors that leave their part */
        for (int i = 0; i < g->n_nodes; i++) {
            stamp[i] = -1;
            if (part[i] >= 0) start[part[i] + 1]++;
            for (int k = 0; k < g->nodes[i].n_in; k++)
                if (part[g->nodes[i].in[k]] != part[i]) used_out[g->nodes[i].in[k]] = 1;
        }
        for (int k = 0; k < g->n_outputs; k++) used_out[g->outputs[k]] = 1;
        for (int q = 0; q < n; q++) start[q + 1] += start[q];
        for (int i = 0, *fill = map; i < g->n_nodes; i++) { /* map doubles as the fill cursor */
            if (i == 0)
                for (int q = 0; q < n; q++) fill[q] = start[q];
            if (part[i] >= 0) members[fill[part[i]]++] = i;
        }
    }
    if (!rc && n == 0) sb_puts(sb, "# no parts: the program has no operators\n");
    for (int p = 0; p < n && !rc; p++) {
        ir_graph *sub = NULL;
        rc = extract(g, ctx, part, p, members + start[p], start[p + 1] - start[p], used_out, names,
                     map, stamp, &sub);
        if (rc) break;
        const char *op = lax[p] ? "" : ir_ops[g->nodes[members[start[p]]].op].name;
        sb_printf(sb, "%s# part %d of %d: %s%s%s\n", p ? "\n" : "", p + 1, n,
                  lax[p] ? "Lax" : "not Lax (", op, lax[p] ? "" : ")");
        ir_print_text(sub, sb);
        ir_graph_free(sub);
    }
    arena_free(&a);
    base_free(part), base_free(lax), base_free(start), base_free(members), base_free(map);
    base_free(stamp), base_free(used_out);
    if (!rc && sb->oom) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    return rc;
}
