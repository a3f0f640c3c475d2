/* runtime/nvrtc: CUDA C -> cubin through NVRTC, loaded with dlopen on first use (no CUDA
 * headers or link-time dependency; the few types are declared here). Results are cached on
 * disk (cache.c) under a hash of source, target, NVRTC version and options. Also holds the
 * library-loading helpers that cuda.c shares (rt_internal.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

typedef int nvrtcResult; /* NVRTC_SUCCESS = 0 */
typedef void *nvrtcProgram;

typedef struct nvrtc_api {
    nvrtcResult (*version)(int *major, int *minor);
    nvrtcResult (*create)(nvrtcProgram *prog, const char *src, const char *name, int n_headers,
                          const char *const *headers, const char *const *include_names);
    nvrtcResult (*destroy)(nvrtcProgram *prog);
    nvrtcResult (*compile)(nvrtcProgram prog, int n_options, const char *const *options);
    nvrtcResult (*log_size)(nvrtcProgram prog, size_t *n);
    nvrtcResult (*get_log)(nvrtcProgram prog, char *log);
    nvrtcResult (*cubin_size)(nvrtcProgram prog, size_t *n);
    nvrtcResult (*get_cubin)(nvrtcProgram prog, char *cubin);
    const char *(*error_string)(nvrtcResult rc);
} nvrtc_api;

#define SYM(name, field) {name, NULL, offsetof(nvrtc_api, field)}
static const rt_sym nvrtc_syms[] = {
    SYM("nvrtcVersion", version),          SYM("nvrtcCreateProgram", create),
    SYM("nvrtcDestroyProgram", destroy),   SYM("nvrtcCompileProgram", compile),
    SYM("nvrtcGetProgramLogSize", log_size), SYM("nvrtcGetProgramLog", get_log),
    SYM("nvrtcGetCUBINSize", cubin_size),  SYM("nvrtcGetCUBIN", get_cubin),
    SYM("nvrtcGetErrorString", error_string),
};
#undef SYM

static nvrtc_api api;
static void *lib;    /* the loaded libnvrtc; kept for the life of the process */
static int version;  /* major*1000 + minor*10 */

void *rt_dlopen_first(const char *env, const char *const *names, strbuf *why) {
    const char *e = env ? getenv(env) : NULL;
    if (e && *e) {
        void *h = dlopen(e, RTLD_NOW | RTLD_LOCAL);
        if (!h) sb_printf(why, "%s=%s: %s", env, e, dlerror());
        return h;
    }
    for (int i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
        const char *err = dlerror();
        sb_printf(why, "%s%s", i ? "; " : "", err ? err : names[i]);
    }
    return NULL;
}

int rt_resolve(void *h, const rt_sym *syms, size_t n, void *table, strbuf *why) {
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p && syms[i].alt) p = dlsym(h, syms[i].alt);
        if (!p) {
            sb_printf(why, "symbol %s missing", syms[i].name);
            return -1;
        }
        memcpy((char *)table + syms[i].offset, &p, sizeof p); /* object -> function pointer */
    }
    return 0;
}

mg_status rt_compile_error(mg_ctx *ctx, const char *head, const char *log) {
    static const char tail[] = "\n[... log truncated]";
    size_t room = sizeof ctx->msg - strlen(head) - sizeof tail, n = strlen(log);
    while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' ')) n--;
    int cut = n > room;
    if (cut) {
        n = room;
        while (n > 0 && log[n] != '\n') n--; /* back up to a line break */
        if (n == 0) n = room;
    }
    return ctx_err(ctx, MG_ERR_COMPILE, "%s%.*s%s", head, (int)n, log, cut ? tail : "");
}

/* Loads libnvrtc once (later calls return at once). MG_ERR_NO_DEVICE listing the attempts. */
static mg_status nvrtc_load(mg_ctx *ctx) {
    if (lib) return MG_OK;
    char home13[1024], home[1024];
    const char *cuda_home = getenv("CUDA_HOME"), *names[8];
    int k = 0;
    names[k++] = "libnvrtc.so.13", names[k++] = "libnvrtc.so.12", names[k++] = "libnvrtc.so";
    if (cuda_home && *cuda_home) {
        snprintf(home13, sizeof home13, "%s/lib64/libnvrtc.so.13", cuda_home);
        snprintf(home, sizeof home, "%s/lib64/libnvrtc.so", cuda_home);
        names[k++] = home13, names[k++] = home;
    }
    names[k++] = "/usr/local/cuda/lib64/libnvrtc.so.13";
    names[k++] = "/usr/local/cuda/lib64/libnvrtc.so";
    names[k] = NULL;
    strbuf why = {0};
    void *h = rt_dlopen_first("MUGEN_NVRTC", names, &why);
    nvrtc_api a;
    int major = 0, minor = 0;
    mg_status rc = MG_OK;
    if (!h) {
        rc = ctx_err(ctx, MG_ERR_NO_DEVICE, "libnvrtc not found (set MUGEN_NVRTC): %s",
                     why.s ? why.s : "?");
    } else if (rt_resolve(h, nvrtc_syms, sizeof nvrtc_syms / sizeof nvrtc_syms[0], &a, &why) ||
               a.version(&major, &minor) != 0) {
        rc = ctx_err(ctx, MG_ERR_NO_DEVICE, "libnvrtc unusable: %s", why.s ? why.s : "no version");
        dlclose(h);
    } else {
        api = a, lib = h, version = major * 1000 + minor * 10;
    }
    sb_free(&why);
    return rc;
}

