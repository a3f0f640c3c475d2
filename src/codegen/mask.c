/* codegen/mask: a variant of a reduced dim (docs/tuning.md "Reduced dims") runs a call of
 * length mg_L at or below its capacity, whatever its input buffers hold past mg_L. Two rules
 * make every sum and product over the dim add zeros past mg_L:
 *   - a load of a program input reads 0 at an index past mg_L along a dim that follows it
 *     (block tiles: cg_mask_bytes, cg_mask_cond on the iterator's copy; kernel level: cg_expr);
 *   - an elementwise value at such an index is 0 (a select, so exp(0) = 1 and NaN never
 *     enter): cg_expr wraps it, and an epilogue on tensor cores is masked by its tile's rows
 *     and columns left (mg_mask, cuda/lib/mma.cuh);
 *   - a max over the dim reads -inf there instead (its identity; expr.c cg_compute_reduce).
 * A product's or a sum's value past mg_L is then a sum of zeros, and so is what any block
 * wholly past mg_L writes. Each dim's index is its tile base plus the local index; the plan
 * says which dims follow the reduced dim and where their index comes from (opt/reduced.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

int cg_masked(const em *E) { return E->p->lmask != NULL; }

unsigned cg_lbits(const em *E, int j) {
    if (!E->p->lmask) return 0;
    if (!E->k) return E->p->lmask[j];
    unsigned m = 0;
    for (int d = 0; d < 4; d++) m |= (unsigned)(E->k->t[j].lfrom[d] >= 0) << d;
    return m;
}

int cg_input_data(const op_plan *p, int x) {
    while (p->view[x] >= 0 && p->view[x] != x) x = p->view[x];
    return p->g->nodes[x].op == IR_OP_INPUT;
}

void cg_lbase(const em *E, strbuf *o, int j, int d) {
    static const char *bvar[3] = {"bx", "by", "bz"};
    if (!E->k) {
        sb_puts(o, "0LL");
        return;
    }
    int i = E->k->t[j].lfrom[d] / 4, e = E->k->t[j].lfrom[d] % 4;
    const ir_node *n = &E->g->nodes[i];
    const int64_t *td = E->k->t[i].dim;
    int pad = 4 - n->shape.ndim, any = 0;
    int moves = n->fmap >= 0 && n->fmap + pad == e;
    for (int gd = 0; gd < 3; gd++)
        if (n->map[gd] >= 0 && n->map[gd] + pad == e) {
            sb_printf(o, "%s(long long)%s * %" PRId64 "LL", any ? " + " : "", bvar[gd], td[e] * (moves ? E->k->body->forloop : 1));
            any = 1;
        }
    if (moves) sb_printf(o, "%s(long long)it * %" PRId64 "LL", any ? " + " : "", td[e]), any = 1;
    if (!any) sb_puts(o, "0LL");
}

void cg_mask_cond(const em *E, strbuf *o, int j, coord c) { cg_mask_cond_bits(E, o, j, c, 15u); }

void cg_mask_cond_bits(const em *E, strbuf *o, int j, coord c, unsigned bits) {
    unsigned m = cg_lbits(E, j) & bits;
    int any = 0;
    sb_puts(o, "(");
    for (int d = 0; d < 4; d++) {
        if (!(m >> d & 1)) continue;
        sb_printf(o, "%s", any ? " && " : "");
        sb_puts(o, "(");
        cg_lbase(E, o, j, d);
        sb_printf(o, " + (long long)(%s)) < mg_L", c[d]);
        any = 1;
    }
    sb_puts(o, any ? ")" : "1)");
}

void cg_mask_bytes(const em *E, strbuf *o, int j, coord c, int inner, int64_t v, int64_t esize) {
    unsigned m = cg_lbits(E, j);
    sb_puts(o, "(int)(");
    int n = 0;
    for (int d = 0; d < 4; d++) {
        if (!(m >> d & 1)) continue;
        sb_puts(o, n++ ? ", " : "");
        if (n < __builtin_popcount(m)) sb_puts(o, "mg_lmin(");
        strbuf at = {0};
        sb_puts(&at, "(");
        cg_lbase(E, &at, j, d);
        sb_printf(&at, " + (long long)(%s))", c[d]);
        if (d == inner) /* the vector runs along the dim: its elements before mg_L */
            sb_printf(o, "mg_lclamp(mg_L - %s, %" PRId64 ")", at.s ? at.s : "0", v);
        else sb_printf(o, "(%s < mg_L ? %" PRId64 " : 0)", at.s ? at.s : "0", v);
        sb_free(&at);
    }
    for (int q = 1; q < n; q++) sb_puts(o, ")");
    sb_printf(o, " * %" PRId64 ")", esize);
}

void cg_mask_epilogue_open(em *E, int j) {
    unsigned m = cg_lbits(E, j);
    if (!m) return;
    if ((m & 3u) && !E->rc)
        E->rc = ctx_err(E->ctx, MG_ERR_UNSUPPORTED, "codegen: an epilogue over a batch dim that follows a reduced dim");
    sb_puts(E->sb, "mg_mask(");
}

void cg_mask_epilogue_close(em *E, int j) {
    unsigned m = cg_lbits(E, j);
    if (!m) return;
    for (int d = 2; d < 4; d++) {
        if (m >> d & 1) {
            sb_puts(E->sb, ", mg_L - (");
            cg_lbase(E, E->sb, j, d);
            sb_puts(E->sb, ")");
        } else sb_puts(E->sb, ", 1LL << 62");
    }
    sb_puts(E->sb, ")");
}
