/* compiled: the library API of include/mugen.h, "compile once, launch many" (docs/runtime.md).
 * mg_compile runs the front of the pipeline once (lower/, opt/, codegen/, then NVRTC or the C
 * compiler through the compile cache) and keeps what a launch needs: the launch list, where
 * each buffer lives (a caller's input or output, or an offset in the caller's workspace) and
 * the loaded code. mg_launch only fills kernel parameters and queues the kernels on the
 * caller's stream (CUDA, runtime/cuda.c's rt_ext) or calls the shared object's mg_entry in
 * the calling thread (C): no copies, no synchronisation, no allocation. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "driver.h"
#include "ir/device.h"
#include "runtime/runtime.h"
#include "verify/verify.h"

enum { IO_ALIGN = 16, C_STACK_BUFS = 512 };

/* Invariants: buf_in[b] >= 0 (an index into the caller's inputs) or buf_out[b] >= 0 (into
 * its outputs) or neither (then buffer b lives at buf_off[b] in the workspace, every offset
 * a multiple of MG_LAUNCH_ALIGN and buf_off[b] + buf_bytes[b] <= ws_bytes); never both; or
 * buf_alias[b] >= 0: a view, buf_voff[b] bytes into that buffer (cg_program.buf_alias).
 * Exactly one of ext (CUDA) and entry (C) is set. Nothing changes after mg_compile. */
struct mg_compiled {
    mg_target target;
    int n_in, n_out;
    mg_tensor_desc *in, *out; /* the program's, names owned */
    int n_bufs;
    int *buf_in, *buf_out, *buf_alias;
    size_t *buf_off, *buf_bytes, *buf_voff, ws_bytes;
    int sync_buf;             /* a persistent launch's counters (cg_program.sync_buf), or -1 */
    int n_tasks;              /* its tasks (cg_program.n_tasks): the watchdog's words follow */
    cg_launch *launches;
    int n_launches;
    int pdl, cached;
    int graphs;               /* mg_launch replays its launches as CUDA graphs (MUGEN_LAUNCH_GRAPH) */
    int64_t cap;              /* a program of one symbolic dim: the capacity compiled for (its
                               * launches' row_axis marked by cg_mark_rows; mg_launch_rows), else 0 */
    char device[64];
    rt_ext *ext;              /* CUDA */
    void *so;                 /* C: the dlopen handle and its entry */
    void (*entry)(void **bufs);
    void (*set_len)(long long); /* C, a reduced dim: the length a call runs (mg_set_len) */
};

/* The compilers' first use loads libraries without locks (nvrtc.c): compiles take turns. */
static pthread_mutex_t compile_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* Copies the program's input and output descriptions, names included. */
static mg_status copy_io(mg_compiled *c, const mg_program *prog, mg_ctx *ctx) {
    c->n_in = mg_program_n_inputs(prog), c->n_out = mg_program_n_outputs(prog);
    c->in = base_calloc((size_t)c->n_in + 1, sizeof *c->in);
    c->out = base_calloc((size_t)c->n_out + 1, sizeof *c->out);
    if (!c->in || !c->out) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0; i < c->n_in + c->n_out; i++) {
        mg_tensor_desc *d = i < c->n_in ? &c->in[i] : &c->out[i - c->n_in];
        if (i < c->n_in) mg_program_input(prog, i, d);
        else mg_program_output(prog, i - c->n_in, d);
        d->name = base_strdup(d->name ? d->name : "");
        if (!d->name) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    return MG_OK;
}

/* Where each of cg's buffers lives: the caller's input io.in[i] / output io.out[k] (ug's
 * order mapped to the program's), else the next aligned offset of the workspace. */
