/* optimize: a whole program (issue #25, docs/lower.md "Whole programs"). The program is cut
 * at its non-Lax operators (ir_partition); each Lax piece small enough for the search's limits
 * is searched through the search cache, once per canonical form (the same layer sixteen
 * times is one search); a piece's best μGraph is kept where it runs faster than the piece
 * lowered, both timed on the backend mg_run picks; the kept μGraphs replace their pieces in
 * one kernel graph, whose other operators the plain lowering (lw_lower) then turns into
 * kernels; the result is run against the program's reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_internal.h"
#include "ir/canon.h"
#include "lower/lower.h"

/* One part of the partition as a standalone program: in_g[k] is the program node its input
 * k stands for, out_g[k] the program node its output k is. */
typedef struct piece {
    ir_graph *g;
    int *in_g, *out_g, n_in, n_out;
    int searchable, uniq; /* uniq: index of the first piece of its canonical form */
    ir_canon canon;
    ir_graph *ug;          /* the chosen μGraph in this piece's names, or NULL: lowered */
} piece;


static int heavy(ir_op op) { return op == IR_OP_MATMUL || ir_ops[op].kind == IR_KIND_REDUCE || op == IR_OP_RMSNORM; }

/* Builds part p of g as a program into *P (names: nm, every node's printing name). */
static mg_status build_piece(const ir_graph *g, mg_ctx *ctx, const int *part, int p, const char **nm,
                             const int *n_out_readers, int *newi, piece *P) {
    int n = g->n_nodes, r = 0;
    P->g = ir_graph_new();
    P->in_g = base_alloc(((size_t)n + 1) * sizeof *P->in_g), P->out_g = base_alloc(((size_t)n + 1) * sizeof *P->out_g);
    if (!P->g || !P->in_g || !P->out_g) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) newi[i] = -1;
    for (int i = 0; i < n && r >= 0; i++) {
        if (part[i] != p) continue;
        ir_node q = g->nodes[i];
        q.name = NULL, q.line = q.col = 0;
        for (int k = 0; k < q.n_in && r >= 0; k++) {
            int a = g->nodes[i].in[k];
            if (newi[a] < 0 && g->nodes[a].op == IR_OP_CONST) r = newi[a] = ir_add_const(P->g, ctx, g->nodes[a].lit, 0, 0);
            else if (newi[a] < 0) {
                r = newi[a] = ir_add_input_from(P->g, ctx, nm[a], &g->nodes[a]);
                P->in_g[P->n_in++] = a;
            }
            q.in[k] = newi[a];
        }
        if (r >= 0) r = newi[i] = ir_add_node(P->g, ctx, &q);
    }
    for (int i = 0; i < n && r >= 0; i++) {
        if (part[i] != p || !n_out_readers[i]) continue;
        r = ir_set_name(P->g, ctx, newi[i], nm[i]);
        if (r >= 0) r = ir_add_output(P->g, ctx, newi[i]);
        P->out_g[P->n_out++] = i;
    }
    return r < 0 ? (mg_status)-r : MG_OK;
}

/* The program node piece P's tensor called name stands for, or -1. */
static int g_of(const piece *P, const ir_graph *pg, const char *name) {
    int j = ir_find(pg, name), c = 0;
    if (j < 0) return -1;
    if (pg->nodes[j].op == IR_OP_INPUT) { /* inputs were added in in_g's order */
        for (int q = 0; q < j; q++) c += pg->nodes[q].op == IR_OP_INPUT;
        return P->in_g[c];
    }
    for (int k = 0; k < P->g->n_outputs; k++)
        if (P->g->outputs[k] == j) return P->out_g[k];
    return -1;
}

/* Adds μGraph u (in piece P's names) to S: its inputs are newi[] of the program nodes they
 * stand for; its outputs become newi[] of theirs, with the program's names. */
