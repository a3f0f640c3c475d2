/* codegen/c/matmul: the C target's matmuls, kernel-level operators and block steps alike, as
 * tiled loops the C compiler vectorises. The output [d0, d1, M, N] is cut into tiles of MI
 * rows by JB columns (OpenMP shares the tiles of a kernel-level matmul out over threads); a
 * tile keeps its MI x JB partial sums in a local array, and for each k_ converts its JB
 * values of row k_ of B (through any fused prologue: B's value is cg_expr's) into a
 * contiguous float row once, then adds a(i, k_) * b[j] along each of its MI rows: the j loop
 * is contiguous and free of index arithmetic, so it is a vector loop. Each output element
 * sums its products in k order, each step one fused multiply-add (fmaf: one rounding a step;
 * the C runtime compiles without floating-point contraction elsewhere). After the
 * depth, each element of the tile goes through the epilogue: stored, added to a register
 * accumulator, or read by the elementwise step the matmul is fused into (fuse.mm). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../cg_internal.h"

enum {
    ACC_FLOATS = 16384, /* a tile's partial sums: 64 KB, in a core's L2 (L1 at 2 rows of 1024) */
    JB_MAX = 1024,      /* columns of a tile when N is wider: 2 KB of f16 B a row */
    JB_ALIGN = 16,      /* a split N is cut into multiples of 16 columns (one AVX-512 vector) */
    AF_FLOATS = 4096    /* a chunk of the tile's A values as floats: 16 KB */
};

/* A matmul's loop nest: output dims d (padded), depth K, tile sizes and tile counts. */
typedef struct mm_tiles {
    int64_t d[4], K, MI, JB, ni, nj, n_tiles;
    int U; /* depth steps a pass over the partial sums takes: 4, 2 or 1, dividing K */
} mm_tiles;

static void tiles_of(const em *E, const ir_node *mm, mm_tiles *T) {
    int64_t ad[4];
    op_pad4(&mm->shape, T->d);
    op_pad4(&E->g->nodes[mm->in[0]].shape, ad);
    int64_t M = T->d[2], N = T->d[3];
    T->K = ad[3];
    T->U = T->K % 4 == 0 ? 4 : T->K % 2 == 0 ? 2 : 1;
    T->JB = N <= JB_MAX ? N : JB_MAX / JB_ALIGN * JB_ALIGN;
    T->MI = ACC_FLOATS / T->JB < M ? ACC_FLOATS / T->JB : M;
    if (T->MI < 1) T->MI = 1;
    T->ni = (M + T->MI - 1) / T->MI, T->nj = (N + T->JB - 1) / T->JB;
    T->n_tiles = T->d[0] * T->d[1] * T->ni * T->nj;
}

/* The tile loop's head: t_ over the tiles (over OpenMP threads at kernel level), the tile's
 * batch coordinates c0, c1, its first row and column i0_, j0_ and its extent mi_ x nj_
 * (literals when the tiles divide the dims), the partial sums zeroed. */
