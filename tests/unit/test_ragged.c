/* Ragged programs (issue #28, docs/ragged.md): the forms, the shape rules, the lengths checks,
 * and the float reference on packed tensors against an independent oracle: the same layer
 * written as a padded program with an attention mask, evaluated on the padded inputs, its
 * rows inside each sequence compared with the ragged program's packed rows. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "mugen.h"

void test_ragged_forms(void);
void test_ragged_rules(void);
void test_ragged_lengths(void);
void test_ragged_eval_vs_padded(void);
void test_ragged_verify(void);
void test_ragged_layout(void);
void test_ragged_field(void);
void test_ragged_token_form(void);
void test_ragged_attention(void);
void test_ragged_random(void);

enum { B = 5, M = 9, H = 16, NH = 2, HD = 8 };

/* an encoder-style layer: projection, heads, softmax attention over each sequence's own keys,
 * back to rows, RMSNorm of the input plus the attention */
static const char *RAGGED =
    "lengths len[5] max=9\n"
    "input x : f32[5, len, 16]\n"
    "input w : f32[1, 16, 16]\n"
    "input g : f32[16]\n"
    "h = matmul(x, w)\n"
    "q = transpose(reshape(h, shape=[5, len, 2, 8]), perm=[0, 2, 1, 3])\n"
    "s = matmul(q, transpose(q, perm=[0, 1, 3, 2])) * 0.25\n"
    "e = exp(s - max(s, dim=-1))\n"
    "o = matmul(e / sum(e, dim=-1), q)\n"
    "y = rmsnorm(x, dim=-1) * g + reshape(transpose(o, perm=[0, 2, 1, 3]), shape=[5, len, 16])\n"
    "output y\n";

/* the same on padded rows: mask[b, 0, 0, j] is 0 for a real key, -30000 for padding (its
 * exp is 0 in f32), so each row's softmax sees its sequence's keys only */
static const char *PADDED =
    "input x : f32[5, 9, 16]\n"
    "input w : f32[1, 16, 16]\n"
    "input g : f32[16]\n"
    "input mask : f32[5, 1, 1, 9]\n"
    "h = matmul(x, w)\n"
    "q = transpose(reshape(h, shape=[5, 9, 2, 8]), perm=[0, 2, 1, 3])\n"
    "s = matmul(q, transpose(q, perm=[0, 1, 3, 2])) * 0.25 + mask\n"
    "e = exp(s - max(s, dim=-1))\n"
    "o = matmul(e / sum(e, dim=-1), q)\n"
    "y = rmsnorm(x, dim=-1) * g + reshape(transpose(o, perm=[0, 2, 1, 3]), shape=[5, 9, 16])\n"
    "output y\n";

void test_ragged_forms(void) {
    ir_graph *g = unit_parse(RAGGED);
    CHECK(g->n_lens == 1 && g->lens[0].count == B && g->lens[0].max == M);
    CHECK(g->nodes[0].shape.rag[0] == 1 && g->nodes[0].shape.rag[1] == 1 && !g->nodes[0].shape.rag[2]);
    strbuf sb = {0};
    ir_print_text(g, &sb);
    CHECK(strstr(sb.s, "lengths len[5] max=9\ninput x : f32[5, len, 16]") != NULL);
    ir_graph *t = unit_parse(sb.s);
    CHECK(ir_graph_equal(g, t));
    sb_free(&sb);
    mg_ctx ctx = {{0}};
    strbuf js = {0};
    CHECK(ir_print_json(g, &ctx, &js) == MG_OK);
    CHECK(strstr(js.s, "\"lengths\"") && strstr(js.s, "[5, \"len\", 16]"));
    ir_graph *j = NULL;
    CHECK(ir_parse_json(&ctx, js.s, js.len, "r.json", &j) == MG_OK);
    CHECK(j && ir_graph_equal(g, j));
    CHECK(ir_check(g, &ctx) == MG_OK);
    strbuf dot = {0};
    ir_print_dot(g, &dot);
    CHECK(strstr(dot.s, "f32[5, len, 16]") != NULL);
    sb_free(&js), sb_free(&dot);
    ir_graph_free(g), ir_graph_free(t), ir_graph_free(j);
}

