/* fake_cuda: the driver API entry points mugen's runtime resolves (src/runtime/cuda.c), faked
 * for the unit tests (fake_cuda.h): nothing runs, the launches are recorded. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"

typedef int CUresult;
enum { MAX_LAUNCHES = 4096, MAX_FN = 64 };

typedef struct fake_module {
    void *ctx;
    int n_fn;
    char fn[MAX_FN][64]; /* a CUfunction is a pointer to its name here */
} fake_module;

/* A captured graph: the launches recorded while its stream was captured, replayed (recorded
 * again, on the launch's stream) by each cuGraphLaunch of its executable (the graph itself). */
typedef struct fake_graph {
    int n, memsets;
    uint64_t memset_ptr, memset_bytes; /* the last memset's */
    fake_launch l[64];
} fake_graph;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local void *capturing; /* the stream this thread captures, or NULL */
static _Thread_local fake_graph *cap_graph;
static fake_stats st;
static fake_launch rec[MAX_LAUNCHES];
static int primary; /* its address is the primary context */
static _Thread_local void *cur, *pushed[8];
static _Thread_local int depth;

/* ---- the inspection interface (fake_cuda.h) ---- */
void fake_cuda_stats(fake_stats *s);
const fake_launch *fake_cuda_launch(int i);
void fake_cuda_set_current(void *ctx);
void fake_cuda_stats(fake_stats *s) {
    pthread_mutex_lock(&mu);
    *s = st;
    pthread_mutex_unlock(&mu);
}
const fake_launch *fake_cuda_launch(int i) { return i >= 0 && i < st.launches && i < MAX_LAUNCHES ? &rec[i] : NULL; }
void fake_cuda_set_current(void *ctx) { cur = ctx; }

/* ---- the driver API ---- */
#define API(name, ...) CUresult name(__VA_ARGS__); CUresult name(__VA_ARGS__)
API(cuInit, unsigned f) { (void)f; pthread_mutex_lock(&mu); st.inits++; pthread_mutex_unlock(&mu); return 0; }
API(cuDeviceGetCount, int *n) { *n = 1; return 0; }
API(cuDeviceGet, int *d, int i) { *d = i; return i == 0 ? 0 : 101; }
API(cuDeviceGetName, char *s, int n, int d) { (void)d; strncpy(s, "mugen fake NVIDIA H100", (size_t)n); return 0; }
API(cuDeviceGetAttribute, int *v, int a, int d) {
    (void)d;
    *v = a == 16 ? 132 : a == 75 ? 9 : a == 76 ? 0 : a == 97 ? 232448 : 0;
    return 0;
}
API(cuDeviceTotalMem_v2, size_t *b, int d) { (void)d; *b = (size_t)80 << 30; return 0; }
API(cuDevicePrimaryCtxRetain, void **c, int d) {
    (void)d;
    pthread_mutex_lock(&mu); st.retained++; pthread_mutex_unlock(&mu);
    *c = &primary;
    return 0;
}
API(cuDevicePrimaryCtxRelease_v2, int d) { (void)d; pthread_mutex_lock(&mu); st.retained--; pthread_mutex_unlock(&mu); return 0; }
API(cuCtxSetCurrent, void *c) { cur = c; return 0; }
API(cuCtxGetCurrent, void **c) { *c = cur; return 0; }
API(cuCtxGetDevice, int *d) { *d = 0; return cur ? 0 : 201; }
API(cuCtxPushCurrent_v2, void *c) { if (depth == 8) return 1; pushed[depth++] = cur; cur = c; return 0; }
API(cuCtxPopCurrent_v2, void **c) { if (!depth) return 1; *c = cur; cur = pushed[--depth]; return 0; }
API(cuModuleLoadData, void **m, const void *image) {
    fake_module *fm = calloc(1, sizeof *fm);
    if (!fm) return 2;
    fm->ctx = cur;
    pthread_mutex_lock(&mu);
    st.loads++;
    st.bad_image += !image || memcmp(image, "\177ELF", 4) != 0;
    pthread_mutex_unlock(&mu);
    *m = fm;
    return cur ? 0 : 201;
}
API(cuModuleUnload, void *m) { pthread_mutex_lock(&mu); st.unloads++; pthread_mutex_unlock(&mu); free(m); return 0; }
API(cuModuleGetFunction, void **f, void *m, const char *name) {
    fake_module *fm = m;
    if (fm->n_fn == MAX_FN) return 2;
    strncpy(fm->fn[fm->n_fn], name, 63);
    *f = fm->fn[fm->n_fn++];
    return 0;
}
API(cuFuncSetAttribute, void *f, int a, int v) { (void)f, (void)a, (void)v; return 0; }

