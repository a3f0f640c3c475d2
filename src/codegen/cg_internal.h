/* codegen internals: the emitter's context and what its files share. emit.c is the pass list
 * (cg_emit); expr.c, loops.c, params.c and block.c are the target-neutral core; cuda/ and c/
 * hold what one target alone writes (its strategies, launch forms and entry point), and c/lib.h
 * and cuda/lib/ the device code a generated program starts with. Nothing here is visible
 * outside src/codegen. */
#ifndef MG_CG_INTERNAL_H
#define MG_CG_INTERNAL_H

#include "codegen.h"

enum { CW = 160 }; /* room for one coordinate expression */
typedef char coord[4][CW];

/* The pieces of CUDA device code (cuda/lib/) besides scalar.cuh, which every program gets: a
 * program starts with those its kernels call and those these need (emit.c's cuda_lib). */
enum { CG_LIB_MMA = 1, CG_LIB_COPY = 2, CG_LIB_CHAIN = 4, CG_LIB_WGMMA = 8, CG_LIB_TASK = 16, CG_LIB_TMA = 32, CG_LIB_QUEUE = 64, CG_LIB_SEQATTN = 128 };

/* The emitter's state while it writes one kernel (or, at kernel level, the program). A block
 * kernel's em is a copy of the program's with g, k, names and block set (cg_block_em). */
typedef struct em {
    strbuf *sb;
    const op_plan *p;
    cg_target tg;
    const ir_graph *g;   /* the graph whose nodes cg_expr() reads: kernel graph or a block graph */
    const op_kernel *k;  /* the block graph's plan, NULL at kernel level */
    const char **names;  /* C names of g's nodes */
    int block;           /* inside a block kernel */
    int reg_node;        /* a node whose value is the variable vr_ here (a fused reduction), or -1 */
    int async;           /* iterator copies go out as cp.async (CUDA), waited for later */
    int mm_w0;           /* the warp the next mg_mm_tc's first tile goes to (0 after a barrier) */
    int synced;          /* 1 + the step whose planned barrier was already written (0: none) */
    int wg;              /* the kernel has wgmma: barriers first order shared-memory writes
                          * before wgmma's reads (fence.proxy.async) */
    unsigned *lib;       /* CUDA: the pieces of device code the text written so far calls
                          * (CG_LIB_*), one mask for the whole program */
    int op_task;         /* CUDA, kernel level: the element loop is task tb_ of tn_ (a persistent
                          * launch), not block blockIdx.x of gridDim.x */
    int64_t work;        /* C, kernel level: operations per element of the next loop opened
                          * (a reduction's group; 1 otherwise), for its OpenMP threshold */
    int nomask;          /* cg_expr leaves elementwise values unmasked (an epilogue that mg_mask
                          * masks as a whole, mask.c) */
    mg_status rc;
    mg_ctx *ctx;
} em;

/* C: a loop or a grid of blocks is shared out over OpenMP threads only past this many
 * operations (about a millisecond on one core); below it the fork and join cost more than
 * they save: microseconds on an idle machine, milliseconds when other processes hold the
 * cores and a thread of the team waits for its turn (LoRA's 17 M multiply-adds: 0.8 ms on
 * one thread, 58 ms median with two on a loaded 2-core machine, docs/notes/2026-11-26) */
enum { CG_C_PAR_MIN = 1 << 22 };

/* the text just written calls device code of the pieces `pieces` (CG_LIB_*) */
static inline void cg_uses(const em *E, unsigned pieces) { *E->lib |= pieces; }

/* A kernel's parameters. */
typedef struct params {
    int n;
    int node[CG_MAX_ARGS]; /* kernel-graph nodes passed, outputs first, each once */
    int n_out;
} params;

/* the C type of a stored dtype, and the functions that load it as / store it from a float
 * (empty for f32) */
static inline const char *cg_ctype(mg_dtype t) { return t == MG_F16 ? "mg_h" : t == MG_BF16 ? "mg_bh" : "float"; }
static inline const char *cg_ldfn(mg_dtype t) { return t == MG_F16 ? "mg_ldh" : t == MG_BF16 ? "mg_ldb" : ""; }
static inline const char *cg_stfn(mg_dtype t) { return t == MG_F16 ? "mg_sth" : t == MG_BF16 ? "mg_stb" : ""; }

/* ---- the fixed text a program starts with: c/lib.h and the pieces in cuda/lib/, embedded at
 * build time (tools/embed.sh, the Makefile: $(B)/gen/), NUL-terminated ---- */
