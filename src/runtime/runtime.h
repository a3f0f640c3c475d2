/* runtime: running generated code (docs/layout.md). Last stage of the pipeline, after
 * codegen/. Two backends behind one small interface:
 *   GPU  libcuda (driver API) and libnvrtc, both loaded with dlopen at first use, so the same
 *        binary runs where neither exists and says so (MG_ERR_NO_DEVICE) when asked for GPU
 *        work. NVRTC compiles CUDA C to a cubin for the device's architecture; cubins are
 *        cached on disk keyed by a hash of source, target and compiler version (cache.c).
 *   C    the system C compiler builds a shared object (cached the same way) that runs in a
 *        forked child, so a crashing candidate comes back as a status, not a dead process.
 * Every driver, NVRTC and compiler failure becomes an mg_status with the log or CUDA error
 * name in ctx; the process goes on. Knobs (docs/env.md): MUGEN_CACHE_DIR, MUGEN_NVRTC,
 * MUGEN_LIBCUDA, MUGEN_CC. */
#ifndef MG_RUNTIME_H
#define MG_RUNTIME_H

#include "../base/base.h"

/* ---- compile cache (cache.c) ---- */
/* 64-bit FNV-1a over n bytes, chained from h (start with RT_HASH_INIT). */
#define RT_HASH_INIT 0xcbf29ce484222325ull
/* mkdir -p of path (modified in place, restored): 0 once it is a directory this process can
 * write and enter, else -1. */
int rt_mkdir_p(char *path);
uint64_t rt_hash(uint64_t h, const void *p, size_t n);
/* The cache folder: MUGEN_CACHE_DIR, else $XDG_CACHE_HOME/mugen, else $HOME/.cache/mugen,
 * created on demand. NULL when caching is off (MUGEN_CACHE_DIR=off) or no folder can be made.
 * The string is static. */
const char *rt_cache_dir(void);
/* Looks up key.ext: on a hit returns 1 and *data (base_alloc'd, caller frees) / *n. 0 on miss. */
int rt_cache_get(uint64_t key, const char *ext, void **data, size_t *n);
/* Stores data under key.ext atomically (temp file + rename); failures are silent (the cache
 * is an accelerator, never a source of errors). */
void rt_cache_put(uint64_t key, const char *ext, const void *data, size_t n);

/* ---- NVRTC (no GPU needed) ---- */
/* Compiles CUDA C `src` for `arch` ("sm_90a", "sm_90", ...) to a cubin. On success *image
 * (base_alloc'd, caller frees) and *size; *cached = 1 if it came from the disk cache (may be
 * NULL). MG_ERR_NO_DEVICE if libnvrtc cannot be loaded (message says which paths were
 * tried); MG_ERR_COMPILE with the first part of the NVRTC log in ctx, and the whole log
 * appended to `log` when log != NULL. */
mg_status rt_nvrtc_compile(mg_ctx *ctx, const char *src, const char *arch, void **image,
                           size_t *size, int *cached, strbuf *log);
/* NVRTC's version as major*1000 + minor*10, or -1 (with ctx set) if it cannot be loaded. */
int rt_nvrtc_version(mg_ctx *ctx);

/* ---- GPU (driver API) ---- */
typedef struct rt_gpu rt_gpu;
typedef struct rt_module rt_module;
typedef struct rt_graph rt_graph;
typedef uint64_t rt_dptr; /* a device address */

typedef struct rt_gpu_info {
    char name[256];
    int cc_major, cc_minor; /* compute capability */
    int n_sm;
    int64_t smem_optin;     /* largest dynamic shared memory a block may opt into, bytes */
    int64_t mem_bytes;
    char arch[16];          /* NVRTC target for it (mg_device_arch, ir/device.c) */
} rt_gpu_info;

/* Opens device 0: dlopens libcuda, cuInit, retains the primary context, makes a stream and
 * two timing events. MG_ERR_NO_DEVICE with the reason ("libcuda.so.1 not found: ...",
 * "no CUDA device") otherwise. *out owned by the caller (rt_gpu_free; NULL is a no-op). */
mg_status rt_gpu_open(mg_ctx *ctx, rt_gpu **out);
void rt_gpu_free(rt_gpu *g);
const rt_gpu_info *rt_gpu_get_info(const rt_gpu *g);

/* Loads a cubin. The module belongs to the caller (rt_module_free; NULL ok; safe to call after
 * the context was reset by a fault, it then only frees host memory). */
mg_status rt_module_load(rt_gpu *g, mg_ctx *ctx, const void *image, size_t size, rt_module **out);
void rt_module_free(rt_gpu *g, rt_module *m);

