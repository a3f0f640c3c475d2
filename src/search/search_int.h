/* search_int.h: what the search's files share (search.h is the public side, docs/search.md).
 *
 * The search is one state (search: the program, its e-graph, the verifier's reference, the
 * shared counters) and one worker per thread (worker: its term table, the kernel graph being
 * grown, one bstate per kernel depth for the block graph being grown under it). Its rooms:
 *   search.c    sr_search: the named steps from the program to the ranked results
 *   generate.c  the recursive generator (Algorithm 1): kgen -> start_block -> bgen -> tile
 *               -> tiled_kernel -> kgen, one mutual recursion kept in one file
 *   schedule.c  phase 2 of a block graph: every schedule (grid, for-loop, maps) of it
 *   compound.c  the compound block operator rmsnorm: its primitives, its spelled-out copies
 *   dims.c      dim classes (union-find) and the dim labels that restrict the search
 *   candidate.c a complete kernel graph: materialised, screened, verified, kept
 *   cost.c      the cost model that ranks what was found
 *   tasks.c     tasks, threads, progress, stopping and the checkpoint
 *   ranks.c     many processes (MPI): rank 0 hands out the tasks and gathers their results
 */
#ifndef MG_SEARCH_INT_H
#define MG_SEARCH_INT_H

#include <pthread.h>

#include "../lower/lower.h"
#include "../verify/verify.h"
#include "aexpr.h"
#include "search.h"

/* Fixed capacities of the generator's state (the search checks its input against them):
 * tensors of one kernel-graph prefix (the program's inputs may use half), kernel operators in
 * one kernel graph (one bstate each), distinct program constants. */
enum { SR_MAX_TENSORS = 48, SR_MAX_KOPS = 8, SR_MAX_CONSTS = 8 };
/* worker threads at most (--threads) */
enum { SR_MAX_THREADS = 256 };
/* Bumped whenever the generator changes what a task explores or what its results say (15:
 * verdicts reached at smaller instances; 16: operators over partial sums only where linear,
 * trailing-1 reshapes screened and verified at smaller instances; 17: the plain lowering's
 * μGraph among the results; 18: its tilings of products too; 19: and without form MMROW): a checkpoint written by another version is
 * refused rather than mixed in. */
enum { SEARCH_VERSION = 19 };
/* The deepest program the search takes (operators on its longest path): its abstract
 * expressions recurse once per level; 50,000 levels ran on the main thread's 8 MB stack. */
enum { SR_MAX_DEPTH = 20000 };

/* The rank of an operator (Mirage §4.1): its operand indices in decreasing order (constants
 * below every tensor), then its type, then its attributes (generate.c: make_key). Operators
 * are added in increasing rank only, so each DAG is generated in exactly one order: an
 * operator that reads another's result has a larger first entry. */
enum { SR_KEY_LEN = IR_MAX_IN + 3 };
typedef struct key {
    int64_t v[SR_KEY_LEN];
} key;

/* A kernel-graph tensor and a block-graph tensor of the prefix being grown. */
typedef struct ktens {
    int node, uses;
    int32_t term;
    uint64_t lab[IR_MAX_DIMS]; /* the program's dim label of each dim (dim_labels) */
} ktens;
typedef struct btens {
    int node, uses, cls, is_save;
    int32_t term;
    int32_t ecls;     /* its term's e-class (-1: none) */
    int32_t up;       /* ae_up of its term */
    uint32_t parents; /* the operator kinds its class is an operand of (ae_class_parents) */
} btens;
/* nodes of one block graph; dims of them (a dim class's slot); the constants a compound
 * rmsnorm may divide by (one per dim of a kernel input) */
enum { SR_MAX_BNODES = 64, SR_DIM_SLOTS = SR_MAX_BNODES * IR_MAX_DIMS, SR_MAX_RMS_DIVS = IR_MAX_IN * IR_MAX_DIMS };
/* the unary operators the search places at most, and the binary ones (with matmul) */
enum { SR_UN_OPS = 8, SR_PAIR_OPS = 6 };

