/* codegen: an op_plan (opt/) -> source text. Nothing here decides anything; it writes down
 * what the plan says (STYLE.md: "IR -> source text only"). Two targets share one emitter:
 *   CUDA  one __global__ per graph-defined kernel (block graph: iterators load tiles into
 *         shared memory, the for-loop body runs block operators with matmuls on tensor cores
 *         via mma.sync, accumulators in shared memory, thread graphs inlined, savers write
 *         back per omap) and one per remaining kernel-level operator; compiled by NVRTC.
 *   C     the same kernels as portable C11: blocks across OpenMP threads, each block's
 *         "shared memory" a private buffer, the threads of a block one sequential loop.
 * Every generated source is self-contained (no headers beyond libc's in C, none in CUDA). */
#ifndef MG_CODEGEN_H
#define MG_CODEGEN_H

#include "../opt/opt.h"

typedef enum cg_target { CG_CUDA, CG_C } cg_target;

/* a launch's buffer arguments: a kernel's few, a persistent launch's every buffer (packed) */
enum { CG_MAX_ARGS = 1024 };

/* One kernel launch: function `name` over grid[] blocks of `block` threads with `smem` bytes
 * of dynamic shared memory, called with the device buffers args[0..n_args). */
enum { CG_MAX_TMAPS = OP_MAX_TMA_TILES };
/* A TMA tensor map a CUDA launch passes after its buffer arguments (opt/tma.c): the 2-D view
 * of argument `arg`'s buffer as dims[1] rows of dims[0] 16-bit elements, row_bytes apart, read
 * in boxes of box[0] x box[1] elements, each box row of 2 box[0] bytes (64 or 128) swizzled
 * across that many bytes; the runtime encodes it for the buffer's address at each launch
 * (rt_tmap) and passes it by value (128 bytes). */
typedef struct cg_tmap {
    int arg;
    int64_t dims[2], row_bytes;
    unsigned box[2];
} cg_tmap;

typedef struct cg_launch {
    char name[64];
    int node;          /* the kernel-graph node it computes (for messages) */
    unsigned grid[3], block;
    int64_t smem;
    int pdl;           /* CUDA: the kernel waits for the previous one itself (griddepcontrol.wait
                        * before its first instruction that touches memory), so it may be launched
                        * as a programmatic dependent of it (rt_launch) */
    unsigned cluster[3]; /* CUDA: blocks a thread-block cluster spans along x, y, z; 0: no clusters */
    int packed;        /* CUDA: the kernel takes args[0 .. n_args - 1) as one struct of device
                        * pointers by value, then args[n_args - 1] (a persistent launch: more
                        * buffers than a kernel's parameters would hold one by one) */
    int coresident;    /* CUDA: its blocks wait for each other (a persistent launch with a static
                        * schedule): grid[0] is at most, the runtime launches as many as the
                        * device holds at once (RT_CORESIDENT) */
    int n_args, n_out; /* args[0 .. n_out): the buffers it writes */
    int args[CG_MAX_ARGS];
    int row_axis;      /* the grid axis whose blocks split dim 0 of every output into equal parts
                        * (a block kernel's omap), -1: none; cg_mark_rows keeps it only for a
                        * launch over a capacity dim's rows (docs/tuning.md "Run-time grids") */
    int64_t row_rows;  /* dim 0 of its outputs (their rows), when row_axis >= 0 */
    int n_tmaps;       /* CUDA: tensor maps after the args, in kernel-parameter order */
    cg_tmap tmaps[CG_MAX_TMAPS];
    int len_param;     /* CUDA: a variant of a reduced dim's kernel takes the call's length (a long
                        * long) after the tensor maps (docs/tuning.md "Reduced dims"); C: the
                        * program's mg_set_len sets it for every kernel */
} cg_launch;

/* A generated program. Buffer b holds buf_bytes[b] bytes; program input i is buffer
 * in_buf[i] (row-major, its dtype), output i is out_buf[i]. The C target's source also
 * defines `void mg_entry(void **bufs)`, which makes every launch in order.
 * Invariant: launches are in dependency order; every arg < n_bufs. */
typedef struct cg_program {
    char *src;         /* base_alloc'd, NUL-terminated */
    cg_launch *launches;
    int n_launches;
    int n_bufs;
    int64_t *buf_bytes;
    int *buf_alias;    /* -1, or the buffer b lies in (a view: op_plan.view): b is then no
                        * allocation of its own (buf_bytes 0) but buf_alias[b]'s address plus
                        * buf_off[b] bytes; an alias is always a lower, non-alias buffer */
    int64_t *buf_off;
    int *in_buf, *out_buf;
    int n_in, n_out;
    int sync_buf;      /* a persistent launch's counters (emit.c): a buffer the runtime zeroes
                        * before the first launch (each launch leaves it zeroed but for its
                        * last 3 words, the watchdog's: cuda/lib/task.cuh); -1: none */
    int n_tasks;       /* a persistent launch's tasks: launch l's blocks are tasks task_first[l]
                        * .. task_first[l + 1] of kernel-graph node task_node[l] (for messages) */
    int n_task_launches;
    int *task_first, *task_node;
    int reduced;       /* a variant of a reduced dim: its code masks past a length it is given
                        * at each call (cg_launch.len_param; C: mg_set_len(long long)) */
    int64_t trace_at;  /* MUGEN_TRACE (docs/env.md): byte offset in sync_buf of the persistent
                        * launch's trace, 4 u64 a task (task.cuh mg_trace); -1: not traced */
} cg_program;

/* Writes plan p as target t into *out (free with cg_program_free; NULL ok). MG_ERR_NOMEM, or
 * MG_ERR_UNSUPPORTED naming an operator the target cannot express. */
mg_status cg_emit(const op_plan *p, mg_ctx *ctx, cg_target t, cg_program *out);
void cg_program_free(cg_program *c);

/* Run-time grids over a capacity dim (docs/tuning.md "Run-time grids"). c's code is a
 * variant for cap rows of a symbolic dim (a batch of independent rows: ir_sym_check), and
 * in_varies[i] says whether program input i holds those rows (dim 0, K * cap), and ks[0 ..
 * n_ks) are the K the program's tensors that hold them have. Keeps row_axis only on the
 * launches that hold them: reached from such an input through the launches' arguments, with
 * outputs of K * cap rows for a K of ks (a lowered tensor whose dim 0 is something else, a
 * product's transposed operand, is not cut); sets it to -1 on the rest, which keep their
 * full grid at every B. */
void cg_mark_rows(cg_program *c, const unsigned char *in_varies, int64_t cap, const int64_t *ks, int n_ks);
/* The grid launch L runs for a call of b rows of the variant for cap rows (1 <= b <= cap):
 * its grid with the row axis cut to the blocks that cover the first b of cap parts (rounded
 * up to whole clusters), the full grid where row_axis < 0. */
void cg_row_grid(const cg_launch *L, int64_t b, int64_t cap, unsigned grid[3]);

#endif
