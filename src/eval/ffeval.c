/* ffeval: the finite-field reference evaluator (Mirage §5.2, Table 3). Every value is a pair
 * (x_p, x_q) in Z_p x Z_q; + - * / act on both parts; exp(x) = (omega^x_q mod p, none), where
 * "none" (FF_NONE) marks a value with no exponent part, which a Lax program never feeds to a
 * second exp. silu(x) = x / (1 + exp(-x)) is evaluated the same way; 1 + omega^k is never 0
 * because omega has odd order q. Division by zero in Z_p is an error naming the tensor and
 * index; in Z_q it only removes the exponent part (an error if that part is later used).
 * Reached through mg_eval_field (api.c). Equivalence testing (docs/verify.md) runs two
 * programs on the same random inputs and the same omega and compares the results; one test
 * accepts an inequivalent pair with probability at most eps(d, k) (Mirage Theorem 2; sqrt
 * is outside the theorem, see docs/verify.md). */
#include <string.h>

#include "ff.h"
#include "eval.h"

/* Invariant: p[t] < p; q[t] < q or FF_NONE. FF_NONE = 2^32 - 1 lies above both primes,
 * so it is no residue and can mark "no exponent part" in the q array without a separate flag. */
typedef struct fv { /* one tensor: parts p[] and q[] of numel elements */
    uint32_t *p, *q;
} fv;

/* pow tables: an exponent xq < q < 2^31 splits as hi * 2^16 + lo with hi < 2^15, so 65536 +
 * 32768 entries (384 KB) make omega^xq one multiplication instead of a 31-step power. */
typedef struct ffctx {
    const ir_graph *g;
    mg_ctx *ctx;
    ff_field F; /* the test's field */
    uint32_t *pow_lo, *pow_hi; /* omega^i and omega^(i * 2^16): exp in one multiplication */
    ev_exp_log *log; /* ev_field_log: every exponent, in evaluation order */
} ffctx;

/* Appends x to log; past log->max entries the log is marked full (n = -1) and stops. */
static void log_put(ev_exp_log *log, uint32_t x) {
    if (log->n < 0) return;
    if (log->n == log->cap) {
        int64_t cap = log->cap ? 2 * log->cap : 4096;
        uint32_t *v = cap <= log->max ? base_realloc(log->v, (size_t)cap * sizeof *v) : NULL;
        if (!v) {
            log->n = -1;
            return;
        }
        log->v = v, log->cap = cap;
    }
    log->v[log->n++] = x;
}

/* omega^xq in Z_p: the p part of exp (Mirage Table 3). Precondition: xq < q (not FF_NONE),
 * so xq >> 16 < 32768 indexes pow_hi. */
static uint32_t ff_exp(const ffctx *c, uint32_t xq) {
    return ff_mul(c->pow_hi[xq >> 16], c->pow_lo[xq & 0xffff], &c->F.P);
}

/* Unary Lax ops on both parts (Mirage Table 3; docs/verify.md lists them); node indexes n,
 * for messages. sqr and sqrt act on each part and keep FF_NONE. exp and silu use the q part
 * as an exponent and produce none; a none q part here can only come from a division by zero
 * in Z_q, since the Lax check has ruled out a second exp on any path. */
