/* runtime/cuda: the GPU backend over the CUDA driver API, loaded with dlopen (the few types
 * and entry points are declared here, so the library builds and runs without CUDA). One
 * device, its primary context, one stream and two timing events. A sticky fault loses the
 * context for good (see lose()); the handle then refuses work, and freeing what it made only
 * frees host memory. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../ir/device.h"
#include "rt_internal.h"

typedef int CUresult; /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUgraph;
typedef void *CUgraphExec;
typedef uint64_t CUdeviceptr;

enum { /* values from cuda.h (CUDA 13.0) */
    ATTR_MULTIPROCESSOR_COUNT = 16,
    ATTR_CC_MAJOR = 75,
    ATTR_CC_MINOR = 76,
    ATTR_SMEM_OPTIN = 97,
    FUNC_ATTR_MAX_DYNAMIC_SMEM = 8,
    FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
    CAPTURE_MODE_THREAD_LOCAL = 1,
};

/* cuLaunchKernelEx's configuration (cuda.h, CUDA 12+; the layout of CUDA 13.0) */
typedef struct {
    int id;
    char pad[4];
    union {
        char pad[64];
        int value;
        unsigned dim[3]; /* clusterDim */
    } u;
} CUlaunchAttribute_;
typedef struct {
    unsigned gx, gy, gz, bx, by, bz, smem;
    CUstream stream;
    CUlaunchAttribute_ *attrs;
    unsigned n_attrs;
} CUlaunchConfig_;
enum { LAUNCH_ATTR_CLUSTER_DIMENSION = 4, LAUNCH_ATTR_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };

typedef struct drv_api {
    CUresult (*init)(unsigned flags);
    CUresult (*device_count)(int *n);
    CUresult (*device_get)(CUdevice *dev, int ordinal);
    CUresult (*device_name)(char *name, int len, CUdevice dev);
    CUresult (*device_attribute)(int *v, int attr, CUdevice dev);
    CUresult (*device_total_mem)(size_t *bytes, CUdevice dev);
    CUresult (*primary_retain)(CUcontext *c, CUdevice dev);
    CUresult (*primary_release)(CUdevice dev);
    CUresult (*ctx_set_current)(CUcontext c);
    CUresult (*ctx_get_current)(CUcontext *c);
    CUresult (*ctx_get_device)(CUdevice *dev);
    CUresult (*ctx_push)(CUcontext c);
    CUresult (*ctx_pop)(CUcontext *c);
    CUresult (*stream_create)(CUstream *s, unsigned flags);
    CUresult (*stream_destroy)(CUstream s);
    CUresult (*stream_sync)(CUstream s);
    CUresult (*event_create)(CUevent *e, unsigned flags);
    CUresult (*event_destroy)(CUevent e);
    CUresult (*event_record)(CUevent e, CUstream s);
    CUresult (*event_sync)(CUevent e);
    CUresult (*event_elapsed)(float *ms, CUevent start, CUevent end);
    CUresult (*module_load)(CUmodule *m, const void *image);
    CUresult (*module_unload)(CUmodule m);
    CUresult (*module_function)(CUfunction *f, CUmodule m, const char *name);
    CUresult (*func_set_attribute)(CUfunction f, int attr, int value);
    CUresult (*launch)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                       void **extra);
    CUresult (*mem_alloc)(CUdeviceptr *p, size_t bytes);
    CUresult (*mem_free)(CUdeviceptr p);
    CUresult (*htod)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*dtoh)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*memset_d8)(CUdeviceptr dst, unsigned char byte, size_t n);
    CUresult (*memset_d8_async)(CUdeviceptr dst, unsigned char byte, size_t n, CUstream s);
    CUresult (*capture_begin)(CUstream s, int mode);
    CUresult (*capture_end)(CUstream s, CUgraph *graph);
    CUresult (*graph_instantiate)(CUgraphExec *exec, CUgraph graph, unsigned long long flags);
    CUresult (*graph_launch)(CUgraphExec exec, CUstream s);
    CUresult (*graph_exec_destroy)(CUgraphExec exec);
    CUresult (*graph_destroy)(CUgraph graph);
    CUresult (*error_name)(CUresult r, const char **s);
    CUresult (*error_string)(CUresult r, const char **s);
    /* optional (NULL when the driver lacks it): launches with attributes */
    CUresult (*launch_ex)(const CUlaunchConfig_ *cfg, CUfunction f, void **params, void **extra);
    /* optional: blocks a multiprocessor holds (the persistent launch's co-residency check) */
    CUresult (*occupancy)(int *n, CUfunction f, int block, size_t smem);
    /* optional: whether a stream is being captured (mg_launch's graphs need it) */
    CUresult (*stream_is_capturing)(CUstream s, int *status);
    /* optional: TMA tensor maps (cuTensorMapEncodeTiled, CUDA 12+) */
    CUresult (*tmap_encode)(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
                            const uint64_t *strides, const unsigned *box, const unsigned *estrides,
                            int interleave, int swizzle, int l2promo, int oobfill);
} drv_api;

