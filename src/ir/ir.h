/* ir: the kernel graph, mugen's program representation (docs/ir.md).
 *
 * A program is a DAG of nodes stored in topological order: node i only reads nodes < i.
 * Every node has an inferred shape (up to 4 dims, row-major) and dtype. Parsing (.mu text,
 * JSON) builds graphs through ir_add_*; printers, the Lax checker, the partitioner and the
 * reference evaluators read them. Graph-defined operators are KERNEL nodes whose body is a
 * block graph (ugraph.c); ragged dims will be a new dim kind here. Every consumer dispatches
 * on ops.def's columns, so a new operator is a row there.
 */
#ifndef MG_IR_H
#define MG_IR_H

#include "../base/base.h"
#include "device.h" /* what a block graph is checked against (Mirage Definition 2.1 (2)) */

enum { IR_MAX_DIMS = MG_MAX_DIMS, IR_MAX_IN = 8 };
#define IR_MAX_DIM ((int64_t)INT32_MAX)   /* largest size of one dimension */
#define IR_MAX_NUMEL ((int64_t)1 << 40)   /* largest element count of one tensor */
#define IR_MAX_NODES (1 << 20)

typedef enum ir_op {
#define OP(e, ...) IR_OP_##e,
#include "ops.def"
#undef OP
    IR_OP_COUNT
} ir_op;

enum { IR_LEVEL_K = 1, IR_LEVEL_B = 2, IR_LEVEL_T = 4 };
typedef enum ir_kind {
    IR_KIND_SOURCE, IR_KIND_UNARY, IR_KIND_BINARY, IR_KIND_REDUCE, IR_KIND_MATMUL, IR_KIND_LAYOUT, IR_KIND_SEQ,
    IR_KIND_GRAPH, IR_KIND_BLOCK, IR_KIND_COMPOUND
} ir_kind;
/* The rules of ops.def's deg and terms columns (verify.c vf_estimate applies them). */
typedef enum ir_deg {
    IR_DEG_ZERO, IR_DEG_ONE, IR_DEG_SAME, IR_DEG_MAX, IR_DEG_ADD, IR_DEG_TWICE
} ir_deg;
typedef enum ir_terms {
    IR_TERMS_ZERO, IR_TERMS_ONE, IR_TERMS_TWO, IR_TERMS_SAME, IR_TERMS_MAX, IR_TERMS_ADD,
    IR_TERMS_MUL, IR_TERMS_SQUARE, IR_TERMS_MULN, IR_TERMS_SAMEN
} ir_terms;

/* One op table row, indexed by ir_op; ops.def documents every column. */
typedef struct ir_op_info {
    const char *name;
    int arity, levels, lax, n_exp;
    ir_kind kind;
    const char *attrs; /* attribute letters, upper case = required */
    int commutative;
    int cost;          /* recompute cost per element */
    const char *cfn;   /* C/CUDA spelling: a prelude function or an infix symbol; NULL */
    ir_deg deg;
    ir_terms terms;
    int search;        /* the search may place it */
} ir_op_info;
extern const ir_op_info ir_ops[IR_OP_COUNT];

/* 1 if op's cfn is an infix symbol, which is one character ("+", "-", "*"): generated code
 * writes (a + b) rather than cfn(a, b). */
static inline int ir_op_infix(ir_op op) {
    const char *f = ir_ops[op].cfn;
    return f && f[0] && !f[1];
}
/* Whether op takes the attribute letter c (lower case, ops.def attrs): 0 no, 1 optional,
 * 2 required. */
int ir_op_attr(ir_op op, char c);
/* The names of the operators the search may place (ops.def search column), ", "-separated,
 * in the order it tries them: the unary ones, then the binary ones, then the rest, each in
 * table order. Written into buf (n bytes, cut if short); returns buf. */
const char *ir_search_op_names(char *buf, size_t n);

