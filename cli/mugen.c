/* mugen: the command-line tool, a thin user of include/mugen.h.
 *   mugen check F      parse, infer shapes, say whether it is Lax, print the program
 *   mugen eval F       evaluate on seeded random inputs or inputs from files
 *   mugen dot F        Graphviz dot
 *   mugen partition F  maximal Lax subprograms, cut at non-Lax operators
 *   mugen verify P U   is μGraph U equivalent to program P?
 *   mugen run P [U]    generate, compile, run (GPU, else C) and check against P's reference
 *   mugen emit F       print the generated CUDA or C
 *   mugen search P, mugen optimize P: the superoptimizer (cli/search.c)
 * Exit status: 0 success, 1 an error in the program or its inputs, 2 a bad command line;
 * verify: 3 not equivalent, 4 not Lax (not decided), 5 numerically unstable; run: 3 an
 * output differs from the reference; search and optimize: 3 nothing found. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mugen.h"

int cli_search(int argc, char **argv); /* cli/search.c */
int cli_bind_lengths(mg_ctx *ctx, mg_program *p, const char *const *args, int n_args, uint64_t batch, uint64_t first);

static const char *USAGE =
    "usage: mugen COMMAND [options] FILE\n"
    "\n"
    "commands:\n"
    "  check      parse FILE, infer shapes, report whether it is Lax, print the program\n"
    "  eval       evaluate FILE on seeded random inputs or inputs from files\n"
    "  dot        print FILE as a Graphviz graph\n"
    "  partition  cut FILE into maximal Lax subprograms at non-Lax operators\n"
    "  verify     decide whether a μGraph computes the same function as a program\n"
    "  run        generate code, compile, run on random inputs and check every output\n"
    "  emit       print the CUDA or C code mugen generates\n"
    "  lower      print the μGraph a program runs as when no search covered it\n"
    "  space      print the schedule space of FILE's kernels and its device limits\n"
    "  tune       run points of that space, timed and checked, and keep the fastest\n"
    "  portfolio  compile every variant of a program of a symbolic dim ahead (dim B [1, 512])\n"
    "  search     find, verify and rank every μGraph within limits that computes FILE\n"
    "  optimize   search, then run the best μGraphs and keep the fastest correct one\n"
    "\n"
    "FILE is a .mu program or its JSON form; '-' reads standard input.\n"
    "'mugen COMMAND --help' describes each command. Exit status: 0 success,\n"
    "1 an error in the program or its inputs, 2 a bad command line; verify also 3 not\n"
    "equivalent, 4 not Lax (not decided), 5 numerically unstable; run 3 an output differs\n"
    "from the reference; search and optimize 3 nothing found.\n";

static const char *HELP_CHECK =
    "usage: mugen check [--json] FILE\n"
    "Parses FILE, infers every shape, reports whether the program is Lax (Mirage\n"
    "Definition 5.1) and prints it back in canonical .mu form (or JSON with --json).\n";
static const char *HELP_EVAL =
    "usage: mugen eval [options] FILE\n"
    "Evaluates FILE with a reference evaluator and prints each output.\n"
    "  --seed N         seed for random inputs (default 1)\n"
    "  --in NAME=PATH   read input NAME from PATH: raw little-endian values of its dtype,\n"
    "                   or whitespace-separated numbers if PATH ends in .txt\n"
    "  --f64            compute in f64 instead of f32\n"
    "  --field          evaluate in Z_p x Z_q (random field inputs; Lax programs only)\n"
    "  --show N         values printed per output (default 8)\n"
    "  --out DIR        also write each output to DIR/NAME.bin (its dtype; with --field,\n"
    "                   DIR/NAME.p.u32 and DIR/NAME.q.u32)\n"
    "  --lengths NAME=FILE  a ragged program's lengths NAME (docs/ragged.md): lines L+1 ..\n"
    "                   L+count of FILE, one sequence length a line; ragged inputs and\n"
    "                   outputs are packed (--in files too)\n"
    "  --first L        skip the first L lines of each lengths file (default 0)\n"
    "  --batch N        the batch the program must declare (a check; default its own)\n"
    "  --dim NAME=V     binds a symbolic dim (dim NAME [LO, HI]; default HI, docs/tuning.md);\n"
    "                   every command takes it\n"
    "Random float inputs are uniform in [-1, 1), rounded to each input's dtype.\n";
static const char *HELP_VERIFY =
    "usage: mugen verify [--tests N] [--seed S] PROGRAM UGRAPH\n"
    "Decides whether UGRAPH (a μGraph: kernel { } blocks) computes the same function as\n"
    "PROGRAM: N random tests over Z_p x Z_q with fresh inputs and omega each (default: as\n"
    "many as a 2^-40 false-acceptance bound needs, see docs/verify.md), then a float test\n"
    "(f32 μGraph against the f64 program). Exit status: 0 equivalent, 3 not equivalent\n"
    "(the differing element is printed), 4 not Lax (not decided), 5 numerically unstable,\n"
    "1 an error (e.g. the inputs or outputs differ), 2 a bad command line.\n";
