/* runtime: compile cache, the C backend (build, run, compile errors, crashes, timeouts),
 * NVRTC (needs libnvrtc: fails loudly without it unless MUGEN_NO_NVRTC=1) and opening the
 * GPU (MG_ERR_NO_DEVICE with a reason on machines without one). No GPU needed. Every test
 * uses its own temporary MUGEN_CACHE_DIR and restores the caller's afterwards. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "runtime/runtime.h"
#include "unit.h"

void test_runtime_cache(void);
void test_runtime_c_build_run(void);
void test_runtime_c_compile_error(void);
void test_runtime_c_crash(void);
void test_runtime_c_budget(void);
void test_near_overflow(void);
void test_runtime_nvrtc(void);
void test_runtime_gpu_open(void);

/* ---- helpers: a private cache folder, environment save/restore ---- */

typedef struct env_saved {
    const char *name;
    char *value; /* NULL: was unset */
} env_saved;

static env_saved env_set(const char *name, const char *value) {
    const char *old = getenv(name);
    env_saved s = {name, old ? base_strdup(old) : NULL};
    if (value) setenv(name, value, 1);
    else unsetenv(name);
    return s;
}

static void env_restore(env_saved s) {
    if (s.value) setenv(s.name, s.value, 1);
    else unsetenv(s.name);
    base_free(s.value);
}

/* Removes a folder and everything in it (one level of subfolders is enough here). */
static void rm_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(path);
            else unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Makes a fresh temp folder (under $TMPDIR) into dir and points MUGEN_CACHE_DIR at it. */
static env_saved private_cache(char *dir, size_t n) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, n, "%s/mugen-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot make a temp folder %s\n", dir);
        abort();
    }
    return env_set("MUGEN_CACHE_DIR", dir);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- (a) hash and cache ---- */

