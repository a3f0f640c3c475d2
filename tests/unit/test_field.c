/* Tests of the finite-field evaluator (Mirage Table 3): every op by hand, the algebraic
 * identities of Table 2 on random values (with negative controls so the tests can fail),
 * agreement with the float evaluator on integers, division by zero, non-Lax refusal. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

void test_field_ops_by_hand(void);
void test_field_exp_add(void);
void test_field_distributive(void);
void test_field_sqrt_mul(void);
void test_field_matmul_assoc(void);
void test_field_div_zero(void);
void test_field_rejects_non_lax(void);
void test_field_float_agree(void);
void test_field_silu(void);
void test_field_decoder_ops(void);
void test_eval_stop_in_matmul(void);

enum { MAXT = 12 };
static const ff_mod MP = {FF_P, UINT64_MAX / FF_P}, MQ = {FF_Q, UINT64_MAX / FF_Q};
typedef struct fenv { /* inputs and outputs of one field evaluation */
    int ni, no;
    uint32_t *ip[MAXT], *iq[MAXT], *op[MAXT], *oq[MAXT];
    int64_t on[MAXT];
} fenv;

/* Inputs drawn from r below the primes of F (NULL: the fixed unit_field primes). */
static void fenv_alloc_in(fenv *e, const ir_graph *g, rng *r, const ff_field *F) {
    memset(e, 0, sizeof *e);
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == IR_OP_INPUT) {
            int64_t n = ir_numel(&g->nodes[i].shape);
            e->ip[e->ni] = malloc((size_t)n * 4), e->iq[e->ni] = malloc((size_t)n * 4);
            for (int64_t t = 0; r && t < n; t++)
                e->ip[e->ni][t] = rng_below(r, F ? F->P.m : FF_P), e->iq[e->ni][t] = rng_below(r, F ? F->Q.m : FF_Q);
            e->ni++;
        }
    for (int k = 0; k < g->n_outputs; k++) {
        e->on[k] = ir_numel(&g->nodes[g->outputs[k]].shape);
        e->op[k] = malloc((size_t)e->on[k] * 4), e->oq[k] = malloc((size_t)e->on[k] * 4);
        memset(e->op[k], 0xAB, (size_t)e->on[k] * 4), memset(e->oq[k], 0xAB, (size_t)e->on[k] * 4);
    }
    e->no = g->n_outputs;
}

static void fenv_alloc(fenv *e, const ir_graph *g, rng *r) { fenv_alloc_in(e, g, r, NULL); }

static void fenv_free(fenv *e) {
    for (int i = 0; i < e->ni; i++) free(e->ip[i]), free(e->iq[i]);
    for (int k = 0; k < e->no; k++) free(e->op[k]), free(e->oq[k]);
}

static mg_status frun(const ir_graph *g, fenv *e, ff_field F, mg_ctx *ctx) {
    return ev_field(g, ctx, &F, (const uint32_t *const *)e->ip, (const uint32_t *const *)e->iq,
                    e->op, e->oq);
}

/* Evaluates src on `trials` random inputs, each in a freshly drawn field of the family;
 * returns how many trials had all outputs equal (p and q parts) to output 0. */
static int identity_holds(const char *src, int trials, uint64_t seed) {
    ir_graph *g = unit_parse(src);
    rng r = {seed};
    int held = 0;
    for (int t = 0; t < trials; t++) {
        fenv e;
        ff_needs none = {.n_qr = 0};
        ff_field omega;
        ff_field_draw(rng_next(&r), &none, &omega);
        fenv_alloc_in(&e, g, &r, &omega);
        mg_ctx ctx = {{0}};
        CHECK_MSG(frun(g, &e, omega, &ctx) == MG_OK, "%s", ctx.msg);
        int eq = 1;
        for (int k = 1; k < e.no; k++)
            eq &= !memcmp(e.op[0], e.op[k], (size_t)e.on[0] * 4) && !memcmp(e.oq[0], e.oq[k], (size_t)e.on[0] * 4);
        held += eq;
        fenv_free(&e);
    }
    ir_graph_free(g);
    return held;
}

