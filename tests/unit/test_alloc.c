/* Failing the N-th host allocation anywhere in parse, print, JSON, partition and both
 * evaluators gives MG_ERR_NOMEM (or success), never a crash or a leak (ASan checks leaks);
 * so do a small search and the library API's compile and launch (C target). */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

void test_alloc_failures(void);
void test_alloc_search(void);
void test_alloc_compile(void);

static long g_countdown; /* allocations left before one fails; < 0: never fail */
static long g_failed;
static long g_calls; /* allocations asked for */

static void *failing_realloc(void *p, size_t size, void *user) {
    (void)user;
    if (size == 0) {
        free(p);
        return NULL;
    }
    g_calls++;
    if (g_countdown == 0) {
        g_failed++;
        return NULL;
    }
    if (g_countdown > 0) g_countdown--;
    return realloc(p, size);
}

static const char *SRC = "input Q : f32[2, 4, 3]\ninput K : f32[2, 3, 5]\n"
                         "S = matmul(Q, K) * 0.5\nM = max(S, dim=2)\nE = exp(S - M)\n"
                         "P = E / sum(E, dim=2)\nL = exp(matmul(Q, K)) / 3\noutput P, L\n";

/* Runs every stage once; returns 0 if all succeeded, 1 if one reported out of memory. */
static int run_all(void) {
    mg_ctx ctx = {{0}};
    mg_program *p = NULL;
    mg_status rc = mg_program_parse(&ctx, SRC, strlen(SRC), "t.mu", &p);
    int oom = 0;
    if (rc) {
        CHECK_MSG(rc == MG_ERR_NOMEM, "parse: %s", ctx.msg);
        return 1;
    }
    char *s = NULL;
    for (int f = 0; f < 4; f++) {
        rc = mg_program_format(&ctx, p, (mg_format)f, &s);
        if (rc == MG_OK && f == MG_FMT_JSON) { /* and read it back */
            mg_program *p2 = NULL;
            mg_status r2 = mg_program_parse(&ctx, s, strlen(s), "t.json", &p2);
            CHECK_MSG(r2 == MG_OK || r2 == MG_ERR_NOMEM, "%s", ctx.msg);
            oom |= r2 == MG_ERR_NOMEM;
            mg_program_free(p2);
        }
        mg_free(s), s = NULL;
        CHECK_MSG(rc == MG_OK || rc == MG_ERR_NOMEM, "format %d: %s", f, ctx.msg);
        oom |= rc == MG_ERR_NOMEM;
    }
    double q[24], k[30], o1[40], o2[40];
    for (int i = 0; i < 24; i++) q[i] = i * 0.1;
    for (int i = 0; i < 30; i++) k[i] = 1 - i * 0.05;
    const double *in[2] = {q, k};
    double *out[2] = {o1, o2};
    rc = mg_eval_float(&ctx, p, 0, in, out);
    CHECK_MSG(rc == MG_OK || rc == MG_ERR_NOMEM, "%s", ctx.msg);
    oom |= rc == MG_ERR_NOMEM;
    /* the field evaluator refuses this program (max): use its Lax output alone */
    mg_program *lp = NULL;
    const char *lsrc = "input Q : f32[2, 4, 3]\ninput K : f32[2, 3, 5]\nL = exp(matmul(Q, K)) / 3\noutput L\n";
    rc = mg_program_parse(&ctx, lsrc, strlen(lsrc), "l.mu", &lp);
    if (!rc) {
        uint32_t qp[24], qq[24], kp[30], kq[30], lo[40], lq[40];
        for (int i = 0; i < 24; i++) qp[i] = qq[i] = (uint32_t)i + 1;
        for (int i = 0; i < 30; i++) kp[i] = kq[i] = (uint32_t)i * 3 + 1;
        const uint32_t *ip[2] = {qp, kp}, *iq[2] = {qq, kq};
        uint32_t *op[1] = {lo}, *oq[1] = {lq};
        mg_field F;
        mg_field_draw(1, &F);
        rc = mg_eval_field(&ctx, lp, &F, ip, iq, op, oq);
        CHECK_MSG(rc == MG_OK || rc == MG_ERR_NOMEM, "%s", ctx.msg);
    }
    oom |= rc == MG_ERR_NOMEM;
    mg_program_free(lp);
    mg_program_free(p);
    /* a μGraph: parse, every format (JSON back in), both evaluators via the verifier */
    const char *usrc = "input X : f32[2, 8]\ninput W : f32[8, 6]\n"
                       "O = kernel(X, W, grid=[2], forloop=2) {\n    x = iter(X, fmap=1)\n"
                       "    w = iter(W, imap=[1], fmap=0)\n    m = accum(matmul(x, w))\n"
                       "    s = accum(sum(sqr(x), dim=1))\n    save(m / sqrt(s / 8), omap=[1])\n}\noutput O\n";
    const char *psrc = "input X : f32[2, 8]\ninput W : f32[8, 6]\n"
                       "O = matmul(X / sqrt(sum(sqr(X), dim=1) / 8), W)\noutput O\n";
    mg_program *u = NULL, *pp = NULL;
    rc = mg_program_parse(&ctx, usrc, strlen(usrc), "u.mu", &u);
    if (!rc) rc = mg_program_parse(&ctx, psrc, strlen(psrc), "p.mu", &pp);
    for (int f = 0; !rc && f < 3; f++) { /* text, JSON, dot (partition takes programs) */
        rc = mg_program_format(&ctx, u, (mg_format)f, &s);
        if (rc == MG_OK && f == MG_FMT_JSON) {
            mg_program *u2 = NULL;
            rc = mg_program_parse(&ctx, s, strlen(s), "u.json", &u2);
            mg_program_free(u2);
        }
        mg_free(s), s = NULL;
    }
    mg_verify_report rep;
    if (!rc) rc = mg_verify(&ctx, pp, u, 1, 3, &rep);
    CHECK_MSG(rc == MG_OK || rc == MG_ERR_NOMEM, "μGraph: %s", ctx.msg);
    CHECK(rc != MG_OK || rep.verdict == MG_EQUIVALENT);
    oom |= rc == MG_ERR_NOMEM;
    mg_program_free(u), mg_program_free(pp);
    return oom;
}

