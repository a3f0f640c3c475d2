/* lax: the Lax check (Mirage Definition 5.1) and the partition of a program into maximal Lax
 * subprograms cut at non-Lax operators. The finite-field evaluator and the verifier accept
 * only Lax programs; the search (later) works on each Lax part separately. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

/* Mirage Definition 5.1: only multilinear ops, division and exponentiation, and at most one
 * exponentiation (exp, or silu = x / (1 + exp(-x))) on every path from an input to an
 * output. Returns 1 if Lax, else 0 with a reason in why[0..n). */
int ir_is_lax(const ir_graph *g, char *why, size_t n) {
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
        if (ir_ops[nd->op].n_exp) {
            if (depth[i] >= 1) {
                snprintf(why, n, "'%s' (%s) applies a second exponentiation on a path that "
                         "already went through '%s'", ir_node_label(g, i, lb, sizeof lb),
                         ir_ops[nd->op].name, ir_node_label(g, first[i], lb2, sizeof lb2));
                lax = 0;
            }
            depth[i] += 1, first[i] = i;
        }
    }
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
    int *part;  /* node -> partition id, -1 for inputs and constants */
    int *lax;   /* partition id -> 1 Lax, 0 a non-Lax op */
    int *mark;  /* scratch: per part, reachable from the merge set */
    int *back;  /* scratch: per part, reaches the merge set */
    int *depth; /* scratch, n_nodes */
    int n_parts;
} part_state;

static int in_set(const int *set, int n, int x) {
    for (int i = 0; i < n; i++)
        if (set[i] == x) return 1;
    return 0;
}

/* Would putting node v together with partitions set[0..n) keep one Lax, acyclic part?
 * Precondition: v is a Lax op, set holds distinct Lax parts, nodes < v are assigned.
 *
 * Acyclicity is decided on the graph of parts, not of nodes. A part runs as a unit (one
 * standalone program, later one kernel), so it can start only after every part it reads has
 * finished. The everyday case is exp(S - max(S)) (docs/ir.md): the sub cannot join S's part,
 * which would then both feed max and read its result. Node-level reachability is not enough:
 * it misses paths that enter a part at one node and leave it from another. With a part
 * Q = {a, b}, S -> a and b -> S', no node path leads from S to S' (a does not reach b), yet
 * merging S and S' into M gives M -> Q -> M, and neither M nor Q can run first. So
 * reachability is propagated per part: once any node of a part is reached, all of it is. */
static int can_merge(part_state *s, int v, const int *set, int n) {
    const ir_graph *g = s->g;
    const ir_node *nv = &g->nodes[v];
    /* acyclic: merging creates a cycle iff some part outside the set is both reachable from
     * the set (fwd) and reaches the set or v (back) */
    int *fwd = s->mark, *back = s->back;
    for (int q = 0; q < s->n_parts; q++) fwd[q] = back[q] = in_set(set, n, q);
    /* v joins the merged part, so the parts v reads reach it too */
    for (int k = 0; k < nv->n_in; k++)
        if (s->part[nv->in[k]] >= 0) back[s->part[nv->in[k]]] = 1;
    /* Fixed point over the edges q -> pi of nodes < v. One sweep in node order is not enough:
     * a part can be reached through a late node after the edges leaving its earlier nodes
     * were swept. Flags only turn on, so it ends. */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < v; i++) {
            int pi = s->part[i];
            if (pi < 0) continue;
            for (int k = 0; k < g->nodes[i].n_in; k++) {
                int q = s->part[g->nodes[i].in[k]];
                if (q < 0) continue;
                if (fwd[q] && !fwd[pi]) fwd[pi] = changed = 1;
                if (back[pi] && !back[q]) back[q] = changed = 1;
            }
        }
    }
    for (int q = 0; q < s->n_parts; q++)
        if (fwd[q] && back[q] && !in_set(set, n, q)) return 0;
    /* Lax: at most one exponentiation on any path inside the merged part (Mirage Definition
     * 5.1), counted over its nodes only: what it reads from other parts becomes an input of
     * the standalone part (depth 0). The acyclicity above guarantees that a path leaving the
     * part never comes back, so this count is the part's own. */
    for (int i = 0; i <= v; i++) {
        int mine = i == v || (s->part[i] >= 0 && in_set(set, n, s->part[i]));
        if (!mine) {
            s->depth[i] = 0;
            continue;
        }
        const ir_node *nd = &g->nodes[i];
        int d = 0;
        for (int k = 0; k < nd->n_in; k++)
            if (s->depth[nd->in[k]] > d) d = s->depth[nd->in[k]];
        s->depth[i] = d + ir_ops[nd->op].n_exp;
        if (s->depth[i] > 1) return 0;
    }
    return 1;
}

