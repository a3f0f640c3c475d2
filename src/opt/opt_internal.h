/* opt_internal: what the optimizer's pass files share (QBE's all.h for opt/). opt.h is the
 * contract with codegen/ and the driver; this header is opt/'s own. One file a pass, in the
 * order plan.c runs them over a block graph:
 *   inline.c    thread graphs (Mirage §4.2): which nodes are computed inside their consumers
 *   fuse.c      reduction epilogues, the block size, register accumulation
 *   layout.c    the layout pass: storage types, row/column major, padded or swizzled rows
 *   chain.c     attention chains and their wgmma form
 *   schedule.c  operator scheduling by depth, in-place conversions of f16 tiles
 *   memory.c    live ranges, shared-memory placement, the pipeline's depth
 * and over the whole kernel graph buffers.c (device buffers) and launch.c (several kernels as
 * one launch); check.c checks the result (MUGEN_CHECK). Each pass writes its own members of
 * op_tensor (opt.h says which). */
#ifndef MG_OPT_INTERNAL_H
#define MG_OPT_INTERNAL_H

#include "opt.h"

/* Phases of a block's program, in run order: ph[i] of node i's step (-1: no step of its own). */
enum { PH_PRE, PH_LOOP, PH_POST };

/* ---- plan.c ---- */
/* Plans block graph b (the body of KERNEL node `knode` of p->g) into *k, with `threads` a
 * block when > 0 (else the block-size pass decides). MG_ERR_NOMEM, or MG_ERR_SHAPE when its
 * shared memory exceeds dev's limit. */
mg_status op_plan_kernel(op_plan *p, mg_ctx *ctx, const mg_device *dev, int knode, op_kernel *k,
                         int threads);

/* ---- inline.c ---- */
/* 1 for unary and binary (elementwise) operators. */
int op_is_elementwise(ir_op op);
/* uses[i] += readers of node i in g (outputs count 2: they are stored); user[i]: its last
 * reader. Both arrays zeroed by the caller. */
void op_count_uses(const ir_graph *g, int *uses, int *user);
/* The deepest chain of operators that one generated expression computes in place (inlined
 * into its consumer): an operator deeper than this is stored instead. Each level is one
 * parenthesis level of the generated C, kept within the 63 that C11 5.2.4.1 guarantees, and
 * the emitter's recursion (codegen/expr.c) is as deep as this at most. Ordinary programs
 * never come near it; a chain of 50,000 additions does. */
enum { OP_MAX_INLINE_DEPTH = 48 };
/* Sets k->t[i].mat for every node of b: stored in shared memory unless a constant, a saver,
 * computed inside its consumers (op_inlined, with `recompute`), a reshape its one consumer
 * reads through, or a one-iteration accumulator read in its operand's place; and stored
 * again where such a chain gets deeper than OP_MAX_INLINE_DEPTH. scratch: one int per node. */
void op_thread_graph(const ir_graph *b, op_kernel *k, const int *uses, const int *user, int *scratch,
                     int recompute);

/* ---- fuse.c ---- */
/* Reduction epilogues: sets fuse.red and fuse.mm of the stored values computed from one
 * reduction or matmul alone, and of accumulators summing a reduction; those are then not
 * stored. */
void op_fuse_epilogues(const ir_graph *b, op_kernel *k, const int *uses);
/* Threads per block for b (the block graph's own when `on` is 0) on a device of n_sm SMs. */
int op_block_threads(const ir_graph *b, const op_kernel *k, const int *cls, int on, int pipelined, int n_sm);
/* Register accumulation: sets fuse.regacc on the matmuls summed over the loop by an
 * accumulator, and on their accumulators; sets k->post_sync when any. */
void op_register_accumulators(const ir_graph *b, op_kernel *k, const int *uses, const int *user);
/* Places the split-K scratch of the register accumulators (op_kernel.acc_scratch) after
 * k->smem when it fits in dev's limit. */
void op_plan_acc_scratch(const ir_graph *b, op_kernel *k, const mg_device *dev);

/* ---- layout.c ---- */
/* mm[i] (one int per node of b, overwritten): does some matmul read block-graph node i
 * (directly or through one-iteration accumulators)? One pass over the graph. */
void op_matmul_readers(const ir_graph *b, int *mm);
/* Sets t's colmajor, stride and bytes from its dim and store: row-major or column-major over
 * the last two dims, with padded rows when `pad` (and a row is a multiple of 128 bytes). */
