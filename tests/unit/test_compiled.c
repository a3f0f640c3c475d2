/* The library API (src/compiled.c, docs/runtime.md): mg_compile + mg_launch through the C
 * target on host memory, against the float reference on fresh random inputs with every output
 * and the workspace poisoned first; programs lowered and with their μGraphs; the compile
 * cache's second hit; every refusal; four threads launching one handle at once. Each test
 * uses its own temporary MUGEN_CACHE_DIR and restores the caller's afterwards. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../fakecuda/fake_cuda.h"
#include "mugen.h"
#include "unit.h"

void test_compiled_c_programs(void);
void test_compiled_errors(void);
void test_compiled_threads(void);
void test_compiled_fake_gpu(void);
void test_compiled_ragged(void);
void test_compiled_ragged_attention(void);
void test_compiled_reduced(void);

enum { MAX_IO = 16 };

/* One set of buffers for a compiled program: host storage of each input and output (16-byte
 * aligned, as mg_launch wants), the workspace (256-byte aligned), the inputs as doubles and
 * the reference outputs. */
typedef struct bufset {
    int n_in, n_out;
    mg_tensor_desc in_d[MAX_IO], out_d[MAX_IO];
    void *in[MAX_IO], *out[MAX_IO], *ws;
    size_t ws_bytes;
    double *x[MAX_IO], *ref[MAX_IO];
} bufset;

static size_t elem_bytes(mg_dtype t) { return t == MG_F32 ? 4 : 2; }

static void *aligned(size_t a, size_t n) {
    void *p = NULL;
    return posix_memalign(&p, a, n ? n : 1) ? NULL : p;
}

static void store(mg_dtype t, void *dst, int64_t i, double v) {
    if (t == MG_F32) ((float *)dst)[i] = (float)v;
    else ((uint16_t *)dst)[i] = t == MG_F16 ? base_f32_to_f16((float)v) : base_f32_to_bf16((float)v);
}

static double load(mg_dtype t, const void *src, int64_t i) {
    if (t == MG_F32) return ((const float *)src)[i];
    uint16_t h = ((const uint16_t *)src)[i];
    return t == MG_F16 ? base_f16_to_f32(h) : base_bf16_to_f32(h);
}

/* Allocates s for c, draws inputs uniform in [-1, 1) (rounded to their dtype) and, when
 * prog is given, evaluates its f32 reference. Outputs and workspace start poisoned. */
static int bufset_new(bufset *s, const mg_compiled *c, const mg_program *prog, uint64_t seed) {
    mg_compiled_info info;
    memset(s, 0, sizeof *s);
    if (mg_compiled_get_info(c, &info) || info.n_inputs > MAX_IO || info.n_outputs > MAX_IO) return -1;
    s->n_in = info.n_inputs, s->n_out = info.n_outputs, s->ws_bytes = info.workspace_bytes;
    rng r = {seed};
    for (int i = 0; i < s->n_in; i++) {
        mg_compiled_input(c, i, &s->in_d[i]);
        int64_t n = s->in_d[i].numel;
        s->in[i] = aligned(16, (size_t)n * elem_bytes(s->in_d[i].dtype));
        s->x[i] = malloc((size_t)n * sizeof(double));
        for (int64_t t = 0; t < n; t++) {
            s->x[i][t] = base_round_dtype(rng_uniform(&r) * 2 - 1, s->in_d[i].dtype);
            store(s->in_d[i].dtype, s->in[i], t, s->x[i][t]);
        }
    }
    for (int k = 0; k < s->n_out; k++) {
        mg_compiled_output(c, k, &s->out_d[k]);
        size_t n = (size_t)s->out_d[k].numel;
        s->out[k] = aligned(16, n * elem_bytes(s->out_d[k].dtype));
        memset(s->out[k], 0xFF, n * elem_bytes(s->out_d[k].dtype));
        s->ref[k] = malloc(n * sizeof(double));
    }
    s->ws = aligned(MG_LAUNCH_ALIGN, s->ws_bytes);
    memset(s->ws, 0xFF, s->ws_bytes ? s->ws_bytes : 1);
    if (!prog) return 0;
    mg_ctx *ctx = mg_ctx_new();
    mg_status rc = mg_eval_float(ctx, prog, 0, (const double *const *)s->x, s->ref);
    CHECK_MSG(rc == MG_OK, "reference: %s", mg_ctx_error(ctx));
    mg_ctx_free(ctx);
    return rc ? -1 : 0;
}

static void bufset_free(bufset *s) {
    for (int i = 0; i < MAX_IO; i++) free(s->in[i]), free(s->out[i]), free(s->x[i]), free(s->ref[i]);
    free(s->ws);
}

static void poison_outputs(bufset *s) {
    for (int k = 0; k < s->n_out; k++)
        memset(s->out[k], 0xFF, (size_t)s->out_d[k].numel * elem_bytes(s->out_d[k].dtype));
}

/* Each output's relative L2 error against the reference within its dtype's tolerance, and
 * no NaN (the poison) left. */
static void compare_ref(const bufset *s, const char *what) {
    for (int k = 0; k < s->n_out; k++) {
        const mg_tensor_desc *d = &s->out_d[k];
        double num = 0, den = 0, tol = d->dtype == MG_F16 ? 1e-2 : d->dtype == MG_BF16 ? 2e-2 : 1e-4;
        int64_t bad = 0;
        for (int64_t t = 0; t < d->numel; t++) {
            double v = load(d->dtype, s->out[k], t), e = v - s->ref[k][t];
            if (v != v) bad++;
            else num += e * e, den += s->ref[k][t] * s->ref[k][t];
        }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        CHECK_MSG(bad == 0 && rel <= tol, "%s: output %s: %lld NaN, rel err %.3g (tol %.0e)", what,
                  d->name, (long long)bad, rel, tol);
    }
}

static int same_outputs(const bufset *a, const bufset *b) {
    for (int k = 0; k < a->n_out; k++)
        if (memcmp(a->out[k], b->out[k], (size_t)a->out_d[k].numel * elem_bytes(a->out_d[k].dtype)))
            return 0;
    return 1;
}