/* Puts node v into a part (nodes < v are assigned). Sources belong to no part: each part that
 * reads them gets its own input or copy. A Lax op first tries to join all the distinct Lax
 * parts of its operands at once, then each of them alone in operand order; if none works, or
 * the op is not Lax, it opens a new part. So a non-Lax part always holds exactly one op. */
static void assign(part_state *s, int v) {
    const ir_node *nv = &s->g->nodes[v];
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
        int pick = -1;
        if (n && can_merge(s, v, cand, n)) pick = 0;
        for (int c = 0; pick < 0 && n > 1 && c < n; c++)
            if (can_merge(s, v, &cand[c], 1)) cand[0] = cand[c], n = 1, pick = 0;
        if (pick == 0) {
            for (int i = 0; i < v; i++) /* merge the chosen partitions into cand[0] */
                if (s->part[i] >= 0 && in_set(cand + 1, n - 1, s->part[i])) s->part[i] = cand[0];
            s->part[v] = cand[0];
            return;
        }
    }
    s->lax[s->n_parts] = ir_ops[nv->op].lax;
    s->part[v] = s->n_parts++;
}

/* Partitions g: part[i] in [0, *n_parts) for every op node, -1 for inputs and constants;
 * parts are numbered in a topological order; lax[p] says whether part p is Lax (a non-Lax
 * part is a single non-Lax op). Greedy in node order: a node joins its operands' Lax parts
 * when the union stays Lax and acyclic (docs/ir.md, "Partition"). part and lax hold
 * n_nodes entries. Returns MG_OK or MG_ERR_NOMEM. */
