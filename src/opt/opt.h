/* opt: the μGraph optimizer's passes (Mirage §6), between a verified μGraph and codegen/.
 * It decides, for a whole kernel graph, what code generation then only writes down:
 *   - which kernel-level tensors get a device buffer, in which storage type, and which
 *     kernel-level elementwise operators are inlined into their single consumer;
 *   - per graph-defined kernel (block graph): which tensors live in shared memory and which
 *     stay in registers (thread graphs), their storage type and layout (row or column major,
 *     padded rows against bank conflicts: the layout pass), the order operators run in and
 *     where __syncthreads() goes (operator scheduling by depth), and each tensor's offset in
 *     shared memory (memory planning with reuse of dead tensors' space, checked against the
 *     device limit).
 * Each pass can be switched off for an ablation (op_opts). */
#ifndef MG_OPT_H
#define MG_OPT_H

#include "../ir/ir.h"

/* Ablation switches: 1 = the pass runs (defaults), 0 = its simplest replacement. wgmma,
 * persist and cluster are off by default: each measured slower on the benchmarks (docs/notes,
 * §18, §22, §23). */
typedef struct op_opts {
    int reuse;  /* memory planning reuses dead tensors' shared memory; off: one slot each */
    int depth;  /* operators of equal depth share a barrier; off: a barrier after each */
    int layout; /* column-major matmul B operands and padded rows; off: plain row-major */
    int pipeline; /* iterator tiles load asynchronously up to 4 iterations ahead (stages in
                   * shared memory); off: each iteration's tiles load at its start */
    int regacc;   /* a matmul summed over iterations keeps its sum in registers; off: the
                   * matmul's tile goes through shared memory and the accumulator adds it */
    int threads;  /* the block size follows the work (128 to 512 threads, see fuse.c); off:
                   * the block graph's own threads */
    int chain;    /* attention's exp(Q K) tile, read only by its row sum and a product with V,
                   * stays in each warp's registers (see chain.c); off: stored in shared
                   * memory. Tensor-core code only: the C target plans with it off. */
    int wgmma;    /* a chain whose B and V tiles only it reads, loaded whole by 16-byte copies,
                   * multiplies them with sm_90a's warpgroup wgmma from shared memory (tiles in
                   * its core-matrix layout, see chain.c); off: mma.sync fragments by
                   * ldmatrix. Needs a chain; off by default (mugen run --wgmma). */
    int colmajor; /* with layout: a computed tile read only as matmuls' B operand is stored
                   * column-major (ldmatrix reads its k-rows as 16-byte rows). The C target
                   * plans with it off: its matmul reads B along the rows (c/matmul.c; GQA
                   * b=1's μGraph 29.5 -> 15.8 ms of CPU, docs/notes/2026-11-26-cpu-backend.md) */
    int swizzle;  /* with layout: tiles read only as ldmatrix B operands are swizzled
                   * (op_tensor.tc.swz) rather than padded. Tensor-core code only: the C target
                   * plans with it off (its loads follow the strides). */
    int views;    /* a reshape, transpose or slice of a stored tensor is a view of its buffer,
                   * not a copy kernel (op_plan.view) */
    int persist;  /* a kernel graph of several graph-defined kernels runs as one launch: each
                   * block takes the next task (a block of one of the kernels, in order) and a
                   * task waits for the kernels before it to finish (op_plan.fused). Off by
                   * default: measured slower on every attention case (docs/notes, §22);
                   * `mugen run --persist`. 2: a static schedule instead of tickets (block b
                   * runs tasks b, b + G, ...: cuda/launch.c; `--megakernel`); 3: the last
                   * block a scheduler handing ready tasks to the others' queues (`--queues`).
                   * CUDA only: the C target plans with it off. */
    int tma;      /* a for-loop holding only products of its moving tiles, each summed in
                   * registers, loads those tiles by TMA into 128-byte-swizzled stages and
                   * multiplies them by sm_90a's warpgroup wgmma, kept in flight across
                   * iterations (tma.c, op_kernel.tma). CUDA on sm_90a only; on by default. */
    int f32iter;  /* iterator tiles are stored f32, converted once in their copy (every later
                   * read of an f16 tile converts it again). C target only: its tiles are host
                   * memory, and its matmuls and row loops read floats (off by default). */
    int cluster;  /* two kernels where each block of the second reads only what one thread-block
                   * cluster of the first wrote (an attention split's combine) run as one kernel:
                   * the first's blocks in clusters along the split, a cluster barrier, then each
                   * block runs one block of the second (op_plan.clustered). Off by default: the
                   * H100 keeps 15 clusters of 8 one-block-a-multiprocessor blocks resident, the
                   * b=8 attention grids need 16 (docs/notes §23); `mugen run --cluster`. CUDA only. */
    int prefetch; /* a block kernel launched as a programmatic dependent first prefetches its
                   * blocks' ranges of the program's inputs (the weights) into L2, then waits
                   * for the previous kernel, then lets the next one launch, whose blocks do
                   * the same while this one runs (codegen/cuda/launch.c). CUDA only; off by
                   * default (measured: decode step -1.4%, QKNorm b=1 +3.5%: docs/notes/
                   * 2026-11-27-s23.md); `mugen run --prefetch`. */
    /* a schedule point's choices for kernels[0 .. n_force) (opt/space.c, docs/tuning.md), each
     * 0 where the rules choose; not owned. The plan keeps what is forced even where it does not
     * fit (space.c's constraints then reject the point; op_plan_new fails on shared memory).
     * Read while planning only: the plan's own copy has none. */
    const struct op_force *force;
    int n_force;
    /* A variant of a reduced dim (docs/tuning.md "Reduced dims"): per program input, in order,
     * the dims (bit d: dim d) that follow the dim; NULL: none. The plan masks values past the
     * call's length (lmask, lfrom) and runs without TMA, wgmma, persistent or clustered
     * launches. Read while planning only, as force. */
    const unsigned char *reduced_in;
    int n_reduced_in;
} op_opts;

