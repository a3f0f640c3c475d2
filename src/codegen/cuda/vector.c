/* codegen/cuda/vector: moving and writing several elements a thread (CUDA): iterator tiles
 * copied in 16-byte vectors (cp.async when pipelined), f16 tiles converted to bf16 in place,
 * savers and elementwise steps storing four consecutive elements at once (mg_put4), f32
 * tiles read four at a time. Device side: cuda/lib/copy.cuh. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../cg_internal.h"

/* Can iterator tile t move in 16-byte vectors along its inner dim (the last, or the one
 * before it for a column-major tile), given its source's strides fst? That dim must be
 * contiguous in the source, and every other stride, in the source and in shared memory, and
 * the tile's extent along it, whole vectors: every vector then starts 16-byte aligned at both
 * ends. CUDA only; C copies element by element. */
static int vector_iter(const em *E, const op_tensor *t, const int64_t fst[4]) {
    int64_t v = 16 / (int64_t)base_dtype_size(t->store);
    int inner = t->colmajor ? 2 : 3;
    if (E->tg != CG_CUDA || fst[inner] != 1 || t->dim[inner] % v) return 0;
    for (int d = 0; d < 4; d++)
        if (d != inner && t->dim[d] > 1 && (fst[d] % v || t->stride[d] % v)) return 0;
    return 1;
}

/* iterator j's tile (a kernel input's of strides fst, at base_) copied in 16-byte vectors
 * when vector_iter allows: as cp.async copies (mg_cp16) when pipelined or asked for
 * (E->async), else plain vector loads and stores; 1 if written, else 0 */
int cg_cuda_iter_vec(em *E, int j, int x, const char *gname, const int64_t fst[4]) {
    const op_tensor *t = &E->k->t[j];
    if (!vector_iter(E, t, fst)) return 0;
    /* loop over vectors: the inner dim counted in vectors */
    coord c;
    int perm[4] = {0, 1, 2, 3};
    int64_t v = 16 / (int64_t)base_dtype_size(t->store), vd[4];
    int inner = t->colmajor ? 2 : 3;
    memcpy(vd, t->dim, sizeof vd);
    vd[inner] /= v;
    if (inner == 2) perm[2] = 3, perm[3] = 2;
    cg_loop_open_perm(E, vd, c, perm);
    coord cs; /* the destination's coordinates: 16-byte piece c3 of row c2 at c3 ^ swizzle */
    if (vd[inner] > 1) snprintf(c[inner], CW, "(c3 * %" PRId64 ")", v); /* inner is counted fastest */
    memcpy(cs, c, sizeof cs);
    if (t->tc.swz && vd[inner] > 1)
        snprintf(cs[inner], CW, t->tc.swz == 1 ? "((c3 ^ (%s & 7)) * %" PRId64 ")" : "((c3 ^ ((%s >> 1) & 3)) * %" PRId64 ")",
                 c[2], v);
    int as = t->pipe.stages || E->async;
    if (as) cg_uses(E, CG_LIB_COPY);
    if (cg_lbits(E, j) && cg_input_data(E->p, x)) { /* a reduced dim's entries past mg_L: zero-filled (mask.c) */
        cg_uses(E, CG_LIB_COPY);
        sb_puts(E->sb, "        const int nb_ = ");
        cg_mask_bytes(E, E->sb, j, c, inner, v, (int64_t)base_dtype_size(t->store));
        sb_printf(E->sb, ";\n        %s&%s[", as ? "mg_cp16z(" : "*(uint4 *)", E->names[j]);
        cg_index_expr(E->sb, cs, t->stride, 0);
        sb_printf(E->sb, as ? "], &%s[base_ + " : "] = mg_ld16z(&%s[base_ + ", gname);
        cg_index_expr(E->sb, c, fst, 1);
        sb_puts(E->sb, "], nb_);\n    }\n    }\n");
        return 1;
    }
    sb_printf(E->sb, as ? "        mg_cp16(&%s[" : "        *(uint4 *)&%s[", E->names[j]);
    cg_index_expr(E->sb, cs, t->stride, 0);
    sb_printf(E->sb, as ? "], &%s[base_ + " : "] = *(const uint4 *)&%s[base_ + ", gname);
    cg_index_expr(E->sb, c, fst, 1);
    sb_puts(E->sb, as ? "]);\n    }\n    }\n" : "];\n    }\n    }\n");
    return 1;
}

/* Is iterator j's tile (of kernel input x) copied as raw f16 and converted in place
 * afterwards (t->tc.cvt with 16-byte copies), rather than converted element by element? */
static int cvt_in_place(const em *E, int j, int x) {
    return E->k->t[j].tc.cvt && vector_iter(E, &E->k->t[j], E->p->kst[x]);
}

/* The in-place conversions of raw-copied cvt tiles: pipelined ones (stages) or the others.
 * Returns how many it wrote. */
int cg_cuda_convert_in_place(em *E, int knode, int pipelined) {
    int count = 0;
    for (int j = 0; j < E->g->n_nodes; j++) {
        const ir_node *n = &E->g->nodes[j];
        const op_tensor *t = &E->k->t[j];
        if (n->op != IR_OP_ITER || (t->pipe.stages > 0) != pipelined) continue;
        if (!cvt_in_place(E, j, E->p->g->nodes[knode].in[n->index])) continue;
        sb_printf(E->sb, "    mg_h2bf_block(%s, %" PRId64 "); /* f16 copied, bf16 read */\n", E->names[j], t->pipe.elems);
        cg_uses(E, CG_LIB_COPY);
        count++;
    }
    return count;
}