void test_alloc_failures(void) {
    mg_set_allocator(failing_realloc, NULL);
    long n;
    int finished = 0;
    for (n = 0; n < 5000 && !finished; n++) {
        g_countdown = n, g_failed = 0;
        int oom = run_all();
        CHECK_MSG(!oom || g_failed, "N = %ld: out of memory reported with no failed allocation", n);
        CHECK_MSG(oom || !g_failed, "N = %ld: a failed allocation went unreported", n);
        finished = !g_failed;
    }
    mg_set_allocator(NULL, NULL);
    CHECK_MSG(finished, "still failing after %ld allocations", n);
    printf("  (%ld allocation sites failed in turn)\n", n - 1);
}

/* A search small enough to run many times: one kernel of a matmul whose inner dim (32) the
 * screen shrinks, two grid sizes, two for-loops, one thread. Returns its status; *n_found. */
static mg_status run_search(int *n_found) {
    static const char *src = "input X : f32[4, 32]\ninput W : f32[32, 8]\nO = matmul(X, W)\noutput O\n";
    mg_ctx ctx = {{0}};
    mg_program *p = NULL;
    mg_status rc = mg_program_parse(&ctx, src, strlen(src), "s.mu", &p);
    *n_found = 0;
    if (rc) return rc;
    mg_search_opts o;
    mg_search_defaults(&o);
    o.max_kops = 1, o.max_bops = 5, o.max_kin = 2, o.max_kout = 1, o.max_grid_dims = 1;
    o.grid[0] = 1, o.grid[1] = 2, o.n_grid = 2;
    o.forloop[0] = 1, o.forloop[1] = 2, o.n_forloop = 2;
    o.threads = 1, o.verify_tests = 1, o.progress = 0;
    mg_search_result r;
    rc = mg_search(&ctx, p, &o, &r);
    CHECK_MSG(rc == MG_OK || rc == MG_ERR_NOMEM, "search: %s", ctx.msg);
    if (rc == MG_OK) {
        *n_found = r.n_found;
        for (int i = 0; i < r.n_found; i++) CHECK(r.found[i].text && r.found[i].text[0]);
        mg_search_result_free(&r);
    }
    mg_program_free(p);
    return rc;
}

