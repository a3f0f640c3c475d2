/* The canonical form up to renaming (src/ir/canon.c) and the search cache
 * (src/search/scache.c). Every test here points MUGEN_SEARCH_CACHE at a fresh temporary
 * folder (never the user's cache) and removes it at the end. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ir/canon.h"
#include "search/search_int.h"
#include "unit.h"

void test_canon_renaming(void);
void test_canon_mutations(void);
void test_canon_random(void);
void test_scache_roundtrip(void);
void test_scache_renamed_piece(void);
void test_scache_damage(void);
void test_scache_key_misses(void);
void test_scache_partial(void);
void test_scache_evict(void);
void test_scache_concurrent(void);
void test_scache_alloc(void);

/* ---- canonical form ---- */

/* g's canonical text (a new string; the test run aborts if there is none: a test bug). */
static char *canon_of(const char *src, ir_canon *keep) {
    ir_graph *g = unit_parse(src);
    ir_canon c;
    mg_ctx ctx;
    if (ir_canon_new(g, &ctx, &c)) {
        fprintf(stderr, "ir_canon_new: %s\n", ctx.msg);
        abort();
    }
    char *t = strdup(c.text);
    if (keep) { /* the interface's real names point into g: copy them */
        *keep = c;
        for (int k = 0; k < c.n; k++) keep->real[k] = arena_strdup(&keep->mem, c.real[k]);
    } else {
        ir_canon_free(&c);
    }
    ir_graph_free(g);
    return t;
}

static const char *BASE =
    "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\n"
    "S = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\n"
    "P = exp(M)\noutput O, P\n";

void test_canon_renaming(void) {
    ir_canon cb;
    char *base = canon_of(BASE, &cb);
    /* other names (one of them a fresh name the printer uses), other statement order, other
     * input declaration order: the same canonical form */
    static const char *same[] = {
        "input t0 : f16[2, 8]\ninput w : f16[8, 4]\ninput bias : f16[2, 4]\n"
        "s = sum(sqr(t0), dim=1)\nn = t0 / sqrt(s / 8 + 0.000001)\nm = matmul(n, w)\nout1 = m * bias - 2.5\n"
        "out2 = exp(m)\noutput out1, out2\n",
        "input B : f16[2, 4]\ninput W : f16[8, 4]\ninput X : f16[2, 8]\n"
        "Q = sqr(X)\nS = sum(Q, dim=1)\nD = S / 8\nE = D + 0.000001\nR = sqrt(E)\nN = X / R\nM = matmul(N, W)\n"
        "P = exp(M)\nC = M * B\nO = C - 2.5\noutput O, P\n",
        /* the constant spelled otherwise: the same value */
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\n"
        "S = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8.0 + 1e-6)\nM = matmul(N, W)\nP = exp(M)\nO = M * B - 2.50\n"
        "output O, P\n",
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        char *t = canon_of(same[i], NULL);
        CHECK_MSG(!strcmp(t, base), "variant %zu:\n%s\nvs\n%s", i, t, base);
        free(t);
    }
    /* the interface: inputs by first use (X, W, B), then the outputs in declared order */
    static const char *real[] = {"X", "W", "B", "O", "P"}, *canon[] = {"x0", "x1", "x2", "y0", "y1"};
    CHECK_MSG(cb.n == 5, "%d names", cb.n);
    for (int k = 0; k < cb.n && k < 5; k++)
        CHECK_MSG(!strcmp(cb.real[k], real[k]) && !strcmp(cb.canon[k], canon[k]), "%d: %s -> %s", k,
                  cb.real[k], cb.canon[k]);
    ir_canon_free(&cb);
    free(base);
}

