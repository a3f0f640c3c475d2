/* Tests of the float reference evaluator: every op against hand-computed values. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

void test_float_ops_by_hand(void);
void test_float_f32_vs_f64(void);
void test_float_special_values(void);
void test_float_layout_random(void);

typedef struct hand_case {
    const char *src;       /* inputs A (and B) f32; one output */
    double a[8], b[8];     /* input values */
    int n_out;
    double want[16];
} hand_case;

static const double E1 = 2.718281828459045;

static const hand_case CASES[] = {
    {"input A : f32[2, 2]\ninput B : f32[2]\nO = A + B\noutput O\n", {1, 2, 3, 4}, {10, 20}, 4, {11, 22, 13, 24}},
    {"input A : f32[2, 2]\ninput B : f32[2, 1]\nO = A - B\noutput O\n", {1, 2, 3, 4}, {10, 20}, 4, {-9, -8, -17, -16}},
    {"input A : f32[2, 2]\ninput B : f32[2, 2]\nO = A * B\noutput O\n", {1, 2, 3, 4}, {5, 6, 7, 8}, 4, {5, 12, 21, 32}},
    {"input A : f32[4]\ninput B : f32[4]\nO = A / B\noutput O\n", {1, 2, 3, -4}, {2, 4, -6, 8}, 4, {0.5, 0.5, -0.5, -0.5}},
    {"input A : f32[3]\ninput B : f32[1]\nO = exp(A) + B\noutput O\n", {0, 1, -1}, {0}, 3, {1, E1, 1 / E1}},
    {"input A : f32[3]\ninput B : f32[1]\nO = sqr(A) + sqrt(B)\noutput O\n", {-3, 0.5, 2}, {16}, 3, {13, 4.25, 8}},
    {"input A : f32[3]\ninput B : f32[1]\nO = silu(A) + relu(B)\noutput O\n", {0, 1, -1}, {-5}, 3,
     {0, 1 / (1 + 1 / E1), -1 / (1 + E1)}},
    {"input A : f32[2, 2]\ninput B : f32[2, 2]\nO = matmul(A, B)\noutput O\n", {1, 2, 3, 4}, {5, 6, 7, 8}, 4, {19, 22, 43, 50}},
    {"input A : f32[2, 1, 2]\ninput B : f32[1, 2, 1]\nO = matmul(A, B)\noutput O\n", {1, 2, 3, 4}, {5, 6}, 2, {17, 39}},
    {"input A : f32[2, 3]\ninput B : f32[1]\nO = sum(A, dim=1)\noutput O\n", {1, 2, 3, 4, 5, 6}, {0}, 2, {6, 15}},
    {"input A : f32[2, 3]\ninput B : f32[1]\nO = sum(A, dim=0)\noutput O\n", {1, 2, 3, 4, 5, 6}, {0}, 3, {5, 7, 9}},
    {"input A : f32[8]\ninput B : f32[1]\nO = sum(A, dim=0, group=2)\noutput O\n", {1, 2, 3, 4, 5, 6, 7, 8}, {0}, 4, {3, 7, 11, 15}},
    {"input A : f32[2, 4]\ninput B : f32[1]\nO = sum(A, dim=1, group=2)\noutput O\n", {1, 2, 3, 4, 5, 6, 7, 8}, {0}, 4, {3, 7, 11, 15}},
    {"input A : f32[2, 3]\ninput B : f32[1]\nO = max(A, dim=1)\noutput O\n", {1, 7, 3, -4, -5, -6}, {0}, 2, {7, -4}},
    {"input A : f32[2, 3]\ninput B : f32[1]\nO = max(A, dim=0)\noutput O\n", {1, 7, 3, -4, -5, 6}, {0}, 3, {1, 7, 6}},
    {"input A : f32[2]\ninput B : f32[1]\nO = repeat(A, times=[3])\noutput O\n", {1, 2}, {0}, 6, {1, 2, 1, 2, 1, 2}},
    {"input A : f32[2, 1]\ninput B : f32[1]\nO = repeat(A, times=[2, 2])\noutput O\n", {1, 2}, {0}, 8, {1, 1, 2, 2, 1, 1, 2, 2}},
    {"input A : f32[2, 3]\ninput B : f32[1]\nO = reshape(A, shape=[3, 2])\noutput O\n", {1, 2, 3, 4, 5, 6}, {0}, 6, {1, 2, 3, 4, 5, 6}},
    {"input A : f32[2, 2]\ninput B : f32[1, 2]\nO = concat(A, B, dim=0)\noutput O\n", {1, 2, 3, 4}, {5, 6}, 6, {1, 2, 3, 4, 5, 6}},
    {"input A : f32[2, 2]\ninput B : f32[2, 1]\nO = concat(A, B, dim=1)\noutput O\n", {1, 2, 3, 4}, {5, 6}, 6, {1, 2, 5, 3, 4, 6}},
    {"input A : f32[2, 2]\ninput B : f32[1]\nO = rmsnorm(A, dim=1)\noutput O\n", {3, 4, 1, 1}, {0}, 4,
     {3 / 3.5355339059327378, 4 / 3.5355339059327378, 1, 1}},
    {"input A : f32[2, 2]\ninput B : f32[1]\nO = mean(A, dim=0) - -1.5\noutput O\n", {3, 4, 1, 2}, {0}, 2, {3.5, 4.5}},
    /* the decoder's operators (issue #25): index maps, rsqrt, rmsnorm with eps, rotate_half */
    {"input A : f32[2, 3]\ninput B : f32[1]\nO = transpose(A, perm=[1, 0])\noutput O\n", {1, 2, 3, 4, 5, 6}, {0}, 6, {1, 4, 2, 5, 3, 6}},
    {"input A : f32[2, 2, 2]\ninput B : f32[1]\nO = transpose(A, perm=[2, 0, 1])\noutput O\n", {1, 2, 3, 4, 5, 6, 7, 8}, {0}, 8,
     {1, 3, 5, 7, 2, 4, 6, 8}},
    {"input A : f32[2, 4]\ninput B : f32[1]\nO = slice(A, dim=1, start=1, len=2)\noutput O\n", {1, 2, 3, 4, 5, 6, 7, 8}, {0}, 4, {2, 3, 6, 7}},
    {"input A : f32[4, 2]\ninput B : f32[1]\nO = slice(A, dim=-2, start=2, len=2)\noutput O\n", {1, 2, 3, 4, 5, 6, 7, 8}, {0}, 4, {5, 6, 7, 8}},
    {"input A : f32[3]\ninput B : f32[1]\nO = rsqrt(A) + B\noutput O\n", {4, 0.25, 16}, {1}, 3, {1.5, 3, 1.25}},
    {"input A : f32[1, 2]\ninput B : f32[1]\nO = rmsnorm(A, dim=1, eps=0.5)\noutput O\n", {3, 4}, {0}, 2,
     {3 / 3.6055512754639891, 4 / 3.6055512754639891}},
    {"input A : f32[4]\ninput B : f32[1]\n"
     "O = concat(-slice(A, dim=0, start=2, len=2), slice(A, dim=0, start=0, len=2), dim=0)\noutput O\n",
     {1, 2, 3, 4}, {0}, 4, {-3, -4, 1, 2}},
};

