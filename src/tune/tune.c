/* tune: the tuner (docs/tuning.md, issue #29 item 2). Runs the rules' point of a program's
 * schedule space and random valid points (opt/space.c) through mg_run, each compiled, timed
 * and checked, appends every measurement to a dataset file (JSON lines, the format in
 * docs/tuning.md) and skips the points the dataset already holds for the same program and
 * backend, so an interrupted run resumes; on the GPU the fastest point goes into the tuning
 * cache (driver.c, dr_tuned_put), where later plans of the same graph for that device find it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../api_internal.h"
#include "../driver.h"
#include "../opt/opt.h"

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

mg_status mg_tune(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph, const mg_tune_opts *o,
                  mg_tune_report *rep) {
    if (!prog || !o || !rep) return ctx_err(ctx, MG_ERR_INVALID, "mg_tune: NULL argument");
    if (o->samples > 10000) return ctx_err(ctx, MG_ERR_INVALID, "tuning: at most 10,000 points a call, not %d", o->samples);
    memset(rep, 0, sizeof *rep);
    const mg_device *dev = mg_device_default();
    ir_graph *tok = NULL, *lowered = NULL;
    /* the graph mg_run plans: ugraph, or prog (its token form) lowered with the default tiling */
    mg_status rc = ugraph ? MG_OK : mg_token_program(prog, NULL, ctx, "tuning", &tok);
    const ir_graph *g = NULL;
    if (!rc) rc = dr_lower(ugraph ? ugraph->g : tok ? tok : prog->g, ctx, NULL, CG_CUDA, &lowered, &g);
    op_space *s = rc ? NULL : base_calloc(1, sizeof *s);
    if (!rc && !s) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!rc) rc = op_space_new(g, ctx, dev, &op_opts_default, s);
    const uint64_t gkey = rc ? 0 : dr_graph_key(g);
    if (!rc && !gkey) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    char key[24];
    snprintf(key, sizeof key, "%016" PRIx64, gkey);
    if (!rc && o->pin) { /* a point stored as the tuned one, not run */
        const mg_device *pd = mg_device_lookup(o->device, ctx);
        rc = pd ? MG_OK : MG_ERR_INVALID;
        op_opts po = op_opts_default;
        op_force f[OP_SPACE_KERNELS];
        if (!rc) rc = dr_schedule_point(g, ctx, pd, o->pin, &po, f);
        if (!rc && strlen(o->pin) >= sizeof rep->best) rc = ctx_err(ctx, MG_ERR_INVALID, "pin: a point's text is at most %d bytes", (int)sizeof rep->best - 1);
        if (!rc) {
            dr_tuned_put(pd->name, gkey, o->pin, 0, "pinned");
            snprintf(rep->best, sizeof rep->best, "%s", o->pin);
        }
        base_free(s);
        ir_graph_free(lowered), ir_graph_free(tok);
        return rc;
    }
    FILE *ds = NULL;
    if (!rc && o->dataset && !(ds = fopen(o->dataset, "a+")))
        rc = ctx_err(ctx, MG_ERR_IO, "%s: cannot open the dataset for appending", o->dataset);
    const char *backend = o->run.backend == MG_BACKEND_C ? "c" : o->run.backend == MG_BACKEND_GPU ? "gpu" : "auto";
    rng r = {o->seed ? o->seed : 1};
    int x[OP_SPACE_MAX], n = o->samples > 0 ? o->samples : 20;
    char (*done)[POINT_MAX] = rc ? NULL : base_calloc((size_t)n + 1, POINT_MAX);
    if (!rc && !done) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    rep->best_us = rep->rules_us = 0;
    char gpu_name[256] = ""; /* the GPU the points ran on, when they did */
    for (int t = 0; !rc && t <= n; t++) {
        /* point 0: the rules'; then random valid points, each once */
        if (t == 0)
            for (int i = 0; i < s->n; i++) x[i] = s->p[i].def;
        else {
            int dup = 1;
            for (int tries = 0; dup && tries < 50; tries++) {
                int d = op_space_draw(g, dev, &op_opts_default, s, &r, x);
                if (d) {
                    if (d < 0) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
                    break;
                }
                char spec[POINT_MAX];
                op_space_format(s, x, spec, sizeof spec);
                dup = 0;
                for (int u = 0; u < t && !dup; u++) dup = !strcmp(done[u], spec);
            }
            if (rc || dup) break; /* the space has no new valid point to offer */
        }
        if (op_space_format(s, x, done[t], POINT_MAX) < 0) {
            rc = ctx_err(ctx, MG_ERR_UNSUPPORTED, "tuning: a point's text is longer than %d bytes", POINT_MAX);
            break;
        }
        double us = 0;
        int ok = 0, again = measured(ds, key, backend, done[t], &us, &ok);
        if (!again) {
            mg_run_opts ro = o->run;
            ro.schedule = done[t], ro.untuned = 1;
            mg_run_report run;
            mg_ctx rctx = {{0}};
            mg_status st = mg_run(&rctx, prog, ugraph, &ro, &run);
            if (st == MG_ERR_NOMEM) rc = ctx_err(ctx, st, "out of memory");
            if (st == MG_ERR_NO_DEVICE) rc = ctx_err(ctx, st, "%s", rctx.msg);
            if (rc) break;
            ok = !st && run.ok, us = st ? 0 : run.time_us;
            if (!st && run.backend == MG_BACKEND_GPU) snprintf(gpu_name, sizeof gpu_name, "%s", run.device);
            rep->measured++, rep->failed += !ok;
            if (ds) {
                strbuf line = {0};
                sb_printf(&line, "{\"key\": \"%s\", \"backend\": \"%s\", \"device\": \"%s\", \"point\": \"%s\", "
                          "\"rules\": %s, \"time_us\": %.3f, \"ok\": %s, \"kernels\": ", key, backend,
                          st ? "" : run.device, done[t], t == 0 ? "true" : "false", us, ok ? "true" : "false");
                features(g, dev, s, x, &line);
                sb_puts(&line, "}\n");
                if (line.oom) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
                else if (fseek(ds, 0, SEEK_END) || fputs(line.s, ds) < 0 || fflush(ds))
                    rc = ctx_err(ctx, MG_ERR_IO, "%s: cannot append", o->dataset);
                sb_free(&line);
            }
            if (o->progress) o->progress(o->progress_arg, t, n, done[t], us, ok, st ? rctx.msg : NULL);
        } else {
            rep->resumed++;
            if (o->progress) o->progress(o->progress_arg, t, n, done[t], us, ok, "from the dataset");
        }
        rep->points++;
        if (t == 0) rep->rules_us = ok ? us : 0;
        if (ok && us > 0 && (rep->best_us == 0 || us < rep->best_us)) {
            rep->best_us = us;
            snprintf(rep->best, sizeof rep->best, "%s", done[t]);
        }
    }
    if (!rc && rep->best_us == 0) rc = ctx_err(ctx, MG_ERR_INVALID, "tuning: no point ran correctly and timed");
    if (!rc && *gpu_name) { /* the fastest point, for the device the points ran on (docs/tuning.md) */
        mg_device d;
        mg_device_detect(gpu_name, 9, 0, 0, 0, 0, &d);
        dr_tuned_put(d.name, gkey, rep->best, rep->best_us, gpu_name);
        snprintf(rep->cached, sizeof rep->cached, "%s", d.name);
    }
    if (ds) fclose(ds);
    base_free(done), base_free(s);
    ir_graph_free(lowered), ir_graph_free(tok);
    return rc;
}