static const char *HELP_RUN =
    "usage: mugen run [options] PROGRAM [UGRAPH]\n"
    "Generates code for UGRAPH (a μGraph with PROGRAM's inputs and outputs; default: PROGRAM\n"
    "lowered as 'mugen lower' prints it), compiles it (NVRTC on a GPU, else the C compiler), runs it on random inputs with\n"
    "every output poisoned first, compares each output with PROGRAM's f32 reference evaluation\n"
    "(relative error ||out - ref|| / ||ref||; NaN never passes) and times it.\n"
    "  --backend B   gpu, c or auto (default: the GPU if there is one, else C)\n"
    "  --dim NAME=V  a symbolic dim's size (dim NAME [LO, HI], default HI): runs the variant\n"
    "                compiled for the smallest capacity holding it (docs/tuning.md), or the one\n"
    "                MUGEN_SELECTOR's weights choose\n"
    "  --variant C   with --dim: runs the variant for capacity C (C >= the dim's value); 'all':\n"
    "                each variant that holds the value on one set of inputs, a line each\n"
    "  --seed N      seed for the inputs (default: from the clock; printed)\n"
    "  --reps N      timed runs, median reported (default 50, on C up to 1 s of them; 0: no\n"
    "                timing)\n"
    "  --plain       without UGRAPH, one per-element kernel per operator (the path before the\n"
    "                lowering, for comparison) instead of PROGRAM lowered\n"
    "  --no-reuse, --no-depth, --no-layout, --no-pipeline, --no-regacc, --no-blocksize, --no-chain\n"
    "                switch off an optimizer pass (ablation; docs/codegen.md)\n"
    "  --wgmma       attention chains multiply with sm_90a's wgmma (opt-in: slower so far)\n"
    "  --megakernel  the whole program as one persistent launch of tasks (every kernel's blocks,\n"
    "                the per-element operators in pieces; each waits for exactly what it reads):\n"
    "                block b of G, as many as are resident at once, runs tasks b, b + G, ...\n"
    "                (opt-in: slower so far; docs/megakernel.md)\n"
    "  --persist     the same with blocks taking the next task by ticket\n"
    "  --queues      the same with a scheduler block handing each task, once what it waits for\n"
    "                is done, to a worker block's queue (single-producer single-consumer)\n"
    "  --cluster     an attention split's combining kernel runs inside the splits' thread-block\n"
    "                clusters, after a cluster barrier (opt-in: slower so far)\n"
    "  --no-tma      product loops copy by cp.async and multiply by mma.sync (default on sm_90a:\n"
    "                tiles by TMA, products by wgmma where a loop holds nothing else; opt/tma.c)\n"
    "  --no-pdl      launch each kernel after the previous one ends (default on the GPU: kernels\n"
    "                after the first as programmatic dependents, docs/runtime.md)\n"
    "  --prefetch    each block kernel but the first prefetches its blocks' weights into L2\n"
    "                before waiting for the kernel before it, then lets the next one launch\n"
    "                (opt-in: decode step 1.4% faster, attention up to 3.5% slower)\n"
    "  --specials    every third input element NaN, +inf, -inf, -0 or +0 in turn: each output\n"
    "                must hold the reference's NaN, infinities and signed zeros exactly\n"
    "  --schedule P  GPU: plan at point P of the schedule space ('mugen space'), NAME=VALUE,...\n"
    "                (k0.stages=3,k0.pair=2): those choices forced, the rest the rules'; a point\n"
    "                the device's limits reject is refused, naming them; sketch=N first: the\n"
    "                program lowered as its sketch N (docs/tuning.md)\n"
    "  --untuned     GPU: plan by the rules even where 'mugen tune' left a point for this graph\n"
    "                and device in the tuning cache (default: that point, named in the report)\n"
    "Exit status: 0 every output within tolerance, 3 an output differs, 1 an error (does\n"
    "not compile, fails to launch or faults, no GPU with --backend gpu), 2 a bad command line.\n";
static const char *HELP_EMIT =
    "usage: mugen emit [--target cuda|c] [--compile] [--out DIR] [--lengths NAME=FILE ...] FILE\n"
    "Prints the code mugen generates for FILE (a program or μGraph): CUDA for NVRTC (default)\n"
    "or portable C with OpenMP. --out DIR writes DIR/NAME.cu or DIR/NAME.c instead; --compile\n"
    "also compiles it (NVRTC for sm_90a, or the C compiler; no GPU needed) and fails with the\n"
    "compiler's log. A program is lowered first ('mugen lower'; --plain: not). The optimizer\n"
    "switches of 'mugen run' and --schedule apply. A ragged program takes --lengths (as 'mugen\n"
    "run'): its code is its token form's for that batch (docs/ragged.md).\n";
static const char *HELP_LOWER =
    "usage: mugen lower [--lengths NAME=FILE ...] FILE\n"
    "Prints FILE (a program without kernels) as the μGraph 'mugen run' executes when it is\n"
    "given no μGraph: matmuls with their elementwise prologues and epilogues, row reductions\n"
    "and elementwise trees each as a kernel with a default schedule (docs/lower.md); what no\n"
    "kernel form holds stays a kernel-level operator. The header says how many of each.\n"
    "A ragged program takes --lengths (as 'mugen run') and lowers in token form (docs/ragged.md).\n";
static const char *HELP_PORTFOLIO =
    "usage: mugen portfolio [--target cuda|c] FILE\n"
    "For a program of one symbolic dim (dim NAME [LO, HI], docs/tuning.md): compiles the variant\n"
    "of each capacity that covers the range (1, 2, 4, ..., 128, then multiples of 128, at most\n"
    "HI) into the compile cache (MUGEN_CACHE_DIR), so that 'mugen run --dim NAME=V' and the\n"
    "library compile nothing on the call path: each runs the smallest variant that holds V rows.\n"
    "CUDA by NVRTC (no GPU needed), or C by the C compiler. Prints each variant and its time.\n";
static const char *HELP_SPACE =
    "usage: mugen space [--samples N] [--seed S] [--lengths NAME=FILE ...] FILE\n"
    "Prints the schedule space of FILE's kernels on the default device (docs/tuning.md): FILE's\n"
    "μGraph, or the kernels FILE lowers to (as 'mugen lower'). Each parameter with its values,\n"
    "the rules' choice in brackets: the optimizer's switches, and for each graph-defined kernel\n"
    "kN a TMA loop or not, threads per block, pipeline stages and blocks an SM. Then each device\n"
    "constraint (threads, stages, trip count, shared memory, registers, the plan itself) with\n"
    "how many of N random points (default 1000, drawn with seed S, default 1; every point when\n"
    "there are no more) it rejects, the count of valid points, and whether the rules' own point\n"
    "is valid. A point is checked by planning it, nothing is compiled.\n";
static const char *HELP_TUNE =
    "usage: mugen tune [--samples N] [--guided G] [--jobs J] [--seed S] [--dataset FILE]\n"
    "                  [--backend B] [--reps R] [--lengths NAME=FILE ...] PROGRAM [UGRAPH]\n"
    "       mugen tune --pin POINT [--device NAME] [--lengths NAME=FILE ...] PROGRAM [UGRAPH]\n"
    "Runs points of the schedule space of PROGRAM's kernels (UGRAPH's when given; 'mugen space'):\n"
    "the rules' own (and each other lowering's), then N random valid ones (default 20, seed S), each as 'mugen run\n"
    "--schedule POINT' does: compiled, timed (median of R runs) and every output checked. Prints\n"
    "each point's time as it goes, then the fastest correct point against the rules'. --guided G\n"
    "then runs G points a cost model picks: fitted to what was measured (k nearest neighbours of\n"
    "log time), its fastest guesses among fresh random points, refitted every J points. --jobs J\n"
    "compiles each batch of points in J processes before timing them one at a time. --dataset\n"
    "appends every measurement to FILE (JSON lines: docs/tuning.md) and skips the points FILE\n"
    "already holds for this program and backend, so an interrupted tuning resumes. The schedule\n"
    "is the GPU's: on the C backend every point runs the same code (a check of the machinery).\n"
    "On the GPU the fastest point goes into the tuning cache (MUGEN_CACHE_DIR) for that device:\n"
    "'mugen run', 'emit', 'optimize' and mg_compile then plan this graph at it (--untuned: not).\n"
    "--pin stores POINT there without running anything (checked against the space and the\n"
    "device's limits; --device h100|h200, default the default device).\n";
static const char *HELP_DOT =
    "usage: mugen dot [--tasks] FILE\n"
    "Prints FILE as a Graphviz digraph. --tasks: the task graph a persistent megakernel runs\n"
    "instead (FILE lowered unless it is a μGraph, planned for the default device): a task a\n"
    "block of each kernel (a kernel-level operator one task), an edge from each task to the\n"
    "tasks that wait for it, exactly the blocks whose tiles they read; checked before it is\n"
    "printed (docs/megakernel.md).\n";