/* A fresh MUGEN_CACHE_DIR under $TMPDIR; *old gets the caller's (malloc'd, may be NULL). */
static void cache_dir_push(char *dir, size_t n, char **old) {
    const char *e = getenv("MUGEN_CACHE_DIR"), *tmp = getenv("TMPDIR");
    *old = e ? strdup(e) : NULL;
    snprintf(dir, n, "%s/mugen-api-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    setenv("MUGEN_CACHE_DIR", dir, 1);
}

static void cache_dir_pop(const char *dir, char *old) {
    char cmd[4200];
    if (old) setenv("MUGEN_CACHE_DIR", old, 1);
    else unsetenv("MUGEN_CACHE_DIR");
    free(old);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* A program from a file, or from text when `path` holds a newline. */
static mg_program *load_prog(const char *path) {
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL;
    mg_status rc = strchr(path, '\n') ? mg_program_parse(ctx, path, strlen(path), "<test>", &p)
                                      : mg_program_load(ctx, path, &p);
    CHECK_MSG(rc == MG_OK, "%s: %s", path, mg_ctx_error(ctx));
    mg_ctx_free(ctx);
    return p;
}

static mg_compiled *compile_c(const mg_program *prog, const mg_program *ug, const char *what) {
    mg_ctx *ctx = mg_ctx_new();
    mg_compile_opts o = {.target = MG_TARGET_C};
    mg_compiled *c = NULL;
    mg_status rc = mg_compile(ctx, prog, ug, &o, &c);
    CHECK_MSG(rc == MG_OK && c, "%s: mg_compile: %s", what, mg_ctx_error(ctx));
    mg_ctx_free(ctx);
    return c;
}

/* Compiles (prog, ug) for C, launches twice (outputs poisoned before each) and compares with
 * the reference; the second launch must repeat the first bit for bit (inputs untouched, no
 * state kept in the workspace), and a second compile must come from the cache. */
static void run_one(const char *prog_path, const char *ug_path, uint64_t seed) {
    mg_program *prog = load_prog(prog_path), *ug = ug_path ? load_prog(ug_path) : NULL;
    const char *what = ug_path ? ug_path : strchr(prog_path, '\n') ? "(inline program)" : prog_path;
    mg_compiled *c = prog && (ug || !ug_path) ? compile_c(prog, ug, what) : NULL;
    bufset s, s2;
    if (!c || bufset_new(&s, c, prog, seed)) goto done;
    mg_ctx *ctx = mg_ctx_new();
    mg_status rc = mg_launch(ctx, c, s.n_in, s.in, s.n_out, s.out, s.ws, s.ws_bytes, NULL);
    CHECK_MSG(rc == MG_OK, "%s: mg_launch: %s", what, mg_ctx_error(ctx));
    compare_ref(&s, what);
    bufset_new(&s2, c, NULL, seed);
    rc = mg_launch(ctx, c, s2.n_in, s2.in, s2.n_out, s2.out, s2.ws, s2.ws_bytes, NULL);
    CHECK_MSG(rc == MG_OK && same_outputs(&s, &s2), "%s: a second launch differs", what);
    mg_compiled *c2 = compile_c(prog, ug, what);
    mg_compiled_info info;
    CHECK_MSG(c2 && mg_compiled_get_info(c2, &info) == MG_OK && info.cached == 1,
              "%s: the second compile missed the cache", what);
    CHECK(mg_compiled_get_info(c, &info) == MG_OK && info.cached == 0);
    CHECK(info.target == MG_TARGET_C && info.n_launches > 0 && info.align == 16);
    mg_compiled_free(c2);
    mg_ctx_free(ctx);
    bufset_free(&s2);
    bufset_free(&s);
done:
    mg_compiled_free(c);
    mg_program_free(ug);
    mg_program_free(prog);
}

/* Three dtypes, three outputs (a matmul with an epilogue, a row sum, an elementwise one),
 * inputs declared in an order the kernels do not read them in. */
static const char MIXED[] = "input H : f16[64, 48]\ninput A : f32[64, 96]\ninput B : bf16[96, 48]\n"
                            "O = matmul(A, B) + H\nR = sum(exp(H) * 0.5, dim=1)\nQ = B * 2\n"
                            "output R, O, Q\n";

/* The examples whose generated C runs in a second or less (the C target's blocks run one
 * after another here), lowered and with their μGraphs, and MIXED lowered. */
void test_compiled_c_programs(void) {
    static const char *const progs[][2] = {
        {"examples/lora.mu", NULL},
        {"examples/lora.mu", "examples/ugraphs/lora.mu"},
        {"examples/ntrans_b1.mu", NULL},
        {"examples/ntrans_b1.mu", "examples/ugraphs/ntrans_b1.mu"},
        {"examples/rmsnorm_linear_b1.mu", NULL},
        {MIXED, NULL},
    };
    char dir[4096], *old;
    cache_dir_push(dir, sizeof dir, &old);
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
        run_one(progs[i][0], progs[i][1], 0x6170690000ull + i);
    cache_dir_pop(dir, old);
}

/* mg_launch's refusals on c (a compiled lora, s its good buffers): each names the problem. */
static void launch_refusals(mg_compiled *c, bufset *s) {
    mg_ctx *ctx = mg_ctx_new();
    void *bad_in[MAX_IO], *bad_out[MAX_IO];
    memcpy(bad_in, s->in, sizeof bad_in), memcpy(bad_out, s->out, sizeof bad_out);
    static const struct {
        const char *needle;
    } want[] = {{"3 inputs"}, {"outputs given"}, {"NULL input array"}, {"is NULL"},
                {"not aligned to 16"}, {"too small"}, {"not aligned to 256"}, {"no compiled"}};
    for (int t = 0; t < 8; t++) {
        mg_status rc;
        void *ws = s->ws;
        size_t ws_bytes = s->ws_bytes;
        memcpy(bad_in, s->in, sizeof bad_in);
        if (t == 3) bad_in[1] = NULL;
        if (t == 4) bad_out[0] = (char *)s->out[0] + 2;
        if (t == 5) ws_bytes = s->ws_bytes ? s->ws_bytes - 1 : 0, ws = ws_bytes ? ws : NULL;
        if (t == 6) ws = (char *)s->ws + 16;
        if (t == 0) rc = mg_launch(ctx, c, s->n_in - 1, bad_in, s->n_out, s->out, ws, ws_bytes, NULL);
        else if (t == 1) rc = mg_launch(ctx, c, s->n_in, bad_in, s->n_out + 1, s->out, ws, ws_bytes, NULL);
        else if (t == 2) rc = mg_launch(ctx, c, s->n_in, NULL, s->n_out, s->out, ws, ws_bytes, NULL);
        else if (t == 7) rc = mg_launch(ctx, NULL, s->n_in, bad_in, s->n_out, s->out, ws, ws_bytes, NULL);
        else rc = mg_launch(ctx, c, s->n_in, bad_in, s->n_out, t == 4 ? bad_out : s->out, ws, ws_bytes, NULL);
        if (t == 0) CHECK(strstr(mg_ctx_error(ctx), "has 4") != NULL); /* the program's count */
        CHECK_MSG(rc == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), want[t].needle),
                  "refusal %d: status %d, '%s'", t, rc, mg_ctx_error(ctx));
        bad_out[0] = s->out[0];
    }
    mg_ctx_free(ctx);
}