void test_field_ops_by_hand(void) {
    ir_graph *g = unit_parse("input A : f32[2, 2]\ninput B : f32[2, 2]\n"
                             "S = A + B\nD = A - B\nM = A * B\nQ = A / B\nX = exp(A)\nR = sqrt(sqr(B))\n"
                             "P = matmul(A, B)\nU = sum(A, dim=1)\nC = concat(A, B, dim=0)\n"
                             "output S, D, M, Q, X, R, P, U, C\n");
    fenv e;
    fenv_alloc(&e, g, NULL);
    uint32_t a[4] = {1, 2, 3, FF_P - 1}, aq[4] = {1, 2, 0, FF_Q - 1}; /* A = [[1, 2], [3, -1]] */
    uint32_t b[4] = {5, 6, 7, 2}, bq[4] = {5, 6, 7, 2};
    memcpy(e.ip[0], a, 16), memcpy(e.iq[0], aq, 16), memcpy(e.ip[1], b, 16), memcpy(e.iq[1], bq, 16);
    ff_field W = unit_field(5);
    uint32_t w = W.omega;
    mg_ctx ctx = {{0}};
    CHECK_MSG(frun(g, &e, W, &ctx) == MG_OK, "%s", ctx.msg);
    CHECK(e.op[0][0] == 6 && e.op[0][3] == 1 && e.oq[0][3] == 1);                  /* -1 + 2 */
    CHECK(e.op[1][0] == FF_P - 4 && e.oq[1][0] == FF_Q - 4);                       /* 1 - 5 */
    CHECK(e.op[2][3] == FF_P - 2 && e.oq[2][2] == 0);                              /* -1 * 2, 0 * 7 */
    CHECK(e.op[3][3] == FF_P - (FF_P + 1) / 2 && e.oq[3][1] == ff_mulq(2, ff_inv(6, &MQ)));
    CHECK(ff_mulp(e.op[3][1], 6) == 2 && ff_mulp(e.op[3][3], 2) == FF_P - 1);     /* 2/6, -1/2 */
    CHECK(e.op[4][0] == w && e.op[4][1] == ff_mulp(w, w) && e.op[4][2] == 1);      /* exp uses x_q */
    CHECK(e.op[4][3] == ff_inv(w, &MP) && e.oq[4][0] == FF_NONE);                 /* w^(q-1) = 1/w */
    CHECK(e.op[5][3] == 2 && e.oq[5][3] == 2);                                     /* sqrt(4) = 2 */
    CHECK(ff_mulp(e.op[5][0], e.op[5][0]) == 25);
    /* [[1, 2], [3, -1]] x [[5, 6], [7, 2]] = [[19, 10], [8, 16]] */
    CHECK(e.op[6][0] == 19 && e.op[6][1] == 10 && e.op[6][2] == 8 && e.op[6][3] == 16);
    CHECK(e.op[7][0] == 3 && e.op[7][1] == 2);                                     /* 1+2, 3-1 */
    CHECK(e.op[8][4] == 5 && e.op[8][7] == 2 && e.oq[8][3] == FF_Q - 1);
    fenv_free(&e);
    ir_graph_free(g);
    /* constants are exact rationals: 0.125 * 8 = 1, 1e-6 * 1000000 = 1 */
    CHECK(identity_holds("input A : f32[3]\nO = A * 0.125 * 8\nP = A * 1e-6 * 1000000\nQ = A * 1\noutput O, P, Q\n", 2, 1) == 2);
}

void test_field_exp_add(void) {
    CHECK(identity_holds("input A : f32[3, 5]\ninput B : f32[3, 5]\n"
                         "O = exp(A) * exp(B)\nP = exp(A + B)\noutput O, P\n", 20, 1) == 20);
    CHECK(identity_holds("input A : f32[3, 5]\ninput B : f32[5]\n"
                         "O = exp(A) / exp(B)\nP = exp(A - B)\noutput O, P\n", 20, 2) == 20);
    /* negative control: exp(A) * exp(B) is not exp(A * B) */
    CHECK(identity_holds("input A : f32[3, 5]\ninput B : f32[3, 5]\n"
                         "O = exp(A) * exp(B)\nP = exp(A * B)\noutput O, P\n", 20, 3) == 0);
}