static const char *HELP_PART =
    "usage: mugen partition FILE\n"
    "Cuts FILE into maximal Lax subprograms at non-Lax operators (relu, max) and where a\n"
    "path would pass two exponentiations; prints each part as a standalone program.\n";

typedef struct opts {
    const char *cmd, *file, *file2, *out_dir;
    int tests;
    int json, f64, field, show, tasks;
    uint64_t seed;
    int seed_set, compile, reps;
    int samples; /* space, tune: random points (0: the default) */
    const char *dataset; /* tune */
    const char *pin, *device; /* tune: a point stored as the tuned one, and for which device */
    int guided, jobs;         /* tune: model-guided points; processes compiling ahead */
    const char *backend, *target;
    mg_run_opts run;
    const char *in_name[64], *in_path[64];
    int n_in;
    const char *len_arg[4]; /* --lengths NAME=FILE */
    int n_len;
    const char *dim_arg[4]; /* --dim NAME=VALUE */
    int n_dim;
    uint64_t variant;       /* --variant C: the capacity the first --dim runs as (0: chosen) */
    uint64_t batch, first;  /* --batch N (0: the program's), --first L */
} opts;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "mugen: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'mugen --help')\n");
    return 2;
}

static int fail(mg_ctx *ctx, mg_status rc) {
    const char *m = mg_ctx_error(ctx);
    fprintf(stderr, "mugen: %s%s\n", m && *m ? "" : mg_status_name(rc), m ? m : "");
    return 1;
}

static int parse_u64(const char *s, uint64_t *v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') return -1;
    *v = x;
    return 0;
}

static int parse_args(int argc, char **argv, opts *o) {
    o->show = 8, o->seed = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t v;
        if (!strcmp(a, "--json")) o->json = 1;
        else if (!strcmp(a, "--f64")) o->f64 = 1;
        else if (!strcmp(a, "--field")) o->field = 1;
        else if (!strcmp(a, "--tasks")) o->tasks = 1;
        else if (!strcmp(a, "--no-reuse")) o->run.no_reuse = 1;
        else if (!strcmp(a, "--no-depth")) o->run.no_depth = 1;
        else if (!strcmp(a, "--no-layout")) o->run.no_layout = 1;
        else if (!strcmp(a, "--no-pipeline")) o->run.no_pipeline = 1;
        else if (!strcmp(a, "--no-regacc")) o->run.no_regacc = 1;
        else if (!strcmp(a, "--no-blocksize")) o->run.no_blocksize = 1;
        else if (!strcmp(a, "--no-chain")) o->run.no_chain = 1;
        else if (!strcmp(a, "--persist")) o->run.persist = 1;
        else if (!strcmp(a, "--megakernel")) o->run.persist = 2;
        else if (!strcmp(a, "--queues")) o->run.persist = 3;
        else if (!strcmp(a, "--cluster")) o->run.cluster = 1;
        else if (!strcmp(a, "--wgmma")) o->run.wgmma = 1;
        else if (!strcmp(a, "--no-pdl")) o->run.no_pdl = 1;
        else if (!strcmp(a, "--no-tma")) o->run.no_tma = 1;
        else if (!strcmp(a, "--prefetch")) o->run.prefetch = 1;
        else if (!strcmp(a, "--plain")) o->run.plain = 1;
        else if (!strcmp(a, "--specials")) o->run.specials = 1;
        else if (!strcmp(a, "--untuned")) o->run.untuned = 1;
        else if (!strcmp(a, "--compile")) o->compile = 1;
        else if (!strcmp(a, "--backend") || !strcmp(a, "--target") || !strcmp(a, "--schedule") || !strcmp(a, "--dataset") ||
                 !strcmp(a, "--pin") || !strcmp(a, "--device")) {
            if (!val) return usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--backend")) o->backend = val;
            else if (!strcmp(a, "--target")) o->target = val;
            else if (!strcmp(a, "--dataset")) o->dataset = val;
            else if (!strcmp(a, "--pin")) o->pin = val;
            else if (!strcmp(a, "--device")) o->device = val;
            else o->run.schedule = val;
        }
        else if (!strcmp(a, "--seed") || !strcmp(a, "--show") || !strcmp(a, "--out") ||
                 !strcmp(a, "--in") || !strcmp(a, "--tests") || !strcmp(a, "--reps") ||
                 !strcmp(a, "--lengths") || !strcmp(a, "--batch") || !strcmp(a, "--first") || !strcmp(a, "--dim") || !strcmp(a, "--variant") ||
                 !strcmp(a, "--samples") || !strcmp(a, "--guided") || !strcmp(a, "--jobs")) {
            if (!val) return usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--out")) o->out_dir = val;
            else if (!strcmp(a, "--lengths")) {
                const char *eq = strchr(val, '=');
                if (!eq || eq == val || !eq[1]) return usage_error("--lengths wants NAME=FILE, got '%s'", val);
                if (o->n_len == 4) return usage_error("%s: at most 4 --lengths options", a);
                o->len_arg[o->n_len++] = val;
            } else if (!strcmp(a, "--dim")) {
                const char *eq = strchr(val, '=');
                if (!eq || eq == val || !eq[1]) return usage_error("--dim wants NAME=VALUE, got '%s'", val);
                if (o->n_dim == 4) return usage_error("%s: at most 4 --dim options", a);
                o->dim_arg[o->n_dim++] = val;
            } else if (!strcmp(a, "--variant")) {
                if (!strcmp(val, "all")) o->variant = UINT64_MAX, o->run.sweep = 1; /* every variant that holds the value */
                else if (parse_u64(val, &v) || v > 2147483647u || !v) return usage_error("--variant wants a capacity or 'all', got '%s'", val);
                else o->variant = v;
            } else if (!strcmp(a, "--batch") || !strcmp(a, "--first")) {
                if (parse_u64(val, &v) || v > 2147483647u || (!v && !strcmp(a, "--batch")))
                    return usage_error("bad count '%s'", val);
                if (!strcmp(a, "--batch")) o->batch = v;
                else o->first = v;
            }
            else if (!strcmp(a, "--in")) {
                const char *eq = strchr(val, '=');
                if (!eq || eq == val || !eq[1]) return usage_error("--in wants NAME=PATH, got '%s'", val);
                if (o->n_in == 64) return usage_error("%s: at most 64 --in options", a);
                o->in_name[o->n_in] = val, o->in_path[o->n_in++] = eq + 1;
            } else if (parse_u64(val, &v) || (!strcmp(a, "--show") && v > 1000000))
                return usage_error("bad number '%s'", val);
            else if (!strcmp(a, "--seed")) o->seed = v, o->seed_set = 1;
            else if (!strcmp(a, "--reps")) {
                if (v > 100000) return usage_error("--reps takes 0 to 100000, got '%s'", val);
                o->reps = v ? (int)v : -1;
            }
            else if (!strcmp(a, "--tests")) {
                if (v < 1 || v > 1000) return usage_error("--tests takes 1 to 1000, got '%s'", val);
                o->tests = (int)v;
            } else if (!strcmp(a, "--guided") || !strcmp(a, "--jobs")) {
                if (v > (!strcmp(a, "--jobs") ? 64u : 10000u)) return usage_error("%s: too many, got '%s'", val);
                if (!strcmp(a, "--jobs")) o->jobs = v ? (int)v : 1;
                else o->guided = (int)v;
            } else if (!strcmp(a, "--samples")) {
                if (v < 1 || v > 1000000) return usage_error("--samples takes 1 to 1000000, got '%s'", val);
                o->samples = (int)v;
            } else o->show = (int)v;
        } else if (a[0] == '-' && a[1]) return usage_error("unknown option '%s'", a);
        else if (o->file && ((strcmp(o->cmd, "verify") && strcmp(o->cmd, "run") && strcmp(o->cmd, "tune")) || o->file2))
            return usage_error(o->file2 ? "two files at most; extra '%s'" : "more than one FILE ('%s')", a);
        else if (o->file) o->file2 = a;
        else o->file = a;
    }
    if (!o->file) return usage_error("%s needs a FILE", o->cmd);
    if (!strcmp(o->cmd, "verify") && !o->file2) return usage_error("%s needs PROGRAM and UGRAPH", o->cmd);
    return 0;
}