/* Compile-time refusals and the queries' bounds. */
static void compile_refusals(const mg_program *lora, const mg_program *other) {
    mg_ctx *ctx = mg_ctx_new();
    mg_compiled *c = NULL;
    mg_compile_opts o = {.target = MG_TARGET_C};
    CHECK(mg_compile(ctx, NULL, NULL, &o, &c) == MG_ERR_INVALID && !c);
    CHECK(mg_compile(ctx, lora, NULL, &o, NULL) == MG_ERR_INVALID);
    mg_status rc = mg_compile(ctx, lora, other, &o, &c); /* not lora's μGraph */
    CHECK_MSG(rc == MG_ERR_INVALID && !c, "mismatched μGraph: %d, %s", rc, mg_ctx_error(ctx));
    mg_program *pass = load_prog("input X : f16[2, 4]\ninput Z : f16[2, 4]\nY = exp(X)\noutput Y, Z\n");
    rc = pass ? mg_compile(ctx, pass, NULL, &o, &c) : MG_OK; /* Z: an input handed back */
    CHECK_MSG(rc == MG_ERR_UNSUPPORTED && !c && strstr(mg_ctx_error(ctx), "output 'Z' is an input"),
              "an input as output: %d, %s", rc, mg_ctx_error(ctx));
    mg_program_free(pass);
    o.target = (mg_target)7;
    CHECK(mg_compile(ctx, lora, NULL, &o, &c) == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), "target"));
    o.target = MG_TARGET_CUDA, o.device = "no-such-gpu";
    CHECK(mg_compile(ctx, lora, NULL, &o, &c) == MG_ERR_INVALID && !c);
    mg_tensor_desc d;
    mg_compiled_info info;
    CHECK(mg_compiled_input(NULL, 0, &d) == MG_ERR_INVALID);
    CHECK(mg_compiled_get_info(NULL, &info) == MG_ERR_INVALID);
    mg_compiled_free(NULL);
    mg_ctx_free(ctx);
}

/* The CUDA target here: compiling for a named device needs only NVRTC; launching needs a
 * driver and a GPU, and without them is MG_ERR_NO_DEVICE, not a crash. */
static void cuda_without_gpu(const mg_program *lora) {
    mg_ctx *ctx = mg_ctx_new();
    mg_compiled *c = NULL;
    mg_compile_opts o = {.target = MG_TARGET_CUDA, .device = "H100"};
    mg_status rc = mg_compile(ctx, lora, NULL, &o, &c);
    const char *no_nvrtc = getenv("MUGEN_NO_NVRTC");
    if (rc == MG_ERR_NO_DEVICE && no_nvrtc && !strcmp(no_nvrtc, "1")) goto done;
    CHECK_MSG(rc == MG_OK, "CUDA compile for H100: %s", mg_ctx_error(ctx));
    mg_compiled_info info;
    CHECK(c && mg_compiled_get_info(c, &info) == MG_OK && strstr(info.device, "sm_90a"));
    bufset s;
    if (c && !bufset_new(&s, c, NULL, 1)) {
        rc = mg_launch(ctx, c, s.n_in, s.in, s.n_out, s.out, s.ws, s.ws_bytes, NULL);
        /* host pointers on a real GPU would fault: run only where there is none */
        CHECK_MSG(rc == MG_ERR_NO_DEVICE || rc == MG_OK, "launch: %d %s", rc, mg_ctx_error(ctx));
        bufset_free(&s);
    }
done:
    mg_compiled_free(c);
    mg_ctx_free(ctx);
}

void test_compiled_errors(void) {
    char dir[4096], *old;
    cache_dir_push(dir, sizeof dir, &old);
    mg_program *lora = load_prog("examples/lora.mu"), *other = load_prog("examples/gated_mlp.mu");
    mg_compiled *c = lora ? compile_c(lora, NULL, "lora") : NULL;
    bufset s;
    if (c && !bufset_new(&s, c, NULL, 7)) {
        launch_refusals(c, &s);
        bufset_free(&s);
    }
    if (lora && other) compile_refusals(lora, other);
    /* only where no GPU could take the host pointers (the CPU test machine) */
    mg_ctx *probe = mg_ctx_new();
    mg_compiled *pc = NULL;
    mg_compile_opts po = {.target = MG_TARGET_CUDA};
    mg_status prc = lora ? mg_compile(probe, lora, NULL, &po, &pc) : MG_OK;
    if (lora && prc == MG_ERR_NO_DEVICE) cuda_without_gpu(lora);
    mg_compiled_free(pc);
    mg_ctx_free(probe);
    mg_compiled_free(c);
    mg_program_free(other);
    mg_program_free(lora);
    cache_dir_pop(dir, old);
}

typedef struct worker {
    mg_compiled *c;
    bufset s;
    int reps;
    mg_status rc;
    char msg[256];
} worker;

static void *work(void *arg) {
    worker *w = arg;
    mg_ctx *ctx = mg_ctx_new();
    for (int i = 0; i < w->reps && !w->rc; i++) {
        poison_outputs(&w->s);
        w->rc = mg_launch(ctx, w->c, w->s.n_in, w->s.in, w->s.n_out, w->s.out, w->s.ws,
                          w->s.ws_bytes, NULL);
    }
    snprintf(w->msg, sizeof w->msg, "%s", mg_ctx_error(ctx));
    mg_ctx_free(ctx);
    return NULL;
}

typedef struct compiler {
    const mg_program *prog, *ug;
    mg_compiled *c;
} compiler;

static void *compile_work(void *arg) {
    compiler *w = arg;
    w->c = compile_c(w->prog, w->ug, "a compile in a thread");
    return NULL;
}

/* Three threads compiling the same program at once; each handle gives the lone launch's
 * outputs. */
static void concurrent_compiles(const mg_program *prog, const mg_program *ug, const bufset *lone) {
    compiler w[3] = {{prog, ug, NULL}, {prog, NULL, NULL}, {prog, ug, NULL}};
    pthread_t th[3];
    for (int t = 0; t < 3; t++) CHECK(pthread_create(&th[t], NULL, compile_work, &w[t]) == 0);
    for (int t = 0; t < 3; t++) pthread_join(th[t], NULL);
    mg_ctx *ctx = mg_ctx_new();
    for (int t = 0; t < 3; t++) {
        bufset s;
        if (!w[t].c || bufset_new(&s, w[t].c, prog, 11)) continue;
        CHECK(mg_launch(ctx, w[t].c, s.n_in, s.in, s.n_out, s.out, s.ws, s.ws_bytes, NULL) == MG_OK);
        if (w[t].ug) CHECK_MSG(same_outputs(lone, &s), "a handle compiled in thread %d differs", t);
        else compare_ref(&s, "lowered, compiled in a thread");
        bufset_free(&s);
        mg_compiled_free(w[t].c);
    }
    mg_ctx_free(ctx);
}