/* One schedule of a complete untiled block graph (phase 2): the tiled graph and what the
 * kernel graph sees of it (its outputs' expressions and dim labels, and their hash iface:
 * schedules with the same iface are interchangeable for the rest of the search). */
enum { SR_MAX_TILE_OUTS = 8 };
typedef struct tiling {
    ir_graph *t;
    int32_t term[SR_MAX_TILE_OUTS];
    uint64_t lab[SR_MAX_TILE_OUTS][IR_MAX_DIMS];
    uint64_t iface;
    double us; /* the cost model's time for it (sr_block_us) */
} tiling;

/* One block graph under construction (one per kernel depth). */
typedef struct bstate {
    ir_graph *b;
    btens t[SR_MAX_TENSORS];
    int n_t, n_ops, n_saves;
    int kin[IR_MAX_IN], n_kin; /* the kernel tensors it reads */
    int const_node[SR_MAX_CONSTS];           /* block node of each program constant */
    int rms_div_node[SR_MAX_RMS_DIVS], n_rms_div;   /* constants the compound rmsnorm divides by (compound.c) */
    int64_t rms_div_val[SR_MAX_RMS_DIVS];
    uint64_t lab[SR_MAX_BNODES][IR_MAX_DIMS]; /* dim labels of each block node */
    /* with pruning, past a depth-0 kernel's first operator (generate.c pair_masks): the
     * unary operators that may apply to tensor i (bit q: pl.un[q]), and the binary ones with
     * tensor i first and tensor (or constant SR_MAX_TENSORS + c) j second (bit q: pl.bin[q],
     * then matmul and concat), and the terms of those that may apply (un_term, pair_term:
     * index q, matmul at pl.n_bin; -1 if building one ran out of memory): those of tensors
     * t[0..n_masked) (against the ones before them) hold; bgen fills the others when it
     * extends the graph (leaves never read them) */
    int n_masked;
    uint16_t un_mask[SR_MAX_TENSORS];
    uint16_t pair_mask[SR_MAX_TENSORS][SR_MAX_TENSORS + SR_MAX_CONSTS];
    uint64_t pair_any[SR_MAX_TENSORS]; /* bit j + 1 + n_const: pair_mask[i][j's column] != 0 */
    int32_t un_term[SR_MAX_TENSORS][SR_UN_OPS];
    int32_t pair_term[SR_MAX_TENSORS][SR_MAX_TENSORS + SR_MAX_CONSTS][SR_PAIR_OPS];
    key klast;                 /* rank of the kernel graph's last operator */
    /* phase 2: the schedules of the complete block graph; in_group[0..n_in_group) those of the group
     * standing as kernel node knode in the kernel graph while active */
    tiling *tilings;
    int n_tilings, cap_tilings;
    int *in_group, n_in_group;
    int knode, active;
} bstate;

typedef struct search search;

/* A candidate handed to another thread (sr_verify_one): verified by whichever thread takes it
 * first (taken, then done, under search.mu), its verdict kept by its owner at the end of the
 * owner's task (sr_finish_jobs). */
typedef struct sr_job {
    struct worker *owner;
    ir_graph *u;
    char *text;
    int taken, done;
    mg_status rc;
    mg_verify_report rep;
} sr_job;