/* Launches kernel `name` of m on the runtime's stream: grid[3] blocks of `block` threads with
 * `smem` bytes of dynamic shared memory (raises the function's limit when over 48 KB);
 * params[i] points at the i-th kernel parameter. Asynchronous: configuration errors (unknown
 * kernel, too much shared memory, too many threads) come back here as MG_ERR_LAUNCH; faults
 * come back from rt_sync. flags: RT_PDL, the kernel itself waits for the previous kernel in
 * the stream (griddepcontrol.wait), so it is launched as that kernel's programmatic dependent
 * (Hopper: its launch may overlap the previous kernel's run; a plain launch when the driver
 * lacks cuLaunchKernelEx); RT_CORESIDENT, its blocks wait for each other (a persistent launch
 * with a static schedule, a 1-D grid that reads gridDim.x), so it launches as many as the
 * device holds at once (the driver's occupancy, asked before launching), at most grid[0];
 * MG_ERR_LAUNCH when it holds none or the driver cannot tell.
 * cluster (NULL: none): blocks of a thread-block cluster along x, y, z (over 8 in all: the
 * non-portable sizes Hopper allows up to 16); MG_ERR_LAUNCH without cuLaunchKernelEx. */
enum { RT_PDL = 1, RT_CORESIDENT = 2 };
mg_status rt_launch(rt_gpu *g, mg_ctx *ctx, rt_module *m, const char *name,
                    const unsigned grid[3], unsigned block, size_t smem, void **params, int flags,
                    const unsigned cluster[3]);
/* Writes into map (128 bytes, 64-byte aligned) the TMA tensor map of a 2-D tensor of 16-bit
 * elements at addr: dims[0] elements a row (the innermost), dims[1] rows, row_bytes apart (a
 * multiple of 16), read in boxes of box[0] x box[1] elements (box[0] 32 or 64), each box
 * stored swizzled across its 2 box[0]-byte rows (opt/tma.c). The driver must have been loaded (an rt_gpu opened or
 * an rt_ext made); MG_ERR_LAUNCH naming kernel `name` when it lacks cuTensorMapEncodeTiled or
 * refuses the map. Thread-safe; no allocation. */
mg_status rt_tmap(mg_ctx *ctx, const char *name, void *map, rt_dptr addr, const int64_t dims[2],
                  int64_t row_bytes, const unsigned box[2]);
/* Waits for the stream. A fault (illegal address, trap, ...) returns MG_ERR_LAUNCH naming the
 * CUDA error. CUDA cannot recover the context in the same process, so every later call on g
 * fails with MG_ERR_LAUNCH (the _free calls stay safe); work that must survive a fault runs
 * the GPU in a child process (mg_run does). */
mg_status rt_sync(rt_gpu *g, mg_ctx *ctx);

/* Device memory. rt_free_dev(g, 0) is a no-op. */
mg_status rt_alloc(rt_gpu *g, mg_ctx *ctx, size_t bytes, rt_dptr *out);
void rt_free_dev(rt_gpu *g, rt_dptr p);
mg_status rt_upload(rt_gpu *g, mg_ctx *ctx, rt_dptr dst, const void *src, size_t bytes);
mg_status rt_download(rt_gpu *g, mg_ctx *ctx, void *dst, rt_dptr src, size_t bytes);
mg_status rt_fill(rt_gpu *g, mg_ctx *ctx, rt_dptr dst, unsigned char byte, size_t bytes);

/* Timing with CUDA events on the runtime's stream: start, enqueue work, stop gives the
 * elapsed milliseconds between the two (it waits for the stop event). */
mg_status rt_timer_start(rt_gpu *g, mg_ctx *ctx);
mg_status rt_timer_stop(rt_gpu *g, mg_ctx *ctx, double *ms);

/* CUDA graphs: launches between begin and end are captured, not run; the graph replays them
 * with one launch. rt_graph_free(g, NULL) is a no-op. */
mg_status rt_capture_begin(rt_gpu *g, mg_ctx *ctx);
mg_status rt_capture_end(rt_gpu *g, mg_ctx *ctx, rt_graph **out);
mg_status rt_graph_launch(rt_gpu *g, mg_ctx *ctx, rt_graph *gr);
void rt_graph_free(rt_gpu *g, rt_graph *gr);

/* ---- launching in the caller's CUDA context (the library API, src/compiled.c) ---- */
typedef struct rt_ext rt_ext;         /* a cubin, loaded into each context that launches it */
typedef struct rt_ext_mod rt_ext_mod; /* it loaded into one context */
typedef struct rt_kernel {
    char name[64];
    size_t smem;             /* dynamic shared memory of this launch, bytes */
    unsigned cluster_blocks; /* blocks per thread-block cluster (0, 1: no clusters) */
    size_t smem_limit;       /* set by rt_ext_new: the largest smem of the kernels so named */
} rt_kernel;

/* Loads libcuda and initialises the driver (once; thread-safe), then describes the device of
 * the calling thread's current context, or device 0 when none is current (no context is
 * made). MG_ERR_NO_DEVICE with the reason when there is no driver or GPU. */
mg_status rt_ext_device(mg_ctx *ctx, rt_gpu_info *info);
/* A handle on a copy of image whose launches are k[0..n_k) (copied). Touches no GPU. */
mg_status rt_ext_new(mg_ctx *ctx, const void *image, size_t size, const rt_kernel *k, int n_k,
                     rt_ext **out);
/* Unloads e from every context it was loaded in (each must still exist; one that cannot be
 * made current is skipped) and releases a primary context e retained. NULL is a no-op. */
