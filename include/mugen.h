/* mugen: a superoptimizing compiler for GPU tensor programs.
 *
 * The only public header. C11, opaque handles, every fallible call returns an mg_status and
 * leaves a one-line message in its mg_ctx (mg_ctx_error). Nothing here aborts on user input.
 * Pipeline so far: parse (.mu text or JSON) -> shape inference -> Lax check / partition ->
 * reference evaluation (float, or finite field Z_p x Z_q).
 */
#ifndef MUGEN_H
#define MUGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* mugen's version: part of the search cache's key (docs/search.md). */
#define MG_VERSION "0.1.0"

typedef enum mg_status {
    MG_OK = 0,
    MG_ERR_PARSE,       /* program text or JSON is malformed */
    MG_ERR_SHAPE,       /* shapes or attributes do not fit an operator */
    MG_ERR_IO,          /* a file could not be read or written */
    MG_ERR_NOMEM,       /* an allocation failed or a tensor is too large */
    MG_ERR_UNSUPPORTED, /* e.g. a non-Lax operator in the finite-field evaluator */
    MG_ERR_DIV_ZERO,    /* division by zero in the finite field */
    MG_ERR_INVALID,     /* bad argument to an API call */
    MG_ERR_LIMIT,       /* a size limit of the IR was exceeded, or a progress callback stopped the work */
    MG_ERR_NO_DEVICE,   /* GPU work was asked for but there is no driver, library or GPU */
    MG_ERR_COMPILE,     /* generated code did not compile (the compiler log is in the message) */
    MG_ERR_LAUNCH,      /* a kernel could not be launched, faulted or crashed */
    MG_ERR_MISMATCH     /* a run's outputs differ from the reference beyond tolerance */
} mg_status;

typedef enum mg_dtype { MG_F16 = 0, MG_BF16, MG_F32 } mg_dtype;

enum { MG_MAX_DIMS = 4 };

typedef struct mg_ctx mg_ctx;         /* error message holder; one per thread */
typedef struct mg_program mg_program; /* a parsed, shape-checked kernel graph */

/* Describes one input or output tensor. `name` is owned by the program. */
typedef struct mg_tensor_desc {
    const char *name;
    mg_dtype dtype;
    int ndim;
    int64_t dims[MG_MAX_DIMS];
    int64_t numel;
    int ragged[MG_MAX_DIMS]; /* dim k ragged by lengths ragged[k] - 1 (docs/ragged.md; dims[k] its
                              * maximum), 0: a static dim */
    double range;     /* an input's random test values are uniform in [-range, range) (its
                       * `range=`, docs/ir.md; 1 unless given); 0 for an output */
} mg_tensor_desc;

/* Output formats of mg_program_format. */
typedef enum mg_format { MG_FMT_TEXT = 0, MG_FMT_JSON, MG_FMT_DOT, MG_FMT_PARTITION, MG_FMT_TASKS } mg_format;

/* Context. mg_ctx_new returns NULL only when out of memory; mg_ctx_free(NULL) is a no-op.
 * mg_ctx_error returns the message of the last failed call (owned by ctx, valid until the
 * next call on ctx), or "" if none. */
mg_ctx *mg_ctx_new(void);
void mg_ctx_free(mg_ctx *ctx);
const char *mg_ctx_error(const mg_ctx *ctx);
const char *mg_status_name(mg_status s);

/* Host allocation hook: every allocation of the library goes through it. Passing NULL restores
 * malloc/realloc/free. Used by tests to fail the N-th allocation. Not thread-safe to change. */
typedef void *(*mg_realloc_fn)(void *ptr, size_t size, void *user);
void mg_set_allocator(mg_realloc_fn fn, void *user);
/* The plain lowering (docs/lower.md): *out = prog as a μGraph with a default schedule per
 * kernel (matmuls on tensor cores with their elementwise prologues and epilogues, row
 * reductions, elementwise trees), the same inputs and outputs; what no kernel form holds
 * stays a kernel-level operator. prog must hold no kernels (MG_ERR_INVALID). The caller owns
 * *out (mg_program_free). `mg_run` does this itself when it is given no μGraph. */
mg_status mg_program_lower(mg_ctx *ctx, const mg_program *prog, mg_program **out);

/* Frees memory returned by the library (strings from mg_program_format). NULL is a no-op. */
void mg_free(void *p);

/* Parses `len` bytes of program text (.mu, or JSON when the first non-blank byte is '{').
 * `filename` is used in messages. On success *out owns a new program (mg_program_free). */
mg_status mg_program_parse(mg_ctx *ctx, const char *text, size_t len, const char *filename,
                           mg_program **out);
/* Reads and parses a file; "-" reads standard input. */
mg_status mg_program_load(mg_ctx *ctx, const char *path, mg_program **out);
void mg_program_free(mg_program *prog);

int mg_program_n_inputs(const mg_program *prog);
int mg_program_n_outputs(const mg_program *prog);
/* Fills *d for input/output i (0 <= i < n); returns MG_ERR_INVALID for a bad index. A ragged
 * tensor (docs/ragged.md) reports its dims at the lengths' maxima and, once every lengths is
 * bound, numel = its packed element count (its sequences' slabs in order); unbound, 0. */
mg_status mg_program_input(const mg_program *prog, int i, mg_tensor_desc *d);
mg_status mg_program_output(const mg_program *prog, int i, mg_tensor_desc *d);

