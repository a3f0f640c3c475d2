/* tasks: the search's tasks, threads, progress, stopping and checkpoint (search_int.h).
 * The depth-0 choices of the generator are numbered as tasks; each worker thread takes the
 * next one in turn (take_task). A finished task's μGraphs are kept per task, so the merge
 * in task order does not depend on the thread count, and written to DIR/checkpoint/task-N
 * with --out, so that the same search run again skips it (docs/search.md). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "search_int.h"
#include "../eval/eval.h"

/* ---- the clock and stopping ---- */


static void publish(worker *w);
int sr_stopped_at(worker *w, int now) {
    search *s = w->s;
    if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) return 1;
    if (now || (w->states & 1023) == 0) {
        publish(w);
        if ((s->o->stop && *s->o->stop) ||
            (s->o->time_limit > 0 && base_now_s() - s->t0 > s->o->time_limit)) {
            __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
            return 1;
        }
    }
    return 0;
}
int sr_stopped(worker *w) { return sr_stopped_at(w, 0); }

/* Adds what worker w counted since last time to the shared counters (progress line). */
static void publish(worker *w) {
    search *s = w->s;
    __atomic_add_fetch(&s->states, w->states - w->published[0], __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->pruned, w->pruned - w->published[1], __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->candidates, w->candidates - w->published[2], __ATOMIC_RELAXED);
    w->published[0] = w->states, w->published[1] = w->pruned, w->published[2] = w->candidates;
}

/* ---- workers and tasks ---- */

int sr_worker_init(worker *w, search *s) {
    memset(w, 0, sizeof *w);
    w->s = s;
    ae_tab_init(&w->tab);
    for (int i = 0; i < s->prog->n_nodes; i++)
        if (s->prog->nodes[i].op == IR_OP_INPUT) ae_var(&w->tab, s->prog->nodes[i].name);
    ae_query_init(&w->q, s->eg, &w->tab);
    w->k = ir_graph_new();
    if (!w->k || w->tab.oom) return -1;
    for (int i = 0; i < s->prog->n_nodes; i++) {
        const ir_node *n = &s->prog->nodes[i];
        if (n->op != IR_OP_INPUT) continue;
        int node = ir_add_input(w->k, &w->ctx, n->name, n->dtype, &n->shape);
        if (node < 0) return -1;
        int32_t term = ae_make(&w->tab, AE_VAR, -1, -1, w->n_t, 0);
        w->t[w->n_t] = (ktens){node, 0, term, {0}};
        memcpy(w->t[w->n_t].lab, s->in_lab[w->n_t], sizeof s->in_lab[0]);
        w->n_t++;
    }
    for (int c = 0; c < s->n_const; c++)
        if ((w->const_node[c] = ir_add_const(w->k, &w->ctx, s->const_lit[c], 0, 0)) < 0) return -1;
    for (int c = 0; c < s->n_const; c++) {
        const ir_node *n = &w->k->nodes[w->const_node[c]];
        w->const_term[c] = ae_make(&w->tab, AE_CONST, -1, -1, n->num, n->den);
        w->const_cls[c] = ae_class(&w->q, w->const_term[c]);
        w->const_parents[c] = ae_class_parents(&w->q, w->const_cls[c]);
    }
    return 0;
}

void sr_worker_free(worker *w) {
    base_free(w->memo);
    base_free(w->verdicts);
    for (int d = 0; d < SR_MAX_KOPS; d++) base_free(w->bs[d].tilings), base_free(w->bs[d].in_group);
    for (int i = 0; i < w->n_found; i++) base_free(w->found[i].text);
    base_free(w->found);
    base_free(w->jobs);
    ae_query_free(&w->q);
    ae_tab_free(&w->tab);
    ir_graph_free(w->k);
}

/* The search runs in two passes (docs/search.md): first the μGraphs of one kernel operator,
 * then those of 2 to --max-kops. Sets w's pass for task number `task` (its number within the
 * pass in w->task); the first pass has s->n_tasks1 tasks. */