static mg_status unary(const ffctx *c, int node, const ir_node *n, const fv *x, fv *o) {
    int64_t total = ir_numel(&n->shape);
    for (int64_t t = 0; t < total; t++) {
        uint32_t xp = x->p[t], xq = x->q[t];
        switch (n->op) {
        case IR_OP_SQR:
            o->p[t] = ff_mul(xp, xp, &c->F.P);
            o->q[t] = xq == FF_NONE ? FF_NONE : ff_mul(xq, xq, &c->F.Q);
            break;
        case IR_OP_SQRT:
            /* the power map x^((m+1)/4): multiplicative, a square root of every square (ff.h) */
            o->p[t] = ff_sqrt(xp, &c->F.P);
            o->q[t] = xq == FF_NONE ? FF_NONE : ff_sqrt(xq, &c->F.Q);
            break;
        case IR_OP_EXP:
        case IR_OP_SILU: {
            if (xq == FF_NONE) {
                char lb[128];
                return ctx_err(c->ctx, MG_ERR_DIV_ZERO, "'%s' (%s) needs the exponent part of "
                               "element %lld, which a division by zero in Z_q removed",
                               ir_node_label(c->g, node, lb, sizeof lb), ir_ops[n->op].name,
                               (long long)t);
            }
            /* -xq in Z_q is q - xq (0 for 0). ff_inv never sees 0: 1 + omega^k = 0 would give
             * omega^2k = 1, so q | k (q is odd) and omega^k = 1, not -1 */
            if (c->log) log_put(c->log, n->op == IR_OP_EXP || !xq ? xq : c->F.Q.m - xq);
            if (n->op == IR_OP_EXP) o->p[t] = ff_exp(c, xq);
            else /* x * (1 + omega^-x)^-1 */
                o->p[t] = ff_mul(xp, ff_inv(ff_add(1, ff_exp(c, xq ? c->F.Q.m - xq : 0), c->F.P.m), &c->F.P), &c->F.P);
            o->q[t] = FF_NONE;
            break;
        }
        default: MG_ASSERT(!"not a Lax unary op");
        }
    }
    return MG_OK;
}

/* q part of add, sub, mul, div: none in, none out (no exponent part survives). */
static inline uint32_t bin_q(const ff_mod *Q, ir_op op, uint32_t a, uint32_t b) {
    if (a == FF_NONE || b == FF_NONE) return FF_NONE;
    switch (op) {
    case IR_OP_ADD: return ff_add(a, b, Q->m);
    case IR_OP_SUB: return ff_sub(a, b, Q->m);
    default: return ff_mul(a, b, Q); /* MUL, and DIV by a pre-inverted operand */
    }
}

/* Inverts x[0..n) in place in Z_m with one exponentiation (Montgomery's batch trick).
 * Zeros (and FF_NONE) are skipped and left as they are; returns the index of the first zero,
 * or -1. tmp holds n entries.
 * Forward: tmp[i] = product of the non-zero x[0..i). One Fermat inversion of the whole product
 * (about 64 multiplications), then backward: inv = (product of x[0..i])^-1, so x[i]^-1 is
 * inv * tmp[i], and inv * x[i] steps back to the prefix before i. Three multiplications per
 * element instead of one exponentiation each. */
static int64_t batch_inv(uint32_t *x, int64_t n, const ff_mod *m, uint32_t *tmp) {
    uint32_t acc = 1;
    int64_t zero = -1;
    for (int64_t i = 0; i < n; i++) {
        tmp[i] = acc;
        if (x[i] == 0 || x[i] == FF_NONE) {
            if (zero < 0 && x[i] == 0) zero = i;
            continue;
        }
        acc = ff_mul(acc, x[i], m);
    }
    uint32_t inv = ff_inv(acc, m); /* acc is a product of non-zeros */
    for (int64_t i = n - 1; i >= 0; i--) {
        if (x[i] == 0 || x[i] == FF_NONE) continue;
        uint32_t xi = x[i];
        x[i] = ff_mul(inv, tmp[i], m);
        inv = ff_mul(inv, xi, m);
    }
    return zero;
}

/* Binary Lax ops on both parts, with broadcasting (ev_bcast). Division multiplies by inverses
 * of the divisor, computed once per divisor element (not per output element, which can be
 * many more under broadcasting) by batch_inv. A zero in the p part is an error naming the
 * divisor element; a zero in the q part makes that quotient's q part none (docs/verify.md). */