/* Ragged programs (`lengths NAME[count] max=M`, docs/ragged.md): the number of lengths
 * declarations, and binding lengths NAME to the run-time vector len[0..n) (copied): n must be
 * its count and each length in [0, M], else MG_ERR_INVALID naming the entry. The evaluators
 * then take and give ragged tensors packed. A sequence of length 0 has no elements in a
 * ragged tensor; a per-sequence tensor without ragged dims (a reduction over one) is NaN for
 * it. Rebinding replaces the vector. */
int mg_program_n_lengths(const mg_program *prog);
/* Lengths declaration k (0 <= k < mg_program_n_lengths): its name, count and maximum (any
 * pointer may be NULL); MG_ERR_INVALID for a bad k. */
mg_status mg_program_lengths(const mg_program *prog, int k, const char **name, int64_t *count, int64_t *max);
mg_status mg_program_bind_lengths(mg_ctx *ctx, mg_program *prog, const char *name, const int64_t *len, int64_t n);

/* Symbolic dims (`dim B [LO, HI]`, docs/tuning.md "Symbolic dims"): the number a program
 * declares (0 for a static one); dim k's name, range and bound value (by default HI), NULL
 * pointers skipped (MG_ERR_INVALID for a bad k). mg_program_bind_dim binds dim `name` to value
 * (in its range, else MG_ERR_INVALID): the program becomes its instance there (its inputs and
 * outputs have that many rows); mg_run, mg_emit, mg_compile and mg_tune then plan the variant
 * compiled for the smallest capacity that holds it (1, 2, 4, ... 128, then multiples of 128,
 * at most HI), the rows past value computed and ignored (mg_compile's handle takes buffers of
 * the capacity's rows: mg_compiled_input). A dim must be a batch of independent rows (dim 0 of
 * the tensors it reaches; checked when the program is parsed, sym.c). */
int mg_program_n_dims(const mg_program *prog);
mg_status mg_program_dim(const mg_program *prog, int k, const char **name, int64_t *lo, int64_t *hi, int64_t *val);
mg_status mg_program_bind_dim(mg_ctx *ctx, mg_program *prog, const char *name, int64_t value);
/* Which variant a call runs for dim `name` (docs/tuning.md "The selector"): cap, a capacity of
 * its range that must hold the bound value when the program runs (MG_ERR_INVALID then, and
 * here when cap is no capacity); 0: chosen again at each call (MUGEN_SELECTOR's weights, else
 * the smallest capacity that holds the value). */
mg_status mg_program_set_variant(mg_ctx *ctx, mg_program *prog, const char *name, int64_t cap);
/* The smallest capacity of dim k that holds value v (v itself when dim k is not declared). */
int64_t mg_program_dim_capacity(const mg_program *prog, int k, int64_t v);
/* 1 when dim k is a reduced dim (a KV length: summed or contracted, anywhere in a tensor;
 * capacities 128, 256, 512, ...; a call's entries past its value are never read, whatever the
 * buffers hold there: docs/tuning.md "Reduced dims"), 0 when it is a batch of independent rows
 * or not declared. */
int mg_program_dim_reduced(const mg_program *prog, int k);
/* The capacity whose variant a call of dim k's bound value runs: mg_program_set_variant's,
 * else the learned selector's choice (MUGEN_SELECTOR, docs/tuning.md), else the smallest that
 * holds it. 0 when dim k is not declared. */
int64_t mg_program_dim_choice(const mg_program *prog, int k);

/* Renders the program as .mu text, JSON, Graphviz dot, its Lax partition (as .mu text, one
 * subprogram per part), or (MG_FMT_TASKS) the task graph a megakernel would run, as Graphviz
 * dot: the program lowered unless it is a μGraph, planned for the default device, cut into
 * tasks with exact dependencies and checked (docs/megakernel.md; MG_ERR_INVALID names what a
 * check found). *out is a NUL-terminated string the caller frees with mg_free. */
mg_status mg_program_format(mg_ctx *ctx, const mg_program *prog, mg_format fmt, char **out);

/* Lax check (Mirage Definition 5.1). *is_lax is 1 or 0; when 0 and why != NULL, *why gets a
 * one-line reason owned by ctx (valid until the next call on ctx). */
mg_status mg_program_lax(mg_ctx *ctx, const mg_program *prog, int *is_lax, const char **why);

/* Float reference evaluation. inputs[i] holds input i row-major (numel doubles); the values
 * are first rounded to the input's dtype. Computation is in f32 (or f64 when f64 != 0); each
 * output is rounded to its dtype and written to outputs[i] (numel doubles, caller-owned). */
mg_status mg_eval_float(mg_ctx *ctx, const mg_program *prog, int f64, const double *const *inputs,
                        double *const *outputs);

/* A field of the finite-field test: primes q in [2^30, 2^31) (q = 7 mod 8) and p = 2q + 1, and
 * omega, a q-th root of unity other than 1 in Z_p (docs/verify.md). */
typedef struct mg_field {
    uint32_t p, q, omega;
} mg_field;
/* The field a seed draws: q uniform among the family's primes, omega uniform among the q-th
 * roots of unity other than 1; the same seed gives the same field. */
void mg_field_draw(uint64_t seed, mg_field *f);
/* Finite-field reference evaluation over Z_p x Z_q of field f (Mirage Table 3). Input i is
 * given as its Z_p parts in_p[i] (< p) and Z_q parts in_q[i] (< q). Output parts go to
 * out_p/out_q; an out_q entry equal to MG_FIELD_NONE means "no exponent component" (the value
 * came out of exp). Fails with MG_ERR_INVALID if f is not a field of the family,
 * MG_ERR_UNSUPPORTED on non-Lax programs and MG_ERR_DIV_ZERO on division by zero. */