/* One graph-defined kernel's forced schedule choices (op_opts.force; 0: the rules' choice). */
typedef struct op_force {
    int tma;     /* 1: no TMA loop (op_find_tma not tried) */
    int threads; /* threads per block (a loop without TMA) */
    int stages;  /* the pipeline depth of the loop's moving tiles (1: one copy each, not ahead) */
    int pair;    /* a TMA loop's blocks an SM: 1 or 2 (op_kernel.min_blocks) */
} op_force;
extern const op_opts op_opts_default;

/* Where one tensor of a block graph lives, and what each strategy planned for it: one member
 * a strategy, written by the pass file named on it (opt_internal.h lists them) and read by
 * codegen. The first fields are the tensor itself: mat by inline.c (then fuse.c and chain.c),
 * store, colmajor, stride and bytes by layout.c, off, level and last by memory.c.
 * Invariant (op_plan_check): mat => bytes > 0, off + bytes <= plan smem, off % 16 == 0, and
 * tensors live at the same time share no byte; !mat => the node is a constant, a saver, a
 * reshape read through, a one-iteration accumulator read in its operand's place, or computed
 * inside another step: an elementwise operator (op_inlined, or a chain's head), a reduction
 * or matmul fused into its reader (fuse.red, fuse.mm), a register-accumulated matmul
 * (fuse.regacc). */