#define SYM(name, field) {name, NULL, offsetof(drv_api, field)}
static const rt_sym drv_syms[] = {
    SYM("cuInit", init),
    SYM("cuDeviceGetCount", device_count),
    SYM("cuDeviceGet", device_get),
    SYM("cuDeviceGetName", device_name),
    SYM("cuDeviceGetAttribute", device_attribute),
    SYM("cuDeviceTotalMem_v2", device_total_mem),
    SYM("cuDevicePrimaryCtxRetain", primary_retain),
    SYM("cuDevicePrimaryCtxRelease_v2", primary_release),
    SYM("cuCtxSetCurrent", ctx_set_current),
    SYM("cuCtxGetCurrent", ctx_get_current),
    SYM("cuCtxGetDevice", ctx_get_device),
    SYM("cuCtxPushCurrent_v2", ctx_push),
    SYM("cuCtxPopCurrent_v2", ctx_pop),
    SYM("cuStreamCreate", stream_create),
    SYM("cuStreamDestroy_v2", stream_destroy),
    SYM("cuStreamSynchronize", stream_sync),
    SYM("cuEventCreate", event_create),
    SYM("cuEventDestroy_v2", event_destroy),
    SYM("cuEventRecord", event_record),
    SYM("cuEventSynchronize", event_sync),
    {"cuEventElapsedTime_v2", "cuEventElapsedTime", offsetof(drv_api, event_elapsed)},
    SYM("cuModuleLoadData", module_load),
    SYM("cuModuleUnload", module_unload),
    SYM("cuModuleGetFunction", module_function),
    SYM("cuFuncSetAttribute", func_set_attribute),
    SYM("cuLaunchKernel", launch),
    SYM("cuMemAlloc_v2", mem_alloc),
    SYM("cuMemFree_v2", mem_free),
    SYM("cuMemcpyHtoD_v2", htod),
    SYM("cuMemcpyDtoH_v2", dtoh),
    SYM("cuMemsetD8_v2", memset_d8),
    SYM("cuMemsetD8Async", memset_d8_async),
    SYM("cuStreamBeginCapture_v2", capture_begin),
    SYM("cuStreamEndCapture", capture_end),
    SYM("cuGraphInstantiateWithFlags", graph_instantiate),
    SYM("cuGraphLaunch", graph_launch),
    SYM("cuGraphExecDestroy", graph_exec_destroy),
    SYM("cuGraphDestroy", graph_destroy),
    SYM("cuGetErrorName", error_name),
    SYM("cuGetErrorString", error_string),
};
#undef SYM

static drv_api drv;
static void *drv_lib; /* the loaded libcuda; kept for the life of the process */

/* Invariants: `stream` and `ev` belong to the context `cu`; `live` holds exactly the device
 * buffers rt_alloc made and not yet freed. Once `broken` is set (a fault lost the context)
 * every call fails and nothing more is handed to the driver. */
struct rt_gpu {
    CUdevice dev;
    CUcontext cu;
    int retained; /* we hold one retain of the primary context */
    int broken;
    CUstream stream;
    CUevent ev[2];
    rt_gpu_info info;
    rt_dptr *live;
    size_t n_live, cap_live;
};

typedef struct kernel_fn {
    char *name;
    CUfunction f;
    size_t smem_set; /* dynamic shared memory limit raised to, 0 if never */
    int nonportable; /* clusters of more than 8 blocks allowed */
} kernel_fn;

struct rt_module {
    CUmodule mod;
    kernel_fn *fn; /* functions looked up so far */
    size_t n_fn, cap_fn;
};

struct rt_graph {
    CUgraph graph;
    CUgraphExec exec;
};

/* Errors that leave the context unusable (cuda.h). */
static int is_sticky(CUresult r) {
    switch (r) {
    case 214: /* ECC_UNCORRECTABLE */
    case 700: /* ILLEGAL_ADDRESS */
    case 702: /* LAUNCH_TIMEOUT */
    case 710: /* ASSERT */
    case 714: /* HARDWARE_STACK_ERROR */
    case 715: /* ILLEGAL_INSTRUCTION */
    case 716: /* MISALIGNED_ADDRESS */
    case 717: /* INVALID_ADDRESS_SPACE */
    case 718: /* INVALID_PC */
    case 719: /* LAUNCH_FAILED */
        return 1;
    default:
        return 0;
    }
}

/* "CUDA_ERROR_X: description" for r into buf. */
static const char *describe(CUresult r, char *buf, size_t n) {
    const char *name = NULL, *str = NULL;
    if (drv.error_name(r, &name) != 0 || !name) name = NULL;
    if (drv.error_string(r, &str) != 0 || !str) str = "unknown error";
    if (name) snprintf(buf, n, "%s: %s", name, str);
    else snprintf(buf, n, "CUDA error %d: %s", (int)r, str);
    return buf;
}

/* Makes the stream and the two timing events in the current context. */
static CUresult make_stream_events(rt_gpu *g) {
    g->stream = g->ev[0] = g->ev[1] = NULL;
    CUresult r = drv.stream_create(&g->stream, 0); /* blocking: ordered with cuMemcpy* */
    if (!r) r = drv.event_create(&g->ev[0], 0);
    if (!r) r = drv.event_create(&g->ev[1], 0);
    if (r) {
        if (g->ev[0]) drv.event_destroy(g->ev[0]);
        if (g->stream) drv.stream_destroy(g->stream);
        g->stream = g->ev[0] = g->ev[1] = NULL;
    }
    return r;
}

/* After a sticky fault the context is lost for good: CUDA cannot recover it inside this
 * process (a primary-context reset returns the same error, seen on H200, 2026-11-22). The
 * handle is marked broken; callers that must go on run GPU work in a child process
 * (driver.c). Its modules, buffers and graphs are gone with it. */
static void lose(rt_gpu *g) {
    g->n_live = 0;
    g->broken = 1;
}

/* Formats "<what>: CUDA_ERROR_X: description" into ctx as MG_ERR_LAUNCH; a sticky error
 * also loses the context (and says so). */
