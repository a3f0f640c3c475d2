/* rt-faults: the GPU runtime on a real device (make test-gpu, through the device tool).
 * Compile errors, a shared-memory request past the opt-in limit, a kernel fault and the
 * recovery after it, exact results of a simple kernel, launch timing and CUDA graph replay.
 * Prints one "ok"/"FAIL" line per check and "N passed, N failed"; exits 77 without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

static const char *KERNELS =
    "extern \"C\" __global__ void k_affine(const float *x, float *y, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void k_smem(float *y) {\n"
    "    extern __shared__ float s[];\n"
    "    s[threadIdx.x] = (float)threadIdx.x;\n"
    "    __syncthreads();\n"
    "    y[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void k_fault(float *y) {\n"
    "    volatile float *p = (volatile float *)0x10;\n"
    "    p[threadIdx.x] = y[threadIdx.x];\n"
    "}\n";

static const char *BROKEN = "extern \"C\" __global__ void k_bad(float *y) { y[0] = ; }\n";

enum { N = 1 << 20, BLOCK = 256, SMEM_THREADS = 256 };

static int n_pass, n_fail;

static void report(int ok, const char *what, const char *detail) {
    int k = n_pass + n_fail + 1;
    if (ok) n_pass++;
    else n_fail++;
    printf("%s %d %s%s%s\n", ok ? "ok  " : "FAIL", k, what, detail && *detail ? ": " : "",
           detail ? detail : "");
    fflush(stdout);
}

/* Everything one round of checks needs; freed by state_free. */
typedef struct state {
    rt_gpu *g;
    mg_ctx ctx;
    void *cubin;
    size_t cubin_size;
    rt_module *m;
    rt_dptr x, y;
    float *hx, *hy;
} state;

/* (1) a syntax error is MG_ERR_COMPILE with a log; then the real kernels compile. */
static int check_compile(state *s) {
    const rt_gpu_info *in = rt_gpu_get_info(s->g);
    strbuf log = {0};
    void *img = NULL;
    size_t n = 0;
    mg_status rc = rt_nvrtc_compile(&s->ctx, BROKEN, in->arch, &img, &n, NULL, &log);
    report(rc == MG_ERR_COMPILE && log.len > 0, "syntax error -> MG_ERR_COMPILE with a log",
           rc == MG_ERR_COMPILE ? "" : s->ctx.msg);
    sb_free(&log);
    base_free(img);
    rc = rt_nvrtc_compile(&s->ctx, KERNELS, in->arch, &s->cubin, &s->cubin_size, NULL, NULL);
    if (rc) printf("cannot compile the test kernels: %s\n", s->ctx.msg);
    return rc ? -1 : 0;
}

/* (2) smem past the opt-in limit is refused before launching; 64 KB (> 48 KB) works. */
static void check_smem(state *s) {
    const rt_gpu_info *in = rt_gpu_get_info(s->g);
    unsigned grid[3] = {1, 1, 1};
    void *params[] = {&s->y};
    mg_status rc = rt_launch(s->g, &s->ctx, s->m, "k_smem", grid, SMEM_THREADS,
                             (size_t)in->smem_optin + 1024, params, 0, NULL);
    report(rc == MG_ERR_LAUNCH && strstr(s->ctx.msg, "opt-in"),
           "smem = optin + 1 KB -> MG_ERR_LAUNCH", s->ctx.msg);
    int bad = 0;
    rc = rt_fill(s->g, &s->ctx, s->y, 0xFF, SMEM_THREADS * sizeof(float));
    if (!rc) rc = rt_launch(s->g, &s->ctx, s->m, "k_smem", grid, SMEM_THREADS, 64 * 1024, params, 0, NULL);
    if (!rc) rc = rt_sync(s->g, &s->ctx);
    if (!rc) rc = rt_download(s->g, &s->ctx, s->hy, s->y, SMEM_THREADS * sizeof(float));
    for (int i = 0; !rc && i < SMEM_THREADS; i++) bad += s->hy[i] != (float)(SMEM_THREADS - 1 - i);
    report(!rc && !bad, "the process goes on: 64 KB of dynamic smem launches and is right",
           rc ? s->ctx.msg : "");
}