#define MG_FIELD_NONE 0xFFFFFFFFu
mg_status mg_eval_field(mg_ctx *ctx, const mg_program *prog, const mg_field *f,
                        const uint32_t *const *in_p, const uint32_t *const *in_q,
                        uint32_t *const *out_p, uint32_t *const *out_q);
/* Largest tensor, in bytes, the reference evaluators (and callers preparing their inputs)
 * should allocate: MUGEN_EVAL_MAX_GB, default 8 GB (docs/env.md). */
double mg_eval_max_bytes(void);

/* ---- equivalence verification (Mirage §5.2; docs/verify.md) ---- */
typedef enum mg_verdict {
    MG_EQUIVALENT = 0,  /* passed every random test over Z_p x Z_q and the float test */
    MG_NOT_EQUIVALENT,  /* a test found an output element that differs (the witness) */
    MG_NOT_LAX,         /* outside what the verifier decides (Mirage Definition 5.1) */
    MG_UNSTABLE         /* equivalent in the field, but float results stray past tolerance */
} mg_verdict;

typedef struct mg_verify_report {
    mg_verdict verdict;
    int tests;          /* random tests run */
    double log2_bound;  /* log2 of the false-acceptance bound (Theorem 2/3); 0 if vacuous */
    int degree;         /* estimated polynomial degree d and exp terms k used for the bound */
    double exp_terms;
    double float_error, float_tol; /* the float test's worst error over its element's scale, and the limit */
    uint64_t seed;      /* the seed the fields and inputs were drawn from: the same seed, the same verdict */
    int field_retries;  /* field tests redone in a fresh field after a field zero (docs/verify.md) */
    int exp_bound;      /* 1: log2_bound is the independent-exponents bound, not Theorem 2's */
    char text[2048];    /* the verdict in words, with the witness or the reason */
} mg_verify_report;

/* Decides whether ugraph computes the same function as prog: same inputs and outputs (names,
 * dtypes, shapes), then `tests` random tests over Z_p x Z_q with fresh inputs and omega each
 * (0: as many as needed for a 2^-40 bound, see docs/verify.md), then one float test against
 * the f64 evaluation of prog. MG_OK with *r filled, or an error for mismatched interfaces.
 * Ragged programs (docs/ragged.md): the same at 4 length vectors (1, the maximum, two drawn),
 * each a sequence's static programs; r->text lists the vectors tried. A ragged program against
 * a static μGraph of its token form (mg_search, mg_optimize_program with lengths bound): the
 * token form over the μGraph's rows, which holds for every batch of that many tokens or fewer;
 * MG_ERR_UNSUPPORTED when it attends over its ragged dim (seqattn). */
mg_status mg_verify(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph, int tests,
                    uint64_t seed, mg_verify_report *r);

/* ---- the superoptimizer (docs/search.md) ---- */
enum { MG_SEARCH_MAX_CAND = 16 };

/* Where a search stands, for a progress callback (mg_search_opts.on_progress). */
typedef struct mg_progress {
    int piece, n_pieces;         /* mg_optimize_program: the piece being searched, 1-based, of the
                                  * pieces it searches (its unique Lax forms); 0, 0 in mg_search */
    int64_t tasks_done, n_tasks; /* the search's tasks (docs/search.md); n_tasks 0 until they are
                                  * made, and in a call at a piece's start or end (see below) */
    int64_t found;               /* μGraphs verified so far in this search (the result, ranked
                                  * and without duplicates, can hold fewer) */
    double seconds;              /* since this search (or piece) started */
    int piece_done;              /* 1 in the call after a piece's search ends (searched or read
                                  * from the cache), 0 otherwise */
} mg_progress;
/* A progress callback: arg is the options' on_progress_arg; p is valid for the call only.
 * Returning nonzero stops the search as a stop request does; mg_optimize_program then stops
 * too (MG_ERR_LIMIT). */
typedef int (*mg_progress_fn)(void *arg, const mg_progress *p);

/* Search limits and switches; mg_search_defaults fills the documented defaults (docs/search.md). */
typedef struct mg_search_opts {
    int max_kops;      /* kernel operators (default 5) */
    int max_bops;      /* block operators, iterators and savers included (default 11) */
    int max_kin;       /* tensors a graph-defined kernel reads (default 3) */
    int max_kout;      /* tensors a graph-defined kernel writes (default 2) */
    int max_kernels;   /* graph-defined kernels among the kernel operators (default 1) */
    int max_grid_dims; /* grid dims used (1..3, default 2) */
    int max_blocks;    /* largest grid (product of its dims, default 1024) */
    int n_sm;          /* multiprocessors of the target GPU (default: the device's): the cost
                          model's waves and the default grid candidates */
    int grid[MG_SEARCH_MAX_CAND], n_grid;       /* candidate sizes of one grid dim */
    int forloop[MG_SEARCH_MAX_CAND], n_forloop; /* candidate for-loop ranges */
    int prune;          /* abstract-expression pruning (default 1) */
    int threads;        /* worker threads (0: one per core) */
    double time_limit;  /* seconds, 0 = none */
    double slack;       /* verify a schedule only if the cost model puts it within slack times
                           the best schedule of the same operators (default 1.5; 0: every one) */
    int verify_tests;   /* tests per candidate (0: as many as the verifier's bound needs) */
    uint64_t seed;      /* verifier seed */
    int progress;       /* print a progress line on stderr */
    const char *ckpt_dir; /* checkpoint folder (NULL: none) */
    volatile int *stop;           /* set asynchronously (Ctrl-C): end early, keep what was found */
    int64_t eg_max_nodes; /* e-graph bound (0: default) */
    const char *ops;      /* the operators the search may place, comma-separated (exp, sqr, sqrt,
                             silu, add, sub, mul, div, matmul, sum, concat, rmsnorm: the rows of
                             src/ir/ops.def whose search column is 1); NULL: all */
    const char *device;   /* the target GPU: a row of the device table by name (src/ir/device.c;
                             mg_search_set_device); NULL: the table's first row */
    int no_lowered;       /* 1: leave the plain lowering's μGraph out of the results (it is
                             verified and ranked with the others by default: docs/search.md) */
    mg_progress_fn on_progress; /* NULL: none. Called on the thread that called mg_search (never
                             on a worker) about ten times a second while the tasks run and once
                             when they end, and before them while the e-graph saturates and the
                             screen's tests are built (0 of 0 tasks); tasks_done never decreases
                             within a search; a nonzero return stops it, at any of these. Not
                             called with MPI ranks, nor when the search runs on the caller's
                             thread alone (no worker thread could start) */
    void *on_progress_arg;
} mg_search_opts;