static mg_status binary(const ffctx *c, int node, const ir_node *n, const fv *x, const fv *y, fv *o) {
    ev_bcast b;
    ev_bcast_init(&b, &n->shape, &c->g->nodes[n->in[0]].shape, &c->g->nodes[n->in[1]].shape);
    fv inv = {0};
    uint32_t *tmp = NULL;
    if (n->op == IR_OP_DIV) { /* x / y = x * y^-1: invert y once */
        int64_t ny = ir_numel(&c->g->nodes[n->in[1]].shape);
        inv.p = base_alloc((size_t)ny * 4), inv.q = base_alloc((size_t)ny * 4);
        tmp = base_alloc((size_t)ny * 4);
        if (!inv.p || !inv.q || !tmp) {
            base_free(inv.p), base_free(inv.q), base_free(tmp);
            return ctx_err(c->ctx, MG_ERR_NOMEM, "out of memory");
        }
        memcpy(inv.p, y->p, (size_t)ny * 4), memcpy(inv.q, y->q, (size_t)ny * 4);
        int64_t z = batch_inv(inv.p, ny, &c->F.P, tmp);
        batch_inv(inv.q, ny, &c->F.Q, tmp);
        for (int64_t i = 0; i < ny; i++) /* no inverse in Z_q: no exponent part */
            if (inv.q[i] == 0) inv.q[i] = FF_NONE;
        base_free(tmp);
        if (z >= 0) {
            base_free(inv.p), base_free(inv.q);
            char lb[128];
            return ctx_err(c->ctx, MG_ERR_DIV_ZERO, "division by zero in Z_p at '%s': divisor "
                           "element %lld is 0", ir_node_label(c->g, node, lb, sizeof lb),
                           (long long)z);
        }
        y = &inv;
    }
    int64_t t = 0;
    for (int64_t i0 = 0; i0 < b.n[0]; i0++)
        for (int64_t i1 = 0; i1 < b.n[1]; i1++)
            for (int64_t i2 = 0; i2 < b.n[2]; i2++) {
                int64_t xa = i0 * b.sa[0] + i1 * b.sa[1] + i2 * b.sa[2];
                int64_t yb = i0 * b.sb[0] + i1 * b.sb[1] + i2 * b.sb[2];
                for (int64_t i3 = 0; i3 < b.n[3]; i3++, t++) {
                    int64_t ia = xa + i3 * b.sa[3], ib = yb + i3 * b.sb[3];
                    uint32_t ap = x->p[ia], bp = y->p[ib];
                    /* p part; div is a multiplication by the inverted y (default case) */
                    switch (n->op) {
                    case IR_OP_ADD: o->p[t] = ff_add(ap, bp, c->F.P.m); break;
                    case IR_OP_SUB: o->p[t] = ff_sub(ap, bp, c->F.P.m); break;
                    default: o->p[t] = ff_mul(ap, bp, &c->F.P); break;
                    }
                    o->q[t] = bin_q(&c->F.Q, n->op, x->q[ia], y->q[ib]);
                }
            }
    base_free(inv.p), base_free(inv.q);
    return MG_OK;
}

/* sum over groups (ev_reduce) on both parts. Terms are added as plain 64-bit integers and
 * reduced once per output: group <= 2^31 - 1 terms, each < 2^32, sum < 2^63. The q part is
 * none if any term's is (FF_NONE is added too, but that sum is then discarded). max is not
 * Lax and never reaches this evaluator. */
static void reduce_sum(const ffctx *c, const ir_node *n, const fv *x, fv *o) {
    ev_reduce r;
    ev_reduce_init(&r, n, &c->g->nodes[n->in[0]].shape);
    for (int64_t a = 0; a < r.outer; a++)
        for (int64_t j = 0; j < r.n_out; j++)
            for (int64_t i = 0; i < r.inner; i++) {
                int64_t base = (a * r.n_out * r.group + j * r.group) * r.inner + i;
                uint64_t sp = 0, sq = 0;
                int none = 0;
                for (int64_t k = 0; k < r.group; k++) { /* < 2^32 terms of < 2^32: no overflow */
                    sp += x->p[base + k * r.inner];
                    uint32_t q = x->q[base + k * r.inner];
                    none |= q == FF_NONE;
                    sq += q;
                }
                int64_t t = (a * r.n_out + j) * r.inner + i;
                o->p[t] = ff_red(sp, &c->F.P);
                o->q[t] = none ? FF_NONE : ff_red(sq, &c->F.Q);
            }
}

