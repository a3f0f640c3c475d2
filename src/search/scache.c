/* scache: the search cache (docs/search.md "The search cache"): a finished search's ranked
 * μGraphs on disk, keyed by the piece's canonical form up to renaming (src/ir/canon.c), the
 * options that change what a search finds, the target device and mugen's versions. A second
 * search of the same piece, or of the same layer under other names, is a file read.
 *
 * One flat folder (MUGEN_SEARCH_CACHE, docs/env.md); an entry is "<16 hex digits>.entry",
 * the digits a 64-bit FNV-1a of the key text. The entry holds the key text itself (a hash
 * collision reads as a miss), the result's counts and every μGraph in canonical names, and
 * ends with a seal line (the length and FNV-1a of what precedes it): a torn, truncated or
 * changed entry is reported (one line on stderr), removed and searched again, never trusted.
 * Writes go to a temporary file in the folder, then rename(2): two processes that search the
 * same piece at once both search and the last rename wins (both entries are whole and equal
 * in meaning). Least recently used entries (file times; a hit touches its entry) go when the
 * folder passes MUGEN_SEARCH_CACHE_MB. Only complete searches are stored.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../ir/canon.h"
#include "../runtime/runtime.h"
#include "search_int.h"

/* Bumped whenever the entry's layout or the key's text changes. */
enum { SCACHE_FORMAT = 1 };
#define SCACHE_DEFAULT_MB 256.0

/* FNV-1a (rt_hash) from this cache's own starting value: entry names and seals stay what
 * they were when it had its own copy of the loop */
static uint64_t hash_bytes(const char *p, size_t n) { return rt_hash(1469598103934665603ull, p, n); }

const char *sr_cache_dir(void) {
    static _Thread_local char dir[4096];
    const char *env = getenv("MUGEN_SEARCH_CACHE"), *base;
    int n;
    if (env && *env) {
        if (!strcmp(env, "off")) return NULL;
        n = snprintf(dir, sizeof dir, "%s", env);
    } else if ((base = getenv("XDG_CACHE_HOME")) && *base) {
        n = snprintf(dir, sizeof dir, "%s/mugen/search", base);
    } else if ((base = getenv("HOME")) && *base) {
        n = snprintf(dir, sizeof dir, "%s/.cache/mugen/search", base);
    } else {
        return NULL;
    }
    if (n <= 0 || (size_t)n >= sizeof dir) return NULL;
    while (n > 1 && dir[n - 1] == '/') dir[--n] = 0;
    return rt_mkdir_p(dir) == 0 ? dir : NULL;
}

/* ---- the key ---- */

/* The options that change what a search finds (every one but the time limit, threads,
 * progress, the checkpoint and the stop flag), the device and the versions, then the
 * canonical program. */
static mg_status key_text(const ir_canon *c, const sr_opts *o, mg_ctx *ctx, strbuf *sb) {
    const mg_device *dev = mg_device_lookup(o->device, ctx);
    if (!dev) return MG_ERR_INVALID;
    uint64_t ops = ~0ull;
    char why[200];
    if (o->ops && !(ops = sr_ops_mask(o->ops, why, sizeof why))) return ctx_err(ctx, MG_ERR_INVALID, "%s", why);
    sb_printf(sb, "mugen search cache %d, mugen %s, search %d\n", SCACHE_FORMAT, MG_VERSION, SEARCH_VERSION);
    sb_printf(sb, "device %s, %d SMs\n", dev->name, o->n_sm > 0 ? o->n_sm : dev->n_sm);
    sb_printf(sb, "limits kops %d bops %d kin %d kout %d kernels %d grid-dims %d blocks %d grid", o->max_kops,
              o->max_bops, o->max_kin, o->max_kout, o->max_kernels, o->max_grid_dims, o->max_blocks);
    for (int i = 0; i < o->n_grid; i++) sb_printf(sb, "%s%d", i ? "," : " ", o->grid[i]);
    sb_puts(sb, " forloop");
    for (int i = 0; i < o->n_forloop; i++) sb_printf(sb, "%s%d", i ? "," : " ", o->forloop[i]);
    sb_printf(sb, "\nprune %d slack %.17g tests %d seed %llu egraph %lld screen %d lowered %d\noperators", o->prune,
              o->slack, o->verify_tests, (unsigned long long)o->seed, (long long)o->eg_max_nodes,
              getenv("MUGEN_SEARCH_NO_SCREEN") ? 0 : 1, !o->no_lowered);
    for (int op = 0; op < IR_OP_COUNT; op++)
        if (ir_ops[op].search && (ops >> op & 1)) sb_printf(sb, " %s", ir_ops[op].name);
    sb_printf(sb, "\n%s", c->text);
    return sb->oom ? ctx_err(ctx, MG_ERR_NOMEM, "out of memory") : MG_OK;
}