/* One verified μGraph. */
typedef struct mg_found {
    char *text;       /* the μGraph as .mu text (owned) */
    int kops, bops;   /* kernel operators; block operators summed over its kernels */
    int kernels;      /* graph-defined kernels among kops */
    double cost_us;   /* the cost model's estimate (docs/search.md) */
    double float_error; /* the verifier's float test: worst error over its element's scale (docs/verify.md) */
    int aeq;          /* its abstract expression is A_eq-equal to the program's */
    int task;         /* which task found it; -1: the plain lowering, -2, -3, ...: the lowering
                       * with its second, third, ... tiling of products (docs/search.md) */
    char verdict[256];
} mg_found;

typedef struct mg_search_result {
    mg_found *found; /* sorted by cost, then float error (numerically safer first), then text */
    int n_found;
    int64_t states, pruned, candidates, rejected, duplicates;
    int64_t screened; /* of the rejected: by the small untiled screen, not at full size */
    int64_t dominated; /* schedules not pursued: slower than slack times their group's best */
    int64_t unfit;     /* candidates whose optimizer plan exceeds the GPU's shared memory */
    double verify_seconds; /* thread-seconds spent screening and verifying candidates */
    double first_seconds;  /* when the first μGraph was verified (0: none) */
    int64_t tasks, tasks_done, tasks_resumed;
    double seconds;
    int stopped; /* 1 if the time limit or a stop request ended it early */
    /* the program's abstract expression and its e-graph */
    char *expr;
    int64_t eg_nodes, eg_classes;
    int eg_saturated;
    double eg_seconds;
    char why_none[512]; /* when nothing was found: why */
    int cached;         /* 1: read from the search cache (the counts are the stored search's) */
    char cache_key[17]; /* then: the entry's key, 16 hex digits */
} mg_search_result;

/* Fills *o with the defaults. */
void mg_search_defaults(mg_search_opts *o);
/* Targets a GPU of n_sm multiprocessors: o->n_sm and the grid candidates derived from it
 * (1, 2, P/16, P/2, 3P/4, P for P the largest power of two <= n_sm; docs/search.md). */
void mg_search_set_sms(mg_search_opts *o, int n_sm);
/* Targets the device table's row `name` (src/ir/device.c): o->device, whose rates the cost
 * model then uses, and its multiprocessors through mg_search_set_sms. MG_ERR_INVALID, naming
 * the known devices, for a name the table does not hold. */
mg_status mg_search_set_device(mg_ctx *ctx, mg_search_opts *o, const char *name);
/* Sets the limit or switch of o that `mugen search` spells --NAME to value, given as on the
 * command line: max-kops, max-bops, max-kin, max-kout, max-kernels, grid-dims, max-blocks,
 * threads, tests (ints in the ranges `mugen search --help` gives), time-limit (seconds > 0),
 * slack, seed, ops (kept by o, not copied). NAME may start with dashes and spell '-' as '_'.
 * MG_ERR_INVALID naming the option (as given) and what it takes, o unchanged, for a bad value
 * or an unknown name. */
mg_status mg_search_set(mg_ctx *ctx, mg_search_opts *o, const char *name, const char *value);
/* The superoptimizer (docs/search.md): every μGraph within o's limits that computes prog,
 * each verified; ranked by the cost model. MG_OK with *r filled (free with
 * mg_search_result_free) also when nothing was found (r->why_none) or when stopped early
 * (time limit, *o->stop); MG_ERR_UNSUPPORTED if prog is not Lax; MG_ERR_IO for a
 * checkpoint folder that cannot be used. A ragged program with bound lengths is searched as its
 * token form at that batch's capacity (docs/ragged.md): its μGraphs run every batch of that
 * capacity (mg_run with the lengths bound); MG_ERR_INVALID with lengths unbound,
 * MG_ERR_UNSUPPORTED when it attends over its ragged dim (mg_optimize_program searches its
 * token-wise pieces). */
mg_status mg_search(mg_ctx *ctx, const mg_program *prog, const mg_search_opts *o,
                    mg_search_result *r);