void test_field_distributive(void) {
    CHECK(identity_holds("input A : f32[4, 6]\ninput B : f32[4, 6]\ninput C : f32[6]\n"
                         "O = A * (B + C)\nP = A * B + A * C\noutput O, P\n", 20, 4) == 20);
    CHECK(identity_holds("input A : f32[4, 6]\ninput B : f32[6, 3]\ninput C : f32[6, 3]\n"
                         "O = matmul(A, B + C)\nP = matmul(A, B) + matmul(A, C)\noutput O, P\n", 20, 5) == 20);
    CHECK(identity_holds("input A : f32[4, 6]\ninput B : f32[4, 6]\n"
                         "O = sum(A + B, dim=1)\nP = sum(A, dim=1) + sum(B, dim=1)\n"
                         "Q = sum(sum(A + B, dim=1, group=2), dim=1)\noutput O, P, Q\n", 20, 6) == 20);
    CHECK(identity_holds("input A : f32[4, 6]\ninput B : f32[4, 6]\ninput C : f32[4, 1]\n"
                         "O = (A + B) / C\nP = A / C + B / C\nQ = sum(A / C, dim=1) * C\n"
                         "R = sum(A, dim=1)\noutput O, P\n", 20, 7) == 20);
    CHECK(identity_holds("input A : f32[4, 6]\ninput B : f32[4, 6]\n"
                         "O = A * (B + A)\nP = A * B + A\noutput O, P\n", 20, 8) == 0); /* control */
}

void test_field_sqrt_mul(void) {
    CHECK(identity_holds("input A : f32[64]\ninput B : f32[64]\n"
                         "O = sqrt(A) * sqrt(B)\nP = sqrt(A * B)\noutput O, P\n", 20, 9) == 20);
    CHECK(identity_holds("input A : f32[64]\nO = sqr(A)\nP = sqr(sqrt(sqr(A)))\noutput O, P\n", 20, 10) == 20);
    CHECK(identity_holds("input A : f32[64]\ninput B : f32[64]\n"
                         "O = sqrt(A) / sqrt(B)\nP = sqrt(A / B)\noutput O, P\n", 20, 11) == 20);
    /* sqrt(x)^2 = x only for squares: on random x it fails (about half the elements) */
    CHECK(identity_holds("input A : f32[64]\nO = A * 1\nP = sqr(sqrt(A))\noutput O, P\n", 20, 12) == 0);
}

void test_field_matmul_assoc(void) {
    CHECK(identity_holds("input A : f32[2, 5, 7]\ninput B : f32[2, 7, 3]\ninput C : f32[2, 3, 4]\n"
                         "O = matmul(matmul(A, B), C)\nP = matmul(A, matmul(B, C))\noutput O, P\n", 20, 13) == 20);
    /* long reductions exercise the 128-bit accumulation */
    CHECK(identity_holds("input A : f32[3, 5000]\ninput B : f32[5000, 2]\ninput C : f32[2, 3]\n"
                         "O = matmul(matmul(A, B), C)\nP = matmul(A, matmul(B, C))\noutput O, P\n", 3, 14) == 3);
    CHECK(identity_holds("input A : f32[4, 4]\ninput B : f32[4, 4]\n"
                         "O = matmul(A, B)\nP = matmul(B, A)\noutput O, P\n", 20, 15) == 0); /* control */
}