/* Invariant: 0 <= ndim <= IR_MAX_DIMS, 1 <= d[i] <= IR_MAX_DIM, product <= IR_MAX_NUMEL.
 * Rank 0 is a scalar (constants).
 * Ragged tensors (docs/ragged.md, a program's `lengths` declarations, ir_graph.lens): rag[0]
 * = k + 1 marks dim 0 as lengths k's batch (a per-sequence tensor, d[0] = its count); rag[i]
 * = k + 1 for i >= 1 marks dim i ragged by lengths k: for batch index b its extent is the
 * run-time length len_k[b] (0 to d[i], d[i] being the declared maximum). 0: static. A ragged
 * dim only appears in a tensor whose dim 0 is the same lengths' batch. No padding bytes:
 * shapes are compared with memcmp. */
typedef struct ir_shape {
    int ndim;
    signed char rag[IR_MAX_DIMS];
    int64_t d[IR_MAX_DIMS];
} ir_shape;
_Static_assert(sizeof(ir_shape) == 8 + 8 * IR_MAX_DIMS, "ir_shape has padding");

/* A `lengths NAME[count] <= max` declaration: a batch of `count` sequences whose lengths are
 * given at run time, each in [0, max] (ir_lengths_check). */
enum { IR_MAX_LENS = 4 };
typedef struct ir_lengths {
    const char *name; /* in the graph's arena */
    int64_t count, max;
    int line, col;
} ir_lengths;

/* A `dim NAME [lo, hi]` declaration (docs/tuning.md, "Symbolic dims"): a size each call gives
 * in [lo, hi], written as NAME (or NAME * K, K * NAME) in shapes. The graph is the program's
 * instance at val (ir_parse_text_at's binding, by default hi): its shapes are static. */
enum { IR_MAX_SYMS = 4 };
typedef struct ir_sym {
    const char *name; /* in the graph's arena */
    int64_t lo, hi, val;
    int line, col;
    int reduced; /* ir_sym_check's verdict: 0 a batch of independent rows (dim 0 of the tensors
                  * it reaches), 1 a reduced dim (a KV length: anywhere in a tensor, summed or
                  * contracted; docs/tuning.md "Reduced dims") */
} ir_sym;

/* A node. Attributes by op:
 *   SUM: dim, group (elements reduced together along dim; == size of dim for a full sum)
 *   MAX, CONCAT: dim
 *   REPEAT: ints[0..n_ints) = per-dim repeat factors (n_ints == rank)
 *   RESHAPE: ints[0..n_ints) = the new shape
 *   TRANSPOSE: ints[0..n_ints) = perm (n_ints == rank): result dim i is operand dim perm[i]
 *   SLICE: dim; ints[0] = start, ints[1] = len (n_ints == 2): elements [start, start + len)
 *   CONST: lit = exact decimal text; value = its double; num/den = the same as a fraction
 * Invariant: in[k] < own index for all k < n_in; n_in == ir_ops[op].arity. */
typedef struct ir_node {
    ir_op op;
    int n_in;
    int in[IR_MAX_IN];
    mg_dtype dtype;
    ir_shape shape;
    int dim;
    int64_t group;
    int n_ints;
    int64_t ints[IR_MAX_DIMS];
    const char *lit;
    double value;     /* CONST: its value; INPUT: its random test values' half-width (ir_input_range) */
    int64_t num, den;
    const char *name; /* NULL for anonymous intermediates; unique when set */
    int line, col;    /* where it was defined, 0 if not from text */
    /* μGraphs (docs/ir.md, "μGraphs"):
     *   KERNEL: body = its block graph, shared by the kernel's output nodes and owned by the
     *           one with index 0; index = which save of the body this node is
     *   ITER:   index = which kernel input it reads; map = imap; fmap
     *   ACCUM:  fmap = -1 (phi): sum over iterations; d: iterations concatenated along dim d
     *   SAVE:   map = omap; index = its position among the kernel's outputs
     * map[g] is the tensor dim that grid dim g (x, y, z) splits, or -1 (phi: replicate). */
    struct ir_graph *body;
    int index;
    int map[3];
    int fmap;
} ir_node;


/* Invariant: nodes[0..n_nodes) topologically ordered; outputs[] index distinct nodes;
 * names maps every non-NULL node name to its index. */