static mg_status graft(ir_graph *S, mg_ctx *ctx, const ir_graph *g, const piece *P, const ir_graph *u, int *newi) {
    int *nu = base_alloc(((size_t)u->n_nodes + 1) * sizeof *nu), r = nu ? 0 : -(int)MG_ERR_NOMEM;
    for (int j = 0; j < u->n_nodes && r >= 0; j++) {
        const ir_node *x = &u->nodes[j];
        if (x->op == IR_OP_INPUT) {
            int a = g_of(P, P->g, x->name);
            r = a < 0 || newi[a] < 0 ? -(int)ctx_err(ctx, MG_ERR_INVALID, "optimize: μGraph input %s is no piece input", x->name)
                                     : (nu[j] = newi[a]);
        } else if (x->op == IR_OP_CONST) r = nu[j] = ir_add_const(S, ctx, x->lit, 0, 0);
        else if (x->op == IR_OP_KERNEL) {
            if (x->index) continue; /* added with its kernel's first output */
            int in[IR_MAX_IN], nb = 0;
            for (int k = 0; k < x->n_in; k++) in[k] = nu[x->in[k]];
            r = ir_copy_kernel(S, ctx, u, j, in, NULL);
            for (int q = j; r >= 0 && q < u->n_nodes && u->nodes[q].body == x->body; q++) nu[q] = r + nb++;
        } else {
            ir_node q = *x;
            q.name = NULL, q.line = q.col = 0;
            for (int k = 0; k < q.n_in; k++) q.in[k] = nu[x->in[k]];
            r = nu[j] = ir_add_node(S, ctx, &q);
        }
    }
    for (int k = 0; k < u->n_outputs && r >= 0; k++) {
        const ir_node *x = &u->nodes[u->outputs[k]];
        int a = x->name ? g_of(P, P->g, x->name) : -1;
        if (a < 0) r = -(int)ctx_err(ctx, MG_ERR_INVALID, "optimize: a μGraph output is no piece output");
        else if ((newi[a] = nu[u->outputs[k]]), g->nodes[a].name) r = ir_set_name(S, ctx, newi[a], g->nodes[a].name);
    }
    base_free(nu);
    return r < 0 ? (mg_status)-r : MG_OK;
}

/* Adds program node i to S (operands through newi). */
static int copy_node(ir_graph *S, mg_ctx *ctx, const ir_graph *g, int i, const int *newi) {
    const ir_node *n = &g->nodes[i];
    if (n->op == IR_OP_INPUT) return ir_add_input_from(S, ctx, n->name, n);
    if (n->op == IR_OP_CONST) return ir_add_const(S, ctx, n->lit, 0, 0);
    ir_node q = *n;
    q.name = NULL, q.line = q.col = 0;
    for (int k = 0; k < n->n_in; k++) q.in[k] = newi[n->in[k]];
    int r = ir_add_node(S, ctx, &q);
    if (r >= 0 && n->name) r = ir_set_name(S, ctx, r, n->name) < 0 ? -(int)MG_ERR_NOMEM : r;
    return r;
}

/* The kernel graph of g with each part p that has a μGraph (pc[p].ug) replaced by it, in an
 * order where every unit (a node, or a replaced part) follows what it reads (Kahn's). */