void test_canon_mutations(void) {
    char *base = canon_of(BASE, NULL);
    /* each a one-place change of BASE: shape, dtype, constant, operator, edge, attribute,
     * output order, an extra output, an unused input */
    static const char *mut[] = {
        "input X : f16[2, 8]\ninput W : f16[8, 5]\ninput B : f16[2, 5]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput O, P\n",
        "input X : bf16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f32[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000002)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.25\nP = exp(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B + 2.5\nP = exp(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = silu(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = B * M - 2.5\nP = exp(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(O)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput P, O\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput O, P, N\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\ninput U : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(X * X, dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput O, P\n",
        "input X : f16[2, 8]\ninput W : f16[8, 4]\ninput B : f16[2, 4]\nS = sum(sqr(X), dim=1)\nN = X / sqrt(S / 8 + 0.000001)\nM = matmul(N, W)\nO = M * B - 2.5\nP = exp(M)\noutput O, P\n"
        "", /* (the base itself, last: must equal) */
    };
    int n = (int)(sizeof mut / sizeof *mut);
    char *t[16];
    for (int i = 0; i < n; i++) t[i] = canon_of(mut[i], NULL);
    for (int i = 0; i < n - 1; i++) {
        CHECK_MSG(strcmp(t[i], base) != 0, "mutation %d has the base's canonical form", i);
        for (int j = 0; j < i; j++) CHECK_MSG(strcmp(t[i], t[j]) != 0, "mutations %d and %d agree", j, i);
    }
    CHECK(!strcmp(t[n - 1], base));
    /* a sum over another dim, a different group */
    char *a = canon_of("input X : f16[8, 8]\nO = sum(X, dim=0)\noutput O\n", NULL);
    char *b = canon_of("input X : f16[8, 8]\nO = sum(X, dim=1)\noutput O\n", NULL);
    CHECK(strcmp(a, b) != 0);
    for (int i = 0; i < n; i++) free(t[i]);
    free(a), free(b), free(base);
}

/* A random program of elementwise operators over three inputs (seed), written with random
 * names in a random topological order (rename_seed; shuffle 0: as drawn). */
static void random_program(uint64_t seed, uint64_t rename_seed, int shuffle, char *out, size_t n) {
    rng r = {seed};
    rng q = {rename_seed};
    int ops[24][3], n_ops = 6 + (int)rng_below(&r, 10);
    static const char *fn[] = {"exp", "sqr", "silu", "+", "*", "-", "/"};
    for (int i = 0; i < n_ops; i++) {
        ops[i][0] = (int)rng_below(&r, 7);
        ops[i][1] = (int)rng_below(&r, (uint32_t)(3 + i)), ops[i][2] = (int)rng_below(&r, (uint32_t)(3 + i));
        if (i < 3) ops[i][1] = i; /* every input used */
    }
    int read[24] = {0}; /* the outputs: every statement no other reads, in drawing order */
    for (int i = 0; i < n_ops; i++)
        for (int k = 1; k <= (ops[i][0] < 3 ? 1 : 2); k++)
            if (ops[i][k] >= 3) read[ops[i][k] - 3] = 1;
    int perm[27], done[27] = {0}, used = 0;
    for (int i = 0; i < 3 + n_ops; i++) perm[i] = i;
    for (int i = 3 + n_ops - 1; shuffle && i > 0; i--) { /* names: a shuffled numbering */
        int j = (int)rng_below(&q, (uint32_t)i + 1), tmp = perm[i];
        perm[i] = perm[j], perm[j] = tmp;
    }
    size_t len = 0;
    for (int k = 0; k < 3; k++) /* inputs, in a shuffled declaration order */
        len += (size_t)snprintf(out + len, n - len, "input v%d : f16[4, 8]\n", perm[shuffle ? (k + (int)(rename_seed % 3)) % 3 : k]);
    for (int k = 0; k < 3; k++) done[k] = 1;
    while (used < n_ops) { /* a random ready statement next */
        int pick = -1, seen = 0;
        for (int i = 0; i < n_ops; i++) {
            if (done[3 + i] || !done[ops[i][1]] || !done[ops[i][2]]) continue;
            if (!shuffle) { pick = i; break; }
            if (rng_below(&q, (uint32_t)++seen) == 0) pick = i;
        }
        int *o = ops[pick];
        if (o[0] < 3) len += (size_t)snprintf(out + len, n - len, "v%d = %s(v%d)\n", perm[3 + pick], fn[o[0]], perm[o[1]]);
        else len += (size_t)snprintf(out + len, n - len, "v%d = v%d %s v%d\n", perm[3 + pick], perm[o[1]], fn[o[0]], perm[o[2]]);
        done[3 + pick] = 1, used++;
    }
    for (int i = 0, first = 1; i < n_ops; i++)
        if (!read[i]) len += (size_t)snprintf(out + len, n - len, "%s v%d", first ? "output" : ",", perm[3 + i]), first = 0;
    snprintf(out + len, n - len, "\n");
}