typedef struct op_tensor {
    int mat;           /* materialised in shared memory */
    mg_dtype store;    /* storage type in shared memory */
    int colmajor;      /* the last two dims are swapped in memory */
    int64_t dim[4];    /* logical shape, padded on the left to 4 dims */
    int64_t stride[4]; /* element strides of the logical dims (0 where dim == 1) */
    int64_t bytes, off;
    int lfrom[4];      /* (reduced.c) per dim: 4 i + e when the dim follows a reduced dim, its index
                        * that of iterator i's dim e (its tile base there plus the local index);
                        * -1 otherwise */
    int level;         /* barrier interval it is computed in (see op_kernel) */
    int last;          /* last barrier interval that reads it */
    /* The software pipeline (memory.c). */
    struct {
        int stages;    /* iterator whose tile moves with the loop: copies of its tile in
                        * flight (>= 1; bytes holds them all, elems apart); else 0 */
        int64_t elems; /* an iterator tile's elements, one stage */
    } pipe;
    /* Steps fused into others (fuse.c). */
    struct {
        int regacc;    /* register accumulation: on the matmul, its accumulator's node; on the
                        * accumulator, its matmul's; else -1 */
        int red;       /* an elementwise value over a reduction it alone reads (a norm's
                        * sqrt(sum / n)), or an accumulator summing one: the reduction's node,
                        * computed in this step; else -1 */
        int mm;        /* an elementwise value over a matmul it alone reads (exp(Q K)): the
                        * matmul's node, whose tiles this step writes through it; else -1 */
    } fuse;
    /* The forms of a tile that tensor-core matmuls read, instead of padded rows and f16
     * fragments converted in every warp. */
    struct {
        int f16;       /* (layout.c) its values are an f16 program value that no exp inside the
                        * block feeds, so a tensor-core product may take them in f16 even from
                        * an f32 tile (op_mm_bf16) */
        int cvt;       /* (schedule.c) an f16 iterator tile that only bf16 tensor-core matmuls
                        * read, with store bf16: copied as f16, converted in place before its
                        * first reader's barrier interval (see op_convert_tiles) */
        int wg;        /* (chain.c) a tile only a wgmma chain reads, [K, N] (k, n) in wgmma's
                        * core-matrix layout: 8 x 8 blocks of 128 contiguous bytes (row k % 8,
                        * column n % 8), the N / 8 blocks of eight rows next to each other, then
                        * the next eight rows: element (k, n) at k / 8 * 8N + n / 8 * 64 + k % 8
                        * * 8 + n % 8. Unpadded; the strides are plain row-major's, unused. */
        int tma;       /* (tma.c) on an iterator tile: loaded by TMA, [R, C] stored as C / 64
                        * boxes [R, 64] one after another, each row of a box 128 bytes with its
                        * 16-byte pieces XORed with row % 8 (element (r, c) at c / 64 * 64R +
                        * r * 64 + (c % 64 / 8 ^ r % 8) * 8 + c % 8; strides unused), or with
                        * C = 32 one box of 64-byte rows, pieces XORed with row / 2 % 4; R is
                        * op_tma_rows: a swapped product's 1-7 rows take boxes of 8; on a
                        * matmul: it runs on wgmma from two such tiles */
        int swz;       /* (layout.c) an iterator tile that tensor-core matmuls alone read, as
                        * their B operand by ldmatrix.trans: its 16-byte chunks XOR-swizzled
                        * within each row instead of padded rows (ldmatrix's 8 rows then hit 8
                        * different bank groups, and the copies write whole 128-byte lines):
                        * chunk c of row k at c ^ (k & 7) (swz 1: rows a multiple of 128 bytes)
                        * or c ^ ((k >> 1) & 3) (swz 2: 64-byte rows); 0: none */
    } tc;
    /* An attention chain (chain.c, op_find_chains): on its head, the tile e = f(A B)
     * (fuse.mm >= 0, never stored), mm is the matmul e V and sum the row sum of e (-1: none);
     * mw and sw the steps that write their values (the matmul, its register accumulator's
     * matmul or its epilogue; the stored sum or the accumulator adding it), both in one
     * barrier interval, and sk, ts the warp split (SK groups over e's columns, TS 16-row
     * strips a warp). On mm, mw and sw: of = the head; else -1. */
    struct {
        int of, mm, sum, mw, sw, sk, ts;
        int wg;        /* on a head: its two products are warpgroup wgmma, with A's fragments
                        * in registers (1) or A read from shared memory too (2) */
    } chain;
} op_tensor;

/* The schedule of one block graph. Steps run in order; a __syncthreads() precedes step s
 * when sync[s]. Steps [loop_begin, loop_end) form the for-loop body (a barrier also ends
 * each iteration). Steps are materialised nodes, accumulator updates and savers.
 * Pipelined iterators (t.pipe.stages > 0) are no steps: they are load[], whose copies codegen
 * issues stages - 1 iterations ahead; the first step of the loop then has a barrier (after
 * the wait for this iteration's tiles).
 * Register accumulators (t.fuse.regacc >= 0) are written to shared memory after the loop,
 * followed by one barrier (post_sync). */
enum { OP_MAX_TMA_TILES = 4 }; /* moving tiles of a TMA loop (op_kernel.tma) */

/* The rows R of a TMA-loaded tile's boxes (op_tensor.tc.tma): its own, or 8 for a swapped
 * product's 1-7 rows, wgmma's narrowest N (the box's extra rows are zero-filled past the
 * tensor's end or another block's rows: their columns of the product are never stored). */
static inline int64_t op_tma_rows(const op_tensor *t) { return t->dim[2] < 8 ? 8 : t->dim[2]; }