void op_layout(op_tensor *t, int colmajor, int pad);
/* The layout pass over the stored tensors of kernel k (the body of KERNEL node knode of p->g):
 * dim, store, tc.swz and the layout of each. */
void op_choose_layouts(const op_plan *p, int knode, op_kernel *k);
/* Pads the rows of register accumulators' tiles (written from mma fragments after the loop). */
void op_pad_regacc(const ir_graph *b, op_kernel *k);

/* ---- chain.c ---- */
/* Finds the attention chains of k (op_tensor.chain) and sizes the block to the first when
 * size_threads; lays out their tiles for wgmma when p->opts.wgmma. */
void op_find_chains(const op_plan *p, int knode, const ir_graph *b, op_kernel *k, const int *uses,
                    int size_threads);
/* Keeps wgmma only on chains whose tiles ended up in the products' types. */
void op_wg_check(const ir_graph *b, op_kernel *k, const int *uses);
/* opts.tma (tma.c): a loop of products of moving tiles only, on TMA and wgmma (op_kernel.tma);
 * sets the block's threads. op_tma_undo goes back to cp.async and mma.sync. */
void op_find_tma(const op_plan *p, const mg_device *dev, int knode, const ir_graph *b, op_kernel *k);
void op_tma_undo(const ir_graph *b, op_kernel *k);
/* Undoes the chains whose two writers fall in different barrier intervals; 1 if any was. */
int op_chains_split(op_kernel *k, const int *level);

/* ---- schedule.c ---- */
/* fixed[i]: node i of b has the same value in every iteration. */
void op_fixed_values(const ir_graph *b, int *fixed);
/* Operator scheduling by depth: fills ph[] and depth[] per node, k's steps, barriers and
 * loop bounds, and level[] (each step's barrier interval). */
void op_schedule(op_kernel *k, const int *cls, const int *fixed, int hoist, int by_depth, int *ph,
                 int *depth, int *level);
/* Converts f16 iterator tiles that only bf16 tensor-core matmuls read in place (tc.cvt). */
void op_convert_tiles(const ir_graph *b, op_kernel *k, const int *ph, const int *level);

/* ---- memory.c ---- */
/* pipe.elems of each iterator tile: its elements, one stage (from its bytes before staging). */
void op_pipe_init(op_kernel *k);
/* Memory planning for the schedule made (ph, level): pipeline stages, live ranges, offsets;
 * sets k->smem (-1: out of memory). stages > 0: exactly that depth (a forced schedule, even
 * past the limit); 0: the deepest that fits. */
void op_place_stages(op_kernel *k, const int *ph, const int *level, const op_opts *o,
                     int64_t limit, int stages);
/* Moves the pipelined iterators out of the steps into load[] and recounts the barriers. */
void op_pipeline_steps(op_kernel *k);

/* ---- buffers.c ---- */
/* Kernel level: buffers, their storage types and strides, inlined operators (no deeper
 * than OP_MAX_INLINE_DEPTH). scratch: room for one int per node, overwritten. */
void op_plan_buffers(op_plan *p, const int *uses, const int *user, int *scratch);

/* ---- launch.c ---- */
/* Several kernels as one launch: persistent (opts.persist) or cluster fusion (opts.cluster). */
void op_plan_fused(op_plan *p, const mg_device *dev);
/* Element range [lo, hi) over the 4 padded dims of the kernel-level tensor that block b of
 * block graph bg reads through iterator n (all its loop iterations) or writes through saver
 * n (the tile of the value it saves), as codegen's tile_base places it. */
void op_block_range(const ir_graph *bg, const ir_node *n, const int b[3], int64_t lo[4], int64_t hi[4]);
/* Block i (linear, x fastest) of a grid as coordinates b[3]. */
void op_block_coord(const int grid[3], int i, int b[3]);
void op_plan_cluster(op_plan *p, const mg_device *dev);

/* reduced.c: where a reduced dim lives (docs/tuning.md "Reduced dims"). op_reduced_masks sets
 * p->lmask from the program inputs' dims in_bits[0 .. n_in) (bit d: dim d follows the dim);
 * op_reduced_block sets k's op_tensor.lfrom (all -1 in a plan without lmask). Both refuse an
 * operator a mask cannot follow with MG_ERR_UNSUPPORTED. */
mg_status op_reduced_masks(op_plan *p, mg_ctx *ctx, const unsigned char *in_bits, int n_in);
mg_status op_reduced_block(const op_plan *p, mg_ctx *ctx, int knode, op_kernel *k);

#endif