mg_status ir_partition(const ir_graph *g, mg_ctx *ctx, int *part, int *lax, int *n_parts) {
    part_state s = {.g = g, .part = part, .lax = lax};
    s.mark = base_calloc((size_t)g->n_nodes + 1, sizeof(int));
    s.depth = base_calloc((size_t)g->n_nodes + 1, sizeof(int));
    s.back = base_calloc((size_t)g->n_nodes + 1, sizeof(int));
    int *newid = base_calloc((size_t)g->n_nodes + 1, sizeof(int));
    int *lax2 = base_calloc((size_t)g->n_nodes + 1, sizeof(int));
    mg_status rc = MG_OK;
    if (!s.mark || !s.depth || !s.back || !newid || !lax2) {
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int v = 0; v < g->n_nodes; v++) assign(&s, v);
    /* renumber the surviving parts in a topological order (Kahn over the part DAG) */
    for (int p = 0; p < s.n_parts; p++) newid[p] = -1;
    int n = 0;
    /* Sweep until no part becomes ready: a part is ready when every other part it reads has
     * an id. Parts emptied by merges are never present and get none. Quadratic at worst,
     * which is fine at program sizes. */
    for (int done_any = 1; done_any;) {
        done_any = 0;
        for (int p = 0; p < s.n_parts; p++) {
            if (newid[p] >= 0) continue;
            int present = 0, ready = 1;
            for (int i = 0; i < g->n_nodes && ready; i++) {
                if (part[i] != p) continue;
                present = 1;
                for (int k = 0; k < g->nodes[i].n_in; k++) {
                    int q = part[g->nodes[i].in[k]];
                    if (q >= 0 && q != p && newid[q] < 0) ready = 0;
                }
            }
            if (present && ready) newid[p] = n, lax2[n] = lax[p], n++, done_any = 1;
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (part[i] >= 0) MG_ASSERT(newid[part[i]] >= 0); /* the part DAG is acyclic */
        if (part[i] >= 0) part[i] = newid[part[i]];
    }
    memcpy(lax, lax2, (size_t)n * sizeof *lax);
    *n_parts = n;
done:
    base_free(s.mark), base_free(s.depth), base_free(s.back), base_free(newid), base_free(lax2);
    return rc;
}

/* Builds part p of g as a standalone program: tensors it reads from outside become inputs
 * (same names), constants are copied in, and tensors used outside or by the program's
 * outputs become outputs. names = ir_node_names(g). Those names have no inline literals, so
 * every tensor has one and a tensor crossing a cut is called the same on both sides (part K's
 * output t5 is a later part's input t5): that is what lets the printed parts be run in order
 * and recomposed. A named constant is copied as an anonymous one with the same literal.
 * Setting a name can fail here only for lack of memory, since names[] are distinct. */
static mg_status extract(const ir_graph *g, mg_ctx *ctx, const int *part, int p,
                         const char **names, ir_graph **out) {
    ir_graph *sub = ir_graph_new();
    int *map = base_calloc((size_t)g->n_nodes + 1, sizeof *map);
    mg_status rc = MG_OK;
    if (!sub || !map) {
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0; i < g->n_nodes; i++) map[i] = -1;
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const ir_node *n = &g->nodes[i];
        if (part[i] != p) continue;
        ir_node proto = *n;
        for (int k = 0; k < n->n_in && !rc; k++) {
            int a = n->in[k];
            if (map[a] < 0) {
                const ir_node *an = &g->nodes[a];
                int r = an->op == IR_OP_CONST ? ir_add_const(sub, ctx, an->lit, an->line, an->col)
                                              : ir_add_input(sub, ctx, names[a], an->dtype, &an->shape);
                if (r < 0) rc = (mg_status)-r;
                map[a] = r;
            }
            proto.in[k] = map[a];
        }
        if (rc) break;
        int r = ir_add_node(sub, ctx, &proto);
        if (r < 0 || ir_set_name(sub, ctx, r, names[i]) < 0) {
            rc = r < 0 ? (mg_status)-r : MG_ERR_NOMEM;
            break;
        }
        map[i] = r;
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) { /* outputs: used elsewhere or program outputs */
        if (part[i] != p) continue;
        int used_out = 0;
        for (int k = 0; k < g->n_outputs; k++) used_out |= g->outputs[k] == i;
        for (int j = i + 1; j < g->n_nodes && !used_out; j++)
            for (int k = 0; k < g->nodes[j].n_in; k++)
                used_out |= g->nodes[j].in[k] == i && part[j] != p;
        if (used_out && ir_add_output(sub, ctx, map[i]) < 0) rc = MG_ERR_NOMEM;
    }
done:
    base_free(map);
    if (rc) ir_graph_free(sub);
    else *out = sub;
    return rc;
}

/* Renders the partition as .mu text: a comment line per part, then the part as a program.
 * Parts come in ir_partition's topological order, so evaluating them in sequence, each one
 * reading earlier parts' outputs by name, gives the whole program's values
 * (test_partition_recompose). */
mg_status ir_print_partition(const ir_graph *g, mg_ctx *ctx, strbuf *sb) {
    int *part = base_calloc((size_t)g->n_nodes + 1, sizeof *part);
    int *lax = base_calloc((size_t)g->n_nodes + 1, sizeof *lax);
    arena a;
    arena_init(&a);
    const char **names = ir_node_names(g, &a, 0);
    int n = 0;
    mg_status rc = !part || !lax || !names ? ctx_err(ctx, MG_ERR_NOMEM, "out of memory")
                                           : ir_partition(g, ctx, part, lax, &n);
    for (int p = 0; p < n && !rc; p++) {
        ir_graph *sub = NULL;
        rc = extract(g, ctx, part, p, names, &sub);
        if (rc) break;
        const char *op = "";
        for (int i = 0; i < g->n_nodes; i++)
            if (part[i] == p && !lax[p]) op = ir_ops[g->nodes[i].op].name;
        sb_printf(sb, "%s# part %d of %d: %s%s%s\n", p ? "\n" : "", p + 1, n,
                  lax[p] ? "Lax" : "not Lax (", op, lax[p] ? "" : ")");
        ir_print_text(sub, sb);
        ir_graph_free(sub);
    }
    arena_free(&a);
    base_free(part), base_free(lax);
    if (!rc && sb->oom) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    return rc;
}