/* row[j] += a * b[j] as two 64-bit lanes per element: lo gets the low 32 bits of each 64-bit
 * product, hi the high 32 bits, so neither overflows before 2^32 terms, and the loop is plain
 * 64-bit multiplies and adds that the compiler runs 4 or 8 wide (target_clones). */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
static void mac_row(uint64_t *restrict lo, uint64_t *restrict hi, uint32_t a,
                    const uint32_t *restrict b, int64_t n) {
    for (int64_t j = 0; j < n; j++) {
        uint64_t p = (uint64_t)a * b[j]; /* 32 x 32 -> 64: one vpmuludq lane */
        lo[j] += p & 0xffffffffu;
        hi[j] += p >> 32;
    }
}

/* Columns j0..j0 + 16 of rows a0 and a1 (each K long) times b (row stride N): the 64-bit lo
 * and hi sums of mac_row, kept in registers over all of K. out: lo0, hi0, lo1, hi1. */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))
static void mac_tile16(const uint32_t *restrict a0, const uint32_t *restrict a1,
                       const uint32_t *restrict b, int64_t K, int64_t N, uint64_t out[4][16]) {
    uint64_t lo0[16] = {0}, hi0[16] = {0}, lo1[16] = {0}, hi1[16] = {0};
    for (int64_t k = 0; k < K; k++) {
        const uint32_t *bk = b + k * N;
        uint64_t x0 = a0[k], x1 = a1[k];
        for (int j = 0; j < 16; j++) {
            uint64_t p0 = x0 * bk[j], p1 = x1 * bk[j];
            lo0[j] += p0 & 0xffffffffu, hi0[j] += p0 >> 32;
            lo1[j] += p1 & 0xffffffffu, hi1[j] += p1 >> 32;
        }
    }
    memcpy(out[0], lo0, sizeof lo0), memcpy(out[1], hi0, sizeof hi0);
    memcpy(out[2], lo1, sizeof lo1), memcpy(out[3], hi1, sizeof hi1);
}

/* One part of a matmul: out[i][j] = sum_k a[i][k] b[k][j] mod m; 1 when a stop request
 * (ev_stopping) ended it early, else 0. Each product (< 2^64) is
 * split into its low and high 32 bits, summed separately in 64-bit lanes (no overflow before
 * 2^32 terms; K <= IR_MAX_DIM < 2^31) and reduced once per output. Rows go in pairs and
 * columns 16 at a time with the sums in registers (mac_tile16); the last N % 16 columns
 * stream through mac_row with acc (2 M JB entries). Any 32-bit operands: an FF_NONE in the
 * q part gives a meaningless sum there, which none_q then overwrites. */
static int matmul_part(const uint32_t *a, const uint32_t *b, uint32_t *o, int64_t M, int64_t K,
                       int64_t N, const ff_mod *mm, uint64_t *acc, int64_t JB) {
    uint64_t r32 = ((uint64_t)1 << 32) % mm->m; /* 2^32 mod m, to recombine hi * 2^32 + lo */
    /* hi * 2^32 + lo mod m by Barrett (the modulus is drawn per test): (hi mod m) r32 < 2^64 - 2^33 */
#define RECOMBINE(hi, lo) ff_red((uint64_t)ff_red(hi, mm) * r32 + ff_red(lo, mm), mm)
    int64_t N16 = N - N % 16;
    /* rows in pairs, 16 columns at a time, accumulators in registers */
    for (int64_t i = 0; i < M; i += 2) {
        if (i % 32 == 0 && ev_stopping()) return 1;
        const uint32_t *a0 = a + i * K, *a1 = i + 1 < M ? a0 + K : a0;
        for (int64_t j0 = 0; j0 < N16; j0 += 16) {
            uint64_t s[4][16];
            mac_tile16(a0, a1, b + j0, K, N, s);
            for (int r = 0; r < 2 && i + r < M; r++)
                for (int j = 0; j < 16; j++)
                    o[(i + r) * N + j0 + j] = RECOMBINE(s[2 * r + 1][j], s[2 * r][j]);
        }
    }
    if (N16 == N) return 0;
    /* the last N % 16 columns: rows of b streamed through mac_row */
    int64_t jn = N - N16;
    MG_ASSERT(jn <= JB);
    memset(acc, 0, (size_t)(2 * M * jn) * sizeof *acc); /* rows of lo, hi: stride jn */
    for (int64_t k = 0; k < K; k++)
        for (int64_t i = 0; i < M; i++)
            mac_row(acc + 2 * i * jn, acc + (2 * i + 1) * jn, a[i * K + k], b + k * N + N16, jn);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < jn; j++) {
            o[i * N + N16 + j] = RECOMBINE(acc[(2 * i + 1) * jn + j], acc[2 * i * jn + j]);
        }
