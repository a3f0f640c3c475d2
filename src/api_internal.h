/* What the public handles are, for the files that implement include/mugen.h (api.c,
 * driver.c). */
#ifndef MG_API_INTERNAL_H
#define MG_API_INTERNAL_H

#include "ir/ir.h"

struct mg_program {
    ir_graph *g;                  /* owned */
    int64_t *lens[IR_MAX_LENS];   /* bound lengths (mg_program_bind_lengths), owned; NULL: not bound */
    char *src, *file;             /* a program of symbolic dims: its text, parsed again at each binding */
    size_t src_len;
    int64_t variant[IR_MAX_SYMS]; /* mg_program_set_variant: the capacity a call runs; 0: chosen (mg_program_variant) */
};

/* The capacity whose variant a call runs for symbolic dim k at its bound value: the one set by
 * mg_program_set_variant; else, for a program of one dim with MUGEN_SELECTOR naming a weights
 * file, the selector's choice (tune/selector.c; *how = 1), falling back to the smallest
 * capacity that holds the value when the file cannot be used or the value is outside the
 * range it was trained on (*how = 2); else that smallest capacity (*how = 0). how may be NULL. */
int64_t mg_program_variant(const mg_program *prog, int k, int *how);

/* Per input of a program of one symbolic dim, in order (bits[0 .. max)), the dims (bit d:
 * dim d) that follow the dim: those that differ between two instances (ir_sym_check's
 * probes). MG_ERR_INVALID for a program of no or several dims. */
mg_status mg_program_dim_bits(const mg_program *prog, mg_ctx *ctx, unsigned char *bits, int max);

/* MG_ERR_UNSUPPORTED naming `what` when g is a ragged program that stage cannot take yet. */
mg_status mg_ragged_refuse(const ir_graph *g, mg_ctx *ctx, const char *what);
/* MG_ERR_INVALID naming prog's first lengths not bound (mg_program_bind_lengths), else MG_OK. */
mg_status mg_lengths_bound(const mg_program *prog, mg_ctx *ctx);
/* What mg_run and mg_compile (`what`) run: a prog of symbolic dims as its instance at the
 * capacities that hold its bound values (ir_sym_capacity; NULL when they are the values); a ragged prog with bound lengths as its token form
 * over the batch's tokens rounded up to MG_TOKEN_ROWS (ir_token_form; rows past the tokens are
 * computed and ignored) in *tok, owned by the caller; NULL for a static one. With attention,
 * the token form's input 0 is the lengths (f32[B], named as the lengths declaration). A
 * μGraph given for a ragged program, or a ragged μGraph, is refused. */
enum { MG_TOKEN_ROWS = 128 }; /* whole 128-row tiles (lower.c LW_BIG) */
/* The capacity rows of a token form over T tokens. */
static inline int64_t mg_token_rows(int64_t T) { return (T + MG_TOKEN_ROWS - 1) / MG_TOKEN_ROWS * MG_TOKEN_ROWS; }
/* prog (of one symbolic dim) instanced at cap, a capacity of the dim: the variant's program,
 * static, into *out (ir_graph_free). */
mg_status mg_program_instance(const mg_program *prog, mg_ctx *ctx, int64_t cap, ir_graph **out);
mg_status mg_token_program(const mg_program *prog, const mg_program *ugraph, mg_ctx *ctx, const char *what, ir_graph **tok);

#endif