/* One handle, four threads each with its own workspace and outputs and the same inputs,
 * launching at once: every thread's outputs equal a lone launch's, bit for bit. Then
 * compiles in three threads at once. */
void test_compiled_threads(void) {
    char dir[4096], *old;
    cache_dir_push(dir, sizeof dir, &old);
    mg_program *prog = load_prog("examples/lora.mu"), *ug = load_prog("examples/ugraphs/lora.mu");
    mg_compiled *c = prog && ug ? compile_c(prog, ug, "lora") : NULL;
    worker w[4];
    bufset lone;
    if (!c || bufset_new(&lone, c, prog, 11)) goto done;
    mg_ctx *ctx = mg_ctx_new();
    CHECK(mg_launch(ctx, c, lone.n_in, lone.in, lone.n_out, lone.out, lone.ws, lone.ws_bytes, NULL) == MG_OK);
    compare_ref(&lone, "lone launch");
    mg_ctx_free(ctx);
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].c = c, w[t].reps = 3;
        bufset_new(&w[t].s, c, NULL, 11); /* the same seed: the same inputs */
        CHECK(pthread_create(&th[t], NULL, work, &w[t]) == 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK_MSG(w[t].rc == MG_OK, "thread %d: %s", t, w[t].msg);
        CHECK_MSG(same_outputs(&lone, &w[t].s), "thread %d's outputs differ from a lone launch's", t);
        bufset_free(&w[t].s);
    }
    concurrent_compiles(prog, ug, &lone);
    bufset_free(&lone);
done:
    mg_compiled_free(c);
    mg_program_free(ug);
    mg_program_free(prog);
    cache_dir_pop(dir, old);
}

/* ---- the CUDA path against a fake driver (tests/fakecuda) ---- */

typedef struct fake_api {
    fake_stats_fn stats;
    fake_launch_fn launch;
    fake_set_current_fn set_current;
} fake_api;

/* Points MUGEN_LIBCUDA at fake-cuda.so beside this runner and resolves its inspection
 * functions. 0, or -1 when it is missing (make builds it with the runner). */
static int fake_open(fake_api *f) {
    char exe[4096], path[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(path, sizeof path, "%s/fake-cuda.so", exe);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL); /* the same handle the runtime gets */
    if (!h) return -1;
    setenv("MUGEN_LIBCUDA", path, 1);
    void *a = dlsym(h, "fake_cuda_stats"), *b = dlsym(h, "fake_cuda_launch"), *c = dlsym(h, "fake_cuda_set_current");
    memcpy(&f->stats, &a, sizeof a), memcpy(&f->launch, &b, sizeof b), memcpy(&f->set_current, &c, sizeof c);
    return a && b && c ? 0 : -1;
}

/* Launches since `from` in context cu on stream s: each argument is one of the caller's
 * buffers or inside the workspace; every input is read and every output written by some
 * launch. Returns how many launches there were. */
static int check_launches(const fake_api *f, int from, void *cu, void *s, const bufset *b) {
    fake_stats st;
    f->stats(&st);
    int seen[2 * MAX_IO] = {0};
    for (int i = from; i < st.launches; i++) {
        const fake_launch *L = f->launch(i);
        CHECK_MSG(L && L->ctx == cu && L->stream == s && L->n_args > 0, "launch %d: context or stream", i);
        for (int a = 0; L && a < L->n_args; a++) {
            uint64_t v = L->args[a];
            int which = -1;
            for (int k = 0; k < b->n_in + b->n_out; k++)
                if (v == (uintptr_t)(k < b->n_in ? b->in[k] : b->out[k - b->n_in])) which = k;
            if (which >= 0) seen[which] = 1;
            CHECK_MSG(which >= 0 || (v >= (uintptr_t)b->ws && v < (uintptr_t)b->ws + b->ws_bytes),
                      "%s argument %d: 0x%llx is no buffer of the caller", L->name, a, (unsigned long long)v);
        }
    }
    for (int k = 0; k < b->n_in + b->n_out; k++) CHECK_MSG(seen[k], "buffer %d never passed to a kernel", k);
    return st.launches - from;
}

static void *fake_work(void *arg) {
    worker *w = arg;
    mg_ctx *ctx = mg_ctx_new();
    for (int i = 0; i < w->reps && !w->rc; i++)
        w->rc = mg_launch(ctx, w->c, w->s.n_in, w->s.in, w->s.n_out, w->s.out, w->s.ws, w->s.ws_bytes,
                          (void *)0x5000);
    mg_ctx_free(ctx);
    return NULL;
}

/* Buffers at made-up device addresses (the fake never reads them): input i at 1 GiB + i MiB,
 * output k at 2 GiB + k MiB, the workspace at 3 GiB. */
static void fake_buffers(bufset *b, const mg_compiled *c) {
    mg_compiled_info info;
    memset(b, 0, sizeof *b);
    mg_compiled_get_info(c, &info);
    b->n_in = info.n_inputs, b->n_out = info.n_outputs, b->ws_bytes = info.workspace_bytes;
    for (int i = 0; i < b->n_in; i++) b->in[i] = (void *)(uintptr_t)((1ull << 30) + ((uint64_t)i << 20));
    for (int k = 0; k < b->n_out; k++) b->out[k] = (void *)(uintptr_t)((2ull << 30) + ((uint64_t)k << 20));
    b->ws = (void *)(uintptr_t)(3ull << 30);
}

/* The lowered lora as a persistent launch: its counters zeroed on the stream before every
 * launch, inside the workspace. */
static void fake_persistent(const fake_api *f, const mg_program *lora) {
    mg_ctx *ctx = mg_ctx_new();
    mg_compiled *c = NULL;
    mg_compile_opts o = {.target = MG_TARGET_CUDA};
    o.opt.persist = 1;
    mg_status rc = mg_compile(ctx, lora, NULL, &o, &c);
    CHECK_MSG(rc == MG_OK, "persistent compile: %s", mg_ctx_error(ctx));
    bufset b;
    fake_stats st0, st;
    if (!c) goto done;
    fake_buffers(&b, c);
    f->stats(&st0);
    for (int r = 0; r < 2; r++)
        CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, (void *)0x5000) == MG_OK);
    f->stats(&st);
    CHECK_MSG(st.memsets == st0.memsets + 2 && st.memset_bytes > 0 && st.memset_ptr >= (uintptr_t)b.ws &&
                  st.memset_ptr + st.memset_bytes <= (uintptr_t)b.ws + b.ws_bytes,
              "counters: %d memsets, at 0x%llx", st.memsets - st0.memsets, (unsigned long long)st.memset_ptr);