static int cmd_check(mg_ctx *ctx, mg_program *p, const opts *o) {
    int lax = 0;
    const char *why = "";
    mg_status rc = mg_program_lax(ctx, p, &lax, &why);
    if (rc) return fail(ctx, rc);
    char *text = NULL;
    if (o->json) {
        if ((rc = mg_program_format(ctx, p, MG_FMT_JSON, &text))) return fail(ctx, rc);
        fputs(text, stdout);
        mg_free(text);
        return 0;
    }
    printf("# %s: %d input%s, %d output%s; %s%s%s\n", o->file, mg_program_n_inputs(p),
           mg_program_n_inputs(p) == 1 ? "" : "s", mg_program_n_outputs(p),
           mg_program_n_outputs(p) == 1 ? "" : "s", lax ? "Lax" : "not Lax: ", lax ? "" : why, "");
    if ((rc = mg_program_format(ctx, p, MG_FMT_TEXT, &text))) return fail(ctx, rc);
    fputs(text, stdout);
    mg_free(text);
    return 0;
}

static int cmd_render(mg_ctx *ctx, mg_program *p, mg_format fmt) {
    char *text = NULL;
    mg_status rc = mg_program_format(ctx, p, fmt, &text);
    if (rc) return fail(ctx, rc);
    fputs(text, stdout);
    mg_free(text);
    return 0;
}

static int cmd_verify(mg_ctx *ctx, mg_program *p, const opts *o) {
    mg_program *u = NULL;
    mg_status st = mg_program_load(ctx, o->file2, &u);
    if (st) return fail(ctx, st);
    mg_verify_report r;
    st = mg_verify(ctx, p, u, o->tests, o->seed, &r);
    mg_program_free(u);
    if (st) return fail(ctx, st);
    printf("%s\n", r.text);
    static const int code[] = {[MG_EQUIVALENT] = 0, [MG_NOT_EQUIVALENT] = 3, [MG_NOT_LAX] = 4,
                               [MG_UNSTABLE] = 5};
    return code[r.verdict];
}

/* ---- run / emit ---- */

static int cmd_run(mg_ctx *ctx, mg_program *p, opts *o) {
    mg_program *u = NULL;
    mg_status st = o->file2 ? mg_program_load(ctx, o->file2, &u) : MG_OK;
    if (st) return fail(ctx, st);
    o->run.seed = o->seed, o->run.reps = o->reps;
    mg_run_report r;
    st = mg_run(ctx, p, u, &o->run, &r);
    mg_program_free(u);
    if (st) return fail(ctx, st);
    printf("inputs: uniform in [-1, 1)%s, seed %llu\n%s",
           o->run.specials ? ", every third element NaN, +inf, -inf, -0 or +0" : "", (unsigned long long)o->seed, r.text);
    if (o->run.persist && r.backend != MG_BACKEND_GPU)
        fprintf(stderr, "mugen: note: %s needs the GPU; the C backend ran the kernels one after another\n",
                o->run.persist == 3 ? "--queues" : o->run.persist == 2 ? "--megakernel" : "--persist");
    return r.ok ? 0 : 3;
}

static int cmd_lower(mg_ctx *ctx, mg_program *p) {
    mg_program *u = NULL;
    char *text = NULL;
    mg_status st = mg_program_lower(ctx, p, &u);
    if (!st) st = mg_program_format(ctx, u, MG_FMT_TEXT, &text);
    mg_program_free(u);
    if (st) return fail(ctx, st);
    fputs(text, stdout);
    mg_free(text);
    return 0;
}

static int cmd_space(mg_ctx *ctx, mg_program *p, const opts *o) {
    mg_space_opts so = {.samples = o->samples, .seed = o->seed};
    char *text = NULL;
    mg_status st = mg_space(ctx, p, &so, &text);
    if (st) return fail(ctx, st);
    fputs(text, stdout);
    mg_free(text);
    return 0;
}

static void tune_progress(void *arg, int i, int n, const char *point, double us, int ok, const char *note) {
    (void)arg;
    printf("[%d/%d] %s%s: ", i, n, point, i ? "" : " (the rules')");
    if (ok) printf("%.2f us", us);
    else printf("failed");
    printf("%s%s\n", note ? "; " : "", note ? note : "");
    fflush(stdout);
}

static int cmd_tune(mg_ctx *ctx, mg_program *p, opts *o) {
    mg_program *u = NULL;
    mg_status st = o->file2 ? mg_program_load(ctx, o->file2, &u) : MG_OK;
    if (st) return fail(ctx, st);
    mg_tune_opts to = {.samples = o->samples, .seed = o->seed, .dataset = o->dataset, .run = o->run,
                       .guided = o->guided, .jobs = o->jobs, .pin = o->pin, .device = o->device,
                       .progress = tune_progress};
    to.run.seed = o->seed, to.run.reps = o->reps;
    mg_tune_report r;
    st = mg_tune(ctx, p, u, &to, &r);
    mg_program_free(u);
    if (st) return fail(ctx, st);
    if (o->pin) {
        printf("pinned: %s, the tuning cache's point for this graph on %s (docs/tuning.md)\n", r.best, o->device ? o->device : "the default device");
        return 0;
    }
    printf("points: %d (%d run, %d from the dataset, %d failed)%s\n", r.points, r.measured, r.resumed, r.failed,
           r.sketches > 1 ? ", over the program's distinct lowerings (sketch=N)" : "");
    if (r.compiled_ahead) printf("compiled ahead: %d points in %d processes; %d timed runs found their code in the cache\n", r.compiled_ahead, o->jobs, r.cached_runs);
    printf("fastest: %s: %.2f us", r.best, r.best_us);
    if (r.rules_us > 0) printf(", the rules' %.2f us (%.3fx)", r.rules_us, r.rules_us / r.best_us);
    printf("\n");
    if (*r.cached) printf("kept in the tuning cache for %s: run, emit, optimize and mg_compile of this graph plan at it (--untuned: not)\n", r.cached);
    else printf("not kept: the C backend runs every point alike (the tuning cache holds GPU points)\n");
    return 0;
}