void test_float_ops_by_hand(void) {
    for (size_t c = 0; c < sizeof CASES / sizeof *CASES; c++) {
        ir_graph *g = unit_parse(CASES[c].src);
        CHECK(ir_numel(&g->nodes[g->outputs[0]].shape) == CASES[c].n_out);
        for (int f64 = 0; f64 < 2; f64++) {
            double out[16];
            for (int i = 0; i < 16; i++) out[i] = NAN; /* poison */
            const double *in[2] = {CASES[c].a, CASES[c].b};
            double *outs[1] = {out};
            CHECK(unit_feval(g, f64, in, outs) == MG_OK);
            for (int i = 0; i < CASES[c].n_out; i++) {
                double w = CASES[c].want[i], tol = 1e-6; /* outputs are rounded to f32 */
                CHECK_MSG(fabs(out[i] - w) <= tol * fmax(1, fabs(w)), "case %zu (%s) element %d: %.17g, want %.17g",
                          c, f64 ? "f64" : "f32", i, out[i], w);
            }
        }
        ir_graph_free(g);
    }
    /* inputs and outputs are rounded to their dtype */
    ir_graph *g = unit_parse("input A : f16[2]\ninput B : bf16[2]\nO = A + B\nP = B * 1\noutput O, P\n");
    double a[2] = {1.0 / 3, 65520}, b[2] = {1.0 / 3, 1}, o[2], p[2];
    const double *in[2] = {a, b};
    double *outs[2] = {o, p};
    CHECK(unit_feval(g, 1, in, outs) == MG_OK);
    CHECK(p[0] == 0.333984375);                  /* bf16(1/3) */
    CHECK(o[0] == 0.333251953125 + 0.333984375); /* f16(1/3) + bf16(1/3), f32 result */
    CHECK(isinf(o[1]));                          /* f16(65520) overflows */
    CHECK(g->nodes[g->outputs[0]].dtype == MG_F32 && g->nodes[g->outputs[1]].dtype == MG_BF16);
    ir_graph_free(g);
}

