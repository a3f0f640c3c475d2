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

/* A tuning run's state: the space, the dataset and the points taken so far. */
typedef struct tuner {
    mg_ctx *ctx;
    const mg_program *prog, *ugraph;
    const mg_tune_opts *o;
    mg_tune_report *rep;
    const ir_graph *g;
    const mg_device *dev;
    op_space *s;
    FILE *ds;
    char key[24];
    const char *backend;
    int n, cap;            /* points taken, room */
    char (*spec)[POINT_MAX]; /* each point's text, */
    int (*x)[OP_SPACE_MAX];  /* its choices (indices into the domains), */
    double *us;              /* its time (0: failed) */
    char gpu[256];           /* the GPU the points ran on, when they did */
} tuner;

/* Is s (a point's text) among tu's points? */
static int taken(const tuner *tu, const char *spec) {
    for (int u = 0; u < tu->n; u++)
        if (!strcmp(tu->spec[u], spec)) return 1;
    return 0;
}

/* The model's guess of point x's time from the points measured so far: the mean of log time
 * over its k nearest measured points (each choice as its place in its domain, scaled to [0,
 * 1]), weighted by 1 / (distance + 0.05). A learned cost model of the simplest kind: it knows
 * nothing but what this run measured, and says which untried point looks fastest. */