typedef struct op_kernel {
    const ir_graph *body;
    op_tensor *t;      /* per node of body */
    int *step, *sync;  /* n_steps entries */
    int n_steps, loop_begin, loop_end;
    int *load, n_loads; /* pipelined iterators, in node order */
    int n_barriers;    /* barriers executed per block (loop barriers counted once per iteration) */
    int threads;       /* threads per block */
    int stages;        /* the pipeline depth of the loop's iterators (0: none pipelined) */
    int post_sync;     /* a barrier after the loop's register accumulators are stored */
    int cvt_sync;      /* a barrier after the in-loop conversion of pipelined tiles (tc.cvt), which
                        * the first interval of the loop body reads (a chain's V) */
    int64_t smem;      /* bytes of shared memory the block needs */
    int tma;           /* (tma.c) the loop's products on wgmma from TMA-loaded tiles: threads / 128
                        * warpgroups, each a 64 x tma_nw piece of every product (1), or, for
                        * products of 1-8, 16 or 32 rows, all rows of 64 columns, swapped (2) */
    int tma_nw;        /* (at most OP_MAX_TMA_TILES moving tiles: a tensor map each, codegen.h) */
    int64_t tma_bar;   /* with tma: offset of the stages' mbarriers (8 bytes each) */
    int min_blocks;    /* blocks an SM the launch asks room for (__launch_bounds__'s second
                        * number; tma.c, memory.c): 2 for a short TMA loop (OP_TMA_PAIR_ITERS)
                        * with two waves of blocks whose 2+ stages fit in half an SM's shared
                        * memory and whose accumulators fit op_pair_regs_ok, so one block's
                        * pipeline fill and stores overlap the other's products; else 1 */
    int64_t acc_scratch; /* offset of the scratch where the split-K groups of register
                        * accumulators (op_regacc_split, SK > 1) put their sums side by side
                        * before one pass adds them; -1: none (the groups add one at a time) */
} op_kernel;

/* The plan of a kernel graph. Every node is one of: a program input (a buffer), a constant
 * or inlined elementwise operator (no buffer), or a launch (a buffer it writes: a kernel-level
 * operator, or a KERNEL node whose body is kernels[]). Buffers: node i has buf[i] >= 0.
 * Program inputs and outputs keep their dtype; other buffers are f32 (the reference
 * evaluator keeps intermediates in f32). */
typedef struct op_plan {
    arena mem;
    const ir_graph *g;
    int *buf;          /* per node: buffer index or -1 */
    mg_dtype *store;   /* per node: storage type of its buffer */
    int *inl;          /* per node: computed inside its consumer (kernel-level fusion) */
    int n_bufs;
    int64_t (*kst)[4]; /* per node: element strides of its buffer over its dims padded to 4 (0
                        * where a dim is 1); row-major, except an intermediate a graph-defined
                        * kernel writes in tiles spread over a dim inside unsplit ones: its
                        * grid-split dims go outermost, so each block's tile is contiguous */
    int *kern;         /* per node: index into kernels[] for the KERNEL node owning a body, or -1 */
    int *view;         /* per node: the stored node whose buffer this one's aliases, or -1: a
                        * reshape, transpose or slice that only reindexes a stored intermediate
                        * or input (buffers.c); its buffer is no copy, kst[] its strides there */
    int64_t *voff;     /* per node: a view's first element in that buffer (elements) */
    op_kernel *kernels;
    int n_kernels;
    int fused;         /* opts.persist applied: every launch is one of kernels[] (n_kernels >= 2),
                        * all with the same threads, and they run as one persistent launch */
    int n_sm;          /* the device's multiprocessors (the persistent launch's blocks) */
    int sm90a;         /* the device takes sm_90a code (wgmma, TMA): codegen's seqattn form */
    /* opts.cluster applied (launch.c): kernels[0] launches in clusters of cluster[] blocks
     * (one dim > 1, at most 16), then each of its blocks, linear index i, runs block
     * cluster_map[i] (linear) of kernels[1]; both at kernels[0]'s threads. 0: not applied. */
    int clustered;
    int cluster[3];
    int *cluster_map;
    unsigned char *lmask; /* (reduced.c) per node: the dims (padded to 4, bit d) that follow a
                           * reduced dim; NULL in a plan of none (opts.reduced_in NULL) */
    op_opts opts;
} op_plan;

/* Plans graph g for device dev with options o. *out owns the plan (op_plan_free; NULL ok),
 * which borrows g (g must outlive it). MG_ERR_SHAPE when a block graph's shared memory,
 * after planning, exceeds dev's per-block limit (naming the kernel and the bytes). */