done:
    mg_compiled_free(c);
    mg_ctx_free(ctx);
}

/* A plan whose product loop loads by TMA (opt/tma.c: bias_relu's 64 x 64 tiles on the fake
 * H100): its one kernel gets the four buffers, then a tensor map each for X's and W's tiles,
 * made for the caller's X and W (the fake driver writes the address first, which the launch
 * records as the argument); with --no-tma (opt.no_tma) the same launch has no maps. */
static void fake_tma(const fake_api *f) {
    mg_program *p = load_prog("bench/suite/bias_relu.mu");
    for (int no = 0; no < 2 && p; no++) {
        mg_ctx *ctx = mg_ctx_new();
        mg_compiled *c = NULL;
        mg_compile_opts o = {.target = MG_TARGET_CUDA};
        o.opt.no_tma = no;
        mg_status rc = mg_compile(ctx, p, NULL, &o, &c);
        CHECK_MSG(rc == MG_OK, "compile: %s", mg_ctx_error(ctx));
        bufset b;
        fake_stats st;
        if (c) {
            fake_buffers(&b, c);
            f->stats(&st);
            int from = st.launches;
            CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, (void *)0x5000) == MG_OK);
            CHECK(check_launches(f, from, f->launch(from)->ctx, (void *)0x5000, &b) == 1);
            const fake_launch *L = f->launch(from);
            CHECK_MSG(L && L->n_args == (no ? 4 : 6), "%d arguments", L ? L->n_args : -1);
            if (L && !no && L->n_args == 6)
                CHECK(L->args[4] == (uintptr_t)b.in[0] && L->args[5] == (uintptr_t)b.in[1]);
            /* each launch's maps are made for that launch's buffers: X moved, its map follows */
            void *x0 = b.in[0];
            for (int r = 0; r < 3 && !no; r++) {
                b.in[0] = (void *)((uintptr_t)x0 + (r == 1 ? 4096u : 0u));
                CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, (void *)0x5000) == MG_OK);
                L = f->launch(from + 1 + r);
                CHECK_MSG(L && L->n_args == 6 && L->args[4] == (uintptr_t)b.in[0] && L->args[5] == (uintptr_t)b.in[1],
                          "launch %d: X's map at 0x%llx for 0x%llx", r, L ? (unsigned long long)L->args[4] : 0ull,
                          (unsigned long long)(uintptr_t)b.in[0]);
            }
            b.in[0] = x0;
        }
        mg_compiled_free(c);
        mg_ctx_free(ctx);
    }
    mg_program_free(p);
}

/* mg_launch's CUDA graphs (rt_ext_graph_run): the first launch with a set of buffers is
 * captured once, later ones with the same buffers replay it (the recorded launches carry the
 * caller's stream and buffers); moved buffers get a graph of their own and moving back finds
 * the first again; a stream the caller captures takes the launches directly; addresses that
 * keep changing turn the graphs off (launched directly, still on the right buffers);
 * MUGEN_LAUNCH_GRAPH=0 never captures; freeing destroys every graph. */
static void fake_graphs(const fake_api *f) {
    mg_program *p = load_prog("bench/suite/bias_relu.mu");
    void *h = dlopen(getenv("MUGEN_LIBCUDA"), RTLD_NOW | RTLD_LOCAL);
    void *bc = h ? dlsym(h, "cuStreamBeginCapture_v2") : NULL, *ec = h ? dlsym(h, "cuStreamEndCapture") : NULL;
    int (*begin)(void *, int), (*end)(void *, void **);
    memcpy(&begin, &bc, sizeof bc), memcpy(&end, &ec, sizeof ec);
    for (int off = 0; off < 2 && p && begin && end; off++) {
        if (off) setenv("MUGEN_LAUNCH_GRAPH", "0", 1);
        mg_ctx *ctx = mg_ctx_new();
        mg_compiled *c = NULL;
        mg_compile_opts o = {.target = MG_TARGET_CUDA};
        CHECK_MSG(mg_compile(ctx, p, NULL, &o, &c) == MG_OK, "compile: %s", mg_ctx_error(ctx));
        unsetenv("MUGEN_LAUNCH_GRAPH");
        bufset b;
        fake_stats s0, st;
        if (!c) goto next;
        fake_buffers(&b, c);
        f->stats(&s0);
        void *s = (void *)0x5000, *x0 = b.in[0];
        for (int r = 0; r < 3; r++) CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, s) == MG_OK);
        f->stats(&st);
        CHECK_MSG(st.captures - s0.captures == (off ? 0 : 1) && st.graph_launches - s0.graph_launches == (off ? 0 : 3),
                  "graphs %s: %d captures, %d graph launches for 3 launches", off ? "off" : "on",
                  st.captures - s0.captures, st.graph_launches - s0.graph_launches);
        CHECK(check_launches(f, s0.launches, f->launch(s0.launches)->ctx, s, &b) == 3);
        b.in[0] = (void *)((uintptr_t)x0 + 4096); /* moved: a graph of its own */
        int from = st.launches;
        CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, s) == MG_OK);
        CHECK(check_launches(f, from, f->launch(from)->ctx, s, &b) == 1);
        b.in[0] = x0; /* back: the first graph again */
        CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, s) == MG_OK);
        f->stats(&st);
        CHECK_MSG(st.captures - s0.captures == (off ? 0 : 2) && st.graph_launches - s0.graph_launches == (off ? 0 : 5),
                  "%d captures, %d graph launches", st.captures - s0.captures, st.graph_launches - s0.graph_launches);
        /* a stream being captured by the caller: the launches go into the caller's graph */
        CHECK(begin((void *)0x6000, 1) == 0);
        from = st.launches;
        CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, (void *)0x6000) == MG_OK);
        void *g = NULL;
        CHECK(end((void *)0x6000, &g) == 0);
        free(g);
        f->stats(&st);
        CHECK_MSG(st.launches == from && st.captures - s0.captures == (off ? 1 : 3), "captured by the caller: %d launches, %d captures",
                  st.launches - from, st.captures - s0.captures);
        /* addresses that keep changing: graphs off after 16 misses, launches still right */
        for (int r = 0; r < 24; r++) {
            b.out[0] = (void *)((uintptr_t)b.out[0] + 4096);
            from = st.launches;
            CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, s) == MG_OK);
            f->stats(&st);
            CHECK(check_launches(f, from, f->launch(from)->ctx, s, &b) == 1);
        }
        CHECK_MSG(off ? st.captures - s0.captures == 1 : st.captures - s0.captures <= 3 + 17,
                  "%d captures for 24 new addresses", st.captures - s0.captures);
        mg_compiled_free(c);
        c = NULL;
        f->stats(&st);
        CHECK_MSG(st.graphs_live == s0.graphs_live, "%d graphs left", st.graphs_live);
    next:
        mg_compiled_free(c);
        mg_ctx_free(ctx);
    }
    if (h) dlclose(h);
    mg_program_free(p);
}

