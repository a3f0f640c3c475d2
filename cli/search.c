/* mugen search / mugen optimize: the superoptimizer from the command line (docs/search.md).
 *   mugen search PROGRAM --out DIR   every verified μGraph, ranked, written to DIR
 *   mugen optimize PROGRAM           search, then run the best-ranked ones (GPU, else C) and
 *                                    keep the fastest that matches the reference
 * Exit status: 0 found (optimize: a correct μGraph kept), 1 an error, 2 a bad command line,
 * 3 nothing found (the reason is printed). Ctrl-C or --time-limit ends the search early;
 * what was found is written, and a search with --out resumes from DIR/checkpoint. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mugen.h"

int cli_search(int argc, char **argv);
int cli_bind_lengths(mg_ctx *ctx, mg_program *p, const char *const *args, int n_args, uint64_t batch, uint64_t first); /* cli/mugen.c */

static const char *HELP_SEARCH =
    "usage: mugen search [options] PROGRAM --out DIR\n"
    "       mugen optimize [options] PROGRAM [--out DIR]\n"
    "Finds every μGraph within the limits that computes PROGRAM (a Lax program), verifies each\n"
    "and ranks them by the cost model. search writes DIR/ugraph-N.mu (.json, .dot) for rank N\n"
    "and DIR/summary.txt. optimize then runs the best-ranked μGraphs and the program itself\n"
    "(GPU if there is one, else the C backend), checks each against the reference and keeps\n"
    "the fastest (DIR/best.mu with --out).\n"
    "Ctrl-C or --time-limit stops the search early and keeps what was found. With --out,\n"
    "DIR/checkpoint holds every finished task: the same command run again (same PROGRAM,\n"
    "--out and search options; --time-limit, --threads and the ranks may change) reloads\n"
    "those and searches only the rest; a task cut short is searched again from its start.\n"
    "`mpirun -n N build/mpi/mugen search ...` (make mpi) spreads the tasks over N ranks,\n"
    "same result; rank 0 writes DIR (docs/search.md, \"Ranks\").\n"
    "DIR is locked while a search runs (DIR/.lock: a second search into it is refused); a\n"
    "search refused before it starts leaves no DIR behind; ugraph-N files that an earlier\n"
    "DIR/summary.txt lists and this search does not rewrite are removed, nothing else.\n"
    "  --max-kops N      kernel operators (default 5)\n"
    "  --max-bops N      block operators per kernel, iterators and savers included (default 11)\n"
    "  --max-kin N       tensors one graph-defined kernel reads (default 3)\n"
    "  --max-kout N      tensors one graph-defined kernel writes (default 2)\n"
    "  --max-kernels N   graph-defined kernels in one μGraph (default 1)\n"
    "  --grid-dims N     grid dims, 1 to 3 (default 2)\n"
    "  --max-blocks N    largest grid (default 1024)\n"
    "  --device NAME     the target GPU by its name in the device table (default: its first\n"
    "                    row; an unknown name lists them): the cost model's rates and --sms\n"
    "  --sms N           multiprocessors of the target GPU (default: the device's); sets\n"
    "                    the cost model's waves and the default grid candidates: 1, 2 and\n"
    "                    P/16, P/2, 3P/4, P for P the largest power of two <= N\n"
    "  --grid A,B,..     candidate sizes of a grid dim (default from --sms: 1,2,8,64,96,128)\n"
    "  --forloop A,B,..  candidate for-loop ranges (default 1,8,64)\n"
    "  --ops A,B,..      the operators the search may place (default all: exp, sqr, sqrt,\n"
    "                    silu, add, sub, mul, div, matmul, sum, concat, rmsnorm)\n"
    "  --no-prune        no abstract-expression pruning (for comparison; slow)\n"
    "  --no-lowered      leave the plain lowering's μGraph (verified, ranked with the\n"
    "                    others) out of the results: what the enumeration finds alone\n"
    "  --threads N       worker threads (default: one per core)\n"
    "  --slack F         verify a schedule only if the cost model puts it within F times\n"
    "                    the best schedule of the same operators (default 1.5; 0: all)\n"
    "  --time-limit S    stop after S seconds, keeping what was found\n"
    "  --tests N         verifier tests per candidate (default: enough for a 2^-40 bound)\n"
    "  --seed S          verifier seed (default 1)\n"
    "  --quiet           no progress line\n"
    "  --no-cache        search even if the search cache holds the answer (the new result\n"
    "                    replaces it); MUGEN_SEARCH_CACHE=off turns the cache off (docs/env.md)\n"
    "optimize only:\n"
    "  --top N           run the N best-ranked μGraphs (default 4)\n"
    "  --backend B       gpu, c or auto (default auto)\n"
    "  --reps N          timed runs per μGraph (default 50)\n"
    "Exit status: 0 μGraphs found (optimize: and the fastest correct one kept, or the program\n"
    "itself was fastest), 1 an error (optimize: also when nothing ran correctly), 2 a bad\n"
    "command line, 3 nothing found (the reason is printed; also when stopped before any\n"
    "μGraph was verified).\n"
    "A complete search is kept in the search cache (MUGEN_SEARCH_CACHE, docs/env.md), keyed by\n"
    "the program up to renaming, the options that change the result, the device and mugen's\n"
    "version: the same search again, or the same program under other names, reads it back\n"
    "instead of searching (summary.txt then says \"from the search cache\").\n";