static void set_pass(worker *w, int64_t task) {
    search *s = w->s;
    int two = s->o->max_kops > 1;
    if (two && task < s->n_tasks1) {
        w->max_kops = 1, w->min_kops = 1, w->task = (int)task;
    } else {
        w->max_kops = s->o->max_kops, w->min_kops = two ? 2 : 1, w->task = (int)(task - s->n_tasks1);
    }
}

/* Runs task number `task`: the depth-0 choice of that number and everything below it. */
static void run_task(worker *w, int64_t task) {
    set_pass(w, task);
    w->counter = 0;
    if (w->memo) memset(w->memo, 0, sizeof *w->memo * (size_t)w->cap_memo);
    w->n_memo = 0;
    w->n_found = 0;
    sr_generate(w);
    sr_finish_jobs(w);
}

/* ---- the checkpoint ---- */

/* The checkpoint: DIR/checkpoint/key names the search (program and options); a file
 * DIR/checkpoint/task-N holds task N's verified μGraphs once it has finished. */
uint64_t sr_search_key(const search *s) {
    strbuf sb = {0};
    ir_print_text(s->prog, &sb);
    const sr_opts *o = s->o;
    sb_printf(&sb, "|v%d %d %d %d %d %d %d %d %d %d|", SEARCH_VERSION, o->max_kops, o->max_bops, o->max_kin, o->max_kout,
              o->max_kernels, o->max_grid_dims, o->max_blocks, o->prune, o->verify_tests);
    for (int i = 0; i < o->n_grid; i++) sb_printf(&sb, "g%d", o->grid[i]);
    for (int i = 0; i < o->n_forloop; i++) sb_printf(&sb, "f%d", o->forloop[i]);
    sb_printf(&sb, "s%llu l%g m%d o%llx", (unsigned long long)o->seed, o->slack, o->n_sm, (unsigned long long)s->ops);
    if (strcmp(s->dev.name, mg_device_default()->name)) sb_printf(&sb, " d%s", s->dev.name); /* another cost model */
    uint64_t h = sb.s ? sr_text_hash(sb.s) : 0;
    sb_free(&sb);
    return h;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    strbuf sb = {0};
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_printf(&sb, "%.*s", (int)n, buf);
    fclose(f);
    if (len) *len = sb.len;
    if (!sb.s) return base_strdup("");
    return sb_take(&sb);
}

/* Writes text to path atomically (temporary file, then rename). */
static int write_atomic(const char *path, const char *text) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    int ok = fputs(text, f) >= 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path)) {
        remove(tmp);
        return -1;
    }
    return 0;
}

/* A task's record: a line "task N done" (finished) or "task N partial" (stopped early), then
 * for each μGraph a line "found COST KOPS BOPS KERNELS AEQ FLOAT_ERROR", the verdict line, the
 * μGraph text and a line "%%end". The checkpoint's task files and the ranks' messages
 * (ranks.c) are such records. */
void sr_task_text(int64_t task, int finished, const sr_found *f, int n, strbuf *sb) {
    sb_printf(sb, "task %lld %s\n", (long long)task, finished ? "done" : "partial");
    for (int i = 0; i < n; i++)
        sb_printf(sb, "found %.17g %d %d %d %d %.17g\n%s\n%s%%%%end\n", f[i].cost_us, f[i].kops, f[i].bops,
                  f[i].kernels, f[i].aeq, f[i].float_error, f[i].verdict, f[i].text);
}

static void save_task(search *s, int64_t task, const sr_found *f, int n) {
    if (!s->o->ckpt_dir) return;
    strbuf sb = {0};
    sr_task_text(task, 1, f, n, &sb);
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint/task-%lld", s->o->ckpt_dir, (long long)task);
    if (sb.s) write_atomic(path, sb.s);
    sb_free(&sb);
}