void test_alloc_search(void) {
    /* the allocations of a whole search, and what it finds with none failing */
    mg_set_allocator(failing_realloc, NULL);
    g_countdown = -1, g_calls = 0;
    int full = 0;
    CHECK(run_search(&full) == MG_OK);
    long total = g_calls;
    CHECK_MSG(full > 0, "the search found nothing");
    /* every allocation of the setup (parse, checks, e-graph, verifier, workers: the first
     * 150, each search failing there returns at once), then 60 spread over the rest: a search
     * whose worker thread runs waits for it at least 50 ms (tasks.c: watch) */
    long stride = total > 150 ? (total - 150) / 60 + 1 : 1, runs = 0, nomem = 0;
    for (long n = 0; n <= total; n += n < 150 ? 1 : stride, runs++) {
        g_countdown = n, g_failed = 0;
        int found;
        mg_status rc = run_search(&found);
        nomem += rc == MG_ERR_NOMEM;
        CHECK_MSG(rc != MG_ERR_NOMEM || g_failed, "N = %ld: out of memory with no failed allocation", n);
        CHECK_MSG(g_failed || (rc == MG_OK && found == full), "N = %ld: %d found with no failed allocation", n, found);
    }
    mg_set_allocator(NULL, NULL);
    printf("  (a search of %ld allocations failed at %ld of them: %ld out of memory, the others "
           "succeeded with less)\n", total, runs, nomem);
}

/* mg_compile (C target; the object comes from the cache after the first run) and one
 * mg_launch of a small program. Returns its status; *ok = 1 when the launch's output is
 * right (exp of a row sum: checked element by element). */
static mg_status run_compile(int *ok) {
    static const char *src = "input X : f32[4, 32]\nO = exp(sum(X, dim=1) * 0.25)\noutput O\n";
    mg_ctx ctx = {{0}};
    mg_program *p = NULL;
    mg_compiled *c = NULL;
    mg_compiled_info info = {0};
    float x[128], o[4] __attribute__((aligned(16)));
    static float xa[128] __attribute__((aligned(16)));
    *ok = 0;
    for (int i = 0; i < 128; i++) x[i] = xa[i] = (float)((i * 37 % 11) - 5) * 0.125f;
    mg_compile_opts opts = {.target = MG_TARGET_C};
    mg_status rc = mg_program_parse(&ctx, src, strlen(src), "c.mu", &p);
    if (!rc) rc = mg_compile(&ctx, p, NULL, &opts, &c);
    if (!rc) rc = mg_compiled_get_info(c, &info);
    void *ws = NULL, *in[1] = {xa}, *out[1] = {o};
    if (!rc && info.workspace_bytes && posix_memalign(&ws, MG_LAUNCH_ALIGN, info.workspace_bytes))
        rc = MG_ERR_NOMEM;
    memset(o, 0xFF, sizeof o);
    if (!rc) rc = mg_launch(&ctx, c, 1, in, 1, out, ws, info.workspace_bytes, NULL);
    CHECK_MSG(rc == MG_OK || rc == MG_ERR_NOMEM, "compile and launch: %s", ctx.msg);
    if (!rc) {
        *ok = 1;
        for (int r = 0; r < 4; r++) {
            double sum = 0;
            for (int k = 0; k < 32; k++) sum += x[r * 32 + k];
            *ok &= fabs(o[r] - exp(sum * 0.25)) <= 1e-4 * exp(sum * 0.25);
        }
    }
    free(ws);
    mg_compiled_free(c);
    mg_program_free(p);
    return rc;
}

void test_alloc_compile(void) {
    char dir[4096], *old = getenv("MUGEN_CACHE_DIR") ? strdup(getenv("MUGEN_CACHE_DIR")) : NULL;
    snprintf(dir, sizeof dir, "%s/mugen-alloc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    setenv("MUGEN_CACHE_DIR", dir, 1);
    mg_set_allocator(failing_realloc, NULL);
    g_countdown = -1, g_calls = 0;
    int ok = 0;
    CHECK(run_compile(&ok) == MG_OK && ok); /* builds the cache entry */
    long total = g_calls, stride = total > 200 ? (total - 200) / 100 + 1 : 1;
    for (long n = 0; n <= total; n += n < 200 ? 1 : stride) {
        g_countdown = n, g_failed = 0;
        mg_status rc = run_compile(&ok);
        CHECK_MSG(rc != MG_ERR_NOMEM || g_failed, "N = %ld: out of memory with no failed allocation", n);
        CHECK_MSG(rc == MG_ERR_NOMEM || (rc == MG_OK && ok), "N = %ld: status %d, output %s", n, rc,
                  ok ? "right" : "wrong");
    }
    mg_set_allocator(NULL, NULL);
    printf("  (%ld allocations in a compile and launch)\n", total);
    if (old) setenv("MUGEN_CACHE_DIR", old, 1);
    else unsetenv("MUGEN_CACHE_DIR");
    free(old);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}