void test_ragged_rules(void) {
    static const struct {
        const char *stmt, *needle;
    } bad[] = {
        {"y = sum(x, dim=0)", "reduces over the batch"},
        {"y = sum(x, dim=1, group=3)", "reduced whole"},
        {"y = concat(x, x, dim=1)", "concatenates along the batch or a ragged dim"},
        {"y = transpose(x, perm=[1, 0, 2])", "moves the batch"},
        {"y = x + z", "meets a static dim"},
        {"y = slice(x, dim=1, start=0, len=2)", "slices dim 1"},
        {"y = repeat(x, times=[1, 2, 1])", "repeats dim 1"},
        {"y = reshape(x, shape=[4, 144])", "keeps the batch and the ragged dims in place"},
        {"y = matmul(transpose(x, perm=[0, 2, 1]), z)", "contracted dims"},
        {"y = x + u", "ragged by two lengths"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char src[512];
        snprintf(src, sizeof src,
                 "lengths len[4] max=9\nlengths kl[4] max=9\ninput x : f16[4, len, 16]\ninput z : f16[4, 9, 16]\n"
                 "input u : f16[4, kl, 16]\n%s\noutput y\n", bad[i].stmt);
        unit_parse_fails(src, MG_ERR_SHAPE, bad[i].needle);
    }
    /* what stays inside the rules */
    ir_graph *g = unit_parse("lengths len[4] max=9\ninput x : f16[4, len, 16]\ninput b : f16[16]\n"
                             "y = sum(relu(x + b), dim=1)\nv = sum(x, dim=2, group=8)\n"
                             "z = max(x, dim=1)\noutput y, v, z\n");
    CHECK(g->nodes[g->outputs[0]].shape.rag[0] == 1 && !g->nodes[g->outputs[0]].shape.rag[1]);
    CHECK(g->nodes[g->outputs[1]].shape.rag[1] == 1 && g->nodes[g->outputs[1]].shape.d[2] == 2);
    ir_graph_free(g);
    unit_parse_fails("lengths len[4] max=9\ninput x : f16[8, len]\noutput x\n", MG_ERR_SHAPE, "batch as dim 0");
    unit_parse_fails("lengths len[4] max=9\ninput x : f16[4, lem]\noutput x\n", MG_ERR_PARSE, "is not declared (lengths lem[COUNT] max=MAX, or dim lem");
    unit_parse_fails("lengths len[4] max=9\nlengths k2[5] max=9\ninput x : f16[4, len]\noutput x\n", MG_ERR_SHAPE, "share one batch");
    unit_parse_fails("lengths len[4] max=9\ninput len : f16[4]\noutput len\n", MG_ERR_PARSE, "duplicate name");
}

void test_ragged_lengths(void) {
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL;
    CHECK(mg_program_parse(ctx, RAGGED, strlen(RAGGED), "r.mu", &p) == MG_OK);
    const int64_t ok[B] = {3, 0, 9, 1, 4}, neg[B] = {3, -1, 9, 1, 4}, big[B] = {3, 0, 10, 1, 4};
    CHECK(mg_program_bind_lengths(ctx, p, "len", ok, 4) == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), "4 given"));
    CHECK(mg_program_bind_lengths(ctx, p, "len", neg, B) == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), "entry 1 is -1"));
    CHECK(mg_program_bind_lengths(ctx, p, "len", big, B) == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), "entry 2 is 10"));
    CHECK(mg_program_bind_lengths(ctx, p, "nope", ok, B) == MG_ERR_INVALID);
    mg_tensor_desc d;
    CHECK(mg_program_input(p, 0, &d) == MG_OK && d.numel == 0); /* unbound */
    double *in[3] = {0}, *out[1] = {0};
    CHECK(mg_eval_float(ctx, p, 0, (const double *const *)in, out) == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), "not bound"));
    CHECK(mg_program_bind_lengths(ctx, p, "len", ok, B) == MG_OK);
    CHECK(mg_program_input(p, 0, &d) == MG_OK && d.numel == 17 * H && d.dims[1] == M);
    /* it runs and lowers in token form (attention as seqattn: test_ragged_attention) */
    mg_run_report rr;
    mg_run_opts ro = {.backend = MG_BACKEND_C, .reps = 1};
    CHECK(mg_run(ctx, p, NULL, &ro, &rr) == MG_OK && rr.ok);
    mg_program *low = NULL; /* lowered in token form: its input 0 the lengths */
    CHECK(mg_program_lower(ctx, p, &low) == MG_OK && low && mg_program_input(low, 0, &d) == MG_OK && d.dtype == MG_F32 &&
          d.ndim == 1 && d.dims[0] == B);
    mg_program_free(low);
    mg_program_free(p);
    mg_ctx_free(ctx);
}

/* Random inputs, lengths with 0, 1 and the maximum among them; the ragged program on packed
 * rows against the padded program (its padding poisoned with large values that the mask
 * must hide) on every row inside a sequence; the packed output is poisoned first. */