typedef struct worker {
    search *s;
    ae_tab tab;
    ae_query q;
    mg_ctx ctx;
    ir_graph *k;
    ktens t[SR_MAX_TENSORS];
    int n_t, n_kops, n_kernels; /* tensors, kernel ops, graph-defined ones among them */
    int last_first; /* first tensor the last kernel op produced (chain rule) */
    int const_node[SR_MAX_CONSTS];
    int32_t const_term[SR_MAX_CONSTS]; /* the program's constants as terms of this worker's table */
    uint32_t const_parents[SR_MAX_CONSTS]; /* and the operator kinds their classes are operands of */
    int32_t const_cls[SR_MAX_CONSTS];      /* and their e-classes */
    bstate bs[SR_MAX_KOPS];
    int task, counter; /* depth-0 choices are numbered; only the one == task is explored */
    int max_kops, min_kops; /* this task's pass: kernel graphs of min_kops..max_kops ops */
    int64_t states, pruned, candidates, rejected, duplicates;
    sr_found *found;
    int n_found, cap_found;
    int oom;
    /* interfaces of kernel-graph prefixes already extended in this task (see seen()) */
    uint64_t *memo;
    int64_t n_memo, cap_memo;
    /* the screen's verdicts (screen()) */
    uint64_t *verdicts;
    int64_t n_verdicts, cap_verdicts;
    int64_t screened, dominated, unfit;
    double verify_s; /* time verifying: in sr_candidate() and in queued jobs */
    sr_job **jobs; /* this task's candidates handed to the queue, in the order made */
    int n_jobs, cap_jobs;
    int64_t published[3]; /* states, pruned, candidates as of the last publish() */
} worker;

enum { SR_MAX_SMALL = 64, SR_MAX_SMALL_DIMS = 8 };

struct search {
    const ir_graph *prog;
    const sr_opts *o;
    /* the plain lowering's μGraphs (search.c), one a distinct tiling of form MM (lw_tilings,
     * the default first): to verify (the first worker takes them), then verified (text NULL:
     * none) */
    ir_graph *lowered_u[LW_TILINGS];
    sr_found lowered[LW_TILINGS];
    mg_device dev; /* the target: the device table's row (--device) with o->n_sm multiprocessors */
    ae_egraph *eg;
    ae_tab tab0;
    int n_in, n_out;
    int out_node[AE_MAX_ROOTS];
    int n_const;
    const char *const_lit[SR_MAX_CONSTS];
    const ir_node *const_val[SR_MAX_CONSTS]; /* the program's node of each distinct constant */
    /* dim labels (sr_labels_op): the program inputs' dims, and the labels the program reduces */
    uint64_t in_lab[SR_MAX_TENSORS][IR_MAX_DIMS], red_lab;
    int max_rank; /* the program's largest tensor rank: a larger one may be squeezed */
    uint64_t ops; /* the operators it may place (--ops): bit op, IR_OP_RMSNORM for the compound */
    /* the verifier's program side at full size, shared by the workers: built by the first
     * candidate that needs it (full_ref, candidate.c), under ref_mu; ref_rc its failure, the
     * message in ref_msg */
    vf_ref *ref;
    mg_status ref_rc;
    char ref_msg[256];
    pthread_mutex_t ref_mu;
    /* the screen (screen()): the program untiled at small sizes, its verifier side */
    vf_ref *screen_ref;
    ir_graph *shrunk;
    /* verification at smaller instances (candidate.c: free dims shrunk), one program side per
     * shrink met so far, under shrink_mu */
    struct sr_small {
        int n;
        int64_t from[SR_MAX_SMALL_DIMS], to[SR_MAX_SMALL_DIMS];
        ir_graph *prog;
        vf_ref *ref;
    } small[SR_MAX_SMALL];
    int n_small;
    int full_verify; /* MUGEN_SEARCH_FULL_VERIFY=1: every candidate at full size */
    int check; /* MUGEN_CHECK=1: the search's shortcuts checked against what they stand for */
    pthread_mutex_t shrink_mu;
    int64_t shrink_from[SR_MAX_TENSORS * IR_MAX_DIMS], shrink_to[SR_MAX_TENSORS * IR_MAX_DIMS];
    int n_shrink;
    /* the workers, workers[0..n_workers) initialised (sr_worker_init) */
    worker *workers;
    int n_workers;
    /* ranks (ranks.c): this process is rank `rank` of n_ranks (0 of 1 without MPI); rk holds
     * what the ranks' messages need */
    int rank, n_ranks;
    struct sr_ranks *rk;
    /* shared progress, under mu: tasks below next_task are given or done; given[t]: the rank
     * that was given task t; redo[0..n_redo): tasks of ranks presumed dead, given out first */
    int64_t next_task, n_tasks, n_tasks1; /* n_tasks1: those of the first pass (set_pass) */
    int32_t *given;
    int64_t *redo, n_redo;
    pthread_cond_t cv; /* rank 0's threads waiting for a task that may come back */
    int64_t states, pruned, candidates, rejected, duplicates, found, tasks_done;
    uint8_t *done; /* per task: finished (1) or resumed from the checkpoint (2) */
    sr_found **task_found;
    int *task_n_found;
    pthread_mutex_t mu;
    double t0;
    double prep_cb; /* the progress callback's last call before the tasks (egraph_stopped) */
    int stop;
    int running; /* worker threads not finished */
    /* verification spread over the threads (tasks.c): while some thread has no task left
     * (idle of them), the others queue their candidates here for any thread to verify; busy:
     * threads running a task. Under mu, one process only (n_ranks 1). */
    sr_job **queue;
    int n_queue, cap_queue, idle, busy;
    int queue_all; /* MUGEN_SEARCH_QUEUE=1: every candidate of a task is queued (test hook) */
    double first_s; /* when the first μGraph was verified */
};

