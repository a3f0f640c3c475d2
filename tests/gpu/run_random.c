/* run_random: random programs of many small kernels as one launch (issue #27 item 4). Each
 * program is a random DAG of 8 to 16 statements over small 2-D tensors: products with new
 * weight inputs, row sums and maxima, unary operators, and sums, differences and products of
 * two earlier values (broadcast along rows or columns) or of a constant, so that its lowering
 * has several dependent kernels. On a GPU each runs as separate kernels and as one launch
 * with each schedule (mg_run_opts.persist: 2 static, 3 scheduler and queues, 1 tickets), every
 * output checked against the program's reference on fresh random inputs; a form must run as
 * one launch where the separate kernels were several. Without a GPU (CI) each runs on the C
 * backend and each one-launch form is generated and compiled by NVRTC (mg_emit).
 * Usage: run-random [N [SEED]] (default 24 programs, seed 2027). Ends with "N passed, N failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mugen.h"

static uint64_t rs;
static unsigned below(unsigned n) { /* xorshift64*, then the top bits */
    rs ^= rs >> 12, rs ^= rs << 25, rs ^= rs >> 27;
    return (unsigned)(((rs * 2685821657736338717ull) >> 33) % n);
}

typedef struct val {
    int rows, cols;
} val;

/* Writes a random program into out (cap bytes); returns its length, or 0 when it did not fit. */
static size_t random_program(char *out, size_t cap) {
    static const int R[] = {1, 2, 4, 8, 16}, C[] = {16, 32, 64, 128};
    static const char *un[] = {"silu(%s)", "relu(%s)", "exp(%s * 0.25)", "sqr(%s) * 0.5"};
    static const char *bin[] = {"+", "-", "*"};
    val v[17];
    char ins[2048], body[4096];
    size_t ni = 0, nb = 0;
    int n_w = 0, steps = 8 + (int)below(9);
    v[0].rows = R[below(5)], v[0].cols = C[below(4)];
    ni += (size_t)snprintf(ins + ni, sizeof ins - ni, "input X : f16[%d, %d]\n", v[0].rows, v[0].cols);
    for (int n = 1; n <= steps; n++) {
        int a = (int)below((unsigned)n), kind = (int)below(10);
        char an[8], on[8];
        snprintf(an, sizeof an, a ? "V%d" : "X", a);
        snprintf(on, sizeof on, "V%d", n);
        v[n] = v[a];
        if (kind < 3 && v[a].cols > 1) { /* a product with a new weight */
            int c = C[below(4)];
            ni += (size_t)snprintf(ins + ni, sizeof ins - ni, "input W%d : f16[%d, %d]\n", n_w, v[a].cols, c);
            nb += (size_t)snprintf(body + nb, sizeof body - nb, "%s = matmul(%s, W%d) * 0.125\n", on, an, n_w++);
            v[n].cols = c;
        } else if (kind < 5 && v[a].cols > 1) { /* a row sum or maximum, keeping the dim */
            int s = (int)below(2);
            nb += (size_t)snprintf(body + nb, sizeof body - nb, "%s = %s(%s, dim=1)%s\n", on, s ? "sum" : "max", an,
                                   s ? " * 0.05" : "");
            v[n].cols = 1;
        } else if (kind < 7) { /* unary */
            char e[64];
            snprintf(e, sizeof e, un[below(4)], an);
            nb += (size_t)snprintf(body + nb, sizeof body - nb, "%s = %s\n", on, e);
        } else { /* two earlier values of shapes that broadcast, else a constant */
            int b = -1;
            for (int k = 0, s = (int)below((unsigned)n); k < n && b < 0; k++) {
                int c = (s + k) % n;
                if (c != a && v[c].rows == v[a].rows && (v[c].cols == v[a].cols || v[c].cols == 1)) b = c;
            }
            const char *op = bin[below(3)];
            if (b < 0) nb += (size_t)snprintf(body + nb, sizeof body - nb, "%s = %s %s 0.5\n", on, an, op);
            else {
                char bn[8];
                snprintf(bn, sizeof bn, b ? "V%d" : "X", b);
                nb += (size_t)snprintf(body + nb, sizeof body - nb, "%s = %s %s %s\n", on, an, op, bn);
            }
        }
        if (ni >= sizeof ins || nb >= sizeof body) return 0;
    }
    int other = 1 + (int)below((unsigned)steps - 1); /* a second output inside the graph */
    int len = snprintf(out, cap, "%s%soutput V%d, V%d\n", ins, body, steps, other);
    return len > 0 && (size_t)len < cap ? (size_t)len : 0;
}