int sr_task_parse(const char *text, int64_t *task, int *finished, sr_found **found, int *n_found) {
    long long t = -1;
    char how[16] = "";
    int n = 0, cap = 0, ok = sscanf(text, "task %lld %15s", &t, how) == 2 && t >= 0 &&
                             (!strcmp(how, "done") || !strcmp(how, "partial"));
    sr_found *f = NULL;
    const char *p = strchr(text, '\n');
    while (ok && p && p[1]) {
        p++;
        sr_found x;
        memset(&x, 0, sizeof x);
        if (sscanf(p, "found %lf %d %d %d %d %lf", &x.cost_us, &x.kops, &x.bops, &x.kernels, &x.aeq, &x.float_error) != 6) {
            ok = 0;
            break;
        }
        const char *v = strchr(p, '\n');
        const char *body = v ? strchr(v + 1, '\n') : NULL;
        const char *end = body ? strstr(body + 1, "%%end\n") : NULL;
        if (!end) {
            ok = 0;
            break;
        }
        snprintf(x.verdict, sizeof x.verdict, "%.*s", (int)(body - v - 1), v + 1);
        x.text = base_alloc((size_t)(end - body));
        if (!x.text) {
            ok = 0;
            break;
        }
        memcpy(x.text, body + 1, (size_t)(end - body - 1));
        x.text[end - body - 1] = 0;
        x.task = (int)t;
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            sr_found *nf = base_realloc(f, sizeof *nf * (size_t)cap);
            if (!nf) {
                base_free(x.text);
                ok = 0;
                break;
            }
            f = nf;
        }
        f[n++] = x;
        p = end + 5;
    }
    if (!ok) {
        for (int i = 0; i < n; i++) base_free(f[i].text);
        base_free(f);
        return -1;
    }
    *task = t, *finished = !strcmp(how, "done"), *found = f, *n_found = n;
    return 0;
}

/* Loads a finished task's record; 0 if present and well formed. */
static int load_task(search *s, int64_t task) {
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint/task-%lld", s->o->ckpt_dir, (long long)task);
    char *text = read_file(path, NULL);
    if (!text) return -1;
    int64_t t;
    int finished, n;
    sr_found *f;
    int bad = sr_task_parse(text, &t, &finished, &f, &n);
    base_free(text);
    if (bad) return -1;
    if (t != task || !finished) {
        for (int i = 0; i < n; i++) base_free(f[i].text);
        base_free(f);
        return -1;
    }
    s->task_found[task] = f, s->task_n_found[task] = n;
    return 0;
}