void test_ragged_eval_vs_padded(void) {
    mg_ctx *ctx = mg_ctx_new();
    mg_program *rp = NULL;
    CHECK(mg_program_parse(ctx, RAGGED, strlen(RAGGED), "r.mu", &rp) == MG_OK);
    ir_graph *pg = unit_parse(PADDED);
    rng r = {0x7261676765640001ull};
    for (int trial = 0; trial < 6; trial++) {
        int64_t len[B], tok = 0;
        for (int b = 0; b < B; b++) len[b] = (int64_t)rng_below(&r, M + 1);
        len[trial % B] = trial < 2 ? 0 : trial < 4 ? 1 : M;
        len[(trial + 2) % B] = M;
        for (int b = 0; b < B; b++) tok += len[b];
        CHECK(mg_program_bind_lengths(ctx, rp, "len", len, B) == MG_OK);
        double *xp = malloc(sizeof(double) * (size_t)(tok * H + 1)), *xd = malloc(sizeof(double) * B * M * H);
        double w[H * H], g[H], mask[B * M], *yp = malloc(sizeof(double) * (size_t)(tok * H + 1)), *yd = malloc(sizeof(double) * B * M * H);
        for (int i = 0; i < H * H; i++) w[i] = (double)(float)(rng_uniform(&r) * 0.5 - 0.25);
        for (int i = 0; i < H; i++) g[i] = (double)(float)(rng_uniform(&r) + 0.5);
        for (int64_t t = 0, o = 0; t < B; t++)
            for (int i = 0; i < M; i++) {
                mask[t * M + i] = i < len[t] ? 0 : -30000;
                for (int c = 0; c < H; c++) {
                    double v = (double)(float)(rng_uniform(&r) * 2 - 1);
                    xd[(t * M + i) * H + c] = i < len[t] ? v : 1e3 * (c + 1); /* padding: must not leak */
                    if (i < len[t]) xp[o++] = v;
                }
            }
        for (int64_t t = 0; t < tok * H; t++) yp[t] = NAN;
        const double *rin[3] = {xp, w, g}, *pin[4] = {xd, w, g, mask};
        CHECK(mg_eval_float(ctx, rp, 0, rin, &yp) == MG_OK);
        CHECK(unit_feval(pg, 0, pin, &yd) == MG_OK);
        double worst = 0;
        for (int64_t t = 0, o = 0; t < B; t++)
            for (int i = 0; i < len[t]; i++)
                for (int c = 0; c < H; c++, o++) {
                    double a = yp[o], e = yd[(t * M + i) * H + c], d = fabs(a - e) / (fabs(e) + 1e-3);
                    worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst;
                }
        CHECK_MSG(worst < 1e-4, "trial %d: worst relative difference %g", trial, worst);
        free(xp), free(xd), free(yp), free(yd);
    }
    ir_graph_free(pg);
    mg_program_free(rp);
    mg_ctx_free(ctx);
}

/* Ragged programs verified sequence by sequence: an equivalent rewrite passes at every
 * length vector tried; a pair that agrees at length 1 but not beyond (a sum of squares
 * against the square of a sum) is caught at a longer length, which the verdict names. */
void test_ragged_verify(void) {
    static const char *HEAD = "lengths len[3] max=6\ninput x : f32[3, len, 4]\ninput w : f32[1, 4, 4]\ninput v : f32[1, 4, 4]\n";
    static const char *BODY[] = {
        "y = matmul(matmul(x, w), v)\noutput y\n", "y = matmul(x, matmul(w, v))\noutput y\n",
        "y = sum(x * x, dim=1)\noutput y\n", "y = sqr(sum(x, dim=1))\noutput y\n",
    };
    ir_graph *g[4];
    for (int i = 0; i < 4; i++) {
        char src[512];
        snprintf(src, sizeof src, "%s%s", HEAD, BODY[i]);
        g[i] = unit_parse(src);
    }
    mg_ctx ctx = {{0}};
    mg_verify_report r;
    CHECK(vf_verify_ragged(g[0], g[1], &ctx, 0, 7, 4, &r) == MG_OK);
    CHECK_MSG(r.verdict == MG_EQUIVALENT && strstr(r.text, "len=1 len=6"), "%s", r.text);
    CHECK(vf_verify_ragged(g[2], g[3], &ctx, 0, 7, 4, &r) == MG_OK);
    CHECK_MSG(r.verdict == MG_NOT_EQUIVALENT && strstr(r.text, "at lengths len=6"), "%s", r.text);
    CHECK(vf_verify_ragged(g[0], g[2], &ctx, 0, 7, 4, &r) == MG_ERR_INVALID); /* different outputs' shapes */
    ir_graph *s = unit_parse("lengths len[4] max=6\ninput x : f32[4, len, 4]\ninput w : f32[1, 4, 4]\ninput v : f32[1, 4, 4]\n"
                             "y = matmul(matmul(x, w), v)\noutput y\n");
    CHECK(vf_verify_ragged(g[0], s, &ctx, 0, 7, 4, &r) == MG_ERR_INVALID && strstr(ctx.msg, "lengths 0 differ"));
    ir_graph_free(s);
    for (int i = 0; i < 4; i++) ir_graph_free(g[i]);
}