void rt_ext_free(rt_ext *e);
/* The calling thread's current context, loading e into it the first time (under e's
 * mutex, so threads may race here); with no current context, device 0's primary context is
 * retained by e and made current on the thread. *out stays valid until rt_ext_free. */
mg_status rt_ext_enter(rt_ext *e, mg_ctx *ctx, const rt_ext_mod **out);
/* Queues kernel i of e (as m) on `stream` (a CUstream of m's context, NULL: the default
 * stream); flags and cluster as in rt_launch. Thread-safe; no allocation. */
mg_status rt_ext_launch(mg_ctx *ctx, const rt_ext *e, const rt_ext_mod *m, int i,
                        const unsigned grid[3], unsigned block, void **params, int flags,
                        const unsigned cluster[3], void *stream);
/* Queues on `stream` what queue(arg, s) queues on a stream s, as one CUDA graph replayed for
 * each key (n words: the buffers' addresses the launches read). The first call with a key
 * captures queue's launches on a stream of m's own (thread-local capture) and instantiates
 * them (8 graphs a context, the least recently replayed replaced); later calls with that key
 * are one cuGraphLaunch. *done = 0, nothing queued, when graphs do not apply: `stream` is
 * being captured (the caller's capture takes the launches), the driver lacks
 * cuStreamIsCapturing, a capture failed, or captures outnumber replays past 16 (addresses that
 * keep changing); the caller then launches directly. queue's error, if any, is returned with
 * *done = 0 and nothing kept. Thread-safe (under e's mutex). */
mg_status rt_ext_graph_run(mg_ctx *ctx, rt_ext *e, const rt_ext_mod *m, const uintptr_t *key, int n,
                           void *stream, mg_status (*queue)(void *arg, void *stream), void *arg, int *done);
/* Copies `bytes` at device address p to dst (cuMemcpyDtoH: waits for the legacy stream) in
 * the current context. */
mg_status rt_ext_read(mg_ctx *ctx, void *dst, rt_dptr p, size_t bytes);
/* Queues a zero fill of `bytes` at p on `stream` (cuMemsetD8Async) in the current context. */
mg_status rt_ext_zero(mg_ctx *ctx, rt_dptr p, size_t bytes, void *stream);

/* ---- C backend (crun.c) ---- */
/* Builds `src` (C11) into a shared object with the system compiler (MUGEN_CC, default cc;
 * -O3 -march=native -ffp-contract=off -fno-trapping-math -fno-math-errno -fopenmp -fPIC
 * -shared, MUGEN_CC's further words after them), cached like cubins: a cached object is
 * checked (length and checksum) before it is used, and a damaged one rebuilt with a note on
 * stderr. *so_path is base_alloc'd (caller frees); *cached (may be NULL) = 1 when the object
 * came from the cache. MG_ERR_COMPILE with the compiler's output in ctx (and appended to log when non-NULL);
 * MG_ERR_NO_DEVICE if no C compiler can be run. */
mg_status rt_c_build(mg_ctx *ctx, const char *src, char **so_path, int *cached, strbuf *log);
/* rt_c_build without OpenMP (its pragmas ignored): an object the caller's own process may
 * load and run in one thread. A process that used libgomp cannot use it again in a child it
 * forks (the child hangs), so in-process runs must not start OpenMP's threads. *cached (may be
 * NULL) = 1 when the object came from the compile cache. */
mg_status rt_c_build_serial(mg_ctx *ctx, const char *src, char **so_path, int *cached,
                            strbuf *log);
/* Runs `void entry(void **bufs)` from so_path in a forked child: n_bufs host buffers
 * bufs[i] of sizes[i] bytes are shared with the child (copied in before, out after), then
 * entry runs `reps` + 1 times (the first a warm-up) and ms_median (if non-NULL) gets the
 * median wall time of the timed runs. The outputs left in bufs are those of the last run.
 * A child killed by a signal or running past timeout_s seconds gives MG_ERR_LAUNCH naming
 * the signal; the caller's process is unaffected. */
mg_status rt_c_run(mg_ctx *ctx, const char *so_path, const char *entry, int n_bufs,
                   void *const *bufs, const size_t *sizes, int reps, double timeout_s,
                   double *ms_median);
/* How rt_c_run_timed times: up to `reps` timed runs after the warm-up; with budget_s > 0, no
 * further run starts once the timed runs have taken budget_s seconds together (at least one
 * is timed when reps > 0). ms (the median) and n_timed (the runs behind it) come back. */
typedef struct rt_c_timing {
    int reps;
    double budget_s;
    int has_len;   /* a variant of a reduced dim: mg_set_len(len) before the runs (codegen/mask.c) */
    long long len;
    double ms;   /* out */
    int n_timed; /* out */
} rt_c_timing;
/* rt_c_run with a time budget for the timed runs (tm may be NULL: one untimed run). */
mg_status rt_c_run_timed(mg_ctx *ctx, const char *so_path, const char *entry, int n_bufs,
                         void *const *bufs, const size_t *sizes, rt_c_timing *tm,
                         double timeout_s);

#endif