void mg_search_result_free(mg_search_result *r);
/* flags of mg_search_cached */
enum { MG_CACHE_REFRESH = 1 /* search even when the cache holds prog; store the new result */ };
/* mg_search through the search cache (docs/search.md, "The search cache"; its folder and size
 * limit in docs/env.md): prog is looked up by its canonical form up to renaming with o's
 * result-changing options, the device and mugen's version; a hit fills *r without searching
 * (r->cached = 1, its μGraphs in prog's names); a miss searches and stores a complete result.
 * A damaged entry is reported on stderr, removed and searched again. Returns what mg_search
 * returns; a result that cannot be stored only prints a note on stderr. */
mg_status mg_search_cached(mg_ctx *ctx, const mg_program *prog, const mg_search_opts *o, int flags,
                           mg_search_result *r);
/* Many processes (docs/search.md, "Ranks"). In a build with MPI (make mpi) under mpirun,
 * starts MPI so that mg_search and mg_search_cached spread their tasks over the ranks: every
 * rank calls them with the same program and options, rank 0 gets the result (and alone uses
 * the checkpoint and the search cache), the others an empty one. *rank and *n_ranks: this
 * process's rank and the number of ranks (0 and 1 without MPI or mpirun). Call it once before
 * any search and mg_ranks_end once at the end. MG_ERR_IO if MPI does not start. */
mg_status mg_ranks_start(mg_ctx *ctx, int *argc, char ***argv, int *rank, int *n_ranks);
void mg_ranks_end(void);

/* ---- code generation and running (docs/codegen.md) ---- */
typedef enum mg_backend { MG_BACKEND_AUTO = 0, MG_BACKEND_GPU, MG_BACKEND_C } mg_backend;
typedef enum mg_target { MG_TARGET_CUDA = 0, MG_TARGET_C } mg_target;

/* Options of mg_run / mg_emit; zero-initialised means the defaults. */
typedef struct mg_run_opts {
    mg_backend backend; /* AUTO: the GPU if one can be opened, else C */
    uint64_t seed;      /* random inputs, uniform in [-1, 1) rounded to each dtype */
    int reps;           /* timed runs, median reported (0: 50, on C stopping after 1 s of
                         * timed runs; < 0: no timing) */
    int no_reuse;       /* optimizer ablations: no shared-memory reuse, */
    int no_depth;       /* a barrier after every block operator, */
    int no_layout;      /* plain row-major shared-memory tensors, */
    int no_pipeline;    /* iterator tiles loaded at each iteration's start, no stages ahead, */
    int no_regacc;      /* summed matmuls through shared memory, not kept in registers, */
    int no_blocksize;   /* the μGraph's own threads per block, not sized to the work */
    int no_chain;       /* attention's score tile stored in shared memory, not kept in registers */
    int wgmma;          /* a chain's products by sm_90a warpgroup wgmma, not mma.sync (opt-in) */
    int persist;        /* the program as one persistent launch (opt-in: slower so far): 2 the
                         * megakernel's static schedule (block b runs tasks b, b + G, ... of G
                         * co-resident blocks; docs/megakernel.md), 1 blocks take tasks by ticket,
                         * 3 a scheduler block hands ready tasks to the other blocks' queues */
    int cluster;        /* a split's combine run by the splits' thread-block clusters (opt-in: slower so far) */
    int no_pdl;         /* kernels launched one after another, not as programmatic dependents */
    int no_tma;         /* plain product loops load by cp.async and multiply by mma.sync, not by
                         * TMA and sm_90a's wgmma (opt/tma.c) */
    int prefetch;       /* GPU block kernels prefetch their weights into L2 before waiting for
                         * the kernel before them, and let the next launch early (opt-in) */
    int plain;          /* a program given without μGraph runs one per-element kernel per
                         * operator (the path before docs/lower.md), not lowered */
    int specials;       /* every third input element NaN, +inf, -inf, -0 or +0 in turn: outputs
                         * must then match the reference's NaN, infinities and signed zeros */
    const char *schedule; /* GPU: a point of the schedule space (docs/tuning.md, `mugen space`),
                         * "NAME=VALUE,...", e.g. "k0.stages=3,k0.pair=2,depth=0": those
                         * choices forced, the rest the rules'; a name not in the space, a value
                         * not in its domain or a point a constraint rejects is refused (NULL or
                         * "": the rules' point, or the tuning cache's below) */
    int untuned;        /* GPU: plan by the rules even where the tuning cache (mugen tune,
                         * docs/tuning.md) holds a point for this graph on this device */
    int sweep;          /* a program of one symbolic dim: every capacity's variant that holds the
                         * bound value, on one set of inputs and one reference, each checked and
                         * timed; the report's text has a line each (`mugen run --variant all`) */
} mg_run_opts;

typedef struct mg_run_output {
    char name[64];
    double max_abs, rel_err, tol; /* rel_err = ||out - ref||_2 / ||ref||_2 */
    int64_t n_nan;                /* elements NaN, infinite (or, with specials, a zero of the
                                   * other sign) where the reference is not the same; never passes */
    int ok;
} mg_run_output;

typedef struct mg_run_report {
    mg_backend backend;  /* the one that ran */
    char device[256];    /* GPU name, or "C (OpenMP)" */
    int n_launches;
    int64_t smem_max;    /* largest per-block shared memory of its kernels, bytes */
    double time_us;      /* median time of one run of the program; 0 when not timed */
    int n_sets;          /* input sets rotated through while timing */
    int n_timed;         /* C: the runs behind time_us (the default reps stop after 1 s) */
    int n_outputs;
    mg_run_output out[64]; /* the first 64 outputs (n_outputs); mg_run compares at most 64 */
    int ok;              /* every output within tolerance */
    int cached;          /* the compiled code came from the disk cache */
    char tuned[1024];    /* GPU: the tuning cache's point its code was planned at (docs/tuning.md),
                          * "" when none was (mg_run_opts.schedule, .untuned, no entry) */
    char text[4096];     /* the report in words */
} mg_run_report;

