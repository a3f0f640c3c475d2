/* run_program: mugen as a library (include/mugen.h; docs/runtime.md "The library API").
 * Loads a .mu program (and, optionally, a μGraph of it), compiles it once with mg_compile,
 * allocates its inputs, outputs and workspace itself (device memory through the CUDA driver
 * API, or host memory with --c), fills the inputs with random numbers, launches it N times on
 * its own stream with mg_launch, and prints the time per launch and each output's error
 * against mugen's float reference (mg_eval_float). Exit status 0 when every output is within
 * its dtype's tolerance.
 *
 * libcuda is loaded with dlopen, as mugen's runtime does, so this builds (make
 * build/run-program) and runs with --c on a machine without CUDA.
 *
 * --megakernel: the program as one persistent launch (mg_run_opts.persist = 2).
 *
 * Usage: run-program [--c] [--reps N] [--seed S] [--megakernel] PROGRAM.mu [UGRAPH.mu] */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mugen.h"

enum { MAX_IO = 64 };

/* ---- the few driver API entry points used, declared here (values from cuda.h) ---- */
typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUevent;
static struct {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(int *, int);
    CUresult (*primary_retain)(CUcontext *, int);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*stream_sync)(CUstream);
    CUresult (*event_create)(CUevent *, unsigned);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_sync)(CUevent);
    CUresult (*event_elapsed)(float *, CUevent, CUevent);
} cu;

/* Loads libcuda and makes device 0's primary context current: the caller's context that
 * mg_launch then runs in. Returns 0, or -1 with a message. */
static int cuda_open(void) {
    static const char *const names[] = {
        "cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemAlloc_v2",
        "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuStreamCreate",
        "cuStreamSynchronize", "cuEventCreate", "cuEventRecord", "cuEventSynchronize",
        "cuEventElapsedTime"};
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return fprintf(stderr, "run-program: no CUDA driver (%s); --c runs on the host\n", dlerror()), -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) { /* cu's members, in order */
        void *f = dlsym(h, names[i]);
        if (!f) return fprintf(stderr, "run-program: libcuda lacks %s\n", names[i]), -1;
        memcpy((char *)&cu + i * sizeof f, &f, sizeof f);
    }
    int dev = 0;
    CUcontext ctx = NULL;
    CUresult r = cu.init(0);
    if (!r) r = cu.device_get(&dev, 0);
    if (!r) r = cu.primary_retain(&ctx, dev);
    if (!r) r = cu.ctx_set_current(ctx);
    if (r) return fprintf(stderr, "run-program: CUDA error %d opening device 0\n", r), -1;
    return 0;
}

/* ---- f16 and bf16 by hand (the public header has no conversions) ---- */
static uint16_t to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xFF, m = x & 0x7FFFFF;
    if (e == 0xFF) return (uint16_t)(sign | 0x7C00 | (m ? 0x200 : 0));
    int ex = (int)e - 127 + 15;
    if (ex >= 31) return (uint16_t)(sign | 0x7C00);
    if (ex <= 0) { /* subnormal or zero: round to nearest even on the shifted mantissa */
        if (ex < -10) return (uint16_t)sign;
        m |= 0x800000;
        int shift = 14 - ex;
        uint32_t h = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | (uint32_t)ex << 10 | m >> 13, rest = m & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* a carry into the exponent is right */
    return (uint16_t)h;
}