extern const char cg_c_lib[];
extern const char cg_ir_scalar[]; /* src/ir/scalar.h: the operators' float meaning */
extern const char cg_cuda_scalar[], cg_cuda_mma[], cg_cuda_copy[], cg_cuda_chain[], cg_cuda_wgmma[], cg_cuda_task[], cg_cuda_queue[],
    cg_cuda_tma[], cg_cuda_seqattn[];
/* seqattn.c: the kernel of seqattn node j (either target) */
void cg_emit_seqattn(em *E, int j, cg_program *out);

/* ---- params.c: kernel parameters and launch records ---- */
const char **cg_names(const ir_graph *g, arena *a, const char *prefix);
/* Adds kernel-graph node `node` to ps unless it is there. */
void cg_add_param(params *ps, int node);
void cg_collect_inputs(const op_plan *p, int j, params *ps);
void cg_param_list(em *E, const char **gn, const params *ps, int fused);
/* Writes the head of kernel kname over ps (nthreads: CUDA's launch bounds); after: it waits
 * for the kernel before it (CUDA). */
void cg_signature(em *E, const char *kname, const params *ps, int nthreads, const char **gn, int after);
/* Appends a launch of kname over grid x block threads with smem bytes, args from ps. */
void cg_record_launch(const em *E, cg_program *out, const char *kname, int node, const params *ps,
                      const unsigned grid[3], unsigned block, int64_t smem);
void cg_block_params(const op_plan *p, int knode, params *ps);

/* ---- expr.c: reading and computing values ---- */
/* Node j's strides and stored dtype: its shared-memory tile in a block, else its buffer's. */
/* Is node j of the current graph stored (a load reads it) rather than computed in place? */
int cg_stored(const em *E, int j);
void cg_tensor_strides(const em *E, int j, int64_t st[4], mg_dtype *store);
void cg_index_expr(strbuf *o, coord c, const int64_t st[4], int wide);
void cg_expr(em *E, strbuf *o, int j, coord c, int force);
int cg_reduce_lanes(const em *E, const ir_node *n);
void cg_compute_reduce(em *E, const ir_node *n, coord c);
/* v = matmul n at c: a dot product over the depth, element by element */
void cg_compute_matmul(em *E, const ir_node *n, coord c);
/* Statements computing node j's value at c into a variable v (see the section's ruler). */
void cg_compute(em *E, int j, coord c);

/* ---- mask.c: a reduced dim's values past the call's length mg_L read as 0 ---- */
/* The program has a reduced dim: its kernels take mg_L (CUDA: a parameter; C: a global). */
int cg_masked(const em *E);
/* The padded dims (bit d) of node j of the current graph that follow the reduced dim. */
unsigned cg_lbits(const em *E, int j);
/* Is kernel-graph node x a program input's data (an input, or a view of one)? */
int cg_input_data(const op_plan *p, int x);
/* Dim d of node j's first index in the whole tensor (block: its tile base; kernel level: 0). */
void cg_lbase(const em *E, strbuf *o, int j, int d);
/* "(index < mg_L && ...)" over node j's dims that follow the dim, at local coordinate c. */
void cg_mask_cond(const em *E, strbuf *o, int j, coord c);
/* The same over those of the dims in `bits` (bit d: padded dim d); "(1)" when none is. */
void cg_mask_cond_bits(const em *E, strbuf *o, int j, coord c, unsigned bits);
/* The bytes of a 16-byte vector of v elements of esize bytes at c (dim `inner` along it) of
 * node j's tile that lie before mg_L, as an int expression. */
void cg_mask_bytes(const em *E, strbuf *o, int j, coord c, int inner, int64_t v, int64_t esize);
/* Around an epilogue lambda of node j (CUDA): mg_mask(lambda, rows left, columns left) where
 * j follows the dim (open before the lambda, close after it); nothing otherwise. */
void cg_mask_epilogue_open(em *E, int j);
void cg_mask_epilogue_close(em *E, int j);

/* ---- loops.c: element loops ---- */
void cg_loop_open_lanes(em *E, const int64_t d[4], coord c, int lanes);
/* cg_loop_open_lanes with one thread an element */
void cg_loop_open(em *E, const int64_t d[4], coord c);
void cg_loop_open_perm(em *E, const int64_t d[4], coord c, const int perm[4]);
/* name[index of c under strides st] = val, converted to t */
void cg_store_to(em *E, const char *name, mg_dtype t, const int64_t st[4], coord c, const char *val);
/* Dense row-major strides of dims fd (0 on dims of size 1). */
void cg_full_strides(const int64_t fd[4], int64_t st[4]);

