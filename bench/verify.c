/* bench/verify: wall time to verify each hand-written μGraph in examples/ugraphs against its
 * program at the benchmark shapes, on one core (the search will call the verifier for every
 * candidate). Prints one line per example: tests run, seconds, seconds per test, verdict.
 * Usage: bench-verify [NAME ...]   (default: every .mu file in examples/ugraphs) */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verify/verify.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ir_graph *load(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    mg_ctx ctx = {{0}};
    ir_graph *g = NULL;
    if (ir_parse_text(&ctx, text, n, path, &g)) fprintf(stderr, "%s\n", ctx.msg);
    return g;
}

static int bench_one(const char *name) {
    char pp[512], up[512];
    snprintf(pp, sizeof pp, "examples/%s.mu", name);
    snprintf(up, sizeof up, "examples/ugraphs/%s.mu", name);
    ir_graph *p = load(pp), *u = load(up);
    if (!p || !u) {
        fprintf(stderr, "bench-verify: cannot load %s or %s\n", pp, up);
        ir_graph_free(p), ir_graph_free(u);
        return 1;
    }
    mg_ctx ctx = {{0}};
    mg_verify_report r;
    double t0 = now();
    mg_status rc = vf_verify(p, u, &ctx, 0, 1, &r);
    double t = now() - t0;
    if (rc) fprintf(stderr, "%s: %s\n", name, ctx.msg);
    else
        printf("%-20s %3d tests %8.2f s %7.2f s/test  bound 2^%-6.1f %s\n", name, r.tests, t,
               t / (r.tests ? r.tests : 1), r.log2_bound,
               r.verdict == MG_EQUIVALENT ? "equivalent" : "NOT EQUIVALENT");
    ir_graph_free(p), ir_graph_free(u);
    return rc != MG_OK || r.verdict != MG_EQUIVALENT;
}

int main(int argc, char **argv) {
    int bad = 0;
    printf("bench/verify: mg_verify(program, μGraph), one core; seconds include the float test\n");
    if (argc > 1) {
        for (int i = 1; i < argc; i++) bad |= bench_one(argv[i]);
        return bad;
    }
    glob_t gl;
    if (glob("examples/ugraphs/*.mu", 0, NULL, &gl)) return 1;
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        char name[256];
        const char *b = strrchr(gl.gl_pathv[i], '/') + 1;
        snprintf(name, sizeof name, "%.*s", (int)(strlen(b) - 3), b);
        bad |= bench_one(name);
    }
    globfree(&gl);
    return bad;
}
