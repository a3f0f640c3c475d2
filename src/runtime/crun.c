/* runtime/crun: the C backend. rt_c_build runs the system C compiler (posix_spawn, output
 * captured through a pipe) into a shared object kept in the compile cache; rt_c_run runs an
 * entry point of it in a forked child over buffers in one shared anonymous mapping, so a
 * crash, a hang or a stray exit() of generated code is a status, never the caller's death.
 * The caller's process never loads the shared object itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt_internal.h"

extern char **environ;

enum { MAX_CC_WORDS = 16, MAX_OUTPUT = 256 * 1024, CHILD_NO_LIB = 3, CHILD_NO_ENTRY = 4 };
/* Compiler flags before and after the file names; both are part of the cache key. -O3 and
 * -march=native: the matmul and element loops are written to vectorise (c/matmul.c, and
 * F16C or AVX-512 turn the f16 conversions into vector instructions); the code runs where it
 * is compiled. -ffp-contract=off: no a * b + c fused into one rounding, so every compiler
 * gives the sums the reference's order gives. -fno-trapping-math: FP exceptions never trap
 * here, and without it gcc will not if-convert the f16 conversion's subnormal case (no vector
 * loop). -fno-math-errno: sqrtf need not set errno, so a loop calling it vectorises (nTrans
 * b=8 0.138 -> 0.063 ms on one thread). MUGEN_CC's own flags come after these and win
 * (MUGEN_CC="cc -march=x86-64-v3"). A serial build (rt_c_build_serial) takes -fopenmp-simd
 * instead of -fopenmp: its parallel pragmas are then ignored, its `omp simd` loops kept. */
static const char *const FLAGS[] = {"-std=c11",           "-O3",          "-march=native",
                                     "-ffp-contract=off",  "-fno-trapping-math",
                                     "-fno-math-errno",    "-fopenmp",     "-fPIC", "-shared"};
static const char *const LIBS[] = {"-lm"};
#define N_FLAGS (sizeof FLAGS / sizeof FLAGS[0])
#define N_LIBS (sizeof LIBS / sizeof LIBS[0])
/* FLAGS[i] in a build that is serial or not */
#define FLAG(i, serial) ((serial) && !strcmp(FLAGS[i], "-fopenmp") ? "-fopenmp-simd" : FLAGS[i])

static double now_ms(void) { return base_now_s() * 1e3; }

/* Splits MUGEN_CC (default "cc") on blanks into words (pointing into buf). Returns the count. */
static int compiler_words(char *buf, size_t n, char **words) {
    const char *cc = getenv("MUGEN_CC");
    snprintf(buf, n, "%s", cc && *cc ? cc : "cc");
    int k = 0;
    char *save = NULL;
    for (char *s = strtok_r(buf, " \t", &save); s && k < MAX_CC_WORDS;
         s = strtok_r(NULL, " \t", &save))
        words[k++] = s;
    if (k == 0) words[k++] = strcpy(buf, "cc");
    return k;
}

/* Runs argv with stdout and stderr into `out`; *status gets waitpid's status. Returns 0, or
 * the errno of a failed start. */
static int run_capture(char *const *argv, strbuf *out, int *status) {
    int fd[2], err;
    if (pipe2(fd, O_CLOEXEC) != 0) return errno;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    pid_t pid;
    err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (err) {
        close(fd[0]);
        return err;
    }
    char buf[4096];
    for (;;) {
        ssize_t r = read(fd[0], buf, sizeof buf - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        buf[r] = 0;
        if (out->len < MAX_OUTPUT) sb_puts(out, buf);
    }
    close(fd[0]);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) return errno;
    return 0;
}

/* Writes text to path (created 0644). Returns 0 or -1. */
static int write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    return (fclose(f) != 0 || bad) ? -1 : 0;
}

/* A usable cached object: a regular file starting with the ELF magic. */
static int is_elf(const char *path) {
    char m[4] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    return n == 4 && memcmp(m, "\177ELF", 4) == 0;
}

