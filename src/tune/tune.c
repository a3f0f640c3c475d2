/* tune: the tuner (docs/tuning.md, issue #29 item 2). Runs the rules' point of a program's
 * schedule space and random valid points (opt/space.c) through mg_run, each compiled, timed
 * and checked, appends every measurement to a dataset file (JSON lines, the format in
 * docs/tuning.md) and skips the points the dataset already holds for the same program and
 * backend, so an interrupted run resumes; on the GPU the fastest point goes into the tuning
 * cache (driver.c, dr_tuned_put), where later plans of the same graph for that device find it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../api_internal.h"
#include "../driver.h"
#include "../lower/lower.h"
#include "../opt/opt.h"
#include "../runtime/runtime.h"

enum { POINT_MAX = 1024 };

/* Is point `spec` of program `key` on `backend` among the dataset's lines (file may be NULL)? */
static int measured(FILE *f, const char *key, const char *backend, const char *spec, double *us, int *ok) {
    if (!f) return 0;
    rewind(f);
    char line[4096], want_k[64], want_p[POINT_MAX + 16], want_b[32];
    snprintf(want_k, sizeof want_k, "\"key\": \"%s\"", key);
    snprintf(want_b, sizeof want_b, "\"backend\": \"%s\"", backend);
    snprintf(want_p, sizeof want_p, "\"point\": \"%s\"", spec);
    while (fgets(line, sizeof line, f))
        if (strstr(line, want_k) && strstr(line, want_b) && strstr(line, want_p)) {
            const char *t = strstr(line, "\"time_us\": ");
            *us = t ? atof(t + 11) : 0;
            *ok = strstr(line, "\"ok\": true") != NULL;
            return 1;
        }
    return 0;
}

/* The kernels' plan at x, one [blocks, threads, stages, smem, blocks an SM, tma, loop] a kernel,
 * for the dataset's features. */
static void features(const ir_graph *g, const mg_device *dev, const op_space *s, const int *x, strbuf *sb) {
    op_force f[OP_SPACE_KERNELS];
    op_opts o = op_space_opts(s, x, &op_opts_default, f);
    mg_ctx ctx = {{0}};
    op_plan *p = NULL;
    sb_puts(sb, "[");
    if (op_plan_new(g, &ctx, dev, &o, &p) == MG_OK)
        for (int k = 0; k < p->n_kernels; k++) {
            const op_kernel *kk = &p->kernels[k];
            const int *gr = kk->body->grid;
            sb_printf(sb, "%s[%lld, %d, %d, %lld, %d, %d, %lld]", k ? ", " : "", (long long)gr[0] * gr[1] * gr[2], kk->threads,
                      kk->stages, (long long)kk->smem, kk->min_blocks, kk->tma, (long long)kk->body->forloop);
        }
    sb_puts(sb, "]");
    op_plan_free(p);
}

/* A sketch: one lowering of the program (lw_tilings[tiling]), or the μGraph given. */
typedef struct sketch {
    int tiling;      /* -1: a μGraph, no sketch= in its points */
    ir_graph *owned; /* the lowering */
    const ir_graph *g;
    op_space *s;
    uint64_t key;    /* dr_graph_key(g): its tuning cache entry */
} sketch;

/* A tuning run's state: the sketches and their spaces, the dataset and the points taken. */
typedef struct tuner {
    mg_ctx *ctx;
    const mg_program *prog, *ugraph;
    const mg_tune_opts *o;
    mg_tune_report *rep;
    const mg_device *dev;
    sketch sk[LW_TILINGS];
    int ns;                  /* distinct sketches (lowerings that differ) */
    FILE *ds;
    char key[24];
    const char *backend;
    int n, cap;              /* points taken, room */
    char (*spec)[POINT_MAX]; /* each point's text, */
    int *ps;                 /* its sketch, */
    int (*x)[OP_SPACE_MAX];  /* its choices (indices into the sketch's domains), */
    double *us;              /* its time (0: failed) */
    char gpu[256];           /* the GPU the points ran on, when they did */
} tuner;

