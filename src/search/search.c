/* search: Algorithm 1 of Mirage (search.h, docs/search.md), the entry. sr_search runs its
 * steps in order: check the program and collect its constants, label its dims, build its
 * abstract expressions and e-graph, the verifier's reference, the screen's shrunk program,
 * the workers, count the tasks, resume from the checkpoint, run the workers, merge what they
 * found, and say why nothing was found if so. The rooms it calls are listed in
 * search_int.h. */
#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search_int.h"
#include "../eval/eval.h"
#include "../lower/lower.h"

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

/* ---- the steps of sr_search ---- */

/* Counts the program's inputs and collects its distinct constants; refuses kernels. */
static mg_status collect_nodes(search *s, mg_ctx *ctx) {
    const ir_graph *prog = s->prog;
    for (int i = 0; i < prog->n_nodes; i++) {
        const ir_node *n = &prog->nodes[i];
        if (n->op == IR_OP_KERNEL)
            return ctx_err(ctx, MG_ERR_INVALID, "the program already contains kernels; search takes "
                           "a program of pre-defined operators");
        if (n->op == IR_OP_INPUT) s->n_in++;
        if (n->op != IR_OP_CONST) continue;
        int dup = 0;
        for (int c = 0; c < s->n_const; c++) dup |= s->const_val[c]->num == n->num && s->const_val[c]->den == n->den;
        if (dup) continue;
        if (s->n_const == SR_MAX_CONSTS)
            return ctx_err(ctx, MG_ERR_LIMIT, "the search handles at most %d distinct constants", SR_MAX_CONSTS);
        s->const_val[s->n_const] = n;
        s->const_lit[s->n_const++] = n->lit;
    }
    return MG_OK;
}

/* The options and the program: --ops, the target, the Lax check, the search's limits, the
 * inputs, constants and outputs. */
static mg_status prepare_program(search *s, mg_ctx *ctx) {
    const sr_opts *o = s->o;
    const ir_graph *prog = s->prog;
    s->ops = ~0ull;
    if (o->ops) {
        char why[200];
        if (!(s->ops = sr_ops_mask(o->ops, why, sizeof why))) return ctx_err(ctx, MG_ERR_INVALID, "%s", why);
    }
    const mg_device *dev = mg_device_lookup(o->device, ctx);
    if (!dev) return MG_ERR_INVALID;
    s->dev = *dev;
    if (o->n_sm > 0) s->dev.n_sm = o->n_sm;
    char why[512];
    int lax = ir_is_lax(prog, why, sizeof why);
    if (lax < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!lax)
        return ctx_err(ctx, MG_ERR_UNSUPPORTED, "the program is not Lax (%s); search one Lax part "
                       "at a time (mugen partition)", why);
    if (prog->n_outputs > AE_MAX_ROOTS || prog->n_outputs > VF_MAX_IO)
        return ctx_err(ctx, MG_ERR_LIMIT, "the search handles at most %d outputs", AE_MAX_ROOTS);
    /* abstract expressions are built, inserted and printed recursively (aexpr.c, egraph.c):
     * their depth, the program's, is bounded so the stack is */
    int *depth = base_calloc((size_t)prog->n_nodes + 1, sizeof *depth), deepest = 0;
    if (!depth) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < prog->n_nodes; i++) {
        for (int k = 0; k < prog->nodes[i].n_in; k++)
            if (depth[prog->nodes[i].in[k]] + 1 > depth[i]) depth[i] = depth[prog->nodes[i].in[k]] + 1;
        if (depth[i] > deepest) deepest = depth[i];
    }
    base_free(depth);
    if (deepest > SR_MAX_DEPTH)
        return ctx_err(ctx, MG_ERR_LIMIT, "the program is %d operators deep; the search takes at most %d "
                       "(search a part at a time)", deepest, SR_MAX_DEPTH);
    mg_status rc = collect_nodes(s, ctx);
    if (rc) return rc;
    if (s->n_in > SR_MAX_TENSORS / 2)
        return ctx_err(ctx, MG_ERR_LIMIT, "the search handles at most %d inputs", SR_MAX_TENSORS / 2);
    s->n_out = prog->n_outputs;
    for (int j = 0; j < s->n_out; j++) s->out_node[j] = prog->outputs[j];
    return MG_OK;
}

/* Dim labels from the program's dim classes (all-ones, no restriction, where the program has
 * operators sr_dims_of does not follow or too many classes); the program's largest rank. */