static mg_status fail(rt_gpu *g, mg_ctx *ctx, CUresult r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static mg_status fail(rt_gpu *g, mg_ctx *ctx, CUresult r, const char *fmt, ...) {
    char what[256], err[256], note[400] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    describe(r, err, sizeof err);
    if (g && is_sticky(r)) {
        lose(g);
        snprintf(note, sizeof note, "; the GPU context is lost (CUDA cannot recover from this "
                 "fault in the same process)");
    }
    return ctx_err(ctx, MG_ERR_LAUNCH, "%s: %s%s", what, err, note);
}

/* Common entry of every call on g: refuses a broken gpu, makes its context current. */
static mg_status enter(rt_gpu *g, mg_ctx *ctx) {
    if (!g) return ctx_err(ctx, MG_ERR_INVALID, "no GPU handle");
    if (g->broken) return ctx_err(ctx, MG_ERR_LAUNCH, "the GPU context was lost to an earlier fault");
    CUresult r = drv.ctx_set_current(g->cu);
    return r ? fail(g, ctx, r, "cuCtxSetCurrent") : MG_OK;
}

/* Loads libcuda once; MG_ERR_NO_DEVICE listing the attempts. */
static mg_status drv_load(mg_ctx *ctx) {
    if (drv_lib) return MG_OK;
    static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
    strbuf why = {0};
    drv_api a;
    mg_status rc = MG_OK;
    void *h = rt_dlopen_first("MUGEN_LIBCUDA", names, &why);
    if (!h) {
        rc = ctx_err(ctx, MG_ERR_NO_DEVICE, "CUDA driver not found (set MUGEN_LIBCUDA): %s",
                     why.s ? why.s : "?");
    } else if (rt_resolve(h, drv_syms, sizeof drv_syms / sizeof drv_syms[0], &a, &why)) {
        rc = ctx_err(ctx, MG_ERR_NO_DEVICE, "CUDA driver too old: %s", why.s ? why.s : "?");
        dlclose(h);
    } else {
        void *ex = dlsym(h, "cuLaunchKernelEx"); /* optional: plain launches without it */
        memcpy(&a.launch_ex, &ex, sizeof ex);
        void *oc = dlsym(h, "cuOccupancyMaxActiveBlocksPerMultiprocessor"); /* optional */
        memcpy(&a.occupancy, &oc, sizeof oc);
        void *ic = dlsym(h, "cuStreamIsCapturing"); /* optional: mg_launch launches directly without it */
        memcpy(&a.stream_is_capturing, &ic, sizeof ic);
        void *tm = dlsym(h, "cuTensorMapEncodeTiled"); /* optional: plans without TMA run without it */
        memcpy(&a.tmap_encode, &tm, sizeof tm);
        drv = a, drv_lib = h;
    }
    sb_free(&why);
    return rc;
}

/* Fills g->info from device attributes. */
static CUresult query_info(rt_gpu *g, const char **what) {
    rt_gpu_info *in = &g->info;
    int v[4] = {0};
    static const int attrs[4] = {ATTR_MULTIPROCESSOR_COUNT, ATTR_CC_MAJOR, ATTR_CC_MINOR,
                                 ATTR_SMEM_OPTIN};
    size_t mem = 0;
    CUresult r;
    *what = "cuDeviceGetName";
    if ((r = drv.device_name(in->name, (int)sizeof in->name, g->dev))) return r;
    in->name[sizeof in->name - 1] = 0;
    *what = "cuDeviceGetAttribute";
    for (int i = 0; i < 4; i++)
        if ((r = drv.device_attribute(&v[i], attrs[i], g->dev))) return r;
    *what = "cuDeviceTotalMem";
    if ((r = drv.device_total_mem(&mem, g->dev))) return r;
    in->n_sm = v[0], in->cc_major = v[1], in->cc_minor = v[2], in->smem_optin = v[3];
    in->mem_bytes = (int64_t)mem;
    mg_device_arch(in->cc_major, in->cc_minor, in->arch, (int)sizeof in->arch);
    return 0;
}

/* Device 0 through to its primary context, stream and events; g is zeroed on entry. */
static mg_status open_device(rt_gpu *g, mg_ctx *ctx) {
    const char *what = "cuInit";
    char err[256];
    int n = 0;
    CUresult r = drv.init(0);
    if (!r && (what = "cuDeviceGetCount", r = drv.device_count(&n)) == 0 && n == 0)
        return ctx_err(ctx, MG_ERR_NO_DEVICE, "no CUDA device");
    if (!r) what = "cuDeviceGet", r = drv.device_get(&g->dev, 0);
    if (!r) r = query_info(g, &what);
    if (!r && (what = "cuDevicePrimaryCtxRetain", r = drv.primary_retain(&g->cu, g->dev)) == 0)
        g->retained = 1;
    if (!r) what = "cuCtxSetCurrent", r = drv.ctx_set_current(g->cu);
    if (!r) what = "cuStreamCreate/cuEventCreate", r = make_stream_events(g);
    if (r) return ctx_err(ctx, MG_ERR_NO_DEVICE, "%s: %s", what, describe(r, err, sizeof err));
    return MG_OK;
}

mg_status rt_gpu_open(mg_ctx *ctx, rt_gpu **out) {
    *out = NULL;
    mg_status rc = drv_load(ctx);
    if (rc) return rc;
    rt_gpu *g = base_calloc(1, sizeof *g);
    if (!g) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory opening the GPU");
    if ((rc = open_device(g, ctx))) {
        rt_gpu_free(g);
        return rc;
    }
    *out = g;
    return MG_OK;
}

void rt_gpu_free(rt_gpu *g) {
    if (!g) return;
    if (!g->broken && g->cu && drv.ctx_set_current(g->cu) == 0) {
        for (size_t i = 0; i < g->n_live; i++) drv.mem_free(g->live[i]);
        if (g->ev[1]) drv.event_destroy(g->ev[1]);
        if (g->ev[0]) drv.event_destroy(g->ev[0]);
        if (g->stream) drv.stream_destroy(g->stream);
    }
    if (g->retained) drv.primary_release(g->dev);
    base_free(g->live);
    base_free(g);
}

const rt_gpu_info *rt_gpu_get_info(const rt_gpu *g) { return g ? &g->info : NULL; }

mg_status rt_module_load(rt_gpu *g, mg_ctx *ctx, const void *image, size_t size, rt_module **out) {
    *out = NULL;
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    if (!image || size == 0) return ctx_err(ctx, MG_ERR_INVALID, "rt_module_load: empty image");
    rt_module *m = base_calloc(1, sizeof *m);
    if (!m) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory loading a module");
    CUresult r = drv.module_load(&m->mod, image);
    if (r) {
        base_free(m);
        return fail(g, ctx, r, "cuModuleLoadData");
    }
    *out = m;
    return MG_OK;
}

void rt_module_free(rt_gpu *g, rt_module *m) {
    if (!m) return;
    if (g && !g->broken && drv.ctx_set_current(g->cu) == 0) drv.module_unload(m->mod);
    for (size_t i = 0; i < m->n_fn; i++) base_free(m->fn[i].name);
    base_free(m->fn);
    base_free(m);
}

/* Finds (or looks up and remembers) kernel `name` of m. */
static mg_status get_function(rt_gpu *g, mg_ctx *ctx, rt_module *m, const char *name,
                              kernel_fn **out) {
    for (size_t i = 0; i < m->n_fn; i++)
        if (strcmp(m->fn[i].name, name) == 0) return *out = &m->fn[i], MG_OK;
    CUfunction f = NULL;
    CUresult r = drv.module_function(&f, m->mod, name);
    if (r) return fail(g, ctx, r, "cuModuleGetFunction(%s)", name);
    if (m->n_fn == m->cap_fn) {
        size_t cap = m->cap_fn ? 2 * m->cap_fn : 4;
        kernel_fn *fn = base_realloc(m->fn, cap * sizeof *fn);
        if (!fn) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        m->fn = fn, m->cap_fn = cap;
    }
    kernel_fn *k = &m->fn[m->n_fn];
    if (!(k->name = base_strdup(name))) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    k->f = f, k->smem_set = 0, k->nonportable = 0;
    m->n_fn++;
    return *out = k, MG_OK;
}

/* Queues f on stream s: a programmatic dependent (pdl) or in a cluster through
 * cuLaunchKernelEx when the driver has it, else a plain launch (the caller refused clusters
 * without it). g (may be NULL: the caller's context) is lost on a sticky error. */
static mg_status launch_fn(rt_gpu *g, mg_ctx *ctx, CUfunction f, const char *name,
                           const unsigned grid[3], unsigned block, size_t smem, void **params,
                           int flags, const unsigned cluster[3], CUstream s) {
    CUresult r;
    int pdl = flags & RT_PDL;
    unsigned fit[3] = {grid[0], grid[1], grid[2]};
    if (flags & RT_CORESIDENT) { /* as many blocks as are resident at once, at most grid[0] */
        int per_sm = 0, n_sm = 0;
        CUdevice dev;
        if (!drv.occupancy) return ctx_err(ctx, MG_ERR_LAUNCH, "%s: needs all its blocks resident at once, which this driver "
                                           "cannot check (no cuOccupancyMaxActiveBlocksPerMultiprocessor)", name);
        if ((r = drv.occupancy(&per_sm, f, (int)block, smem)) || (r = drv.ctx_get_device(&dev)) ||
            (r = drv.device_attribute(&n_sm, ATTR_MULTIPROCESSOR_COUNT, dev)))
            return fail(g, ctx, r, "occupancy of %s", name);
        if (per_sm < 1 || grid[1] * grid[2] != 1)
            return ctx_err(ctx, MG_ERR_LAUNCH, "%s: a persistent launch needs its blocks resident at once; the device holds "
                           "%d of them (%u threads and %zu bytes of shared memory a block): not launched, it could hang",
                           name, per_sm * n_sm, block, smem);
        if ((long long)fit[0] > (long long)per_sm * n_sm) fit[0] = (unsigned)(per_sm * n_sm);
        grid = fit;
    }
    if ((pdl || cluster) && drv.launch_ex) {
        CUlaunchAttribute_ at[2];
        unsigned n_at = 0;
        memset(at, 0, sizeof at);
        if (pdl) at[n_at].id = LAUNCH_ATTR_PROGRAMMATIC_STREAM_SERIALIZATION, at[n_at++].u.value = 1;
        if (cluster) {
            at[n_at].id = LAUNCH_ATTR_CLUSTER_DIMENSION;
            memcpy(at[n_at++].u.dim, cluster, 3 * sizeof(unsigned));
        }
        CUlaunchConfig_ cfg = {grid[0], grid[1], grid[2], block, 1, 1, (unsigned)smem, s, at, n_at};
        r = drv.launch_ex(&cfg, f, params, NULL);
        return r ? fail(g, ctx, r, "cuLaunchKernelEx(%s)", name) : MG_OK;
    }
    r = drv.launch(f, grid[0], grid[1], grid[2], block, 1, 1, (unsigned)smem, s, params, NULL);
    return r ? fail(g, ctx, r, "cuLaunchKernel(%s)", name) : MG_OK;
}

mg_status rt_launch(rt_gpu *g, mg_ctx *ctx, rt_module *m, const char *name,
                    const unsigned grid[3], unsigned block, size_t smem, void **params, int flags,
                    const unsigned cluster[3]) {
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    if (!m || !name || !grid)
        return ctx_err(ctx, MG_ERR_INVALID, "rt_launch: no module, kernel name or grid");
    if (smem > (size_t)g->info.smem_optin)
        return ctx_err(ctx, MG_ERR_LAUNCH, "%s: %zu bytes of dynamic shared memory exceed the "
                       "device's opt-in limit of %lld bytes", name, smem,
                       (long long)g->info.smem_optin);
    kernel_fn *k = NULL;
    if ((rc = get_function(g, ctx, m, name, &k))) return rc;
    CUresult r;
    /* any dynamic size is declared: the 48 KB default counts the kernel's static shared memory
     * too (seqattn's 5 KB beside 48 KB of stages failed to launch without it) */
    if (smem > k->smem_set) {
        r = drv.func_set_attribute(k->f, FUNC_ATTR_MAX_DYNAMIC_SMEM, (int)smem);
        if (r) return fail(g, ctx, r, "cuFuncSetAttribute(%s, max dynamic smem %zu)", name, smem);
        k->smem_set = smem;
    }
    int clustered = cluster && cluster[0] * cluster[1] * cluster[2] > 1;
    if (clustered && !drv.launch_ex)
        return ctx_err(ctx, MG_ERR_LAUNCH, "%s: thread-block clusters need cuLaunchKernelEx (CUDA 12+)", name);
    if (clustered && cluster[0] * cluster[1] * cluster[2] > 8 && !k->nonportable) {
        r = drv.func_set_attribute(k->f, FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        if (r) return fail(g, ctx, r, "cuFuncSetAttribute(%s, non-portable cluster size)", name);
        k->nonportable = 1;
    }
    return launch_fn(g, ctx, k->f, name, grid, block, smem, params, flags, clustered ? cluster : NULL,
                     g->stream);
}

mg_status rt_tmap(mg_ctx *ctx, const char *name, void *map, rt_dptr addr, const int64_t dims[2],
                  int64_t row_bytes, const unsigned box[2]) {
    if (!drv_lib || !drv.tmap_encode)
        return ctx_err(ctx, MG_ERR_LAUNCH, "%s: its tiles load by TMA, which needs cuTensorMapEncodeTiled "
                       "(CUDA 12+); plan with --no-tma", name);
    /* CU_TENSOR_MAP_DATA_TYPE_UINT16 (1), no interleave, SWIZZLE_128B (3) or _64B (2) as wide
     * as a box row, L2 promotion of 256 bytes (3), no out-of-bounds fill (0) */
    const uint64_t d[2] = {(uint64_t)dims[0], (uint64_t)dims[1]}, st[1] = {(uint64_t)row_bytes};
    const unsigned one[2] = {1, 1};
    CUresult r = drv.tmap_encode(map, 1, 2, (void *)(uintptr_t)addr, d, st, box, one, 0, box[0] * 2 == 64 ? 2 : 3, 3, 0);
    return r ? ctx_err(ctx, MG_ERR_LAUNCH, "%s: cuTensorMapEncodeTiled failed (%d) for a [%" PRId64 ", %" PRId64
                       "] tensor at 0x%llx, rows %" PRId64 " bytes apart, box %u x %u", name, (int)r, dims[1],
                       dims[0], (unsigned long long)addr, row_bytes, box[1], box[0])
             : MG_OK;
}

mg_status rt_sync(rt_gpu *g, mg_ctx *ctx) {
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    CUresult r = drv.stream_sync(g->stream);
    return r ? fail(g, ctx, r, "kernel failed: cuStreamSynchronize") : MG_OK;
}

mg_status rt_alloc(rt_gpu *g, mg_ctx *ctx, size_t bytes, rt_dptr *out) {
    *out = 0;
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    if (g->n_live == g->cap_live) {
        size_t cap = g->cap_live ? 2 * g->cap_live : 16;
        rt_dptr *live = base_realloc(g->live, cap * sizeof *live);
        if (!live) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        g->live = live, g->cap_live = cap;
    }
    CUdeviceptr p = 0;
    CUresult r = drv.mem_alloc(&p, bytes ? bytes : 1);
    if (r) return fail(g, ctx, r, "cuMemAlloc(%zu bytes)", bytes);
    g->live[g->n_live++] = p;
    *out = p;
    return MG_OK;
}

void rt_free_dev(rt_gpu *g, rt_dptr p) {
    if (!g || !p || g->broken) return;
    for (size_t i = 0; i < g->n_live; i++) {
        if (g->live[i] != p) continue;
        g->live[i] = g->live[--g->n_live];
        if (drv.ctx_set_current(g->cu) == 0) drv.mem_free(p);
        return;
    }
    /* not live: lost with the context, or never ours */
}

mg_status rt_upload(rt_gpu *g, mg_ctx *ctx, rt_dptr dst, const void *src, size_t bytes) {
    mg_status rc = enter(g, ctx);
    if (rc || bytes == 0) return rc;
    CUresult r = drv.htod(dst, src, bytes);
    return r ? fail(g, ctx, r, "cuMemcpyHtoD(%zu bytes)", bytes) : MG_OK;
}

mg_status rt_download(rt_gpu *g, mg_ctx *ctx, void *dst, rt_dptr src, size_t bytes) {
    mg_status rc = enter(g, ctx);
    if (rc || bytes == 0) return rc;
    CUresult r = drv.dtoh(dst, src, bytes);
    return r ? fail(g, ctx, r, "cuMemcpyDtoH(%zu bytes)", bytes) : MG_OK;
}

mg_status rt_fill(rt_gpu *g, mg_ctx *ctx, rt_dptr dst, unsigned char byte, size_t bytes) {
    mg_status rc = enter(g, ctx);
    if (rc || bytes == 0) return rc;
    CUresult r = drv.memset_d8(dst, byte, bytes); /* ordered before later launches */
    return r ? fail(g, ctx, r, "cuMemsetD8(%zu bytes)", bytes) : MG_OK;
}

mg_status rt_timer_start(rt_gpu *g, mg_ctx *ctx) {
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    CUresult r = drv.event_record(g->ev[0], g->stream);
    return r ? fail(g, ctx, r, "cuEventRecord") : MG_OK;
}

mg_status rt_timer_stop(rt_gpu *g, mg_ctx *ctx, double *ms) {
    *ms = 0;
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    float f = 0;
    CUresult r = drv.event_record(g->ev[1], g->stream);
    if (r) return fail(g, ctx, r, "cuEventRecord");
    if ((r = drv.event_sync(g->ev[1]))) return fail(g, ctx, r, "cuEventSynchronize");
    if ((r = drv.event_elapsed(&f, g->ev[0], g->ev[1])))
        return fail(g, ctx, r, "cuEventElapsedTime");
    *ms = f;
    return MG_OK;
}

mg_status rt_capture_begin(rt_gpu *g, mg_ctx *ctx) {
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    CUresult r = drv.capture_begin(g->stream, CAPTURE_MODE_THREAD_LOCAL);
    return r ? fail(g, ctx, r, "cuStreamBeginCapture") : MG_OK;
}

mg_status rt_capture_end(rt_gpu *g, mg_ctx *ctx, rt_graph **out) {
    *out = NULL;
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    CUresult r = drv.capture_end(g->stream, &graph);
    if (r) return fail(g, ctx, r, "cuStreamEndCapture");
    rt_graph *gr = base_alloc(sizeof *gr);
    if (!gr) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    else if ((r = drv.graph_instantiate(&exec, graph, 0)))
        rc = fail(g, ctx, r, "cuGraphInstantiateWithFlags");
    if (rc) {
        if (graph && !is_sticky(r)) drv.graph_destroy(graph);
        base_free(gr);
        return rc;
    }
    gr->graph = graph, gr->exec = exec;
    *out = gr;
    return MG_OK;
}

mg_status rt_graph_launch(rt_gpu *g, mg_ctx *ctx, rt_graph *gr) {
    mg_status rc = enter(g, ctx);
    if (rc) return rc;
    if (!gr) return ctx_err(ctx, MG_ERR_INVALID, "rt_graph_launch: no graph");
    CUresult r = drv.graph_launch(gr->exec, g->stream);
    return r ? fail(g, ctx, r, "cuGraphLaunch") : MG_OK;
}

void rt_graph_free(rt_gpu *g, rt_graph *gr) {
    if (!gr) return;
    if (g && !g->broken && drv.ctx_set_current(g->cu) == 0) {
        drv.graph_exec_destroy(gr->exec);
        drv.graph_destroy(gr->graph);
    }
    base_free(gr);
}

/* ---- the library API (src/compiled.c): launches in the caller's context and stream ----
 * Unlike rt_gpu, which owns its context and stream, an rt_ext launches in whatever context is
 * current on the calling thread, on the stream it is given. Its image is loaded once per
 * context, the first time a thread enters that context, under the handle's mutex. */

/* The image loaded into one context. Immutable once listed (threads read it unlocked). */
/* One launch sequence captured as a CUDA graph for one set of buffer addresses (key). */
typedef struct ext_graph {
    uintptr_t *key; /* NULL: an empty slot */
    int n;
    CUgraph graph;
    CUgraphExec exec;
    unsigned long long used; /* the mod's tick at its last replay (least recent goes first) */
} ext_graph;
enum { EXT_GRAPHS = 8, EXT_GRAPH_MISSES = 16 };

struct rt_ext_mod {
    CUcontext cu;
    CUmodule mod;
    CUfunction *fn; /* kernel i of rt_ext_new's list */
    struct rt_ext_mod *next;
    /* rt_ext_graph_run's graphs in this context, under the rt_ext's mu: the stream they are
     * captured on, the graphs, a clock, the replays and captures so far, and off once captures
     * outnumber replays past EXT_GRAPH_MISSES (addresses that keep changing: launched directly) */
    CUstream cap;
    ext_graph g[EXT_GRAPHS];
    unsigned long long tick;
    long hits, misses;
    int off;
};

/* Invariants: every entry of `mods` has a distinct context; `primary` is retained exactly
 * when `retained`. mu guards mods, primary and retained. */
struct rt_ext {
    void *image;
    size_t size;
    rt_kernel *k;
    int n_k;
    pthread_mutex_t mu;
    rt_ext_mod *mods;
    CUdevice dev;
    CUcontext primary;
    int retained;
};

static pthread_mutex_t ext_load_mu = PTHREAD_MUTEX_INITIALIZER;

/* Loads libcuda and initialises the driver, once, whichever thread comes first. */
static mg_status ext_driver(mg_ctx *ctx) {
    static int inited;
    char err[256];
    pthread_mutex_lock(&ext_load_mu);
    mg_status rc = drv_load(ctx);
    CUresult r = 0;
    if (!rc && !inited && (r = drv.init(0)) == 0) inited = 1;
    pthread_mutex_unlock(&ext_load_mu);
    if (!rc && r) rc = ctx_err(ctx, MG_ERR_NO_DEVICE, "cuInit: %s", describe(r, err, sizeof err));
    return rc;
}

mg_status rt_ext_device(mg_ctx *ctx, rt_gpu_info *info) {
    mg_status rc = ext_driver(ctx);
    if (rc) return rc;
    rt_gpu tmp;
    memset(&tmp, 0, sizeof tmp);
    CUcontext cur = NULL;
    const char *what = "cuCtxGetCurrent";
    char err[256];
    int n = 0;
    CUresult r = drv.ctx_get_current(&cur);
    if (!r && cur) what = "cuCtxGetDevice", r = drv.ctx_get_device(&tmp.dev);
    else if (!r && (what = "cuDeviceGetCount", r = drv.device_count(&n)) == 0 && n == 0)
        return ctx_err(ctx, MG_ERR_NO_DEVICE, "no CUDA device");
    else if (!r) what = "cuDeviceGet", r = drv.device_get(&tmp.dev, 0);
    if (!r) r = query_info(&tmp, &what);
    if (r) return ctx_err(ctx, MG_ERR_NO_DEVICE, "%s: %s", what, describe(r, err, sizeof err));
    *info = tmp.info;
    return MG_OK;
}

mg_status rt_ext_new(mg_ctx *ctx, const void *image, size_t size, const rt_kernel *k, int n_k,
                     rt_ext **out) {
    *out = NULL;
    if (!image || !size || n_k < 0) return ctx_err(ctx, MG_ERR_INVALID, "rt_ext_new: no image");
    rt_ext *e = base_calloc(1, sizeof *e);
    if (e) e->image = base_alloc(size), e->k = base_calloc((size_t)n_k + 1, sizeof *k);
    if (!e || !e->image || !e->k) {
        if (e) base_free(e->image), base_free(e->k);
        base_free(e);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    memcpy(e->image, image, size);
    if (n_k) memcpy(e->k, k, (size_t)n_k * sizeof *k);
    e->size = size, e->n_k = n_k;
    for (int i = 0; i < n_k; i++) /* a kernel launched twice gets the larger limit */
        for (int j = 0; j < n_k; j++)
            if (!strcmp(k[i].name, k[j].name) && k[j].smem > e->k[i].smem_limit)
                e->k[i].smem_limit = k[j].smem;
    pthread_mutex_init(&e->mu, NULL);
    *out = e;
    return MG_OK;
}

/* Drops graph slot x (its graph destroyed when live is set: its context is current). */
static void ext_graph_drop(ext_graph *x, int live) {
    if (live && x->exec) drv.graph_exec_destroy(x->exec);
    if (live && x->graph) drv.graph_destroy(x->graph);
    base_free(x->key);
    memset(x, 0, sizeof *x);
}

/* Frees m's host memory, unloading its module first when unload is set. */
static void ext_mod_free(rt_ext_mod *m, int unload) {
    for (int i = 0; i < EXT_GRAPHS; i++) ext_graph_drop(&m->g[i], unload);
    if (unload && m->cap) drv.stream_destroy(m->cap);
    if (unload && m->mod) drv.module_unload(m->mod);
    base_free(m->fn);
    base_free(m);
}

/* Loads e's image into the current context cu: the module, each kernel, their attributes. */
static mg_status ext_load(rt_ext *e, mg_ctx *ctx, CUcontext cu, rt_ext_mod **out) {
    rt_ext_mod *m = base_calloc(1, sizeof *m);
    if (m) m->fn = base_calloc((size_t)e->n_k + 1, sizeof *m->fn);
    if (!m || !m->fn) {
        if (m) ext_mod_free(m, 0);
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    m->cu = cu;
    CUresult r = drv.module_load(&m->mod, e->image);
    mg_status rc = r ? fail(NULL, ctx, r, "cuModuleLoadData") : MG_OK;
    for (int i = 0; i < e->n_k && !rc; i++) {
        const rt_kernel *k = &e->k[i];
        if ((r = drv.module_function(&m->fn[i], m->mod, k->name)))
            rc = fail(NULL, ctx, r, "cuModuleGetFunction(%s)", k->name);
        else if (k->smem_limit > 0 && /* as in the launch: static shared memory counts too */
                 (r = drv.func_set_attribute(m->fn[i], FUNC_ATTR_MAX_DYNAMIC_SMEM, (int)k->smem_limit)))
            rc = fail(NULL, ctx, r, "cuFuncSetAttribute(%s, max dynamic smem %zu)", k->name,
                      k->smem_limit);
        else if (k->cluster_blocks > 8 &&
                 (r = drv.func_set_attribute(m->fn[i], FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)))
            rc = fail(NULL, ctx, r, "cuFuncSetAttribute(%s, non-portable cluster size)", k->name);
    }
    if (rc) ext_mod_free(m, m->mod != NULL);
    else *out = m;
    return rc;
}

/* The calling thread's current context; with none, device 0's primary context, retained by
 * e (once) and made current. */
static mg_status ext_context(rt_ext *e, mg_ctx *ctx, CUcontext *cu) {
    CUresult r = drv.ctx_get_current(cu);
    if (r) return fail(NULL, ctx, r, "cuCtxGetCurrent");
    if (*cu) return MG_OK;
    pthread_mutex_lock(&e->mu);
    if (!e->retained && (r = drv.device_get(&e->dev, 0)) == 0 &&
        (r = drv.primary_retain(&e->primary, e->dev)) == 0)
        e->retained = 1;
    pthread_mutex_unlock(&e->mu);
    if (!r) r = drv.ctx_set_current(e->primary);
    *cu = e->primary;
    return r ? fail(NULL, ctx, r, "no current CUDA context; using device 0's primary one") : MG_OK;
}

mg_status rt_ext_enter(rt_ext *e, mg_ctx *ctx, const rt_ext_mod **out) {
    *out = NULL;
    mg_status rc = ext_driver(ctx);
    CUcontext cu = NULL;
    if (!rc) rc = ext_context(e, ctx, &cu);
    if (rc) return rc;
    pthread_mutex_lock(&e->mu);
    rt_ext_mod *m = e->mods;
    while (m && m->cu != cu) m = m->next;
    if (!m && (rc = ext_load(e, ctx, cu, &m)) == MG_OK) m->next = e->mods, e->mods = m;
    pthread_mutex_unlock(&e->mu);
    *out = m;
    return rc;
}

mg_status rt_ext_launch(mg_ctx *ctx, const rt_ext *e, const rt_ext_mod *m, int i,
                        const unsigned grid[3], unsigned block, void **params, int flags,
                        const unsigned cluster[3], void *stream) {
    const rt_kernel *k = &e->k[i];
    int clustered = cluster && cluster[0] * cluster[1] * cluster[2] > 1;
    if (clustered && !drv.launch_ex)
        return ctx_err(ctx, MG_ERR_LAUNCH, "%s: thread-block clusters need cuLaunchKernelEx (CUDA 12+)", k->name);
    return launch_fn(NULL, ctx, m->fn[i], k->name, grid, block, k->smem, params, flags,
                     clustered ? cluster : NULL, stream);
}

mg_status rt_ext_graph_run(mg_ctx *ctx, rt_ext *e, const rt_ext_mod *cm, const uintptr_t *key, int n,
                           void *stream, mg_status (*queue)(void *arg, void *stream), void *arg, int *done) {
    *done = 0;
    int capturing = 1;
    if (!drv.stream_is_capturing || drv.stream_is_capturing(stream, &capturing) || capturing)
        return MG_OK; /* the caller's own capture takes the launches as they come */
    rt_ext_mod *m = (rt_ext_mod *)cm; /* its graph fields are guarded by e->mu */
    pthread_mutex_lock(&e->mu);
    ext_graph *x = NULL, *old = &m->g[0];
    for (int i = 0; i < EXT_GRAPHS; i++) {
        ext_graph *y = &m->g[i];
        if (y->key && y->n == n && !memcmp(y->key, key, (size_t)n * sizeof *key)) x = y;
        if (!y->key || (old->key && y->used < old->used)) old = y;
    }
    mg_status rc = MG_OK;
    CUresult r = 0;
    if (!x && !m->off && ++m->misses > EXT_GRAPH_MISSES && m->misses > m->hits) m->off = 1;
    if (!x && !m->off) { /* capture the launches once for these addresses */
        CUgraph graph = NULL;
        CUgraphExec exec = NULL;
        uintptr_t *k = base_alloc((size_t)n * sizeof *k);
        if (!k) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        else if ((!m->cap && (r = drv.stream_create(&m->cap, 1 /* CU_STREAM_NON_BLOCKING */))) ||
                 (r = drv.capture_begin(m->cap, CAPTURE_MODE_THREAD_LOCAL)))
            m->off = 1; /* graphs unavailable here: launched directly */
        else {
            rc = queue(arg, m->cap);
            r = drv.capture_end(m->cap, &graph);
            if (!rc && !r && (r = drv.graph_instantiate(&exec, graph, 0)) == 0) {
                ext_graph_drop(old, 1);
                memcpy(k, key, (size_t)n * sizeof *k);
                old->key = k, old->n = n, old->graph = graph, old->exec = exec, x = old, k = NULL;
            } else {
                if (graph) drv.graph_destroy(graph);
                if (!rc && r) m->off = 1; /* a capture or an instantiation failed: direct launches */
            }
        }
        base_free(k);
    } else if (x)
        m->hits++;
    if (x && !rc) {
        x->used = ++m->tick;
        if ((r = drv.graph_launch(x->exec, stream))) rc = fail(NULL, ctx, r, "cuGraphLaunch");
        *done = 1;
    }
    pthread_mutex_unlock(&e->mu);
    return rc;
}

mg_status rt_ext_read(mg_ctx *ctx, void *dst, rt_dptr p, size_t bytes) {
    CUresult r = bytes ? drv.dtoh(dst, p, bytes) : 0;
    return r ? fail(NULL, ctx, r, "cuMemcpyDtoH(%zu bytes)", bytes) : MG_OK;
}

mg_status rt_ext_zero(mg_ctx *ctx, rt_dptr p, size_t bytes, void *stream) {
    CUresult r = bytes ? drv.memset_d8_async(p, 0, bytes, stream) : 0;
    return r ? fail(NULL, ctx, r, "cuMemsetD8Async(%zu bytes)", bytes) : MG_OK;
}

void rt_ext_free(rt_ext *e) {
    if (!e) return;
    for (rt_ext_mod *m = e->mods, *next; m; m = next) {
        next = m->next;
        CUcontext was = NULL;
        int pushed = drv.ctx_push(m->cu) == 0; /* a context destroyed already: only host memory */
        ext_mod_free(m, pushed);
        if (pushed) drv.ctx_pop(&was);
    }
    if (e->retained) drv.primary_release(e->dev);
    pthread_mutex_destroy(&e->mu);
    base_free(e->image);
    base_free(e->k);
    base_free(e);
}