/* A cache slot: the canonical form, the key text, its hash and the entry's path. */
typedef struct slot {
    ir_canon canon;
    strbuf key;
    uint64_t hash;
    char path[4200];
} slot;

static void slot_free(slot *s) {
    ir_canon_free(&s->canon);
    sb_free(&s->key);
}

/* Fills s for prog and o in cache folder dir. */
static mg_status slot_new(const ir_graph *prog, const sr_opts *o, const char *dir, mg_ctx *ctx, slot *s) {
    memset(s, 0, sizeof *s);
    mg_status rc = ir_canon_new(prog, ctx, &s->canon);
    if (!rc) rc = key_text(&s->canon, o, ctx, &s->key);
    if (!rc) {
        s->hash = hash_bytes(s->key.s, s->key.len);
        snprintf(s->path, sizeof s->path, "%s/%016llx.entry", dir, (unsigned long long)s->hash);
    }
    if (rc) slot_free(s);
    return rc;
}

/* ---- renaming: μGraph text through the IR, the expression by its identifiers ---- */

/* Copies abstract expression s ("(mul W (exp X))") with every variable equal to from[k]
 * replaced by to[k]; a word right after '(' is an operator and stays. NULL if out of memory. */
static char *rename_words(const char *s, const char *const *from, const char *const *to, int n) {
    strbuf sb = {0};
    for (char prev = 0; *s; prev = s[-1]) {
        size_t w = 0;
        int word = (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_';
        while (word && ((s[w] >= 'A' && s[w] <= 'Z') || (s[w] >= 'a' && s[w] <= 'z') ||
                        (s[w] >= '0' && s[w] <= '9') || s[w] == '_'))
            w++;
        if (!word) w = 1;
        int k = word && prev != '(' ? 0 : n;
        while (k < n && (strlen(from[k]) != w || memcmp(from[k], s, w))) k++;
        if (k < n) sb_puts(&sb, to[k]);
        else sb_printf(&sb, "%.*s", (int)w, s);
        s += w;
    }
    return sb.oom ? (sb_free(&sb), NULL) : sb.s ? sb_take(&sb) : base_strdup("");
}

/* Is line (up to its '\n') "input NAME : ..." for this name? */
static int declares(const char *line, const char *name) {
    size_t n = strlen(name);
    return !strncmp(line, "input ", 6) && !strncmp(line + 6, name, n) && !strncmp(line + 6 + n, " :", 2);
}

/* Text of a printed μGraph (its input lines first, ir_print_text) with the input lines in
 * prog's declaration order, as a search of prog writes them. NULL if out of memory. */
static char *order_inputs(const char *text, const ir_graph *prog) {
    const char *rest = text;
    while (!strncmp(rest, "input ", 6) && strchr(rest, '\n')) rest = strchr(rest, '\n') + 1;
    strbuf sb = {0};
    for (int i = 0; i < prog->n_nodes; i++) { /* the program's inputs in its order */
        const ir_node *n = &prog->nodes[i];
        for (const char *l = text; n->op == IR_OP_INPUT && l < rest; l = strchr(l, '\n') + 1)
            if (declares(l, n->name)) sb_printf(&sb, "%.*s", (int)(strchr(l, '\n') + 1 - l), l);
    }
    for (const char *l = text; l < rest; l = strchr(l, '\n') + 1) { /* any the program lacks */
        const char *name = l + 6, *end = strstr(name, " :");
        if (!end || end > strchr(l, '\n')) continue;
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)(end - name), name);
        if (ir_find(prog, buf) < 0) sb_printf(&sb, "%.*s", (int)(strchr(l, '\n') + 1 - l), l);
    }
    sb_puts(&sb, rest);
    return sb.oom ? (sb_free(&sb), NULL) : sb_take(&sb);
}