#undef RECOMBINE
    return 0;
}

/* The q part of a matmul whose operands may hold FF_NONE (a value out of exp has no Z_q
 * component): out[i][j] is NONE when some term is, that is when row i of a or column j of b
 * holds one. rows (M) and cols (N) are scratch. */
static void none_q(const uint32_t *a, const uint32_t *b, uint32_t *o, int64_t M, int64_t K, int64_t N,
                   uint8_t *rows, uint8_t *cols) {
    int any = 0;
    memset(rows, 0, (size_t)M), memset(cols, 0, (size_t)N);
    for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < K; k++) rows[i] |= a[i * K + k] == FF_NONE;
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++) cols[j] |= b[k * N + j] == FF_NONE;
    for (int64_t i = 0; i < M; i++) any |= rows[i];
    for (int64_t j = 0; j < N; j++) any |= cols[j];
    for (int64_t i = 0; any && i < M; i++)
        for (int64_t j = 0; j < N; j++)
            if (rows[i] || cols[j]) o[i * N + j] = FF_NONE;
}

/* Field matmul, one batch matrix at a time (ev_matmul offsets give broadcast batch dims).
 * The M * JB accumulators (16 bytes each) for the last N % 16 columns serve both parts. */
static mg_status matmul(const ffctx *c, const ir_node *n, const fv *x, const fv *y, fv *o) {
    ev_matmul m;
    const int64_t JB = 16;
    if (ev_matmul_init(&m, &n->shape, &c->g->nodes[n->in[0]].shape, &c->g->nodes[n->in[1]].shape))
        return ctx_err(c->ctx, MG_ERR_NOMEM, "out of memory");
    uint64_t *acc = base_alloc((size_t)(2 * m.m * JB) * sizeof *acc);
    uint8_t *seen = base_alloc((size_t)(m.m + m.n));
    if (!acc || !seen) {
        base_free(acc), base_free(seen);
        ev_matmul_free(&m);
        return ctx_err(c->ctx, MG_ERR_NOMEM, "out of memory");
    }
    int stopped = 0;
    for (int64_t t = 0; t < m.batch && !stopped; t++) {
        int64_t oo = t * m.m * m.n;
        stopped = matmul_part(x->p + m.a_off[t], y->p + m.b_off[t], o->p + oo, m.m, m.k, m.n, &c->F.P, acc, JB) ||
                  matmul_part(x->q + m.a_off[t], y->q + m.b_off[t], o->q + oo, m.m, m.k, m.n, &c->F.Q, acc, JB);
        if (!stopped) none_q(x->q + m.a_off[t], y->q + m.b_off[t], o->q + oo, m.m, m.k, m.n, seen, seen + m.m);
    }
    base_free(acc), base_free(seen);
    ev_matmul_free(&m);
    return stopped ? ev_check_stop(c->ctx) : MG_OK;
}

/* Computes node i (not an input: ev_field reads those in place) into v[i] (allocated by the
 * caller) from its operands. */