static const char *HELP_WHOLE =
    "optimize of a whole program:\n"
    "  --whole           piece by piece even when PROGRAM is Lax (a program that is not Lax\n"
    "                    always is): cut at its non-Lax operators, each Lax piece of at most 16\n"
    "                    operators and 3 matmuls or reductions searched once per form (up to\n"
    "                    --time-limit, default 60 s, each), its best μGraph kept where it runs\n"
    "                    faster than the piece lowered, the rest lowered (docs/lower.md); the\n"
    "                    whole μGraph is run against the program (DIR/best.mu with --out)\n"
    "A program that is not Lax is optimized this way (issue #25).\n"
    "  --max-piece-ops N    a Lax piece of more operators is lowered unsearched (default 16)\n"
    "  --max-piece-heavy N  ... or of more matmuls and reductions (default 3)\n"
    "  --lengths NAME=FILE  a ragged program's lengths (as mugen run: the first lines of FILE):\n"
    "                    its token form for that batch is optimized piece by piece (--whole;\n"
    "                    docs/ragged.md) and DIR/best.mu runs with mugen run --lengths; mugen\n"
    "                    search takes it too: the token form at that batch's capacity, when\n"
    "                    it has no attention over the ragged dim (its μGraphs run any batch\n"
    "                    of that capacity)\n"
    "  --megakernel      (optimize, either way) also run the fastest as one persistent launch,\n"
    "                    with the static schedule (mugen run --megakernel), with tickets\n"
    "                    (--persist) and with a scheduler block and queues (--queues), and say\n"
    "                    which of the four launch forms is fastest\n";

static volatile int stop_flag; /* set by Ctrl-C (on_sigint) */

static void on_sigint(int sig) {
    (void)sig;
    stop_flag = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C ends the process */
}

static int bad(const char *fmt, const char *arg) {
    fprintf(stderr, "mugen: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'mugen search --help')\n");
    return 2;
}

static int parse_int(const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int parse_list(const char *s, int *out, int *n) {
    *n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || end == s || v < 1 || v > 65536 || *n == MG_SEARCH_MAX_CAND) return -1;
        out[(*n)++] = (int)v;
        if (*end == ',') end++;
        else if (*end) return -1;
        s = end;
    }
    return *n ? 0 : -1;
}

static int write_text(const char *dir, const char *name, const char *text) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fputs(text, f) < 0 || fclose(f)) {
        fprintf(stderr, "mugen: cannot write %s: %s\n", path, strerror(errno));
        if (f) fclose(f);
        return -1;
    }
    return 0;
}

/* Writes rank i's μGraph as .mu, .json and .dot. */
static int write_ugraph(mg_ctx *ctx, const char *dir, int rank, const char *text) {
    char name[64];
    snprintf(name, sizeof name, "ugraph-%d.mu", rank);
    if (write_text(dir, name, text)) return -1;
    mg_program *u = NULL;
    if (mg_program_parse(ctx, text, strlen(text), name, &u)) {
        fprintf(stderr, "mugen: %s does not parse back: %s\n", name, mg_ctx_error(ctx));
        return -1;
    }
    static const mg_format fmts[2] = {MG_FMT_JSON, MG_FMT_DOT};
    static const char *ext[2] = {"json", "dot"};
    for (int k = 0; k < 2; k++) {
        char *out = NULL;
        if (mg_program_format(ctx, u, fmts[k], &out) == MG_OK) {
            snprintf(name, sizeof name, "ugraph-%d.%s", rank, ext[k]);
            write_text(dir, name, out);
        }
        mg_free(out);
    }
    mg_program_free(u);
    return 0;
}