/* Generates code for ugraph (a μGraph or plain program with prog's inputs and outputs; NULL
 * means prog itself), compiles it, runs it on random inputs with every output poisoned
 * first, and compares each output with prog's float reference (f32) on the same inputs.
 * MG_OK with *r filled when it ran (r->ok says whether it matched); MG_ERR_NO_DEVICE when the
 * GPU was asked for and there is none; MG_ERR_COMPILE / MG_ERR_LAUNCH with the compiler log or
 * CUDA error when the generated code fails to build or run; MG_ERR_INVALID for mismatched
 * interfaces. A ragged prog (bound lengths) runs in token form for its batch (docs/ragged.md);
 * a ugraph given with it is that token form's (mg_optimize_program's result for a batch of the
 * same capacity rows), checked against the per-sequence reference. */
mg_status mg_run(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph, const mg_run_opts *o,
                 mg_run_report *r);

/* ---- whole programs (docs/lower.md, "Whole programs") ---- */
typedef struct mg_optimize_opts {
    mg_search_opts search; /* each piece's search; time_limit is per piece (default 60 s) */
    mg_run_opts run;       /* how a piece's μGraph and its lowering are timed, and the result
                            * run (run.reps < 0: the result is built, not run) */
    int max_piece_ops;     /* a Lax piece with more operators is lowered unsearched (16) */
    int max_piece_heavy;   /* ... or with more matmuls and reductions (3) */
    int progress;          /* a line on stderr as each piece's search starts */
} mg_optimize_opts;
typedef struct mg_optimize_report {
    int parts, lax_parts;  /* the partition (mugen partition) */
    int unique, searched, from_cache, kept; /* searched forms; searches run or read; pieces
                                             * that kept a μGraph (its form's included) */
    double search_seconds;         /* in the searches (or reading them from the cache) */
    double piece_run_seconds;      /* compiling and timing searched pieces against their lowering */
    double seconds_before_compile; /* everything before the first compile: partition, pieces,
                                    * searches, stitching and lowering (piece runs excluded) */
    char *ugraph_text;     /* the whole program's μGraph (.mu text; mg_optimize_report_free) */
    char *log;             /* a line per piece: searched or not and why, what was kept */
    mg_run_report run;     /* the result run against the program's reference */
} mg_optimize_report;
/* Fills *o with the defaults. */
void mg_optimize_defaults(mg_optimize_opts *o);
/* Sets o->search.on_progress and its arg (for bindings that see the options as bytes). In
 * mg_optimize_program fn is also called at each searched piece's start (n_tasks 0) and end
 * (piece_done 1, read from the cache or searched); fn returning nonzero there or during the
 * piece's search ends mg_optimize_program with MG_ERR_LIMIT, no result and nothing run (rep->log
 * holds the pieces' lines so far: mg_optimize_report_free): the pieces searched to the end
 * before it are in the search cache, the stopped one is not. */
void mg_optimize_set_progress(mg_optimize_opts *o, mg_progress_fn fn, void *arg);
/* Sets o's option `name` to value as mg_search_set does for each piece's search (time-limit is
 * per piece), plus max-piece-ops and max-piece-heavy (1 to 1000): the limits a program's
 * bindings pass by name (Python: mugen.compile(..., time_limit=30, max_kops=4)). */
mg_status mg_optimize_set(mg_ctx *ctx, mg_optimize_opts *o, const char *name, const char *value);
/* Optimizes a whole program (any operators): cut at its non-Lax operators; each Lax piece
 * within max_piece_* searched through the search cache once per canonical form, its best
 * μGraph kept where it runs faster than the piece lowered (both on o->run's backend); the
 * rest lowered (docs/lower.md); the stitched μGraph run against prog's reference. MG_OK with
 * *rep filled (mg_optimize_report_free; rep->run.ok says whether it matched); an error of a
 * stage with its message. A ragged prog needs bound lengths: its token form for that batch is
 * what is optimized (pieces static over the batch's capacity rows; seqattn lowered), and
 * rep->ugraph_text is that form's μGraph, for mg_run / mg_compile with the same prog. */
mg_status mg_optimize_program(mg_ctx *ctx, const mg_program *prog, const mg_optimize_opts *o,
                              mg_optimize_report *rep);
void mg_optimize_report_free(mg_optimize_report *rep);
/* Writes the source mugen generates for prog (CUDA for NVRTC, or C) into *src (mg_free). With
 * compile != 0 it also compiles it (NVRTC for sm_90a, or the C compiler) and fails with
 * MG_ERR_COMPILE and the log when that fails. */
mg_status mg_emit(mg_ctx *ctx, const mg_program *prog, mg_target t, const mg_run_opts *o, int compile,
                  char **src);
/* Options of mg_tune; zero-initialised: 20 random points, none guided, seed 1, no dataset,
 * one process. */