typedef struct ir_graph {
    arena mem; /* names, literals */
    ir_node *nodes;
    int n_nodes, cap_nodes;
    int *outputs;
    int n_outputs, cap_outputs;
    strmap names;
    /* Block graphs only (is_block = 1): the body of a KERNEL node. Its outputs[] are its SAVE
     * nodes in order; kin_* describe the kernel inputs its iterators read (Mirage §2). */
    int is_block;
    int grid[3];     /* blocks along x, y, z (each >= 1) */
    int threads;     /* threads per block */
    int64_t forloop; /* iterations of the for-loop body (>= 1) */
    int n_kin;
    /* Kernel graphs: the lengths declarations ragged shapes refer to (rag codes k + 1). */
    ir_lengths lens[IR_MAX_LENS];
    int n_lens;
    /* Kernel graphs: the symbolic dims (`dim` declarations) and the values they are bound to. */
    ir_sym syms[IR_MAX_SYMS];
    int n_syms;
    ir_shape kin_shape[IR_MAX_IN];
    mg_dtype kin_dtype[IR_MAX_IN];
    const char *kin_name[IR_MAX_IN];
} ir_graph;

/* Returns a new empty graph (NULL if out of memory); free with ir_graph_free (NULL ok). */
ir_graph *ir_graph_new(void);
void ir_graph_free(ir_graph *g);

/* The ir_add_* / ir_set_name calls return the node index (or 0), or a negative mg_status
 * (-rc) with the message in ctx. */
/* Adds an input. Returns its index, or -rc with ctx set (duplicate name, bad shape, limits). */
int ir_add_input(ir_graph *g, mg_ctx *ctx, const char *name, mg_dtype t, const ir_shape *s);
/* Input node n's random test values are uniform in [-r, r), r = this: its `range=` (a model's
 * weights, say 1/sqrt(fan-in), so that a deep program's f16 values stay in range as in the
 * model), else 1. Only what `mugen run`, `mugen eval` and the suites draw: never part of the
 * program's meaning (the verifier picks its own input ranges). */
static inline double ir_input_range(const ir_node *n) { return n->value > 0 ? n->value : 1; }
/* Sets input i's range (> 0 and finite; 1 is the default and is not printed). */
void ir_set_input_range(ir_graph *g, int i, double r);
/* ir_add_input of node n's dtype and shape under `name`, with n's range when n is an input
 * (a tensor of another graph becoming this one's input: a piece, a lowering). */
int ir_add_input_from(ir_graph *g, mg_ctx *ctx, const char *name, const ir_node *n);
/* Adds an op node described by `proto` (op, n_in, in[], attributes, line/col; its shape and
 * dtype are ignored and inferred). Returns its index, or -rc with ctx holding a message that
 * names the op, its operands and their shapes; with ctx NULL no message is formatted (the
 * search, which only counts the operators that do not fit). */
int ir_add_node(ir_graph *g, mg_ctx *ctx, const ir_node *proto);
/* Adds a constant node from decimal text ("4096", "-0.125", "1e-6"). -rc + ctx if malformed
 * or out of range. */
int ir_add_const(ir_graph *g, mg_ctx *ctx, const char *lit, int line, int col);
/* Names node i. -rc + ctx if the name is taken or i already has a name. */
int ir_set_name(ir_graph *g, mg_ctx *ctx, int i, const char *name);
/* Marks node i as an output. -rc + ctx if already an output. */
int ir_add_output(ir_graph *g, mg_ctx *ctx, int i);
/* Index of the node called name, or -1. */
int ir_find(const ir_graph *g, const char *name);
/* Declares lengths `name` (count sequences, each of at most max elements; both in [1,
 * IR_MAX_DIM]). Returns its index k (a shape's rag code is k + 1) or -rc with ctx set: a name
 * taken by a tensor or another lengths, more than IR_MAX_LENS, a kernel's block graph. */
int ir_add_lengths(ir_graph *g, mg_ctx *ctx, const char *name, int64_t count, int64_t max, int line, int col);
/* Index of the lengths called name, or -1. */
int ir_find_lengths(const ir_graph *g, const char *name);
/* Declares the symbolic dim `name` in [lo, hi] (1 <= lo <= hi <= IR_MAX_DIM), bound to val
 * (any value when probe: the two-prime check, sym.c). Returns its index or -rc with ctx set: a
 * name taken, more than IR_MAX_SYMS, a kernel's block graph, a bad range or val outside it. */