/* Compiles work/src.c into work/out.so. */
static mg_status compile_in(mg_ctx *ctx, const char *work, char *const *cc, int n_cc,
                            int serial, strbuf *log) {
    char src_path[4300], out_path[4300], head[300];
    snprintf(src_path, sizeof src_path, "%s/src.c", work);
    snprintf(out_path, sizeof out_path, "%s/out.so", work);
    const char *argv[MAX_CC_WORDS + N_FLAGS + N_LIBS + 4];
    int k = 0, status = 0;
    argv[k++] = cc[0];
    for (size_t i = 0; i < N_FLAGS; i++)
        argv[k++] = FLAG(i, serial);
    for (int i = 1; i < n_cc; i++) argv[k++] = cc[i]; /* after ours: MUGEN_CC="cc -O2" overrides */
    argv[k++] = "-o", argv[k++] = out_path, argv[k++] = src_path;
    for (size_t i = 0; i < N_LIBS; i++) argv[k++] = LIBS[i];
    argv[k] = NULL;
    strbuf out = {0};
    int err = run_capture((char *const *)argv, &out, &status);
    mg_status rc = MG_OK;
    if (err) {
        rc = ctx_err(ctx, MG_ERR_NO_DEVICE, "cannot run the C compiler '%s' (set MUGEN_CC): %s",
                     cc[0], strerror(err));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !is_elf(out_path)) {
        if (WIFEXITED(status))
            snprintf(head, sizeof head, "C compiler failed (%s exited with status %d):\n", cc[0],
                     WEXITSTATUS(status));
        else
            snprintf(head, sizeof head, "C compiler failed (%s killed by signal %d):\n", cc[0],
                     WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        if (log && out.s) sb_puts(log, out.s);
        rc = rt_compile_error(ctx, head, out.s ? out.s : "");
    }
    sb_free(&out);
    return rc;
}

/* Hashes the lines of /proc/cpuinfo's first processor that name the CPU and its features
 * (x86: vendor, model name, flags; arm64: implementer, part, Features) into h: objects built
 * with -march=native are only for this kind of CPU, even in a cache folder that several
 * machines share. Unchanged h where there is no /proc/cpuinfo. */
static uint64_t hash_host_cpu(uint64_t h) {
    static const char *const keys[] = {"vendor_id", "model name", "flags", "CPU implementer",
                                       "CPU part", "Features"};
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    while (f && fgets(line, sizeof line, f) && line[0] != '\n')
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            if (!strncmp(line, keys[i], strlen(keys[i]))) h = rt_hash(h, line, strlen(line) + 1);
    if (f) fclose(f);
    return h;
}

/* The cache key of a C build: source, compiler words, every flag (each NUL-terminated) and
 * the host CPU (hash_host_cpu). */
static uint64_t build_key(const char *src, char *const *cc, int n_cc, int serial) {
    uint64_t h = hash_host_cpu(rt_hash(RT_HASH_INIT, src, strlen(src) + 1));
    for (int i = 0; i < n_cc; i++) h = rt_hash(h, cc[i], strlen(cc[i]) + 1);
    for (size_t i = 0; i < N_FLAGS; i++)
        h = rt_hash(h, FLAG(i, serial), strlen(FLAG(i, serial)) + 1);
    for (size_t i = 0; i < N_LIBS; i++) h = rt_hash(h, LIBS[i], strlen(LIBS[i]) + 1);
    return h;
}

/* A fresh build folder: inside the cache folder when caching, else under $TMPDIR. */
static mg_status make_work_dir(mg_ctx *ctx, int cached, char *work, size_t n) {
    const char *tmp = getenv("TMPDIR");
    if (cached) snprintf(work, n, "%s/.build-XXXXXX", rt_cache_dir());
    else snprintf(work, n, "%s/mugen-c-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(work))
        return ctx_err(ctx, MG_ERR_IO, "cannot make a build folder %s: %s", work, strerror(errno));
    return MG_OK;
}

static mg_status dup_path(mg_ctx *ctx, const char *path, char **out) {
    *out = base_strdup(path);
    return *out ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
}

/* rt_c_build, serial or with OpenMP. */
static mg_status build(mg_ctx *ctx, const char *src, int serial, char **so_path, int *hit,
                       strbuf *log) {
    *so_path = NULL;
    if (!src) return ctx_err(ctx, MG_ERR_INVALID, "rt_c_build: no source");
    char ccbuf[1024], *cc[MAX_CC_WORDS], final[4200], work[4200], path[4300];
    int n_cc = compiler_words(ccbuf, sizeof ccbuf, cc);
    uint64_t key = build_key(src, cc, n_cc, serial);
    int cached = rt_cache_path(key, "so", final, sizeof final) == 0;
    int have = cached ? rt_cache_check(final) : 0;
    if (hit) *hit = have > 0;
    if (have > 0) return dup_path(ctx, final, so_path);
    if (have < 0) { /* never loaded: a truncated object crashes the process that maps it */
        fprintf(stderr, "mugen: note: the compile cache entry %s is damaged (its size or checksum "
                        "does not match); rebuilding it\n", final);
        unlink(final);
    }
    mg_status rc = make_work_dir(ctx, cached, work, sizeof work);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/src.c", work);
    if (write_file(path, src))
        rc = ctx_err(ctx, MG_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    else
        rc = compile_in(ctx, work, cc, n_cc, serial, log);
    unlink(path);
    snprintf(path, sizeof path, "%s/out.so", work);
    if (!rc && cached && rt_cache_seal(path) != 0)
        rc = ctx_err(ctx, MG_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    if (!rc && cached && rename(path, final) != 0)
        rc = ctx_err(ctx, MG_ERR_IO, "cannot store %s: %s", final, strerror(errno));
    if (!rc) rc = dup_path(ctx, cached ? final : path, so_path);
    if (rc || cached) {
        unlink(path);
        rmdir(work);
    }
    return rc;
}

mg_status rt_c_build(mg_ctx *ctx, const char *src, char **so_path, int *cached, strbuf *log) {
    return build(ctx, src, 0, so_path, cached, log);
}

mg_status rt_c_build_serial(mg_ctx *ctx, const char *src, char **so_path, int *cached,
                            strbuf *log) {
    return build(ctx, src, 1, so_path, cached, log);
}

/* What the child reports back in the shared region, ahead of the pointer array, the run
 * times and the buffers (each 64-byte aligned). */
typedef struct run_shared {
    double ms;      /* median of the timed runs */
    int n_timed;    /* how many runs were timed (reps, or fewer when the budget ran out) */
    int done;       /* set just before a successful _exit(0) */
    char err[1024]; /* dlerror() text when the child could not load the entry */
} run_shared;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Median of t[0..n) (sorted in place; shell sort, no allocation: it runs in the child). */
static double median(double *t, int n) {
    for (int gap = n / 2; gap > 0; gap /= 2)
        for (int i = gap; i < n; i++)
            for (int j = i; j >= gap && t[j - gap] > t[j]; j -= gap) {
                double x = t[j];
                t[j] = t[j - gap], t[j - gap] = x;
            }
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* The forked child: default signal dispositions (so a fault kills it even under a sanitizer
 * or a host that installed handlers), load, run once to warm up, then up to reps timed runs
 * (after the first, only while their total stays under budget_ms when budget_ms > 0),
 * report, _exit. */
static _Noreturn void child_main(run_shared *sh, const char *so, const char *entry,
                                 void **ptrs, double *times, int reps, double budget_ms, long long len) {
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* OpenMP threads sleep while they wait rather than spin first (unless the caller chose):
     * spinning threads on cores other processes want are parked mid-spin, and a join then
     * waits for a whole time slice (RMSNorm+Linear b=1 on the loaded 2-core machine: 72 ms
     * median spinning, 40 sleeping; LoRA 28 ms and 0.86). libgomp reads it when it loads. */
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL), *p = NULL;
    if (!h || !(p = dlsym(h, entry))) {
        const char *e = dlerror();
        snprintf(sh->err, sizeof sh->err, "%s", e ? e : "unknown dlopen error");
        _exit(h ? CHILD_NO_ENTRY : CHILD_NO_LIB);
    }
    void (*fn)(void **);
    memcpy(&fn, &p, sizeof p); /* object -> function pointer */
    void *sl = len >= 0 ? dlsym(h, "mg_set_len") : NULL;
    if (sl) { /* a variant of a reduced dim: the call's length (codegen/mask.c) */
        void (*set)(long long);
        memcpy(&set, &sl, sizeof sl);
        set(len);
    }
    double t0 = now_ms(), spent = 0;
    fn(ptrs); /* the warm-up: times[0] */
    times[0] = now_ms() - t0;
    int n = 0; /* timed runs so far: times[1..n] */
    while (n < reps && (n == 0 || budget_ms <= 0 || spent < budget_ms)) {
        t0 = now_ms();
        fn(ptrs);
        times[++n] = now_ms() - t0;
        spent += times[n];
    }
    sh->n_timed = n;
    sh->ms = n > 0 ? median(times + 1, n) : times[0];
    sh->done = 1;
    _exit(0);
}

/* Polls the child until it ends or timeout_s passes (then SIGKILL). Returns 1 if it timed
 * out, -1 if it cannot be waited for (errno set; e.g. the host ignores SIGCHLD), else 0. */
static int wait_child(pid_t pid, double timeout_s, int *status) {
    double t0 = now_ms();
    long nap_ns = 20000;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid) return 0;
        if (w < 0 && errno != EINTR) return -1;
        if (timeout_s > 0 && now_ms() - t0 > timeout_s * 1e3) {
            kill(pid, SIGKILL);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
            }
            return 1;
        }
        struct timespec nap = {0, nap_ns};
        nanosleep(&nap, NULL);
        if (nap_ns < 5000000) nap_ns *= 2;
    }
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal";
    }
}