/* Packed offsets (with and without padding of each sequence to a tile's rows) against the
 * evaluator's packing (ir_slab_numel), and the work items: every (sequence, tile) once,
 * longest sequences first. */
void test_ragged_layout(void) {
    ir_graph *g = unit_parse("lengths len[5] max=9\ninput x : f32[5, len, 3]\n"
                             "s = matmul(reshape(x, shape=[5, len, 3, 1]), transpose(reshape(x, shape=[5, len, 3, 1]), perm=[0, 1, 3, 2]))\n"
                             "t = matmul(transpose(x, perm=[0, 2, 1]), x)\nu = matmul(x, transpose(x, perm=[0, 2, 1]))\noutput s, t, u\n");
    const int64_t len[5] = {3, 0, 9, 1, 4};
    const int64_t *lens[1] = {len};
    int64_t off[6];
    const ir_shape *x = &g->nodes[0].shape, *u = &g->nodes[g->outputs[2]].shape;
    CHECK(ir_packed_offsets(x, lens, 1, off) == 17 * 3 && off[1] == 9 && off[2] == 9 && off[3] == 36 && off[4] == 39);
    for (int b = 0; b < 5; b++) CHECK(off[b + 1] - off[b] == ir_slab_numel(x, lens, b));
    CHECK(ir_packed_offsets(u, lens, 1, off) == 9 + 81 + 1 + 16); /* [5, len, len]: L^2 a sequence */
    CHECK(ir_packed_offsets(u, lens, 4, off) == 16 + 0 + 144 + 16 + 16); /* each len up to a multiple of 4 */
    CHECK(ir_packed_offsets(&g->nodes[g->outputs[1]].shape, lens, 1, off) == 5 * 9 && off[1] == 9); /* [5, 3, 3] */
    int32_t items[64];
    int64_t n = ir_work_items(len, 5, 4, items, 32);
    CHECK(n == 1 + 0 + 3 + 1 + 1);
    CHECK(items[0] == 2 && items[1] == 0 && items[2] == 2 && items[4] == 2 && items[5] == 2); /* 9 first: 3 tiles */
    CHECK(items[6] == 4 && items[8] == 0 && items[10] == 3); /* then 4, 3, 1; the empty one has none */
    CHECK(ir_work_items(len, 5, 4, items, 5) == -1);
    ir_graph_free(g);
}

/* The field evaluator on packed tensors against the padded program with zero padding (which
 * adds nothing to a sum or a product in Z_p x Z_q): the token rows and each sequence's sum. */
void test_ragged_field(void) {
    static const char *R = "lengths len[4] max=5\ninput x : f32[4, len, 3]\ninput w : f32[1, 3, 2]\n"
                           "z = matmul(x, w)\ny = sum(z * z, dim=1)\noutput z, y\n";
    static const char *P = "input x : f32[4, 5, 3]\ninput w : f32[1, 3, 2]\nz = matmul(x, w)\ny = sum(z * z, dim=1)\noutput z, y\n";
    mg_ctx *ctx = mg_ctx_new();
    mg_program *rp = NULL;
    CHECK(mg_program_parse(ctx, R, strlen(R), "r.mu", &rp) == MG_OK);
    ir_graph *pg = unit_parse(P);
    const int64_t len[4] = {2, 5, 1, 3};
    CHECK(mg_program_bind_lengths(ctx, rp, "len", len, 4) == MG_OK);
    mg_field mf;
    mg_field_draw(11, &mf);
    ff_field F = {ff_mod_make(mf.p), ff_mod_make(mf.q), mf.omega};
    rng r = {99};
    uint32_t xp[33], xq[33], dp[60] = {0}, dq[60] = {0}, wp[6], wq[6];
    for (int i = 0; i < 6; i++) wp[i] = rng_below(&r, mf.p), wq[i] = rng_below(&r, mf.q);
    for (int b = 0, o = 0; b < 4; b++)
        for (int i = 0; i < len[b]; i++)
            for (int c = 0; c < 3; c++, o++) {
                xp[o] = dp[(b * 5 + i) * 3 + c] = rng_below(&r, mf.p);
                xq[o] = dq[(b * 5 + i) * 3 + c] = rng_below(&r, mf.q);
            }
    uint32_t zp[22], zq[22], yp[8], yq[8], pzp[40], pzq[40], pyp[8], pyq[8];
    memset(zp, 0xAB, sizeof zp), memset(yp, 0xAB, sizeof yp);
    const uint32_t *ip[2] = {xp, wp}, *iq[2] = {xq, wq}, *pip[2] = {dp, wp}, *piq[2] = {dq, wq};
    uint32_t *op[2] = {zp, yp}, *oq[2] = {zq, yq}, *pop[2] = {pzp, pyp}, *poq[2] = {pzq, pyq};
    CHECK(mg_eval_field(ctx, rp, &mf, ip, iq, op, oq) == MG_OK);
    mg_ctx c2 = {{0}};
    CHECK(ev_field(pg, &c2, &F, pip, piq, pop, poq) == MG_OK);
    int bad = 0;
    for (int b = 0, o = 0; b < 4; b++) {
        for (int i = 0; i < len[b]; i++)
            for (int c = 0; c < 2; c++, o++) bad += zp[o] != pzp[(b * 5 + i) * 2 + c] || zq[o] != pzq[(b * 5 + i) * 2 + c];
        for (int c = 0; c < 2; c++) bad += yp[b * 2 + c] != pyp[b * 2 + c] || yq[b * 2 + c] != pyq[b * 2 + c];
    }
    CHECK_MSG(bad == 0, "%d elements differ", bad);
    ir_graph_free(pg);
    mg_program_free(rp);
    mg_ctx_free(ctx);
}