static void summary(FILE *f, const char *file, const mg_search_opts *o, const mg_search_result *r) {
    char first[64] = "";
    if (r->n_found) snprintf(first, sizeof first, "; first μGraph after %.1f s", r->first_seconds);
    fprintf(f, "program: %s\nexpression: %s\n", file, r->expr ? r->expr : "");
    fprintf(f, "e-graph: %lld nodes, %lld classes, %s, %.2f s\n", (long long)r->eg_nodes,
            (long long)r->eg_classes, r->eg_saturated ? "saturated" : "bounded (not saturated)", r->eg_seconds);
    fprintf(f, "limits: %d kernel ops, %d block ops, %d graph-defined kernels, %d kernel inputs, %d kernel outputs, %d grid dims, grid",
            o->max_kops, o->max_bops, o->max_kernels, o->max_kin, o->max_kout, o->max_grid_dims);
    for (int i = 0; i < o->n_grid; i++) fprintf(f, "%s%d", i ? "," : " ", o->grid[i]);
    fprintf(f, " (%s%s%d SMs)", o->device ? o->device : "", o->device ? ", " : "", o->n_sm);
    fprintf(f, ", forloop");
    for (int i = 0; i < o->n_forloop; i++) fprintf(f, "%s%d", i ? "," : " ", o->forloop[i]);
    fprintf(f, ", slack %g, pruning %s", o->slack, o->prune ? "on" : "off");
    if (o->ops) fprintf(f, ", operators %s", o->ops);
    fputc('\n', f);
    if (r->cached)
        fprintf(f, "cache: from the search cache, key %s (no search ran; the counts below are the stored "
                "search's)\n", r->cache_key);
    fprintf(f, "search: %.1f s, %lld states, %lld pruned, %lld candidates, %lld rejected (%lld by the "
            "screen), %lld too large for shared memory once planned, %lld dominated, %lld duplicates, %d verified "
            "μGraphs, tasks %lld/%lld (%lld resumed)%s; verification %.0f thread-s%s\n",
            r->seconds, (long long)r->states, (long long)r->pruned, (long long)r->candidates,
            (long long)r->rejected, (long long)r->screened, (long long)r->unfit, (long long)r->dominated,
            (long long)r->duplicates, r->n_found, (long long)r->tasks_done,
            (long long)r->tasks, (long long)r->tasks_resumed, r->stopped ? ", stopped early" : "",
            r->verify_seconds, first);
    if (!r->n_found) {
        fprintf(f, "nothing found: %s\n", r->why_none);
        return;
    }
    fprintf(f, "rank  est. µs  kernel ops  kernels  block ops  file\n");
    for (int i = 0; i < r->n_found; i++) {
        int v = -1 - r->found[i].task; /* the lowering's tiling, docs/search.md */
        fprintf(f, "%4d %8.1f %11d %8d %10d  ugraph-%d.mu", i + 1, r->found[i].cost_us, r->found[i].kops,
                r->found[i].kernels, r->found[i].bops, i + 1);
        if (v == 0) fprintf(f, "  (the plain lowering: docs/search.md)");
        else if (v > 0) fprintf(f, "  (the plain lowering, product tiling %d: docs/search.md)", v + 1);
        fputc('\n', f);
    }
}

/* The command line of search/optimize. */
typedef struct cli_opts {
    int optimize; /* mugen optimize (else search) */
    mg_search_opts o;
    const char *file, *out, *backend;
    int top, reps, sms, grid_given;
    int no_cache; /* --no-cache: search even on a hit (the new result replaces the entry) */
    int whole;    /* --whole: optimize piece by piece even a Lax program */
    int megakernel; /* --megakernel: the fastest also as one persistent launch, both timed */
    int time_set; /* --time-limit was given */
    mg_optimize_opts whole_o; /* optimize piece by piece: --max-piece-ops and --max-piece-heavy */
    const char *device;
    const char *len_arg[4]; /* --lengths NAME=FILE (optimize of a ragged program) */
    int n_len;
} cli_opts;

/* An option of the command line's own taking a number (--top, --reps, --sms), from a table of
 * ranges. 0, 2 (bad value, said), or -1 if a is none of them. */
