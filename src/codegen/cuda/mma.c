/* codegen/cuda/mma: block matmuls on tensor cores (mma.sync through mg_mm_tc into shared
 * memory, with an elementwise epilogue, or mg_mm_acc into register accumulators, stored after
 * the loop) and attention chains (mg_chain, mg_chain_wg: scores in registers, FlashAttention's
 * inner step), with wgmma's core-matrix tile copies. Device side: cuda/lib/mma.cuh, chain.cuh
 * and wgmma.cuh. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../cg_internal.h"
#include "../../eval/eval.h"

/* Can block matmul j run on tensor cores (whole warps, f16/bf16 dtype)? */
static int tc_matmul(const em *E, int j) {
    return E->k->threads % 32 == 0 && E->g->nodes[j].dtype != MG_F32;
}

/* The stored tensor holding node j's value: j, or for a one-iteration accumulator read in
 * place of its operand, that operand (opt/inline.c). */
static int stored_as(const em *E, int j) {
    while (E->g->nodes[j].op == IR_OP_ACCUM && !E->k->t[j].mat) j = E->g->nodes[j].in[0];
    return j;
}

/* How mg_mm_tile reads its operands' fragments (the LA, LB modes of the prelude) for a
 * product of depth K and width N in the mma's type (bf: bf16, else f16); a may be NULL. */
static void frag_modes(const op_tensor *a, const op_tensor *b, int bf, int64_t K, int64_t N, int *la, int *lb) {
    mg_dtype mt = bf ? MG_BF16 : MG_F16;
    int batch_ok = b->stride[0] % 8 == 0 && b->stride[1] % 8 == 0 && (!a || (a->stride[0] % 8 == 0 && a->stride[1] % 8 == 0));
    /* fragments by ldmatrix: operands in the mma's type, 16-byte rows, whole k-steps */
    /* or f16 tiles for a bf16 product: loaded the same way, converted in registers */
    int cva = a && bf && a->store == MG_F16, cvb = bf && b->store == MG_F16;
    *la = !a || a->stride[3] != 1 || !batch_ok || K % 16 ? 0
          : (a->store == mt || cva) && a->stride[2] % 8 == 0 ? (cva ? 3 : 1)
          : a->store == MG_F32 && a->stride[2] % 2 == 0 ? 2 : 0;
    *lb = (b->store != mt && !cvb) || !batch_ok || K % 16 ? 0
          : b->stride[3] == 1 && b->stride[2] % 8 == 0 && N % 8 == 0 ? (cvb ? 3 : 1)
          : b->stride[2] == 1 && b->stride[3] % 8 == 0 ? (cvb ? 4 : 2) : 0;
    /* a swizzled tile (op_tensor.tc.swz) is read by ldmatrix.trans only: mode | swz << 4 */
    if (b->tc.swz) *lb = *lb == 1 || *lb == 3 ? *lb | b->tc.swz << 4 : -1;
}

/* node j's value as the body of a lambda over vr_, the value of node `in` (an epilogue) */
static void epilogue(em *E, int j, int in) {
    coord c0 = {"0", "0", "0", "0"};
    cg_mask_epilogue_open(E, j); /* a reduced dim's values past mg_L: 0 (mask.c) */
    sb_puts(E->sb, "[](float vr_) { return ");
    E->reg_node = in, E->nomask = 1;
    cg_expr(E, E->sb, j, c0, 1);
    E->reg_node = -1, E->nomask = 0;
    sb_puts(E->sb, "; }");
    cg_mask_epilogue_close(E, j);
}

/* The value of node j's expression where the matmul `in` is 0 (its other operands constants),
 * in *v; 0 when it reads anything else (codegen then masks element by element). */