static mg_status stitch(const ir_graph *g, mg_ctx *ctx, const int *part, int n_parts, piece *pc, ir_graph **out) {
    int n = g->n_nodes, U = n + n_parts;
    int *uid = base_alloc(((size_t)n + 1) * sizeof *uid), *deg = base_calloc((size_t)U + 1, sizeof *deg);
    int *start = base_calloc((size_t)U + 2, sizeof *start), *adj = NULL, *queue = base_alloc(((size_t)U + 1) * sizeof *queue);
    int *newi = base_alloc(((size_t)n + 1) * sizeof *newi), *done = base_calloc((size_t)U + 1, sizeof *done);
    ir_graph *S = ir_graph_new();
    int64_t edges = 0;
    mg_status rc = uid && deg && start && queue && newi && done && S ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && !rc; i++) {
        uid[i] = part[i] >= 0 && pc[part[i]].ug ? n + part[i] : i, newi[i] = -1;
        edges += g->nodes[i].n_in;
    }
    if (!rc && !(adj = base_alloc(((size_t)edges + 1) * sizeof *adj))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int pass = 0; pass < 2 && !rc; pass++) { /* CSR of unit edges: counts, then fill */
        for (int i = 0; i < n; i++)
            for (int k = 0; k < g->nodes[i].n_in; k++) {
                int a = uid[g->nodes[i].in[k]], b = uid[i];
                if (a == b) continue;
                if (!pass) start[a + 2]++, deg[b]++;
                else adj[start[a + 1]++] = b;
            }
        if (!pass)
            for (int u = 0; u < U; u++) start[u + 2] += start[u + 1];
    }
    int head = 0, tail = 0;
    for (int u = 0; u < U && !rc; u++) {
        int exists = u < n ? uid[u] == u : pc[u - n].ug != NULL;
        if (exists && !deg[u]) queue[tail++] = u;
    }
    while (head < tail && !rc) {
        int u = queue[head++];
        if (u < n) {
            int r = copy_node(S, ctx, g, u, newi);
            if (r < 0) rc = (mg_status)-r;
            else newi[u] = r;
        } else rc = graft(S, ctx, g, &pc[u - n], pc[u - n].ug, newi);
        done[u] = 1;
        for (int e = start[u]; e < start[u + 1]; e++)
            if (!--deg[adj[e]]) queue[tail++] = adj[e];
    }
    for (int i = 0; i < n && !rc; i++)
        if (!done[uid[i]]) rc = ctx_err(ctx, MG_ERR_INVALID, "optimize: the pieces' order has a cycle (a partition bug)");
    for (int k = 0; k < g->n_outputs && !rc; k++) {
        int r = ir_add_output(S, ctx, newi[g->outputs[k]]);
        if (r < 0) rc = (mg_status)-r;
    }
    if (!rc) *out = S, S = NULL;
    ir_graph_free(S);
    base_free(uid), base_free(deg), base_free(start), base_free(adj), base_free(queue), base_free(newi), base_free(done);
    return rc;
}

void mg_optimize_defaults(mg_optimize_opts *o) {
    memset(o, 0, sizeof *o);
    mg_search_defaults(&o->search);
    o->search.time_limit = 60;
    o->max_piece_ops = 16, o->max_piece_heavy = 3;
}

void mg_optimize_set_progress(mg_optimize_opts *o, mg_progress_fn fn, void *arg) {
    o->search.on_progress = fn, o->search.on_progress_arg = arg;
}

/* The user's progress callback seen through the pieces: which piece, its clock, and whether
 * the callback asked to stop. */
typedef struct piece_watch {
    mg_progress_fn fn;
    void *arg;
    int piece, n_pieces, stopped;
    double t0;
} piece_watch;

static int piece_progress(void *arg, const mg_progress *p) {
    piece_watch *w = arg;
    mg_progress q = *p;
    q.piece = w->piece, q.n_pieces = w->n_pieces, q.seconds = base_now_s() - w->t0;
    if (w->fn(w->arg, &q)) w->stopped = 1;
    return w->stopped;
}

/* Searches piece P (the first of its form) and keeps its best μGraph if it beats the piece
 * lowered; a line for the log in sb. o->search.on_progress, when set, is pw's (its calls at
 * the piece's start and end are made here); MG_ERR_LIMIT when it asked to stop. */