static mg_status label_dims(search *s, mg_ctx *ctx) {
    const ir_graph *prog = s->prog;
    dimcls *pd = base_alloc(sizeof *pd);
    if (!pd) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    int labeled = !sr_dims_of(prog, pd) && pd->nc <= 64;
    s->red_lab = labeled ? 0 : ~0ull;
    for (int j = 0; labeled && j < s->n_out; j++) s->red_lab |= pd->red[prog->outputs[j]];
    for (int i = 0, k = 0; i < prog->n_nodes; i++) {
        const ir_node *n = &prog->nodes[i];
        if (n->op != IR_OP_INPUT) continue;
        for (int dd = 0; dd < n->shape.ndim; dd++)
            s->in_lab[k][dd] = !labeled ? ~0ull : n->shape.d[dd] > 1 ? 1ull << pd->cls[i][dd] : 0;
        k++;
    }
    base_free(pd);
    for (int i = 0; i < prog->n_nodes; i++)
        if (prog->nodes[i].shape.ndim > s->max_rank) s->max_rank = prog->nodes[i].shape.ndim;
    return MG_OK;
}

/* ae_limits.stopped for the e-graph of search arg, and the stop test while the screen's tests
 * are built (prepare): a stop request or the time limit (the workers' clock, tasks.c) stops
 * them too; the search then stops at once. The progress callback is called here as while the
 * tasks run, ten times a second (no task yet: 0 of 0), and a nonzero return stops as well,
 * so a Ctrl-C through it is seen during a long saturation. */
