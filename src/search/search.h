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

/* ---- the search cache (scache.c, docs/search.md "The search cache") ----
 * Keyed by prog's canonical form up to renaming (src/ir/canon.h), every option of o that
 * changes what a search finds (all but time_limit, threads, progress, ckpt_dir, stop), the
 * target device and mugen's versions. The μGraphs are stored in canonical names and come
 * back in prog's names, so a piece found for layer 0 serves layer 7. */
/* The cache folder (created if need be): MUGEN_SEARCH_CACHE, else $XDG_CACHE_HOME/mugen/search,
 * else $HOME/.cache/mugen/search; NULL when MUGEN_SEARCH_CACHE=off or it cannot be made.
 * Thread-local storage, valid until the thread's next call. */
const char *sr_cache_dir(void);
/* Looks prog up. MG_OK with *hit = 1 and *r filled (free with sr_result_free; r->cached = 1,
 * r->cache_key its hash) on a hit; MG_OK with *hit = 0 and *r empty on a miss, also when
 * the cache is off or the entry was damaged (one line on stderr; the entry is removed);
 * MG_ERR_UNSUPPORTED (prog is a μGraph), MG_ERR_INVALID (bad o->ops or o->device),
 * MG_ERR_NOMEM. */
mg_status sr_cache_lookup(const ir_graph *prog, const sr_opts *o, mg_ctx *ctx, sr_result *r, int *hit);
/* Stores r, the result of sr_search(prog, o), for later lookups: only a complete search
 * (not stopped, every task done) that did not itself come from the cache; anything else,
 * or the cache off, is MG_OK without a write. Written atomically; evicts the least recently
 * used entries past MUGEN_SEARCH_CACHE_MB. MG_OK, MG_ERR_IO (the folder cannot be written),
 * MG_ERR_NOMEM, or a μGraph of r that does not parse (MG_ERR_PARSE). r is not changed. */
/* Starts and ends MPI for the ranks (ranks.c; mg_ranks_start). */
mg_status sr_ranks_start(int *argc, char ***argv, mg_ctx *ctx);
void sr_ranks_end(void);
/* This process's rank and the number of ranks (0 and 1 unless sr_ranks_start started MPI
 * under mpirun). */
int sr_rank(void);
int sr_n_ranks(void);
/* v as rank 0 has it (every rank calls it; v itself with one rank). */
int sr_ranks_bcast(int v);
mg_status sr_cache_store(const ir_graph *prog, const sr_opts *o, const sr_result *r, mg_ctx *ctx);
/* The folder (created) where a search of prog under o that has no checkpoint of its own keeps
 * its finished tasks (its o->ckpt_dir): CACHE/partial/HASH of the cache key and prog's own
 * text. A search stopped part way (Ctrl-C, a progress callback, its time limit, a crash)
 * reloads them when run again. 0 with buf (n bytes) filled; -1 with buf empty when the cache
 * is off or the folder cannot be made. */
int sr_cache_partial_dir(const ir_graph *prog, const sr_opts *o, mg_ctx *ctx, char *buf, size_t n);
/* Removes such a folder and its checkpoint's files (its search ended: stored, or failed). */
void sr_cache_partial_drop(const char *dir);

/* The cost model's estimate for a μGraph in microseconds on dev: per kernel, bytes over
 * bandwidth or FLOPs over the tensor-core rate, whichever is larger, divided by the share of
 * dev's SMs the kernel's waves of blocks keep busy, plus a launch each. */
double sr_cost_us(const ir_graph *ug, const mg_device *dev);

#endif