/* Turns the child's wait status into a status and message. */
static mg_status child_result(mg_ctx *ctx, int status, const run_shared *sh, const char *so,
                              const char *entry) {
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        return ctx_err(ctx, MG_ERR_LAUNCH, "generated C crashed: %s (%s) in %s()",
                       signal_name(sig), strsignal(sig), entry);
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 0) return MG_OK;
    if (code == CHILD_NO_LIB)
        return ctx_err(ctx, MG_ERR_LAUNCH, "cannot load %s: %s", so, sh->err);
    if (code == CHILD_NO_ENTRY)
        return ctx_err(ctx, MG_ERR_LAUNCH, "no function %s in %s: %s", entry, so, sh->err);
    return ctx_err(ctx, MG_ERR_LAUNCH, "generated C exited with status %d in %s()", code, entry);
}

/* Bytes of the shared region and the offset of the first buffer; 0 on overflow. */
static size_t region_size(int n_bufs, const size_t *sizes, int reps, size_t *first_buf) {
    size_t n = align64(sizeof(run_shared)) + align64((size_t)n_bufs * sizeof(void *)) +
               align64(((size_t)reps + 1) * sizeof(double));
    *first_buf = n;
    for (int i = 0; i < n_bufs; i++) {
        if (sizes[i] > SIZE_MAX / 2 - n) return 0;
        n += align64(sizes[i]);
    }
    return n;
}

