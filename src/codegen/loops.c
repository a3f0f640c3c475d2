/* codegen/loops: element loops, where the targets differ most: a CUDA block's threads stride
 * over a tensor's elements (with no division left per element), C's block is one sequential
 * loop, and a kernel-level operator's loop strides over the grid (CUDA) or OpenMP threads (C). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cg_internal.h"

/* ---- element loops ---- */

/* A CUDA block's loop over the elements e of dims d, T threads taking every T-th. The inner
 * dims whose extents multiply to a divisor P of T keep one coordinate per thread (from
 * threadIdx.x, hoisted by the compiler); the outer ones come from o_ = e / P, which steps by
 * T / P, so no division by a non-constant stride is left in the loop, and the outermost
 * needs no modulo (e < total). */
static void block_loop(em *E, const int64_t d[4], coord c) {
    int64_t total = d[0] * d[1] * d[2] * d[3], T = E->k->threads, P = 1;
    int split = 4; /* dims split..3 are per-thread constants */
    while (split > 0 && T % (P * d[split - 1]) == 0) P *= d[--split];
    int outer = 0; /* the outermost dim of size > 1 */
    while (outer < 3 && d[outer] == 1) outer++;
    int any_outer = 0;
    for (int q = 0; q < split; q++) any_outer |= d[q] > 1;
    sb_puts(E->sb, "    #pragma unroll 4\n");
    if (any_outer)
        sb_printf(E->sb, "    for (int e = threadIdx.x, o_ = threadIdx.x / %" PRId64 "; e < %" PRId64 "; e += %" PRId64
                         ", o_ += %" PRId64 ") {\n", P, total, T, T / P);
    else sb_printf(E->sb, "    for (int e = threadIdx.x; e < %" PRId64 "; e += %" PRId64 ") {\n", total, T);
    int64_t inner = 1;
    for (int q = 3; q >= 0; q--) {
        if (d[q] == 1) snprintf(c[q], CW, "0");
        else {
            snprintf(c[q], CW, "c%d", q);
            const char *src = q >= split ? "threadIdx.x" : "o_";
            int64_t div = q >= split ? inner : inner / P;
            if (q == outer && q < split && div == 1) sb_printf(E->sb, "        const int c%d = o_;\n", q);
            else if (q == outer)
                sb_printf(E->sb, "        const int c%d = (int)((unsigned)%s / %" PRId64 "u);\n", q, src, div);
            else
                sb_printf(E->sb, "        const int c%d = (int)((unsigned)%s / %" PRId64 "u %% %" PRId64 "u);\n", q, src, div, d[q]);
        }
        inner *= d[q];
    }
}

/* C's loop over the elements of dims d: one for-loop a dim of size > 1, the last innermost,
 * so the compiler sees a contiguous inner loop (a vector loop; no division per element);
 * e, the row-major flat index, is declared for the few readers that want it. At kernel level
 * OpenMP shares out the outer loops (all of them when the innermost is short). */
static void c_loop(em *E, const int64_t d[4], coord c) {
    int n = 0, last = -1;
    for (int q = 0; q < 4; q++)
        if (d[q] > 1) n++, last = q;
    if (!n) {
        sb_puts(E->sb, "    for (int e = 0; e < 1; e++) {\n");
        for (int q = 0; q < 4; q++) snprintf(c[q], CW, "0");
        return;
    }
    int par = n > 1 && d[last] >= 16 ? n - 1 : n; /* loops shared out, outermost first */
    int64_t work = d[0] * d[1] * d[2] * d[3] * (E->work > 1 ? E->work : 1);
    if (!E->block && work >= CG_C_PAR_MIN && par > 1)
        sb_printf(E->sb, "    #pragma omp parallel for collapse(%d) schedule(static)\n", par);
    else if (!E->block && work >= CG_C_PAR_MIN) sb_puts(E->sb, "    #pragma omp parallel for schedule(static)\n");
    sb_puts(E->sb, "    ");
    for (int q = 0; q < 4; q++) {
        if (d[q] == 1) snprintf(c[q], CW, "0");
        else {
            snprintf(c[q], CW, "c%d", q);
            sb_printf(E->sb, "for (int c%d = 0; c%d < %" PRId64 "; c%d++) ", q, q, d[q], q);
        }
    }
    sb_printf(E->sb, "{\n        const %s e = ", E->block ? "int" : "long long");
    int64_t inner = 1;
    int any = 0;
    for (int q = 3; q >= 0; q--) {
        if (d[q] > 1) sb_printf(E->sb, "%s(%s)c%d * %" PRId64, any ? " + " : "", E->block ? "int" : "long long", q, inner), any = 1;
        inner *= d[q];
    }
    sb_puts(E->sb, ";\n        (void)e;\n");
}