static int parse_number(cli_opts *c, const char *a, const char *val) {
    struct { const char *name; int *dst; long lo, hi; } num[] = {
        {"--top", c->optimize ? &c->top : NULL, 1, 1000}, {"--reps", c->optimize ? &c->reps : NULL, 1, 100000},
        {"--sms", &c->sms, 1, 1024}};
    for (size_t k = 0; k < sizeof num / sizeof *num; k++) {
        if (strcmp(a, num[k].name) || !num[k].dst) continue;
        int v;
        if (parse_int(val, num[k].lo, num[k].hi, &v)) {
            fprintf(stderr, "mugen: %s takes %ld to %ld, got '%s'\n", a, num[k].lo, num[k].hi, val);
            return 2;
        }
        *num[k].dst = v;
        return 0;
    }
    return -1;
}

/* An option with a value, a its name: 0, or 2 (bad, said). The search's own limits are read by
 * mg_search_set, as Python's keyword arguments are. */
static int parse_valued(cli_opts *c, const char *a, const char *val) {
    mg_search_opts *o = &c->o;
    if (!strcmp(a, "--out")) {
        c->out = val;
    } else if (!strcmp(a, "--backend") && c->optimize) {
        c->backend = val;
    } else if (!strcmp(a, "--grid")) {
        c->grid_given = 1;
        if (parse_list(val, o->grid, &o->n_grid)) return bad("--grid takes sizes like 1,2,8,64; got '%s'", val);
    } else if (!strcmp(a, "--forloop")) {
        if (parse_list(val, o->forloop, &o->n_forloop)) return bad("--forloop takes ranges like 1,8,64; got '%s'", val);
    } else if (!strcmp(a, "--device")) {
        c->device = val;
    } else {
        int rc = parse_number(c, a, val);
        if (rc >= 0) return rc;
        int piece = c->optimize && (!strcmp(a, "--max-piece-ops") || !strcmp(a, "--max-piece-heavy"));
        mg_ctx *ctx = mg_ctx_new();
        mg_status st = !ctx ? MG_ERR_NOMEM : piece ? mg_optimize_set(ctx, &c->whole_o, a, val) : mg_search_set(ctx, o, a, val);
        if (st) bad("%s", ctx ? mg_ctx_error(ctx) : "out of memory");
        mg_ctx_free(ctx);
        if (st) return 2;
        c->time_set |= !strcmp(a, "--time-limit");
    }
    return 0;
}

/* Reads the command line into c. -1 to go on, else the exit status (0 after --help). */
static int parse_args(int argc, char **argv, cli_opts *c) {
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(HELP_SEARCH, stdout), fputs(HELP_WHOLE, stdout);
            return 0;
        }
        if (!strcmp(a, "--no-prune")) c->o.prune = 0;
        else if (!strcmp(a, "--no-lowered")) c->o.no_lowered = 1;
        else if (!strcmp(a, "--quiet")) c->o.progress = 0;
        else if (!strcmp(a, "--no-cache")) c->no_cache = 1;
        else if (!strcmp(a, "--whole") && c->optimize) c->whole = 1;
        else if (!strcmp(a, "--lengths")) {
            const char *eq = val ? strchr(val, '=') : NULL;
            if (!eq || eq == val || !eq[1]) return bad("--lengths wants NAME=FILE, got '%s'", val ? val : "");
            if (c->n_len == 4) return bad("at most 4 %s options", a);
            c->len_arg[c->n_len++] = val, i++;
        } else if (!strcmp(a, "--megakernel") && c->optimize) c->megakernel = 1;
        else if (a[0] == '-' && a[1] && a[1] == '-') {
            if (!val) return bad("%s needs a value", a);
            i++;
            int rc = parse_valued(c, a, val);
            if (rc) return rc;
        } else if (a[0] == '-' && a[1]) {
            return bad("unknown option '%s'", a);
        } else if (c->file) {
            return bad("more than one PROGRAM ('%s')", a);
        } else {
            c->file = a;
        }
    }
    if (c->device || c->sms) { /* the grid candidates follow the device and --sms unless --grid names them */
        int g[MG_SEARCH_MAX_CAND], ng = c->o.n_grid;
        memcpy(g, c->o.grid, sizeof g);
        if (c->device) {
            mg_ctx *ctx = mg_ctx_new();
            int rc = !ctx ? bad("%s", "out of memory")
                     : mg_search_set_device(ctx, &c->o, c->device) ? bad("%s", mg_ctx_error(ctx)) : 0;
            mg_ctx_free(ctx);
            if (rc) return rc;
        }
        if (c->sms) mg_search_set_sms(&c->o, c->sms);
        if (c->grid_given) memcpy(c->o.grid, g, sizeof g), c->o.n_grid = ng;
    }
    if (!c->file) return bad("%s needs a PROGRAM", argv[1]);
    if (!c->optimize && !c->out) return bad("%s needs --out DIR", argv[1]);
    return -1;
}