mg_status op_plan_new(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, const op_opts *o,
                      op_plan **out);
void op_plan_free(op_plan *p);
/* Checks every invariant above on plan p (opt/check.c): MG_OK, or MG_ERR_INVALID naming the
 * kernel, the node and the broken rule (MG_ERR_NOMEM when out of memory). op_plan_new runs it
 * on each plan it makes when the environment has MUGEN_CHECK=1, and a failure there aborts:
 * it is a bug in a pass. */
mg_status op_plan_check(const op_plan *p, mg_ctx *ctx);
/* How a register-accumulated matmul (node mm of k's body b, op_tensor.fuse.regacc) shares
 * out over the block's warps (codegen's mg_mm_acc): *SK groups of warps each sum a slice of
 * the depth, and a warp holds *T of the 16x32 tiles; a chain's (chain.of >= 0) follow its
 * split. */
void op_regacc_split(const ir_graph *b, const op_kernel *k, int mm, int64_t *T, int *SK);
/* The task graph of a plan (taskgraph.c; issue #27, docs/megakernel.md): what a persistent
 * megakernel runs. Every launch of the plan, in launch order (codegen's: graph-defined kernels
 * and the kernel-level operators left to the per-element path), is cut into tasks: a
 * graph-defined kernel's blocks one task each, any other launch its op_elem_tasks pieces.
 * Task t depends on earlier tasks only: exactly the producer's blocks whose saved tiles meet
 * an element that t's block reads through an iterator (element ranges, op_block_range), or
 * the whole producing launch where the read goes through a view, an inlined operator or a
 * kernel-level operator.
 * Invariant: dep[] of each task are distinct, earlier tasks, in increasing order. */
typedef struct op_taskgraph {
    int n_launches, n_tasks;
    int *node;         /* per launch: its kernel-graph node (a KERNEL node of index 0, or an op) */
    int *first;        /* per launch: its first task; first[n_launches] = n_tasks */
    int *launch;       /* per task: its launch */
    int *block;        /* per task: its block, linear (x fastest); 0 for a kernel-level operator */
    int64_t *dep_at;   /* task t's dependencies are dep[dep_at[t] .. dep_at[t + 1]) */
    int *dep;
    int64_t n_deps;
    int64_t n_exact;   /* dependencies from element ranges (the others: on a whole launch) */
} op_taskgraph;
/* Builds p's task graph into *out (op_taskgraph_free). MG_ERR_NOMEM, or MG_ERR_LIMIT when it
 * would hold more than 2^31 tasks or dependencies. */
/* The tasks of kernel-level operator n (the per-element path) in the task graph and a
 * persistent launch: its element loop cut into pieces of 4,096 elements, at most 4,096. */
int64_t op_elem_tasks(const ir_node *n);
mg_status op_taskgraph_new(const op_plan *p, mg_ctx *ctx, op_taskgraph **out);
void op_taskgraph_free(op_taskgraph *tg);
/* Checks tg against p: dependencies earlier and distinct (so the graph is acyclic), every
 * element a graph-defined task reads from another kernel's saved tile written by the tasks it
 * depends on (the volumes of the written tiles' intersections with the read range cover it),
 * and every whole-launch dependency whole. MG_OK, or MG_ERR_INVALID naming the task, its
 * launch and block, and what is missing. */
mg_status op_taskgraph_check(const op_plan *p, const op_taskgraph *tg, mg_ctx *ctx);
/* The task graph as Graphviz text: a cluster per launch, a node per task (its block's
 * coordinates), an edge per dependency. */
void op_taskgraph_dot(const op_plan *p, const op_taskgraph *tg, strbuf *sb);

/* The elements from one row to the next of the 2-D view a TMA loop reads kernel-graph node
 * kx (an input of its kernel) through: its row stride kst[kx][2], or for a single row (stride
 * 0) that row's length. (tma.c; codegen's tensor maps use it too.) */
int64_t op_tma_row(const op_plan *p, int kx);
/* Pads a shape on the left to 4 dims with 1s (shared with codegen). */
void op_pad4(const ir_shape *s, int64_t d[4]);
/* 1 if block-graph node i is computed inside its consumers instead of stored (thread graph,
 * Mirage §4.2): one consumer, or with `recompute` a few cheap recomputations (inline.c). */
int op_inlined(const ir_graph *b, int i, const int *uses, const int *user, int recompute);