static int at_zero(const em *E, int j, int in, double *v) {
    const ir_node *n = &E->g->nodes[j];
    ir_kind k = ir_ops[n->op].kind;
    if (j == in) return *v = 0, 1;
    if (n->op == IR_OP_CONST) return *v = n->value, 1;
    if (E->k->t[j].mat) return 0; /* a stored tile: not a constant of the epilogue */
    if ((n->op == IR_OP_ACCUM || n->op == IR_OP_RESHAPE) && n->n_in == 1) return at_zero(E, n->in[0], in, v);
    if (k != IR_KIND_UNARY && k != IR_KIND_BINARY) return 0;
    double a = 0, b = 0;
    if (!at_zero(E, n->in[0], in, &a) || (k == IR_KIND_BINARY && !at_zero(E, n->in[1], in, &b))) return 0;
    *v = ev_scalar(n->op, a, b);
    return 1;
}

/* A chain's scores e over its product in: where only its columns follow a reduced dim and
 * e(0) is finite (mg_mask0: the zeros past L give e(0) there, taken off the row sums), else as
 * any epilogue (a select an element, mask.c) */
static void chain_epilogue(em *E, int e, int in) {
    double f0 = 0;
    if (cg_lbits(E, e) != 8u || !at_zero(E, e, in, &f0) || !isfinite(f0) || fabs(f0) > 1e30) {
        epilogue(E, e, in);
        return;
    }
    coord c0 = {"0", "0", "0", "0"};
    sb_puts(E->sb, "mg_mask0([](float vr_) { return ");
    E->reg_node = in, E->nomask = 1;
    cg_expr(E, E->sb, e, c0, 1);
    E->reg_node = -1, E->nomask = 0;
    sb_puts(E->sb, "; }, mg_L - (");
    cg_lbase(E, E->sb, e, 3);
    char lit[48];
    snprintf(lit, sizeof lit, "%.9g", (double)(float)f0);
    sb_printf(E->sb, "), %s%sf)", lit, strpbrk(lit, ".e") ? "" : ".0");
}

/* a block matmul on tensor cores: into shared memory (mg_mm_tc; through the elementwise
 * epilogue of node `out` when out != j, as fuse.mm), or, for a register accumulator, added to
 * the warp's fragments r_<accumulator> (mg_mm_acc) */
static int step_matmul_tc(em *E, int j, int out) {
    const ir_node *n = &E->g->nodes[j];
    if (!tc_matmul(E, j)) return 0;
    int ia = stored_as(E, n->in[0]), ib = stored_as(E, n->in[1]);
    const op_tensor *a = &E->k->t[ia], *b = &E->k->t[ib], *c = &E->k->t[out];
    int bf = op_mm_bf16(a, b), acc = E->k->t[j].fuse.regacc, la, lb;
    frag_modes(a, b, bf, a->dim[3], c->dim[3], &la, &lb);
    /* two f32 tiles of f16 values (scores of intermediates): each split in f16 halves */
    if (!bf && a->store == MG_F32 && b->store == MG_F32) la = lb = 8;
    /* a bf16 product's f32 B (V beside a softmax's P): split in bf16 halves */
    else if (bf && b->store == MG_F32 && a->store != MG_F32 && la >= 0) lb = 10;
    if (lb < 0 && !E->rc) E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: a swizzled tile read without ldmatrix");
    int64_t T;
    int SK;
    op_regacc_split(E->g, E->k, j, &T, &SK);
    cg_uses(E, CG_LIB_MMA);
    if (E->k->t[j].tc.tma) { /* on wgmma from the TMA stages (tma.cuh) */
        if (E->k->tma == 2) /* the rows padded to a box's (op_tma_rows) */
            sb_printf(E->sb, "    mg_tma_mm_t<%s, %" PRId64 ", %" PRId64 ">(r_%s, %s, %s);\n", bf ? "true" : "false", op_tma_rows(c),
                      a->dim[3], E->names[acc], E->names[ia], E->names[ib]);
        else
            sb_printf(E->sb, "    mg_tma_mm<%s, %d, %" PRId64 ", %" PRId64 ", %" PRId64 ">(r_%s, %s, %s);\n", bf ? "true" : "false",
                      E->k->tma_nw, c->dim[2], c->dim[3], a->dim[3], E->names[acc], E->names[ia], E->names[ib]);
        return 1;
    }
    if (acc >= 0)
        sb_printf(E->sb, "    mg_mm_acc<%s, %d, %d, %" PRId64 ", %d>(r_%s, ", bf ? "true" : "false", la, lb, T, SK,
                  E->names[acc]);
    else {
        /* the tiles start on the warp after the previous matmul's in this barrier interval:
         * independent small matmuls (LoRA's X W and X A, each a few long-K tiles) then run on
         * different warps side by side instead of one after another on warp 0 */
        const int64_t *d = c->dim;
        int64_t tiles = d[0] * d[1] * ((d[2] + 15) / 16) * ((d[3] + 31) / 32), warps = E->k->threads / 32;
        sb_printf(E->sb, "    mg_mm_tc<%s, %d, %d, %d>(%s, ", bf ? "true" : "false", la, lb, E->mm_w0, E->names[out]);
        E->mm_w0 = (int)((E->mm_w0 + tiles) % (warps > 0 ? warps : 1));
    }
    sb_printf(E->sb, "%s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64, E->names[ia],
              E->names[ib], c->dim[0], c->dim[1], c->dim[2], c->dim[3], a->dim[3]);
    const op_tensor *ts[3] = {a, b, c};
    for (int q = 0; q < (acc >= 0 ? 2 : 3); q++)
        for (int d = 0; d < 4; d++) sb_printf(E->sb, ", %" PRId64, ts[q]->stride[d]);
    if (acc < 0 && out != j) { /* the epilogue: out's expression with the matmul's value as vr_ */
        sb_puts(E->sb, ", ");
        epilogue(E, out, j);
    } else if (acc < 0) sb_puts(E->sb, ", mg_idf{}");
    sb_puts(E->sb, ");\n");
    return 1;
}

