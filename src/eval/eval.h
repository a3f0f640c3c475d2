/* eval: the two reference interpreters, "the living definition" of what a program means.
 *   float: every op in f32 (or f64), inputs and outputs rounded to their dtype (feval.c)
 *   field: every value a pair in Z_p x Z_q, Mirage Table 3 (ffeval.c, ff.h)
 * Both walk the graph in node order, index tensors through the same helpers below and free
 * each intermediate after its last use. */
#ifndef MG_EVAL_H
#define MG_EVAL_H

#include "../ir/ir.h"
#include "ff.h"

/* Views shared by both evaluators; every shape is padded on the left to 4 dims. */
typedef struct ev_bcast { /* elementwise binary op with numpy broadcasting */
    int64_t n[4];         /* output sizes */
    int64_t sa[4], sb[4]; /* element strides of a and b (0 on broadcast dims) */
} ev_bcast;
void ev_bcast_init(ev_bcast *v, const ir_shape *out, const ir_shape *a, const ir_shape *b);

typedef struct ev_reduce { /* in viewed as [outer, n_out * group, inner] */
    int64_t outer, n_out, group, inner;
} ev_reduce;
void ev_reduce_init(ev_reduce *v, const ir_node *n, const ir_shape *in);

typedef struct ev_matmul {   /* out[b] = a[ba] x b[bb] for b over the flattened batch */
    int64_t batch, m, k, n;  /* batch = product of leading dims of the output */
    int64_t *a_off, *b_off;  /* per output batch: element offset into a and b (owned) */
} ev_matmul;
mg_status ev_matmul_init(ev_matmul *v, const ir_shape *out, const ir_shape *a, const ir_shape *b);
void ev_matmul_free(ev_matmul *v);

/* Source index for each output element of a layout op (repeat, concat: which operand and
 * where). For REPEAT src[i] indexes the operand; for CONCAT src[i] >= 0 indexes operand 0 and
 * src[i] < 0 means operand 1 at -src[i]-1. For TRANSPOSE and SLICE src[i] indexes the operand.
 * RESHAPE is the identity. Caller frees. */
int64_t *ev_layout_map(const ir_graph *g, const ir_node *n);

/* μGraph tiles (Mirage §2). The tile a node of a block graph touches, for block b[3] and
 * for-loop iteration it, starts at off[] (per dim, padded to 4 dims on the left):
 *   ITER:  in its kernel input (imap: block index times the block's chunk; fmap: plus it
 *          times the tile), SAVE: in the kernel output (omap), ACCUM with an fmap: in the
 *          accumulator (iteration it's slot). */
void ev_tile_offset(const ir_graph *body, const ir_node *n, const int b[3], int64_t it,
                    int64_t off[4]);
/* Copies the tile of shape ts at off[] between a dense tile buffer and a full tensor of
 * shape fs (gather: full -> tile; scatter: tile -> full). elem = bytes per element. */
void ev_tile_copy(void *tile, void *full, size_t elem, const ir_shape *ts, const ir_shape *fs,
                  const int64_t off[4], int scatter);

/* The block-by-block, iteration-by-iteration walk of a block graph (Mirage §2), written once
 * for both evaluators; each supplies how its values move and combine. For every block of the
 * grid and every for-loop iteration it runs, in node order: constants (once per block),
 * iterators (EV_GATHER their tile), loop operators (run), accumulators (add: first
 * iteration copies, later ones add; or EV_PLACE the iteration's tile into its slot); after
 * the loop, post-loop operators (run) and savers (EV_SCATTER into the kernel output). */
enum { EV_GATHER, EV_PLACE, EV_SCATTER };
typedef struct ev_block_ops {
    void *self;
    mg_status (*run)(void *self, int i);                      /* ordinary operator i */
    void (*copy)(void *self, int how, int i, const int64_t off[4]); /* EV_* for node i */
    void (*add)(void *self, int i, int first);                /* accumulator i += its operand */
} ev_block_ops;
mg_status ev_block_walk(const ir_graph *b, mg_ctx *ctx, const ev_block_ops *ops);

/* From now on, on this thread, both evaluators stop with MG_ERR_LIMIT at the next node (or
 * block of a kernel) once *stop is non-zero (read atomically); NULL: never. The verifier sets
 * it for its time limit, so one long evaluation does not outlive it. */