/* The classes of the dims of an untiled block graph (or a program): dims that must be split
 * alike (schedule.c, docs/search.md "Block graphs"). */
typedef struct dimcls {
    int16_t cls[SR_MAX_BNODES][IR_MAX_DIMS]; /* class of each node dim */
    int nc;
    int64_t size[SR_DIM_SLOTS];       /* the class's untiled size */
    uint8_t split_ok[SR_DIM_SLOTS];   /* read by an iterator, size > 1, not a concat dim */
    uint64_t red[SR_MAX_BNODES];       /* classes (ids < 64) reduced on the way to each node */
} dimcls;

/* ---- generate.c ---- */
/* Runs the generator from the empty kernel graph of worker w: explores only depth-0 choice
 * number w->task, or, when w->task < 0, counts the choices in w->counter (w->max_kops and
 * w->min_kops set the pass). */
void sr_generate(worker *w);
/* Is term allowed (pruning)? Counts the pruned ones; a term < 0 (out of memory) sets w->oom. */
int sr_keep_term(worker *w, int32_t term);
/* The --ops list as a bit set over the operators the search places (bit op, IR_OP_RMSNORM for
 * the compound); 0 and a message in why[0..n) on an unknown name or an empty list. */
uint64_t sr_ops_mask(const char *list, char *why, size_t n);
/* May the search place operator op (an ir_op; IR_OP_RMSNORM is the compound of compound.c)? */
int sr_op_on(const search *s, int op);

/* ---- schedule.c ---- */
/* Fills w->bs[d].tilings with every schedule of kernel depth d's complete untiled block graph
 * that passes its checks; -1 (nothing filled) if the graph only copies (iterators,
 * accumulators and savers) or has dims sr_dims_of does not follow. */
int sr_schedules(worker *w, int d);

/* ---- compound.c ---- */
/* The sizes a compound rmsnorm may divide by in the new block graph bs->b reading kernel
 * tensors in[0..n_in): each dim of those, as a program constant of that value or a new
 * constant (bs->rms_div_*). 1, or 0 on error. */
int sr_add_rms_divisors(worker *w, bstate *bs, const int *in, int n_in);
/* Adds block op p (an ir_op or IR_OP_RMSNORM) to bs->b with its nodes' dim labels: one node, or
 * the five primitives of the compound. The last node, or -1 (bs->b->n_nodes then as before)
 * on error, a label conflict, or a size no kernel input has. */
int sr_add_block_op(worker *w, bstate *bs, const ir_node *p);
/* Does complete block graph b (its search tensors t[0..n_t)) hold a compound rmsnorm spelled
 * out, one primitive at a time, where the compound itself passes pruning? Then b is also
 * generated with the compound, and this copy is a duplicate. */
int sr_spelled_out_rmsnorm(worker *w, const ir_graph *b, const btens *t, int n_t);

/* ---- dims.c ---- */
/* Fills D for untiled block graph (or program) b; -1 if it has too many nodes or an operator
 * whose dims are not followed (repeat, kernel, max, a reshape other than a squeeze). */