static double predict(const tuner *tu, const int *x) {
    enum { K = 3 };
    double best_d[K], best_v[K];
    int m = 0;
    for (int u = 0; u < tu->n; u++) {
        if (tu->us[u] <= 0) continue;
        double d = 0;
        for (int i = 0; i < tu->s->n; i++) {
            const int span = tu->s->p[i].n > 1 ? tu->s->p[i].n - 1 : 1;
            const double e = (double)(x[i] - tu->x[u][i]) / span;
            d += e * e;
        }
        d = sqrt(d);
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

/* Point x appended as tu's next point (not yet measured); -1 when its text is too long. */
static int add_point(tuner *tu, const int *x) {
    if (op_space_format(tu->s, x, tu->spec[tu->n], POINT_MAX) < 0) return -1;
    memcpy(tu->x[tu->n], x, sizeof tu->x[0]);
    tu->us[tu->n] = 0;
    return tu->n++;
}

/* Compiles points [from, to) ahead of their timing, in up to jobs worker processes at once:
 * each worker runs its share untimed (mg_run with reps < 0: compiled, run once and checked),
 * which leaves their code in the compile cache, so that the timed runs after find it there.
 * Points the dataset holds are skipped. Returns how many were given to the workers. */
static int compile_ahead(tuner *tu, int from, int to, int jobs) {
    int want[POINT_MAX], nw = 0;
    for (int t = from; t < to && nw < POINT_MAX; t++) {
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
            features(tu->g, tu->dev, tu->s, tu->x[t], &line);
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

mg_status mg_tune(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph, const mg_tune_opts *o,
                  mg_tune_report *rep) {
    if (!prog || !o || !rep) return ctx_err(ctx, MG_ERR_INVALID, "mg_tune: NULL argument");
    if (o->samples > 10000 || o->guided > 10000 || o->samples < 0 || o->guided < 0)
        return ctx_err(ctx, MG_ERR_INVALID, "tuning: 0 to 10,000 random and guided points a call, not %d and %d", o->samples, o->guided);
    memset(rep, 0, sizeof *rep);
    tuner tu = {.ctx = ctx, .prog = prog, .ugraph = ugraph, .o = o, .rep = rep, .dev = mg_device_default()};
    ir_graph *tok = NULL, *lowered = NULL;
    /* the graph mg_run plans: ugraph, or prog (its token form) lowered with the default tiling */
    mg_status rc = ugraph ? MG_OK : mg_token_program(prog, NULL, ctx, "tuning", &tok);
    if (!rc) rc = dr_lower(ugraph ? ugraph->g : tok ? tok : prog->g, ctx, NULL, CG_CUDA, &lowered, &tu.g);
    if (!rc && !(tu.s = base_calloc(1, sizeof *tu.s))) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc) rc = op_space_new(tu.g, ctx, tu.dev, &op_opts_default, tu.s);
    const uint64_t gkey = rc ? 0 : dr_graph_key(tu.g);
    if (!rc && !gkey) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    snprintf(tu.key, sizeof tu.key, "%016" PRIx64, gkey);
    if (!rc && o->pin) { /* a point stored as the tuned one, not run */
        const mg_device *pd = mg_device_lookup(o->device, ctx);
        rc = pd ? MG_OK : MG_ERR_INVALID;
        op_opts po = op_opts_default;
        op_force f[OP_SPACE_KERNELS];
        if (!rc) rc = dr_schedule_point(tu.g, ctx, pd, o->pin, &po, f);
        if (!rc && strlen(o->pin) >= sizeof rep->best) rc = ctx_err(ctx, MG_ERR_INVALID, "pin: a point's text is at most %d bytes", (int)sizeof rep->best - 1);
        if (!rc) {
            dr_tuned_put(pd->name, gkey, o->pin, 0, "pinned");
            snprintf(rep->best, sizeof rep->best, "%s", o->pin);
        }
        base_free(tu.s);
        ir_graph_free(lowered), ir_graph_free(tok);
        return rc;
    }
    if (!rc && o->dataset && !(tu.ds = fopen(o->dataset, "a+")))
        rc = ctx_err(ctx, MG_ERR_IO, "%s: cannot open the dataset for appending", o->dataset);
    tu.backend = o->run.backend == MG_BACKEND_C ? "c" : o->run.backend == MG_BACKEND_GPU ? "gpu" : "auto";
    const int n = o->samples > 0 ? o->samples : 20;
    const int jobs = o->jobs > 0 ? o->jobs : 1, total = n + o->guided;
    tu.cap = total + 1;
    tu.spec = rc ? NULL : base_calloc((size_t)tu.cap, sizeof *tu.spec);
    tu.x = rc ? NULL : base_calloc((size_t)tu.cap, sizeof *tu.x);
    tu.us = rc ? NULL : base_calloc((size_t)tu.cap, sizeof *tu.us);
    if (!rc && (!tu.spec || !tu.x || !tu.us)) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    rng r = {o->seed ? o->seed : 1};
    int x[OP_SPACE_MAX];
    /* the rules' point, then n random valid points, each once (fewer where the space runs out) */
    for (int i = 0; !rc && i < tu.s->n; i++) x[i] = tu.s->p[i].def;
    if (!rc && add_point(&tu, x) < 0) rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "tuning: a point's text is longer than %d bytes", POINT_MAX);
    for (int t = 1; !rc && t <= n; t++) {
        int fresh = 0;
        for (int tries = 0; !fresh && tries < 50; tries++) {
            int d = op_space_draw(tu.g, tu.dev, &op_opts_default, tu.s, &r, x);
            if (d) {
                if (d < 0) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
                break;
            }
            char spec[POINT_MAX];
            fresh = op_space_format(tu.s, x, spec, sizeof spec) >= 0 && !taken(&tu, spec);
        }
        if (rc || !fresh) break; /* the space has no new valid point to offer */
        if (add_point(&tu, x) < 0) rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "tuning: a point's text is longer than %d bytes", POINT_MAX);
    }
    if (!rc) rep->compiled_ahead += compile_ahead(&tu, 0, tu.n, jobs);
    for (int t = 0; !rc && t < tu.n; t++) rc = measure(&tu, t, total, t ? "random" : "the rules'");
    /* guided: batches of jobs points, each the model's fastest guesses among 256 fresh valid
     * draws, the model refitted on everything measured before each batch */
    for (int left = o->guided; !rc && left > 0;) {
        const int from = tu.n, want = left < jobs ? left : jobs;
        enum { CAND = 256 };
        static _Thread_local int cx[CAND][OP_SPACE_MAX];
        double cp[CAND];
        int nc = 0;
        for (int c = 0; !rc && c < 4 * CAND && nc < CAND; c++) {
            int d = op_space_draw(tu.g, tu.dev, &op_opts_default, tu.s, &r, cx[nc]);
            if (d) {
                if (d < 0) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
                break;
            }
            char spec[POINT_MAX];
            int dup = op_space_format(tu.s, cx[nc], spec, sizeof spec) < 0 || taken(&tu, spec);
            for (int u = 0; !dup && u < nc; u++) dup = !memcmp(cx[u], cx[nc], sizeof cx[0]);
            if (!dup) cp[nc] = predict(&tu, cx[nc]), nc++;
        }
        for (int k = 0; !rc && k < want && nc > 0; k++) { /* the k-th fastest guess */
            int b = 0;
            for (int c = 1; c < nc; c++)
                if (cp[c] < cp[b]) b = c;
            if (add_point(&tu, cx[b]) < 0) rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "tuning: a point's text is longer than %d bytes", POINT_MAX);
            cp[b] = cp[--nc], memcpy(cx[b], cx[nc], sizeof cx[0]);
        }
        if (rc || tu.n == from) break; /* no untried valid point left */
        rep->compiled_ahead += compile_ahead(&tu, from, tu.n, jobs);
        for (int t = from; !rc && t < tu.n; t++) {
            char how[64];
            snprintf(how, sizeof how, "guided, predicted %.2f us", predict(&tu, tu.x[t]));
            rc = measure(&tu, t, total, how);
        }
        left -= tu.n - from;
    }
    if (!rc && rep->best_us == 0) rc = ctx_err(ctx, MG_ERR_INVALID, "tuning: no point ran correctly and timed");
    if (!rc && *tu.gpu) { /* the fastest point, for the device the points ran on (docs/tuning.md) */
        mg_device d;
        mg_device_detect(tu.gpu, 9, 0, 0, 0, 0, &d);
        dr_tuned_put(d.name, gkey, rep->best, rep->best_us, tu.gpu);
        snprintf(rep->cached, sizeof rep->cached, "%s", d.name);
    }
    if (tu.ds) fclose(tu.ds);
    base_free(tu.spec), base_free(tu.x), base_free(tu.us), base_free(tu.s);
    ir_graph_free(lowered), ir_graph_free(tok);
    return rc;
}