static int cmd_emit(mg_ctx *ctx, mg_program *p, const opts *o) {
    int c = o->target && !strcmp(o->target, "c");
    char *src = NULL;
    mg_status st = mg_emit(ctx, p, c ? MG_TARGET_C : MG_TARGET_CUDA, &o->run, o->compile, &src);
    if (st) return fail(ctx, st);
    int r = 0;
    if (o->out_dir) {
        const char *base = strrchr(o->file, '/') ? strrchr(o->file, '/') + 1 : o->file;
        char path[4096];
        size_t n = strcspn(base, ".");
        snprintf(path, sizeof path, "%s/%.*s.%s", o->out_dir, (int)n, base, c ? "c" : "cu");
        FILE *f = fopen(path, "w");
        if (!f || fputs(src, f) < 0) {
            fprintf(stderr, "mugen: cannot write %s: %s\n", path, strerror(errno));
            r = 1;
        }
        if (f && fclose(f)) r = 1;
        if (!r) printf("wrote %s\n", path);
    } else fputs(src, stdout);
    mg_free(src);
    return r;
}

/* ---- eval ---- */

static uint16_t rd16(const unsigned char *b) { return (uint16_t)(b[0] | b[1] << 8); }

static float half_to_float(uint16_t h) { /* f16 -> f32, exact */
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY)
                                                       : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

static int read_input(const char *path, const mg_tensor_desc *d, double *dst) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "mugen: %s: cannot open: %s\n", path, strerror(errno));
        return 1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mugen: %s: is a directory, not a file of values for input '%s'\n", path, d->name);
        fclose(f);
        return 1;
    }
    size_t len = strlen(path);
    int64_t n = 0;
    if (len > 4 && !strcmp(path + len - 4, ".txt")) {
        double x;
        int r;
        while (n <= d->numel && (r = fscanf(f, "%lf", &x)) == 1) {
            if (n < d->numel) dst[n] = x;
            n++;
        }
        if (n <= d->numel && !feof(f)) {
            fprintf(stderr, "mugen: %s: not a number after value %" PRId64 "\n", path, n);
            fclose(f);
            return 1;
        }
    } else {
        size_t es = d->dtype == MG_F32 ? 4 : 2;
        unsigned char b[4];
        while (n <= d->numel && fread(b, 1, es, f) == es) {
            if (n < d->numel) {
                if (d->dtype == MG_F32) {
                    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                    float x;
                    memcpy(&x, &u, 4);
                    dst[n] = x;
                } else if (d->dtype == MG_F16) dst[n] = half_to_float(rd16(b));
                else {
                    uint32_t u = (uint32_t)rd16(b) << 16;
                    float x;
                    memcpy(&x, &u, 4);
                    dst[n] = x;
                }
            }
            n++;
        }
    }
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) {
        fprintf(stderr, "mugen: %s: cannot read: %s\n", path, strerror(err));
        return 1;
    }
    if (n != d->numel) {
        fprintf(stderr, "mugen: %s: input '%s' needs %" PRId64 " values, the file has %s%" PRId64
                "\n", path, d->name, d->numel, n > d->numel ? "more than " : "", n > d->numel ? d->numel : n);
        return 1;
    }
    return 0;
}

/* "NAME f16[2, 4096]"; a ragged dim by its lengths' name, and the packed element count */
static void print_dims(const mg_program *p, const mg_tensor_desc *d) {
    static const char *dt[] = {"f16", "bf16", "f32"};
    printf("%s %s[", d->name, dt[d->dtype]);
    int ragged = 0;
    for (int k = 0; k < d->ndim; k++) {
        const char *ln = NULL;
        if (d->ragged[k] && !mg_program_lengths(p, d->ragged[k] - 1, &ln, NULL, NULL)) printf("%s%s", k ? ", " : "", ln), ragged = 1;
        else printf("%s%" PRId64, k ? ", " : "", d->dims[k]);
    }
    printf("]");
    if (ragged) printf(" (%" PRId64 " elements packed)", d->numel);
}

static int write_file(const char *dir, const char *name, const char *ext, const void *data, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f)) {
        fprintf(stderr, "mugen: %s: cannot write: %s\n", path, strerror(errno));
        if (f) fclose(f);
        return 1;
    }
    return 0;
}

static int save_float(const char *dir, const mg_tensor_desc *d, const double *v) {
    size_t es = d->dtype == MG_F32 ? 4 : 2;
    unsigned char *buf = malloc((size_t)d->numel * es + 1);
    if (!buf) return 1;
    for (int64_t t = 0; t < d->numel; t++) {
        float x = (float)v[t];
        uint32_t u;
        memcpy(&u, &x, 4);
        if (es == 4) memcpy(buf + 4 * t, &u, 4);
        else if (d->dtype == MG_BF16) buf[2 * t] = (unsigned char)(u >> 16), buf[2 * t + 1] = (unsigned char)(u >> 24);
        else { /* values are already f16-representable: exact conversion */
            uint16_t h = 0;
            float a = fabsf(x);
            int e;
            if (isnan(x)) h = 0x7e00;
            else if (isinf(x)) h = 0x7c00;
            else if (a < 0x1p-14f) h = (uint16_t)lrintf(a * 0x1p24f);
            else {
                float m = frexpf(a, &e); /* a = m 2^e, m in [0.5, 1) */
                h = (uint16_t)(((e + 14) << 10) | ((uint16_t)lrintf(m * 2048.0f) & 1023));
            }
            if (signbit(x)) h |= 0x8000;
            buf[2 * t] = (unsigned char)h, buf[2 * t + 1] = (unsigned char)(h >> 8);
        }
    }
    int r = write_file(dir, d->name, ".bin", buf, (size_t)d->numel * es);
    free(buf);
    return r;
}

/* Refuses programs whose inputs or outputs the evaluator could not hold anyway, before
 * allocating them here. */
static int too_large(mg_program *p, size_t elem) {
    for (int i = 0; i < mg_program_n_inputs(p) + mg_program_n_outputs(p); i++) {
        mg_tensor_desc d;
        int in = i < mg_program_n_inputs(p);
        if (in) mg_program_input(p, i, &d);
        else mg_program_output(p, i - mg_program_n_inputs(p), &d);
        double bytes = (double)d.numel * (double)elem;
        if (bytes > mg_eval_max_bytes()) {
            fprintf(stderr, "mugen: %s '%s' needs %.1f GB to evaluate, over the limit of %.1f GB "
                    "(MUGEN_EVAL_MAX_GB)\n", in ? "input" : "output", d.name, bytes / 1e9,
                    mg_eval_max_bytes() / 1e9);
            return 1;
        }
    }
    return 0;
}

