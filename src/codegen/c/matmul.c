/* codegen/c/matmul: the C target's matmuls, kernel-level operators and block steps alike, as
 * tiled loops. The output [d0, d1, M, N] is cut into tiles of MI rows by JB columns (OpenMP
 * shares the tiles of a kernel-level matmul out over threads); a tile keeps its MI x JB
 * partial sums in a local array; the depth goes by in chunks whose A and B values are first
 * converted (through any fused prologue: cg_expr) into float arrays by loops the C compiler
 * vectorises, then multiplied in register blocks (mg_mm_tile, c/lib.h). Each output element
 * sums its products in k order, each step one fused multiply-add (fmaf's rounding; the C
 * runtime compiles without floating-point contraction elsewhere). After the
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
    AF_FLOATS = 4096,   /* a chunk of the tile's A values as floats: 16 KB */
    BF_FLOATS = 16384   /* a chunk of the tile's B values as floats: 64 KB */
};

/* A matmul's loop nest: output dims d (padded), depth K, tile sizes and tile counts. */
typedef struct mm_tiles {
    int64_t d[4], K, MI, JB, ni, nj, n_tiles;
} mm_tiles;

static void tiles_of(const em *E, const ir_node *mm, mm_tiles *T) {
    int64_t ad[4];
    op_pad4(&mm->shape, T->d);
    op_pad4(&E->g->nodes[mm->in[0]].shape, ad);
    int64_t M = T->d[2], N = T->d[3];
    T->K = ad[3];
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
              "        (void)i0_, (void)j0_;\n        float acc_[%" PRId64 "][%" PRId64 "];\n"
              "        for (int ii_ = 0; ii_ < %" PRId64 "; ii_++)\n"
              "            for (int jj_ = 0; jj_ < %" PRId64 "; jj_++) acc_[ii_][jj_] = 0.0f;\n",
              T->MI, T->JB, T->MI, T->JB);
}

/* Can the products read operand j (a stored f32 tensor, unit stride along its last dim, with
 * coordinates c) in place? Then *ptr is the address of its element at c and *ld its row
 * stride. */
static int in_place(em *E, int j, coord c, strbuf *ptr, int64_t *ld) {
    int64_t st[4];
    mg_dtype t;
    if (j == E->reg_node || !cg_stored(E, j)) return 0;
    if (!E->block && cg_lbits(E, j) && cg_input_data(E->p, j)) return 0; /* read masked past mg_L (mask.c) */
    cg_tensor_strides(E, j, st, &t);
    if (t != MG_F32 || (st[3] != 1 && E->g->nodes[j].shape.d[E->g->nodes[j].shape.ndim - 1] > 1)) return 0;
    sb_printf(ptr, "&%s[", E->names[j]);
    cg_index_expr(ptr, c, st, !E->block);
    sb_puts(ptr, "]");
    *ld = st[2];
    return 1;
}

/* The depth loop in chunks of KC steps: the chunk's A values of the tile (MI x KC) and B
 * values (KC x JB) converted, through any prologue (cg_expr), into float arrays af_ and bf_ by
 * loops along their rows, which vectorise (each value converted once a tile), unless the
 * operand is an f32 tensor with rows in place (the C target's tiles: op_opts.f32iter), read
 * where it is; then mg_mm_tile (c/lib.h) adds their products to the partial sums in
 * register blocks, each element's products in k order, one fused multiply-add a step. */
static void depth_loop(em *E, const ir_node *mm, const mm_tiles *T) {
    int64_t ad[4], bd[4], lda = 0, ldb = 0;
    op_pad4(&E->g->nodes[mm->in[0]].shape, ad);
    op_pad4(&E->g->nodes[mm->in[1]].shape, bd);
    coord ac, bc;
    static const char *batch[2] = {"c0", "c1"};
    for (int q = 0; q < 2; q++) {
        snprintf(ac[q], CW, "%s", ad[q] == 1 ? "0" : batch[q]);
        snprintf(bc[q], CW, "%s", bd[q] == 1 ? "0" : batch[q]);
    }
    snprintf(ac[2], CW, "%s", T->d[2] == 1 ? "0" : "i0_"), snprintf(ac[3], CW, "kc_");
    snprintf(bc[2], CW, "kc_"), snprintf(bc[3], CW, "%s", T->d[3] == 1 ? "0" : "j0_");
    strbuf pa = {0}, pb = {0};
    int a_in = in_place(E, mm->in[0], ac, &pa, &lda), b_in = in_place(E, mm->in[1], bc, &pb, &ldb);
    int64_t KC = T->K; /* the chunk: af_ within AF_FLOATS, bf_ within BF_FLOATS */
    if (!a_in && KC > AF_FLOATS / T->MI) KC = AF_FLOATS / T->MI;
    if (!b_in && KC > BF_FLOATS / T->JB) KC = BF_FLOATS / T->JB;
    if (KC < 1) KC = 1;
    sb_printf(E->sb,
              "        for (int kc_ = 0; kc_ < %" PRId64 "; kc_ += %" PRId64 ") {\n",
              T->K, KC);
    if (T->K % KC)
        sb_printf(E->sb,
                  "        const int kn_ = %" PRId64 " - kc_ < %" PRId64 " ? %" PRId64
                  " - kc_ : %" PRId64 ";\n",
                  T->K, KC, T->K, KC);
    else
        sb_printf(E->sb, "        const int kn_ = %" PRId64 ";\n", KC);
    if (!a_in) {
        snprintf(ac[2], CW, "%s", T->d[2] == 1 ? "0" : "(i0_ + ii_)");
        snprintf(ac[3], CW, "(kc_ + kk_)");
        sb_printf(E->sb,
                  "        float af_[%" PRId64 "][%" PRId64 "];\n"
                  "        for (int ii_ = 0; ii_ < mi_; ii_++)\n"
                  "            for (int kk_ = 0; kk_ < kn_; kk_++) af_[ii_][kk_] = ",
                  T->MI, KC);
        cg_expr(E, E->sb, mm->in[0], ac, 0);
        sb_puts(E->sb, ";\n");
        sb_puts(&pa, "&af_[0][0]"), lda = KC;
    }
    if (!b_in) {
        snprintf(bc[2], CW, "(kc_ + kk_)");
        snprintf(bc[3], CW, "%s", T->d[3] == 1 ? "0" : "(j0_ + jj_)");
        sb_printf(E->sb,
                  "        float bf_[%" PRId64 "][%" PRId64 "];\n"
                  "        for (int kk_ = 0; kk_ < kn_; kk_++)\n"
                  "            for (int jj_ = 0; jj_ < nj_; jj_++) bf_[kk_][jj_] = ",
                  KC, T->JB);
        cg_expr(E, E->sb, mm->in[1], bc, 0);
        sb_puts(E->sb, ";\n");
        sb_puts(&pb, "&bf_[0][0]"), ldb = T->JB;
    }
    sb_printf(E->sb,
              "        mg_mm_tile(%s, %" PRId64 ", %s, %" PRId64 ", &acc_[0][0], %" PRId64
              ", mi_, nj_, kn_);\n        }\n",
              pa.s ? pa.s : "0", lda, pb.s ? pb.s : "0", ldb, T->JB);
    if ((pa.oom || pb.oom) && !E->rc) E->rc = ctx_err(E->ctx, MG_ERR_NOMEM, "out of memory");
    sb_free(&pa), sb_free(&pb);
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