static int n_pass, n_fail;

static void result(int ok, int i, const char *form, const char *what, const char *prog) {
    printf("%s random program %d, %s: %.300s\n", ok ? "ok  " : "FAIL", i, form, what);
    if (!ok) printf("%s", prog);
    ok ? n_pass++ : n_fail++;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 24;
    rs = argc > 2 ? strtoull(argv[2], NULL, 10) : 2027;
    if (n < 1 || n > 10000 || argc > 3 || !rs) {
        fprintf(stderr, "usage: run-random [N [SEED]] (N 1 to 10000, SEED not 0)\n");
        return 2;
    }
    static const int forms[3] = {2, 3, 1};
    static const char *name[4] = {"separate kernels", "one launch, tickets", "one launch, static",
                                  "one launch, scheduler and queues"};
    for (int i = 0; i < n; i++) {
        char src[8192];
        if (!random_program(src, sizeof src)) {
            result(0, i, "generation", "did not fit", "");
            continue;
        }
        mg_ctx *ctx = mg_ctx_new();
        mg_program *p = NULL;
        if (mg_program_parse(ctx, src, strlen(src), "random", &p)) {
            result(0, i, "parse", mg_ctx_error(ctx), src);
            mg_ctx_free(ctx);
            continue;
        }
        mg_run_opts o = {.seed = (uint64_t)i + 1, .reps = -1};
        mg_run_report r;
        mg_status rc = mg_run(ctx, p, NULL, &o, &r);
        int gpu = rc == MG_OK && r.backend == MG_BACKEND_GPU, several = rc == MG_OK && r.n_launches >= 2;
        char what[512];
        snprintf(what, sizeof what, "%.300s", rc ? mg_ctx_error(ctx) : r.ok ? "correct" : r.text);
        result(rc == MG_OK && r.ok, i, name[0], what, src);
        for (int f = 0; f < 3 && rc == MG_OK; f++) {
            mg_run_opts of = o;
            of.persist = forms[f];
            if (gpu) { /* run it: correct, and one launch where there were several */
                mg_run_report rf;
                mg_status s = mg_run(ctx, p, NULL, &of, &rf);
                int ok = s == MG_OK && rf.ok && (!several || rf.n_launches == 1);
                snprintf(what, sizeof what, "%.300s (%d launch%s)", s ? mg_ctx_error(ctx) : rf.ok ? "correct" : rf.text,
                         s ? 0 : rf.n_launches, s || rf.n_launches != 1 ? "es" : "");
                result(ok, i, name[forms[f]], what, src);
            } else { /* generate and compile it (NVRTC, no GPU needed) */
                char *cu = NULL;
                mg_status s = mg_emit(ctx, p, MG_TARGET_CUDA, &of, 1, &cu);
                if (s == MG_ERR_NO_DEVICE || s == MG_ERR_UNSUPPORTED) { /* no NVRTC here: nothing to check */
                    mg_free(cu);
                    break;
                }
                int one = cu && strstr(cu, "mg_task_done(g_sync_, ") != NULL;
                snprintf(what, sizeof what, "%.300s", s ? mg_ctx_error(ctx) : one ? "compiles as one launch" : "compiles, not one launch");
                result(s == MG_OK, i, name[forms[f]], what, src);
                mg_free(cu);
            }
        }
        mg_program_free(p);
        mg_ctx_free(ctx);
    }
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail != 0;
}