static void open_tiles(em *E, const mm_tiles *T) {
    int64_t M = T->d[2], N = T->d[3];
    if (!E->block && T->d[0] * T->d[1] * M * N * T->K >= CG_C_PAR_MIN)
        sb_puts(E->sb, "    #pragma omp parallel for schedule(static)\n");
    sb_printf(E->sb, "    for (%s t_ = 0; t_ < %" PRId64 "; t_++) {\n",
              E->block ? "int" : "long long", T->n_tiles);
    if (T->d[0] > 1)
        sb_printf(E->sb, "        const int c0 = (int)(t_ / %" PRId64 ");\n",
                  T->d[1] * T->ni * T->nj);
    if (T->d[1] > 1)
        sb_printf(E->sb, "        const int c1 = (int)(t_ / %" PRId64 " %% %" PRId64 ");\n",
                  T->ni * T->nj, T->d[1]);
    sb_printf(E->sb,
              "        const int i0_ = (int)(t_ / %" PRId64 " %% %" PRId64 ") * %" PRId64
              ", j0_ = (int)(t_ %% %" PRId64 ") * %" PRId64 ";\n",
              T->nj, T->ni, T->MI, T->nj, T->JB);
    if (M % T->MI)
        sb_printf(E->sb,
                  "        const int mi_ = %" PRId64 " - i0_ < %" PRId64 " ? %" PRId64
                  " - i0_ : %" PRId64 ";\n",
                  M, T->MI, M, T->MI);
    else
        sb_printf(E->sb, "        const int mi_ = %" PRId64 ";\n", T->MI);
    if (N % T->JB)
        sb_printf(E->sb,
                  "        const int nj_ = %" PRId64 " - j0_ < %" PRId64 " ? %" PRId64
                  " - j0_ : %" PRId64 ";\n",
                  N, T->JB, N, T->JB);
    else
        sb_printf(E->sb, "        const int nj_ = %" PRId64 ";\n", T->JB);
    sb_printf(E->sb,
              "        (void)i0_, (void)j0_;\n        float acc_[%" PRId64 "][%" PRId64
              "], b_[%d][%" PRId64 "];\n"
              "        for (int ii_ = 0; ii_ < %" PRId64 "; ii_++)\n"
              "            for (int jj_ = 0; jj_ < %" PRId64 "; jj_++) acc_[ii_][jj_] = 0.0f;\n",
              T->MI, T->JB, T->U, T->JB, T->MI, T->JB);
}

/* The depth loop in chunks of KC steps: the tile's A values of the chunk first, converted
 * (through any prologue: cg_expr) into a float array af_ [MI][KC] by a loop along the depth,
 * which vectorises (A read one scalar conversion at a time in the product loop took more
 * instructions than the products: bias_relu's profile); then U steps at a time: B's rows
 * k0_ .. k0_ + U - 1 of the tile into b_, then each row's U values of A times them, added to
 * its partial sums one after another (the order of the one-at-a-time loop; the sum stays in a
 * register over the U steps, each step one fused multiply-add). */
static void depth_loop(em *E, const ir_node *mm, const mm_tiles *T) {
    int64_t ad[4], bd[4];
    op_pad4(&E->g->nodes[mm->in[0]].shape, ad);
    op_pad4(&E->g->nodes[mm->in[1]].shape, bd);
    coord ac, bc;
    static const char *batch[2] = {"c0", "c1"};
    for (int q = 0; q < 2; q++) {
        snprintf(ac[q], CW, "%s", ad[q] == 1 ? "0" : batch[q]);
        snprintf(bc[q], CW, "%s", bd[q] == 1 ? "0" : batch[q]);
    }
    int64_t KC = T->U; /* the largest multiple of U dividing K with MI x KC <= AF_FLOATS */
    for (int64_t k = T->U; k <= T->K; k += T->U)
        if (T->K % k == 0 && T->MI * k <= AF_FLOATS) KC = k;
    snprintf(ac[2], CW, "%s", T->d[2] == 1 ? "0" : "(i0_ + ii_)");
    snprintf(ac[3], CW, "(kc_ + kk_)");
    sb_printf(E->sb,
              "        for (int kc_ = 0; kc_ < %" PRId64 "; kc_ += %" PRId64 ") {\n"
              "        float af_[%" PRId64 "][%" PRId64 "];\n"
              "        for (int ii_ = 0; ii_ < mi_; ii_++)\n"
              "            for (int kk_ = 0; kk_ < %" PRId64 "; kk_++) af_[ii_][kk_] = ",
              T->K, KC, T->MI, KC, KC);
    cg_expr(E, E->sb, mm->in[0], ac, 0);
    snprintf(bc[2], CW, "(k0_ + u_)"),
        snprintf(bc[3], CW, "%s", T->d[3] == 1 ? "0" : "(j0_ + jj_)");
    sb_printf(E->sb,
              ";\n        for (int k0_ = kc_; k0_ < kc_ + %" PRId64 "; k0_ += %d) {\n"
              "            for (int u_ = 0; u_ < %d; u_++)\n"
              "                for (int jj_ = 0; jj_ < nj_; jj_++) b_[u_][jj_] = ",
              KC, T->U, T->U);
    cg_expr(E, E->sb, mm->in[1], bc, 0);
    sb_puts(E->sb, ";\n            for (int ii_ = 0; ii_ < mi_; ii_++) {\n");
    for (int u = 0; u < T->U; u++)
        sb_printf(E->sb, "                const float a%d_ = af_[ii_][k0_ - kc_ + %d];\n", u, u);
    sb_puts(E->sb, "                float *const r_ = acc_[ii_];\n"
                   "                for (int jj_ = 0; jj_ < nj_; jj_++) {\n                    "
                   "float x_ = r_[jj_];\n");
    for (int u = 0; u < T->U; u++)
        sb_printf(E->sb, "                    x_ = fmaf(a%d_, b_[%d][jj_], x_);\n", u, u);
    sb_puts(E->sb,
            "                    r_[jj_] = x_;\n                }\n            }\n        }\n        }\n");
}