/* Whether an --in argument NAME=PATH names input `name`. */
static int in_names(const char *arg, const char *name) {
    return !strncmp(arg, name, strlen(name)) && arg[strlen(name)] == '=';
}

/* Fills in[i] for each of p's inputs (ni of them): read from its --in file, else seeded
 * random values in [-range, range) (its range=); then checks that every --in names an input.
 * 0, or 1 after a message. */
static int float_inputs(mg_program *p, const opts *o, int ni, double **in) {
    int rc = 0;
    uint64_t s = o->seed * 0x9e3779b97f4a7c15ull + 12345;
    for (int i = 0; i < ni && !rc; i++) {
        mg_tensor_desc d;
        mg_program_input(p, i, &d);
        in[i] = malloc((size_t)d.numel * sizeof(double) + 1);
        if (!in[i]) {
            fprintf(stderr, "mugen: out of memory for input '%s'\n", d.name);
            rc = 1;
            break;
        }
        const char *path = NULL;
        for (int k = 0; k < o->n_in; k++)
            if (in_names(o->in_name[k], d.name)) path = o->in_path[k];
        if (path) rc = read_input(path, &d, in[i]);
        else
            for (int64_t t = 0; t < d.numel; t++) { /* splitmix64 -> [-1, 1) */
                uint64_t z = (s += 0x9e3779b97f4a7c15ull);
                z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
                z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
                in[i][t] = ((double)((z ^ (z >> 31)) >> 11) * 0x1p-52 - 1.0) * d.range;
            }
    }
    for (int k = 0; k < o->n_in && !rc; k++) {
        int found = 0;
        for (int i = 0; i < ni; i++) {
            mg_tensor_desc d;
            mg_program_input(p, i, &d);
            found |= in_names(o->in_name[k], d.name);
        }
        if (!found) {
            fprintf(stderr, "mugen: --in %s: the program has no input of that name\n", o->in_name[k]);
            rc = 1;
        }
    }
    return rc;
}

/* ": min A max B mean C" over the n values of v, then a newline and a space. Over the finite
 * ones only when some are NaN or infinite, with their counts; a line that says so when no
 * value is finite. */
static void print_summary(const double *v, int64_t n) {
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    int64_t nan = 0, pinf = 0, ninf = 0;
    for (int64_t t = 0; t < n; t++) {
        if (isnan(v[t])) nan++;
        else if (isinf(v[t])) v[t] > 0 ? pinf++ : ninf++;
        else mn = fmin(mn, v[t]), mx = fmax(mx, v[t]), sum += v[t];
    }
    int64_t fin = n - nan - pinf - ninf;
    if (fin) printf(": min %.6g max %.6g mean %.6g", mn, mx, sum / (double)fin);
    else printf(": no finite values");
    if (fin < n) {
        printf(fin ? " over %" PRId64 " finite values; " : ": ", fin);
        const char *sep = "";
        if (nan) printf("%" PRId64 " NaN", nan), sep = ", ";
        if (pinf) printf("%s%" PRId64 " +inf", sep, pinf), sep = ", ";
        if (ninf) printf("%s%" PRId64 " -inf", sep, ninf);
    }
    printf("\n ");
}

static int eval_float(mg_ctx *ctx, mg_program *p, const opts *o) {
    if (too_large(p, sizeof(double))) return 1;
    int ni = mg_program_n_inputs(p), no = mg_program_n_outputs(p);
    double **in = calloc((size_t)ni + 1, sizeof *in), **out = calloc((size_t)no + 1, sizeof *out);
    int rc = float_inputs(p, o, ni, in);
    for (int k = 0; k < no && !rc; k++) {
        mg_tensor_desc d;
        mg_program_output(p, k, &d);
        out[k] = malloc((size_t)d.numel * sizeof(double) + 1);
        if (!out[k]) rc = 1;
        else for (int64_t t = 0; t < d.numel; t++) out[k][t] = NAN; /* poison */
    }
    mg_status st = MG_OK;
    if (!rc && (st = mg_eval_float(ctx, p, o->f64, (const double *const *)in, out))) rc = fail(ctx, st);
    for (int k = 0; k < no && !rc; k++) {
        mg_tensor_desc d;
        mg_program_output(p, k, &d);
        print_dims(p, &d);
        print_summary(out[k], d.numel);
        for (int64_t t = 0; t < d.numel && t < o->show; t++) /* NaN as "nan", whatever its sign bit */
            isnan(out[k][t]) ? printf(" nan") : printf(" %.6g", out[k][t]);
        printf("%s\n", d.numel > o->show ? " ..." : "");
        if (o->out_dir) rc = save_float(o->out_dir, &d, out[k]);
    }
    for (int i = 0; i < ni; i++) free(in[i]);
    for (int k = 0; k < no; k++) free(out[k]);
    free(in), free(out);
    return rc;
}

static int eval_field(mg_ctx *ctx, mg_program *p, const opts *o) {
    if (o->n_in) return usage_error("%s: --in reads float inputs; --field draws random field inputs", "eval");
    if (too_large(p, 8)) return 1;
    int ni = mg_program_n_inputs(p), no = mg_program_n_outputs(p), rc = 0;
    mg_field F;
    mg_field_draw(o->seed, &F);
    uint32_t P = F.p, Q = F.q;
    uint32_t **ip = calloc((size_t)ni + 1, sizeof *ip), **iq = calloc((size_t)ni + 1, sizeof *iq);
    uint32_t **op = calloc((size_t)no + 1, sizeof *op), **oq = calloc((size_t)no + 1, sizeof *oq);
    uint64_t s = o->seed * 0x9e3779b97f4a7c15ull + 777;
    for (int i = 0; i < ni && !rc; i++) {
        mg_tensor_desc d;
        mg_program_input(p, i, &d);
        ip[i] = malloc((size_t)d.numel * 4 + 1), iq[i] = malloc((size_t)d.numel * 4 + 1);
        if (!ip[i] || !iq[i]) rc = 1;
        for (int64_t t = 0; t < d.numel && !rc; t++) {
            uint64_t z = (s += 0x9e3779b97f4a7c15ull);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            z ^= z >> 31;
            ip[i][t] = (uint32_t)((z >> 32) % P), iq[i][t] = (uint32_t)((z & 0xffffffffu) % Q);
        }
    }
    for (int k = 0; k < no && !rc; k++) {
        mg_tensor_desc d;
        mg_program_output(p, k, &d);
        op[k] = malloc((size_t)d.numel * 4 + 1), oq[k] = malloc((size_t)d.numel * 4 + 1);
        if (!op[k] || !oq[k]) rc = 1;
        else memset(op[k], 0xAB, (size_t)d.numel * 4), memset(oq[k], 0xAB, (size_t)d.numel * 4);
    }
    if (rc) fprintf(stderr, "mugen: out of memory\n");
    mg_status st = MG_OK;
    if (!rc && (st = mg_eval_field(ctx, p, &F, (const uint32_t *const *)ip,
                                   (const uint32_t *const *)iq, op, oq)))
        rc = fail(ctx, st);
    if (!rc) printf("# Z_p x Z_q with p = %u, q = %u, omega = %u (seed %" PRIu64 ")\n", P, Q, F.omega, o->seed);
    for (int k = 0; k < no && !rc; k++) {
        mg_tensor_desc d;
        mg_program_output(p, k, &d);
        uint64_t h = 1469598103934665603ull;
        for (int64_t t = 0; t < d.numel; t++) h = (h ^ op[k][t]) * 1099511628211ull ^ oq[k][t];
        print_dims(p, &d);
        printf(": fingerprint %016" PRIx64 "\n ", h);
        for (int64_t t = 0; t < d.numel && t < o->show; t++) {
            if (oq[k][t] == MG_FIELD_NONE) printf(" (%u, -)", op[k][t]);
            else printf(" (%u, %u)", op[k][t], oq[k][t]);
        }
        printf("%s\n", d.numel > o->show ? " ..." : "");
        if (o->out_dir)
            rc = write_file(o->out_dir, d.name, ".p.u32", op[k], (size_t)d.numel * 4) ||
                 write_file(o->out_dir, d.name, ".q.u32", oq[k], (size_t)d.numel * 4);
    }
    for (int i = 0; i < ni; i++) free(ip[i]), free(iq[i]);
    for (int k = 0; k < no; k++) free(op[k]), free(oq[k]);
    free(ip), free(iq), free(op), free(oq);
    return rc;
}

