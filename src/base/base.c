/* base: allocation hook, error context, arena, strbuf, strmap, rng, f16/bf16 rounding. */
#include "base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void base_assert_fail(const char *expr, const char *file, int line) {
    fprintf(stderr, "mugen: internal error: %s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

/* ---- allocation ---- */
static void *default_realloc(void *p, size_t size, void *user) {
    (void)user;
    if (size == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, size);
}
static mg_realloc_fn g_realloc = default_realloc;
static void *g_user;

void mg_set_allocator(mg_realloc_fn fn, void *user) {
    g_realloc = fn ? fn : default_realloc;
    g_user = fn ? user : NULL;
}
void *base_alloc(size_t size) { return g_realloc(NULL, size ? size : 1, g_user); }
void *base_calloc(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = base_alloc(n * size);
    if (p) memset(p, 0, n * size > 0 ? n * size : 1);
    return p;
}
void *base_realloc(void *p, size_t size) { return g_realloc(p, size ? size : 1, g_user); }
void base_free(void *p) {
    if (p) g_realloc(p, 0, g_user);
}
void mg_free(void *p) { base_free(p); }
char *base_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = base_alloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- error context ---- */
mg_status ctx_verr(mg_ctx *ctx, mg_status code, const char *fmt, va_list ap) {
    if (ctx) vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
    return code;
}
mg_status ctx_err(mg_ctx *ctx, mg_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ctx_verr(ctx, code, fmt, ap);
    va_end(ap);
    return code;
}
mg_ctx *mg_ctx_new(void) { return base_calloc(1, sizeof(mg_ctx)); }
void mg_ctx_free(mg_ctx *ctx) { base_free(ctx); }
const char *mg_ctx_error(const mg_ctx *ctx) { return ctx ? ctx->msg : ""; }
const char *mg_status_name(mg_status s) {
    static const char *names[] = {"ok", "parse error", "shape error", "I/O error",
                                  "out of memory", "unsupported", "division by zero",
                                  "invalid argument", "limit exceeded", "no device",
                                  "compile error", "launch error", "mismatch"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown status";
}

/* ---- arena ---- */
struct arena_chunk {
    arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};
void arena_init(arena *a) { a->head = NULL, a->total = 0; }
void *arena_alloc(arena *a, size_t size) {
    size = (size + 15) & ~(size_t)15;
    if (size == 0) size = 16;
    arena_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t want = size > 60000 ? size : 64000;
        c = base_alloc(sizeof *c + want);
        if (!c) return NULL;
        c->size = want, c->used = 0, c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->total += size;
    memset(p, 0, size);
    return p;
}
char *arena_strndup(arena *a, const char *s, size_t n) {
    char *d = arena_alloc(a, n + 1);
    if (d) memcpy(d, s, n), d[n] = 0;
    return d;
}
char *arena_strdup(arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }
void arena_free(arena *a) {
    for (arena_chunk *c = a->head, *n; c; c = n) n = c->next, base_free(c);
    a->head = NULL, a->total = 0;
}

/* ---- strbuf ---- */
static int sb_reserve(strbuf *b, size_t extra) {
    if (b->oom) return 0;
    if (b->len + extra + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *s = base_realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return 0;
    }
    b->s = s, b->cap = cap;
    return 1;
}
void sb_printf(strbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || !sb_reserve(b, (size_t)n)) return;
    if ((size_t)n < sizeof tmp) {
        memcpy(b->s + b->len, tmp, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}
void sb_puts(strbuf *b, const char *s) {
    size_t n = strlen(s);
    if (!sb_reserve(b, n)) return;
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}
char *sb_take(strbuf *b) {
    if (!sb_reserve(b, 0)) {
        sb_free(b);
        return NULL;
    }
    char *s = b->s;
    s[b->len] = 0;
    b->s = NULL, b->len = b->cap = 0;
    return s;
}
void sb_free(strbuf *b) {
    base_free(b->s);
    b->s = NULL, b->len = b->cap = 0, b->oom = 0;
}

/* ---- strmap ---- */
static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}
static int strmap_grow(strmap *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    const char **keys = base_calloc(cap, sizeof *keys);
    int *vals = base_calloc(cap, sizeof *vals);
    if (!keys || !vals) {
        base_free(keys), base_free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = hash_str(m->keys[i]) & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i], vals[j] = m->vals[i];
    }
    base_free(m->keys), base_free(m->vals);
    m->keys = keys, m->vals = vals, m->cap = cap;
    return 0;
}
int strmap_put(strmap *m, const char *key, int val) {
    if ((m->n + 1) * 2 > m->cap && strmap_grow(m)) return -1;
    size_t j = hash_str(key) & (m->cap - 1);
    while (m->keys[j] && strcmp(m->keys[j], key)) j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) m->n++;
    m->keys[j] = key, m->vals[j] = val;
    return 0;
}
int strmap_get(const strmap *m, const char *key) {
    if (!m->cap) return -1;
    size_t j = hash_str(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (!strcmp(m->keys[j], key)) return m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    return -1;
}
void strmap_free(strmap *m) {
    base_free(m->keys), base_free(m->vals);
    m->keys = NULL, m->vals = NULL, m->cap = m->n = 0;
}

/* ---- rng ---- */
uint64_t rng_next(rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }
/* Lemire's multiply-shift on 64 bits: the high 64 bits of x * n, rejecting the x whose low
 * product falls in the biased range, so exactly uniform. The low part is below n only with
 * probability n / 2^64, so the division that finds the range almost never runs. */
uint32_t rng_below(rng *r, uint32_t n) {
    MG_ASSERT(n > 0);
    __extension__ typedef unsigned __int128 u128;
    u128 m = (u128)rng_next(r) * n;
    if ((uint64_t)m < n) {
        uint64_t t = (0 - (uint64_t)n) % n;
        while ((uint64_t)m < t) m = (u128)rng_next(r) * n;
    }
    return (uint32_t)(m >> 64);
}

/* ---- f16 / bf16 ---- */
static uint32_t f2u(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static float u2f(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}
uint16_t base_f32_to_f16(float x) {
    uint32_t u = f2u(x), sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
    if (a < 0x38800000u) {                                    /* subnormal or zero in f16 */
        /* value = a_float; f16 subnormal unit is 2^-24: round(x * 2^24) to nearest even */
        float v = u2f(a) * 0x1.0p24f;
        float r = nearbyintf(v); /* default rounding mode: nearest even */
        return (uint16_t)(sign | (uint32_t)r);
    }
    uint32_t e = ((a >> 23) - 112) << 10, m = (a >> 13) & 0x3ffu;
    uint32_t h = e | m, rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}
float base_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) return u2f(sign) + (sign ? -1.0f : 1.0f) * (float)m * 0x1.0p-24f;
    if (e == 31) return u2f(sign | 0x7f800000u | (m << 13));
    return u2f(sign | ((e + 112) << 23) | (m << 13));
}
uint16_t base_f32_to_bf16(float x) {
    uint32_t u = f2u(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    uint32_t rest = u & 0xffffu, h = u >> 16;
    if (rest > 0x8000u || (rest == 0x8000u && (h & 1))) h++;
    return (uint16_t)h;
}
float base_bf16_to_f32(uint16_t h) { return u2f((uint32_t)h << 16); }
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
/* Whether F16C can run: the CPU has it (CPUID.1:ECX bit 29) and the OS saves AVX state (bits
 * 27 and 28, and XCR0's SSE and AVX bits), since its instructions are VEX-encoded. Asked once. */
static int has_f16c(void) {
    static int known = -1;
    int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (v < 0) {
        unsigned a, b, c, d, lo, hi;
        v = __get_cpuid(1, &a, &b, &c, &d) && (c >> 27 & 7) == 7;
        if (v) {
            __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
            v = (lo & 6) == 6;
        }
        __atomic_store_n(&known, v, __ATOMIC_RELAXED);
    }
    return v;
}
/* The same rounding (to nearest even, then back) in one instruction each way where the CPU has
 * F16C: the verifier rounds every input of every float test through here. */
__attribute__((target("f16c"))) static float round_f16_hw(float x) { return _cvtsh_ss(_cvtss_sh(x, 0)); }
float base_round_f16(float x) {
    if (x == x && has_f16c()) return round_f16_hw(x); /* NaN: the software path's */
    return base_f16_to_f32(base_f32_to_f16(x));
}
#else
float base_round_f16(float x) { return base_f16_to_f32(base_f32_to_f16(x)); }
#endif
float base_round_bf16(float x) { return base_bf16_to_f32(base_f32_to_bf16(x)); }
double base_round_dtype(double x, mg_dtype t) {
    switch (t) {
    case MG_F16: return base_round_f16((float)x);
    case MG_BF16: return base_round_bf16((float)x);
    case MG_F32: return (float)x;
    }
    return x;
}
const char *base_dtype_name(mg_dtype t) {
    return t == MG_F16 ? "f16" : t == MG_BF16 ? "bf16" : "f32";
}
size_t base_dtype_size(mg_dtype t) { return t == MG_F32 ? 4 : 2; }

double base_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
