/* What the public handles are, for the files that implement include/mugen.h (api.c,
 * driver.c). */
#ifndef MG_API_INTERNAL_H
#define MG_API_INTERNAL_H

#include "ir/ir.h"

struct mg_program {
    ir_graph *g;                  /* owned */
    int64_t *lens[IR_MAX_LENS];   /* bound lengths (mg_program_bind_lengths), owned; NULL: not bound */
};

/* MG_ERR_UNSUPPORTED naming `what` when g is a ragged program that stage cannot take yet. */
mg_status mg_ragged_refuse(const ir_graph *g, mg_ctx *ctx, const char *what);

#endif