int sr_dims_of(const ir_graph *b, dimcls *D);
/* The dim of node i of b in class c, or -1. */
int sr_dim_in(const dimcls *D, const ir_graph *b, int i, int c);
/* The dim labels of op p (in g, its shape inferred) from its operands' labels la, lb (NULL
 * for a constant): 1 with out[] filled, or 0 if p breaks the label rules (dims.c). */
int sr_labels_op(const search *s, const ir_graph *g, const ir_node *p, const uint64_t *la,
                 const uint64_t *lb, uint64_t *out);

/* ---- candidate.c ---- */
/* FNV-1a of a text. */
uint64_t sr_text_hash(const char *s);
/* A copy of block graph b without unused constants, its savers as outputs. NULL on error. */
ir_graph *sr_clone_block(const ir_graph *b, mg_ctx *ctx);
/* A copy of μGraph or program g with every graph-defined kernel untiled and every input dim
 * of size from[i] made to[i] (i < n); kin: a block graph's kernel input shapes (NULL for a
 * kernel graph). NULL if g's meaning depends on a size (reshape, repeat, a partial sum) or on
 * error. */
ir_graph *sr_untile(const ir_graph *g, const ir_shape *kin, const int64_t *from, const int64_t *to,
                    int n, mg_ctx *ctx);
/* sr_untile with the tiling kept (grids, for-loops, maps): the same μGraph with input dims of
 * size from[i] made to[i]; where fewer (NULL: none) has fewer[i] set, a grid dim that splits
 * only dims of size from[i] keeps its blocks' chunks and takes to[i] / chunk blocks
 * (docs/verify.md). NULL as sr_untile, and also for a layout operator (concat, transpose,
 * slice), whose meaning depends on indices. */
ir_graph *sr_resize(const ir_graph *g, const ir_shape *kin, const int64_t *from, const int64_t *to,
                    const int *fewer, int n, mg_ctx *ctx);
/* Frees the program sides of verification at smaller instances. */
void sr_small_free(search *s);
/* Candidate u (owned, a μGraph of the program): deduplicated against w's μGraphs by text,
 * checked to fit the device, verified (at a smaller instance where one decides it), and
 * appended to w->found when equivalent. */
void sr_verify_one(worker *w, ir_graph *u);
/* A thread with no task left (tasks.c) verifies the candidates other threads queue until no
 * thread runs a task and the queue is empty. One process only: with ranks, rank 0's threads
 * wait in next_task while tasks are out, and the others' tasks come by message. */
void sr_help(worker *w);
/* The end of w's task: verifies its queued candidates no other thread has taken, waits for the
 * rest, and keeps each verdict as sr_verify_one would have, in the order they were made. */
void sr_finish_jobs(worker *w);
/* The first worker's first step (search.c): verifies the plain lowering's μGraphs, if any,
 * into s->lowered[]. */
void sr_verify_lowered(worker *w);
/* The complete kernel graph of worker w whose nodes outs[] are the program's outputs: one
 * candidate per combination of its kernels' schedule groups, screened, verified, and those
 * found equivalent kept in w->found. */
void sr_candidate(worker *w, const int *outs);

/* ---- cost.c ---- */
/* The cost model's time in µs for graph-defined kernel body b on dev, its launch not
 * included; bit j of outs: output j is one of the program's (its rows cost whole bursts). */
double sr_block_us(const ir_graph *b, const mg_device *dev, unsigned outs);

/* ---- tasks.c ---- */
/* Has the search been stopped (time limit, stop request)? sr_stopped_at looks at the clock
 * (and publishes w's counts) when `now` is set, sr_stopped every 1024 states. */
int sr_stopped_at(worker *w, int now);
int sr_stopped(worker *w);
/* Worker w of search s: its term table, its kernel graph of the program's inputs and
 * constants. 0, or -1 out of memory (free it with sr_worker_free either way). */