void test_canon_random(void) {
    /* 50 random programs, each written 5 ways (names and statement order): one form each */
    int distinct = 0;
    char prev[8192] = "";
    for (uint64_t s = 1; s <= 50; s++) {
        char src[4096];
        random_program(s, 0, 0, src, sizeof src);
        char *base = canon_of(src, NULL);
        for (uint64_t v = 1; v <= 5; v++) {
            random_program(s, v * 7919, 1, src, sizeof src);
            char *t = canon_of(src, NULL);
            CHECK_MSG(!strcmp(t, base), "program %llu, writing %llu:\n%s", (unsigned long long)s,
                      (unsigned long long)v, src);
            free(t);
        }
        distinct += strcmp(prev, base) != 0;
        snprintf(prev, sizeof prev, "%s", base);
        free(base);
    }
    CHECK(distinct > 40);
}

/* ---- the cache ---- */

static char cache_dir[64];

/* Points MUGEN_SEARCH_CACHE at a fresh temporary folder (never the user's cache). */
static void cache_begin(void) {
    snprintf(cache_dir, sizeof cache_dir, "/tmp/mugen-scache-XXXXXX");
    if (!mkdtemp(cache_dir)) abort();
    setenv("MUGEN_SEARCH_CACHE", cache_dir, 1);
    unsetenv("MUGEN_SEARCH_CACHE_MB");
}

/* Removes the folder and turns the cache off for the tests after. */
static void cache_end(void) {
    DIR *d = opendir(cache_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[256];
        if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, ".."))) continue;
        snprintf(p, sizeof p, "%s/%.180s", cache_dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(cache_dir);
    setenv("MUGEN_SEARCH_CACHE", "off", 1);
    unsetenv("MUGEN_SEARCH_CACHE_MB");
}

/* The folder's files whose names contain `part` (".entry", ".tmp-"); the first one's path
 * into path (if not NULL). */
static int count_files(const char *part, char *path, size_t n) {
    DIR *d = opendir(cache_dir);
    int k = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strstr(e->d_name, part)) continue;
        if (!k++ && path) snprintf(path, n, "%s/%.180s", cache_dir, e->d_name);
    }
    if (d) closedir(d);
    return k;
}

static const char *MM = "input X : f16[4, 8]\ninput W : f16[8, 4]\nO = matmul(X, W)\noutput O\n";

static void small_opts(sr_opts *o) {
    sr_opts_default(o);
    o->max_kops = 1, o->max_bops = 6, o->threads = 1, o->verify_tests = 2;
    o->grid[0] = 1, o->grid[1] = 2, o->n_grid = 2;
    o->forloop[0] = 1, o->forloop[1] = 2, o->n_forloop = 2;
}

static sr_result search_of(const char *src, const sr_opts *o) {
    ir_graph *g = unit_parse(src);
    sr_result r;
    mg_ctx ctx;
    CHECK_MSG(sr_search(g, o, &ctx, &r) == MG_OK, "%s", ctx.msg);
    ir_graph_free(g);
    return r;
}

static mg_status store(const char *src, const sr_opts *o, const sr_result *r) {
    ir_graph *g = unit_parse(src);
    mg_ctx ctx;
    mg_status rc = sr_cache_store(g, o, r, &ctx);
    CHECK_MSG(rc == MG_OK, "%s", ctx.msg);
    ir_graph_free(g);
    return rc;
}

/* Looks src up; 1 on a hit (*r filled), 0 on a miss. */
static int lookup(const char *src, const sr_opts *o, sr_result *r) {
    ir_graph *g = unit_parse(src);
    mg_ctx ctx;
    int hit = 0;
    CHECK_MSG(sr_cache_lookup(g, o, &ctx, r, &hit) == MG_OK, "%s", ctx.msg);
    ir_graph_free(g);
    return hit;
}

/* Do a and b hold the same μGraphs, in the same order, with the same facts? */
static int same_result(const sr_result *a, const sr_result *b) {
    int same = a->n_found == b->n_found && a->states == b->states && a->tasks == b->tasks &&
               !strcmp(a->expr ? a->expr : "", b->expr ? b->expr : "") && !strcmp(a->why_none, b->why_none);
    for (int i = 0; same && i < a->n_found; i++) {
        const sr_found *x = &a->found[i], *y = &b->found[i];
        same = !strcmp(x->text, y->text) && !strcmp(x->verdict, y->verdict) && x->cost_us == y->cost_us &&
               x->float_error == y->float_error && x->kops == y->kops && x->bops == y->bops;
    }
    return same;
}