/* Does a tensor-core product of tiles a and b run in bf16 (else f16)? In f16 when both are
 * f16 values: stored f16, or f32 tiles of f16 program values (tc.f16); a bf16 or other
 * f32 tile needs bf16's range. (layout.c) */
int op_mm_bf16(const op_tensor *a, const op_tensor *b);

/* ---- space.c: the schedule space (docs/tuning.md) ---- */
enum { OP_SPACE_MAX = 64, OP_SPACE_VALS = 8, OP_SPACE_KERNELS = 16 };
typedef enum {
    OP_P_REUSE, OP_P_DEPTH, OP_P_LAYOUT, OP_P_REGACC, OP_P_CHAIN, /* switches */
    OP_P_TMA, OP_P_THREADS, OP_P_STAGES, OP_P_PAIR, OP_P_N         /* per kernel */
} op_param_kind;
enum { OP_C_THREADS, OP_C_STAGES, OP_C_TRIP, OP_C_SMEM, OP_C_REGS, OP_C_PLAN, OP_C_N };
typedef struct op_space_name {
    const char *name, *what;
} op_space_name;
extern const op_space_name op_params[OP_P_N], op_constraints[OP_C_N];
/* One parameter: kernel's (-1: every kernel's) choice of kind among val[0 .. n); def indexes
 * the value the rules choose. */
typedef struct op_param {
    op_param_kind kind;
    int kernel, n, def;
    int val[OP_SPACE_VALS];
} op_param;
typedef struct op_space {
    op_param p[OP_SPACE_MAX];
    int n, n_kernels;
} op_space;
/* The space of g's plans on dev around base (opts.force unset): plans g once by the rules and
 * lists the switches that apply and, for each of its first OP_SPACE_KERNELS graph-defined
 * kernels, TMA (where the rules take it), threads, stages (a loop) and blocks an SM (TMA).
 * MG_OK, or the rules' plan's own error. */
mg_status op_space_new(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, const op_opts *base, op_space *s);
/* The constraints point x of s breaks (bit c: op_constraints[c]), 0 for a valid point, -1 out
 * of memory. Checks each choice first, then plans the point (op_opts.force) and checks the
 * plan's shared memory and registers against dev. */
int op_space_check(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, const int *x);
/* The op_opts of point x of s over base: its switches, and each kernel's choices in f[]
 * (o.force), which must outlive the result. */
op_opts op_space_opts(const op_space *s, const int *x, const op_opts *base, op_force f[OP_SPACE_KERNELS]);
/* s's distinct points (a parameter that does not apply at a point, threads under TMA or blocks
 * an SM without it, taken at the rules' value), or with valid != 0 those valid, counted
 * exactly kernel by kernel (each kernel is planned on its own); -1 out of memory. */
double op_space_count(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, int valid);
/* Point x of s from spec "NAME=VALUE,..." (names as `mugen space` prints them; the others at
 * the rules' values; spec NULL or "": the rules' point). MG_ERR_INVALID naming the part of spec
 * that is no parameter of s or no value of its domain. */
mg_status op_space_parse(const op_space *s, const char *spec, mg_ctx *ctx, int *x);
/* Writes point x as op_space_parse reads it, every parameter that applies (NAME=VALUE,...),
 * into buf (n bytes): its length, or -1 when it does not fit. */
int op_space_format(const op_space *s, const int *x, char *buf, int n);
/* Draws a valid point of s at random into x (up to 1,000 draws): 0, 1 when none of them was
 * valid, -1 out of memory. */
int op_space_draw(const ir_graph *g, const mg_device *dev, const op_opts *base, const op_space *s, rng *r, int *x);
/* Appends `mugen space`'s report to out: the parameters with their domains, each constraint's
 * rejections among `samples` random points (seed; every point when there are no more), the
 * count of valid points, and whether the rules' own point is valid; counts (may be NULL) gets
 * the distinct points and the valid ones. */
mg_status op_space_report(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, const op_opts *base, int samples,
                          uint64_t seed, strbuf *out, double counts[2]);

/* Whether blocks of `threads` threads with `acc` accumulator floats a thread fit two an SM:
 * at most 96 of them, and about 32 registers more a thread within the SM's
 * 65,536 (the Q/K/V kernel of three products: 96 accumulators, 122 registers, no spills). */
static inline int op_pair_regs_ok(int64_t threads, int64_t acc) {
    return acc <= 96 && 2 * threads * (acc + 32) <= 65536;
}

#endif