/* mg_launch_rows: a program of dim B compiled for the capacity of B = 300 (384 rows), launched
 * for 300 rows: the launches over B's rows have fewer blocks (none more), the others the
 * same; rows past the capacity or below 1, and any rows for a program of no dim, are refused
 * before anything is queued. Kernel by kernel (MUGEN_LAUNCH_GRAPH=0), so each launch is seen. */
static void fake_rows(const fake_api *f) {
    mg_program *p = load_prog("examples/dims/rmsnorm_linear.mu"), *q = load_prog("bench/suite/bias_relu.mu");
    mg_ctx *ctx = mg_ctx_new();
    mg_compiled *c = NULL, *d = NULL;
    mg_compile_opts o = {.target = MG_TARGET_CUDA};
    setenv("MUGEN_LAUNCH_GRAPH", "0", 1);
    CHECK(p && q && mg_program_bind_dim(ctx, p, "B", 300) == MG_OK);
    CHECK_MSG(p && q && mg_compile(ctx, p, NULL, &o, &c) == MG_OK && mg_compile(ctx, q, NULL, &o, &d) == MG_OK,
              "compile: %s", mg_ctx_error(ctx));
    unsetenv("MUGEN_LAUNCH_GRAPH");
    if (c && d) {
        bufset b, e;
        fake_stats s0, s1, s2;
        fake_buffers(&b, c), fake_buffers(&e, d);
        mg_tensor_desc x;
        CHECK(mg_compiled_input(c, 0, &x) == MG_OK && x.dims[0] == 384);
        void *s = (void *)0x5000;
        f->stats(&s0);
        CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, s) == MG_OK);
        f->stats(&s1);
        CHECK(mg_launch_rows(ctx, c, 300, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, s) == MG_OK);
        f->stats(&s2);
        int n = s1.launches - s0.launches, fewer = 0, more = 0;
        CHECK_MSG(n > 0 && s2.launches - s1.launches == n, "%d and %d launches", n, s2.launches - s1.launches);
        for (int l = 0; n > 0 && l < n && s2.launches - s1.launches == n; l++) {
            const fake_launch *w = f->launch(s0.launches + l), *r = f->launch(s1.launches + l);
            uint64_t bw = (uint64_t)w->grid[0] * w->grid[1] * w->grid[2], br = (uint64_t)r->grid[0] * r->grid[1] * r->grid[2];
            fewer += br < bw, more += br > bw;
        }
        CHECK_MSG(fewer >= 1 && !more, "300 of 384 rows: %d launches with fewer blocks, %d with more", fewer, more);
        CHECK(mg_launch_rows(ctx, c, 385, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, s) == MG_ERR_INVALID);
        CHECK(mg_launch_rows(ctx, c, 0, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, s) == MG_ERR_INVALID);
        CHECK(mg_launch_rows(ctx, d, 1, e.n_in, e.in, e.n_out, e.out, e.ws, e.ws_bytes, s) == MG_ERR_INVALID);
        f->stats(&s0);
        CHECK(s0.launches == s2.launches);
    }
    mg_compiled_free(c), mg_compiled_free(d);
    mg_ctx_free(ctx);
    mg_program_free(p), mg_program_free(q);
}

/* mg_compile for the current context's device and mg_launch on made-up device pointers and a
 * stream, through the fake driver: with no current context the primary one is retained and
 * used; the cubin is loaded once per context, also with four threads launching at once; every
 * kernel argument is a caller's buffer or inside the workspace; a refused launch queues
 * nothing; freeing unloads every module and releases the primary context. Last in the table:
 * the process's libcuda is the fake from here on. */
void test_compiled_fake_gpu(void) {
    fake_api f;
    fake_stats st;
    const char *no_nvrtc = getenv("MUGEN_NO_NVRTC");
    if (no_nvrtc && !strcmp(no_nvrtc, "1")) return;
    CHECK_MSG(fake_open(&f) == 0, "fake-cuda.so beside the unit runner: %s", dlerror());
    if (fake_open(&f)) return;
    char dir[4096], *old;
    cache_dir_push(dir, sizeof dir, &old);
    mg_program *lora = load_prog("examples/lora.mu");
    mg_ctx *ctx = mg_ctx_new();
    mg_compiled *c = NULL;
    mg_status rc = lora ? mg_compile(ctx, lora, NULL, NULL, &c) : MG_ERR_INVALID;
    f.stats(&st);
    if (rc == MG_OK && st.inits == 0) { /* a real driver was loaded before: nothing to test */
        printf("  (a real CUDA driver is loaded: the fake one is not used)\n");
        goto done;
    }
    CHECK_MSG(rc == MG_OK, "compile through the fake driver: %s", mg_ctx_error(ctx));
    mg_compiled_info info;
    CHECK(c && mg_compiled_get_info(c, &info) == MG_OK && strstr(info.device, "sm_90a (H100)"));
    if (!c) goto done;
    bufset b;
    fake_buffers(&b, c);
    f.set_current(NULL);
    for (int r = 0; r < 2; r++)
        CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, (void *)0x5000) == MG_OK);
    f.stats(&st);
    CHECK_MSG(st.loads == 1 && st.retained == 1 && !st.bad_image, "loads %d, retained %d", st.loads, st.retained);
    void *primary = f.launch(0) ? f.launch(0)->ctx : NULL;
    CHECK(primary != NULL && check_launches(&f, 0, primary, (void *)0x5000, &b) == 2 * info.n_launches);
    CHECK(f.launch(0) && f.launch(0)->pdl == 1);
    int other_ctx = 0, from = st.launches; /* a second context: the code is loaded there too */
    f.set_current(&other_ctx);
    worker w[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].c = c, w[t].reps = 3, w[t].s = b;
        CHECK(pthread_create(&th[t], NULL, fake_work, &w[t]) == 0); /* no current context: primary */
    }
    CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, (void *)0x5000) == MG_OK);
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK(w[t].rc == MG_OK);
    }
    f.stats(&st);
    CHECK_MSG(st.loads == 2 && st.launches - from == 13 * info.n_launches, "loads %d, launches %d",
              st.loads, st.launches - from);
    b.out[0] = (char *)b.out[0] + 8; /* refused before anything is queued */
    CHECK(mg_launch(ctx, c, b.n_in, b.in, b.n_out, b.out, b.ws, b.ws_bytes, NULL) == MG_ERR_INVALID);
    fake_stats st2;
    f.stats(&st2);
    CHECK(st2.launches == st.launches);
    mg_compiled_free(c), c = NULL;
    f.stats(&st);
    CHECK_MSG(st.unloads == 2 && st.retained == 0, "unloads %d, retained %d", st.unloads, st.retained);
    f.set_current(NULL);
    fake_persistent(&f, lora);
    fake_tma(&f);
    fake_graphs(&f);
    fake_rows(&f);