void test_scache_roundtrip(void) {
    cache_begin();
    sr_opts o;
    small_opts(&o);
    sr_result r = search_of(MM, &o), c;
    CHECK(r.n_found > 1 && !r.cached);
    CHECK(!lookup(MM, &o, &c)); /* empty folder: a miss */
    store(MM, &o, &r);
    CHECK(count_files(".entry", NULL, 0) == 1 && count_files(".tmp-", NULL, 0) == 0);
    CHECK(lookup(MM, &o, &c));
    CHECK_MSG(same_result(&r, &c), "the cached result differs");
    CHECK(c.cached && strlen(c.cache_key) == 16);
    sr_result_free(&c);
    /* the time limit and threads do not change what is found: still a hit */
    o.time_limit = 99, o.threads = 3, o.progress = 1;
    CHECK(lookup(MM, &o, &c) && same_result(&r, &c));
    sr_result_free(&c);
    /* an entry from the cache is not stored again (it would count as a search) */
    char path[256];
    count_files(".entry", path, sizeof path);
    struct stat st0, st1;
    stat(path, &st0);
    CHECK(lookup(MM, &o, &c) && store(MM, &o, &c) == MG_OK);
    stat(path, &st1);
    CHECK(st0.st_ino == st1.st_ino);
    sr_result_free(&c);
    sr_result_free(&r);
    cache_end();
}

/* text past its input declarations */
static const char *past_inputs(const char *t) {
    while (!strncmp(t, "input ", 6) && strchr(t, '\n')) t = strchr(t, '\n') + 1;
    return t;
}

void test_scache_renamed_piece(void) {
    /* layer 0's result serves layer 7: other names (one a name the printer uses for
     * intermediates), inputs declared in the same order (L7: then a search of layer 7 finds
     * the very same μGraphs) or in another (L7X: the same μGraphs, its inputs declared in its
     * order; its own search would order a kernel's operands otherwise) */
    static const char *L7 = "input t0 : f16[4, 8]\ninput B : f16[8, 4]\nt1 = matmul(t0, B)\noutput t1\n";
    static const char *L7X = "input B : f16[8, 4]\ninput t0 : f16[4, 8]\nt1 = matmul(t0, B)\noutput t1\n";
    cache_begin();
    sr_opts o;
    small_opts(&o);
    sr_result r = search_of(MM, &o), fresh = search_of(L7, &o);
    store(MM, &o, &r);
    static const char *from[] = {"X", "W", "O"}, *to[] = {"t0", "B", "t1"};
    for (int v = 0; v < 2; v++) {
        sr_result c;
        CHECK(lookup(v ? L7X : L7, &o, &c) && c.n_found == r.n_found && c.n_found == fresh.n_found);
        ir_graph *p = unit_parse(v ? L7X : L7);
        for (int i = 0; i < c.n_found && i < r.n_found; i++) {
            char *want = NULL;
            mg_ctx ctx;
            CHECK(ir_rename_text(r.found[i].text, from, to, 3, &ctx, &want) == MG_OK);
            CHECK_MSG(want && !strcmp(past_inputs(want), past_inputs(c.found[i].text)), "rank %d:\n%s\nvs\n%s",
                      i + 1, c.found[i].text, want);
            CHECK_MSG(v || !strcmp(fresh.found[i].text, c.found[i].text), "rank %d:\n%s\nlayer 7's own:\n%s",
                      i + 1, c.found[i].text, fresh.found[i].text);
            CHECK_MSG(!strncmp(c.found[i].text, v ? "input B " : "input t0 ", v ? 8 : 9), "%s", c.found[i].text);
            ir_graph *u = unit_parse(c.found[i].text);
            mg_verify_report rep;
            CHECK(vf_verify(p, u, &ctx, 3, 7, &rep) == MG_OK && rep.verdict == MG_EQUIVALENT);
            ir_graph_free(u);
            base_free(want);
        }
        CHECK(c.expr && strstr(c.expr, "t0") && !strstr(c.expr, "x0"));
        ir_graph_free(p);
        sr_result_free(&c);
    }
    sr_result_free(&r), sr_result_free(&fresh);
    cache_end();
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    char *buf = malloc(1 << 20);
    *n = f && buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    if (f) fclose(f);
    if (buf) buf[*n] = 0;
    return buf;
}