/* f32 mode rounds every step, f64 does not: close, not identical, on a long reduction. */
void test_float_f32_vs_f64(void) {
    ir_graph *g = unit_parse("input X : f32[4, 4096]\ninput W : f32[4096, 64]\n"
                             "O = matmul(rmsnorm(X, dim=1), W)\noutput O\n");
    rng r = {11};
    double *x = malloc(4 * 4096 * sizeof *x), *w = malloc(4096 * 64 * sizeof *w);
    double o32[256], o64[256];
    for (int i = 0; i < 4 * 4096; i++) x[i] = (double)(float)(rng_uniform(&r) * 2 - 1);
    for (int i = 0; i < 4096 * 64; i++) w[i] = (double)(float)(rng_uniform(&r) * 2 - 1);
    const double *in[2] = {x, w};
    double *o1[1] = {o32}, *o2[1] = {o64};
    CHECK(unit_feval(g, 0, in, o1) == MG_OK && unit_feval(g, 1, in, o2) == MG_OK);
    int differ = 0;
    double worst = 0;
    for (int i = 0; i < 256; i++) {
        differ += o32[i] != o64[i];
        worst = fmax(worst, fabs(o32[i] - o64[i]) / fmax(1, fabs(o64[i])));
    }
    CHECK_MSG(differ > 0, "f32 and f64 agree bit for bit: f32 rounding is not applied");
    CHECK_MSG(worst < 1e-4, "f32 strays %.3g from f64", worst);
    free(x), free(w);
    ir_graph_free(g);
}

/* IEEE special values through every elementwise operator (src/ir/scalar.h): NaN, +inf, -inf
 * and -0 as written out below, in f32 and f64 mode. Equal means both NaN, or equal with the
 * same sign (so -0 and +0 differ). */