typedef struct mg_tune_opts {
    int samples;         /* random valid points tried after the rules' own (at most 10,000) */
    uint64_t seed;       /* their draw (0: 1) */
    const char *dataset; /* JSON lines file each measurement is appended to (docs/tuning.md);
                          * points it already holds for this program and backend are not run
                          * again (an interrupted run resumes); NULL: none */
    mg_run_opts run;     /* how each point runs (backend, reps, seed; schedule is set per point) */
    int guided;          /* then this many points the cost model picks (a k-nearest-neighbour
                          * regression of log time on the points measured so far, refitted
                          * before each batch): its fastest guesses among fresh random draws */
    int jobs;            /* points compiled ahead in this many processes at once (0, 1: none;
                          * their timing stays one at a time) */
    const char *pin;     /* not NULL: no point is run; this one (checked against the space) is
                          * stored in the tuning cache as the graph's point on the device named
                          * by device (NULL: the default row), untimed */
    const char *device;
    /* called after each point (may be NULL): its index (0: the rules'), of n, its text, its
     * median time, whether it ran and matched, and a note (an error, or "from the dataset") */
    void (*progress)(void *arg, int i, int n, const char *point, double us, int ok, const char *note);
    void *progress_arg;
} mg_tune_opts;
typedef struct mg_tune_report {
    char best[1024];  /* the fastest point that matched the reference (mg_run_opts.schedule) */
    double best_us;   /* its time */
    double rules_us;  /* the rules' point's time (0: it failed) */
    int points;       /* points taken: measured + resumed */
    int measured;     /* run in this call */
    int resumed;      /* found in the dataset */
    int failed;       /* of those run, the ones that did not compile, run or match */
    int compiled_ahead; /* points handed to the parallel compiles (mg_tune_opts.jobs) */
    int cached_runs;  /* timed runs whose code came from the compile cache */
    int sketches;     /* distinct lowerings of the program tuned over (1 for a μGraph) */
    char cached[32];  /* the device row whose tuning cache entry now holds best ("": none; the
                       * C backend runs every point alike, so its timings are not stored) */
} mg_tune_report;
/* Tunes prog (or ugraph, a μGraph of it) over its schedule space (docs/tuning.md): the rules'
 * point and each other lowering's, then o->samples random valid points, each through mg_run (compiled, timed, checked);
 * on the GPU the fastest is stored in the tuning cache, which later runs, compiles and emits
 * of the same graph for that device plan at (mg_run_opts.untuned: not).
 * MG_OK with *rep filled; MG_ERR_NO_DEVICE when the GPU was asked for and there is none;
 * MG_ERR_IO when the dataset cannot be written; MG_ERR_INVALID when no point ran correctly,
 * or o->pin is not a point of the space or one its constraints reject (naming them), or
 * o->device names no known device. */
mg_status mg_tune(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph, const mg_tune_opts *o,
                  mg_tune_report *rep);
/* Options of mg_space; zero-initialised: 1,000 random points, seed 1. */
typedef struct mg_space_opts {
    int samples;   /* points drawn to count each constraint's rejections (every point when the
                    * space has no more than this many) */
    uint64_t seed; /* their draw (0: 1) */
} mg_space_opts;
/* The schedule space of prog's plan for the GPU (docs/tuning.md): prog's μGraph, or the kernels
 * prog lowers to (a ragged prog: its token form for its bound lengths) as mg_emit plans them.
 * Writes into *report (mg_free) each parameter with its domain and the rules' choice, each
 * device constraint with the random points it rejects, the count of valid points and whether
 * the rules' own point is valid. MG_OK, or the error of lowering or of the rules' plan. */
mg_status mg_space(mg_ctx *ctx, const mg_program *prog, const mg_space_opts *o, char **report);

/* ---- the library API: compile once, launch many (docs/runtime.md) ----
 * mg_compile turns a program (or a μGraph of it) into a handle; mg_launch runs the handle on
 * buffers the caller owns: device pointers on a CUDA stream in the caller's CUDA context, or
 * host pointers for the C target. No copies, no synchronisation and no allocation happen per
 * launch. Thread safety: one mg_compiled may be launched from several threads at once, each
 * with its own workspace and its own mg_ctx (loading the code into a new CUDA context is
 * guarded by the handle's mutex); mg_compile may run in several threads at once (their
 * compiler steps take turns); mg_compiled_free must not race with a launch of the handle.
 * The CUDA target initialises CUDA in the calling process: mg_run's GPU backend (a forked
 * worker, which CUDA then refuses) is not for the same process. */
typedef struct mg_compiled mg_compiled;

/* Options of mg_compile; zero-initialised means the defaults. */
typedef struct mg_compile_opts {
    mg_target target;   /* MG_TARGET_CUDA (default): NVRTC, launched on a CUDA stream;
                         * MG_TARGET_C: a shared object run in the calling thread on host memory */
    const char *device; /* CUDA: NULL compiles for the device of the calling thread's current
                         * CUDA context (device 0 when none is current); a device table row
                         * ("H100", "H200") compiles for it without touching a GPU */
    mg_run_opts opt;    /* optimizer switches (the no_* ablations, wgmma, persist, cluster,
                         * no_pdl, plain); backend, seed, reps and specials are ignored */
} mg_compile_opts;

/* What a compiled handle needs and how it was made (mg_compiled_get_info). */
typedef struct mg_compiled_info {
    mg_target target;
    int n_inputs, n_outputs; /* the program's, in its declared order */
    int n_launches;          /* kernel launches (CUDA) or kernels (C) per mg_launch */
    size_t workspace_bytes;  /* the workspace mg_launch needs (0: none; NULL may be passed) */
    size_t align;            /* the alignment, in bytes, of every input and output (the
                              * workspace needs MG_LAUNCH_ALIGN) */
    int cached;              /* 1: the compiled code came from the disk compile cache */
    char device[64];         /* what it was compiled for: "sm_90a (H100)", "C (host)" */
} mg_compiled_info;