static mg_status run_node(ffctx *c, int i, fv *v) {
    const ir_node *n = &c->g->nodes[i];
    fv *o = &v[i];
    int64_t total = ir_numel(&n->shape);
    switch (ir_ops[n->op].kind) {
    case IR_KIND_SOURCE: /* num / den, den a power of ten: invertible mod p, q */
        MG_ASSERT(n->op == IR_OP_CONST);
        o->p[0] = ff_mul(ff_from_i64(n->num, c->F.P.m), ff_inv(ff_from_i64(n->den, c->F.P.m), &c->F.P), &c->F.P);
        o->q[0] = ff_mul(ff_from_i64(n->num, c->F.Q.m), ff_inv(ff_from_i64(n->den, c->F.Q.m), &c->F.Q), &c->F.Q);
        return MG_OK;
    case IR_KIND_UNARY: return unary(c, i, n, &v[n->in[0]], o);
    case IR_KIND_BINARY: return binary(c, i, n, &v[n->in[0]], &v[n->in[1]], o);
    case IR_KIND_REDUCE: reduce_sum(c, n, &v[n->in[0]], o); return MG_OK;
    case IR_KIND_MATMUL: return matmul(c, n, &v[n->in[0]], &v[n->in[1]], o);
    case IR_KIND_GRAPH:
    case IR_KIND_BLOCK: MG_ASSERT(!"μGraph ops run in run_block / run_kernel"); return MG_OK;
    case IR_KIND_COMPOUND: MG_ASSERT(!"a compound is never a node"); return MG_OK;
    case IR_KIND_SEQ: return ctx_err(c->ctx, MG_ERR_UNSUPPORTED, "seqattn is not Lax: it has no meaning over a finite field");
    case IR_KIND_LAYOUT: {
        const fv *x = &v[n->in[0]], *y = n->n_in > 1 ? &v[n->in[1]] : NULL;
        if (n->op == IR_OP_RESHAPE) {
            memcpy(o->p, x->p, (size_t)total * 4), memcpy(o->q, x->q, (size_t)total * 4);
            return MG_OK;
        }
        int64_t *map = ev_layout_map(c->g, n);
        if (!map) return ctx_err(c->ctx, MG_ERR_NOMEM, "out of memory");
        for (int64_t t = 0; t < total; t++) {
            const fv *s = map[t] >= 0 ? x : y;
            int64_t k = map[t] >= 0 ? map[t] : -map[t] - 1;
            o->p[t] = s->p[k], o->q[t] = s->q[k];
        }
        base_free(map);
        return MG_OK;
    }
    }
    return MG_OK;
}

/* pow_lo[i] = omega^i (i < 2^16) and pow_hi[i] = omega^(i * 2^16) (i < 2^15), for ff_exp.
 * 98304 multiplications per evaluation. On failure ev_field frees what was allocated. */
static mg_status build_tables(ffctx *c) {
    c->pow_lo = base_alloc(65536 * sizeof(uint32_t));
    c->pow_hi = base_alloc(32768 * sizeof(uint32_t));
    if (!c->pow_lo || !c->pow_hi) return ctx_err(c->ctx, MG_ERR_NOMEM, "out of memory");
    c->pow_lo[0] = 1;
    for (int i = 1; i < 65536; i++) c->pow_lo[i] = ff_mul(c->pow_lo[i - 1], c->F.omega, &c->F.P);
    uint32_t step = ff_mul(c->pow_lo[65535], c->F.omega, &c->F.P); /* omega^65536 */
    c->pow_hi[0] = 1;
    for (int i = 1; i < 32768; i++) c->pow_hi[i] = ff_mul(c->pow_hi[i - 1], step, &c->F.P);
    return MG_OK;
}

/* Contract in eval.h (mg_eval_field in mugen.h). The Lax check comes first: relu and max have
 * no field meaning, and a second exp on a path would need a q part the first one removed.
 * omega must have order exactly q (omega != 1 and omega^q = 1, q prime), so that
 * x -> omega^x is well defined on Z_q and exp(a + b) = exp(a) exp(b) holds (Mirage §5.2).
 * Values are freed after their last reader; 8 bytes per element (p and q parts) is what
 * ev_check_size budgets. */
/* ---- μGraphs: the same block-by-block walk as feval.c's run_block, on both parts ---- */

static void copy_tile(fv *tile, const fv *full, const ir_shape *ts, const ir_shape *fs,
                      const int64_t off[4], int scatter) {
    ev_tile_copy(tile->p, full->p, 4, ts, fs, off, scatter);
    ev_tile_copy(tile->q, full->q, 4, ts, fs, off, scatter);
}