done:
    mg_compiled_free(c);
    mg_ctx_free(ctx);
    mg_program_free(lora);
    cache_dir_pop(dir, old);
}

/* A token-wise ragged program through the library: bound lengths (one empty sequence, one at
 * the maximum), compiled for the C target in token form, launched on packed buffers of
 * capacity rows, compared
 * with the per-sequence reference; unbound lengths are refused by name. */
void test_compiled_ragged(void) {
    static const char *SRC = "lengths len[5] max=12\ninput x : f16[5, len, 32]\ninput w : f16[1, 32, 64]\ninput b : f16[64]\n"
                             "input v : f16[1, 64, 32]\nh = x + matmul(relu(matmul(x, w) + b), v)\n"
                             "y = h * rsqrt(mean(h * h, dim=-1) + 1e-5)\noutput y\n";
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL;
    CHECK(mg_program_parse(ctx, SRC, strlen(SRC), "r.mu", &p) == MG_OK);
    mg_compile_opts o = {.target = MG_TARGET_C};
    mg_compiled *c = NULL;
    CHECK(mg_compile(ctx, p, NULL, &o, &c) == MG_ERR_INVALID && !c && strstr(mg_ctx_error(ctx), "not bound"));
    const int64_t len[5] = {4, 0, 12, 1, 7};
    CHECK(mg_program_bind_lengths(ctx, p, "len", len, 5) == MG_OK);
    mg_status rc = mg_compile(ctx, p, NULL, &o, &c);
    CHECK_MSG(rc == MG_OK && c, "mg_compile: %s", mg_ctx_error(ctx));
    bufset s;
    if (c && !bufset_new(&s, c, p, 77)) {
        /* buffers of capacity rows (24 tokens rounded up to 128); the reference reads and writes
         * the tokens' rows, and only those are compared */
        CHECK(s.in_d[0].numel == 128 * 32 && s.out_d[0].numel == 128 * 32);
        rc = mg_launch(ctx, c, s.n_in, s.in, s.n_out, s.out, s.ws, s.ws_bytes, NULL);
        CHECK_MSG(rc == MG_OK, "mg_launch: %s", mg_ctx_error(ctx));
        s.out_d[0].numel = 24 * 32;
        compare_ref(&s, "ragged ffn");
        bufset_free(&s);
    }
    mg_compiled_free(c);
    mg_program_free(p);
    mg_ctx_free(ctx);
}

/* A ragged program with attention through the library: compiled for the C target in token
 * form, its input 0 the lengths (f32[batch], named as the declaration), every token buffer of
 * capacity rows; launched with the lengths, junk in the capacity rows, the output poisoned;
 * the tokens' rows compared with the per-sequence reference (mg_eval_float on packed
 * tensors) within the f16 tolerance, the capacity rows of the attention 0 (y = a + x there);
 * and a static seqattn whose Q, K and V are one tensor. */
void test_compiled_ragged_attention(void) {
    static const char *SRC = "lengths len[4] max=40\ninput x : f16[4, len, 32]\ninput wq : f16[1, 32, 32]\n"
                             "input wv : f16[1, 32, 32]\n"
                             "q = transpose(reshape(matmul(x, wq), shape=[4, len, 2, 16]), perm=[0, 2, 1, 3])\n"
                             "v = transpose(reshape(matmul(x, wv), shape=[4, len, 2, 16]), perm=[0, 2, 1, 3])\n"
                             "s = matmul(q, transpose(q, perm=[0, 1, 3, 2])) * 0.25\ne = exp(s - max(s, dim=-1))\n"
                             "a = reshape(transpose(matmul(e / sum(e, dim=-1), v), perm=[0, 2, 1, 3]), shape=[4, len, 32])\n"
                             "y = a + x\noutput y\n";
    enum { B = 4, C = 32, T = 62, CAP = 128 };
    const int64_t len[B] = {17, 0, 40, 5};
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL;
    mg_compiled *c = NULL;
    CHECK(mg_program_parse(ctx, SRC, strlen(SRC), "ra.mu", &p) == MG_OK);
    CHECK(p && mg_program_bind_lengths(ctx, p, "len", len, B) == MG_OK);
    mg_compile_opts o = {.target = MG_TARGET_C};
    mg_status rc = p ? mg_compile(ctx, p, NULL, &o, &c) : MG_ERR_INVALID;
    CHECK_MSG(rc == MG_OK && c, "mg_compile: %s", mg_ctx_error(ctx));
    mg_compiled_info info;
    mg_tensor_desc dl, dx, dy;
    if (c && !mg_compiled_get_info(c, &info) && info.n_inputs == 4 && info.n_outputs == 1 && !mg_compiled_input(c, 0, &dl) &&
        !mg_compiled_input(c, 1, &dx) && !mg_compiled_output(c, 0, &dy)) {
        CHECK(!strcmp(dl.name, "len") && dl.dtype == MG_F32 && dl.numel == B);
        CHECK(dx.numel == CAP * C && dy.numel == CAP * C);
        rng r = {0x7261747400000001ull};
        float *lf = aligned(16, B * sizeof(float));
        void *in[4] = {lf, aligned(16, CAP * C * 2), aligned(16, C * C * 2), aligned(16, C * C * 2)};
        void *out[1] = {aligned(16, CAP * C * 2)}, *ws = aligned(MG_LAUNCH_ALIGN, info.workspace_bytes + 1);
        double *x = malloc(CAP * C * sizeof(double)), *wq = malloc(C * C * sizeof(double)), *wv = malloc(C * C * sizeof(double));
        double *ref = malloc(T * C * sizeof(double));
        for (int b = 0; b < B; b++) lf[b] = (float)len[b];
        for (int i = 0; i < CAP * C; i++) x[i] = base_round_dtype(rng_uniform(&r) * 2 - 1, MG_F16), store(MG_F16, in[1], i, x[i]);
        for (int i = 0; i < C * C; i++) {
            wq[i] = base_round_dtype((rng_uniform(&r) * 2 - 1) * 0.3, MG_F16), store(MG_F16, in[2], i, wq[i]);
            wv[i] = base_round_dtype((rng_uniform(&r) * 2 - 1) * 0.3, MG_F16), store(MG_F16, in[3], i, wv[i]);
        }
        memset(out[0], 0xFF, CAP * C * 2);
        rc = mg_launch(ctx, c, 4, in, 1, out, ws, info.workspace_bytes, NULL);
        CHECK_MSG(rc == MG_OK, "mg_launch: %s", mg_ctx_error(ctx));
        const double *pin[3] = {x, wq, wv};
        double *pout[1] = {ref};
        CHECK(mg_eval_float(ctx, p, 0, pin, pout) == MG_OK);
        double num = 0, den = 0;
        int nan = 0, pad = 1;
        for (int i = 0; i < T * C; i++) {
            double g = load(MG_F16, out[0], i);
            nan += g != g, num += (g - ref[i]) * (g - ref[i]), den += ref[i] * ref[i];
        }
        for (int i = T * C; i < CAP * C; i++) pad &= load(MG_F16, out[0], i) == x[i];
        CHECK_MSG(!nan && num <= 1e-4 * den && pad, "ragged attention: %d NaN, rel err %g, capacity rows %s", nan,
                  sqrt(num / (den > 0 ? den : 1)), pad ? "right" : "wrong");
        for (int i = 0; i < 4; i++) free(in[i]);
        free(out[0]), free(ws), free(x), free(wq), free(wv), free(ref);
    } else CHECK_MSG(0, "compiled ragged attention: %d inputs, %d outputs (want 4 and 1)", c ? info.n_inputs : -1,
                     c ? info.n_outputs : -1);
    mg_compiled_free(c);
    mg_program_free(p);
    /* seqattn written directly with Q, K and V one tensor (one kernel parameter for three
     * operands), lengths 3, 0, 4 of 9 rows: against the float reference's seqattn */
    static const char *SA = "input len : f32[3]\ninput q : f16[9, 2, 16]\ny = seqattn(q, q, q, len)\noutput y\n";
    c = NULL, p = NULL;
    CHECK(mg_program_parse(ctx, SA, strlen(SA), "sa.mu", &p) == MG_OK);
    rc = p ? mg_compile(ctx, p, NULL, &o, &c) : MG_ERR_INVALID;
    CHECK_MSG(rc == MG_OK && c, "mg_compile: %s", mg_ctx_error(ctx));
    if (c) {
        float lf[4] __attribute__((aligned(16))) = {3, 0, 4, 0};
        double lv[3] = {3, 0, 4}, q[9 * 32], ref[9 * 32];
        uint16_t qh[9 * 32] __attribute__((aligned(16))), yh[9 * 32] __attribute__((aligned(16)));
        rng r = {0x7361000000000001ull};
        for (int i = 0; i < 9 * 32; i++) q[i] = base_round_dtype(rng_uniform(&r) * 2 - 1, MG_F16), store(MG_F16, qh, i, q[i]);
        memset(yh, 0xFF, sizeof yh);
        void *in[2] = {lf, qh}, *out[1] = {yh};
        CHECK(mg_launch(ctx, c, 2, in, 1, out, NULL, 0, NULL) == MG_OK);
        const double *pin[2] = {lv, q};
        double *pout[1] = {ref};
        CHECK(mg_eval_float(ctx, p, 0, pin, pout) == MG_OK);
        double err = 0;
        for (int i = 0; i < 9 * 32; i++) err = fmax(err, fabs(load(MG_F16, yh, i) - ref[i]));
        CHECK_MSG(err <= 2e-3, "seqattn(q, q, q): off by %g", err);
    }
    mg_compiled_free(c);
    mg_program_free(p);
    mg_ctx_free(ctx);
}