/* Is s (a point's text) among tu's points? */
static int taken(const tuner *tu, const char *spec) {
    for (int u = 0; u < tu->n; u++)
        if (!strcmp(tu->spec[u], spec)) return 1;
    return 0;
}

/* Point x of sketch k as text ("sketch=T," first where the program has several): -1 when too long. */
static int point_text(const tuner *tu, int k, const int *x, char *buf) {
    int w = tu->ns > 1 ? snprintf(buf, POINT_MAX, "sketch=%d", tu->sk[k].tiling) : 0;
    char rest[POINT_MAX];
    if (op_space_format(tu->sk[k].s, x, rest, sizeof rest) < 0) return -1;
    int n = snprintf(buf + w, (size_t)(POINT_MAX - w), "%s%s", w && *rest ? "," : "", rest);
    return n < POINT_MAX - w ? 0 : -1;
}

/* The model's guess of point x's (of sketch k) time from the points measured so far: the mean
 * of log time over its 3 nearest measured points, weighted by 1 / (distance + 0.05); within a
 * sketch each choice counts as its place in its domain scaled to [0, 1] (the distance the root
 * mean square of the differences), a point of another sketch is 1.5 away. A learned cost model
 * of the simplest kind: it knows nothing but what this run measured, and says which untried
 * point looks fastest. */
static double predict(const tuner *tu, int k, const int *x) {
    enum { K = 3 };
    double best_d[K], best_v[K];
    int m = 0;
    const op_space *s = tu->sk[k].s;
    for (int u = 0; u < tu->n; u++) {
        if (tu->us[u] <= 0) continue;
        double d = 1.5;
        if (tu->ps[u] == k) {
            d = 0;
            for (int i = 0; i < s->n; i++) {
                const int span = s->p[i].n > 1 ? s->p[i].n - 1 : 1;
                const double e = (double)(x[i] - tu->x[u][i]) / span;
                d += e * e;
            }
            d = sqrt(d / (s->n ? s->n : 1));
        }
        int at = m < K ? m++ : K; /* insertion into the k nearest */
        while (at > 0 && best_d[at - 1] > d) {
            if (at < K) best_d[at] = best_d[at - 1], best_v[at] = best_v[at - 1];
            at--;
        }
        if (at < K) best_d[at] = d, best_v[at] = log(tu->us[u]);
    }
    double w = 0, v = 0;
    for (int j = 0; j < m; j++) w += 1 / (best_d[j] + 0.05), v += best_v[j] / (best_d[j] + 0.05);
    return m ? exp(v / w) : 0;
}

/* Point x of sketch k appended as tu's next point (not yet measured); -1 when its text is too long. */
static int add_point(tuner *tu, int k, const int *x) {
    if (point_text(tu, k, x, tu->spec[tu->n]) < 0) return -1;
    memcpy(tu->x[tu->n], x, sizeof tu->x[0]);
    tu->ps[tu->n] = k, tu->us[tu->n] = 0;
    return tu->n++;
}

/* A random valid point not yet taken: a sketch drawn uniformly, then a point of its space
 * (op_space_draw). 1 with it in *k, x; 0 when none was found in 50 tries; -1 out of memory. */
static int draw(tuner *tu, rng *r, int *k, int *x) {
    for (int tries = 0; tries < 50; tries++) {
        *k = tu->ns > 1 ? (int)rng_below(r, (uint32_t)tu->ns) : 0;
        int d = op_space_draw(tu->sk[*k].g, tu->dev, &op_opts_default, tu->sk[*k].s, r, x);
        if (d < 0) return -1;
        char spec[POINT_MAX];
        if (!d && point_text(tu, *k, x, spec) == 0 && !taken(tu, spec)) return 1;
    }
    return 0;
}