void test_field_div_zero(void) {
    ir_graph *g = unit_parse("input X : f32[3]\ninput Y : f32[3]\nO = X / (Y - Y)\noutput O\n");
    fenv e;
    rng r = {1};
    fenv_alloc(&e, g, &r);
    mg_ctx ctx = {{0}};
    CHECK(frun(g, &e, unit_field(1), &ctx) == MG_ERR_DIV_ZERO);
    CHECK_MSG(strstr(ctx.msg, "division by zero in Z_p at 'O': divisor element 0 is 0"), "%s", ctx.msg);
    fenv_free(&e);
    ir_graph_free(g);
    /* zero only in Z_q: the quotient has no exponent part; exp of it is an error */
    g = unit_parse("input X : f32[3]\ninput Y : f32[3]\nO = X / Y\nE = exp(X / Y)\noutput O, E\n");
    fenv_alloc(&e, g, &r);
    e.iq[1][1] = 0;
    CHECK(frun(g, &e, unit_field(1), &ctx) == MG_ERR_DIV_ZERO);
    CHECK_MSG(strstr(ctx.msg, "needs the exponent part of element 1"), "%s", ctx.msg);
    fenv_free(&e);
    ir_graph_free(g);
    g = unit_parse("input X : f32[3]\ninput Y : f32[3]\nO = X / Y\noutput O\n");
    fenv_alloc(&e, g, &r);
    e.iq[1][1] = 0;
    CHECK(frun(g, &e, unit_field(1), &ctx) == MG_OK && e.oq[0][1] == FF_NONE && e.oq[0][0] != FF_NONE);
    fenv_free(&e);
    ir_graph_free(g);
}

void test_field_rejects_non_lax(void) {
    const char *srcs[] = {"input X : f32[3]\nO = relu(X)\noutput O\n",
                          "input X : f32[3]\nO = max(X, dim=0)\noutput O\n",
                          "input X : f32[3]\nO = exp(exp(X))\noutput O\n"};
    for (int i = 0; i < 3; i++) {
        ir_graph *g = unit_parse(srcs[i]);
        fenv e;
        rng r = {1};
        fenv_alloc(&e, g, &r);
        mg_ctx ctx = {{0}};
        CHECK(frun(g, &e, unit_field(1), &ctx) == MG_ERR_UNSUPPORTED);
        CHECK(strstr(ctx.msg, "needs a Lax program"));
        ff_field one = unit_field(1);
        one.omega = 1;
        CHECK(frun(g, &e, one, &ctx) != MG_OK); /* and omega = 1 is refused anyway */
        fenv_free(&e);
        ir_graph_free(g);
    }
}

/* On small integers, the float evaluator (f64, exact here) and the field agree: the field's
 * value is the integer mod p and mod q; quotients satisfy o * b = a. */
void test_field_float_agree(void) {
    const char *src = "input A : f32[2, 3, 4]\ninput B : f32[2, 4, 3]\ninput C : f32[3]\n"
                      "M = matmul(A, B) - sqr(C) * 3\nS = sum(M, dim=2) + sum(A, dim=2, group=2)\n"
                      "L = concat(reshape(repeat(C, times=[4]), shape=[2, 3, 2]), S, dim=2)\n"
                      "Q = M / (C * C + 1)\noutput M, S, L, Q\n";
    ir_graph *g = unit_parse(src);
    rng r = {21};
    for (int trial = 0; trial < 10; trial++) {
        fenv e;
        fenv_alloc(&e, g, NULL);
        double *fin[3], *fout[4];
        for (int i = 0; i < 3; i++) {
            int64_t n = ir_numel(&g->nodes[i].shape);
            fin[i] = malloc((size_t)n * sizeof(double));
            for (int64_t t = 0; t < n; t++) {
                int v = (int)rng_below(&r, 9) - 4;
                fin[i][t] = v;
                e.ip[i][t] = ff_from_i64(v, FF_P), e.iq[i][t] = ff_from_i64(v, FF_Q);
            }
        }
        for (int k = 0; k < 4; k++) fout[k] = malloc((size_t)e.on[k] * sizeof(double));
        mg_ctx ctx = {{0}};
        CHECK(frun(g, &e, unit_field(trial), &ctx) == MG_OK);
        CHECK(unit_feval(g, 1, (const double *const *)fin, fout) == MG_OK);
        int bad = 0;
        for (int k = 0; k < 3; k++)
            for (int64_t t = 0; t < e.on[k]; t++) {
                int64_t v = (int64_t)fout[k][t];
                bad += (double)v != fout[k][t] || e.op[k][t] != ff_from_i64(v, FF_P) ||
                       e.oq[k][t] != ff_from_i64(v, FF_Q);
            }
        /* Q = M / (C*C + 1): check o * (c*c + 1) = m in the field and o ~ m / d in float */
        for (int64_t t = 0; t < e.on[3]; t++) {
            int64_t m = (int64_t)fout[0][t], c = (int64_t)fin[2][t % 3], d = c * c + 1;
            bad += ff_mulp(e.op[3][t], ff_from_i64(d, FF_P)) != ff_from_i64(m, FF_P);
            bad += fabs(fout[3][t] - (double)m / (double)d) > 1e-6; /* outputs round to f32 */
        }
        CHECK_MSG(bad == 0, "trial %d: %d disagreements", trial, bad);
        for (int i = 0; i < 3; i++) free(fin[i]);
        for (int k = 0; k < 4; k++) free(fout[k]);
        fenv_free(&e);
    }
    ir_graph_free(g);
}