mg_status rt_c_run(mg_ctx *ctx, const char *so_path, const char *entry, int n_bufs,
                   void *const *bufs, const size_t *sizes, int reps, double timeout_s,
                   double *ms_median) {
    rt_c_timing tm = {.reps = reps};
    mg_status rc = rt_c_run_timed(ctx, so_path, entry, n_bufs, bufs, sizes, &tm, timeout_s);
    if (!rc && ms_median) *ms_median = tm.ms;
    return rc;
}

mg_status rt_c_run_timed(mg_ctx *ctx, const char *so_path, const char *entry, int n_bufs,
                         void *const *bufs, const size_t *sizes, rt_c_timing *tm,
                         double timeout_s) {
    int reps = tm ? tm->reps : 0;
    if (!so_path || !entry || n_bufs < 0 || (n_bufs > 0 && (!bufs || !sizes)) || reps < 0 ||
        reps > 10000000 || n_bufs > 1000000)
        return ctx_err(ctx, MG_ERR_INVALID, "rt_c_run: bad arguments");
    size_t off = 0, total = region_size(n_bufs, sizes, reps, &off);
    if (total == 0) return ctx_err(ctx, MG_ERR_NOMEM, "rt_c_run: buffers too large");
    char *region = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED)
        return ctx_err(ctx, MG_ERR_NOMEM, "mmap of %zu bytes: %s", total, strerror(errno));
    run_shared *sh = (run_shared *)region;
    void **ptrs = (void **)(region + align64(sizeof(run_shared)));
    double *times = (double *)(region + align64(sizeof(run_shared)) +
                               align64((size_t)n_bufs * sizeof(void *)));
    for (int i = 0; i < n_bufs; off += align64(sizes[i]), i++) {
        ptrs[i] = region + off;
        if (sizes[i]) memcpy(ptrs[i], bufs[i], sizes[i]);
    }
    int status = 0, w = 0;
    mg_status rc = MG_OK;
    pid_t pid = fork();
    if (pid == 0) child_main(sh, so_path, entry, ptrs, times, reps, tm ? tm->budget_s * 1e3 : 0, tm && tm->has_len ? tm->len : -1);
    if (pid < 0) rc = ctx_err(ctx, MG_ERR_LAUNCH, "fork: %s", strerror(errno));
    else if ((w = wait_child(pid, timeout_s, &status)) > 0)
        rc = ctx_err(ctx, MG_ERR_LAUNCH, "generated C ran past the %.3g s timeout in %s() and "
                     "was killed (SIGKILL)", timeout_s, entry);
    else if (w < 0 && !sh->done) /* reaped elsewhere: only the done flag tells */
        rc = ctx_err(ctx, MG_ERR_LAUNCH, "waitpid: %s (%s() did not finish)", strerror(errno),
                     entry);
    else if (w == 0)
        rc = child_result(ctx, status, sh, so_path, entry);
    for (int i = 0; !rc && i < n_bufs; i++)
        if (sizes[i]) memcpy(bufs[i], ptrs[i], sizes[i]);
    if (!rc && tm) tm->ms = sh->ms, tm->n_timed = sh->n_timed;
    munmap(region, total);
    return rc;
}