static int egraph_stopped(void *arg) {
    search *s = arg;
    const sr_opts *o = s->o;
    double now = base_now_s();
    if ((o->stop && *o->stop) || (o->time_limit > 0 && now - s->t0 > o->time_limit))
        __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
    if (o->on_progress && s->n_ranks == 1 && now - s->prep_cb >= 0.1 && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
        s->prep_cb = now;
        if (o->on_progress(o->on_progress_arg, &(mg_progress){.seconds = now - s->t0}))
            __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

/* The program's abstract expressions (r->expr) and their e-graph (s->tab0, s->eg). */
static mg_status build_egraph(search *s, mg_ctx *ctx, sr_result *r) {
    const ir_graph *prog = s->prog;
    ae_tab_init(&s->tab0);
    for (int i = 0; i < prog->n_nodes; i++)
        if (prog->nodes[i].op == IR_OP_INPUT) ae_var(&s->tab0, prog->nodes[i].name);
    int32_t *terms = base_alloc(sizeof *terms * (size_t)(prog->n_nodes + 1));
    if (!terms) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    mg_status rc = ae_of_graph(&s->tab0, ctx, prog, terms);
    int32_t roots[AE_MAX_ROOTS];
    for (int j = 0; !rc && j < s->n_out; j++) roots[j] = terms[prog->outputs[j]];
    base_free(terms);
    if (rc) return rc;
    strbuf eb = {0};
    for (int j = 0; j < s->n_out; j++) {
        if (j) sb_puts(&eb, "; ");
        ae_print(&s->tab0, roots[j], &eb);
    }
    r->expr = sb_take(&eb);
    ae_limits lim = {s->o->eg_max_nodes, 0, 0, egraph_stopped, s};
    ae_egraph_stats est;
    s->eg = ae_egraph_new(&s->tab0, roots, s->n_out, &lim, &est);
    if (!s->eg) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory building the e-graph");
    r->eg_nodes = est.nodes, r->eg_classes = est.classes, r->eg_saturated = est.saturated;
    r->eg_seconds = est.seconds;
    return MG_OK;
}

/* The screen's program: every input dim larger than 16 shrunk, distinct sizes kept distinct
 * (17, 18, ...). Without it (no such dim, MUGEN_SEARCH_NO_SCREEN, or it cannot be built)
 * every candidate is verified at full size. */
static void prepare_screen(search *s, mg_ctx *ctx) {
    const ir_graph *prog = s->prog;
    for (int i = 0; i < prog->n_nodes; i++) {
        const ir_node *n = &prog->nodes[i];
        for (int dd = 0; n->op == IR_OP_INPUT && dd < n->shape.ndim; dd++) {
            int have = n->shape.d[dd] <= 16;
            for (int j = 0; j < s->n_shrink; j++) have |= s->shrink_from[j] == n->shape.d[dd];
            if (!have) s->shrink_from[s->n_shrink] = n->shape.d[dd], s->shrink_to[s->n_shrink] = 17 + s->n_shrink, s->n_shrink++;
        }
    }
    s->full_verify = getenv("MUGEN_SEARCH_FULL_VERIFY") != NULL;
    s->queue_all = getenv("MUGEN_SEARCH_QUEUE") != NULL;
    const char *chk = getenv("MUGEN_CHECK");
    s->check = chk && *chk && strcmp(chk, "0");
    if (s->n_shrink && !getenv("MUGEN_SEARCH_NO_SCREEN") &&
        (s->shrunk = sr_untile(prog, NULL, s->shrink_from, s->shrink_to, s->n_shrink, ctx)) &&
        vf_ref_new(s->shrunk, NULL, ctx, s->o->verify_tests, s->o->seed, 1, &s->screen_ref))
        s->screen_ref = NULL; /* no screen: every candidate is verified at full size */
}

/* One worker per thread (--threads, default one per core, at most SR_MAX_THREADS). */
static mg_status make_workers(search *s, mg_ctx *ctx) {
    const sr_opts *o = s->o;
    int nt = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (nt < 1) nt = 1;
    if (nt > SR_MAX_THREADS) nt = SR_MAX_THREADS;
    s->workers = base_calloc((size_t)nt, sizeof *s->workers);
    if (!s->workers) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    s->n_workers = nt;
    for (int i = 0; i < nt; i++)
        if (sr_worker_init(&s->workers[i], s)) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    return MG_OK;
}

/* Counts the tasks, the depth-0 choices of both passes (tasks.c: set_pass), on the first
 * worker, and makes the per-task records. */
static mg_status count_tasks(search *s, mg_ctx *ctx) {
    worker *w = &s->workers[0];
    if (s->o->max_kops > 1) { /* the first pass: one kernel operator */
        w->task = -1, w->counter = 0, w->max_kops = 1, w->min_kops = 1;
        sr_generate(w);
        s->n_tasks1 = w->counter;
    }
    w->task = -1, w->counter = 0, w->max_kops = s->o->max_kops;
    sr_generate(w);
    s->n_tasks = s->n_tasks1 + w->counter;
    s->done = base_calloc((size_t)s->n_tasks + 1, 1);
    s->task_found = base_calloc((size_t)s->n_tasks + 1, sizeof *s->task_found);
    s->task_n_found = base_calloc((size_t)s->n_tasks + 1, sizeof *s->task_n_found);
    s->given = base_alloc(sizeof *s->given * ((size_t)s->n_tasks + 1));
    s->redo = base_alloc(sizeof *s->redo * ((size_t)s->n_tasks + 1));
    if (!s->done || !s->task_found || !s->task_n_found || !s->given || !s->redo)
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int64_t t = 0; t <= s->n_tasks; t++) s->given[t] = -1;
    return MG_OK;
}

/* The counts of every worker (on rank 0 of several: of every rank), into r. */
static void add_counts(const search *s, sr_result *r) {
    int64_t c[SR_N_COUNTS];
    sr_totals(s, c);
    r->states = c[SR_C_STATES], r->pruned = c[SR_C_PRUNED], r->candidates += c[SR_C_CANDIDATES];
    r->rejected += c[SR_C_REJECTED], r->duplicates += c[SR_C_DUPLICATES], r->screened += c[SR_C_SCREENED];
    r->dominated += c[SR_C_DOMINATED], r->unfit += c[SR_C_UNFIT];
    r->verify_seconds += 1e-6 * (double)c[SR_C_VERIFY_US];
    r->first_seconds = 1e-6 * (double)c[SR_C_FIRST_US];
    r->tasks = s->n_tasks, r->tasks_done = s->tasks_done;
    r->stopped = s->stop;
}

static int cmp_found(const void *a, const void *b) {
    const sr_found *x = a, *y = b;
    if (x->cost_us != y->cost_us) return x->cost_us < y->cost_us ? -1 : 1;
    if (x->float_error != y->float_error) return x->float_error < y->float_error ? -1 : 1;
    return strcmp(x->text, y->text);
}

/* Merges the tasks' μGraphs in task order into r (the texts move), dedupes them by text and
 * ranks them by the cost model. */
static mg_status merge_results(search *s, mg_ctx *ctx, sr_result *r) {
    add_counts(s, r);
    int total = 0;
    for (int v = 0; v < LW_TILINGS; v++) total += s->lowered[v].text != NULL;
    for (int64_t t = 0; t < s->n_tasks; t++) total += s->task_n_found[t];
    if (total) {
        r->found = base_calloc((size_t)total, sizeof *r->found);
        if (!r->found) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    for (int64_t t = 0; t < s->n_tasks; t++)
        for (int i = 0; i < s->task_n_found[t]; i++) {
            sr_found *f = &s->task_found[t][i];
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
    for (int v = 0; v < LW_TILINGS; v++) { /* the lowerings', unless a task found them too */
        sr_found *f = &s->lowered[v];
        if (!f->text) continue;
        int dup = 0;
        for (int j = 0; j < r->n_found && !dup; j++) dup = !strcmp(r->found[j].text, f->text);
        if (dup) base_free(f->text), r->duplicates++;
        else r->found[r->n_found++] = *f;
        f->text = NULL;
    }
    if (r->n_found) qsort(r->found, (size_t)r->n_found, sizeof *r->found, cmp_found);
    return MG_OK;
}

/* The plain lowering's μGraphs of the program (src/lower, docs/lower.md: the floor under every
 * search), one a tiling of form MM that gives a μGraph of its own (lw_tilings: the default,
 * then the others, which are faster on some shapes: the suites' products of 1-32 rows),
 * into s->lowered_u[] for the first worker to verify (sr_verify_lowered) while the others
 * take tasks; merge_results ranks them with what the tasks found. So a search never answers
 * worse than the plain path, an attention's fused kernels (form ATTN) are among its answers
 * however the enumeration fares, and `mugen optimize` times the tilings (docs/search.md,
 * "The lowering as a candidate"). Rank 0 only; --no-lowered (o->no_lowered) leaves them out. */
static void lower_program(search *s) {
    if (s->o->no_lowered || s->rank != 0) return;
    char *texts[LW_TILINGS] = {0};
    for (int v = 0; v < LW_TILINGS; v++) {
        mg_ctx lc = {{0}};
        ir_graph *u = NULL;
        if (lw_lower(s->prog, &lc, &s->dev, 0, &lw_tilings[v], &u, NULL) != MG_OK) continue; /* none */
        /* with --ops, only a lowering within the operators given */
        int ok = 1;
        for (int i = 0; i < u->n_nodes && ok; i++) {
            const ir_node *n = &u->nodes[i];
            ok = !ir_ops[n->op].search || (s->ops >> n->op & 1);
            for (int j = 0; n->op == IR_OP_KERNEL && j < n->body->n_nodes && ok; j++)
                ok = !ir_ops[n->body->nodes[j].op].search || (s->ops >> n->body->nodes[j].op & 1);
        }
        strbuf sb = {0};
        if (ok) ir_print_text(u, &sb), texts[v] = sb_take(&sb);
        for (int q = 0; q < v && ok; q++) ok = !texts[v] || !texts[q] || strcmp(texts[q], texts[v]); /* a tiling's twin */
        if (ok && texts[v]) s->lowered_u[v] = u;
        else ir_graph_free(u);
    }
    for (int v = 0; v < LW_TILINGS; v++) base_free(texts[v]);
}

void sr_verify_lowered(worker *w) {
    search *s = w->s;
    for (int v = 0; v < LW_TILINGS; v++) {
        ir_graph *u = s->lowered_u[v];
        if (!u) continue;
        s->lowered_u[v] = NULL;
        w->task = -1 - v; /* mg_search_found.task */
        int had = w->n_found;
        sr_verify_one(w, u); /* takes u; checked like any candidate, not trusted */
        if (w->n_found > had) s->lowered[v] = w->found[--w->n_found];
    }
}

/* r->why_none: why a search that ran found nothing. */
static void explain_none(const search *s, sr_result *r) {
    if (r->stopped)
        snprintf(r->why_none, sizeof r->why_none, "the search was stopped after %lld of %lld tasks "
                 "before any μGraph was verified", (long long)r->tasks_done, (long long)r->tasks);
    else if (!r->candidates)
        snprintf(r->why_none, sizeof r->why_none, "no complete μGraph within the limits: %s "
                 "(raise --max-kops/--max-bops or widen --grid/--forloop)",
                 s->pruned && s->o->prune ? "every other prefix was pruned by its abstract expression"
                                          : "no prefix reached the program's expression");
    else
        snprintf(r->why_none, sizeof r->why_none, "%lld candidates reached the program's abstract "
                 "expression, but none is equivalent (%lld rejected by the screen, %lld by the "
                 "verifier): an equivalent μGraph may need more than the limits allow (raise "
                 "--max-kops, --max-bops or --max-kernels)", (long long)r->candidates,
                 (long long)r->screened, (long long)(r->rejected - r->screened));
}

/* Frees what search s holds (any part of it may be missing). */
static void search_free(search *s) {
    for (int i = 0; i < s->n_workers; i++) sr_worker_free(&s->workers[i]);
    base_free(s->workers);
    for (int64_t t = 0; t < s->n_tasks && s->task_found; t++) {
        /* texts not merged into the result (an error before or during the merge) */
        for (int i = 0; s->task_found[t] && i < s->task_n_found[t]; i++) base_free(s->task_found[t][i].text);
        base_free(s->task_found[t]);
    }
    base_free(s->task_found);
    for (int v = 0; v < LW_TILINGS; v++) base_free(s->lowered[v].text), ir_graph_free(s->lowered_u[v]);
    base_free(s->task_n_found);
    base_free(s->done);
    base_free(s->given);
    base_free(s->queue);
    base_free(s->redo);
    sr_ranks_free(s);
    vf_ref_free(s->ref);
    vf_ref_free(s->screen_ref);
    sr_small_free(s);
    ir_graph_free(s->shrunk);
    ae_egraph_free(s->eg);
    ae_tab_free(&s->tab0);
}

/* ---- the entry ---- */

/* The steps before the tasks run: MG_OK with s->stop set when the time limit or a stop
 * request came first (while the verifier prepared its tests). */
static mg_status prepare(search *s, mg_ctx *ctx, sr_result *r) {
    const sr_opts *o = s->o;
    mg_status rc = prepare_program(s, ctx);
    if (!rc) rc = label_dims(s, ctx);
    if (!rc) rc = build_egraph(s, ctx, r);
    if (rc) return rc;
    /* the verifier's tests of the program at full size are built by the first candidate
     * that needs them (candidate.c full_ref): most are verified at a smaller instance or
     * rejected by the screen, and the build took seconds of one core before any task ran
     * (QKNorm: 5 s). The screen's are small; the time limit and a stop request are seen
     * inside them too. */
    ev_set_stop_fn(egraph_stopped, s);
    prepare_screen(s, ctx);
    ev_set_stop_fn(NULL, NULL);
    if (egraph_stopped(s)) return MG_OK; /* stopped before any task: not an error */
    rc = make_workers(s, ctx);
    if (!rc) rc = count_tasks(s, ctx);
    if (!rc) lower_program(s);
    if (!rc && o->ckpt_dir && sr_rank() == 0) rc = sr_open_checkpoint(s, ctx, r); /* resume the finished tasks */
    return rc;
}

mg_status sr_search(const ir_graph *prog, const sr_opts *o, mg_ctx *ctx, sr_result *r) {
    memset(r, 0, sizeof *r);
    search s;
    memset(&s, 0, sizeof s);
    s.prog = prog, s.o = o, s.t0 = s.prep_cb = base_now_s();
    s.rank = sr_rank(), s.n_ranks = sr_n_ranks();
    mg_status rc = prepare(&s, ctx, r);
    rc = sr_ranks_agree(&s, ctx, rc); /* with ranks: all ready, or all stop (ranks.c) */
    if (rc) goto done;
    int early = s.stop; /* stopped before any task */
    if (!early) sr_run_workers(&s);
    if (s.ref_rc && s.ref_rc != MG_ERR_LIMIT) { /* the full-size tests could not be built */
        rc = ctx_err(ctx, s.ref_rc, "%s", s.ref_msg);
        goto done;
    }
    rc = merge_results(&s, ctx, r);
    if (rc) goto done;
    if (!r->n_found && !early && s.rank == 0) explain_none(&s, r);
    r->seconds = base_now_s() - s.t0;
done:
    search_free(&s);
    if (rc) sr_result_free(r);
    return rc;
}

void sr_result_free(sr_result *r) {
    for (int i = 0; i < r->n_found; i++) base_free(r->found[i].text);
    base_free(r->found);
    base_free(r->expr);
    memset(r, 0, sizeof *r);
}