int ir_add_sym(ir_graph *g, mg_ctx *ctx, const char *name, int64_t lo, int64_t hi, int64_t val, int probe, int line, int col);
/* Index of the symbolic dim called name, or -1. */
int ir_find_sym(const ir_graph *g, const char *name);
/* The sizes a program of symbolic dims is compiled for (docs/tuning.md, "Symbolic dims"): the
 * smallest that holds v, at most hi, of 1, 2, 4, ..., 128, then the multiples of 128 (a batch
 * of rows), or of 128, 256, 512, ... (a reduced dim: s->reduced). */
int64_t ir_sym_capacity(const ir_sym *s, int64_t v);
/* Classifies each symbolic dim of g (parsed from text, len bytes, named file; sym.c) and sets
 * its `reduced`: a batch of independent rows, else a reduced dim (a KV length), else
 * MG_ERR_SHAPE naming the operator that makes it neither; MG_ERR_UNSUPPORTED for dims with
 * lengths, kernels or ragged attention, or a reduced dim beside another dim. */
mg_status ir_sym_check(mg_ctx *ctx, const char *text, size_t len, const char *file, ir_graph *g);
/* Whether any dim of s is ragged or its dim 0 a batch. */
int ir_shape_ragged(const ir_shape *s);
/* Checks run-time lengths len[0..n) for lengths k of g: n must be its count, each length in
 * [0, its max], and every ragged tensor of g must fit its storage when packed (at most
 * IR_MAX_NUMEL elements). MG_OK or MG_ERR_INVALID naming the lengths, the entry and why. */
mg_status ir_lengths_check(const ir_graph *g, mg_ctx *ctx, int k, const int64_t *len, int64_t n);
/* Elements of one sequence's slab of shape s (a ragged tensor's packed storage is its
 * sequences' slabs in order): dim 0 counts 1, a ragged dim its length in lens[k][b]; a tensor
 * without a batch counts whole. lens[k] is lengths k's run-time vector. */
int64_t ir_slab_numel(const ir_shape *s, const int64_t *const *lens, int64_t b);
/* Packed storage of a tensor of shape s (docs/ragged.md, "Storage"): its sequences' slabs in
 * order, each ragged dim's extent rounded up to a multiple of pad (1: no padding; a tensor-core
 * tile's rows so that no tile straddles two sequences). off[b] = the element where slab b
 * starts, off[count] = the total (count = s->d[0]); a tensor without a batch: off[0] = 0,
 * off[1] = its numel. Returns the total. */
int64_t ir_packed_offsets(const ir_shape *s, const int64_t *const *lens, int64_t pad, int64_t *off);
/* The work items of a kernel tiled by `tile` along a dim ragged by len[0..n): (sequence b,
 * tile t) for t < ceil(len[b] / tile), longest sequences first (ties by b), so the heaviest
 * work starts first (CORA's load balancing); items[2 i], items[2 i + 1]. Returns the count,
 * or -1 when it would pass cap. */
int64_t ir_work_items(const int64_t *len, int64_t n, int64_t tile, int32_t *items, int64_t cap);
/* A token-wise ragged program g (one lengths; every per-sequence tensor [batch, len, static
 * dims...], so no operator mixes tokens: projections, biases, norms over the static dims, an
 * FFN) as a static program over its T tokens: each per-sequence tensor [B, len, r...] becomes
 * [T, r...], which is its packed storage; static operands broadcast over both dims 0 and 1
 * lose one dim (a view). Inputs, outputs and names as in g, in *out. MG_ERR_UNSUPPORTED naming
 * the first tensor that is not token-wise (attention's per-sequence operators). */
mg_status ir_token_form(const ir_graph *g, mg_ctx *ctx, int64_t T, ir_graph **out);
/* Sequence b of ragged program g as a static program: every batch dim of size 1, every
 * ragged dim of its length (at least 1), attributes that name a length (reshape's shape=, a
 * full sum's group) resolved; inputs, outputs and names as in g, into *out. MG_ERR_INVALID
 * when a length is 0 (no static program has an empty dim), MG_ERR_UNSUPPORTED for a
 * graph-defined kernel, MG_ERR_NOMEM. */
mg_status ir_ragged_instance(const ir_graph *g, mg_ctx *ctx, const int64_t *const *lens, int64_t b, ir_graph **out);