int sr_worker_init(worker *w, search *s);
void sr_worker_free(worker *w);
/* Opens o->ckpt_dir's checkpoint for s (s->n_tasks counted): writes its key, or reloads the
 * finished tasks of the same search (r->tasks_resumed). MG_OK, or MG_ERR_IO for a checkpoint
 * that cannot be written or belongs to another search. */
mg_status sr_open_checkpoint(search *s, mg_ctx *ctx, sr_result *r);
/* Runs s's tasks on its workers, one thread each (the caller's thread if none starts),
 * printing progress and stopping at the time limit or a stop request; returns when every
 * worker has finished (with ranks: every rank; rank 0 then holds every task's record). */
void sr_run_workers(search *s);
/* The name of search s (program and options but --time-limit and --threads): the checkpoint's
 * key, and what the ranks compare before they start. */
uint64_t sr_search_key(const search *s);
/* The record of a task's μGraphs as text, appended to sb (tasks.c: the checkpoint's format). */
void sr_task_text(int64_t task, int finished, const sr_found *f, int n, strbuf *sb);
/* Parses a record of sr_task_text: its task, finished or not, and its μGraphs (*found, owned
 * by the caller with their texts). 0, or -1 (nothing allocated) if malformed. */
int sr_task_parse(const char *text, int64_t *task, int *finished, sr_found **found, int *n_found);
/* Under s->mu on rank 0: the next task to give to a thread of `rank` (a task of a rank presumed
 * dead first, then the lowest neither done nor given), marked as given; -1 when none is left. */
int64_t sr_dispense(search *s, int rank);
/* On rank 0: keeps task's μGraphs f[0..n) (taking f and its texts); a finished task is done
 * and checkpointed. A task already done keeps its first record (f is freed). */
void sr_record(search *s, int64_t task, sr_found *f, int n, int finished);
/* Sets s->stop (waking waiting threads) at a stop request or the time limit; s->stop. */
int sr_check_stop(search *s);
/* The counts of the progress line and of the result (SR_C_*), of this process's workers;
 * the per-worker ones (rejected, ...) only once the workers are done. */
enum { SR_C_STATES, SR_C_PRUNED, SR_C_CANDIDATES, SR_C_FOUND, SR_C_REJECTED, SR_C_DUPLICATES, SR_C_SCREENED,
       SR_C_DOMINATED, SR_C_UNFIT, SR_C_VERIFY_US, SR_C_FIRST_US, SR_N_COUNTS };
void sr_counts_local(const search *s, int64_t c[SR_N_COUNTS]);
/* Prints the progress line of counts c to stderr (a last one, with a newline, when final). */
void sr_progress(const search *s, const int64_t c[SR_N_COUNTS], int final);

/* ---- ranks.c (without MPI: one rank, and only sr_totals and sr_ranks_agree do anything) ---- */
/* Every rank calls it once, after preparing its search (rc: how that went): the ranks compare
 * their status, task count and search key. MG_OK when all are ready; when another rank
 * stopped before any task, sets s->stop; an error (in ctx) when this or another rank failed,
 * or when they do not run the same search. */
mg_status sr_ranks_agree(search *s, mg_ctx *ctx, mg_status rc);
/* The main thread while the workers run, with ranks: rank 0 hands out tasks and gathers
 * records, counts and heartbeats; another rank asks for tasks and sends back records. */
void sr_ranks_watch(search *s);
/* After the workers are joined: rank > 0 sends what is left and its final counts; rank 0
 * waits for every other rank's (or for it to be presumed dead). */
void sr_ranks_finish(search *s);
/* On rank > 0: the next task for a thread (waits for rank 0), -1 when none is left. */
int64_t sr_ranks_take(search *s);
/* On rank > 0: queues task's record for rank 0 (takes f and its texts). */
void sr_ranks_post(search *s, int64_t task, sr_found *f, int n, int finished);
/* The whole search's counts: this process's, and on rank 0 every rank's. */
void sr_totals(const search *s, int64_t c[SR_N_COUNTS]);
void sr_ranks_free(search *s);

#endif