static mg_status place_buffers(mg_compiled *c, const cg_program *cg, const vf_io_map *io,
                               mg_ctx *ctx) {
    size_t n = (size_t)cg->n_bufs + 1;
    c->n_bufs = cg->n_bufs, c->sync_buf = cg->sync_buf, c->n_tasks = cg->n_tasks;
    c->buf_in = base_alloc(n * sizeof(int)), c->buf_out = base_alloc(n * sizeof(int));
    c->buf_off = base_calloc(n, sizeof(size_t)), c->buf_bytes = base_calloc(n, sizeof(size_t));
    c->buf_alias = base_alloc(n * sizeof(int)), c->buf_voff = base_calloc(n, sizeof(size_t));
    if (!c->buf_in || !c->buf_out || !c->buf_off || !c->buf_bytes || !c->buf_alias || !c->buf_voff)
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int b = 0; b < cg->n_bufs; b++)
        c->buf_in[b] = c->buf_out[b] = -1, c->buf_alias[b] = cg->buf_alias[b], c->buf_voff[b] = (size_t)cg->buf_off[b];
    for (int i = 0; i < cg->n_in; i++) c->buf_in[cg->in_buf[i]] = io->in[i];
    for (int k = 0; k < cg->n_out; k++) {
        int b = cg->out_buf[k];
        if (c->buf_in[b] >= 0 || c->buf_out[b] >= 0)
            return ctx_err(ctx, MG_ERR_UNSUPPORTED, "output '%s' is %s itself: mg_compile needs "
                           "each output in a buffer of its own", c->out[io->out[k]].name,
                           c->buf_in[b] >= 0 ? "an input" : "another output");
        c->buf_out[b] = io->out[k];
    }
    for (int b = 0; b < cg->n_bufs; b++) {
        c->buf_bytes[b] = (size_t)cg->buf_bytes[b];
        if (c->buf_in[b] >= 0 || c->buf_out[b] >= 0 || c->buf_alias[b] >= 0) continue;
        c->buf_off[b] = c->ws_bytes;
        c->ws_bytes = align_up(c->ws_bytes + c->buf_bytes[b], MG_LAUNCH_ALIGN);
    }
    c->n_launches = cg->n_launches;
    c->launches = base_alloc(((size_t)cg->n_launches + 1) * sizeof *c->launches);
    if (!c->launches) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    memcpy(c->launches, cg->launches, (size_t)cg->n_launches * sizeof *c->launches);
    return MG_OK;
}

/* The device to plan for: o->device's row, or the one the current CUDA context runs on. */
static mg_status target_device(const mg_compile_opts *o, mg_ctx *ctx, mg_device *dev) {
    *dev = *mg_device_default();
    if (o->target == MG_TARGET_C) return MG_OK;
    if (o->device) {
        const mg_device *d = mg_device_lookup(o->device, ctx);
        if (!d) return MG_ERR_INVALID;
        *dev = *d;
        return MG_OK;
    }
    rt_gpu_info in;
    mg_status rc = rt_ext_device(ctx, &in);
    if (!rc)
        mg_device_detect(in.name, in.cc_major, in.cc_minor, in.n_sm, in.smem_optin, in.mem_bytes, dev);
    return rc;
}

/* NVRTC (through the cache), then a handle that loads the cubin into each context it meets. */
static mg_status build_cuda(mg_compiled *c, const cg_program *cg, const mg_device *dev,
                            mg_ctx *ctx) {
    void *img = NULL;
    size_t n_img = 0;
    rt_kernel *k = base_calloc((size_t)cg->n_launches + 1, sizeof *k);
    if (!k) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int l = 0; l < cg->n_launches; l++) {
        const cg_launch *L = &cg->launches[l];
        snprintf(k[l].name, sizeof k[l].name, "%s", L->name);
        k[l].smem = (size_t)L->smem;
        k[l].cluster_blocks = L->cluster[0] * L->cluster[1] * L->cluster[2];
    }
    pthread_mutex_lock(&compile_mu);
    mg_status rc = rt_nvrtc_compile(ctx, cg->src, dev->arch, &img, &n_img, &c->cached, NULL);
    pthread_mutex_unlock(&compile_mu);
    if (!rc) rc = rt_ext_new(ctx, img, n_img, k, cg->n_launches, &c->ext);
    snprintf(c->device, sizeof c->device, "%s (%s)", dev->arch, dev->model ? dev->model : dev->name);
    base_free(img);
    base_free(k);
    return rc;
}