void ev_set_stop(const int *stop);
/* The same with a predicate: stop once stopped(arg) returns non-zero (NULL: never). */
void ev_set_stop_fn(int (*stopped)(void *), void *arg);
mg_status ev_check_stop(mg_ctx *ctx);
/* Whether this thread's stop request is seen now (no message): long loops inside one node
 * (a matmul of 4096 x 11008 x 4096 is minutes in the field) poll it every few rows. */
int ev_stopping(void);

/* Index of the last node reading each node (or n_nodes for outputs); caller frees. */
int *ev_last_use(const ir_graph *g);

/* Refuses tensors the host cannot hold: MG_ERR_NOMEM naming the tensor when a tensor of
 * numel elements of elem_size bytes exceeds the evaluator's limit (MUGEN_EVAL_MAX_GB); and
 * MG_ERR_LIMIT once this thread's stop flag is set (ev_set_stop). */
mg_status ev_check_size(const ir_graph *g, mg_ctx *ctx, int i, size_t elem_size);

/* The float meaning of elementwise operator op (unary: of a; binary: of a and b), in double
 * (feval.c; scalar.h's, libm's exp and sqrt). */
double ev_scalar(ir_op op, double a, double b);
/* feval.c / ffeval.c implement mg_eval_float / mg_eval_field on an ir_graph. ev_float's
 * mode: EV_F64 keeps intermediates in f64 (else f32); EV_ROUNDED says every input already
 * holds values of its dtype, so it is read in place instead of copied and rounded; EV_RAW_OUT
 * leaves the outputs unrounded (how far past its dtype's range a value is). Both
 * evaluators only read in[]; ev_field's inputs must already be reduced (mg_eval_field checks
 * them for callers from outside). */
enum { EV_F64 = 1, EV_ROUNDED = 2, EV_RAW_OUT = 4 }; /* EV_RAW_OUT: outputs not rounded to their dtype */
mg_status ev_float(const ir_graph *g, mg_ctx *ctx, int mode, const double *const *in,
                   double *const *out);
/* ev_float on ragged program g (g->n_lens > 0) with run-time lengths lens[k][b] (checked by
 * ir_lengths_check): ragged inputs and outputs packed, sequence by sequence (eval/ragged.c). */
mg_status ev_float_ragged(const ir_graph *g, mg_ctx *ctx, int mode, const int64_t *const *lens, const double *const *in,
                          double *const *out);
/* ev_field the same way; an empty sequence's per-sequence outputs without ragged dims hold
 * 0xFFFFFFFF in both planes (no field element). */
mg_status ev_field_ragged(const ir_graph *g, mg_ctx *ctx, const ff_field *F, const int64_t *const *lens,
                          const uint32_t *const *in_p, const uint32_t *const *in_q, uint32_t *const *out_p,
                          uint32_t *const *out_q);
mg_status ev_field(const ir_graph *g, mg_ctx *ctx, const ff_field *F, const uint32_t *const *in_p,
                   const uint32_t *const *in_q, uint32_t *const *out_p, uint32_t *const *out_q);
/* ev_field that also records, in evaluation order (node order; kernels block by block), the
 * exponent of every exp and silu element it evaluates: x_q for exp(x), -x_q for silu(x) =
 * x / (1 + exp(-x)). The verifier matches a μGraph's exponents to the program's with it
 * (docs/verify.md, "Exp terms"). log->v grows (base_realloc; the caller frees it) up to
 * log->max entries; past that log->n is -1. */
typedef struct ev_exp_log {
    uint32_t *v;
    int64_t n, cap, max;
} ev_exp_log;
mg_status ev_field_log(const ir_graph *g, mg_ctx *ctx, const ff_field *F, const uint32_t *const *in_p,
                       const uint32_t *const *in_q, uint32_t *const *out_p, uint32_t *const *out_q,
                       ev_exp_log *log);

/* The error scale of every output element of g (mag.c; docs/verify.md): scale[k] receives, per
 * element of output k, a first-order bound (>= |value|) on how far rounding moves it, in
 * units of the unit roundoff, for inputs in[] (already of their dtypes). MG_ERR_UNSUPPORTED
 * for graphs with kernels (a μGraph as the reference), MG_ERR_NOMEM. */
mg_status ev_mag(const ir_graph *g, mg_ctx *ctx, const double *const *in, double *const *scale);

#endif
