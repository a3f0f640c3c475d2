/* lower: the plain lowering (docs/lower.md). A program that no search has covered becomes a
 * μGraph with a default schedule per kernel, so every operator runs through the code paths
 * the searched μGraphs use (tensor-core matmuls with cp.async pipelines, row reductions, fused
 * elementwise prologues and epilogues) instead of one thread per output element.
 *
 * The program's tensors that reach device memory are its inputs, outputs, matmuls and
 * reductions; every elementwise operator is recomputed inside each kernel that reads it. A
 * matmul or reduction whose only reader is one other kernel is computed inside that kernel
 * when one of the kernel forms holds it: ATTN (a softmax-like attention: the scores, their row
 * sums and the product with V in one kernel, the keys split when the blocks are few), MM
 * (matmuls of one output shape and depth, their operands' elementwise prologues, an
 * elementwise epilogue), ROW (reductions along one dim,
 * the loop over that dim when only sums meet it, else whole rows in one tile) and EW (an
 * elementwise tree). What no form holds (layout operators, kernels the program already has,
 * shapes no tiling divides) stays a kernel-level operator of the old path. */
#ifndef MG_LOWER_H
#define MG_LOWER_H

#include "../ir/ir.h"

/* Counts of what lw_lower made, for reports and tests. */
typedef struct lw_stats {
    int kernels;  /* graph-defined kernels written */
    int fused;    /* matmuls and reductions computed inside another kernel */
    int plain;    /* kernel-level operators left to the per-element path */
} lw_stats;

/* Form MM's tiling (mm_tiles): bn output columns a block, and the depth split over more blocks
 * while they are fewer than split_fill % of the SMs; row: form MMROW allowed (a product and
 * the row reductions after it as one kernel). The default is what measured best across the
 * suites (docs/lower.md); the search adds the lowerings of the others as candidates
 * (lw_tilings: which is fastest depends on the shapes, and `mugen optimize` times them). */
typedef struct lw_tiling {
    int bn, split_fill, row;
} lw_tiling;
enum { LW_TILINGS = 5 };
extern const lw_tiling lw_tilings[LW_TILINGS]; /* [0] is the default */

/* Lowers program g (a kernel graph; nodes that are already kernels are kept) for device dev
 * into a new graph *out with the same inputs and outputs (names, dtypes, shapes, order)
 * computing the same function. cpu: for the C target, whose blocks are OpenMP iterations
 * (plenty for a CPU's cores): matmul kernels take no split-K and no narrowed columns. tiling:
 * form MM's (NULL: lw_tilings[0]). The caller owns *out (ir_graph_free). stats may be NULL.
 * MG_OK, MG_ERR_NOMEM, or an error of the graph builder with its message in ctx (a bug: every
 * form is checked before it is kept). */
mg_status lw_lower(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, int cpu, const lw_tiling *tiling,
                   ir_graph **out, lw_stats *stats);

#endif
