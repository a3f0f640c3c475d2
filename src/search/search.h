/* search: the expression-guided μGraph generator (Mirage §4, Algorithm 1), docs/search.md.
 *
 * Depth-first over kernel operators in canonical (rank) order: pre-defined operators and
 * graph-defined kernels, each kernel with its grid, for-loop, imaps and fmaps from candidate
 * sets and a nested depth-first generation of its block graph. Every new tensor's abstract
 * expression must be a subexpression of the program's (aexpr.h) unless pruning is off; shapes
 * and shared memory are checked before an operator is added. A kernel graph whose outputs are
 * A_eq-equal to the program's is a candidate: screened by a finite-field fingerprint against
 * the program (which also removes duplicates), then passed through the verifier. The first
 * level of choices is split into tasks that threads take in turn; results are merged in task
 * order, so what is found does not depend on the thread count.
 */
#ifndef MG_SEARCH_H
#define MG_SEARCH_H

#include "../ir/ir.h"

/* Options, results: the public mg_search_* structs (include/mugen.h). */
typedef mg_search_opts sr_opts;
typedef mg_found sr_found;
typedef mg_search_result sr_result;
void sr_opts_default(sr_opts *o);
/* Sets o's grid candidates for a GPU of n_sm multiprocessors (and o->n_sm): 1, 2 and, with P
 * the largest power of two <= n_sm, P/16, P/2, 3P/4 and P (132 SMs: 1,2,8,64,96,128), so a
 * grid of one or two dims can fill the machine in one wave. */
void sr_grid_for_sms(sr_opts *o, int n_sm);

/* Runs the search on Lax program prog (one part; see `mugen partition`). MG_OK with *r
 * filled (free with sr_result_free), also when nothing was found (r->why_none says why) or
 * when stopped early; MG_ERR_UNSUPPORTED if prog is not Lax; MG_ERR_IO for a checkpoint that
 * cannot be written or belongs to another search; MG_ERR_NOMEM. */
mg_status sr_search(const ir_graph *prog, const sr_opts *o, mg_ctx *ctx, sr_result *r);
void sr_result_free(sr_result *r);

/* The cost model's estimate for a μGraph in microseconds on dev: per kernel, bytes over
 * bandwidth or FLOPs over the tensor-core rate, whichever is larger, divided by the share of
 * dev's SMs the kernel's waves of blocks keep busy, plus a launch each. */
double sr_cost_us(const ir_graph *ug, const mg_device *dev);

#endif