/* Strategies (block.c's table): a matmul step on tensor cores, or an elementwise step whose
 * operand is a matmul (fuse.mm) on tensor cores with it as the epilogue. */
int cg_cuda_matmul(em *E, int j) { return E->g->nodes[j].op == IR_OP_MATMUL && step_matmul_tc(E, j, j); }
int cg_cuda_matmul_epilogue(em *E, int j) { return E->k->t[j].fuse.mm >= 0 && step_matmul_tc(E, E->k->t[j].fuse.mm, j); }

/* Before the loop: register accumulator acc's fragments, zeroed. */
void cg_cuda_regacc_decl(em *E, int acc) {
    if (E->k->tma) {
        int64_t n = E->k->tma == 2 ? op_tma_rows(&E->k->t[acc]) : E->k->tma_nw; /* swapped: the rows */
        sb_printf(E->sb, "    float r_%s[%" PRId64 "] = {}; /* %s's sum: this warpgroup's 64 x %" PRId64 " piece%s */\n",
                  E->names[acc], n / 2, E->names[acc], n, E->k->tma == 2 ? ", transposed" : "");
        return;
    }
    int64_t T;
    int SK;
    op_regacc_split(E->g, E->k, E->k->t[acc].fuse.regacc, &T, &SK);
    sb_printf(E->sb, "    float r_%s[%" PRId64 "][4][4] = {}; /* %s's sum: this warp's fragments */\n",
              E->names[acc], T, E->names[acc]);
}

/* After the loop: a register accumulator's sum (the warps' fragments) to its shared-memory
 * tensor: through mg_chain_put for a chain's, else mg_mm_acc_store. */