enum { MG_LAUNCH_ALIGN = 256 }; /* the workspace's alignment; inputs and outputs need 16 */

/* Compiles prog into *out (free with mg_compiled_free). ugraph is a μGraph computing prog
 * (same inputs and outputs: names, dtypes, shapes; MG_ERR_INVALID naming the difference
 * otherwise); NULL lowers prog (docs/lower.md) unless o->opt.plain. The handle keeps no
 * pointer into prog or ugraph, which may be freed after the call. Compiled code goes through
 * the disk compile cache (a second compile of the same program reports cached = 1).
 * MG_ERR_NO_DEVICE when the CUDA target has no driver or GPU to describe (pass o->device to
 * compile without one) or no libnvrtc, or the C target no C compiler; MG_ERR_COMPILE with the
 * log; MG_ERR_UNSUPPORTED when an output is another output or an input itself; MG_ERR_NOMEM.
 * A ragged prog (bound lengths; a ugraph given is that token form's, as mg_optimize_program
 * writes it) compiles in token form for that batch
 * (docs/ragged.md): its tensors are packed tokens in buffers of capacity rows (the batch's
 * tokens rounded up to 128; rows past the tokens are ignored in inputs, unspecified in
 * outputs), and, when it has attention over a ragged dim, its input 0 is the lengths (f32,
 * one whole number a sequence, named as the lengths declaration); mg_compiled_input and
 * mg_compiled_output describe exactly that. */
mg_status mg_compile(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph,
                     const mg_compile_opts *o, mg_compiled **out);
/* Frees the handle, unloading its code from every CUDA context it was loaded in (those
 * contexts must still exist) and releasing a primary context it retained. NULL is a no-op. */
void mg_compiled_free(mg_compiled *c);
/* Fills *info. MG_ERR_INVALID on NULL. */
mg_status mg_compiled_get_info(const mg_compiled *c, mg_compiled_info *info);
/* Input / output i (0 <= i < n) in the program's declared order; `name` is owned by the handle
 * (valid until mg_compiled_free). MG_ERR_INVALID for a bad index or NULL. */
mg_status mg_compiled_input(const mg_compiled *c, int i, mg_tensor_desc *d);
mg_status mg_compiled_output(const mg_compiled *c, int i, mg_tensor_desc *d);

/* Runs c once. inputs[0..n_inputs) and outputs[0..n_outputs) are in the program's declared
 * order, each dense row-major in its dtype (f16, bf16: 2 bytes; f32: 4) and aligned to 16
 * bytes; inputs are only read. workspace holds at least workspace_bytes (mg_compiled_info),
 * aligned to MG_LAUNCH_ALIGN; its contents need not survive between launches, and launches
 * running at the same time need separate workspaces. An output must not overlap an input.
 * CUDA target: the pointers are device addresses (CUdeviceptr cast to void *) valid in the
 * calling thread's current CUDA context, stream is a CUstream of it (NULL: its legacy
 * default stream); the kernels are queued and the call returns without waiting. With no
 * current context it makes device 0's primary context current on the calling thread (the
 * handle retains it until freed). A fault shows up in the caller's later synchronisation.
 * C target: host pointers; the code runs in the calling thread and has finished on return;
 * stream is ignored. Fails, before launching anything, with MG_ERR_INVALID for NULL or
 * misaligned pointers, counts other than the program's, or a workspace smaller than needed;
 * MG_ERR_NO_DEVICE when the CUDA target finds no driver or GPU; MG_ERR_LAUNCH with the CUDA
 * error when loading the code or queuing a kernel fails. */
mg_status mg_launch(mg_ctx *ctx, mg_compiled *c, int n_inputs, void *const *inputs,
                    int n_outputs, void *const *outputs, void *workspace, size_t workspace_bytes,
                    void *stream);
/* mg_launch for a call of `rows` of a program of one symbolic dim (dim B [LO, HI]) compiled at
 * capacity C (mg_program_variant): the buffers hold C rows as mg_compiled_input says, the
 * first `rows` (1 <= rows <= C) are the call's, and on CUDA only the blocks over those rows are
 * launched where a launch's grid splits them (run-time grids, docs/tuning.md); the rows past
 * them are computed on whatever they hold, or not at all, and ignored. The C target runs its
 * loops whole. mg_launch is this at rows = C. MG_ERR_INVALID for rows outside [1, C] (a handle
 * of no symbolic dim takes none), else as mg_launch. */
mg_status mg_launch_rows(mg_ctx *ctx, mg_compiled *c, int64_t rows, int n_inputs, void *const *inputs,
                         int n_outputs, void *const *outputs, void *workspace, size_t workspace_bytes,
                         void *stream);

/* After the caller has synchronised with the launches of c on `workspace`: MG_OK, or
 * MG_ERR_LAUNCH when c is one persistent launch (mg_run_opts.persist) and its watchdog ended a
 * stall in one of them (a task whose dependency never finished: its outputs are not valid),
 * naming the task; the record is cleared, so the next launch starts clean. MG_OK at once for
 * the C target and for programs of separate kernels. CUDA: in the calling thread's current
 * context, as mg_launch. */
mg_status mg_compiled_check(mg_ctx *ctx, const mg_compiled *c, void *workspace);

#ifdef __cplusplus
}
#endif
#endif