/* a per-sequence operator that is not an attention: a sum over the ragged dim */
static const char *PERSEQ = "lengths len[2] max=5\ninput x : f32[2, len, 4]\ny = x + sum(x, dim=1)\noutput y\n";

/* A token-wise ragged program (an FFN with a residual and a LayerNorm) in token form: the
 * static program over its T tokens gives, on the packed inputs, what the per-sequence
 * reference gives; then it runs on the C backend (generated, compiled, checked by mg_run);
 * attention is refused by name. */
void test_ragged_token_form(void) {
    static const char *TW = "lengths len[6] max=7\ninput x : f32[6, len, 8]\ninput w1 : f32[1, 8, 16]\ninput b1 : f32[16]\n"
                            "input w2 : f32[1, 16, 8]\ninput g : f32[1, 1, 8]\nf = relu(matmul(x, w1) + b1)\nh = x + matmul(f, w2)\n"
                            "m = h - mean(h, dim=-1)\ny = transpose(reshape(m * rsqrt(mean(m * m, dim=-1) + 1e-5) * g, shape=[6, len, 2, 4]), perm=[0, 1, 3, 2])\n"
                            "output y\n";
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL;
    CHECK(mg_program_parse(ctx, TW, strlen(TW), "tw.mu", &p) == MG_OK);
    const int64_t len[6] = {3, 0, 7, 1, 7, 2};
    int64_t T = 20;
    CHECK(mg_program_bind_lengths(ctx, p, "len", len, 6) == MG_OK);
    ir_graph *g = unit_parse(TW), *t = NULL;
    mg_ctx c2 = {{0}};
    CHECK(ir_token_form(g, &c2, T, &t) == MG_OK);
    if (t) {
        CHECK(t->nodes[0].shape.ndim == 2 && t->nodes[0].shape.d[0] == T && !t->n_lens);
        rng r = {5};
        double x[20 * 8], w1[128], b1[16], w2[128], g8[8], yr[160], yt[160];
        for (int i = 0; i < 160; i++) x[i] = rng_uniform(&r) * 2 - 1;
        for (int i = 0; i < 128; i++) w1[i] = rng_uniform(&r) - 0.5, w2[i] = rng_uniform(&r) - 0.5;
        for (int i = 0; i < 16; i++) b1[i] = rng_uniform(&r) - 0.5;
        for (int i = 0; i < 8; i++) g8[i] = rng_uniform(&r) + 0.5;
        for (int i = 0; i < 160; i++) yr[i] = yt[i] = NAN;
        const double *in[5] = {x, w1, b1, w2, g8};
        double *o1[1] = {yr}, *o2[1] = {yt};
        CHECK(mg_eval_float(ctx, p, 0, in, o1) == MG_OK);
        CHECK(unit_feval(t, 0, in, o2) == MG_OK);
        int same = 1;
        for (int i = 0; i < 160; i++) same &= yr[i] == yt[i];
        CHECK_MSG(same, "the token form differs from the per-sequence reference");
    }
    mg_run_opts o = {.backend = MG_BACKEND_C, .reps = 1};
    mg_run_report rr;
    CHECK(mg_run(ctx, p, NULL, &o, &rr) == MG_OK && rr.ok);
    ir_graph_free(t);
    ir_graph *a = unit_parse(PERSEQ);
    CHECK(ir_token_form(a, &c2, 10, &t) == MG_ERR_UNSUPPORTED && strstr(c2.msg, "not an attention") && !t);
    ir_graph_free(a), ir_graph_free(g);
    mg_program_free(p);
    mg_ctx_free(ctx);
}