/* The epilogue over the tile: v = the product at (c0, c1, c2, c3); then node j's value (j
 * the matmul itself, or the elementwise step fused over it: vr_) stored where j goes. */
static void epilogue(em *E, int mm, int j, const mm_tiles *T) {
    coord c;
    static const char *names[4] = {"c0", "c1", "c2", "c3"};
    for (int q = 0; q < 4; q++)
        snprintf(c[q], CW, "%s", T->d[q] == 1 ? "0" : names[q]);
    sb_puts(E->sb,
            "        for (int ii_ = 0; ii_ < mi_; ii_++)\n        for (int jj_ = 0; jj_ < nj_; "
            "jj_++) {\n"
            "        const int c2 = i0_ + ii_, c3 = j0_ + jj_;\n        (void)c2, (void)c3;\n");
    const char *val = "acc_[ii_][jj_]";
    if (j != mm) {
        sb_printf(E->sb, "        const float vr_ = %s;\n        const float v = ", val);
        E->reg_node = mm;
        cg_expr(E, E->sb, j, c, 1);
        E->reg_node = -1;
        sb_puts(E->sb, ";\n");
    } else
        sb_printf(E->sb, "        const float v = %s;\n", val);
    if (!E->block) {
        int64_t st[4];
        mg_dtype t;
        cg_tensor_strides(E, j, st, &t);
        cg_store_to(E, E->names[j], t, st, c, "v");
    } else if (E->k->t[j].fuse.regacc >= 0)
        cg_c_regacc_add(E, j, c);
    else
        cg_store_to(E, E->names[j], E->k->t[j].store, E->k->t[j].stride, c, "v");
    sb_puts(E->sb, "        }\n    }\n");
}

void cg_c_matmul_tiles(em *E, int mm, int j) {
    const ir_node *n = &E->g->nodes[mm];
    mm_tiles T;
    tiles_of(E, n, &T);
    sb_printf(E->sb,
              "    /* tiles of %" PRId64 " x %" PRId64
              ", the depth's products added along each row (c/matmul.c) */\n",
              T.MI, T.JB);
    open_tiles(E, &T);
    depth_loop(E, n, &T);
    epilogue(E, mm, j, &T);
}

/* Block step strategy (block.c's table, C only): a matmul step, stored or added to its
 * register accumulator, or an elementwise step over the matmul fused into it (fuse.mm) of
 * the same shape. */
int cg_c_matmul(em *E, int j) {
    const op_tensor *t = &E->k->t[j];
    const ir_node *n = &E->g->nodes[j];
    if (t->fuse.red >= 0) return 0;
    if (ir_ops[n->op].kind == IR_KIND_MATMUL && t->fuse.mm < 0) {
        cg_c_matmul_tiles(E, j, j);
        return 1;
    }
    if (t->fuse.mm < 0 || ir_ops[n->op].kind == IR_KIND_REDUCE) return 0;
    int64_t jd[4], md[4];
    op_pad4(&n->shape, jd);
    op_pad4(&E->g->nodes[t->fuse.mm].shape, md);
    if (memcmp(jd, md, sizeof jd)) return 0;
    cg_c_matmul_tiles(E, t->fuse.mm, j);
    return 1;
}
