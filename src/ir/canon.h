/* canon: a Lax program's canonical form up to renaming (canon.c), for the search cache
 * (src/search/scache.c, docs/search.md "The search cache"), and renaming a program's or a
 * μGraph's inputs and outputs. */
#ifndef MG_CANON_H
#define MG_CANON_H

#include "ir.h"

/* A program's canonical form. text: one line per node in a canonical topological order
 * (a post-order walk from the outputs in declared order, operands in order; nodes no output
 * reads after: unused inputs in declared order, then the rest), each with its place, op,
 * dtype, shape, operands by place and attributes (constants as an exact fraction and the
 * double's bits); no names, no source positions. Same text iff the programs are the same
 * graph, so equal texts are always safe to share; the names of tensors and the order of
 * independent statements do not change it (except among statements no output reads, which
 * keep their relative order: a reordering there only changes the text).
 * The interface: real[k] is the program's name for the tensor canon[k] names in canonical
 * form: inputs "x0", "x1", ... in canonical order, outputs "y<j>" for declared output j
 * (an output that is an input keeps its "x" name). Invariant: n = inputs + outputs that are
 * not inputs; real[] points into the program (valid while it lives), canon[] into mem. */
typedef struct ir_canon {
    char *text;
    int n;
    const char **real, **canon;
    arena mem;
} ir_canon;

/* Fills *c with g's canonical form (free with ir_canon_free). MG_OK; MG_ERR_UNSUPPORTED for
 * a μGraph or block graph (graph-defined kernels have no canonical form here); MG_ERR_NOMEM.
 * On error *c is empty (ir_canon_free is still safe). */
mg_status ir_canon_new(const ir_graph *g, mg_ctx *ctx, ir_canon *c);
void ir_canon_free(ir_canon *c);

/* Renames g's tensors from[k] to to[k] (k < n) at once, in place (a from[k] that names no
 * tensor of g is skipped); the to[] names must be distinct (MG_ERR_INVALID otherwise). Any
 * other named tensor whose name is taken by a to[] name gets a fresh one ('_' appended), the
 * iterators of every graph-defined kernel follow their operands' new names (block graphs'
 * own tensors are another scope and keep theirs). MG_OK,
 * MG_ERR_INVALID, MG_ERR_NOMEM (g may then be half renamed: free it). */
mg_status ir_rename_io(ir_graph *g, const char *const *from, const char *const *to, int n,
                       mg_ctx *ctx);
/* Parses .mu text (a program or μGraph), renames as ir_rename_io, prints it back: *out is
 * the new text (base_free). MG_OK, a parse error, or ir_rename_io's errors. */
mg_status ir_rename_text(const char *text, const char *const *from, const char *const *to, int n,
                         mg_ctx *ctx, char **out);

#endif