/* Opens a loop over the elements of a tensor of dims d and declares c0..c3 (coordinates of
 * dims of size 1 are the literal 0 in c). With lanes > 1 (CUDA blocks), `lanes` consecutive
 * threads share each element (lane l_), the loop runs in whole warps (for shuffles) and
 * declares ok_ for the threads that own a real element. */
void cg_loop_open_lanes(em *E, const int64_t d[4], coord c, int lanes) {
    int64_t total = d[0] * d[1] * d[2] * d[3];
    if (E->tg == CG_C) {
        c_loop(E, d, c);
        return;
    }
    if (E->block && lanes > 1)
        sb_printf(E->sb, "    #pragma unroll 2\n    for (int e_ = threadIdx.x; e_ < %" PRId64 "; e_ += %d) {\n"
                         "        const int e = min((int)((unsigned)e_ / %du), %" PRId64 "), l_ = (int)((unsigned)e_ %% %du);\n"
                         "        const bool ok_ = (int)((unsigned)e_ / %du) < %" PRId64 ";\n",
                  (total * lanes + 31) / 32 * 32, E->k->threads, lanes, total - 1, lanes, lanes, total);
    else if (E->block) { /* a literal stride: the compiler can unroll, keeping loads in flight */
        block_loop(E, d, c);
        return;
    }
    else
        sb_printf(E->sb, "    for (long long e = (long long)%s * blockDim.x + threadIdx.x; e < %" PRId64
                         "LL; e += (long long)%s * blockDim.x) {\n", E->op_task ? "tb_" : "blockIdx.x", total,
                  E->op_task ? "tn_" : "gridDim.x");
    int64_t inner = 1;
    for (int q = 3; q >= 0; q--) {
        if (d[q] == 1) snprintf(c[q], CW, "0");
        else {
            snprintf(c[q], CW, "c%d", q);
            /* in a block e is a non-negative int: unsigned division is a shift and a mask */
            if (E->block && E->tg == CG_CUDA)
                sb_printf(E->sb, "        const int c%d = (int)((unsigned)e / %" PRId64 "u %% %" PRId64 "u);\n", q, inner, d[q]);
            else sb_printf(E->sb, "        const int c%d = (int)(e / %" PRId64 " %% %" PRId64 ");\n", q, inner, d[q]);
        }
        inner *= d[q];
    }
}

void cg_loop_open(em *E, const int64_t d[4], coord c) { cg_loop_open_lanes(E, d, c, 1); }

/* cg_loop_open with dims counted in the order perm (outermost first, perm[3] fastest): a copy
 * walks its source's contiguous dim fastest, so neighbouring threads read neighbouring words */
void cg_loop_open_perm(em *E, const int64_t d[4], coord c, const int perm[4]) {
    int64_t pd[4];
    coord pc;
    for (int q = 0; q < 4; q++) pd[q] = d[perm[q]];
    cg_loop_open(E, pd, pc);
    for (int q = 0; q < 4; q++) memcpy(c[perm[q]], pc[q], CW);
}

void cg_store_to(em *E, const char *name, mg_dtype t, const int64_t st[4], coord c, const char *val) {
    sb_printf(E->sb, "        %s[", name);
    cg_index_expr(E->sb, c, st, !E->block);
    sb_printf(E->sb, "] = %s(%s);\n", cg_stfn(t), val);
}

void cg_full_strides(const int64_t fd[4], int64_t st[4]) {
    int64_t s = 1;
    for (int d = 3; d >= 0; d--) st[d] = fd[d] == 1 ? 0 : s, s *= fd[d];
}