static mg_status search_piece(mg_ctx *ctx, const mg_optimize_opts *o, piece_watch *pw, piece *P, int idx,
                              mg_optimize_report *rep, strbuf *sb) {
    mg_program prog = {.g = P->g};
    mg_search_result sr;
    memset(&sr, 0, sizeof sr);
    double t0 = base_now_s();
    pw->t0 = t0;
    if (pw->fn) piece_progress(pw, &(mg_progress){0});
    mg_status rc = pw->stopped ? MG_OK : mg_search_cached(ctx, &prog, &o->search, 0, &sr);
    rep->search_seconds += base_now_s() - t0;
    if (pw->fn && !pw->stopped) /* its end, searched, read or refused */
        piece_progress(pw, &(mg_progress){.tasks_done = sr.tasks_done, .n_tasks = sr.tasks, .found = sr.n_found,
                                          .piece_done = 1});
    if (pw->stopped) {
        mg_search_result_free(&sr);
        return ctx_err(ctx, MG_ERR_LIMIT, "optimize: stopped by the progress callback in piece %d of %d (the "
                       "pieces searched before it are in the search cache)", pw->piece, pw->n_pieces);
    }
    if (rc && rc != MG_ERR_NOMEM) { /* a piece the search refuses is lowered */
        sb_printf(sb, "piece %d: not searched (%s): lowered\n", idx, mg_ctx_error(ctx));
        return MG_OK;
    }
    if (rc) return rc;
    rep->searched++, rep->from_cache += sr.cached;
    char how[96];
    snprintf(how, sizeof how, "%s", sr.cached ? "from the search cache" : sr.stopped ? "stopped at its time limit" : "complete");
    if (sr.tasks_resumed) /* a search stopped part way before (docs/search.md, "The search cache") */
        snprintf(how + strlen(how), sizeof how - strlen(how), " (%lld of %lld tasks resumed)", (long long)sr.tasks_resumed,
                 (long long)sr.tasks);
    if (!sr.n_found) {
        sb_printf(sb, "piece %d: search %s, nothing found (%.1f s): lowered\n", idx, how, sr.seconds);
        mg_search_result_free(&sr);
        return MG_OK;
    }
    mg_program *u = NULL;
    rc = mg_program_parse(ctx, sr.found[0].text, strlen(sr.found[0].text), "ugraph", &u);
    mg_run_report ra, rb;
    double t1 = base_now_s();
    mg_status sa = rc ? rc : mg_run(ctx, &prog, u, &o->run, &ra);
    mg_status sl = rc ? rc : mg_run(ctx, &prog, NULL, &o->run, &rb);
    rep->piece_run_seconds += base_now_s() - t1;
    int keep = !rc && !sa && ra.ok && (sl || !rb.ok || ra.time_us < rb.time_us);
    sb_printf(sb, "piece %d: search %s, %d μGraphs; best %s %.2f us, lowered %s %.2f us: %s\n", idx, how, sr.n_found,
              sa ? "failed" : ra.ok ? "ok" : "MISMATCH", sa ? 0 : ra.time_us, sl ? "failed" : rb.ok ? "ok" : "MISMATCH",
              sl ? 0 : rb.time_us, keep ? "μGraph kept" : "lowered");
    if (keep) P->ug = u->g, u->g = NULL, rep->kept++;
    mg_program_free(u);
    mg_search_result_free(&sr);
    return rc == MG_ERR_NOMEM ? rc : MG_OK;
}