/* Creates --out DIR if need be (*made = 1 then) and locks it for this search: DIR/.lock,
 * an fcntl lock held until the process ends, holding the holder's pid. 0, or -1 (said): a
 * second search into the same DIR at once is refused, naming the holder. */
static int make_out(const char *out, int *made) {
    struct stat st;
    *made = 0;
    if (stat(out, &st)) {
        if (mkdir(out, 0777)) {
            fprintf(stderr, "mugen: cannot create --out %s: %s\n", out, strerror(errno));
            return -1;
        }
        *made = 1;
    } else if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mugen: --out %s: not a directory\n", out);
        return -1;
    }
    char path[4096], pid[32] = "";
    snprintf(path, sizeof path, "%s/.lock", out);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fd < 0) {
        fprintf(stderr, "mugen: cannot lock --out %s: %s: %s\n", out, path, strerror(errno));
        return -1;
    }
    if (fcntl(fd, F_SETLK, &fl)) {
        ssize_t n = read(fd, pid, sizeof pid - 1);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        fprintf(stderr, "mugen: --out %s is in use by another search (pid %s, %s): wait for it or choose "
                "another folder\n", out, *pid ? pid : "unknown", path);
        close(fd);
        return -1;
    }
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    int wrote = !ftruncate(fd, 0) && write(fd, pid, (size_t)n) == n;
    (void)wrote; /* the pid only names the holder in the message */
    return 0; /* fd stays open: closing it would drop the lock */
}

/* A search refused before it wrote anything: the --out folder it made goes again. */
static void unmake_out(const char *out, int made) {
    if (!made) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/.lock", out);
    unlink(path);
    rmdir(out); /* only if empty: never a file another program put there */
}

/* Removes the μGraph files of an earlier search into dir that this one does not replace:
 * ugraph-N.mu, .json and .dot for each rank N > n_found that dir/summary.txt (mugen's, read
 * before it is rewritten) lists. Files it does not list are left alone. */
static void remove_stale(const char *dir, int n_found) {
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    int first = 1, mine = 0;
    while (fgets(line, sizeof line, f)) {
        if (first) mine = !strncmp(line, "program: ", 9), first = 0;
        if (!mine) break;
        if (line[0] == '#') break; /* the μGraphs after the rank table */
        const char *u = strstr(line, "  ugraph-");
        int rank = 0, k = 0;
        if (!u || sscanf(u, "  ugraph-%d.mu%n", &rank, &k) != 1 || !k || rank <= n_found) continue;
        static const char *ext[3] = {"mu", "json", "dot"};
        for (int e = 0; e < 3; e++) {
            snprintf(path, sizeof path, "%s/ugraph-%d.%s", dir, rank, ext[e]);
            unlink(path);
        }
    }
    fclose(f);
}

/* Writes DIR/summary.txt (the summary, then every μGraph with its verdict) and each rank's
 * μGraph files. */
static void write_results(mg_ctx *ctx, const cli_opts *c, const mg_search_result *r) {
    FILE *f;
    char path[4096];
    remove_stale(c->out, r->n_found);
    snprintf(path, sizeof path, "%s/summary.txt", c->out);
    if ((f = fopen(path, "wb"))) {
        summary(f, c->file, &c->o, r);
        for (int i = 0; i < r->n_found; i++)
            fprintf(f, "\n# rank %d: %s\n%s", i + 1, r->found[i].verdict, r->found[i].text);
        fclose(f);
    }
    for (int i = 0; i < r->n_found; i++) write_ugraph(ctx, c->out, i + 1, r->found[i].text);
    if (r->n_found) printf("wrote %d μGraphs and summary.txt to %s\n", r->n_found, c->out);
}

/* After a search that did not finish every task (Ctrl-C, the time limit, or a task that ran
 * out of memory): says how to resume it from the checkpoint (tasks.c: DIR/checkpoint/key
 * names the program and every search option but --time-limit and --threads; task-N holds a
 * finished task's μGraphs). */
