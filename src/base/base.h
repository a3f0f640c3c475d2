/* base: standalone pieces every stage uses. Allocation hook, arenas, growable strings,
 * a string->int map, a seeded RNG, f16/bf16 rounding, the error context and MG_ASSERT.
 * Nothing here knows about tensors or programs. */
#ifndef MG_BASE_H
#define MG_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "mugen.h"

/* 128-bit integers (GCC/Clang), marked so -Wpedantic accepts them. */
__extension__ typedef unsigned __int128 mg_u128;
__extension__ typedef __int128 mg_i128;

/* Broken invariants (bugs, never user input): always on, prints file:line and expression. */
#define MG_ASSERT(x) \
    ((x) ? (void)0 : base_assert_fail(#x, __FILE__, __LINE__))
_Noreturn void base_assert_fail(const char *expr, const char *file, int line);

/* ---- allocation (all host memory goes through mg_set_allocator's hook) ---- */
/* Return NULL on failure; size 0 allocates 1 byte. base_free(NULL) is a no-op. */
void *base_alloc(size_t size);
void *base_calloc(size_t n, size_t size); /* zeroed; NULL on overflow of n*size */
void *base_realloc(void *p, size_t size);
void base_free(void *p);
char *base_strdup(const char *s);

/* ---- error context ---- */
struct mg_ctx {
    char msg[2048];
};
/* Formats a message into ctx (may be NULL) and returns code. */
mg_status ctx_err(mg_ctx *ctx, mg_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
mg_status ctx_verr(mg_ctx *ctx, mg_status code, const char *fmt, va_list ap);

/* ---- arena: bump allocator, everything freed at once ----
 * Invariant: each chunk's `used` <= `size`; returned pointers are 16-byte aligned. */
typedef struct arena_chunk arena_chunk;
typedef struct arena {
    arena_chunk *head;
    size_t total; /* bytes handed out, for limits and statistics */
} arena;
void arena_init(arena *a);
void *arena_alloc(arena *a, size_t size); /* zeroed memory owned by a; NULL if out of memory */
char *arena_strdup(arena *a, const char *s);
char *arena_strndup(arena *a, const char *s, size_t n);
void arena_free(arena *a); /* frees every chunk; the arena can be reused after arena_init */

/* ---- strbuf: growable NUL-terminated string ---- */
typedef struct strbuf {
    char *s;
    size_t len, cap;
    int oom; /* set once an append failed; later appends are ignored */
} strbuf;
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_puts(strbuf *b, const char *s);
char *sb_take(strbuf *b); /* returns the string (caller frees with base_free), NULL if oom */
void sb_free(strbuf *b);

/* ---- strmap: string -> int, open addressing; keys are borrowed (must outlive the map) ---- */
typedef struct strmap {
    const char **keys;
    int *vals;
    size_t cap, n;
} strmap;
/* Returns 0 on success, -1 if out of memory. Overwrites an existing key. */
int strmap_put(strmap *m, const char *key, int val);
/* Returns the value, or -1 if absent. */
int strmap_get(const strmap *m, const char *key);
void strmap_free(strmap *m);

/* ---- rng: splitmix64, deterministic from a seed ---- */
typedef struct rng {
    uint64_t s;
} rng;
uint64_t rng_next(rng *r);
double rng_uniform(rng *r);               /* [0, 1) */
uint32_t rng_below(rng *r, uint32_t n);   /* uniform in [0, n), n > 0 */

/* ---- reduced-precision rounding (round to nearest even; NaN and Inf kept) ---- */
float base_round_f16(float x);
float base_round_bf16(float x);
uint16_t base_f32_to_f16(float x);
float base_f16_to_f32(uint16_t h);
uint16_t base_f32_to_bf16(float x);
float base_bf16_to_f32(uint16_t h);
/* Rounds x to dtype (f32: to float). */
double base_round_dtype(double x, mg_dtype t);
const char *base_dtype_name(mg_dtype t);
size_t base_dtype_size(mg_dtype t);

/* Seconds on the monotonic clock (for intervals only). */
double base_now_s(void);

#endif