mg_status mg_optimize_program(mg_ctx *ctx, const mg_program *prog, const mg_optimize_opts *o, mg_optimize_report *rep) {
    if (!prog || !o || !rep) return ctx_err(ctx, MG_ERR_INVALID, "mg_optimize_program: NULL argument");
    memset(rep, 0, sizeof *rep);
    ir_graph *tok = NULL; /* a ragged program: its token form for the bound batch (docs/ragged.md) */
    mg_status rr = mg_token_program(prog, NULL, ctx, "optimize", &tok);
    if (rr) return rr;
    const ir_graph *g = tok ? tok : prog->g;
    int n = g->n_nodes, n_parts = 0;
    for (int i = 0; i < n; i++)
        if (g->nodes[i].op == IR_OP_KERNEL) {
            ir_graph_free(tok);
            return ctx_err(ctx, MG_ERR_INVALID, "optimize: the program is already a μGraph");
        }
    double t0 = base_now_s();
    int *part = base_alloc(((size_t)n + 1) * sizeof *part), *lax = base_alloc(((size_t)n + 1) * sizeof *lax);
    int *readers = base_calloc((size_t)n + 1, sizeof *readers), *newi = base_alloc(((size_t)n + 1) * sizeof *newi);
    arena names = {0};
    piece *pc = NULL;
    strbuf log = {0};
    ir_graph *S = NULL, *L = NULL;
    mg_status rc = part && lax && readers && newi ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc) rc = ir_partition(g, ctx, part, lax, &n_parts);
    const char **nm = rc ? NULL : ir_node_names(g, &names, 0);
    if (!rc && !nm) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc && !(pc = base_calloc((size_t)n_parts + 1, sizeof *pc))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && !rc; i++) /* readers outside i's part, outputs counted */
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (part[g->nodes[i].in[k]] != part[i]) readers[g->nodes[i].in[k]]++;
    for (int k = 0; k < g->n_outputs && !rc; k++) readers[g->outputs[k]]++;
    rep->parts = n_parts;
    for (int p = 0; p < n_parts && !rc; p++) {
        piece *P = &pc[p];
        rc = build_piece(g, ctx, part, p, nm, readers, newi, P);
        int ops = 0, hv = 0;
        for (int i = 0; P->g && i < P->g->n_nodes; i++) {
            ir_op op = P->g->nodes[i].op;
            ops += op != IR_OP_INPUT && op != IR_OP_CONST, hv += heavy(op);
        }
        rep->lax_parts += lax[p];
        P->searchable = lax[p] && hv >= 1 && hv <= o->max_piece_heavy && ops <= o->max_piece_ops;
        P->uniq = p;
        if (!rc && P->searchable && !(rc = ir_canon_new(P->g, ctx, &P->canon)))
            for (int q = 0; q < p; q++)
                if (pc[q].searchable && !strcmp(pc[q].canon.text, P->canon.text)) {
                    P->uniq = q;
                    break;
                }
        if (!rc && !P->searchable)
            sb_printf(&log, "piece %d: %s (%d operators, %d matmuls and reductions): lowered\n", p,
                      !lax[p] ? "not Lax" : hv ? "past the search's limits" : "elementwise only", ops, hv);
    }
    mg_optimize_opts oo = *o; /* the search's callback through pw: the piece and a stop */
    piece_watch pw = {o->search.on_progress, o->search.on_progress_arg, 0, 0, 0, 0};
    if (pw.fn) oo.search.on_progress = piece_progress, oo.search.on_progress_arg = &pw;
    for (int p = 0; p < n_parts && !rc; p++) pw.n_pieces += pc[p].searchable && pc[p].uniq == p;
    for (int p = 0; p < n_parts && !rc; p++) {
        piece *P = &pc[p];
        if (!P->searchable) continue;
        if (P->uniq == p) {
            rep->unique++, pw.piece++;
            if (o->progress) fprintf(stderr, "optimize: searching piece %d of %d\n", p + 1, n_parts), fflush(stderr);
            rc = search_piece(ctx, &oo, &pw, P, p, rep, &log);
            continue;
        }
        const piece *F = &pc[P->uniq];
        if (!F->ug) {
            sb_printf(&log, "piece %d: as piece %d: lowered\n", p, P->uniq);
            continue;
        }
        /* the first piece's μGraph in this piece's names */
        strbuf t = {0};
        char *text = NULL;
        ir_print_text(F->ug, &t);
        rc = t.oom ? ctx_err(ctx, MG_ERR_NOMEM, "out of memory")
                   : ir_rename_text(t.s, F->canon.real, P->canon.real, F->canon.n, ctx, &text);
        if (!rc) rc = ir_parse_text(ctx, text, strlen(text), "ugraph", &P->ug);
        if (!rc) sb_printf(&log, "piece %d: as piece %d: μGraph kept\n", p, P->uniq), rep->kept++;
        base_free(text);
        sb_free(&t);
    }
    if (!rc) rc = stitch(g, ctx, part, n_parts, pc, &S);
    if (!rc) rc = lw_lower(S, ctx, mg_device_default(), 0, NULL, &L, NULL);
    rep->seconds_before_compile = base_now_s() - t0 - rep->piece_run_seconds;
    if (!rc) {
        strbuf t = {0};
        ir_print_text(L, &t);
        rep->ugraph_text = t.s;
        if (t.oom) sb_free(&t), rep->ugraph_text = NULL, rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    if (!rc && o->run.reps >= 0) {
        mg_program fin = {.g = L};
        rc = mg_run(ctx, prog, &fin, &o->run, &rep->run);
    }
    rep->log = log.s, log.s = NULL;
    for (int p = 0; pc && p < n_parts; p++) {
        ir_graph_free(pc[p].g), ir_graph_free(pc[p].ug), ir_canon_free(&pc[p].canon);
        base_free(pc[p].in_g), base_free(pc[p].out_g);
    }
    sb_free(&log);
    ir_graph_free(S), ir_graph_free(L), ir_graph_free(tok);
    arena_free(&names);
    base_free(pc), base_free(part), base_free(lax), base_free(readers), base_free(newi);
    return rc;
}

void mg_optimize_report_free(mg_optimize_report *r) {
    if (!r) return;
    base_free(r->ugraph_text), base_free(r->log);
    r->ugraph_text = r->log = NULL;
}