int rt_nvrtc_version(mg_ctx *ctx) { return nvrtc_load(ctx) ? -1 : version; }

/* Reads the program log into a base_alloc'd string ("" when empty or unreadable). */
static char *program_log(nvrtcProgram prog) {
    size_t n = 0;
    if (api.log_size(prog, &n) != 0) n = 0;
    char *s = base_alloc(n + 1);
    if (!s) return NULL;
    if (n == 0 || api.get_log(prog, s) != 0) n = 0;
    s[n] = 0;
    return s;
}

/* The cache key: source, target, NVRTC version and every option, each NUL-terminated. */
static uint64_t cache_key(const char *src, const char *arch, const char *const *opts, int n) {
    uint64_t h = rt_hash(RT_HASH_INIT, src, strlen(src) + 1);
    h = rt_hash(h, arch, strlen(arch) + 1);
    h = rt_hash(h, &version, sizeof version);
    for (int i = 0; i < n; i++) h = rt_hash(h, opts[i], strlen(opts[i]) + 1);
    return h;
}

/* Runs NVRTC on src (cache miss); on success stores the cubin under key. */
static mg_status compile(mg_ctx *ctx, const char *src, const char *const *opts, int n_opts,
                         uint64_t key, void **image, size_t *size, strbuf *log) {
    nvrtcProgram prog = NULL;
    nvrtcResult r = api.create(&prog, src, "mugen.cu", 0, NULL, NULL);
    if (r) return ctx_err(ctx, MG_ERR_COMPILE, "nvrtcCreateProgram: %s", api.error_string(r));
    mg_status rc = MG_OK;
    char *buf = NULL, *text = NULL, head[256];
    size_t n = 0;
    r = api.compile(prog, n_opts, opts);
    if (!(text = program_log(prog))) {
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory reading the NVRTC log");
    } else if (r) {
        if (log) sb_puts(log, text);
        if (r == 6) snprintf(head, sizeof head, "NVRTC: compilation failed:\n");
        else snprintf(head, sizeof head, "NVRTC: %s (%s):\n", api.error_string(r), opts[0]);
        rc = rt_compile_error(ctx, head, text);
    } else if ((r = api.cubin_size(prog, &n)) != 0 || n == 0) {
        rc = ctx_err(ctx, MG_ERR_COMPILE, "NVRTC produced no cubin for %s: %s", opts[0],
                     r ? api.error_string(r) : "empty image");
    } else if (!(buf = base_alloc(n))) {
        rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory for a %zu-byte cubin", n);
    } else if ((r = api.get_cubin(prog, buf)) != 0) {
        rc = ctx_err(ctx, MG_ERR_COMPILE, "nvrtcGetCUBIN: %s", api.error_string(r));
    } else {
        rt_cache_put(key, "cubin", buf, n);
        *image = buf, *size = n, buf = NULL;
    }
    base_free(buf);
    base_free(text);
    api.destroy(&prog);
    return rc;
}

mg_status rt_nvrtc_compile(mg_ctx *ctx, const char *src, const char *arch, void **image,
                           size_t *size, int *cached, strbuf *log) {
    if (cached) *cached = 0;
    *image = NULL, *size = 0;
    if (!src || !arch || !*arch || strlen(arch) > 32)
        return ctx_err(ctx, MG_ERR_INVALID, "rt_nvrtc_compile: missing source or bad target");
    mg_status rc = nvrtc_load(ctx);
    if (rc) return rc;
    char arch_opt[64];
    snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", arch);
    /* MUGEN_LINEINFO=1: line tables in the cubin, so a profiler's source view (ncu) names
     * lines of the generated CUDA (`mugen emit` prints the same text) */
    const char *li = getenv("MUGEN_LINEINFO");
    const char *opts[] = {arch_opt, "-default-device", "--std=c++17", "-lineinfo"};
    int n_opts = li && !strcmp(li, "1") ? 4 : 3;
    uint64_t key = cache_key(src, arch, opts, n_opts);
    if (rt_cache_get(key, "cubin", image, size)) {
        if (cached) *cached = 1;
        return MG_OK;
    }
    return compile(ctx, src, opts, n_opts, key, image, size, log);
}