/* Renames every μGraph of r and its expression: names from[k] -> to[k]; with prog, the
 * inputs are then declared in prog's order. */
static mg_status rename_result(sr_result *r, const char *const *from, const char *const *to, int n,
                               const ir_graph *prog, mg_ctx *ctx) {
    for (int i = 0; i < r->n_found; i++) {
        char *t = NULL;
        mg_status rc = ir_rename_text(r->found[i].text, from, to, n, ctx, &t);
        if (!rc && prog) {
            char *o = order_inputs(t, prog);
            base_free(t);
            if (!(t = o)) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        }
        if (rc) return rc;
        base_free(r->found[i].text);
        r->found[i].text = t;
    }
    if (r->expr) {
        char *e = rename_words(r->expr, from, to, n);
        if (!e) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        base_free(r->expr);
        r->expr = e;
    }
    return MG_OK;
}

/* ---- the entry ---- */

/* The entry's text (seal line not included): header, key, counts, expression, why none,
 * then each μGraph as a line of numbers and the lengths of its verdict and text. */
static void entry_text(const slot *s, const sr_result *r, strbuf *sb) {
    sb_printf(sb, "mugen search cache entry %d\nkey %zu\n%s\n", SCACHE_FORMAT, s->key.len, s->key.s);
    sb_printf(sb, "result %d %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %d %.17g %.17g "
              "%.17g %.17g\n", r->n_found, (long long)r->states, (long long)r->pruned, (long long)r->candidates,
              (long long)r->rejected, (long long)r->duplicates, (long long)r->screened, (long long)r->dominated,
              (long long)r->unfit, (long long)r->tasks, (long long)r->tasks_done, (long long)r->tasks_resumed,
              (long long)r->eg_nodes, (long long)r->eg_classes, r->eg_saturated, r->verify_seconds,
              r->first_seconds, r->seconds, r->eg_seconds);
    const char *expr = r->expr ? r->expr : "";
    sb_printf(sb, "expr %zu\n%s\nwhy %zu\n%s\n", strlen(expr), expr, strlen(r->why_none), r->why_none);
    for (int i = 0; i < r->n_found; i++) {
        const sr_found *f = &r->found[i];
        sb_printf(sb, "ugraph %.17g %d %d %d %d %.17g %d %zu %zu\n%s\n%s\n", f->cost_us, f->kops, f->bops,
                  f->kernels, f->aeq, f->float_error, f->task, strlen(f->verdict), strlen(f->text), f->verdict,
                  f->text);
    }
}

/* A reading position in an entry (NUL-terminated; lines are cut in place). */
typedef struct cursor {
    char *p, *end;
} cursor;

/* The next line, its '\n' replaced by NUL; NULL at the end. */
static char *cur_line(cursor *c) {
    char *nl = c->p < c->end ? memchr(c->p, '\n', (size_t)(c->end - c->p)) : NULL;
    if (!nl) return NULL;
    char *l = c->p;
    *nl = 0, c->p = nl + 1;
    return l;
}

/* The next n bytes, which a '\n' must follow (made a NUL); NULL if they are not there. */
static char *cur_blob(cursor *c, size_t n) {
    if ((size_t)(c->end - c->p) < n + 1 || c->p[n] != '\n') return NULL;
    char *b = c->p;
    b[n] = 0, c->p += n + 1;
    return b;
}

/* One μGraph of the entry into f (its text a new string). 0, -1 if malformed, -2 if out of
 * memory. */
static int parse_found(cursor *c, sr_found *f) {
    char *l = cur_line(c), *v, *t;
    size_t nv, nt;
    memset(f, 0, sizeof *f);
    if (!l || sscanf(l, "ugraph %lf %d %d %d %d %lf %d %zu %zu", &f->cost_us, &f->kops, &f->bops, &f->kernels,
                     &f->aeq, &f->float_error, &f->task, &nv, &nt) != 9)
        return -1;
    if (nv >= sizeof f->verdict || !(v = cur_blob(c, nv)) || !(t = cur_blob(c, nt))) return -1;
    memcpy(f->verdict, v, nv + 1);
    return (f->text = base_strdup(t)) ? 0 : -2;
}