/* mugen portfolio: every variant of a program of a symbolic dim compiled ahead (docs/tuning.md). */
static int cmd_portfolio(mg_ctx *ctx, mg_program *p, const opts *o) {
    const char *dn;
    char name[128];
    int64_t lo, hi, val;
    if (mg_program_n_dims(p) != 1 || mg_program_dim(p, 0, &dn, &lo, &hi, &val)) {
        fprintf(stderr, "mugen: portfolio: %s declares %d symbolic dims; it takes a program of one (dim NAME [LO, HI])\n", o->file,
                mg_program_n_dims(p));
        return 1;
    }
    snprintf(name, sizeof name, "%s", dn); /* binding frees the graph that holds dn */
    int c = o->target && !strcmp(o->target, "c"), n = 0;
    double total = 0;
    for (int64_t v = lo;; n++) {
        const int64_t cap = mg_program_dim_capacity(p, 0, v);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        char *src = NULL;
        mg_status st = mg_program_bind_dim(ctx, p, name, cap);
        if (!st) st = mg_program_set_variant(ctx, p, name, cap); /* whatever MUGEN_SELECTOR says */
        if (!st) st = mg_emit(ctx, p, c ? MG_TARGET_C : MG_TARGET_CUDA, &o->run, 1, &src);
        mg_free(src);
        if (st) return fail(ctx, st);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        total += s;
        printf("%s in [%lld, %lld]: the variant for %lld rows compiled (%.2f s)\n", name, (long long)v, (long long)cap, (long long)cap, s);
        fflush(stdout);
        if (cap >= hi) break;
        v = cap + 1;
    }
    printf("portfolio: %d variants of %s in [%lld, %lld] for %s, %.1f s, in the compile cache; a call of %s rows runs the "
           "smallest that holds them\n", n + 1, name, (long long)lo, (long long)hi, c ? "C" : "CUDA (NVRTC)", total, name);
    return 0;
}

static const char *command_help(const char *cmd) {
    return !strcmp(cmd, "check")       ? HELP_CHECK
           : !strcmp(cmd, "eval")      ? HELP_EVAL
           : !strcmp(cmd, "dot")       ? HELP_DOT
           : !strcmp(cmd, "partition") ? HELP_PART
           : !strcmp(cmd, "verify")    ? HELP_VERIFY
           : !strcmp(cmd, "run")       ? HELP_RUN
           : !strcmp(cmd, "emit")      ? HELP_EMIT
           : !strcmp(cmd, "lower")     ? HELP_LOWER
           : !strcmp(cmd, "space")     ? HELP_SPACE
           : !strcmp(cmd, "tune")      ? HELP_TUNE
           : !strcmp(cmd, "portfolio") ? HELP_PORTFOLIO
                                       : NULL;
}

/* Checks the parsed options against the command and reads their values: 0, or the exit
 * status (2 a bad command line, 1 an --out that is not a directory). */
static int check_opts(opts *o) {
    int gen = !strcmp(o->cmd, "run") || !strcmp(o->cmd, "emit");
    if ((o->json && strcmp(o->cmd, "check")) || (o->tasks && strcmp(o->cmd, "dot")) ||
        ((o->f64 || o->field || o->n_in) && strcmp(o->cmd, "eval")) ||
        ((o->n_len || o->batch || o->first) && strcmp(o->cmd, "eval") && strcmp(o->cmd, "run") && strcmp(o->cmd, "emit") &&
         strcmp(o->cmd, "lower") && strcmp(o->cmd, "space") && strcmp(o->cmd, "tune")) ||
        (o->samples && strcmp(o->cmd, "space") && strcmp(o->cmd, "tune")) || ((o->guided || o->jobs) && strcmp(o->cmd, "tune")) || ((o->dataset || o->pin || o->device) && strcmp(o->cmd, "tune")) ||

        ((o->batch || o->first) && !o->n_len) ||
        (o->out_dir && strcmp(o->cmd, "eval") && strcmp(o->cmd, "emit")) ||
        (o->tests && strcmp(o->cmd, "verify")) ||
        ((o->backend || o->reps) && strcmp(o->cmd, "run") && strcmp(o->cmd, "tune")) ||
        ((o->run.no_pdl || o->run.specials) && strcmp(o->cmd, "run")) ||
        (o->target && strcmp(o->cmd, "emit") && strcmp(o->cmd, "portfolio")) || (o->compile && strcmp(o->cmd, "emit")) ||
        ((o->run.schedule || o->run.no_reuse || o->run.no_depth || o->run.no_layout || o->run.no_pipeline || o->run.no_regacc || o->run.no_blocksize || o->run.no_chain || o->run.no_tma || o->run.prefetch || o->run.persist || o->run.cluster || o->run.wgmma || o->run.plain || o->run.untuned) && !gen))
        return usage_error("option not valid for '%s'", o->cmd);
    if ((o->device && !o->pin) || (o->pin && (o->samples || o->dataset || o->backend || o->reps || o->guided || o->jobs)))
        return usage_error("%s", "--device goes with --pin, and --pin runs nothing: no --samples, --guided, --jobs, --dataset, --backend or --reps");
    if (o->backend) {
        if (!strcmp(o->backend, "gpu")) o->run.backend = MG_BACKEND_GPU;
        else if (!strcmp(o->backend, "c")) o->run.backend = MG_BACKEND_C;
        else if (strcmp(o->backend, "auto")) return usage_error("--backend takes gpu, c or auto, not '%s'", o->backend);
    }
    if (o->target && strcmp(o->target, "cuda") && strcmp(o->target, "c"))
        return usage_error("--target takes cuda or c, not '%s'", o->target);
    if (!strcmp(o->cmd, "run") && !o->seed_set) o->seed = (uint64_t)time(NULL);
    if (o->field && o->f64) return usage_error("%s: --field and --f64 exclude each other", "eval");
    if (o->out_dir) {
        struct stat st;
        if (stat(o->out_dir, &st) || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "mugen: --out %s: not a directory\n", o->out_dir);
            return 1;
        }
    }
    return 0;
}

