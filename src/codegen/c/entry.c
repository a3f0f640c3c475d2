/* codegen/c/entry: what the C target alone writes. Its blocks run over OpenMP threads, each
 * with a private buffer as its shared memory, the threads of a block one sequential loop;
 * a register accumulator is a private dense array; mg_entry() runs every kernel in order.
 * Its fixed text is c/lib.h. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../cg_internal.h"

/* A block's operations, roughly: each step's elements (times a matmul's depth or a
 * reduction's group), each iteration of the for-loop. */
static int64_t block_work(const em *E) {
    int64_t w = 0;
    for (int j = 0; j < E->g->n_nodes; j++) {
        const ir_node *n = &E->g->nodes[j];
        int64_t per = 1;
        if (ir_ops[n->op].kind == IR_KIND_MATMUL) {
            int64_t ad[4];
            op_pad4(&E->g->nodes[n->in[0]].shape, ad);
            per = ad[3];
        } else if (ir_ops[n->op].kind == IR_KIND_REDUCE) per = n->group;
        w += ir_numel(&n->shape) * per;
    }
    return w * E->g->forloop;
}

void cg_c_blocks(em *E, const char **gn, int knode, const params *ps) {
    const ir_graph *b = E->g;
    int gx = b->grid[0], gy = b->grid[1], gz = b->grid[2];
    int par = gx * gy * gz > 1 && block_work(E) * gx * gy * gz >= CG_C_PAR_MIN;
    sb_printf(E->sb, "    #pragma omp parallel%s\n    {\n", par ? "" : " if(0)");
    sb_printf(E->sb, "    unsigned char *smem = (unsigned char *)malloc(%" PRId64 ");\n"
                     "    if (!smem) abort();\n    #pragma omp for schedule(static)\n"
                     "    for (int blk = 0; blk < %d; blk++) {\n"
                     "    const int bx = blk %% %d, by = blk / %d %% %d, bz = blk / %d;\n"
                     "    (void)bx, (void)by, (void)bz;\n",
              E->k->smem + 16, gx * gy * gz, gx, gx, gy, gx * gy);
    cg_block_body(E, gn, knode, ps);
    sb_puts(E->sb, "    }\n    free(smem);\n    }\n");
}

void cg_c_regacc_decl(em *E, int acc) {
    const int64_t *d = E->k->t[acc].dim;
    sb_printf(E->sb, "    float r_%s[%" PRId64 "];\n    memset(r_%s, 0, sizeof r_%s); /* %s's sum */\n", E->names[acc],
              d[0] * d[1] * d[2] * d[3], E->names[acc], E->names[acc], E->names[acc]);
}

/* (mm: the matmul step, its accumulator t->fuse.regacc; the sum dense row-major) */
void cg_c_regacc_add(em *E, int mm, coord c) {
    const op_tensor *t = &E->k->t[mm];
    int64_t dense[4];
    cg_full_strides(t->dim, dense);
    sb_printf(E->sb, "        r_%s[", E->names[t->fuse.regacc]);
    cg_index_expr(E->sb, c, dense, 0);
    sb_puts(E->sb, "] += v;\n");
}

void cg_c_store_regacc(em *E, int acc) {
    const op_tensor *t = &E->k->t[acc];
    coord c;
    int64_t dense[4];
    cg_full_strides(t->dim, dense);
    cg_loop_open(E, t->dim, c);
    sb_printf(E->sb, "        %s[", E->names[acc]);
    cg_index_expr(E->sb, c, t->stride, 0);
    sb_printf(E->sb, "] = r_%s[", E->names[acc]);
    cg_index_expr(E->sb, c, dense, 0);
    sb_puts(E->sb, "];\n    }\n");
}

void cg_c_entry(em *E, const cg_program *out) {
    sb_puts(E->sb, "/* runs every kernel in order; bufs[i] is buffer i (mugen's runtime) */\n"
                   "void mg_entry(void **bufs);\nvoid mg_entry(void **bufs) {\n");
    for (int b = 0; b < out->n_bufs; b++) /* a view: an address inside another buffer */
        if (out->buf_alias[b] >= 0)
            sb_printf(E->sb, "    bufs[%d] = (char *)bufs[%d] + %" PRId64 ";\n", b, out->buf_alias[b], out->buf_off[b]);
    for (int l = 0; l < out->n_launches; l++) {
        const cg_launch *L = &out->launches[l];
        sb_printf(E->sb, "    %s(", L->name);
        for (int a = 0; a < L->n_args; a++) sb_printf(E->sb, "%sbufs[%d]", a ? ", " : "", L->args[a]);
        sb_puts(E->sb, ");\n");
    }
    sb_puts(E->sb, "}\n");
}