/* Compiles points [from, to) ahead of their timing, in up to jobs worker processes at once:
 * each worker runs its share untimed (mg_run with reps < 0: compiled, run once and checked),
 * which leaves their code in the compile cache, so that the timed runs after find it there.
 * Points the dataset holds are skipped, and past the first AHEAD_MAX the rest compile as they
 * are timed. Returns how many were given to the workers. */
enum { AHEAD_MAX = 1024 };
static int compile_ahead(tuner *tu, int from, int to, int jobs) {
    int want[AHEAD_MAX], nw = 0;
    for (int t = from; t < to && nw < AHEAD_MAX; t++) {
        double us;
        int ok;
        if (!measured(tu->ds, tu->key, tu->backend, tu->spec[t], &us, &ok)) want[nw++] = t;
    }
    if (jobs < 2 || nw < 2 || !rt_cache_dir()) return 0;
    fflush(stdout), fflush(stderr);
    pid_t pid[64];
    int np = jobs < 64 ? jobs : 64;
    for (int w = 0; w < np; w++) {
        pid[w] = fork();
        if (pid[w] == 0) {
            for (int j = w; j < nw; j += np) {
                mg_run_opts ro = tu->o->run;
                ro.schedule = tu->spec[want[j]], ro.untuned = 1, ro.reps = -1;
                mg_run_report run;
                mg_ctx c = {{0}};
                mg_run(&c, tu->prog, tu->ugraph, &ro, &run);
            }
            _exit(0);
        }
    }
    for (int w = 0; w < np; w++)
        if (pid[w] > 0) waitpid(pid[w], NULL, 0);
    return nw;
}

/* Times point t (or takes it from the dataset), records it and reports it. */
static mg_status measure(tuner *tu, int t, int total, const char *how) {
    mg_ctx *ctx = tu->ctx;
    mg_tune_report *rep = tu->rep;
    const sketch *k = &tu->sk[tu->ps[t]];
    double us = 0;
    int ok = 0;
    mg_status rc = MG_OK;
    if (!measured(tu->ds, tu->key, tu->backend, tu->spec[t], &us, &ok)) {
        mg_run_opts ro = tu->o->run;
        ro.schedule = tu->spec[t], ro.untuned = 1;
        mg_run_report run;
        mg_ctx rctx = {{0}};
        mg_status st = mg_run(&rctx, tu->prog, tu->ugraph, &ro, &run);
        if (st == MG_ERR_NOMEM) return ctx_err(ctx, st, "out of memory");
        if (st == MG_ERR_NO_DEVICE) return ctx_err(ctx, st, "%s", rctx.msg);
        ok = !st && run.ok, us = st ? 0 : run.time_us;
        if (!st && run.backend == MG_BACKEND_GPU) snprintf(tu->gpu, sizeof tu->gpu, "%s", run.device);
        rep->measured++, rep->failed += !ok, rep->cached_runs += !st && run.cached;
        if (tu->ds) {
            strbuf line = {0};
            sb_printf(&line, "{\"key\": \"%s\", \"backend\": \"%s\", \"device\": \"%s\", \"point\": \"%s\", "
                      "\"rules\": %s, \"how\": \"%s\", \"time_us\": %.3f, \"ok\": %s, \"kernels\": ", tu->key, tu->backend,
                      st ? "" : run.device, tu->spec[t], t == 0 ? "true" : "false", how, us, ok ? "true" : "false");
            features(k->g, tu->dev, k->s, tu->x[t], &line);
            sb_puts(&line, "}\n");
            if (line.oom) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
            else if (fseek(tu->ds, 0, SEEK_END) || fputs(line.s, tu->ds) < 0 || fflush(tu->ds))
                rc = ctx_err(ctx, MG_ERR_IO, "%s: cannot append", tu->o->dataset);
            sb_free(&line);
        }
        char note[600];
        snprintf(note, sizeof note, "%s%s%.500s", how, st ? "; " : "", st ? rctx.msg : "");
        if (tu->o->progress) tu->o->progress(tu->o->progress_arg, t, total, tu->spec[t], us, ok, note);
    } else {
        rep->resumed++;
        if (tu->o->progress) tu->o->progress(tu->o->progress_arg, t, total, tu->spec[t], us, ok, "from the dataset");
    }
    tu->us[t] = ok ? us : 0;
    rep->points++;
    if (t == 0) rep->rules_us = ok ? us : 0;
    if (ok && us > 0 && (rep->best_us == 0 || us < rep->best_us)) {
        rep->best_us = us;
        snprintf(rep->best, sizeof rep->best, "%s", tu->spec[t]);
    }
    return rc;
}