static int same_value(double got, double want) {
    if (isnan(want)) return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

void test_float_special_values(void) {
    const double N = NAN, I = INFINITY;
    /* unary ops on A; binary ops on the pairs (A[i], B[i]) */
    static const char *const un[] = {"exp(A)", "sqr(A)", "sqrt(A)", "silu(A)", "relu(A)"};
    static const char *const bin[] = {"A + B", "A - B", "A * B", "A / B"};
    const double a[8] = {N, I, -I, -0.0, I, -0.0, 2, 1};
    const double b[8] = {1, -I, -I, 0.0, I, -0.0, 0.0, -I};
    const double want_un[5][8] = {
        {N, I, 0, 1, I, 1, 7.389056098930650, 2.718281828459045},   /* exp */
        {N, I, I, 0.0, I, 0.0, 4, 1},                               /* sqr: (-0)^2 = +0 */
        {N, I, N, -0.0, I, -0.0, 1.4142135623730951, 1},            /* sqrt(-0) = -0 */
        {N, I, N, -0.0, I, -0.0, 1.7615941559557649, 0.7310585786300049}, /* silu(-inf) = -inf/inf */
        {N, I, 0.0, 0.0, I, 0.0, 2, 1},                             /* relu: NaN stays NaN */
    };
    const double want_bin[4][8] = {
        {N, N, -I, 0.0, I, -0.0, 2, -I},   /* -0 + +0 = +0, -0 + -0 = -0 */
        {N, I, N, -0.0, N, 0.0, 2, I},     /* -0 - +0 = -0, -0 - -0 = +0 */
        {N, -I, I, -0.0, I, 0.0, 0.0, -I},
        {N, N, N, N, N, N, I, -0.0},       /* 2 / +0 = +inf, 1 / -inf = -0 */
    };
    for (int k = 0; k < 9; k++) {
        const char *expr = k < 5 ? un[k] : bin[k - 5];
        const double *want = k < 5 ? want_un[k] : want_bin[k - 5];
        char src[160];
        snprintf(src, sizeof src, "input A : f32[8]\ninput B : f32[8]\nO = %s\noutput O\n", expr);
        ir_graph *g = unit_parse(src);
        for (int f64 = 0; f64 < 2; f64++) {
            double out[8];
            for (int i = 0; i < 8; i++) out[i] = 12345; /* poison */
            const double *in[2] = {a, b};
            double *outs[1] = {out};
            CHECK(unit_feval(g, f64, in, outs) == MG_OK);
            for (int i = 0; i < 8; i++) {
                /* outputs are f32: finite results compare after rounding the wanted value */
                double w = isfinite(want[i]) ? (double)(float)want[i] : want[i];
                CHECK_MSG(same_value(out[i], w), "%s (%s) at (%g, %g): %g, want %g", expr,
                          f64 ? "f64" : "f32", a[i], b[i], out[i], w);
            }
        }
        ir_graph_free(g);
    }
}

/* transpose, slice and a RoPE (cos/sin as inputs) on random inputs against index loops
 * written here: the evaluator's ev_layout_map is not what checks itself. Exact: they only
 * move f32 values, and x cos + rot(x) sin rounds once per operator in both. */
void test_float_layout_random(void) {
    ir_graph *g = unit_parse("input X : f32[3, 4, 6]\ninput C : f32[4, 6]\ninput S : f32[4, 6]\n"
                             "T = transpose(X, perm=[2, 0, 1])\nL = slice(X, dim=2, start=1, len=4)\n"
                             "R = X * C + concat(-slice(X, dim=-1, start=3, len=3), "
                             "slice(X, dim=-1, start=0, len=3), dim=-1) * S\noutput T, L, R\n");
    rng r = {25};
    double x[72], c[24], sn[24], t[72], l[48], ro[72];
    for (int i = 0; i < 72; i++) x[i] = (double)(float)(rng_uniform(&r) * 2 - 1);
    for (int i = 0; i < 24; i++) c[i] = (double)(float)(rng_uniform(&r) * 2 - 1);
    for (int i = 0; i < 24; i++) sn[i] = (double)(float)(rng_uniform(&r) * 2 - 1);
    for (int i = 0; i < 72; i++) t[i] = ro[i] = NAN; /* poison */
    for (int i = 0; i < 48; i++) l[i] = NAN;
    const double *in[3] = {x, c, sn};
    double *outs[3] = {t, l, ro};
    CHECK(unit_feval(g, 0, in, outs) == MG_OK);
    int bad = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int k = 0; k < 6; k++) {
                double v = x[(a * 4 + b) * 6 + k];
                bad += t[(k * 3 + a) * 4 + b] != v;                   /* T[k, a, b] = X[a, b, k] */
                if (k >= 1 && k < 5) bad += l[(a * 4 + b) * 4 + k - 1] != v;
                double rot = k < 3 ? -x[(a * 4 + b) * 6 + k + 3] : x[(a * 4 + b) * 6 + k - 3];
                float want = (float)((float)(v * c[b * 6 + k]) + (float)(rot * sn[b * 6 + k]));
                bad += ro[(a * 4 + b) * 6 + k] != want;
            }
    CHECK_MSG(bad == 0, "%d elements differ from the index loops", bad);
    ir_graph_free(g);
}