/* (3) a kernel writing through 0x10: the launch is accepted, rt_sync names the fault. */
static void check_fault(state *s) {
    unsigned grid[3] = {1, 1, 1};
    void *params[] = {&s->y};
    mg_status rc = rt_launch(s->g, &s->ctx, s->m, "k_fault", grid, 32, 0, params, 0, NULL);
    if (rc) {
        report(0, "faulting kernel launches", s->ctx.msg);
        return;
    }
    rc = rt_sync(s->g, &s->ctx);
    report(rc == MG_ERR_LAUNCH && strstr(s->ctx.msg, "CUDA_ERROR_"),
           "invalid write -> rt_sync gives MG_ERR_LAUNCH naming the error", s->ctx.msg);
    /* Everything made before the fault is gone: freeing it must only free host memory. */
    rt_module_free(s->g, s->m);
    rt_free_dev(s->g, s->x);
    rt_free_dev(s->g, s->y);
    s->m = NULL, s->x = s->y = 0;
}

/* Fresh module and buffers; uploads random x and poisons y. */
static mg_status setup(state *s) {
    mg_status rc = rt_module_load(s->g, &s->ctx, s->cubin, s->cubin_size, &s->m);
    if (!rc) rc = rt_alloc(s->g, &s->ctx, N * sizeof(float), &s->x);
    if (!rc) rc = rt_alloc(s->g, &s->ctx, N * sizeof(float), &s->y);
    if (!rc) rc = rt_upload(s->g, &s->ctx, s->x, s->hx, N * sizeof(float));
    return rc;
}

/* Downloads y and compares it with 2x + 1 computed here; returns the number of mismatches
 * (N + 1 if the download failed). */
static int wrong(state *s) {
    memset(s->hy, 0, N * sizeof(float));
    if (rt_download(s->g, &s->ctx, s->hy, s->y, N * sizeof(float))) return N + 1;
    int bad = 0;
    for (int i = 0; i < N; i++) bad += s->hy[i] != 2.0f * s->hx[i] + 1.0f;
    return bad;
}

static mg_status launch_affine(state *s) {
    unsigned grid[3] = {(N + BLOCK - 1) / BLOCK, 1, 1};
    int n = N;
    void *params[] = {&s->x, &s->y, &n};
    return rt_launch(s->g, &s->ctx, s->m, "k_affine", grid, BLOCK, 0, params, 0, NULL);
}

/* (4) after the fault the same handle refuses work cleanly: CUDA cannot recover the context
 * in-process, so the caller gets MG_ERR_LAUNCH, not a crash. */
static void check_lost(state *s) {
    rt_dptr p = 0;
    mg_status rc = rt_alloc(s->g, &s->ctx, 1024, &p);
    report(rc == MG_ERR_LAUNCH, "after the fault the lost context gives MG_ERR_LAUNCH", s->ctx.msg);
    rt_free_dev(s->g, p);
}

/* (5) in a fresh process (rt-faults --after): new module and buffers give exact results. */
static void check_after_fault(state *s) {
    mg_status rc = setup(s);
    if (!rc) rc = rt_fill(s->g, &s->ctx, s->y, 0xFF, N * sizeof(float));
    if (!rc) rc = launch_affine(s);
    if (!rc) rc = rt_sync(s->g, &s->ctx);
    int bad = rc ? -1 : wrong(s);
    char detail[2200];
    snprintf(detail, sizeof detail, "%d wrong of %d%s%s", bad, N, rc ? ": " : "",
             rc ? s->ctx.msg : "");
    report(!rc && bad == 0, "after the fault: y = 2x + 1 on 1M floats is exact", detail);
}