/* A block graph's tiles in the field evaluator, for ev_block_walk. */
typedef struct ffblock {
    ffctx bc; /* the evaluator's context with g = the block graph */
    fv *tv;   /* per block-graph node, its tile (savers: none) */
    const fv *kin;
    fv *outs;
    const ir_shape *out_shape;
} ffblock;

static mg_status fb_run(void *self, int i) {
    ffblock *f = self;
    return run_node(&f->bc, i, f->tv);
}

static void fb_copy(void *self, int how, int i, const int64_t off[4]) {
    ffblock *f = self;
    const ir_graph *b = f->bc.g;
    const ir_node *nd = &b->nodes[i];
    if (how == EV_GATHER) copy_tile(&f->tv[i], &f->kin[nd->index], &nd->shape, &b->kin_shape[nd->index], off, 0);
    else if (how == EV_PLACE) copy_tile(&f->tv[nd->in[0]], &f->tv[i], &b->nodes[nd->in[0]].shape, &nd->shape, off, 1);
    else copy_tile(&f->tv[nd->in[0]], &f->outs[nd->index], &nd->shape, &f->out_shape[nd->index], off, 1);
}

static void fb_add(void *self, int i, int first) {
    ffblock *f = self;
    const ir_node *nd = &f->bc.g->nodes[i];
    const fv *x = &f->tv[nd->in[0]];
    fv *a = &f->tv[i];
    int64_t m = ir_numel(&nd->shape);
    if (first) {
        memcpy(a->p, x->p, (size_t)m * 4), memcpy(a->q, x->q, (size_t)m * 4);
        return;
    }
    for (int64_t t = 0; t < m; t++) a->p[t] = ff_add(a->p[t], x->p[t], f->bc.F.P.m), a->q[t] = bin_q(&f->bc.F.Q, IR_OP_ADD, a->q[t], x->q[t]);
}

/* Runs block graph b over the whole grid (ev_block_walk; see feval.c run_block). */
static mg_status run_block(const ffctx *c, const ir_graph *b, const fv *kin, fv *outs,
                           const ir_shape *out_shape) {
    int n = b->n_nodes;
    ffblock f = {.bc = *c, .kin = kin, .outs = outs, .out_shape = out_shape};
    f.bc.g = b;
    f.tv = base_calloc((size_t)n + 1, sizeof *f.tv);
    mg_status rc = f.tv ? MG_OK : ctx_err(c->ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; !rc && i < n; i++) {
        size_t bytes = (size_t)ir_numel(&b->nodes[i].shape) * 4;
        if (b->nodes[i].op == IR_OP_SAVE) continue;
        f.tv[i].p = base_alloc(bytes), f.tv[i].q = base_alloc(bytes);
        if (!f.tv[i].p || !f.tv[i].q) rc = ctx_err(c->ctx, MG_ERR_NOMEM, "out of memory");
    }
    ev_block_ops ops = {&f, fb_run, fb_copy, fb_add};
    if (!rc) rc = ev_block_walk(b, c->ctx, &ops);
    for (int i = 0; f.tv && i < n; i++) base_free(f.tv[i].p), base_free(f.tv[i].q);
    base_free(f.tv);
    return rc;
}

/* KERNEL node i; outputs are nodes i .. i + n_saves - 1, all filled when index 0 runs. */
static mg_status run_kernel(ffctx *c, int i, fv *v) {
    const ir_graph *g = c->g;
    const ir_node *n = &g->nodes[i];
    const ir_graph *b = n->body;
    if (n->index > 0) {
        MG_ASSERT(v[i].p != NULL);
        return MG_OK;
    }
    fv kin[IR_MAX_IN], outs[IR_MAX_IN];
    ir_shape shapes[IR_MAX_IN];
    MG_ASSERT(b->n_outputs <= IR_MAX_IN && i + b->n_outputs <= g->n_nodes);
    for (int k = 0; k < n->n_in; k++) kin[k] = v[n->in[k]];
    for (int k = 0; k < b->n_outputs; k++) {
        MG_ASSERT(g->nodes[i + k].body == b && g->nodes[i + k].index == k);
        shapes[k] = g->nodes[i + k].shape;
        size_t bytes = (size_t)ir_numel(&shapes[k]) * 4;
        if (!v[i + k].p) v[i + k].p = base_alloc(bytes), v[i + k].q = base_alloc(bytes);
        if (!v[i + k].p || !v[i + k].q) return ctx_err(c->ctx, MG_ERR_NOMEM, "out of memory");
        outs[k] = v[i + k];
    }
    return run_block(c, b, kin, outs, shapes);
}