/* The counts line of the entry into r. 0, or -1 if malformed. */
static int parse_counts(const char *l, sr_result *r) {
    long long v[13];
    int n = l ? sscanf(l, "result %d %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %d %lf %lf %lf %lf",
                       &r->n_found, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10],
                       &v[11], &v[12], &r->eg_saturated, &r->verify_seconds, &r->first_seconds, &r->seconds,
                       &r->eg_seconds) : 0;
    if (n != 19 || r->n_found < 0 || r->n_found > 10000000) return -1;
    r->states = v[0], r->pruned = v[1], r->candidates = v[2], r->rejected = v[3], r->duplicates = v[4];
    r->screened = v[5], r->dominated = v[6], r->unfit = v[7], r->tasks = v[8], r->tasks_done = v[9];
    r->tasks_resumed = v[10], r->eg_nodes = v[11], r->eg_classes = v[12];
    return 0;
}

/* Reads a sealed entry's body (seal checked, cut off) into *r after its key text is compared
 * with keytext. 0; -1 damaged (what is wrong in why); -2 another search's entry (a
 * collision); -3 out of memory (the entry may be whole). */
static int parse_entry(char *buf, size_t size, const char *keytext, sr_result *r, char *why, size_t nwhy) {
    cursor c = {buf, buf + size};
    char *l = cur_line(&c), *k, *e, *w;
    size_t nk, ne, nw;
    int fmt = 0;
    memset(r, 0, sizeof *r);
    if (!l || sscanf(l, "mugen search cache entry %d", &fmt) != 1 || fmt != SCACHE_FORMAT)
        return snprintf(why, nwhy, "not an entry of this format"), -1;
    if (!(l = cur_line(&c)) || sscanf(l, "key %zu", &nk) != 1 || !(k = cur_blob(&c, nk)))
        return snprintf(why, nwhy, "no key"), -1;
    if (strcmp(k, keytext)) return snprintf(why, nwhy, "it holds another search's key"), -2;
    if (parse_counts(cur_line(&c), r)) return snprintf(why, nwhy, "bad counts"), -1;
    int n = r->n_found;
    r->n_found = 0;
    if (!(l = cur_line(&c)) || sscanf(l, "expr %zu", &ne) != 1 || !(e = cur_blob(&c, ne)) ||
        !(l = cur_line(&c)) || sscanf(l, "why %zu", &nw) != 1 || nw >= sizeof r->why_none || !(w = cur_blob(&c, nw)))
        return snprintf(why, nwhy, "bad expression or reason"), -1;
    memcpy(r->why_none, w, nw + 1);
    if (!(r->expr = base_strdup(e)) || (n && !(r->found = base_calloc((size_t)n, sizeof *r->found))))
        return snprintf(why, nwhy, "out of memory"), -3;
    int bad = 0;
    while (r->n_found < n && !(bad = parse_found(&c, &r->found[r->n_found]))) r->n_found++;
    if (bad == -2) return snprintf(why, nwhy, "out of memory"), -3;
    if (r->n_found < n || c.p != c.end) return snprintf(why, nwhy, "bad μGraph %d", r->n_found + 1), -1;
    return 0;
}

/* The seal: "end <length of what precedes> <its FNV-1a in hex>\n" as the last line. The body's
 * length if buf (size bytes, NUL after) ends with a correct seal, else -1. */
static long long unseal(const char *buf, size_t size) {
    if (size < 2 || buf[size - 1] != '\n') return -1;
    size_t i = size - 1;
    while (i > 0 && buf[i - 1] != '\n') i--;
    unsigned long long n, h;
    if (sscanf(buf + i, "end %llu %llx", &n, &h) != 2 || n != i) return -1;
    return h == hash_bytes(buf, i) ? (long long)i : -1;
}

/* Reads the whole file at path into a NUL-terminated base_alloc'd buffer. NULL with errno
 * (ENOENT: no file). */
static char *read_file(const char *path, size_t *n) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return NULL;
    struct stat st;
    char *buf = NULL;
    size_t got = 0, size = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) size = (size_t)st.st_size, buf = base_alloc(size + 1);
    while (buf && got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (buf) buf[got] = 0;
    *n = got;
    if (!buf) errno = EIO;
    return buf;
}