static void spit(const char *path, const char *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f) fwrite(buf, 1, n, f), fclose(f);
}

/* Rewrites entry text buf (n bytes, sealed) with its seal recomputed over the changed body:
 * the changes the seal alone does not catch. */
static void reseal(const char *path, char *buf, size_t n) {
    size_t i = n - 1;
    while (i > 0 && buf[i - 1] != '\n') i--;
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < i; k++) h = (h ^ (uint8_t)buf[k]) * 1099511628211ull;
    char tail[64];
    int t = snprintf(tail, sizeof tail, "end %zu %llx\n", i, (unsigned long long)h);
    memcpy(buf + i, tail, (size_t)t);
    spit(path, buf, i + (size_t)t);
}

void test_scache_damage(void) {
    cache_begin();
    sr_opts o;
    small_opts(&o);
    sr_result r = search_of(MM, &o), c;
    store(MM, &o, &r);
    char path[256];
    count_files(".entry", path, sizeof path);
    size_t n;
    char *good = slurp(path, &n), *bad = malloc(n + 1);
    const char *what[] = {"truncated", "a byte flipped", "the seal's hash changed", "empty",
                          "another key (version), resealed", "a μGraph that does not parse, resealed",
                          "a count missing, resealed"};
    for (int k = 0; k < 7; k++) {
        memcpy(bad, good, n + 1);
        size_t len = n;
        char *at;
        if (k == 0) len = n / 2;
        if (k == 1) bad[n / 3] ^= 0x20;
        if (k == 2) bad[n - 3] = bad[n - 3] == '0' ? '1' : '0';
        if (k == 3) len = 0;
        if (k == 4 && (at = strstr(bad, ", search "))) at[9] = '0'; /* another search version */
        if (k == 5 && (at = strstr(strstr(bad, "\nugraph "), "matmul"))) at[5] = 'x';
        if (k == 6 && (at = strstr(bad, "\nresult "))) at[8] = 'x';
        if (k >= 4) reseal(path, bad, len);
        else spit(path, bad, len);
        CHECK_MSG(!lookup(MM, &o, &c), "%s: trusted", what[k]);
        CHECK_MSG(count_files(".entry", NULL, 0) == 0, "%s: not removed", what[k]);
        /* searched again through the public entry point: stored anew, then a hit */
        mg_ctx *ctx = mg_ctx_new();
        mg_program *p = NULL;
        mg_search_result m;
        CHECK(mg_program_parse(ctx, MM, strlen(MM), "mm", &p) == MG_OK);
        CHECK(mg_search_cached(ctx, p, &o, 0, &m) == MG_OK && !m.cached && same_result(&m, &r));
        mg_search_result_free(&m);
        CHECK(mg_search_cached(ctx, p, &o, 0, &m) == MG_OK && m.cached && same_result(&m, &r));
        mg_search_result_free(&m);
        CHECK(mg_search_cached(ctx, p, &o, MG_CACHE_REFRESH, &m) == MG_OK && !m.cached);
        mg_search_result_free(&m);
        mg_program_free(p);
        mg_ctx_free(ctx);
        CHECK_MSG(lookup(MM, &o, &c) && same_result(&c, &r), "%s: the entry stored again differs", what[k]);
        sr_result_free(&c);
    }
    free(good), free(bad);
    sr_result_free(&r);
    cache_end();
}