/* Writes a launch of f into *L; params end with NULL (mugen's library API leaves one there). */
static void fill(fake_launch *L, void *f, const unsigned g[3], unsigned block, unsigned smem, void *s,
                 void **params, int pdl) {
    memset(L, 0, sizeof *L);
    L->ctx = cur, L->stream = s, L->block = block, L->smem = smem, L->pdl = pdl;
    memcpy(L->grid, g, sizeof L->grid);
    strncpy(L->name, f, 63);
    for (L->n_args = 0; L->n_args < FAKE_MAX_ARGS && params[L->n_args]; L->n_args++)
        memcpy(&L->args[L->n_args], params[L->n_args], 8);
}

/* Records a launch of f, or adds it to the graph this thread captures on s. */
static CUresult record(void *f, const unsigned g[3], unsigned block, unsigned smem, void *s,
                       void **params, int pdl) {
    if (s && s == capturing) { /* into the graph, not run */
        if (cap_graph->n == 64) return 1;
        fill(&cap_graph->l[cap_graph->n++], f, g, block, smem, s, params, pdl);
        return cur ? 0 : 201;
    }
    pthread_mutex_lock(&mu);
    if (st.launches < MAX_LAUNCHES) fill(&rec[st.launches], f, g, block, smem, s, params, pdl);
    st.launches++;
    pthread_mutex_unlock(&mu);
    return cur ? 0 : 201;
}

API(cuLaunchKernel, void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
    unsigned bz, unsigned smem, void *s, void **params, void **extra) {
    (void)by, (void)bz, (void)extra;
    unsigned g[3] = {gx, gy, gz};
    return record(f, g, bx, smem, s, params, 0);
}

typedef struct {
    int id;
    char pad[4];
    union {
        char pad[64];
        int value;
        unsigned dim[3];
    } u;
} attr_;
typedef struct {
    unsigned gx, gy, gz, bx, by, bz, smem;
    void *stream;
    attr_ *attrs;
    unsigned n_attrs;
} config_;
API(cuLaunchKernelEx, const config_ *c, void *f, void **params, void **extra) {
    (void)extra;
    unsigned g[3] = {c->gx, c->gy, c->gz};
    int pdl = 0;
    for (unsigned i = 0; i < c->n_attrs; i++) pdl |= c->attrs[i].id == 6 && c->attrs[i].u.value;
    return record(f, g, c->bx, c->smem, c->stream, params, pdl);
}
API(cuMemsetD8Async, uint64_t p, unsigned char b, size_t n, void *s) {
    (void)b;
    if (s && s == capturing) return cap_graph->memsets++, cap_graph->memset_ptr = p, cap_graph->memset_bytes = n, 0;
    pthread_mutex_lock(&mu);
    st.memsets++, st.memset_ptr = p, st.memset_bytes = n;
    pthread_mutex_unlock(&mu);
    return 0;
}
API(cuGetErrorName, CUresult r, const char **s) { *s = r == 201 ? "CUDA_ERROR_INVALID_CONTEXT" : "CUDA_ERROR_FAKE"; return 0; }
API(cuGetErrorString, CUresult r, const char **s) { (void)r; *s = "fake driver error"; return 0; }
/* a tensor map: the fake writes the tensor's address first (a launch records it as the
 * argument), then its row length, rows, row stride and box, 64-bit each; refuses what the
 * real driver refuses (an unaligned address or stride, a box row over the 128-byte swizzle) */