/* A reduced dim through the library (docs/tuning.md "Reduced dims"): GQA decode compiled for
 * C at the capacity of L = 300 (512), launched by mg_launch_rows at L = 300 and then L = 170
 * on the same handle, its K and V buffers holding NaN past each length; each output against
 * the program at that length on the inputs' leading entries. A length past the capacity is
 * refused. */
void test_compiled_reduced(void) {
    char dir[4096], *old;
    cache_dir_push(dir, sizeof dir, &old);
    mg_program *p = load_prog("tests/codegen/kv/gqa.mu");
    mg_ctx *ctx = mg_ctx_new();
    CHECK(p && mg_program_dim_reduced(p, 0) == 1 && mg_program_bind_dim(ctx, p, "L", 300) == MG_OK);
    mg_compiled *c = p ? compile_c(p, NULL, "gqa.mu at L = 300") : NULL;
    bufset s;
    if (c && !bufset_new(&s, c, NULL, 34)) {
        CHECK(s.in_d[1].dims[2] == 512 && s.in_d[2].dims[1] == 512); /* K [2, 64, 512], V [2, 512, 64] */
        const int lens[2] = {300, 170};
        for (int q = 0; q < 2; q++) {
            int L = lens[q];
            mg_program *at = load_prog("tests/codegen/kv/gqa.mu");
            CHECK(at && mg_program_bind_dim(ctx, at, "L", L) == MG_OK);
            double *x[3];
            for (int i = 0; i < 3; i++) { /* the leading box at L; NaN past L in the buffers */
                const mg_tensor_desc *d = &s.in_d[i];
                int64_t n = 1, ld = i == 1 ? 2 : 1; /* the dim of L: K's 2, V's 1 (Q has none) */
                for (int k = 0; k < d->ndim; k++) n *= i && k == ld ? L : d->dims[k];
                x[i] = malloc((size_t)n * sizeof(double));
                int64_t m = 0;
                for (int64_t t = 0; t < d->numel; t++) {
                    int64_t r = t, idx[4] = {0};
                    for (int k = d->ndim - 1; k >= 0; k--) idx[k] = r % d->dims[k], r /= d->dims[k];
                    if (i && idx[ld] >= L) store(d->dtype, s.in[i], t, NAN);
                    else x[i][m++] = s.x[i][t], store(d->dtype, s.in[i], t, s.x[i][t]);
                }
                CHECK(m == n);
            }
            CHECK(mg_eval_float(ctx, at, 0, (const double *const *)x, s.ref) == MG_OK);
            poison_outputs(&s);
            mg_status rc = mg_launch_rows(ctx, c, L, s.n_in, s.in, s.n_out, s.out, s.ws, s.ws_bytes, NULL);
            CHECK_MSG(rc == MG_OK, "mg_launch_rows at L = %d: %s", L, mg_ctx_error(ctx));
            compare_ref(&s, L == 300 ? "gqa.mu at L = 300" : "gqa.mu at L = 170 (same handle)");
            for (int i = 0; i < 3; i++) free(x[i]);
            mg_program_free(at);
        }
        CHECK(mg_launch_rows(ctx, c, 513, s.n_in, s.in, s.n_out, s.out, s.ws, s.ws_bytes, NULL) == MG_ERR_INVALID);
        bufset_free(&s);
    }
    mg_compiled_free(c);
    mg_ctx_free(ctx);
    mg_program_free(p);
    cache_dir_pop(dir, old);
}