void cg_cuda_store_regacc(em *E, int acc) {
    const op_tensor *t = &E->k->t[acc];
    int mm = t->fuse.regacc;
    int64_t T;
    int SK;
    op_regacc_split(E->g, E->k, mm, &T, &SK);
    cg_uses(E, E->k->t[mm].chain.of >= 0 ? CG_LIB_CHAIN : CG_LIB_MMA);
    if (E->k->t[mm].chain.of >= 0) {
        const op_tensor *h = &E->k->t[E->k->t[mm].chain.of];
        sb_printf(E->sb, "    mg_chain_put<%d, %" PRId64 ", %d, %d>(%s, r_%s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                  ", mg_idf{});\n", E->k->threads / 32, t->dim[3] / 32, h->chain.ts, h->chain.sk, E->names[acc], E->names[acc], t->dim[2],
                  t->dim[3], t->stride[2], t->stride[3]);
        return;
    }
    if (E->k->tma) {
        cg_uses(E, CG_LIB_TMA);
        if (E->k->tma == 2)
            sb_printf(E->sb, "    mg_tma_acc_store_t<%" PRId64 ", %" PRId64 ">(%s, r_%s, %" PRId64 ", %" PRId64 ");\n", op_tma_rows(t),
                      t->dim[2], E->names[acc], E->names[acc], t->stride[2], t->stride[3]);
        else
            sb_printf(E->sb, "    mg_tma_acc_store<%d, %" PRId64 ">(%s, r_%s, %" PRId64 ", %" PRId64 ");\n", E->k->tma_nw, t->dim[3],
                      E->names[acc], E->names[acc], t->stride[2], t->stride[3]);
        return;
    }
    char scratch[48] = "(float *)0";
    if (SK > 1 && E->k->acc_scratch >= 0) snprintf(scratch, sizeof scratch, "(float *)(smem + %" PRId64 ")", E->k->acc_scratch);
    sb_printf(E->sb, "    mg_mm_acc_store<%" PRId64 ", %d>(%s, r_%s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64, T, SK,
              E->names[acc], E->names[acc], scratch, t->dim[0], t->dim[1], t->dim[2], t->dim[3]);
    for (int d = 0; d < 4; d++) sb_printf(E->sb, ", %" PRId64, t->stride[d]);
    sb_puts(E->sb, ");\n");
}

/* Iterator j of a wgmma chain: its tile in the core-matrix layout (opt.h): piece e is row
 * k % 8 of block e / 8, so eight threads fill one 128-byte block and a warp 512 contiguous
 * bytes. */
int cg_cuda_iter_wg(em *E, int j, const char *gname, const int64_t fst[4]) {
    const op_tensor *t = &E->k->t[j];
    if (!t->tc.wg) return 0;
    int64_t K = t->dim[2], N = t->dim[3];
    int as = t->pipe.stages || E->async;
    if (as) cg_uses(E, CG_LIB_COPY);
    sb_printf(E->sb, "    #pragma unroll 4\n    for (int e = threadIdx.x; e < %" PRId64 "; e += %d) {\n", K * N / 8,
              E->k->threads);
    sb_printf(E->sb, "        const long long k_ = e / %" PRId64 " * 8 + e %% 8, n_ = e / 8 %% %" PRId64 " * 8;\n", N, N / 8);
    sb_printf(E->sb, as ? "        mg_cp16(&%s[e * 8], &%s[base_ + k_ * %" PRId64 "LL + n_]);\n    }\n    }\n"
                        : "        *(uint4 *)&%s[e * 8] = *(const uint4 *)&%s[base_ + k_ * %" PRId64 "LL + n_];\n    }\n    }\n",
              E->names[j], gname, fst[2]);
    return 1;
}

/* Position of node j among the block program's steps, or -1. */
static int step_pos(const op_kernel *k, int j) {
    for (int s = 0; s < k->n_steps; s++)
        if (k->step[s] == j) return s;
    return -1;
}

/* A chain (opt/chain.c) at the first of its two writers' steps: mg_chain into the
 * register accumulator, or into local fragments stored right after (mg_chain_put). */