void test_field_silu(void) {
    /* silu(x) (1 + exp(-x)) = x, exactly, with the same omega */
    ir_graph *g = unit_parse("input X : f32[32]\nO = X * 1\nP = silu(X) * (1 + exp(0 - X))\noutput O, P\n");
    fenv e;
    rng r = {17};
    fenv_alloc(&e, g, &r);
    mg_ctx ctx = {{0}};
    CHECK(frun(g, &e, unit_field(3), &ctx) == MG_OK);
    CHECK(!memcmp(e.op[0], e.op[1], 32 * 4)); /* p parts agree; silu drops the q part */
    CHECK(e.oq[1][0] == FF_NONE);
    ff_field W3 = unit_field(3);
    uint32_t w = W3.omega, x = e.ip[0][5], xq = e.iq[0][5];
    uint32_t want = ff_mulp(x, ff_inv(ff_add(1, ff_pow(w, FF_Q - xq, &MP), FF_P), &MP));
    ir_graph *g2 = unit_parse("input X : f32[32]\nS = silu(X)\noutput S\n");
    fenv e2;
    fenv_alloc(&e2, g2, NULL);
    memcpy(e2.ip[0], e.ip[0], 32 * 4), memcpy(e2.iq[0], e.iq[0], 32 * 4);
    CHECK(frun(g2, &e2, W3, &ctx) == MG_OK && e2.op[0][5] == want); /* by hand */
    fenv_free(&e2);
    ir_graph_free(g2);
    fenv_free(&e);
    ir_graph_free(g);
}

void test_field_draw(void);
void test_field_factor(void);

/* Euler's criterion: whether a is a non-zero square mod the prime m */
static int is_qr(uint64_t a, const ff_mod *m) {
    uint32_t r = (uint32_t)(a % m->m);
    return r && ff_pow(r, (m->m - 1) / 2, m) == 1;
}

/* Every drawn field is in the family and meets its needs; one seed gives one field, and the
 * fields of different seeds are spread over the family (no prime is special). */