/* A damaged or foreign entry: one line on stderr, and the file goes (a later store of this
 * search replaces it). */
static void drop_entry(const slot *s, const char *why) {
    fprintf(stderr, "mugen: note: the search cache entry %s is damaged (%.*s); removing it and searching "
            "again\n", s->path, (int)strcspn(why, "\n"), why);
    unlink(s->path);
}

mg_status sr_cache_lookup(const ir_graph *prog, const sr_opts *o, mg_ctx *ctx, sr_result *r, int *hit) {
    const char *dir = sr_cache_dir();
    slot s;
    *hit = 0;
    memset(r, 0, sizeof *r);
    if (!dir) return MG_OK;
    mg_status rc = slot_new(prog, o, dir, ctx, &s);
    if (rc) return rc;
    size_t size = 0;
    char *buf = read_file(s.path, &size), why[200] = "";
    long long body = buf ? unseal(buf, size) : -1;
    int got = body < 0 ? -1 : parse_entry(buf, (size_t)body, s.key.s, r, why, sizeof why);
    if (buf && body < 0) drop_entry(&s, size ? "its seal does not match: truncated or changed" : "empty");
    else if (got == -3) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    else if (buf && got) drop_entry(&s, why);
    if (!got) rc = rename_result(r, s.canon.canon, s.canon.real, s.canon.n, prog, ctx);
    if (!got && rc && rc != MG_ERR_NOMEM) { /* a μGraph that does not parse back is damage too */
        drop_entry(&s, mg_ctx_error(ctx));
        rc = MG_OK, got = -1;
    }
    if (got || rc) sr_result_free(r);
    else {
        *hit = 1, r->cached = 1;
        snprintf(r->cache_key, sizeof r->cache_key, "%016llx", (unsigned long long)s.hash);
        utimensat(AT_FDCWD, s.path, NULL, 0); /* recently used: the last to be evicted */
    }
    base_free(buf);
    slot_free(&s);
    return rc;
}

/* ---- storing and evicting ---- */

