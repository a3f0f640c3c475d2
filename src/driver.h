/* driver: the pipeline steps that both mg_run (driver.c) and the library API (compiled.c)
 * take, from a kernel graph to generated source. */
#ifndef MG_DRIVER_H
#define MG_DRIVER_H

#include "codegen/codegen.h"
#include "verify/verify.h"

/* g lowered to μGraphs (lower/) for target t into *owned (the caller frees it), *use
 * pointing at what runs: g itself when it already holds kernels or o->plain asks for the
 * per-operator path. The lowering's sketch (lw_tilings) is o->schedule's `sketch=N`, else
 * (CUDA, not o->untuned) the tuning cache's for g on the default device, else the default;
 * MG_ERR_INVALID for a sketch= that names none. */
mg_status dr_lower(const ir_graph *g, mg_ctx *ctx, const mg_run_opts *o, cg_target t, ir_graph **owned,
                   const ir_graph **use);
/* o's choices at the point of g's schedule space (opt/space.c) that spec names
 * (op_space_parse), f[] the kernels' forced choices; MG_ERR_INVALID when spec names no point
 * or a constraint of dev rejects it (naming the constraints). */
mg_status dr_schedule_point(const ir_graph *g, mg_ctx *ctx, const mg_device *dev, const char *spec, op_opts *o,
                            op_force f[OP_SPACE_KERNELS]);
enum { DR_POINT_MAX = 1024 };
/* A schedule's sketch: N when spec starts with "sketch=N" (then *rest is the text after that
 * item), 0 when it names none (*rest = spec), -1 when N is not one of lw_tilings. */
int dr_sketch(const char *spec, const char **rest); /* a schedule point's text (op_space_format), NUL included */
/* Plans g for device dev with o's optimizer switches (opt/) and emits it for target t
 * (codegen/): *plan (op_plan_free) and *cg (cg_program_free) belong to the caller. CUDA: at
 * o->schedule's point of the schedule space, else at the tuning cache's point for g on dev
 * (docs/tuning.md; not with o->untuned, and not where the space rejects it), else by the
 * rules; tuned (DR_POINT_MAX bytes, may be NULL) gets the cache's point used, "" when none. */
/* A variant of a reduced dim (docs/tuning.md "Reduced dims"): per input of the graph a run
 * plans, in its order, the dims (bit d: dim d) that follow the dim; n = 0: no reduced dim. */
typedef struct dr_reduced {
    unsigned char in[VF_MAX_IO];
    int n;
} dr_reduced;
/* *r for graph ug (its inputs named as prog's) when prog's one symbolic dim is reduced, else
 * r->n = 0. */
struct mg_program;
mg_status dr_reduced_of(const struct mg_program *prog, const ir_graph *ug, dr_reduced *r, mg_ctx *ctx);
/* red: a variant of a reduced dim (NULL or n = 0: none); its code masks past the call's length */
mg_status dr_generate(const ir_graph *g, mg_ctx *ctx, const mg_run_opts *o, cg_target t,
                      const mg_device *dev, op_plan **plan, cg_program *cg, char *tuned, const dr_reduced *red);
/* The tuning key of g, the graph a run plans: FNV-1a of its printed form (0: out of memory). */
uint64_t dr_graph_key(const ir_graph *g);
/* The tuning cache's entry for key on the device named dev (docs/tuning.md): 1 with its point
 * in spec (DR_POINT_MAX bytes) and the time it was measured at in *us (0: pinned, not timed),
 * 0 when there is none (no cache folder, no entry, or a torn one). */
int dr_tuned_get(const char *dev, uint64_t key, char *spec, double *us);
/* Stores point spec (timed at us, 0 when pinned; on device model) as key's entry for dev. */
void dr_tuned_put(const char *dev, uint64_t key, const char *spec, double us, const char *model);
/* A persistent launch's watchdog record (cuda/lib/task.cuh: the task that gave up + 1, what it
 * waited for + 1 or 2^31 + a launch, the abort word): its byte offset in the sync buffer of a
 * launch of n_tasks tasks, and the MG_ERR_LAUNCH it makes, naming tasks by kernel and block
 * when cg's task map and the kernel graph ug are given (else by number). */
size_t dr_stall_at(int n_tasks);
mg_status dr_stall_error(mg_ctx *ctx, const unsigned w[3], const cg_program *cg, const ir_graph *ug);
/* Run-time grids (docs/tuning.md): marks cg's launches whose grid splits the rows of a
 * symbolic dim (cg_mark_rows), from g (the program at capacity cap) against other (the same
 * text at another value of the dim: the tensors whose dim 0 differs follow it); io maps cg's
 * inputs to g's. */
void dr_mark_rows(cg_program *cg, const ir_graph *g, const ir_graph *other, const vf_io_map *io, int64_t cap);
/* Test hook: MUGEN_PLANT (docs/env.md) breaks cg's source or first launch on purpose. */
mg_status dr_plant(cg_program *cg, mg_ctx *ctx);
/* One launch's kernel parameters: params[a] = &val[a] for its buffer arguments (val their
 * addresses), then its tensor maps (cg_launch.tmaps) encoded for those addresses into maps
 * and passed by value, then len (a reduced dim's length: cg_launch.len_param); params
 * NULL-terminated. MG_ERR_LAUNCH when a map cannot be made
 * (rt_tmap). Thread-safe; no allocation. */
typedef struct dr_tmap {
    _Alignas(64) unsigned char b[128];
} dr_tmap;
mg_status dr_params(mg_ctx *ctx, const cg_launch *L, unsigned long long *val, dr_tmap *maps,
                    void **params, const long long *len);

/* Element t (row-major) of a tensor of shape small, as an index into one of shape big that
 * holds it as its leading box (same rank, each dim at most big's): a variant's buffer at its
 * capacity holding a call's tensor. */
int64_t dr_sub_index(const ir_shape *big, const ir_shape *small, int64_t t);
/* Whether element t of a tensor of shape big lies in its leading box of shape small. */
int dr_sub_holds(const ir_shape *big, const ir_shape *small, int64_t t);

/* Is one of a (the reference) and b an infinity and the other finite, of its sign and within
 * dtype t's tolerance (1e-2 f16, 2e-2 bf16, 1e-4 f32) of t's largest finite value? Then they
 * are one value on either side of t's overflow (a sum of 65,400 computed 0.2% high rounds to
 * f16's infinity), and mg_run's comparison counts them equal. */
int dr_near_overflow(double a, double b, mg_dtype t);

#endif