void test_field_draw(void) {
    ff_needs n = {.qr = {3, 5, 7, 43}, .n_qr = 4, .qr_q = 1, .nums = {21474835435, -8223371137059149241, 7}, .n_nums = 3};
    uint32_t seen[200];
    int distinct = 0;
    for (uint64_t s = 0; s < 200; s++) {
        ff_field f, g;
        ff_field_draw(s, &n, &f);
        ff_field_draw(s, &n, &g);
        CHECK(f.P.m == g.P.m && f.Q.m == g.Q.m && f.omega == g.omega);
        uint32_t q = f.Q.m, p = f.P.m;
        CHECK_MSG(q >= 1u << 30 && q < 1u << 31 && q % 8 == 7 && p == 2 * q + 1 && ff_is_prime(q) && ff_is_prime(p),
                  "seed %llu: p = %u, q = %u", (unsigned long long)s, p, q);
        for (int i = 0; i < n.n_qr; i++) CHECK(is_qr(n.qr[i], &f.P) && is_qr(n.qr[i], &f.Q));
        CHECK(is_qr(2, &f.P) && is_qr(2, &f.Q) && !is_qr(p - 1, &f.P)); /* 2 square, -1 not */
        for (int i = 0; i < n.n_nums; i++) {
            uint64_t a = n.nums[i] < 0 ? 0 - (uint64_t)n.nums[i] : (uint64_t)n.nums[i];
            CHECK(a % p && a % q);
        }
        CHECK(f.omega > 1 && f.omega < p && ff_pow(f.omega, q, &f.P) == 1);
        CHECK(ff_sqrt(100, &f.P) == 10 && ff_sqrt(ff_mul(49, ff_inv(25, &f.P), &f.P), &f.P) == ff_mul(7, ff_inv(5, &f.P), &f.P));
        int dup = 0;
        for (int i = 0; i < distinct; i++) dup |= seen[i] == q;
        if (!dup) seen[distinct++] = q;
    }
    CHECK_MSG(distinct >= 195, "only %d distinct fields in 200 draws", distinct);
    /* negative control: without the needs, 5 is a non-square mod some p and sqrt(25) = -5 there */
    ff_needs none = {.n_qr = 0};
    int flipped = 0;
    for (uint64_t s = 0; s < 50; s++) {
        ff_field f;
        ff_field_draw(s, &none, &f);
        flipped += ff_sqrt(25, &f.P) != 5;
    }
    CHECK_MSG(flipped > 5 && flipped < 45, "sqrt(25) = -5 in %d of 50 unconstrained fields", flipped);
}

void test_field_factor(void) {
    static const struct {
        uint64_t v;
        int n;
        uint64_t f[4];
    } T[] = {
        {1000000000000000000ull, 2, {2, 5}},
        {4294967291ull * 4294967279ull, 2, {4294967279ull, 4294967291ull}},
        {18446744073709551557ull, 1, {18446744073709551557ull}}, /* the largest 64-bit prime */
        {2ull * 3 * 3 * 43 * 2147483543ull, 4, {2, 3, 43, 2147483543ull}},
        {1, 0, {0}},
    };
    for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
        uint64_t f[8];
        int n = ff_factor(T[i].v, f, 8);
        CHECK_MSG(n == T[i].n && !memcmp(f, T[i].f, (size_t)n * sizeof *f), "factor %llu: %d primes",
                  (unsigned long long)T[i].v, n);
    }
    CHECK(ff_is_prime(2147483543) && ff_is_prime(4294967087u) && !ff_is_prime(3215031751ull) && !ff_is_prime(1));
}

/* The decoder's operators in the field (issue #25): transpose and slice move residues (by
 * hand on A = 1..6), rsqrt is 1 / sqrt so it keeps sqrt's multiplicativity, and the
 * identities a decoder relies on hold on random inputs in random fields. */