static void say_resume(const cli_opts *c, const mg_search_result *r) {
    if (!r->stopped && r->tasks_done >= r->tasks) return;
    fflush(stdout); /* after the summary, where both go to one place */
    long long done = r->tasks_done, all = r->tasks;
    if (!r->stopped)
        fprintf(stderr, "mugen: the search finished %lld of %lld tasks (the others ran out of memory).\n", done, all);
    else if (!all) { /* before the tasks were counted: while the search was prepared */
        fprintf(stderr, "mugen: %s stopped the search while it was prepared (the program's e-graph, "
                "the screen's tests), before any task; nothing is lost, run it again with more time.\n",
                stop_flag ? "Ctrl-C" : "the time limit");
        return;
    } else
        fprintf(stderr, "mugen: %s stopped the search after %lld of %lld tasks.\n",
                stop_flag ? "Ctrl-C" : "the time limit", done, all);
    if (!c->out) {
        fprintf(stderr, "mugen: nothing was kept to resume from: run it with --out DIR to keep a "
                "checkpoint in DIR/checkpoint.\n");
        return;
    }
    fprintf(stderr, "mugen: to resume, run the same command again (same PROGRAM, --out %s and search "
            "options; --time-limit, --threads and the ranks may change): the %lld finished tasks are reloaded "
            "from %s/checkpoint and only the others are searched.\n", c->out, (long long)r->tasks_done, c->out);
}

/* optimize --megakernel: the kept form of p (u: its μGraph, NULL: p lowered), which ran in
 * multi_us as multi_launches separate kernels, run again as one persistent launch with each
 * schedule (mg_run_opts.persist: 2 static, 1 tickets, 3 scheduler and queues); prints all
 * four and the fastest correct one. */
static void try_megakernel(mg_ctx *ctx, const mg_program *p, const mg_program *u, mg_run_opts ro, double multi_us,
                           int multi_launches) {
    static const char *name[4] = {"", "tickets (mugen run --persist)", "static schedule (mugen run --megakernel)",
                                  "scheduler and queues (mugen run --queues)"};
    static const int order[3] = {2, 1, 3};
    double best_us = multi_us;
    int best = 0;
    for (int i = 0; i < 3; i++) {
        int sched = order[i];
        ro.persist = sched;
        mg_run_report rep;
        mg_status s = mg_run(ctx, p, u, &ro, &rep);
        if (s != MG_OK && s != MG_ERR_MISMATCH) {
            printf("optimize: as one launch, %s: %s\n", name[sched], mg_ctx_error(ctx));
            continue;
        }
        if (rep.backend != MG_BACKEND_GPU || rep.n_launches != 1 || multi_launches < 2) {
            printf("optimize: as one launch: not made (%s)\n",
                   rep.backend != MG_BACKEND_GPU ? "a persistent launch needs the GPU"
                   : multi_launches < 2          ? "fewer than two launches to join"
                                                 : "its kernels could not share one block size and shared memory");
            return;
        }
        printf("optimize: as one launch, %s: %s, %.1f µs\n", name[sched], rep.ok ? "correct" : "MISMATCH", rep.time_us);
        if (rep.ok && rep.time_us < best_us) best_us = rep.time_us, best = sched;
    }
    if (best) printf("optimize: one launch is faster than %d separate kernels (%.1f µs): %s, %.1f µs\n", multi_launches,
                     multi_us, name[best], best_us);
    else printf("optimize: %d separate kernels (%.1f µs) are faster than one launch; keeping them\n", multi_launches, multi_us);
}

/* optimize: runs the program and the best-ranked μGraphs of r, keeps the fastest correct
 * one. The exit status: 0, 1 when nothing ran correctly, 2 for a bad --backend. */