/* Point spec (a point's text) stored as the tuned one: for a program of several distinct
 * lowerings, its sketch choice under the program's key for the default device (lowering plans
 * for it, dr_lower), and the rest under that sketch's lowering's key for device dev
 * (dr_generate); otherwise the latter alone. */
static void keep(const tuner *tu, uint64_t pkey, const char *dev, const char *spec, double us, const char *model) {
    const char *rest;
    int t = dr_sketch(spec, &rest), k = 0;
    while (k + 1 < tu->ns && tu->sk[k].tiling != t) k++;
    if (tu->ns > 1) dr_tuned_put(mg_device_default()->name, pkey, spec, us, model);
    dr_tuned_put(dev, tu->sk[k].key, rest, us, model);
}

mg_status mg_tune(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph, const mg_tune_opts *o,
                  mg_tune_report *rep) {
    if (!prog || !o || !rep) return ctx_err(ctx, MG_ERR_INVALID, "mg_tune: NULL argument");
    if (o->samples > 10000 || o->guided > 10000 || o->samples < 0 || o->guided < 0)
        return ctx_err(ctx, MG_ERR_INVALID, "tuning: 0 to 10,000 random and guided points a call, not %d and %d", o->samples, o->guided);
    memset(rep, 0, sizeof *rep);
    tuner tu = {.ctx = ctx, .prog = prog, .ugraph = ugraph, .o = o, .rep = rep, .dev = mg_device_default()};
    ir_graph *tok = NULL;
    /* what mg_run plans: ugraph, or prog (its token form) lowered in each of its sketches */
    mg_status rc = ugraph ? MG_OK : mg_token_program(prog, NULL, ctx, "tuning", &tok);
    const ir_graph *pg = ugraph ? ugraph->g : tok ? tok : prog->g;
    int has_kernels = 0;
    for (int i = 0; i < pg->n_nodes; i++) has_kernels |= pg->nodes[i].op == IR_OP_KERNEL;
    char *texts[LW_TILINGS] = {0};
    for (int t = 0; !rc && t < (has_kernels ? 1 : LW_TILINGS); t++) {
        sketch *k = &tu.sk[tu.ns];
        k->tiling = has_kernels ? -1 : t;
        k->g = pg;
        if (!has_kernels) {
            mg_ctx lc = {{0}};
            if (lw_lower(pg, &lc, tu.dev, 0, &lw_tilings[t], &k->owned, NULL) != MG_OK) {
                if (t == 0) rc = ctx_err(ctx, MG_ERR_INVALID, "tuning: %s", lc.msg);
                continue;
            }
            k->g = k->owned;
            strbuf sb = {0};
            ir_print_text(k->g, &sb);
            if (sb.oom) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
            texts[tu.ns] = sb_take(&sb);
            int dup = 0;
            for (int u = 0; !rc && u < tu.ns && !dup; u++) dup = !strcmp(texts[u], texts[tu.ns]);
            if (rc || dup) {
                base_free(texts[tu.ns]), texts[tu.ns] = NULL, ir_graph_free(k->owned), k->owned = NULL;
                continue; /* a tiling that lowers as an earlier one does */
            }
        }
        if (!rc && !(k->s = base_calloc(1, sizeof *k->s))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        if (!rc) rc = op_space_new(k->g, ctx, tu.dev, &op_opts_default, k->s);
        if (!rc && !(k->key = dr_graph_key(k->g))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        tu.ns += !rc;
        if (rc) base_free(k->s), k->s = NULL, ir_graph_free(k->owned), k->owned = NULL;
    }
    for (int t = 0; t < LW_TILINGS; t++) base_free(texts[t]);
    const uint64_t pkey = rc ? 0 : dr_graph_key(pg);
    if (!rc && !pkey) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    snprintf(tu.key, sizeof tu.key, "%016" PRIx64, pkey);
    tu.backend = o->run.backend == MG_BACKEND_C ? "c" : o->run.backend == MG_BACKEND_GPU ? "gpu" : "auto";
    const int n = o->samples > 0 ? o->samples : 20;
    const int jobs = o->jobs > 0 ? o->jobs : 1, total = n + o->guided + (tu.ns > 1 ? tu.ns - 1 : 0);
    tu.cap = total + 1;
    if (!rc && o->pin) { /* a point stored as the tuned one, not run */
        const mg_device *pd = mg_device_lookup(o->device, ctx);
        const char *rest;
        int t = pd ? dr_sketch(o->pin, &rest) : 0, k = 0;
        while (k + 1 < tu.ns && tu.sk[k].tiling != t) k++;
        rc = !pd ? MG_ERR_INVALID : MG_OK;
        if (!rc && (t < 0 || (t > 0 && tu.sk[k].tiling != t)))
            rc = ctx_err(ctx, MG_ERR_INVALID, "pin '%s': sketch= names none of this program's distinct lowerings (mugen space lists them)", o->pin);
        if (!rc && tu.sk[0].tiling < 0 && rest != o->pin)
            rc = ctx_err(ctx, MG_ERR_INVALID, "pin '%s': sketch= chooses how mugen lowers a program; this one is a μGraph already", o->pin);
        op_opts po = op_opts_default;
        op_force f[OP_SPACE_KERNELS];
        if (!rc && *rest) rc = dr_schedule_point(tu.sk[k].g, ctx, pd, rest, &po, f);
        if (!rc && strlen(o->pin) >= sizeof rep->best) rc = ctx_err(ctx, MG_ERR_INVALID, "pin: a point's text is at most %d bytes", (int)sizeof rep->best - 1);
        if (!rc) {
            keep(&tu, pkey, pd->name, o->pin, 0, "pinned");
            snprintf(rep->best, sizeof rep->best, "%s", o->pin);
        }
        tu.cap = 0;
    }
    if (!rc && tu.cap && o->dataset && !(tu.ds = fopen(o->dataset, "a+")))
        rc = ctx_err(ctx, MG_ERR_IO, "%s: cannot open the dataset for appending", o->dataset);
    tu.spec = rc || !tu.cap ? NULL : base_calloc((size_t)tu.cap, sizeof *tu.spec);
    tu.x = rc || !tu.cap ? NULL : base_calloc((size_t)tu.cap, sizeof *tu.x);
    tu.us = rc || !tu.cap ? NULL : base_calloc((size_t)tu.cap, sizeof *tu.us);
    tu.ps = rc || !tu.cap ? NULL : base_calloc((size_t)tu.cap, sizeof *tu.ps);
    if (!rc && tu.cap && (!tu.spec || !tu.x || !tu.us || !tu.ps)) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    rng r = {o->seed ? o->seed : 1};
    int x[OP_SPACE_MAX], k = 0;
    /* the rules' point of each sketch (sketch 0's is the rules' own: the default lowering), then
     * n random valid points, each once (fewer where the space runs out) */
    for (int q = 0; !rc && tu.cap && q < tu.ns; q++) {
        for (int i = 0; i < tu.sk[q].s->n; i++) x[i] = tu.sk[q].s->p[i].def;
        if (add_point(&tu, q, x) < 0) rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "tuning: a point's text is longer than %d bytes", POINT_MAX);
    }
    for (int t = 1; !rc && tu.cap && t <= n; t++) {
        int d = draw(&tu, &r, &k, x);
        if (d < 0) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        if (d <= 0) break; /* the space has no new valid point to offer */
        if (add_point(&tu, k, x) < 0) rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "tuning: a point's text is longer than %d bytes", POINT_MAX);
    }
    if (!rc && tu.cap) rep->compiled_ahead += compile_ahead(&tu, 0, tu.n, jobs);
    for (int t = 0; !rc && t < tu.n; t++) {
        char how[64];
        snprintf(how, sizeof how, "%s", !t ? "the rules'" : t < tu.ns ? "the rules' of its sketch" : "random");
        rc = measure(&tu, t, total, how);
    }
    /* guided: batches of jobs points, each the model's fastest guesses among 256 fresh valid
     * draws, the model refitted on everything measured before each batch */
    for (int left = tu.cap ? o->guided : 0; !rc && left > 0;) {
        const int from = tu.n, want = left < jobs ? left : jobs;
        enum { CAND = 256 };
        static _Thread_local int cx[CAND][OP_SPACE_MAX], ck[CAND];
        double cp[CAND];
        int nc = 0;
        for (int c = 0; !rc && c < 2 * CAND && nc < CAND; c++) {
            int d = draw(&tu, &r, &ck[nc], cx[nc]);
            if (d < 0) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
            if (d <= 0) break;
            int dup = 0;
            for (int u = 0; !dup && u < nc; u++) dup = ck[u] == ck[nc] && !memcmp(cx[u], cx[nc], sizeof cx[0]);
            if (!dup) cp[nc] = predict(&tu, ck[nc], cx[nc]), nc++;
        }
        for (int j = 0; !rc && j < want && nc > 0; j++) { /* the j-th fastest guess */
            int b = 0;
            for (int c = 1; c < nc; c++)
                if (cp[c] < cp[b]) b = c;
            if (add_point(&tu, ck[b], cx[b]) < 0) rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "tuning: a point's text is longer than %d bytes", POINT_MAX);
            nc--, cp[b] = cp[nc], ck[b] = ck[nc], memcpy(cx[b], cx[nc], sizeof cx[0]);
        }
        if (rc || tu.n == from) break; /* no untried valid point left */
        rep->compiled_ahead += compile_ahead(&tu, from, tu.n, jobs);
        for (int t = from; !rc && t < tu.n; t++) {
            char how[64];
            snprintf(how, sizeof how, "guided, predicted %.2f us", predict(&tu, tu.ps[t], tu.x[t]));
            rc = measure(&tu, t, total, how);
        }
        left -= tu.n - from;
    }
    if (!rc && tu.cap && rep->best_us == 0) rc = ctx_err(ctx, MG_ERR_INVALID, "tuning: no point ran correctly and timed");
    if (!rc && *tu.gpu) { /* the fastest point, for the device the points ran on (docs/tuning.md) */
        mg_device d;
        mg_device_detect(tu.gpu, 9, 0, 0, 0, 0, &d);
        keep(&tu, pkey, d.name, rep->best, rep->best_us, tu.gpu);
        snprintf(rep->cached, sizeof rep->cached, "%s", d.name);
    }
    rep->sketches = tu.ns;
    if (tu.ds) fclose(tu.ds);
    base_free(tu.spec), base_free(tu.x), base_free(tu.us), base_free(tu.ps);
    for (int t = 0; t < tu.ns; t++) base_free(tu.sk[t].s), ir_graph_free(tu.sk[t].owned);
    ir_graph_free(tok);
    return rc;
}