mg_status ev_field(const ir_graph *g, mg_ctx *ctx, const ff_field *F, const uint32_t *const *in_p,
                   const uint32_t *const *in_q, uint32_t *const *out_p, uint32_t *const *out_q) {
    return ev_field_log(g, ctx, F, in_p, in_q, out_p, out_q, NULL);
}

mg_status ev_field_log(const ir_graph *g, mg_ctx *ctx, const ff_field *F, const uint32_t *const *in_p,
                       const uint32_t *const *in_q, uint32_t *const *out_p, uint32_t *const *out_q,
                       ev_exp_log *log) {
    char why[512];
    int lax = ir_is_lax(g, why, sizeof why);
    if (lax < 0) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    if (!lax)
        return ctx_err(ctx, MG_ERR_UNSUPPORTED, "the finite-field evaluator needs a Lax "
                       "program: %s", why);
    if (F->omega <= 1 || F->omega >= F->P.m || ff_pow(F->omega, F->Q.m, &F->P) != 1)
        return ctx_err(ctx, MG_ERR_INVALID, "omega = %u is not a q-th root of unity other than 1 "
                       "in Z_%u", F->omega, F->P.m);
    ffctx c = {.g = g, .ctx = ctx, .F = *F, .log = log};
    fv *v = base_calloc((size_t)g->n_nodes + 1, sizeof *v);
    uint8_t *borrowed = base_calloc((size_t)g->n_nodes + 1, 1); /* v[i] is the caller's input */
    int *last = ev_last_use(g);
    mg_status rc = !v || !last || !borrowed ? ctx_err(ctx, MG_ERR_NOMEM, "out of memory") : build_tables(&c);
    int n_in = 0;
#define FREE_V(i) (borrowed[i] ? (void)0 : (base_free(v[i].p), base_free(v[i].q)), v[i].p = v[i].q = NULL)
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        if ((rc = ev_check_size(g, ctx, i, 8))) break;
        if (g->nodes[i].op == IR_OP_INPUT) { /* used in place: read, never written */
            v[i].p = (uint32_t *)in_p[n_in], v[i].q = (uint32_t *)in_q[n_in];
            borrowed[i] = 1, n_in++;
        } else if (g->nodes[i].op == IR_OP_KERNEL) {
            if ((rc = run_kernel(&c, i, v))) break;
        } else {
            size_t bytes = (size_t)ir_numel(&g->nodes[i].shape) * 4;
            v[i].p = base_alloc(bytes), v[i].q = base_alloc(bytes);
            if (!v[i].p || !v[i].q) {
                rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory evaluating node %d", i);
                break;
            }
            if ((rc = run_node(&c, i, v))) break;
        }
        for (int k = 0; k < g->nodes[i].n_in; k++) {
            int a = g->nodes[i].in[k];
            if (last[a] == i) FREE_V(a);
        }
    }
    for (int k = 0; k < g->n_outputs && !rc; k++) {
        size_t bytes = (size_t)ir_numel(&g->nodes[g->outputs[k]].shape) * 4;
        memcpy(out_p[k], v[g->outputs[k]].p, bytes);
        memcpy(out_q[k], v[g->outputs[k]].q, bytes);
    }
    for (int i = 0; v && borrowed && i < g->n_nodes; i++) FREE_V(i);
#undef FREE_V
    base_free(v), base_free(borrowed), base_free(last), base_free(c.pow_lo), base_free(c.pow_hi);
    return rc;
}