static int optimize(mg_ctx *ctx, const cli_opts *c, const mg_program *p, const mg_search_result *r) {
    mg_run_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.seed = (uint64_t)time(NULL), ro.reps = c->reps;
    if (c->backend && !strcmp(c->backend, "gpu")) ro.backend = MG_BACKEND_GPU;
    else if (c->backend && !strcmp(c->backend, "c")) ro.backend = MG_BACKEND_C;
    else if (c->backend && strcmp(c->backend, "auto")) return bad("--backend takes gpu, c or auto, not '%s'", c->backend);
    int n = r->n_found < c->top ? r->n_found : c->top, best = -2, best_launches = 0;
    double best_us = 0;
    printf("optimize: running the program and the %d best-ranked μGraphs (seed %llu)\n", n,
           (unsigned long long)ro.seed);
    for (int i = -1; i < n; i++) {
        mg_program *u = NULL;
        if (i >= 0 && mg_program_parse(ctx, r->found[i].text, strlen(r->found[i].text), "ugraph", &u)) {
            printf("  rank %d: %s\n", i + 1, mg_ctx_error(ctx));
            continue;
        }
        mg_run_report rep;
        mg_status s2 = mg_run(ctx, p, u, &ro, &rep);
        const char *what = i < 0 ? "program" : "rank";
        if (s2 != MG_OK && s2 != MG_ERR_MISMATCH) {
            printf("  %s %d: %s\n", what, i + 1, mg_ctx_error(ctx));
        } else {
            printf("  %-7s %2d: %s, %.1f µs on %s\n", what, i + 1, rep.ok ? "correct" : "MISMATCH",
                   rep.time_us, rep.device);
            if (rep.ok && (best == -2 || rep.time_us < best_us)) best = i, best_us = rep.time_us, best_launches = rep.n_launches;
        }
        mg_program_free(u);
    }
    if (best == -2) {
        printf("optimize: nothing ran correctly\n");
        return 1;
    }
    if (best < 0) {
        printf("optimize: the program itself was fastest (%.1f µs)\n", best_us);
    } else {
        printf("optimize: fastest is rank %d (%.1f µs)\n%s", best + 1, best_us, r->found[best].text);
        if (c->out) write_text(c->out, "best.mu", r->found[best].text);
    }
    if (c->megakernel) {
        mg_program *u = NULL;
        if (best < 0 || !mg_program_parse(ctx, r->found[best].text, strlen(r->found[best].text), "ugraph", &u))
            try_megakernel(ctx, p, u, ro, best_us, best_launches);
        mg_program_free(u);
    }
    return 0;
}

/* optimize of a whole program (not Lax, or --whole): piece by piece (mg_optimize_program).
 * The exit status as optimize's. */
static int optimize_whole(mg_ctx *ctx, const cli_opts *c, const mg_program *p) {
    mg_optimize_opts o = c->whole_o;
    double per_piece = o.search.time_limit;
    o.search = c->o, o.search.ckpt_dir = NULL, o.search.progress = 0;
    if (!c->time_set) o.search.time_limit = per_piece;
    o.run.seed = (uint64_t)time(NULL), o.run.reps = c->reps, o.progress = 1;
    if (c->backend && !strcmp(c->backend, "gpu")) o.run.backend = MG_BACKEND_GPU;
    else if (c->backend && !strcmp(c->backend, "c")) o.run.backend = MG_BACKEND_C;
    else if (c->backend && strcmp(c->backend, "auto")) return bad("--backend takes gpu, c or auto, not '%s'", c->backend);
    printf("optimize: %s piece by piece (each Lax piece searched for up to %g s)\n", c->file, o.search.time_limit);
    mg_optimize_report rep;
    mg_status st = mg_optimize_program(ctx, p, &o, &rep);
    if (rep.log) fputs(rep.log, stdout);
    if (st) {
        fprintf(stderr, "mugen: %s\n", mg_ctx_error(ctx));
        mg_optimize_report_free(&rep);
        return 1;
    }
    printf("optimize: %d pieces (%d Lax), %d forms searched (%d from the search cache), %d pieces kept a "
           "μGraph; %.2f s before compiling (%.2f s searching), %.2f s timing searched pieces\n", rep.parts,
           rep.lax_parts, rep.unique, rep.from_cache, rep.kept, rep.seconds_before_compile, rep.search_seconds,
           rep.piece_run_seconds);
    fputs(rep.run.text, stdout);
    if (c->out) write_text(c->out, "best.mu", rep.ugraph_text);
    if (c->out) {
        printf("optimize: the whole program's μGraph is %s/best.mu (mugen run %s %s/best.mu", c->out, c->file, c->out);
        for (int k = 0; k < c->n_len; k++) printf(" --lengths %s", c->len_arg[k]);
        printf(")\n");
    }
    int ok = rep.run.ok;
    mg_program *u = NULL;
    if (ok && c->megakernel && rep.ugraph_text &&
        !mg_program_parse(ctx, rep.ugraph_text, strlen(rep.ugraph_text), "ugraph", &u))
        try_megakernel(ctx, p, u, o.run, rep.run.time_us, rep.run.n_launches);
    mg_program_free(u);
    mg_optimize_report_free(&rep);
    return ok ? 0 : 1;
}

