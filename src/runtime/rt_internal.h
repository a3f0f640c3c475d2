/* runtime internals shared by cache.c, nvrtc.c, cuda.c and crun.c: cache paths, loading a
 * shared library from a list of candidates, and resolving a table of symbols from it.
 * Not part of runtime.h: nothing outside src/runtime/ needs these. */
#ifndef MG_RT_INTERNAL_H
#define MG_RT_INTERNAL_H

#include "runtime.h"

/* Writes "<cache dir>/<16 hex digits of key>.<ext>" into buf (n bytes). Returns 0, or -1 when
 * caching is off, no folder can be made or the path does not fit. */
int rt_cache_path(uint64_t key, const char *ext, char *buf, size_t n);
/* Appends the cache's trailer (length and checksum of what the file holds) to the file at
 * path, which is not in the cache yet (it is renamed there after). 0, or -1 on an I/O error. */
int rt_cache_seal(const char *path);
/* The file at path: 1 when it ends with a trailer that matches its data (rt_cache_seal), 0
 * when there is no such file, -1 when it is damaged (truncated, changed, unsealed) or
 * cannot be read. */
int rt_cache_check(const char *path);

/* dlopens the library named by environment variable `env` when it is set, else the first of
 * `names` (NULL-terminated) that loads. Returns the handle, or NULL with every attempt and
 * its dlerror() text appended to `why` ("name: error; ..."). */
void *rt_dlopen_first(const char *env, const char *const *names, strbuf *why);

/* One symbol to resolve into a struct of function pointers: the function pointer lives at
 * byte `offset` of the struct; `alt` (may be NULL) is tried when `name` is missing. */
typedef struct rt_sym {
    const char *name, *alt;
    size_t offset;
} rt_sym;
/* Resolves every entry of syms[0..n) from handle h into the struct at `table`. Returns 0, or
 * -1 with the first missing name in `why`. */
int rt_resolve(void *h, const rt_sym *syms, size_t n, void *table, strbuf *why);

/* MG_ERR_COMPILE with `head` and as many whole lines of the compiler's output `log` as fit
 * in ctx's message (a note says when it was cut). */
mg_status rt_compile_error(mg_ctx *ctx, const char *head, const char *log);

#endif