void test_scache_key_misses(void) {
    cache_begin();
    sr_opts o, v;
    small_opts(&o);
    sr_result r = search_of(MM, &o), c;
    store(MM, &o, &r);
    char path[256];
    count_files(".entry", path, sizeof path);
    size_t n;
    char *e = slurp(path, &n), ver[64];
    snprintf(ver, sizeof ver, "mugen %s, search %d\n", MG_VERSION, SEARCH_VERSION);
    CHECK_MSG(strstr(e, ver) != NULL, "the key names no versions:\n%.300s", e);
    free(e);
    mg_ctx ctx;
    for (int k = 0; k < 11; k++) { /* each option that changes what a search finds */
        v = o;
        if (k == 0) v.max_kops = 2;
        if (k == 1) v.max_bops = 7;
        if (k == 2) v.seed = 2;
        if (k == 3) v.verify_tests = 3;
        if (k == 4) v.grid[1] = 4;
        if (k == 5) v.n_forloop = 1;
        if (k == 6) v.slack = 0;
        if (k == 7) v.ops = "matmul,exp";
        if (k == 8) CHECK(mg_search_set_device(&ctx, &v, "H200") == MG_OK);
        if (k == 9) v.n_sm = 100;
        if (k == 10) v.prune = 0;
        CHECK_MSG(!lookup(MM, &v, &c), "option %d changed but the entry was found", k);
    }
    CHECK(count_files(".entry", NULL, 0) == 1); /* a miss removes nothing */
    /* another program: a different shape */
    CHECK(!lookup("input X : f16[4, 16]\ninput W : f16[16, 4]\nO = matmul(X, W)\noutput O\n", &o, &c));
    /* the cache off: nothing read, nothing written */
    setenv("MUGEN_SEARCH_CACHE", "off", 1);
    CHECK(!lookup(MM, &o, &c));
    setenv("MUGEN_SEARCH_CACHE", cache_dir, 1);
    CHECK(lookup(MM, &o, &c));
    sr_result_free(&c);
    sr_result_free(&r);
    cache_end();
}

void test_scache_partial(void) {
    /* a search stopped early, or with a task unfinished, is never stored */
    cache_begin();
    sr_opts o;
    small_opts(&o);
    sr_result r = search_of(MM, &o), c;
    r.stopped = 1;
    store(MM, &o, &r);
    CHECK(count_files(".entry", NULL, 0) == 0 && !lookup(MM, &o, &c));
    r.stopped = 0, r.tasks_done = r.tasks - 1;
    store(MM, &o, &r);
    CHECK(count_files(".entry", NULL, 0) == 0 && !lookup(MM, &o, &c));
    r.tasks_done = r.tasks;
    store(MM, &o, &r);
    CHECK(count_files(".entry", NULL, 0) == 1 && lookup(MM, &o, &c));
    sr_result_free(&c);
    sr_result_free(&r);
    cache_end();
}

/* Stores r under seed `seed` (a different key each) and returns the new entry's path. */
static void store_seed(const sr_result *r, uint64_t seed, char *path, size_t n) {
    sr_opts o;
    small_opts(&o);
    o.seed = seed;
    char before[64][64];
    int nb = 0;
    DIR *d = opendir(cache_dir);
    for (struct dirent *e; d && (e = readdir(d)) && nb < 64;) snprintf(before[nb++], 64, "%.60s", e->d_name);
    if (d) closedir(d);
    store(MM, &o, r);
    d = opendir(cache_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        int old = 0;
        for (int i = 0; i < nb; i++) old |= !strcmp(before[i], e->d_name);
        if (!old) snprintf(path, n, "%s/%.180s", cache_dir, e->d_name);
    }
    if (d) closedir(d);
}

static void set_age(const char *path, int seconds_ago) {
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= seconds_ago, t[1] = t[0];
    utimensat(AT_FDCWD, path, t, 0);
}

void test_scache_evict(void) {
    cache_begin();
    sr_opts o;
    small_opts(&o);
    sr_result r = search_of(MM, &o), c;
    char a[256] = "", b[256] = "", cc[256] = "";
    store_seed(&r, 11, a, sizeof a), store_seed(&r, 12, b, sizeof b), store_seed(&r, 13, cc, sizeof cc);
    CHECK(count_files(".entry", NULL, 0) == 3);
    set_age(a, 300), set_age(b, 200), set_age(cc, 100); /* a the oldest, then b, then c */
    o.seed = 11;
    CHECK(lookup(MM, &o, &c)); /* using a makes it the most recent */
    sr_result_free(&c);
    struct stat sa, sc;
    stat(a, &sa), stat(cc, &sc);
    char mb[64]; /* room for a and c only */
    snprintf(mb, sizeof mb, "%.9f", (double)(sa.st_size + sc.st_size + 16) / (1024.0 * 1024.0));
    setenv("MUGEN_SEARCH_CACHE_MB", mb, 1);
    store_seed(&r, 13, cc, sizeof cc); /* c written again: over the limit, b goes */
    CHECK_MSG(access(b, F_OK) != 0, "the least recently used entry stayed");
    CHECK_MSG(access(a, F_OK) == 0 && access(cc, F_OK) == 0, "a recently used entry went");
    /* a limit below one entry keeps only the entry just written */
    setenv("MUGEN_SEARCH_CACHE_MB", "0.000001", 1);
    store_seed(&r, 14, b, sizeof b);
    CHECK(count_files(".entry", NULL, 0) == 1 && access(b, F_OK) == 0);
    sr_result_free(&r);
    cache_end();
}

