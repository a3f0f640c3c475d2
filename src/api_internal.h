/* What the public handles are, for the files that implement include/mugen.h (api.c,
 * driver.c). */
#ifndef MG_API_INTERNAL_H
#define MG_API_INTERNAL_H

#include "ir/ir.h"

struct mg_program {
    ir_graph *g; /* owned */
};

#endif