/* The stored tile node j reads as it is (through reshapes, which are index maps, and
 * one-iteration accumulators), when four consecutive elements of j along its last dim are
 * four consecutive, 16-byte aligned floats of it (f32, row-major rows, every stride and its
 * last dim multiples of 4; the callers' tiles keep four-element groups inside a row); else
 * -1. A save then reads each four with one float4 load (GQA b=1's partial sums: the saves
 * 1.0 -> 0.77 us a block, notes §27). */
static int vec4_source(const em *E, int j) {
    for (;;) {
        if (E->g->nodes[j].op == IR_OP_RESHAPE && !E->k->t[j].mat) j = E->g->nodes[j].in[0];
        else if (E->g->nodes[j].op == IR_OP_ACCUM && !E->k->t[j].mat) j = E->g->nodes[j].in[0];
        else break;
    }
    const op_tensor *t = &E->k->t[j];
    if (!t->mat || t->store != MG_F32 || t->tc.swz || t->stride[3] != 1 || t->dim[3] % 4) return -1;
    for (int d = 0; d < 3; d++)
        if (t->stride[d] % 4) return -1;
    return j;
}

/* A loop over dims d, dim v taken four at a time, each thread storing four consecutive
 * elements with one mg_put4(&dst[base index], ...): node's value at each (force: the
 * operator computed here, as cg_expr()). Closes the loop. Strides st index dst (in a block:
 * int arithmetic unless base is a device offset, `base_ + `). */
static void put4_loop(em *E, const int64_t d[4], int v, const char *dst, const char *base, const int64_t st[4],
                      int node, int force) {
    int64_t vd[4] = {d[0], d[1], d[2], d[3]};
    vd[v] /= 4;
    coord c;
    char cv[8]; /* "cN" */
    cg_loop_open(E, vd, c);
    snprintf(cv, sizeof cv, "%.7s", c[v]);
    snprintf(c[v], CW, "(%s * 4)", cv);
    int vec = !force && vec4_source(E, node) >= 0; /* (callers: CUDA blocks) */
    if (vec) { /* the four values by one 16-byte load */
        sb_puts(E->sb, "        const float4 q4_ = *(const float4 *)&");
        cg_expr(E, E->sb, node, c, force);
        sb_puts(E->sb, ";\n");
    }
    sb_printf(E->sb, "        mg_put4(&%s[%s", dst, base);
    cg_uses(E, CG_LIB_COPY);
    cg_index_expr(E->sb, c, st, *base != 0);
    sb_puts(E->sb, "]");
    for (int q = 0; q < 4; q++) {
        snprintf(c[v], CW, "(%s * 4 + %d)", cv, q);
        sb_puts(E->sb, ",\n            ");
        if (vec) sb_printf(E->sb, "q4_.%c", "xyzw"[q]);
        else cg_expr(E, E->sb, node, c, force);
    }
    sb_puts(E->sb, ");\n    }\n");
}

/* The dim along which a saver can write its tile of dims td, into a buffer of strides fst,
 * four elements at a time, or -1. CUDA blocks only; that dim is the tile's last of size > 1,
 * contiguous in the buffer and a multiple of four; every other stride is a multiple of four
 * (each group of four then starts aligned). */
static int vector_save(const em *E, const int64_t td[4], const int64_t fst[4]) {
    int v = 3;
    while (v > 0 && td[v] == 1) v--;
    if (E->tg != CG_CUDA || !E->block || fst[v] != 1 || td[v] % 4) return -1;
    for (int d = 0; d < 4; d++)
        if (d != v && fst[d] % 4) return -1;
    return v;
}

/* A saver's tile (dims td, node's value) written four consecutive elements a thread, one
 * store each, to gname (strides fst) at base_, when vector_save allows; 1 if written. */
int cg_cuda_save4(em *E, const int64_t td[4], const char *gname, const int64_t fst[4], int node) {
    int v = vector_save(E, td, fst);
    if (v < 0) return 0;
    put4_loop(E, td, v, gname, "base_ + ", fst, node, 0);
    sb_puts(E->sb, "    }\n");
    return 1;
}

/* An elementwise step (CUDA) whose stored rows are contiguous in whole groups of four: each
 * thread computes four neighbours and stores them at once (mg_put4), a quarter of the loop
 * and index arithmetic and of the store instructions (QKNorm's Q / rms(Q)). */
int cg_cuda_elementwise4(em *E, int j) {
    const op_tensor *t = &E->k->t[j];
    ir_kind kd = ir_ops[E->g->nodes[j].op].kind;
    if ((kd != IR_KIND_UNARY && kd != IR_KIND_BINARY) || t->fuse.red >= 0 || t->fuse.mm >= 0 || t->fuse.regacc >= 0 ||
        t->dim[3] % 4 || t->stride[3] != 1 || t->stride[2] % 4 || t->stride[1] % 4 || t->stride[0] % 4)
        return 0;
    put4_loop(E, t->dim, 3, E->names[j], "", t->stride, j, 1);
    return 1;
}