/* ---- block.c: the block-kernel skeleton ---- */
void cg_block_body(em *E, const char **gn, int knode, const params *ps);
/* A TMA kernel's (op_kernel.tma) tensor maps: its parameters after the buffers', one per
 * pipelined tile (cg_tma_params), and the launch's record of them (cg_tma_record). */
void cg_tma_params(em *E);
void cg_tma_record(const em *E, int knode, const params *ps, cg_launch *l);
int cg_block_em(em *KE, int knode, arena *a, em *E);
/* The comment above block kernel knode: grid, threads, for-loop, shared memory, barriers. */
void cg_block_comment(em *E, int knode);
/* Writes graph-defined kernel knode as a kernel of its own and records its launch. */
void cg_emit_block_kernel(em *KE, int knode, const char **gn, cg_program *out, arena *a);

/* ---- cuda/mma.c: tensor-core matmuls and attention chains ---- */
/* Step strategies (block.c's table): each writes step j and returns 1, or returns 0. */
int cg_cuda_chain_writer(em *E, int j);
int cg_cuda_matmul(em *E, int j);
int cg_cuda_matmul_epilogue(em *E, int j);
/* Iterator j's tile in the core-matrix layout (op_tensor.wg), from gname at base_; 1 if
 * written (t->tc.wg), else 0. */
int cg_cuda_iter_wg(em *E, int j, const char *gname, const int64_t fst[4]);
/* Register accumulator acc: its fragments declared zeroed before the loop, its sum stored
 * after it. */
void cg_cuda_regacc_decl(em *E, int acc);
void cg_cuda_store_regacc(em *E, int acc);

/* ---- cuda/vector.c: 16-byte copies, four elements a thread, in-place conversion ---- */
int cg_cuda_iter_vec(em *E, int j, int x, const char *gname, const int64_t fst[4]);
int cg_cuda_convert_in_place(em *E, int knode, int pipelined);
int cg_cuda_save4(em *E, const int64_t td[4], const char *gname, const int64_t fst[4], int node);
int cg_cuda_elementwise4(em *E, int j);

/* ---- cuda/launch.c: how blocks are launched ---- */
/* The body of block kernel knode as a CUDA kernel's: one block a thread block. */
/* 1 if kernel-graph node i is launched on its own when not fused: a graph-defined kernel's
 * first node, or a stored kernel-level operator (not an input, inlined or a view) */
int cg_is_launch(const op_plan *p, int i);
/* Kernel-level operator j's parameters (its output, then what it reads), and its element loop
 * (CUDA: a grid-stride loop over its blocks, or with E->op_task over tasks tb_ of tn_) */
void cg_op_params(const op_plan *p, int j, params *ps);
void cg_op_body(em *E, int j);
void cg_cuda_blocks(em *E, const char **gn, int knode, const params *ps);
void cg_cuda_emit_fused(em *KE, cg_program *out, arena *a);
void cg_cuda_emit_clustered(em *KE, cg_program *out, arena *a);

/* ---- c/entry.c: the C target ---- */
/* The body of block kernel knode as a C function's: the blocks over OpenMP threads. */
void cg_c_blocks(em *E, const char **gn, int knode, const params *ps);
/* Register accumulator acc (C): a private dense array, zeroed before the loop, added to by
 * its matmul step mm (cg_c_regacc_add: the value v at c) and stored after it. */
void cg_c_regacc_decl(em *E, int acc);
void cg_c_regacc_add(em *E, int mm, coord c);
void cg_c_store_regacc(em *E, int acc);
void cg_c_entry(em *E, const cg_program *out);

/* ---- c/matmul.c: the C target's matmuls, as tiled vector loops ---- */
/* Writes matmul node mm as a loop over output tiles (over OpenMP threads at kernel level), each
 * summing its products in k order, then node j's value over it (j == mm: the product;
 * else the elementwise step fused over it, fuse.mm) stored where j goes. */
void cg_c_matmul_tiles(em *E, int mm, int j);
/* Step strategy (block.c's table): a matmul step or one fused over a matmul; 1 if written. */
int cg_c_matmul(em *E, int j);

#endif