/* A deep copy of r's μGraphs and expression into *c (free with sr_result_free). */
static mg_status result_copy(const sr_result *r, sr_result *c, mg_ctx *ctx) {
    *c = *r;
    c->found = NULL, c->n_found = 0, c->expr = NULL;
    if ((r->expr && !(c->expr = base_strdup(r->expr))) ||
        (r->n_found && !(c->found = base_calloc((size_t)r->n_found, sizeof *c->found))))
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (; c->n_found < r->n_found; c->n_found++) {
        c->found[c->n_found] = r->found[c->n_found];
        if (!(c->found[c->n_found].text = base_strdup(r->found[c->n_found].text)))
            return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    return MG_OK;
}

/* Writes text (n bytes) to path through a temporary file in dir and rename(2). */
static mg_status write_atomic(const char *dir, const char *path, const char *text, size_t n, mg_ctx *ctx) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
    int fd = mkstemp(tmp);
    if (fd < 0) return ctx_err(ctx, MG_ERR_IO, "cannot write in the search cache %s: %s", dir, strerror(errno));
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, text + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    int bad = done != n || fchmod(fd, 0644) != 0;
    bad |= close(fd) != 0;
    if (bad || rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        return ctx_err(ctx, MG_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    return MG_OK;
}

/* One file of the folder, for eviction. */
typedef struct cfile {
    char name[64];
    struct timespec when; /* last written or used */
    long long bytes;
} cfile;

static int by_age(const void *a, const void *b) {
    const cfile *x = a, *y = b;
    if (x->when.tv_sec != y->when.tv_sec) return x->when.tv_sec < y->when.tv_sec ? -1 : 1;
    if (x->when.tv_nsec != y->when.tv_nsec) return x->when.tv_nsec < y->when.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The size limit in bytes: MUGEN_SEARCH_CACHE_MB (a positive number), else the default. */
static double limit_bytes(void) {
    const char *env = getenv("MUGEN_SEARCH_CACHE_MB");
    char *end;
    double mb = env ? strtod(env, &end) : 0;
    if (!env || end == env || *end || !(mb > 0)) mb = SCACHE_DEFAULT_MB;
    return mb * 1024 * 1024;
}

/* Lists dir's entries into *out (base_alloc'd); removes temporary files older than an hour
 * (a writer that died). The count, or -1. */
static int list_entries(const char *dir, cfile **out, long long *total) {
    DIR *d = opendir(dir);
    int n = 0, cap = 0;
    *out = NULL, *total = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) {
        char path[4400];
        struct stat st;
        size_t len = strlen(e->d_name);
        int entry = len == 22 && !strcmp(e->d_name + 16, ".entry"), tmp = !strncmp(e->d_name, ".tmp-", 5);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if ((!entry && !tmp) || stat(path, &st) || !S_ISREG(st.st_mode)) continue;
        if (tmp && time(NULL) - st.st_mtime > 3600) unlink(path);
        if (tmp) continue;
        if (n == cap) {
            cfile *nf = base_realloc(*out, sizeof *nf * (size_t)(cap = cap ? 2 * cap : 64));
            if (!nf) break;
            *out = nf;
        }
        snprintf((*out)[n].name, sizeof (*out)[n].name, "%.40s", e->d_name);
        (*out)[n].when = st.st_mtim, (*out)[n++].bytes = (long long)st.st_size;
        *total += (long long)st.st_size;
    }
    closedir(d);
    return n;
}

/* Removes the least recently used entries of dir until it is under the size limit; `keep`
 * (the entry just written) stays even if it alone is over. */
static void evict(const char *dir, const char *keep) {
    cfile *f;
    long long total;
    int n = list_entries(dir, &f, &total);
    double limit = limit_bytes();
    if (n > 0 && total > limit) qsort(f, (size_t)n, sizeof *f, by_age);
    for (int i = 0; i < n && total > limit; i++) {
        if (!strcmp(f[i].name, keep)) continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, f[i].name);
        if (!unlink(path)) total -= f[i].bytes;
    }
    base_free(f);
}

mg_status sr_cache_store(const ir_graph *prog, const sr_opts *o, const sr_result *r, mg_ctx *ctx) {
    const char *dir = sr_cache_dir();
    if (!dir || r->cached || r->stopped || r->tasks_done < r->tasks) return MG_OK; /* partial: never */
    slot s;
    sr_result c;
    strbuf sb = {0};
    memset(&c, 0, sizeof c);
    mg_status rc = slot_new(prog, o, dir, ctx, &s);
    if (rc) return rc;
    rc = result_copy(r, &c, ctx);
    if (!rc) rc = rename_result(&c, s.canon.real, s.canon.canon, s.canon.n, NULL, ctx);
    if (!rc) {
        entry_text(&s, &c, &sb);
        size_t body = sb.len;
        sb_printf(&sb, "end %zu %llx\n", body, (unsigned long long)hash_bytes(sb.s ? sb.s : "", body));
        rc = sb.oom ? ctx_err(ctx, MG_ERR_NOMEM, "out of memory") : write_atomic(dir, s.path, sb.s, sb.len, ctx);
    }
    if (!rc) evict(dir, strrchr(s.path, '/') + 1);
    sb_free(&sb);
    sr_result_free(&c);
    slot_free(&s);
    return rc;
}

/* ---- unfinished searches ---- */

int sr_cache_partial_dir(const ir_graph *prog, const sr_opts *o, mg_ctx *ctx, char *buf, size_t n) {
    const char *dir = sr_cache_dir();
    buf[0] = 0;
    if (!dir) return -1;
    slot s;
    mg_status rc = slot_new(prog, o, dir, ctx, &s);
    if (rc) return -1;
    sb_puts(&s.key, "\nas searched\n");
    ir_print_text(prog, &s.key); /* its checkpoint's μGraphs name prog's own tensors */
    int len = s.key.oom ? -1 : snprintf(buf, n, "%s/partial/%016llx", dir, (unsigned long long)hash_bytes(s.key.s, s.key.len));
    slot_free(&s);
    if (len <= 0 || (size_t)len >= n || rt_mkdir_p(buf)) {
        buf[0] = 0;
        return -1;
    }
    return 0;
}

void sr_cache_partial_drop(const char *dir) {
    char path[4400];
    snprintf(path, sizeof path, "%s/checkpoint", dir);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/checkpoint/%s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    snprintf(path, sizeof path, "%s/checkpoint", dir);
    rmdir(path);
    rmdir(dir);
}