/* search or optimize of c->file (on rank 0 with ranks): the exit status. */
static int search_main(mg_ctx *ctx, cli_opts *cc) {
    cli_opts c = *cc;
    int made = 0, rc;
    if (c.out && make_out(c.out, &made)) return 1;
    c.o.ckpt_dir = c.out;
    c.o.stop = &stop_flag;
    mg_program *p = NULL;
    rc = 1;
    mg_search_result r;
    memset(&r, 0, sizeof r);
    mg_status st = mg_program_load(ctx, c.file, &p);
    if (!st && cli_bind_lengths(ctx, p, c.len_arg, c.n_len, 0, 0)) {
        if (c.out) unmake_out(c.out, made);
        goto done;
    }
    if (!st && mg_program_n_lengths(p)) c.whole = 1; /* ragged: its token form, piece by piece */
    if (st) {
        fprintf(stderr, "mugen: %s\n", mg_ctx_error(ctx));
        if (c.out) unmake_out(c.out, made);
        goto done;
    }
    signal(SIGINT, on_sigint);
    if (c.optimize && c.whole) st = MG_ERR_UNSUPPORTED;
    else st = mg_search_cached(ctx, p, &c.o, c.no_cache ? MG_CACHE_REFRESH : 0, &r);
    signal(SIGINT, SIG_DFL);
    if (st == MG_ERR_UNSUPPORTED && c.optimize) { /* not Lax (or --whole): piece by piece */
        rc = optimize_whole(ctx, &c, p);
        goto done;
    }
    if (st) { /* refused (not Lax, ...) or failed: a folder made for it goes if still empty */
        fprintf(stderr, "mugen: %s\n", mg_ctx_error(ctx));
        if (c.out) unmake_out(c.out, made);
        goto done;
    }
    summary(stdout, c.file, &c.o, &r);
    if (c.out) write_results(ctx, &c, &r);
    say_resume(&c, &r);
    rc = r.n_found ? 0 : 3;
    if (c.optimize && r.n_found) rc = optimize(ctx, &c, p, &r);
done:
    mg_search_result_free(&r);
    mg_program_free(p);
    return rc;
}

/* The search on rank > 0 of an MPI run (docs/search.md, "Ranks"): it takes tasks from rank 0
 * and sends their μGraphs back; rank 0 prints and writes everything. */
static int search_rank(cli_opts *c, int rank) {
    c->out = NULL, c->o.ckpt_dir = NULL, c->o.progress = 0;
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL;
    mg_search_result r;
    memset(&r, 0, sizeof r);
    mg_status st = ctx ? mg_program_load(ctx, c->file, &p) : MG_ERR_NOMEM;
    if (!st && cli_bind_lengths(ctx, p, c->len_arg, c->n_len, 0, 0)) st = MG_ERR_INVALID;
    if (!st) st = mg_search_cached(ctx, p, &c->o, c->no_cache ? MG_CACHE_REFRESH : 0, &r);
    if (st) fprintf(stderr, "mugen: rank %d: %s\n", rank, ctx ? mg_ctx_error(ctx) : "out of memory");
    mg_search_result_free(&r);
    mg_program_free(p);
    mg_ctx_free(ctx);
    return st ? 1 : 0;
}

int cli_search(int argc, char **argv) {
    cli_opts c = {.optimize = !strcmp(argv[1], "optimize"), .top = 4};
    mg_search_defaults(&c.o);
    mg_optimize_defaults(&c.whole_o);
    c.o.progress = 1;
    int rc = parse_args(argc, argv, &c);
    if (rc >= 0) return rc;
    int rank = 0, n_ranks = 1;
    mg_ctx *ctx = mg_ctx_new();
    if (!ctx) return 1;
    if (mg_ranks_start(ctx, &argc, &argv, &rank, &n_ranks)) {
        fprintf(stderr, "mugen: %s\n", mg_ctx_error(ctx));
        mg_ctx_free(ctx);
        return 1;
    }
    if (n_ranks > 1 && c.optimize) {
        if (!rank) fprintf(stderr, "mugen: under mpirun only 'mugen search' runs; run 'mugen optimize' after it, "
                           "without mpirun: it finds the search's result in the search cache\n");
        rc = 2;
    } else if (rank > 0) {
        rc = search_rank(&c, rank);
    } else {
        rc = search_main(ctx, &c);
    }
    mg_ctx_free(ctx);
    mg_ranks_end();
    return rc;
}