void test_scache_concurrent(void) {
    /* four processes store and look up the same key at once: every lookup is a hit with the
     * same μGraphs (never a torn entry), and one whole entry is left */
    cache_begin();
    sr_opts o;
    small_opts(&o);
    sr_result r = search_of(MM, &o);
    store(MM, &o, &r);
    pid_t kid[4];
    for (int k = 0; k < 4; k++) {
        if ((kid[k] = fork()) != 0) continue;
        int bad = 0;
        for (int i = 0; i < 40 && !bad; i++) {
            ir_graph *g = unit_parse(MM);
            mg_ctx ctx;
            sr_result c;
            int hit = 0;
            bad = sr_cache_store(g, &o, &r, &ctx) != MG_OK;
            bad |= sr_cache_lookup(g, &o, &ctx, &c, &hit) != MG_OK || !hit || !same_result(&r, &c);
            if (hit) sr_result_free(&c);
            ir_graph_free(g);
        }
        _exit(bad);
    }
    int all_ok = 1;
    for (int k = 0; k < 4; k++) {
        int st = 0;
        all_ok &= kid[k] > 0 && waitpid(kid[k], &st, 0) == kid[k] && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    CHECK_MSG(all_ok, "a process saw a miss or a different result");
    sr_result c;
    CHECK(count_files(".entry", NULL, 0) == 1 && count_files(".tmp-", NULL, 0) == 0);
    CHECK(lookup(MM, &o, &c) && same_result(&r, &c));
    sr_result_free(&c);
    sr_result_free(&r);
    cache_end();
}

static long fail_countdown; /* allocations left before one fails; < 0: never */
static long fail_calls;

static void *failing_realloc(void *p, size_t size, void *user) {
    (void)user;
    if (size == 0) {
        free(p);
        return NULL;
    }
    fail_calls++;
    if (fail_countdown == 0) return NULL;
    if (fail_countdown > 0) fail_countdown--;
    return realloc(p, size);
}

/* A store then a lookup with allocation number `fail` failing (-1: none). 1 on a hit. */
static int store_lookup(const sr_result *r, const sr_opts *o, const ir_graph *g, long fail) {
    mg_ctx ctx;
    sr_result c;
    int hit = 0;
    fail_countdown = fail;
    mg_status s1 = sr_cache_store(g, o, r, &ctx);
    CHECK_MSG(s1 == MG_OK || s1 == MG_ERR_NOMEM, "store: %s", ctx.msg);
    mg_status s2 = sr_cache_lookup(g, o, &ctx, &c, &hit);
    CHECK_MSG(s2 == MG_OK || s2 == MG_ERR_NOMEM, "lookup: %s", ctx.msg);
    CHECK(!hit || s2 == MG_OK);
    fail_countdown = -1;
    if (hit) {
        CHECK(same_result(r, &c));
        sr_result_free(&c);
    }
    return hit;
}

void test_scache_alloc(void) {
    /* failing each allocation of a store and a lookup in turn: out of memory or a miss,
     * never a crash, a leak (ASan) or a wrong hit */
    cache_begin();
    sr_opts o;
    small_opts(&o);
    sr_result r = search_of(MM, &o);
    ir_graph *g = unit_parse(MM);
    mg_set_allocator(failing_realloc, NULL);
    fail_countdown = -1, fail_calls = 0;
    CHECK(store_lookup(&r, &o, g, -1));
    long total = fail_calls;
    int lost = 0; /* out of memory is never taken for damage: the entry stays */
    for (long n = 0; n < total; n++) store_lookup(&r, &o, g, n), lost += count_files(".entry", NULL, 0) != 1;
    CHECK_MSG(lost == 0, "the entry was removed %d times", lost);
    mg_set_allocator(NULL, NULL);
    CHECK_MSG(total > 20, "%ld allocations", total);
    CHECK(store_lookup(&r, &o, g, -1)); /* and whole again after */
    ir_graph_free(g);
    sr_result_free(&r);
    cache_end();
}