static void step_chain(em *E, int e) {
    const op_tensor *h = &E->k->t[e];
    const ir_node *m1 = &E->g->nodes[h->fuse.mm], *m2 = &E->g->nodes[h->chain.mm];
    const op_tensor *a = &E->k->t[stored_as(E, m1->in[0])], *b = &E->k->t[stored_as(E, m1->in[1])];
    const op_tensor *v = &E->k->t[stored_as(E, m2->in[1])], *o = &E->k->t[h->chain.mm];
    const op_tensor *w = &E->k->t[h->chain.mw], *r = &E->k->t[h->chain.sw];
    int bf = op_mm_bf16(a, b), la, lb, lv, dummy;
    int64_t M = h->dim[2], N1 = h->dim[3], K1 = a->dim[3], N2 = o->dim[3];
    frag_modes(a, b, bf, K1, N1, &la, &lb);
    frag_modes(NULL, v, 1, N1, N2, &dummy, &lv);
    if ((lb < 0 || lv < 0) && !E->rc) E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: a swizzled tile read without ldmatrix");
    int acc = o->fuse.regacc, rs_mode = E->g->nodes[h->chain.sw].op == IR_OP_ACCUM ? 1 : 2;
    int64_t srm = r->dim[2] == M ? r->stride[2] : r->stride[3];
    char oname[80];
    snprintf(oname, sizeof oname, "r_%s", acc >= 0 ? E->names[acc] : "chain");
    cg_uses(E, h->chain.wg ? CG_LIB_WGMMA : CG_LIB_CHAIN);
    if (acc < 0)
        sb_printf(E->sb, "    {\n    float r_chain[%d][4][4] = {};\n", (int)(h->chain.ts * (N2 / 32)));
    if (h->chain.wg) /* B and V in the core-matrix layout, read by wgmma */
        sb_printf(E->sb, "    mg_chain_wg<%d, %s, %d, %s, %" PRId64 ", %" PRId64 ", %d, %d, %d, %" PRId64 ">(%s, %s, %" PRId64
                  ", %s, %s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", ",
                  E->k->threads / 32, bf ? "true" : "false", la, h->chain.wg == 2 ? "true" : "false", N1 / h->chain.sk / 32, N2 / 32, h->chain.ts, h->chain.sk,
                  rs_mode, K1 / 16, oname, E->names[h->chain.sw], srm, E->names[stored_as(E, m1->in[0])],
                  E->names[stored_as(E, m1->in[1])], E->names[stored_as(E, m2->in[1])], M, N1, N2, a->stride[2],
                  a->stride[3]);
    else sb_printf(E->sb, "    mg_chain<%d, %s, %d, %d, %d, %" PRId64 ", %" PRId64 ", %d, %d, %d, %" PRId64 ">(%s, %s, %" PRId64
              ", %s, %s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
              ", %" PRId64 ", %" PRId64 ", %" PRId64 ", ",
              E->k->threads / 32, bf ? "true" : "false", la, lb, lv, N1 / h->chain.sk / 32, N2 / 32, h->chain.ts, h->chain.sk, rs_mode,
              K1 / 16, oname, E->names[h->chain.sw], srm, E->names[stored_as(E, m1->in[0])],
              E->names[stored_as(E, m1->in[1])], E->names[stored_as(E, m2->in[1])], M, N1, N2, a->stride[2], a->stride[3],
              b->stride[2], b->stride[3], v->stride[2], v->stride[3]);
    if (h->chain.wg) epilogue(E, e, h->fuse.mm);
    else chain_epilogue(E, e, h->fuse.mm);
    sb_puts(E->sb, ");\n");
    if (acc >= 0) return;
    sb_printf(E->sb, "    mg_chain_put<%d, %" PRId64 ", %d, %d>(%s, r_chain, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", ",
              E->k->threads / 32, N2 / 32, h->chain.ts, h->chain.sk, E->names[h->chain.mw], M, N2, w->stride[2], w->stride[3]);
    if (h->chain.mw == h->chain.mm) sb_puts(E->sb, "mg_idf{}");
    else epilogue(E, h->chain.mw, h->chain.mm);
    sb_puts(E->sb, ");\n    }\n");
}

/* Is step j one of a chain's two writers? It then emits the chain if it comes first, else
 * nothing. */
int cg_cuda_chain_writer(em *E, int j) {
    int e = E->k->t[j].chain.of;
    if (e < 0) return 0;
    const op_tensor *h = &E->k->t[e];
    if (j != h->chain.mw && j != h->chain.sw) return 0;
    int other = j == h->chain.mw ? h->chain.sw : h->chain.mw;
    if (other == j || step_pos(E->k, j) < step_pos(E->k, other)) step_chain(E, e);
    else sb_puts(E->sb, "    /* (written by the chain above) */\n");
    return 1;
}