static void check_hash(void) {
    CHECK(rt_hash(RT_HASH_INIT, "", 0) == RT_HASH_INIT);
    CHECK(rt_hash(RT_HASH_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);      /* FNV-1a reference */
    CHECK(rt_hash(RT_HASH_INIT, "foobar", 6) == 0x85944171f73967e8ull); /* values */
    CHECK(rt_hash(rt_hash(RT_HASH_INIT, "foo", 3), "bar", 3) ==
          rt_hash(RT_HASH_INIT, "foobar", 6));
    CHECK(rt_hash(RT_HASH_INIT, "abc", 3) != rt_hash(RT_HASH_INIT, "abd", 3));
    CHECK(rt_hash(RT_HASH_INIT, "abc", 3) != rt_hash(RT_HASH_INIT, "abc", 4));
}

/* Flips one byte of a cached file, or truncates it by `cut` bytes. */
static void damage(const char *path, long at, long cut) {
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
    if (cut) {
        struct stat st;
        CHECK(stat(path, &st) == 0);
        CHECK(truncate(path, st.st_size - cut) == 0);
    }
}

static void check_cache_roundtrip(const char *dir) {
    unsigned char data[3000];
    rng r = {42};
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(rng_next(&r) | 1);
    uint64_t key = rt_hash(RT_HASH_INIT, "key", 3);
    void *got = NULL;
    size_t n = 0;
    CHECK(rt_cache_get(key, "bin", &got, &n) == 0);
    rt_cache_put(key, "bin", data, sizeof data);
    CHECK(rt_cache_get(key, "bin", &got, &n) == 1);
    CHECK(n == sizeof data && got && memcmp(got, data, n) == 0);
    base_free(got);
    CHECK(rt_cache_get(key + 1, "bin", &got, &n) == 0);
    CHECK(rt_cache_get(key, "cubin", &got, &n) == 0);
    char path[4400];
    snprintf(path, sizeof path, "%s/%016llx.bin", dir, (unsigned long long)key);
    damage(path, 100, 0); /* a flipped byte is a miss */
    CHECK(rt_cache_get(key, "bin", &got, &n) == 0);
    rt_cache_put(key, "bin", data, sizeof data);
    CHECK(rt_cache_get(key, "bin", &got, &n) == 1);
    base_free(got);
    damage(path, 0, 7); /* so is a short file */
    CHECK(rt_cache_get(key, "bin", &got, &n) == 0);
}

void test_runtime_cache(void) {
    check_hash();
    char dir[4096], sub[4200];
    env_saved saved = private_cache(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/a/b", dir); /* made on demand, parents included */
    setenv("MUGEN_CACHE_DIR", sub, 1);
    const char *cd = rt_cache_dir();
    CHECK_MSG(cd && strcmp(cd, sub) == 0, "cache dir %s", cd ? cd : "(null)");
    struct stat st;
    CHECK(stat(sub, &st) == 0 && S_ISDIR(st.st_mode));
    check_cache_roundtrip(sub);
    setenv("MUGEN_CACHE_DIR", "off", 1);
    CHECK(rt_cache_dir() == NULL);
    void *got = NULL;
    size_t n = 0;
    rt_cache_put(7, "bin", "xyz", 3);
    CHECK(rt_cache_get(7, "bin", &got, &n) == 0);
    setenv("MUGEN_CACHE_DIR", sub, 1);
    CHECK(rt_cache_get(7, "bin", &got, &n) == 0); /* nothing was written while off */
    env_restore(saved);
    rm_tree(dir);
}

/* ---- (b) C backend: build and run ---- */

static const char *ADD_SRC =
    "void add(void **b) {\n"
    "    const float *x = b[0], *y = b[1];\n"
    "    float *z = b[2];\n"
    "    int n = *(const int *)b[3];\n"
    "    #pragma omp parallel for\n"
    "    for (int i = 0; i < n; i++) z[i] = x[i] + y[i];\n"
    "}\n";

/* Builds ADD_SRC, runs it on random inputs with z poisoned, checks every element. */
static void check_add(const char *so) {
    enum { N = 10007 };
    float *x = base_alloc(N * sizeof *x), *y = base_alloc(N * sizeof *y);
    float *z = base_alloc(N * sizeof *z);
    int n = N;
    rng r = {7};
    for (int i = 0; i < N; i++) {
        x[i] = (float)(rng_uniform(&r) * 2 - 1) + 0.25f;
        y[i] = (float)(rng_uniform(&r) * 100 - 50);
    }
    memset(z, 0xFF, N * sizeof *z); /* NaN poison */
    void *bufs[] = {x, y, z, &n};
    size_t sizes[] = {N * sizeof *x, N * sizeof *y, N * sizeof *z, sizeof n};
    mg_ctx ctx = {{0}};
    double ms = -1;
    mg_status rc = rt_c_run(&ctx, so, "add", 4, bufs, sizes, 3, 20.0, &ms);
    CHECK_MSG(rc == MG_OK, "rt_c_run: %s", ctx.msg);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += z[i] != x[i] + y[i];
    CHECK_MSG(bad == 0, "%d wrong sums", bad);
    CHECK(ms >= 0 && ms < 20000);
    base_free(x), base_free(y), base_free(z);
}

void test_runtime_c_build_run(void) {
    char dir[4096];
    env_saved saved = private_cache(dir, sizeof dir);
    mg_ctx ctx = {{0}};
    char *so = NULL, *so2 = NULL;
    mg_status rc = rt_c_build(&ctx, ADD_SRC, &so, NULL, NULL);
    CHECK_MSG(rc == MG_OK, "rt_c_build: %s", ctx.msg);
    if (rc == MG_OK) {
        CHECK(strncmp(so, dir, strlen(dir)) == 0 && strlen(so) == strlen(dir) + 1 + 16 + 3);
        check_add(so);
        CHECK(rt_c_build(&ctx, ADD_SRC, &so2, NULL, NULL) == MG_OK); /* cache hit: same object */
        CHECK(so2 && strcmp(so, so2) == 0);
    }
    base_free(so2), so2 = NULL;
    setenv("MUGEN_CACHE_DIR", "off", 1); /* no cache: a private temp folder */
    rc = rt_c_build(&ctx, ADD_SRC, &so2, NULL, NULL);
    CHECK_MSG(rc == MG_OK, "rt_c_build (cache off): %s", ctx.msg);
    if (rc == MG_OK) {
        CHECK(so && strcmp(so, so2) != 0);
        check_add(so2);
        *strrchr(so2, '/') = 0;
        rm_tree(so2);
    }
    base_free(so), base_free(so2);
    env_restore(saved);
    rm_tree(dir);
}

/* ---- (c) C compile errors ---- */

void test_runtime_c_compile_error(void) {
    char dir[4096];
    env_saved saved = private_cache(dir, sizeof dir);
    mg_ctx ctx = {{0}};
    strbuf log = {0};
    char *so = NULL;
    mg_status rc = rt_c_build(&ctx, "void f(void **b) { int x = ; }\n", &so, NULL, &log);
    CHECK_MSG(rc == MG_ERR_COMPILE, "status %d: %s", rc, ctx.msg);
    CHECK(so == NULL);
    CHECK_MSG(strstr(ctx.msg, "C compiler failed") && strstr(ctx.msg, "error"), "%s", ctx.msg);
    CHECK_MSG(log.s && strstr(log.s, "error") && strstr(log.s, "src.c"), "log: %s",
              log.s ? log.s : "(empty)");
    sb_free(&log);
    env_saved cc = env_set("MUGEN_CC", "/nonexistent/mugen-cc -O1");
    rc = rt_c_build(&ctx, ADD_SRC, &so, NULL, NULL);
    CHECK_MSG(rc == MG_ERR_NO_DEVICE && strstr(ctx.msg, "/nonexistent/mugen-cc"), "%d: %s", rc,
              ctx.msg);
    env_restore(cc);
    env_restore(saved);
    rm_tree(dir);
}

/* The default timing's budget: runs of 0.2 s against a 0.3 s budget stop after the second
 * timed run (0.4 s), not after reps = 50; without a budget all reps run. */
static const char *SLOW_SRC =
    "#define _POSIX_C_SOURCE 200809L\n"
    "#include <time.h>\n"
    "void slow(void **b) { struct timespec t = {0, 200000000L}; nanosleep(&t, 0); *(int *)b[0] += 1; }\n"
    "void quick(void **b) { *(int *)b[0] += 1; }\n";

void test_runtime_c_budget(void) {
    char dir[4096];
    env_saved saved = private_cache(dir, sizeof dir);
    mg_ctx ctx = {{0}};
    char *so = NULL;
    mg_status rc = rt_c_build(&ctx, SLOW_SRC, &so, NULL, NULL);
    CHECK_MSG(rc == MG_OK, "rt_c_build: %s", ctx.msg);
    if (rc == MG_OK) {
        int v = 0;
        void *bufs[] = {&v};
        size_t sizes[] = {sizeof v};
        rt_c_timing tm = {.reps = 50, .budget_s = 0.3};
        rc = rt_c_run_timed(&ctx, so, "slow", 1, bufs, sizes, &tm, 60.0);
        /* a sleep never ends early: 2 timed runs pass the budget; a very loaded host may
         * pass it after 1 */
        CHECK_MSG(rc == MG_OK && tm.n_timed >= 1 && tm.n_timed <= 2 && v == 1 + tm.n_timed,
                  "%d: %d timed, v = %d: %s", rc, tm.n_timed, v, ctx.msg);
        CHECK_MSG(tm.ms >= 199 && tm.ms < 60000, "median %.1f ms", tm.ms);
        v = 0;
        tm = (rt_c_timing){.reps = 40};
        rc = rt_c_run_timed(&ctx, so, "quick", 1, bufs, sizes, &tm, 60.0);
        CHECK_MSG(rc == MG_OK && tm.n_timed == 40 && v == 41, "%d: %d timed, v = %d", rc, tm.n_timed, v);
    }
    base_free(so);
    env_restore(saved);
    rm_tree(dir);
}

/* ---- (d) crashes and hangs of generated C ---- */

static const char *BAD_SRC =
    "#include <stdint.h>\n"
    "void crash(void **b) { int *p = (int *)(uintptr_t)*(const int *)b[0]; *p = 1; }\n"
    "void spin(void **b) { volatile int go = 1; (void)b; while (go) {} }\n"
    "void fine(void **b) { *(int *)b[0] += 5; }\n";

void test_runtime_c_crash(void) {
    char dir[4096];
    env_saved saved = private_cache(dir, sizeof dir);
    mg_ctx ctx = {{0}};
    char *so = NULL;
    mg_status rc = rt_c_build(&ctx, BAD_SRC, &so, NULL, NULL);
    CHECK_MSG(rc == MG_OK, "rt_c_build: %s", ctx.msg);
    if (rc == MG_OK) {
        int zero = 0;
        void *bufs[] = {&zero};
        size_t sizes[] = {sizeof zero};
        rc = rt_c_run(&ctx, so, "crash", 1, bufs, sizes, 2, 20.0, NULL);
        CHECK_MSG(rc == MG_ERR_LAUNCH && strstr(ctx.msg, "SIGSEGV"), "%d: %s", rc, ctx.msg);
        double t0 = now_s();
        rc = rt_c_run(&ctx, so, "spin", 1, bufs, sizes, 0, 1.0, NULL);
        double dt = now_s() - t0;
        CHECK_MSG(rc == MG_ERR_LAUNCH && strstr(ctx.msg, "timeout"), "%d: %s", rc, ctx.msg);
        CHECK_MSG(dt >= 0.9 && dt < 10, "timeout took %.2f s", dt);
        rc = rt_c_run(&ctx, so, "no_such_entry", 1, bufs, sizes, 0, 20.0, NULL);
        CHECK_MSG(rc == MG_ERR_LAUNCH && strstr(ctx.msg, "no_such_entry"), "%d: %s", rc, ctx.msg);
        int v = 11; /* the process goes on, and the same object still runs: 4 runs of += 5 */
        bufs[0] = &v;
        rc = rt_c_run(&ctx, so, "fine", 1, bufs, sizes, 3, 20.0, NULL);
        CHECK_MSG(rc == MG_OK && v == 31, "%d, v = %d: %s", rc, v, ctx.msg);
    }
    rc = rt_c_run(&ctx, "/nonexistent/x.so", "f", 0, NULL, NULL, 0, 20.0, NULL);
    CHECK_MSG(rc == MG_ERR_LAUNCH && strstr(ctx.msg, "cannot load"), "%d: %s", rc, ctx.msg);
    base_free(so);
    env_restore(saved);
    rm_tree(dir);
}

/* ---- (e) NVRTC ---- */

static const char *KERNEL_SRC =
    "extern \"C\" __global__ void k_affine(const float *x, float *y, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
    "}\n";

/* A kernel with ~300 errors: its log is far longer than ctx's message buffer. */
static char *long_broken_kernel(void) {
    strbuf b = {0};
    for (int i = 0; i < 300; i++)
        sb_printf(&b, "__device__ int f%d() { return undefined%d; }\n", i, i);
    return sb_take(&b);
}

static void check_nvrtc_errors(void) {
    mg_ctx ctx = {{0}};
    strbuf log = {0};
    void *img = NULL;
    size_t n = 0;
    mg_status rc = rt_nvrtc_compile(&ctx, "extern \"C\" __global__ void k( { }\n", "sm_90a", &img,
                                    &n, NULL, &log);
    CHECK_MSG(rc == MG_ERR_COMPILE, "%d: %s", rc, ctx.msg);
    CHECK(img == NULL && n == 0);
    CHECK_MSG(!strncmp(ctx.msg, "NVRTC: compilation failed:\n", 27) && strstr(ctx.msg, "error"),
              "%s", ctx.msg);
    CHECK_MSG(log.s && strstr(log.s, "error"), "log: %s", log.s ? log.s : "(empty)");
    sb_free(&log);
    char *src = long_broken_kernel();
    rc = rt_nvrtc_compile(&ctx, src, "sm_90a", &img, &n, NULL, &log);
    CHECK(rc == MG_ERR_COMPILE);
    CHECK_MSG(strlen(ctx.msg) < sizeof ctx.msg - 1 && strstr(ctx.msg, "[... log truncated]"),
              "%zu bytes: %s", strlen(ctx.msg), ctx.msg);
    CHECK(log.s && log.len > sizeof ctx.msg);
    sb_free(&log);
    base_free(src);
}

void test_runtime_nvrtc(void) {
    mg_ctx ctx = {{0}};
    int ver = rt_nvrtc_version(&ctx);
    const char *skip = getenv("MUGEN_NO_NVRTC");
    if (ver < 0 && skip && !strcmp(skip, "1")) {
        fprintf(stderr, "  (NVRTC test skipped, MUGEN_NO_NVRTC=1: %s)\n", ctx.msg);
        return;
    }
    CHECK_MSG(ver >= 11000, "NVRTC cannot be loaded (set MUGEN_NO_NVRTC=1 to skip): %s", ctx.msg);
    if (ver < 0) return;
    char dir[4096];
    env_saved saved = private_cache(dir, sizeof dir);
    void *img = NULL, *img2 = NULL;
    size_t n = 0, n2 = 0;
    int cached = -1;
    mg_status rc = rt_nvrtc_compile(&ctx, KERNEL_SRC, "sm_90a", &img, &n, &cached, NULL);
    CHECK_MSG(rc == MG_OK, "rt_nvrtc_compile: %s", ctx.msg);
    CHECK(cached == 0 && n > 64 && img && memcmp(img, "\177ELF", 4) == 0);
    rc = rt_nvrtc_compile(&ctx, KERNEL_SRC, "sm_90a", &img2, &n2, &cached, NULL);
    CHECK_MSG(rc == MG_OK && cached == 1, "second compile: %d cached=%d %s", rc, cached, ctx.msg);
    CHECK(n2 == n && img && img2 && memcmp(img, img2, n) == 0);
    base_free(img2), img2 = NULL;
    rc = rt_nvrtc_compile(&ctx, KERNEL_SRC, "sm_80", &img2, &n2, &cached, NULL);
    CHECK_MSG(rc == MG_OK && cached == 0, "sm_80: %d cached=%d %s", rc, cached, ctx.msg);
    base_free(img), base_free(img2);
    check_nvrtc_errors();
    env_restore(saved);
    rm_tree(dir);
}

/* ---- (f) opening the GPU ---- */

void test_runtime_gpu_open(void) {
    mg_ctx ctx = {{0}};
    rt_gpu *g = NULL;
    mg_status rc = rt_gpu_open(&ctx, &g);
    if (rc == MG_OK) { /* a machine with a GPU */
        const rt_gpu_info *in = rt_gpu_get_info(g);
        CHECK(in->name[0] && in->n_sm > 0 && in->smem_optin >= 48 * 1024 && in->mem_bytes > 0);
        CHECK(!strncmp(in->arch, "sm_", 3));
        rt_gpu_free(g);
        return;
    }
    CHECK_MSG(rc == MG_ERR_NO_DEVICE, "status %d: %s", rc, ctx.msg);
    CHECK(g == NULL);
    CHECK_MSG(ctx.msg[0] != 0, "empty message");
    env_saved lib = env_set("MUGEN_LIBCUDA", "/nonexistent/libcuda.so.1");
    rc = rt_gpu_open(&ctx, &g);
    CHECK_MSG(rc == MG_ERR_NO_DEVICE && strstr(ctx.msg, "/nonexistent/libcuda.so.1"), "%d: %s",
              rc, ctx.msg);
    env_restore(lib);
    rt_gpu_free(NULL); /* no-ops */
    rt_module_free(NULL, NULL);
    rt_graph_free(NULL, NULL);
    rt_free_dev(NULL, 0);
}

/* mg_run's comparison: an infinity beside a finite value within tolerance of the dtype's
 * largest is one value either side of the overflow; anything else still differs. */
void test_near_overflow(void) {
    double inf = INFINITY;
    CHECK(dr_near_overflow(65400, inf, MG_F16) && dr_near_overflow(inf, 65000, MG_F16));
    CHECK(dr_near_overflow(-65400, -inf, MG_F16) && dr_near_overflow(-inf, -64900, MG_F16));
    CHECK(!dr_near_overflow(60000, inf, MG_F16) && !dr_near_overflow(inf, 64800, MG_F16)); /* 1.1% below */
    CHECK(!dr_near_overflow(-65400, inf, MG_F16) && !dr_near_overflow(65400, -inf, MG_F16)); /* sign */
    CHECK(!dr_near_overflow(NAN, inf, MG_F16) && !dr_near_overflow(inf, NAN, MG_F16));
    CHECK(!dr_near_overflow(65400, 65000, MG_F16) && !dr_near_overflow(inf, inf, MG_F16));
    CHECK(dr_near_overflow(3.4028e38, inf, MG_F32) && !dr_near_overflow(3.4e38, inf, MG_F32));
    CHECK(dr_near_overflow(3.35e38, inf, MG_BF16) && !dr_near_overflow(3.3e38, inf, MG_BF16));
}