/* --lengths NAME=FILE (each of args[0..n): --batch N, --first L): lines first .. first +
 * count of FILE, one sequence length a line (blank lines skipped), bound to the program's
 * lengths NAME; the batch is the program's count (docs/ragged.md; batch 0: not checked).
 * Also mugen search's and optimize's (cli/search.c). 0, or 1 after a message. */
int cli_bind_lengths(mg_ctx *ctx, mg_program *p, const char *const *args, int n_args, uint64_t batch, uint64_t first) {
    for (int j = 0; j < n_args; j++) {
        const char *arg = args[j], *eq = strchr(arg, '='), *path = eq + 1;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
        int64_t count = 0;
        const char *nm = NULL;
        for (int k = 0; k < mg_program_n_lengths(p); k++)
            if (!mg_program_lengths(p, k, &nm, &count, NULL) && !strcmp(nm, name)) break;
            else count = 0;
        if (!count) {
            fprintf(stderr, "mugen: --lengths %s: the program declares no lengths '%s'\n", arg, name);
            return 1;
        }
        if (batch && (uint64_t)count != batch) {
            fprintf(stderr, "mugen: --batch %" PRIu64 ": the program's batch is %" PRId64 " sequences (lengths %s); a batch of %" PRIu64
                    " needs a program declared with that many\n", batch, count, name, batch);
            return 1;
        }
        FILE *f = fopen(path, "r");
        if (!f) {
            fprintf(stderr, "mugen: --lengths %s: cannot open: %s\n", path, strerror(errno));
            return 1;
        }
        int64_t *len = malloc((size_t)count * sizeof *len + 1), n = 0, line = 0;
        char buf[256];
        int bad = !len;
        while (!bad && n < count && fgets(buf, sizeof buf, f)) {
            line++;
            char *s = buf, *end;
            while (*s == ' ' || *s == '\t') s++;
            if (*s == '\n' || *s == '\r' || !*s) continue;
            errno = 0;
            long long x = strtoll(s, &end, 10);
            while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
            if (errno || end == s || *end) {
                fprintf(stderr, "mugen: %s:%" PRId64 ": not a length: %s", path, line, buf);
                bad = 1;
            } else if ((uint64_t)line > first) len[n++] = x;
        }
        fclose(f);
        if (!bad && n < count) {
            fprintf(stderr, "mugen: %s: %" PRId64 " lengths from line %" PRIu64 " needed (lengths %s), the file has %" PRId64 "\n", path,
                    count, first + 1, name, n);
            bad = 1;
        }
        mg_status st = bad ? MG_OK : mg_program_bind_lengths(ctx, p, name, len, count);
        free(len);
        if (bad) return 1;
        if (st) {
            fprintf(stderr, "mugen: %s: %s\n", path, mg_ctx_error(ctx));
            return 1;
        }
    }
    return 0;
}

/* --dim NAME=VALUE (each of o->dim_arg): binds the program's symbolic dim NAME (docs/tuning.md);
 * 0, or 1 after a message. */
static int bind_dims(mg_ctx *ctx, mg_program *p, const opts *o) {
    for (int i = 0; i < o->n_dim; i++) {
        const char *arg = o->dim_arg[i], *eq = strchr(arg, '=');
        char name[128];
        uint64_t v;
        snprintf(name, sizeof name, "%.*s", (int)(eq - arg) < 127 ? (int)(eq - arg) : 127, arg);
        if (parse_u64(eq + 1, &v) || v > 2147483647u || !v) {
            fprintf(stderr, "mugen: --dim %s: the value is a positive integer\n", arg);
            return 1;
        }
        mg_status st = mg_program_bind_dim(ctx, p, name, (int64_t)v);
        if (!st && o->variant && o->variant != UINT64_MAX && !i) st = mg_program_set_variant(ctx, p, name, (int64_t)o->variant);
        if (st) return fail(ctx, st);
    }
    if (o->variant && !o->n_dim) {
        fprintf(stderr, "mugen: --variant goes with --dim\n");
        return 1;
    }
    return 0;
}

/* Loads the program and runs the command on it: the command's exit status. */
static int run_command(opts *o) {
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL;
    int r;
    if (!ctx) {
        fprintf(stderr, "mugen: out of memory\n");
        return 1;
    }
    mg_status st = mg_program_load(ctx, o->file, &p);
    if (st) r = fail(ctx, st);
    else if (cli_bind_lengths(ctx, p, o->len_arg, o->n_len, o->batch, o->first)) r = 1;
    else if (bind_dims(ctx, p, o)) r = 1;
    else if (!strcmp(o->cmd, "check")) r = cmd_check(ctx, p, o);
    else if (!strcmp(o->cmd, "dot")) r = cmd_render(ctx, p, o->tasks ? MG_FMT_TASKS : MG_FMT_DOT);
    else if (!strcmp(o->cmd, "partition")) r = cmd_render(ctx, p, MG_FMT_PARTITION);
    else if (!strcmp(o->cmd, "verify")) r = cmd_verify(ctx, p, o);
    else if (!strcmp(o->cmd, "run")) r = cmd_run(ctx, p, o);
    else if (!strcmp(o->cmd, "emit")) r = cmd_emit(ctx, p, o);
    else if (!strcmp(o->cmd, "lower")) r = cmd_lower(ctx, p);
    else if (!strcmp(o->cmd, "space")) r = cmd_space(ctx, p, o);
    else if (!strcmp(o->cmd, "tune")) r = cmd_tune(ctx, p, o);
    else if (!strcmp(o->cmd, "portfolio")) r = cmd_portfolio(ctx, p, o);
    else r = o->field ? eval_field(ctx, p, o) : eval_float(ctx, p, o);
    mg_program_free(p);
    mg_ctx_free(ctx);
    return r;
}

int main(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "search") || !strcmp(argv[1], "optimize")) return cli_search(argc, argv);
    opts o = {.cmd = argv[1]};
    const char *help = command_help(o.cmd);
    if (!help) return usage_error("unknown command '%s'", o.cmd);
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(help, stdout);
            return 0;
        }
    int r = parse_args(argc, argv, &o);
    if (!r) r = check_opts(&o);
    if (r) return r;
    r = run_command(&o);
    if (fflush(stdout)) r = 1;
    return r;
}