/* Re-checks every invariant above and re-infers every shape (MUGEN_CHECK). MG_OK or a
 * message naming the first broken one. */
mg_status ir_check(const ir_graph *g, mg_ctx *ctx);
/* Structural equality: same inputs (names, dtypes, shapes, order), same outputs (names and
 * order) computing the same op DAG; names of intermediates and node order are ignored. */
int ir_graph_equal(const ir_graph *a, const ir_graph *b);

/* Helpers. */
int64_t ir_numel(const ir_shape *s);
/* Writes "f16[2, 4096]" into buf; a ragged dim as its lengths' name when g is given
 * ("f16[32, len, 512]", ir_shape_gstr), else as "<=max" ("f16[32, <=128, 512]"). */
const char *ir_shape_str(mg_dtype t, const ir_shape *s, char *buf, size_t n);
const char *ir_shape_gstr(const ir_graph *g, mg_dtype t, const ir_shape *s, char *buf, size_t n);
/* A label for node i in messages: its name, or "<op> at line L:C" / "<op> #i". */
const char *ir_node_label(const ir_graph *g, int i, char *buf, size_t n);
/* Numpy-style broadcast of a and b (right-aligned, 1 stretches). 0 on success, -1 if not
 * broadcastable. */
int ir_broadcast(const ir_shape *a, const ir_shape *b, ir_shape *out);
/* Parses an exact decimal ([-]digits[.digits][e[+-]digits]) into num/den, den a power of ten
 * with trailing zeros cancelled (equal values give equal num/den); *val = strtod. 0, -1 if
 * malformed, -2 if out of range (ir.c). */
int ir_parse_decimal(const char *s, int64_t *num, int64_t *den, double *val);
/* Parses a dtype name; -1 if unknown. */
int ir_dtype_parse(const char *s, size_t n);

/* ---- front ends and renderers (parse.c, print.c, json.c, dot.c) ---- */
/* Parses .mu text. On error: MG_ERR_PARSE/SHAPE/LIMIT with "file:line:col: msg", the source
 * line and a caret in ctx; *out untouched. On success *out owns a new graph. */
mg_status ir_parse_text(mg_ctx *ctx, const char *text, size_t len, const char *file,
                        ir_graph **out);
/* ir_parse_text with the symbolic dims bound: the k-th `dim` declaration to val[k] for k <
 * n_val where val[k] > 0, the others to their maximum; probe: any positive value, in range or
 * not (sym.c's check of a program's rows). */
mg_status ir_parse_text_at(mg_ctx *ctx, const char *text, size_t len, const char *file,
                           const int64_t *val, int n_val, int probe, ir_graph **out);
mg_status ir_parse_json(mg_ctx *ctx, const char *text, size_t len, const char *file,
                        ir_graph **out);
/* Names for printing: a node's own name, its literal (anonymous constants, if
 * inline_consts), or a fresh "t<i>" that no node uses. Array of n_nodes strings allocated in
 * a. NULL if out of memory. */
const char **ir_node_names(const ir_graph *g, arena *a, int inline_consts);
/* Renderers append to sb (sb->oom set if out of memory). */
void ir_print_text(const ir_graph *g, strbuf *sb);
mg_status ir_print_json(const ir_graph *g, mg_ctx *ctx, strbuf *sb);
void ir_print_dot(const ir_graph *g, strbuf *sb);


/* ---- μGraphs (ugraph.c) ---- */
/* Returns a new empty block graph with the given schedule (NULL if out of memory). */
ir_graph *ir_block_new(const int grid[3], int threads, int64_t forloop);
/* Declares kernel input k of block graph b (in order): the outer tensor it iterates over. */
int ir_block_add_kin(ir_graph *b, mg_ctx *ctx, const char *name, mg_dtype t, const ir_shape *s);
/* Infers the shape of an ITER/ACCUM/SAVE node (g the block graph) or a KERNEL node (g the
 * kernel graph); called by ir_add_node. MG_OK or MG_ERR_SHAPE naming the operator. */