/* (5) mean time of 100 launches with the event timer. */
static void check_timing(state *s) {
    double ms = 0;
    mg_status rc = rt_timer_start(s->g, &s->ctx);
    for (int i = 0; !rc && i < 100; i++) rc = launch_affine(s);
    if (!rc) rc = rt_timer_stop(s->g, &s->ctx, &ms);
    if (!rc) rc = rt_sync(s->g, &s->ctx);
    char detail[2200];
    snprintf(detail, sizeof detail, "mean %.2f us per launch (1M floats)%s%s", ms * 1e3 / 100,
             rc ? ": " : "", rc ? s->ctx.msg : "");
    report(!rc && ms > 0, "timing 100 launches", detail);
}

/* (6) 10 launches captured into a graph, replayed once, give the same exact result. */
static void check_graph(state *s) {
    rt_graph *gr = NULL;
    mg_status rc = rt_fill(s->g, &s->ctx, s->y, 0xFF, N * sizeof(float));
    if (!rc) rc = rt_sync(s->g, &s->ctx);
    if (!rc) rc = rt_capture_begin(s->g, &s->ctx);
    for (int i = 0; !rc && i < 10; i++) rc = launch_affine(s);
    if (!rc) rc = rt_capture_end(s->g, &s->ctx, &gr);
    int captured_ok = !rc && wrong(s) == N; /* nothing ran yet: y is still all poison */
    if (!rc) rc = rt_graph_launch(s->g, &s->ctx, gr);
    if (!rc) rc = rt_sync(s->g, &s->ctx);
    int bad = rc ? -1 : wrong(s);
    char detail[2200];
    snprintf(detail, sizeof detail, "%d wrong%s%s%s", bad,
             captured_ok ? "" : ", capture ran the kernels", rc ? ": " : "",
             rc ? s->ctx.msg : "");
    report(!rc && bad == 0 && captured_ok, "CUDA graph of 10 launches replays exactly", detail);
    rt_graph_free(s->g, gr);
}

static void state_free(state *s) {
    rt_free_dev(s->g, s->x);
    rt_free_dev(s->g, s->y);
    rt_module_free(s->g, s->m);
    rt_gpu_free(s->g);
    base_free(s->cubin);
    free(s->hx);
    free(s->hy);
}

int main(int argc, char **argv) {
    int after = argc > 1 && !strcmp(argv[1], "--after");
    state s;
    memset(&s, 0, sizeof s);
    mg_status rc = rt_gpu_open(&s.ctx, &s.g);
    if (rc == MG_ERR_NO_DEVICE) {
        printf("no GPU: %s\n", s.ctx.msg);
        return 77;
    }
    if (rc) {
        printf("rt_gpu_open: %s\n", s.ctx.msg);
        return 1;
    }
    const rt_gpu_info *in = rt_gpu_get_info(s.g);
    printf("%s: cc %d.%d, %d SMs, %lld B opt-in smem, %.1f GiB, %s\n", in->name, in->cc_major,
           in->cc_minor, in->n_sm, (long long)in->smem_optin, in->mem_bytes / 1073741824.0,
           in->arch);
    s.hx = malloc(N * sizeof(float)), s.hy = malloc(N * sizeof(float));
    srand(12345);
    for (int i = 0; i < N; i++) s.hx[i] = (float)rand() / RAND_MAX * 2.0f - 1.0f + 1e-3f;
    if (check_compile(&s) || setup(&s)) {
        printf("setup failed: %s\n", s.ctx.msg);
        n_fail++;
    } else if (after) {
        check_after_fault(&s);
        check_timing(&s);
        check_graph(&s);
    } else {
        check_smem(&s);
        check_fault(&s);
        check_lost(&s);
        /* the process goes on: a new process gets a working GPU (checks 5-7) */
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "'%s' --after", argv[0]);
        fflush(stdout);
        int st = system(cmd);
        report(st == 0, "a fresh process after the fault passes checks 5-7", "");
    }
    state_free(&s);
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail != 0;
}