API(cuTensorMapEncodeTiled, uint64_t *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
    const uint64_t *strides, const unsigned *box, const unsigned *estr, int il, int sw, int l2, int oob) {
    (void)dtype, (void)estr, (void)il, (void)l2, (void)oob;
    if (rank != 2 || (uintptr_t)addr % 16 || strides[0] % 16 || box[0] * 2 > (sw == 3 ? 128u : sw == 2 ? 64u : 32u) ||
        box[1] > 256)
        return 1;
    memset(map, 0, 128);
    map[0] = (uintptr_t)addr, map[1] = dims[0], map[2] = dims[1], map[3] = strides[0], map[4] = box[0], map[5] = box[1];
    return 0;
}
/* the rest: present, unused by the library API */
API(cuStreamCreate, void **s, unsigned f) { (void)f; *s = malloc(1); return *s ? 0 : 2; }
API(cuStreamDestroy_v2, void *s) { free(s); return 0; }
API(cuStreamSynchronize, void *s) { (void)s; return 0; }
API(cuEventCreate, void **e, unsigned f) { (void)f; *e = &primary; return 0; }
API(cuEventDestroy_v2, void *e) { (void)e; return 0; }
API(cuEventRecord, void *e, void *s) { (void)e, (void)s; return 0; }
API(cuEventSynchronize, void *e) { (void)e; return 0; }
API(cuEventElapsedTime, float *ms, void *a, void *b) { (void)a, (void)b; *ms = 0; return 0; }
API(cuMemAlloc_v2, uint64_t *p, size_t n) { (void)n; *p = 0; return 2; }
API(cuMemFree_v2, uint64_t p) { (void)p; return 0; }
API(cuMemcpyHtoD_v2, uint64_t d, const void *s, size_t n) { (void)d, (void)s, (void)n; return 1; }
API(cuMemcpyDtoH_v2, void *d, uint64_t s, size_t n) { (void)d, (void)s, (void)n; return 1; }
API(cuMemsetD8_v2, uint64_t d, unsigned char b, size_t n) { (void)d, (void)b, (void)n; return 1; }
API(cuStreamIsCapturing, void *s, int *status) { *status = s && s == capturing; return 0; }
API(cuStreamBeginCapture_v2, void *s, int m) {
    (void)m;
    if (!s || capturing || !(cap_graph = calloc(1, sizeof *cap_graph))) return 1;
    capturing = s;
    return 0;
}
API(cuStreamEndCapture, void *s, void **g) {
    if (!s || s != capturing) return 1;
    *g = cap_graph, capturing = NULL, cap_graph = NULL;
    pthread_mutex_lock(&mu); st.captures++; pthread_mutex_unlock(&mu);
    return 0;
}
/* the executable is the graph (destroyed with it; the library destroys both) */
API(cuGraphInstantiateWithFlags, void **e, void *g, unsigned long long f) {
    (void)f;
    pthread_mutex_lock(&mu); st.graphs_live++; pthread_mutex_unlock(&mu);
    *e = g;
    return 0;
}
API(cuGraphLaunch, void *e, void *s) {
    const fake_graph *g = e;
    pthread_mutex_lock(&mu);
    st.graph_launches++, st.memsets += g->memsets;
    if (g->memsets) st.memset_ptr = g->memset_ptr, st.memset_bytes = g->memset_bytes;
    for (int i = 0; i < g->n; i++, st.launches++)
        if (st.launches < MAX_LAUNCHES) rec[st.launches] = g->l[i], rec[st.launches].stream = s;
    pthread_mutex_unlock(&mu);
    return 0;
}
API(cuGraphExecDestroy, void *e) { (void)e; pthread_mutex_lock(&mu); st.graphs_live--; pthread_mutex_unlock(&mu); return 0; }
API(cuGraphDestroy, void *g) { free(g); return 0; }