/* Random ragged programs against their sequences written out as static text: each program
 * is a template whose shapes say {B} and {L}; filled with the batch and `len` it is the
 * ragged program, with 1 and a sequence's length it is that sequence's static program, built
 * by the parser alone (not by ir_ragged_instance). The packed ragged evaluation must equal,
 * bit for bit, the static evaluations of every nonempty sequence on its slabs; the ragged
 * program must also survive the text and JSON round trips. */
static void fill(char *out, size_t n, const char *tpl, const char *batch, const char *seq) {
    size_t k = 0;
    for (const char *s = tpl; *s && k + 16 < n; s++) {
        if (s[0] == '{' && (s[1] == 'B' || s[1] == 'L') && s[2] == '}') {
            k += (size_t)snprintf(out + k, n - k, "%s", s[1] == 'B' ? batch : seq);
            s += 2;
        } else out[k++] = *s;
    }
    out[k] = 0;
}

void test_ragged_random(void) {
    enum { NB = 4, C = 4, MAXL = 5 };
    rng r = {0x726e646d00000001ull};
    for (int prog = 0; prog < 24; prog++) {
        char tpl[4096];
        size_t k = (size_t)snprintf(tpl, sizeof tpl, "input x : f32[{B}, {L}, %d]\ninput w : f32[1, %d, %d]\ninput v : f32[%d]\n", C, C, C, C);
        int nt = 1; /* tensors x (number 0), t1, t2, ... each [B, L, C] */
        int steps = 3 + (int)rng_below(&r, 5);
        for (int s = 0; s < steps; s++) {
            int a = (int)rng_below(&r, (uint32_t)nt), b = (int)rng_below(&r, (uint32_t)nt);
            char A[8], Bn[8];
            snprintf(A, sizeof A, a ? "t%d" : "x", a), snprintf(Bn, sizeof Bn, b ? "t%d" : "x", b);
            switch (rng_below(&r, 7)) {
            case 0: k += (size_t)snprintf(tpl + k, sizeof tpl - k, "t%d = matmul(%s, w)\n", nt, A); break;
            case 1: k += (size_t)snprintf(tpl + k, sizeof tpl - k, "t%d = relu(%s) + v\n", nt, A); break;
            case 2: k += (size_t)snprintf(tpl + k, sizeof tpl - k, "t%d = %s * %s\n", nt, A, Bn); break;
            case 3: k += (size_t)snprintf(tpl + k, sizeof tpl - k, "t%d = %s - mean(%s, dim=-1)\n", nt, A, A); break;
            case 4: /* attention over the sequence's own positions */
                k += (size_t)snprintf(tpl + k, sizeof tpl - k,
                                      "t%d = matmul(exp(matmul(%s, transpose(%s, perm=[0, 2, 1])) * 0.1) / "
                                      "sum(exp(matmul(%s, transpose(%s, perm=[0, 2, 1])) * 0.1), dim=-1), %s)\n",
                                      nt, A, Bn, A, Bn, A);
                break;
            case 5: /* a per-sequence sum over the ragged dim, broadcast back */
                k += (size_t)snprintf(tpl + k, sizeof tpl - k, "t%d = %s + sum(%s, dim=1) * 0.1\n", nt, A, Bn);
                break;
            default: /* heads: split the static dim, move it before len and back */
                k += (size_t)snprintf(tpl + k, sizeof tpl - k,
                                      "t%d = reshape(transpose(transpose(reshape(%s, shape=[{B}, {L}, 2, %d]), perm=[0, 2, 1, 3]), "
                                      "perm=[0, 2, 1, 3]), shape=[{B}, {L}, %d])\n", nt, A, C / 2, C);
                break;
            }
            nt++;
        }
        k += (size_t)snprintf(tpl + k, sizeof tpl - k, "output t%d\n", nt - 1);
        char src[8192], one[8192], nb[8], lb[8];
        snprintf(nb, sizeof nb, "%d", NB);
        size_t h = (size_t)snprintf(src, sizeof src, "lengths len[%d] max=%d\n", NB, MAXL);
        fill(src + h, sizeof src - h, tpl, nb, "len");
        ir_graph *g = unit_parse(src);
        strbuf sb = {0};
        ir_print_text(g, &sb);
        ir_graph *g2 = unit_parse(sb.s);
        CHECK_MSG(ir_graph_equal(g, g2), "program %d: the text round trip differs:\n%s", prog, src);
        sb_free(&sb), ir_graph_free(g2);
        mg_ctx ctx = {{0}};
        strbuf js = {0};
        CHECK(ir_print_json(g, &ctx, &js) == MG_OK);
        ir_graph *gj = NULL;
        CHECK(ir_parse_json(&ctx, js.s, js.len, "r.json", &gj) == MG_OK && gj && ir_graph_equal(g, gj));
        sb_free(&js), ir_graph_free(gj);
        int64_t len[NB], tok = 0;
        for (int b = 0; b < NB; b++) len[b] = (int64_t)rng_below(&r, MAXL + 1), tok += len[b];
        len[prog % NB] = prog % 3 == 0 ? 0 : prog % 3 == 1 ? 1 : MAXL;
        tok = 0;
        for (int b = 0; b < NB; b++) tok += len[b];
        const int64_t *lens[1] = {len};
        double *x = malloc(sizeof(double) * (size_t)(tok * C + 1)), w[C * C], v[C];
        double *y = malloc(sizeof(double) * (size_t)(tok * C + 1));
        for (int64_t t = 0; t < tok * C; t++) x[t] = rng_uniform(&r) * 2 - 1, y[t] = NAN;
        for (int i = 0; i < C * C; i++) w[i] = rng_uniform(&r) - 0.5;
        for (int i = 0; i < C; i++) v[i] = rng_uniform(&r) - 0.5;
        const double *in[3] = {x, w, v};
        double *out[1] = {y};
        CHECK_MSG(ev_float_ragged(g, &ctx, 0, lens, in, out) == MG_OK, "program %d: %s", prog, ctx.msg);
        int64_t off = 0;
        for (int b = 0; b < NB; b++) {
            if (!len[b]) continue;
            snprintf(lb, sizeof lb, "%lld", (long long)len[b]);
            fill(one, sizeof one, tpl, "1", lb);
            ir_graph *s = unit_parse(one);
            double ys[MAXL * C];
            const double *sin[3] = {x + off * C, w, v};
            double *sout[1] = {ys};
            CHECK(unit_feval(s, 0, sin, sout) == MG_OK);
            int same = 1;
            for (int64_t t = 0; t < len[b] * C; t++) same &= memcmp(&ys[t], &y[off * C + t], sizeof(double)) == 0;
            CHECK_MSG(same, "program %d, sequence %d (length %lld): the packed result differs from its static program:\n%s", prog, b,
                      (long long)len[b], src);
            ir_graph_free(s);
            off += len[b];
        }
        free(x), free(y);
        ir_graph_free(g);
    }
}