/* The C compiler (serial build, through the cache), loaded into this process. */
static mg_status build_c(mg_compiled *c, const cg_program *cg, mg_ctx *ctx) {
    char *so = NULL;
    pthread_mutex_lock(&compile_mu);
    mg_status rc = rt_c_build_serial(ctx, cg->src, &so, &c->cached, NULL);
    pthread_mutex_unlock(&compile_mu);
    void *p = NULL;
    if (!rc && !(c->so = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
        rc = ctx_err(ctx, MG_ERR_LAUNCH, "cannot load %s: %s", so, dlerror());
    else if (!rc && !(p = dlsym(c->so, "mg_entry")))
        rc = ctx_err(ctx, MG_ERR_LAUNCH, "no function mg_entry in %s", so);
    if (!rc) memcpy(&c->entry, &p, sizeof p); /* object -> function pointer */
    void *sl = !rc && cg->reduced ? dlsym(c->so, "mg_set_len") : NULL;
    if (sl) memcpy(&c->set_len, &sl, sizeof sl);
    snprintf(c->device, sizeof c->device, "C (host)");
    base_free(so);
    return rc;
}

/* A program of one symbolic dim compiled at capacity cap (g, its instance there): marks the
 * launches whose grids split the dim's rows (dr_mark_rows, as mugen run's run-time grids),
 * comparing g with the instance at another value of the range. */
static mg_status mark_rows(const mg_program *prog, const ir_graph *g, const vf_io_map *io, int64_t cap, cg_program *cg, mg_ctx *ctx) {
    const ir_sym *s = &prog->g->syms[0];
    int64_t other = cap > s->lo ? cap - 1 : cap + 1;
    if (other < s->lo || other > s->hi) return MG_OK; /* one value: nothing to cut */
    ir_graph *o = NULL;
    mg_status rc = mg_program_instance(prog, ctx, other, &o);
    if (!rc && o->n_nodes == g->n_nodes) dr_mark_rows(cg, g, o, io, cap);
    ir_graph_free(o);
    return rc;
}

mg_status mg_compile(mg_ctx *ctx, const mg_program *prog, const mg_program *ugraph,
                     const mg_compile_opts *o, mg_compiled **out) {
    if (!prog || !out) return ctx_err(ctx, MG_ERR_INVALID, "mg_compile: NULL argument");
    *out = NULL;
    ir_graph *tok = NULL; /* a ragged program compiles in token form for its bound lengths (docs/ragged.md) */
    mg_program tp = {0};
    const mg_program *given = prog;
    mg_status tr = mg_token_program(prog, ugraph, ctx, "compilation", &tok);
    if (tr) return tr;
    if (tok) tp.g = tok, prog = &tp;
    mg_compile_opts def = {0};
    if (!o) o = &def;
    if (o->target != MG_TARGET_CUDA && o->target != MG_TARGET_C)
        return ctx_err(ctx, MG_ERR_INVALID, "mg_compile: unknown target %d", (int)o->target);
    ir_graph *lowered = NULL;
    const ir_graph *ug = ugraph ? ugraph->g : prog->g;
    op_plan *plan = NULL;
    cg_program cg = {0};
    vf_io_map io;
    mg_device dev;
    mg_compiled *c = base_calloc(1, sizeof *c);
    if (!c) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    c->target = o->target, c->pdl = !o->opt.no_pdl, c->sync_buf = -1;
    const char *lg = getenv("MUGEN_LAUNCH_GRAPH");
    c->graphs = !(lg && !strcmp(lg, "0"));
    mg_status rc = target_device(o, ctx, &dev);
    if (!rc && !ugraph)
        rc = dr_lower(prog->g, ctx, &o->opt, o->target == MG_TARGET_C ? CG_C : CG_CUDA, &lowered, &ug);
    if (!rc) rc = vf_match_io(prog->g, ug, ctx, &io);
    dr_reduced red;
    if (!rc) rc = dr_reduced_of(given, ug, &red, ctx);
    if (!rc) rc = dr_generate(ug, ctx, &o->opt, o->target == MG_TARGET_C ? CG_C : CG_CUDA, &dev,
                              &plan, &cg, NULL, &red);
    if (!rc) rc = dr_plant(&cg, ctx); /* test hook (docs/env.md) */
    if (!rc && given->g->n_syms == 1 && !given->g->n_lens) {
        c->cap = mg_program_variant(given, 0, NULL);
        if (red.n) /* a reduced dim: every grid whole, the code masks past the length (docs/tuning.md) */
            for (int l = 0; l < cg.n_launches; l++) cg.launches[l].row_axis = -1;
        else rc = mark_rows(given, prog->g, &io, c->cap, &cg, ctx);
    }
    if (!rc) rc = copy_io(c, prog, ctx);
    if (!rc) rc = place_buffers(c, &cg, &io, ctx);
    if (!rc) rc = o->target == MG_TARGET_C ? build_c(c, &cg, ctx) : build_cuda(c, &cg, &dev, ctx);
    cg_program_free(&cg);
    op_plan_free(plan);
    ir_graph_free(lowered);
    ir_graph_free(tok);
    if (rc) mg_compiled_free(c);
    else *out = c;
    return rc;
}

void mg_compiled_free(mg_compiled *c) {
    if (!c) return;
    rt_ext_free(c->ext);
    if (c->so) dlclose(c->so);
    for (int i = 0; c->in && i < c->n_in; i++) base_free((void *)c->in[i].name);
    for (int i = 0; c->out && i < c->n_out; i++) base_free((void *)c->out[i].name);
    base_free(c->in), base_free(c->out);
    base_free(c->buf_in), base_free(c->buf_out), base_free(c->buf_off), base_free(c->buf_bytes);
    base_free(c->buf_alias), base_free(c->buf_voff);
    base_free(c->launches);
    base_free(c);
}

mg_status mg_compiled_get_info(const mg_compiled *c, mg_compiled_info *info) {
    if (!c || !info) return MG_ERR_INVALID;
    memset(info, 0, sizeof *info);
    info->target = c->target;
    info->n_inputs = c->n_in, info->n_outputs = c->n_out, info->n_launches = c->n_launches;
    info->workspace_bytes = c->ws_bytes, info->align = IO_ALIGN;
    info->cached = c->cached;
    snprintf(info->device, sizeof info->device, "%s", c->device);
    return MG_OK;
}

mg_status mg_compiled_input(const mg_compiled *c, int i, mg_tensor_desc *d) {
    if (!c || !d || i < 0 || i >= c->n_in) return MG_ERR_INVALID;
    *d = c->in[i];
    return MG_OK;
}

mg_status mg_compiled_output(const mg_compiled *c, int i, mg_tensor_desc *d) {
    if (!c || !d || i < 0 || i >= c->n_out) return MG_ERR_INVALID;
    *d = c->out[i];
    return MG_OK;
}

/* ---- launching ---- */

/* Refuses, naming the first problem, what mg_launch cannot run on. */
static mg_status check_launch(mg_ctx *ctx, const mg_compiled *c, int n_in, void *const *in,
                              int n_out, void *const *out, const void *ws, size_t ws_bytes) {
    if (!c) return ctx_err(ctx, MG_ERR_INVALID, "mg_launch: no compiled program");
    if (n_in != c->n_in || n_out != c->n_out)
        return ctx_err(ctx, MG_ERR_INVALID, "mg_launch: %d inputs and %d outputs given; the "
                       "program has %d and %d", n_in, n_out, c->n_in, c->n_out);
    if ((n_in && !in) || (n_out && !out))
        return ctx_err(ctx, MG_ERR_INVALID, "mg_launch: NULL %s array", n_in && !in ? "input" : "output");
    for (int i = 0; i < n_in + n_out; i++) {
        const void *p = i < n_in ? in[i] : out[i - n_in];
        const char *what = i < n_in ? "input" : "output";
        const mg_tensor_desc *d = i < n_in ? &c->in[i] : &c->out[i - n_in];
        if (!p) return ctx_err(ctx, MG_ERR_INVALID, "mg_launch: %s '%s' is NULL", what, d->name);
        if ((uintptr_t)p % IO_ALIGN)
            return ctx_err(ctx, MG_ERR_INVALID, "mg_launch: %s '%s' at %p is not aligned to %d "
                           "bytes", what, d->name, p, IO_ALIGN);
    }
    if (ws_bytes < c->ws_bytes)
        return ctx_err(ctx, MG_ERR_INVALID, "mg_launch: a workspace of %zu bytes is too small: "
                       "the program needs %zu", ws_bytes, c->ws_bytes);
    if (c->ws_bytes && !ws) return ctx_err(ctx, MG_ERR_INVALID, "mg_launch: NULL workspace");
    if (c->ws_bytes && (uintptr_t)ws % MG_LAUNCH_ALIGN)
        return ctx_err(ctx, MG_ERR_INVALID, "mg_launch: the workspace at %p is not aligned to "
                       "%d bytes", ws, MG_LAUNCH_ALIGN);
    return MG_OK;
}

/* The address of buffer b for this launch. */
static uintptr_t buf_addr(const mg_compiled *c, int b, void *const *in, void *const *out,
                          void *ws) {
    if (c->buf_alias[b] >= 0) return buf_addr(c, c->buf_alias[b], in, out, ws) + (uintptr_t)c->buf_voff[b];
    if (c->buf_in[b] >= 0) return (uintptr_t)in[c->buf_in[b]];
    if (c->buf_out[b] >= 0) return (uintptr_t)out[c->buf_out[b]];
    return (uintptr_t)ws + c->buf_off[b];
}

/* One mg_launch's kernels and buffers (queue_cuda's argument). */
typedef struct launch_args {
    const mg_compiled *c;
    mg_ctx *ctx;
    const rt_ext_mod *m;
    void *const *in, *const *out;
    void *ws;
    int64_t rows; /* mg_launch_rows: the dim's rows, c->cap or fewer (a reduced dim: its length) */
    long long len; /* the same, as a reduced dim's kernels take it (cg_launch.len_param) */
} launch_args;

/* Queues the zeroing of the counters (persistent launches), then every kernel, on stream. */
static mg_status queue_cuda(void *arg, void *stream) {
    const launch_args *a = arg;
    const mg_compiled *c = a->c;
    mg_status rc = MG_OK;
    if (c->sync_buf >= 0)
        rc = rt_ext_zero(a->ctx, buf_addr(c, c->sync_buf, a->in, a->out, a->ws), c->buf_bytes[c->sync_buf], stream);
    for (int l = 0; l < c->n_launches && !rc; l++) {
        const cg_launch *L = &c->launches[l];
        unsigned long long val[CG_MAX_ARGS];
        void *params[CG_MAX_ARGS + CG_MAX_TMAPS + 2]; /* NULL-terminated: the driver reads the
                                        * kernel's own count; the tests' fake driver stops at the NULL */
        dr_tmap maps[CG_MAX_TMAPS];
        for (int v = 0; v < L->n_args; v++) val[v] = buf_addr(c, L->args[v], a->in, a->out, a->ws);
        rc = dr_params(a->ctx, L, val, maps, params, &a->len);
        unsigned grid[3];
        cg_row_grid(L, a->rows, c->cap, grid); /* L's grid, cut to the rows' blocks */
        if (!rc) rc = rt_ext_launch(a->ctx, c->ext, a->m, l, grid, L->block, params,
                                     (c->pdl && L->pdl ? RT_PDL : 0) | (L->coresident ? RT_CORESIDENT : 0), L->cluster, stream);
    }
    return rc;
}

/* Queues the program on stream: as one CUDA graph for these buffers' addresses (captured the
 * first time, replayed after: one driver call instead of one a kernel, and no gaps between
 * the kernels), else kernel by kernel (rt_ext_graph_run says when). A persistent launch's
 * counters are zeroed by a memset node as well. */
static mg_status launch_cuda(mg_ctx *ctx, const mg_compiled *c, void *const *in,
                             void *const *out, void *ws, int64_t rows, void *stream) {
    launch_args a = {c, ctx, NULL, in, out, ws, rows, (long long)rows};
    mg_status rc = rt_ext_enter(c->ext, ctx, &a.m);
    if (rc) return rc;
    if (c->graphs && c->n_in + c->n_out < 62) {
        uintptr_t key[64];
        int n = 0, done = 0;
        for (int i = 0; i < c->n_in; i++) key[n++] = (uintptr_t)in[i];
        for (int i = 0; i < c->n_out; i++) key[n++] = (uintptr_t)out[i];
        key[n++] = (uintptr_t)ws;
        key[n++] = (uintptr_t)rows; /* the grids differ with the rows */
        rc = rt_ext_graph_run(ctx, c->ext, a.m, key, n, stream, queue_cuda, &a, &done);
        if (rc || done) return rc;
    }
    return queue_cuda(&a, stream);
}

/* Runs mg_entry in this thread over the buffers' addresses (on the stack up to
 * C_STACK_BUFS buffers, the rare larger plan allocates them). */
static mg_status launch_c(mg_ctx *ctx, const mg_compiled *c, void *const *in, void *const *out,
                          void *ws, long long len) {
    void *stack[C_STACK_BUFS], **bufs = stack;
    if (c->n_bufs > C_STACK_BUFS && !(bufs = base_alloc((size_t)c->n_bufs * sizeof *bufs)))
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int b = 0; b < c->n_bufs; b++) bufs[b] = (void *)buf_addr(c, b, in, out, ws);
    if (c->set_len) c->set_len(len); /* a reduced dim's length (codegen/mask.c) */
    c->entry(bufs);
    if (bufs != stack) base_free(bufs);
    return MG_OK;
}

mg_status mg_launch(mg_ctx *ctx, mg_compiled *c, int n_inputs, void *const *inputs,
                    int n_outputs, void *const *outputs, void *workspace, size_t workspace_bytes,
                    void *stream) {
    return mg_launch_rows(ctx, c, c ? c->cap : 0, n_inputs, inputs, n_outputs, outputs, workspace, workspace_bytes, stream);
}

mg_status mg_launch_rows(mg_ctx *ctx, mg_compiled *c, int64_t rows, int n_inputs, void *const *inputs,
                         int n_outputs, void *const *outputs, void *workspace, size_t workspace_bytes,
                         void *stream) {
    mg_status rc = check_launch(ctx, c, n_inputs, inputs, n_outputs, outputs, workspace,
                                workspace_bytes);
    if (rc) return rc;
    if (rows != c->cap && (rows < 1 || rows > c->cap))
        return ctx_err(ctx, MG_ERR_INVALID, "mg_launch_rows: %lld rows; the handle holds 1 to %lld (its capacity)%s",
                       (long long)rows, (long long)c->cap, c->cap ? "" : ": it is no program of a symbolic dim");
    if (c->target == MG_TARGET_C) return launch_c(ctx, c, inputs, outputs, workspace, (long long)rows);
    return launch_cuda(ctx, c, inputs, outputs, workspace, rows, stream);
}

mg_status mg_compiled_check(mg_ctx *ctx, const mg_compiled *c, void *workspace) {
    if (!c) return ctx_err(ctx, MG_ERR_INVALID, "mg_compiled_check: no compiled program");
    if (c->target != MG_TARGET_CUDA || c->sync_buf < 0) return MG_OK;
    const rt_ext_mod *m = NULL;
    mg_status rc = rt_ext_enter(c->ext, ctx, &m);
    uintptr_t at = (uintptr_t)workspace + c->buf_off[c->sync_buf] + dr_stall_at(c->n_tasks);
    unsigned w[3] = {0, 0, 0};
    if (!rc) rc = rt_ext_read(ctx, w, (rt_dptr)at, sizeof w);
    if (rc || !w[2]) return rc;
    rt_ext_zero(ctx, (rt_dptr)at, sizeof w, NULL);
    return dr_stall_error(ctx, w, NULL, NULL);
}