void test_field_decoder_ops(void) {
    ir_graph *g = unit_parse("input A : f32[2, 3]\ninput B : f32[1]\nT = transpose(A, perm=[1, 0])\n"
                             "L = slice(A, dim=1, start=1, len=2)\nR = rsqrt(B)\noutput T, L, R\n");
    fenv e;
    fenv_alloc(&e, g, NULL);
    for (int i = 0; i < 6; i++) e.ip[0][i] = (uint32_t)i + 1, e.iq[0][i] = (uint32_t)i + 11;
    e.ip[1][0] = e.iq[1][0] = 4;
    mg_ctx ctx = {{0}};
    CHECK_MSG(frun(g, &e, unit_field(3), &ctx) == MG_OK, "%s", ctx.msg);
    static const uint32_t tw[6] = {1, 4, 2, 5, 3, 6}, lw[4] = {2, 3, 5, 6};
    for (int i = 0; i < 6; i++) CHECK(e.op[0][i] == tw[i] && e.oq[0][i] == tw[i] + 10);
    for (int i = 0; i < 4; i++) CHECK(e.op[1][i] == lw[i] && e.oq[1][i] == lw[i] + 10);
    CHECK(ff_mulp(e.op[2][0], 2) == 1 && ff_mulq(e.oq[2][0], 2) == 1); /* 1 / sqrt(4) = 1/2 */
    fenv_free(&e);
    ir_graph_free(g);
    CHECK(identity_holds("input A : f32[2, 3, 4]\nO = A * 1\n"
                         "P = transpose(transpose(A, perm=[1, 2, 0]), perm=[2, 0, 1])\n"
                         "Q = concat(slice(A, dim=2, start=0, len=1), slice(A, dim=2, start=1, len=3), dim=2)\n"
                         "output O, P, Q\n", 10, 31) == 10);
    CHECK(identity_holds("input A : f32[3, 5]\ninput B : f32[5, 4]\n"
                         "O = transpose(matmul(A, B), perm=[1, 0])\n"
                         "P = matmul(transpose(B, perm=[1, 0]), transpose(A, perm=[1, 0]))\noutput O, P\n", 10, 32) == 10);
    CHECK(identity_holds("input A : f32[64]\ninput B : f32[64]\n"
                         "O = rsqrt(A) * rsqrt(B)\nP = rsqrt(A * B)\nQ = 1 / sqrt(A * B)\noutput O, P, Q\n", 20, 33) == 20);
    CHECK(identity_holds("input A : f32[4, 16]\nO = rmsnorm(A, dim=1, eps=1e-5)\n"
                         "P = A * rsqrt(mean(sqr(A), dim=-1) + 0.00001)\noutput O, P\n", 20, 34) == 20);
    /* eps matters: without it the values differ (the test can fail) */
    CHECK(identity_holds("input A : f32[4, 16]\nO = rmsnorm(A, dim=1, eps=1e-5)\n"
                         "P = rmsnorm(A, dim=1)\noutput O, P\n", 5, 35) == 0);
}

/* A stop request is seen inside one long matmul, not only between nodes (a 4096 x 11008 x
 * 4096 product in the field took minutes past a search's time limit): with a predicate that
 * turns true at its third poll, a single 256-row product stops with MG_ERR_LIMIT in both
 * evaluators, and the polls came from inside it (two nodes' checks before it, then rows). */
static int polls;
static int third_poll(void *arg) { return (void)arg, ++polls > 2; }
void test_eval_stop_in_matmul(void) {
    ir_graph *g = unit_parse("input A : f32[256, 64]\ninput B : f32[64, 48]\nC = matmul(A, B)\noutput C\n");
    rng r = {7};
    fenv e;
    fenv_alloc(&e, g, &r);
    mg_ctx ctx = {{0}};
    ev_set_stop_fn(third_poll, NULL);
    polls = 0;
    CHECK(frun(g, &e, unit_field(3), &ctx) == MG_ERR_LIMIT && strstr(ctx.msg, "stopped"));
    CHECK_MSG(polls == 3, "%d polls", polls);
    double *in[2], *out[1];
    for (int k = 0; k < 2; k++) {
        int64_t n = ir_numel(&g->nodes[k].shape);
        in[k] = malloc((size_t)n * sizeof(double));
        for (int64_t t = 0; t < n; t++) in[k][t] = rng_uniform(&r) - 0.5;
    }
    out[0] = malloc(256 * 48 * sizeof(double));
    polls = 0, ctx.msg[0] = 0;
    CHECK(ev_float(g, &ctx, 0, (const double *const *)in, out) == MG_ERR_LIMIT && strstr(ctx.msg, "stopped"));
    CHECK_MSG(polls == 3, "%d polls", polls);
    ev_set_stop_fn(NULL, NULL);
    polls = 0;
    CHECK(frun(g, &e, unit_field(3), &ctx) == MG_OK && ev_float(g, &ctx, 0, (const double *const *)in, out) == MG_OK);
    for (int k = 0; k < 2; k++) free(in[k]);
    free(out[0]);
    fenv_free(&e);
    ir_graph_free(g);
}