/* Attention over each sequence's own keys in token form (seqattn): every way of writing it
 * the matcher takes (scale after the product as * c, c *, / c, or none; the maximum
 * subtracted or not; normalised before or after the product with V; K and V the same tensor
 * as Q or not, dead per-sequence nodes beside it) gives, on the packed inputs with junk
 * capacity rows, what the per-sequence reference gives on the tokens (f32, within 1e-5 of the
 * largest value: seqattn scales Q before the product, one rounding apart), and 0 attention on
 * the capacity rows; then it runs on the C backend through mg_run. An attention whose scores
 * are read elsewhere is refused by name. */
void test_ragged_attention(void) {
    static const char *scale[] = {" * 0.5", " / 4", "", "0.25 * "};
    rng r = {0x61747400000001ull};
    const int64_t len[5] = {3, 0, 9, 1, 5};
    enum { T = 18, CAP = 24, C = 8 };
    for (int var = 0; var < 16; var++) {
        char src[2048];
        const char *sc = scale[var % 4];
        int pre = sc[0] == '0', maxsub = var / 4 % 2, after = var / 8, same = var % 3 == 0;
        char sexpr[160], eexpr[96], oexpr[160];
        snprintf(sexpr, sizeof sexpr, "%smatmul(q, transpose(%s, perm=[0, 1, 3, 2]))%s", pre ? sc : "", same ? "q" : "k",
                 pre ? "" : sc);
        snprintf(eexpr, sizeof eexpr, maxsub ? "exp(s - max(s, dim=-1))" : "exp(s)");
        snprintf(oexpr, sizeof oexpr, after ? "matmul(e, %s) / sum(e, dim=-1)" : "matmul(e / sum(e, dim=-1), %s)", same ? "q" : "v");
        snprintf(src, sizeof src,
                 "lengths len[5] max=9\ninput x : f32[5, len, 8]\ninput wq : f32[1, 8, 8]\ninput wk : f32[1, 8, 8]\n"
                 "input wv : f32[1, 8, 8]\n"
                 "q = transpose(reshape(matmul(x, wq), shape=[5, len, 2, 4]), perm=[0, 2, 1, 3])\n%s"
                 "s = %s\ne = %s\na = reshape(transpose(%s, perm=[0, 2, 1, 3]), shape=[5, len, 8])\ny = a * 2 + x\noutput y\n",
                 /* with K and V as Q, k, v and a sum over len are dead: neither refused nor kept */
                 same ? "k = transpose(reshape(matmul(x, wk), shape=[5, len, 2, 4]), perm=[0, 2, 1, 3])\nz = sum(x, dim=1)\n"
                      : "k = transpose(reshape(matmul(x, wk), shape=[5, len, 2, 4]), perm=[0, 2, 1, 3])\n"
                        "v = transpose(reshape(matmul(x, wv), shape=[5, len, 2, 4]), perm=[0, 2, 1, 3])\n",
                 sexpr, eexpr, oexpr);
        mg_ctx *ctx = mg_ctx_new();
        mg_program *p = NULL;
        CHECK(mg_program_parse(ctx, src, strlen(src), "attn.mu", &p) == MG_OK);
        CHECK(mg_program_bind_lengths(ctx, p, "len", len, 5) == MG_OK);
        ir_graph *g = unit_parse(src), *t = NULL;
        mg_ctx c2 = {{0}};
        CHECK_MSG(ir_token_form(g, &c2, CAP, &t) == MG_OK, "variant %d: %s", var, c2.msg);
        int n_sa = 0;
        for (int i = 0; t && i < t->n_nodes; i++) n_sa += t->nodes[i].op == IR_OP_SEQATTN;
        CHECK_MSG(n_sa == 1, "variant %d: %d seqattn nodes", var, n_sa);
        if (p && t && n_sa == 1) {
            double x[CAP * C], w[3][64], lens[5], yr[T * C], yt[CAP * C];
            for (int i = 0; i < CAP * C; i++) x[i] = rng_uniform(&r) * 2 - 1;
            for (int m = 0; m < 3; m++)
                for (int i = 0; i < 64; i++) w[m][i] = rng_uniform(&r) * 2 - 1;
            for (int b = 0; b < 5; b++) lens[b] = (double)len[b];
            for (int i = 0; i < CAP * C; i++) yt[i] = NAN;
            const double *in[4] = {x, w[0], w[1], w[2]}, *tin[5] = {lens, x, w[0], w[1], w[2]};
            double *o1[1] = {yr}, *o2[1] = {yt};
            CHECK(mg_eval_float(ctx, p, 0, in, o1) == MG_OK);
            CHECK(unit_feval(t, 0, tin, o2) == MG_OK);
            double big = 0, err = 0;
            for (int i = 0; i < T * C; i++) big = fmax(big, fabs(yr[i])), err = fmax(err, fabs(yr[i] - yt[i]));
            int pad = 1;
            for (int i = T * C; i < CAP * C; i++) pad &= yt[i] == (double)(float)x[i];
            CHECK_MSG(err <= 1e-5 * big && pad, "variant %d: token form off by %g (largest %g), capacity rows %s", var, err, big,
                      pad ? "right" : "wrong");
        }
        if (var < 2) { /* generated, compiled, checked against the token form's reference */
            mg_run_opts o = {.backend = MG_BACKEND_C, .reps = 1};
            mg_run_report rr;
            CHECK(mg_run(ctx, p, NULL, &o, &rr) == MG_OK && rr.ok);
        }
        ir_graph_free(t), ir_graph_free(g);
        mg_program_free(p);
        mg_ctx_free(ctx);
    }
    static const char *LEAK = "lengths len[2] max=5\ninput x : f32[2, len, 4]\n"
                              "q = transpose(reshape(x, shape=[2, len, 2, 2]), perm=[0, 2, 1, 3])\n"
                              "s = matmul(q, transpose(q, perm=[0, 1, 3, 2]))\ne = exp(s)\n"
                              "a = reshape(transpose(matmul(e / sum(e, dim=-1), q), perm=[0, 2, 1, 3]), shape=[2, len, 4])\n"
                              "z = reshape(transpose(matmul(e, q), perm=[0, 2, 1, 3]), shape=[2, len, 4])\ny = a + z\noutput y\n";
    ir_graph *g = unit_parse(LEAK), *t = NULL;
    mg_ctx c2 = {{0}};
    CHECK(ir_token_form(g, &c2, 10, &t) == MG_ERR_UNSUPPORTED && strstr(c2.msg, "only the attention's result") && !t);
    ir_graph_free(g);
}