mg_status ir_infer_ugraph(const ir_graph *g, mg_ctx *ctx, ir_node *n);
/* Mirage Definition 2.1 on a complete block graph: (1) shapes (already inferred), (2) every
 * tensor fits in shared memory on dev (thread-graph tensors live in registers), (3) every
 * path from an iterator to a saver passes exactly one accumulator; plus maps in range and
 * distinct. MG_OK or MG_ERR_SHAPE with a message naming the operator. */
mg_status ir_block_check(const ir_graph *b, mg_ctx *ctx, const mg_device *dev);
/* Per node of block graph b: IR_LOOP (runs every iteration), IR_POST (after the loop, on
 * accumulated values, and on tiles that do not move with the loop: an iterator without fmap
 * has its value of every iteration there) or IR_INVARIANT (constants and what only they
 * feed); a value mixing LOOP and POST is 3, an accumulator of no loop value has bit 4. */
enum { IR_INVARIANT = 0, IR_LOOP = 1, IR_POST = 2 };
void ir_block_classes(const ir_graph *b, int *cls);
/* Thread graphs (Mirage §4.2): tgroup[i] = id of the maximal chain of elementwise operators
 * node i is fused into (its intermediates stay in registers), or -1. Returns the count. */
int ir_block_fuse(const ir_graph *b, int *tgroup);
/* Bytes of shared memory block graph b needs at its peak: the tiles (tensors not fused into
 * thread graphs) live at once, each from its operator to its last reader in node order; the
 * planner (src/opt) places them and has the last word. -1 if out of memory. */
int64_t ir_block_smem(const ir_graph *b);
/* Adds the kernel graph nodes of a complete block graph: one KERNEL node per save, reading
 * operands in[0..n_in); names[k] names output k. Takes ownership of body (freed on error).
 * Returns the index of the first node or -rc. */
int ir_add_kernel(ir_graph *g, mg_ctx *ctx, ir_graph *body, const int *in, int n_in,
                  const char *const *names, int line, int col);

/* A deep copy of block graph b (its kin, nodes, names and outputs), or NULL with ctx set. */
ir_graph *ir_block_clone(const ir_graph *b, mg_ctx *ctx);
/* Adds to g a copy of the graph-defined kernel whose output nodes in graph `from` start at
 * node i (its index-0 node), reading g's nodes in[0..from->nodes[i].n_in); names as
 * ir_add_kernel. The index of the first new node, or -rc. */
int ir_copy_kernel(ir_graph *g, mg_ctx *ctx, const ir_graph *from, int i, const int *in, const char *const *names);

/* "<op>: <what>; <operand> is <dtype[shape]>, ..." (what from fmt), MG_ERR_SHAPE; with no ctx
 * nothing is formatted (the search only counts the operators that do not fit). n need not be
 * in g yet: only its operands are looked up. The text stops growing at 1 KB (ir.c). */
mg_status ir_shape_err(mg_ctx *ctx, const ir_graph *g, const ir_node *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- ragged shapes (ragged.c) ---- */
/* After an operator's static shape rule: n->shape.rag from its operands' (all zero in a
 * program without lengths), refusing what a ragged tensor cannot do (reduce, slice, concat or
 * repeat its batch or a ragged dim, move the batch from dim 0, contract a ragged dim against
 * a static one, mix two lengths in one dim). MG_OK or MG_ERR_SHAPE with msg from err(). */
mg_status ir_infer_ragged(const ir_graph *g, mg_ctx *ctx, ir_node *n);
/* An input's declared shape: rag[0] set when a dim is ragged (dim 0 must then be the batch:
 * the lengths' count), codes checked. 0 or -rc. */
int ir_ragged_input(const ir_graph *g, mg_ctx *ctx, ir_shape *s);

/* ---- Lax (lax.c) ---- */
/* 1 if g is Lax (Mirage Definition 5.1), 0 with a reason in why, -1 if out of memory. */
int ir_is_lax(const ir_graph *g, char *why, size_t n);
/* Partition into maximal Lax parts cut at non-Lax ops (see lax.c for the contract). */
mg_status ir_partition(const ir_graph *g, mg_ctx *ctx, int *part, int *lax, int *n_parts);
/* Appends each part as a standalone .mu program preceded by "# part K of N: ..." */
mg_status ir_print_partition(const ir_graph *g, mg_ctx *ctx, strbuf *sb);

#endif