static float from_f16(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF, x;
    if (e == 0x1F) x = sign | 0x7F800000 | m << 13;
    else if (e) x = sign | (e - 15 + 127) << 23 | m << 13;
    else if (!m) x = sign;
    else { /* subnormal: normalise */
        e = 127 - 15 + 1;
        while (!(m & 0x400)) m <<= 1, e--;
        x = sign | e << 23 | (m & 0x3FF) << 13;
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

static float from_bf16(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static size_t elem(mg_dtype t) { return t == MG_F32 ? 4 : 2; }

static void put(mg_dtype t, void *p, int64_t i, double v) {
    if (t == MG_F32) ((float *)p)[i] = (float)v;
    else ((uint16_t *)p)[i] = t == MG_F16 ? to_f16((float)v) : to_bf16((float)v);
}

static double get(mg_dtype t, const void *p, int64_t i) {
    if (t == MG_F32) return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    return t == MG_F16 ? from_f16(h) : from_bf16(h);
}

/* ---- buffers: device memory, or host memory with --c ---- */
static int on_host;

static void *buf_alloc(size_t n) {
    void *p = NULL;
    if (on_host) return posix_memalign(&p, MG_LAUNCH_ALIGN, n ? n : 1) ? NULL : p;
    CUdeviceptr d = 0;
    return cu.mem_alloc(&d, n ? n : 1) ? NULL : (void *)(uintptr_t)d;
}

static void buf_free(void *p) {
    if (on_host) free(p);
    else if (p) cu.mem_free((CUdeviceptr)(uintptr_t)p);
}

static int buf_put(void *dst, const void *src, size_t n) {
    if (on_host) return memcpy(dst, src, n), 0;
    return cu.htod((CUdeviceptr)(uintptr_t)dst, src, n) ? -1 : 0;
}

static int buf_get(void *dst, const void *src, size_t n) {
    if (on_host) return memcpy(dst, src, n), 0;
    return cu.dtoh(dst, (CUdeviceptr)(uintptr_t)src, n) ? -1 : 0;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* Launches c reps times on stream; *us gets the time per launch (CUDA events on the GPU,
 * the wall clock on the host). */
static mg_status time_launches(mg_ctx *ctx, mg_compiled *c, int n_in, void **in, int n_out,
                               void **out, void *ws, size_t ws_bytes, CUstream s, int reps,
                               double *us) {
    CUevent ev[2] = {NULL, NULL};
    double t0 = now_us();
    if (!on_host && (cu.event_create(&ev[0], 0) || cu.event_create(&ev[1], 0) || cu.event_record(ev[0], s)))
        return fprintf(stderr, "run-program: CUDA events failed\n"), MG_ERR_LAUNCH;
    mg_status rc = MG_OK;
    for (int i = 0; i < reps && !rc; i++) rc = mg_launch(ctx, c, n_in, in, n_out, out, ws, ws_bytes, s);
    float ms = 0;
    if (!rc && !on_host && (cu.event_record(ev[1], s) || cu.event_sync(ev[1]) || cu.event_elapsed(&ms, ev[0], ev[1])))
        return fprintf(stderr, "run-program: a launch failed on the GPU\n"), MG_ERR_LAUNCH;
    *us = (on_host ? now_us() - t0 : ms * 1e3) / (reps > 0 ? reps : 1);
    return rc;
}

/* Relative L2 error of each output against the reference; 0 when all within tolerance. */
static int report(mg_compiled *c, void **host_out, double **ref) {
    int bad = 0;
    mg_compiled_info info;
    mg_compiled_get_info(c, &info);
    for (int k = 0; k < info.n_outputs; k++) {
        mg_tensor_desc d;
        mg_compiled_output(c, k, &d);
        double num = 0, den = 0, max_abs = 0, tol = d.dtype == MG_F16 ? 1e-2 : d.dtype == MG_BF16 ? 2e-2 : 1e-4;
        int64_t nan = 0;
        for (int64_t t = 0; t < d.numel; t++) {
            double v = get(d.dtype, host_out[k], t), e = fabs(v - ref[k][t]);
            if (isnan(v) != isnan(ref[k][t])) nan++;
            else if (!isnan(v)) num += e * e, den += ref[k][t] * ref[k][t], max_abs = e > max_abs ? e : max_abs;
        }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        int ok = nan == 0 && rel <= tol;
        printf("  output %-8s rel err %.3g, max abs err %.3g (tol %.0e)%s\n", d.name, rel, max_abs, tol,
               ok ? "" : "  FAIL");
        if (nan) printf("    %lld elements NaN where the reference is not\n", (long long)nan);
        bad |= !ok;
    }
    return bad;
}

/* Random inputs in [-r, r) on the host (r the input's range=, 1 by default; as doubles and in
 * their dtype), copied to in[]. */
static int make_inputs(mg_compiled *c, unsigned long long seed, double **x, void **in) {
    mg_compiled_info info;
    mg_compiled_get_info(c, &info);
    for (int i = 0; i < info.n_inputs; i++) {
        mg_tensor_desc d;
        mg_compiled_input(c, i, &d);
        size_t bytes = (size_t)d.numel * elem(d.dtype);
        void *h = malloc(bytes ? bytes : 1);
        x[i] = malloc((size_t)d.numel * sizeof(double) + 1);
        in[i] = buf_alloc(bytes);
        if (!h || !x[i] || !in[i]) return free(h), -1;
        for (int64_t t = 0; t < d.numel; t++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            put(d.dtype, h, t, ((double)(seed >> 11) / 9007199254740992.0 * 2 - 1) * d.range);
            x[i][t] = get(d.dtype, h, t); /* the value rounded to its dtype */
        }
        int r = buf_put(in[i], h, bytes);
        free(h);
        if (r) return -1;
    }
    return 0;
}

/* Output buffers poisoned (0xFF bytes: NaN in every dtype), their host copies and room for
 * the reference. */
static int make_outputs(mg_compiled *c, void **out, void **host_out, double **ref) {
    mg_compiled_info info;
    mg_compiled_get_info(c, &info);
    for (int k = 0; k < info.n_outputs; k++) {
        mg_tensor_desc d;
        mg_compiled_output(c, k, &d);
        size_t bytes = (size_t)d.numel * elem(d.dtype);
        if (!(host_out[k] = malloc(bytes ? bytes : 1)) || !(out[k] = buf_alloc(bytes)) ||
            !(ref[k] = malloc((size_t)d.numel * sizeof(double) + 1)))
            return -1;
        memset(host_out[k], 0xFF, bytes);
        if (buf_put(out[k], host_out[k], bytes)) return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    int reps = -1, a = 1, megakernel = 0;
    unsigned long long seed = 1;
    for (; a < argc && argv[a][0] == '-' && argv[a][1]; a++) {
        if (!strcmp(argv[a], "--c")) on_host = 1;
        else if (!strcmp(argv[a], "--reps") && a + 1 < argc) reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--seed") && a + 1 < argc) seed = strtoull(argv[++a], NULL, 0);
        else if (!strcmp(argv[a], "--megakernel")) megakernel = 1;
        else break;
    }
    if (a >= argc || argc - a > 2) {
        fprintf(stderr, "usage: run-program [--c] [--reps N] [--seed S] [--megakernel] PROGRAM.mu [UGRAPH.mu]\n");
        return 2;
    }
    if (reps < 0) reps = on_host ? 3 : 100;
    if (!on_host && cuda_open()) return 1;
    mg_ctx *ctx = mg_ctx_new();
    mg_program *prog = NULL, *ug = NULL;
    mg_compiled *c = NULL;
    mg_compile_opts o = {.target = on_host ? MG_TARGET_C : MG_TARGET_CUDA, .opt = {.persist = megakernel ? 2 : 0}};
    mg_compiled_info info;
    void *in[MAX_IO] = {0}, *out[MAX_IO] = {0}, *host_out[MAX_IO] = {0}, *ws = NULL;
    double *x[MAX_IO] = {0}, *ref[MAX_IO] = {0}, us = 0;
    CUstream s = NULL;
    int bad = 1;
    double t0 = now_us();
    mg_status rc = mg_program_load(ctx, argv[a], &prog);
    if (!rc && a + 1 < argc) rc = mg_program_load(ctx, argv[a + 1], &ug);
    if (!rc) rc = mg_compile(ctx, prog, ug, &o, &c);
    if (rc) goto done;
    mg_compiled_get_info(c, &info);
    printf("%s: compiled for %s in %.0f ms%s: %d inputs, %d outputs, %d launches, workspace %zu bytes\n",
           argv[a + (a + 1 < argc)], info.device, (now_us() - t0) / 1e3, info.cached ? " (from the compile cache)" : "",
           info.n_inputs, info.n_outputs, info.n_launches, info.workspace_bytes);
    if (info.n_inputs > MAX_IO || info.n_outputs > MAX_IO) goto done;
    if (make_inputs(c, seed, x, in) || make_outputs(c, out, host_out, ref)) goto oom;
    if (info.workspace_bytes && !(ws = buf_alloc(info.workspace_bytes))) goto oom;
    if (!on_host && cu.stream_create(&s, 1 /* non-blocking */)) goto oom;
    rc = mg_eval_float(ctx, prog, 0, (const double *const *)x, ref);
    if (!rc) rc = time_launches(ctx, c, info.n_inputs, in, info.n_outputs, out, ws, info.workspace_bytes, s, 1, &us);
    if (!rc && !on_host && cu.stream_sync(s)) rc = MG_ERR_LAUNCH;
    if (!rc) rc = mg_compiled_check(ctx, c, ws); /* a persistent launch's watchdog */
    for (int k = 0; k < info.n_outputs && !rc; k++) {
        mg_tensor_desc d;
        mg_compiled_output(c, k, &d);
        if (buf_get(host_out[k], out[k], (size_t)d.numel * elem(d.dtype))) rc = MG_ERR_LAUNCH;
    }
    if (!rc) bad = report(c, host_out, ref);
    if (!rc && reps > 0)
        rc = time_launches(ctx, c, info.n_inputs, in, info.n_outputs, out, ws, info.workspace_bytes, s, reps, &us);
    if (!rc && reps > 0) rc = mg_compiled_check(ctx, c, ws); /* time_launches synchronised */
    if (!rc && reps > 0) printf("  time per launch %.2f us (%d launches on one stream)\n", us, reps);
    goto done;
oom:
    fprintf(stderr, "run-program: out of %s memory\n", on_host ? "host" : "device");
done:
    if (rc) fprintf(stderr, "run-program: %s: %s\n", mg_status_name(rc), mg_ctx_error(ctx));
    for (int i = 0; i < MAX_IO; i++) {
        buf_free(in[i]), buf_free(out[i]);
        free(x[i]), free(ref[i]), free(host_out[i]);
    }
    buf_free(ws);
    mg_compiled_free(c);
    mg_program_free(ug);
    mg_program_free(prog);
    mg_ctx_free(ctx);
    return rc || bad ? 1 : 0;
}