/* Creates DIR/checkpoint (DIR too, if need be). */
static mg_status checkpoint_dir(const char *dir, mg_ctx *ctx) {
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint", dir);
    mkdir(dir, 0777);
    if (mkdir(path, 0777) && errno != EEXIST)
        return ctx_err(ctx, MG_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    return MG_OK;
}

mg_status sr_open_checkpoint(search *s, mg_ctx *ctx, sr_result *r) {
    const char *dir = s->o->ckpt_dir;
    mg_status rc = checkpoint_dir(dir, ctx);
    if (rc) return rc;
    char path[4096], keytext[64];
    snprintf(keytext, sizeof keytext, "%016llx %lld\n", (unsigned long long)sr_search_key(s), (long long)s->n_tasks);
    snprintf(path, sizeof path, "%s/checkpoint/key", dir);
    char *old = read_file(path, NULL);
    if (old && strcmp(old, keytext)) {
        rc = ctx_err(ctx, MG_ERR_IO, "%s belongs to another search (other program or options); "
                     "remove %s/checkpoint or choose another --out", path, dir);
    } else if (!old && write_atomic(path, keytext)) {
        rc = ctx_err(ctx, MG_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    /* resume: a finished task's μGraphs are reloaded, the task is not run again */
    for (int64_t t = 0; !rc && old && t < s->n_tasks; t++)
        if (!load_task(s, t)) s->done[t] = 2, s->tasks_done++, r->tasks_resumed++;
    base_free(old);
    return rc;
}

/* ---- running the workers ---- */

int64_t sr_dispense(search *s, int rank) {
    int64_t t = -1;
    while (t < 0 && s->n_redo > 0) { /* a task of a rank presumed dead (ranks.c) */
        t = s->redo[--s->n_redo];
        if (s->done[t]) t = -1;
    }
    while (t < 0 && s->next_task < s->n_tasks)
        if (!s->done[s->next_task]) t = s->next_task++;
        else s->next_task++;
    if (t >= 0) s->given[t] = rank;
    return t;
}

/* The next task for a thread of s, or -1 when there is none left for it: the search stopped,
 * or every task is done or running. On rank 0 of several, a thread waits while tasks are out
 * on other ranks (one presumed dead gives its task back, ranks.c); on the others, the task
 * comes from rank 0. */
static int64_t next_task(search *s) {
    if (s->rank > 0) return sr_ranks_take(s);
    pthread_mutex_lock(&s->mu);
    int64_t t = -1;
    while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED) && (t = sr_dispense(s, 0)) < 0 && s->n_ranks > 1 &&
           s->tasks_done < s->n_tasks)
        pthread_cond_wait(&s->cv, &s->mu);
    s->busy += t >= 0;
    pthread_mutex_unlock(&s->mu);
    return t;
}

void sr_record(search *s, int64_t task, sr_found *f, int n, int finished) {
    pthread_mutex_lock(&s->mu);
    int keep = !s->done[task]; /* a task redone after its rank was presumed dead: the first record stands */
    if (keep) {
        for (int i = 0; i < s->task_n_found[task]; i++) base_free(s->task_found[task][i].text);
        base_free(s->task_found[task]);
        s->task_found[task] = f, s->task_n_found[task] = n;
        if (finished) s->done[task] = 1, s->tasks_done++;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    if (!keep) {
        for (int i = 0; i < n; i++) base_free(f[i].text);
        base_free(f);
    } else if (finished) {
        save_task(s, task, f, n);
    }
}

/* Takes the next task and runs it; 0 when there are none left or the search was stopped. */
static int take_task(worker *w) {
    search *s = w->s;
    int64_t task = next_task(s);
    if (task < 0) return 0;
    int64_t st0 = w->states;
    double t0 = base_now_s();
    run_task(w, task);
    if (getenv("MUGEN_SEARCH_TRACE"))
        fprintf(stderr, "task %lld: %lld states, %.2f s\n", (long long)task, (long long)(w->states - st0), base_now_s() - t0);
    int finished = !__atomic_load_n(&s->stop, __ATOMIC_RELAXED) && !w->oom;
    /* keep what was found, finished or not; only a finished task is checkpointed */
    sr_found *copy = w->n_found ? base_alloc(sizeof *copy * (size_t)w->n_found) : NULL;
    if (copy) memcpy(copy, w->found, sizeof *copy * (size_t)w->n_found);
    else
        for (int i = 0; i < w->n_found; i++) base_free(w->found[i].text);
    int n = copy ? w->n_found : 0;
    w->n_found = 0;
    if (s->rank > 0) sr_ranks_post(s, task, copy, n, finished);
    else sr_record(s, task, copy, n, finished);
    publish(w);
    if (s->rank == 0) { /* next_task counted it busy */
        pthread_mutex_lock(&s->mu);
        s->busy--;
        pthread_cond_broadcast(&s->cv); /* the helpers may be done */
        pthread_mutex_unlock(&s->mu);
    }
    return 1;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    ev_set_stop(&w->s->stop); /* one long evaluation (a full-size verification) ends at the time limit too */
    if (w == &w->s->workers[0]) sr_verify_lowered(w);
    while (take_task(w)) {
    }
    sr_help(w);
    publish(w); /* what it counted outside tasks too (the first worker counts the tasks) */
    ev_set_stop(NULL);
    __atomic_sub_fetch(&w->s->running, 1, __ATOMIC_RELEASE);
    return NULL;
}

void sr_counts_local(const search *s, int64_t c[SR_N_COUNTS]) {
    memset(c, 0, sizeof(int64_t) * SR_N_COUNTS);
    c[SR_C_STATES] = __atomic_load_n(&s->states, __ATOMIC_RELAXED);
    c[SR_C_PRUNED] = __atomic_load_n(&s->pruned, __ATOMIC_RELAXED);
    c[SR_C_CANDIDATES] = __atomic_load_n(&s->candidates, __ATOMIC_RELAXED);
    c[SR_C_FOUND] = __atomic_load_n(&s->found, __ATOMIC_RELAXED);
    c[SR_C_FIRST_US] = (int64_t)(s->first_s * 1e6);
    if (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE) > 0) return; /* the workers' own counts once they are done */
    for (int i = 0; i < s->n_workers; i++) {
        const worker *w = &s->workers[i];
        c[SR_C_REJECTED] += w->rejected, c[SR_C_DUPLICATES] += w->duplicates, c[SR_C_SCREENED] += w->screened;
        c[SR_C_DOMINATED] += w->dominated, c[SR_C_UNFIT] += w->unfit;
        c[SR_C_VERIFY_US] += (int64_t)(w->verify_s * 1e6);
    }
}

void sr_progress(const search *s, const int64_t c[SR_N_COUNTS], int final) {
    double t = base_now_s() - s->t0;
    fprintf(stderr, "%ssearch: %.0f s, %lld states (%.0f/s), %lld pruned, %lld candidates, %lld found, tasks %lld/%lld%s",
            isatty(2) ? "\r" : "", t, (long long)c[SR_C_STATES], t > 0 ? (double)c[SR_C_STATES] / t : 0.0,
            (long long)c[SR_C_PRUNED], (long long)c[SR_C_CANDIDATES], (long long)c[SR_C_FOUND],
            (long long)s->tasks_done, (long long)s->n_tasks, final || !isatty(2) ? "\n" : "  ");
    fflush(stderr);
}

/* Starts a thread for each of s's workers; if none starts, the caller's thread does the work
 * (and returns when it is done). The number of threads started. */
static int start_threads(search *s, pthread_t *th) {
    int nt = s->n_workers, started = 0;
    s->running = nt;
    for (int i = 0; i < nt; i++)
        if (!pthread_create(&th[i], NULL, worker_main, &s->workers[i])) started++;
        else break;
    __atomic_sub_fetch(&s->running, nt - started, __ATOMIC_RELAXED);
    if (!started) { /* no thread: the caller's thread does the work */
        s->running = 1;
        worker_main(&s->workers[0]);
    }
    return started;
}

int sr_check_stop(search *s) {
    const sr_opts *o = s->o;
    if ((o->stop && *o->stop) || (o->time_limit > 0 && base_now_s() - s->t0 > o->time_limit)) {
        pthread_mutex_lock(&s->mu);
        __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

/* Calls the options' progress callback (on the caller's thread) with s's counts; a nonzero
 * return is a stop request. */
static void call_progress(search *s) {
    mg_progress p = {0};
    pthread_mutex_lock(&s->mu);
    p.tasks_done = s->tasks_done, p.n_tasks = s->n_tasks;
    pthread_mutex_unlock(&s->mu);
    p.found = __atomic_load_n(&s->found, __ATOMIC_RELAXED);
    p.seconds = base_now_s() - s->t0;
    if (s->o->on_progress(s->o->on_progress_arg, &p)) {
        pthread_mutex_lock(&s->mu);
        __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
}

/* The main thread of a single process prints progress once a second while the workers run
 * (and calls the progress callback ten times a second), and ends the search at the time limit
 * or a stop request even while every worker verifies. */
static void watch(search *s) {
    double last = base_now_s(), last_cb = last;
    while (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE) > 0) {
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
        if (s->o->on_progress && base_now_s() - last_cb >= 0.1) last_cb = base_now_s(), call_progress(s);
        sr_check_stop(s);
        if (s->o->progress && base_now_s() - last >= 1.0) {
            int64_t c[SR_N_COUNTS];
            last = base_now_s();
            sr_counts_local(s, c);
            sr_progress(s, c, 0);
        }
    }
}

void sr_run_workers(search *s) {
    pthread_t th[SR_MAX_THREADS];
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->shrink_mu, NULL);
    pthread_mutex_init(&s->ref_mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    int started = start_threads(s, th);
    if (s->n_ranks > 1) sr_ranks_watch(s); /* ranks.c: the messages between the ranks */
    else watch(s);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    if (s->o->on_progress && s->n_ranks == 1 && started) call_progress(s); /* the final counts */
    if (s->n_ranks > 1) sr_ranks_finish(s);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->shrink_mu);
    pthread_mutex_destroy(&s->ref_mu);
    if (s->o->progress && s->rank == 0) {
        int64_t c[SR_N_COUNTS];
        sr_totals(s, c);
        sr_progress(s, c, 1);
    }
}
