/* ranks: one search spread over many processes with MPI (docs/search.md "Ranks"). Built with
 * MG_MPI (make mpi); without it there is one rank and only sr_totals and sr_ranks_agree do
 * anything.
 *
 * Every rank prepares the same search (program, e-graph, tasks) and runs its own threads.
 * Rank 0 hands out the tasks in order, one at a time as threads ask (dynamic balancing: a long
 * task occupies one thread, the others keep taking), and gathers each task's record (the
 * checkpoint's text, tasks.c) as it finishes, so the merge on rank 0 is the one process's
 * merge and the ranked list is the same. Only rank 0 reads and writes the checkpoint. Every
 * rank sends rank 0 its counts once a second (a heartbeat); a rank silent for
 * MUGEN_RANK_TIMEOUT seconds is presumed dead and its unfinished tasks are given to others
 * (`mpirun --enable-recovery` keeps the job alive when a process dies). Rank 0 too says it is
 * alive once a second; a rank that hears nothing from it for the timeout stops.
 *
 * Only the main thread of a rank calls MPI (MPI_THREAD_FUNNELED): the worker threads meet it
 * through s->mu, a queue of tasks received and a queue of records to send. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search_int.h"

static int the_rank = 0, the_n_ranks = 1;

int sr_rank(void) { return the_rank; }
int sr_n_ranks(void) { return the_n_ranks; }

#ifndef MG_MPI

mg_status sr_ranks_start(int *argc, char ***argv, mg_ctx *ctx) {
    (void)argc, (void)argv, (void)ctx;
    return MG_OK;
}
void sr_ranks_end(void) {}
mg_status sr_ranks_agree(search *s, mg_ctx *ctx, mg_status rc) {
    (void)s, (void)ctx;
    return rc;
}
int sr_ranks_bcast(int v) { return v; }
void sr_ranks_watch(search *s) { (void)s; }
void sr_ranks_finish(search *s) { (void)s; }
int64_t sr_ranks_take(search *s) {
    (void)s;
    return -1;
}
void sr_ranks_post(search *s, int64_t task, sr_found *f, int n, int finished) { sr_record(s, task, f, n, finished); }
void sr_totals(const search *s, int64_t c[SR_N_COUNTS]) { sr_counts_local(s, c); }
void sr_ranks_free(search *s) { (void)s; }

#else

#include <mpi.h>

enum { TAG_REQ = 1, TAG_TASKS, TAG_DONE, TAG_COUNTS, TAG_FINAL, TAG_STOP, TAG_ALIVE };
enum { R_RUNNING, R_FINISHED, R_DEAD };

/* What the ranks' messages need (s->rk).
 * Rank 0: per rank, the tasks it asked for and was not given yet, its last counts, when it was
 * last heard from and its state (R_*); whether STOP went out.
 * Rank > 0: the tasks received and not taken (inbox, a queue), whether a request is out and
 * whether rank 0 said no task is left; threads waiting; the records to send (out). */
typedef struct post {
    char *text;
} post;
struct sr_ranks {
    int64_t *want;
    int64_t (*counts)[SR_N_COUNTS];
    double *heard;
    uint8_t *state;
    int stop_sent;
    int64_t *inbox;
    int head, n_inbox, asked, no_more, waiting;
    post *out;
    int n_out, cap_out;
    double heard0; /* when rank 0 was last heard from */
    int die_at;    /* MUGEN_TEST_RANK_EXIT: this rank exits as it takes its die_at-th task (tests) */
    int taken;
};

mg_status sr_ranks_start(int *argc, char ***argv, mg_ctx *ctx) {
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return ctx_err(ctx, MG_ERR_IO, "MPI_Init_thread failed");
    if (!inited && provided < MPI_THREAD_FUNNELED)
        return ctx_err(ctx, MG_ERR_UNSUPPORTED, "this MPI does not allow threads (MPI_THREAD_FUNNELED)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* a dead rank is an error code, not an abort */
    MPI_Comm_rank(MPI_COMM_WORLD, &the_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &the_n_ranks);
    return MG_OK;
}

void sr_ranks_end(void) {
    int inited = 0, fin = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&fin);
    if (inited && !fin) MPI_Finalize();
}

int sr_ranks_bcast(int v) {
    if (the_n_ranks > 1) MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

static double timeout_s(void) {
    const char *e = getenv("MUGEN_RANK_TIMEOUT");
    double t = e ? atof(e) : 0;
    return t > 0 ? t : 30;
}

mg_status sr_ranks_agree(search *s, mg_ctx *ctx, mg_status rc) {
    if (s->n_ranks == 1) return rc;
    int n = the_n_ranks;
    int64_t mine[3] = {rc ? 2 : s->stop ? 1 : 0, s->n_tasks, (int64_t)(rc ? 0 : sr_search_key(s))};
    int64_t *all = base_calloc((size_t)n * 3, sizeof *all);
    struct sr_ranks *rk = base_calloc(1, sizeof *rk);
    if (!all || !rk || MPI_Allgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, MPI_COMM_WORLD) != MPI_SUCCESS) {
        base_free(all), base_free(rk);
        return rc ? rc : ctx_err(ctx, MG_ERR_IO, "rank %d: the ranks could not agree (out of memory or MPI failed)", the_rank);
    }
    s->rk = rk;
    int stopped = 0;
    for (int r = 0; r < n && !rc; r++) {
        if (all[3 * r] == 2)
            rc = ctx_err(ctx, MG_ERR_INVALID, "rank %d failed before the search (its message says why)", r);
        stopped |= all[3 * r] == 1;
    }
    /* a rank whose time limit ran out while it prepared may not have counted its tasks: then
     * all stop (what the others prepared is not compared) */
    for (int r = 0; r < n && !rc && !stopped; r++)
        if (all[3 * r + 1] != all[1] || all[3 * r + 2] != all[2])
            rc = ctx_err(ctx, MG_ERR_INVALID, "rank %d prepared another search than rank 0 (%lld tasks, against "
                         "%lld): every rank must run the same mugen on the same program and options", r,
                         (long long)all[3 * r + 1], (long long)all[1]);
    if (stopped) s->stop = 1;
    base_free(all);
    if (rc) return rc;
    if (s->rank > 0 && s->n_workers) { /* every rank counted the tasks: rank 0's count of that work stands for all */
        worker *w = &s->workers[0];
        w->states = w->pruned = w->candidates = 0;
        memset(w->published, 0, sizeof w->published);
        s->states = s->pruned = s->candidates = 0;
    }
    rk->want = base_calloc((size_t)n, sizeof *rk->want);
    rk->counts = base_calloc((size_t)n, sizeof *rk->counts);
    rk->heard = base_calloc((size_t)n, sizeof *rk->heard);
    rk->state = base_calloc((size_t)n, 1);
    rk->inbox = base_calloc((size_t)s->n_workers + 1, sizeof *rk->inbox);
    if (!rk->want || !rk->counts || !rk->heard || !rk->state || !rk->inbox)
        return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    double now = base_now_s();
    for (int r = 0; r < n; r++) rk->heard[r] = now;
    rk->heard0 = now;
    rk->die_at = -1;
    const char *die = getenv("MUGEN_TEST_RANK_EXIT"); /* "R:K": rank R exits as it takes its K-th task */
    int dr, dk;
    if (die && sscanf(die, "%d:%d", &dr, &dk) == 2 && dr == s->rank && dr > 0) rk->die_at = dk;
    return MG_OK;
}

void sr_ranks_free(search *s) {
    struct sr_ranks *rk = s->rk;
    if (!rk) return;
    for (int i = 0; i < rk->n_out; i++) base_free(rk->out[i].text);
    base_free(rk->out), base_free(rk->inbox), base_free(rk->want), base_free(rk->counts);
    base_free(rk->heard), base_free(rk->state), base_free(rk);
    s->rk = NULL;
}

void sr_totals(const search *s, int64_t c[SR_N_COUNTS]) {
    sr_counts_local(s, c);
    if (!s->rk || s->rank) return;
    for (int r = 1; r < s->n_ranks; r++)
        for (int k = 0; k < SR_N_COUNTS; k++) {
            int64_t v = s->rk->counts[r][k];
            if (k != SR_C_FIRST_US) c[k] += v;
            else if (v > 0 && (c[k] == 0 || v < c[k])) c[k] = v; /* the earliest rank's */
        }
}

/* ---- rank > 0: threads take tasks from the inbox, the main thread talks to rank 0 ---- */

int64_t sr_ranks_take(search *s) {
    struct sr_ranks *rk = s->rk;
    pthread_mutex_lock(&s->mu);
    rk->waiting++;
    while (!rk->n_inbox && !rk->no_more && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
        pthread_cond_wait(&s->cv, &s->mu);
    int64_t t = -1;
    if (rk->n_inbox && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
        t = rk->inbox[rk->head];
        rk->head = (rk->head + 1) % (s->n_workers + 1), rk->n_inbox--;
        if (++rk->taken == rk->die_at) {
            fprintf(stderr, "mugen: rank %d exits with task %lld (MUGEN_TEST_RANK_EXIT)\n", s->rank, (long long)t);
            _exit(3); /* the test of a rank that dies with a task */
        }
    }
    rk->waiting--;
    pthread_mutex_unlock(&s->mu);
    return t;
}

void sr_ranks_post(search *s, int64_t task, sr_found *f, int n, int finished) {
    struct sr_ranks *rk = s->rk;
    strbuf sb = {0};
    sr_task_text(task, finished, f, n, &sb);
    for (int i = 0; i < n; i++) base_free(f[i].text);
    base_free(f);
    char *text = sb_take(&sb);
    if (!text) return; /* out of memory: the task's record is lost, as it would be in a dead rank */
    pthread_mutex_lock(&s->mu);
    if (rk->n_out == rk->cap_out) {
        int cap = rk->cap_out ? 2 * rk->cap_out : 8;
        post *p = base_realloc(rk->out, sizeof *p * (size_t)cap);
        if (p) rk->out = p, rk->cap_out = cap;
    }
    if (rk->n_out < rk->cap_out) rk->out[rk->n_out++].text = text, text = NULL;
    pthread_mutex_unlock(&s->mu);
    base_free(text);
}

/* Rank > 0: sends the queued records to rank 0. */
static void send_posts(search *s) {
    struct sr_ranks *rk = s->rk;
    pthread_mutex_lock(&s->mu);
    post *out = rk->out;
    int n = rk->n_out;
    rk->out = NULL, rk->n_out = rk->cap_out = 0;
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < n; i++) {
        MPI_Send(out[i].text, (int)strlen(out[i].text) + 1, MPI_CHAR, 0, TAG_DONE, MPI_COMM_WORLD);
        base_free(out[i].text);
    }
    base_free(out);
}

static void send_counts(search *s, int tag) {
    int64_t c[SR_N_COUNTS];
    sr_counts_local(s, c);
    MPI_Send(c, SR_N_COUNTS, MPI_INT64_T, 0, tag, MPI_COMM_WORLD);
}

/* Rank > 0: receives what rank 0 sent (tasks, stop, alive). */
static int receive_from_root(search *s) {
    struct sr_ranks *rk = s->rk;
    int got = 0, flag = 1;
    MPI_Status st;
    while (MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && flag) {
        int n = 0;
        MPI_Get_count(&st, MPI_INT64_T, &n);
        int64_t ids[SR_MAX_THREADS + 1];
        if (n < 0 || n > SR_MAX_THREADS + 1) n = 0;
        MPI_Recv(ids, n, MPI_INT64_T, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        got = 1;
        rk->heard0 = base_now_s();
        pthread_mutex_lock(&s->mu);
        if (st.MPI_TAG == TAG_TASKS) {
            for (int i = 0; i < n && rk->n_inbox <= s->n_workers; i++)
                rk->inbox[(rk->head + rk->n_inbox++) % (s->n_workers + 1)] = ids[i];
            if (!n) rk->no_more = 1;
            rk->asked = 0;
        } else if (st.MPI_TAG == TAG_STOP) {
            __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
        }
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
    }
    return got;
}

/* Rank > 0's main thread while its workers run. */
static void watch_worker(search *s) {
    struct sr_ranks *rk = s->rk;
    double last = 0;
    while (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE) > 0) {
        int busy = receive_from_root(s);
        sr_check_stop(s);
        if (base_now_s() - rk->heard0 > timeout_s()) { /* rank 0 is gone: stop (its checkpoint resumes) */
            fprintf(stderr, "mugen: rank %d: nothing from rank 0 for %.0f s; stopping\n", s->rank, timeout_s());
            pthread_mutex_lock(&s->mu);
            __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
        }
        pthread_mutex_lock(&s->mu);
        int64_t want = rk->waiting - rk->n_inbox;
        int ask = !rk->asked && !rk->no_more && want > 0 && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED);
        if (ask) rk->asked = 1;
        pthread_mutex_unlock(&s->mu);
        if (ask) MPI_Send(&want, 1, MPI_INT64_T, 0, TAG_REQ, MPI_COMM_WORLD);
        send_posts(s);
        if (base_now_s() - last >= 1.0) {
            last = base_now_s();
            send_counts(s, TAG_COUNTS);
        }
        if (!busy && !ask) nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
}

/* ---- rank 0: hands out tasks, gathers records ---- */

/* Rank 0: rank r's unfinished tasks go back to the others, lowest first. The number. */
static int take_back(search *s, int r) {
    int n = 0;
    pthread_mutex_lock(&s->mu);
    for (int64_t t = s->n_tasks - 1; t >= 0; t--) /* lowest task last: given out first */
        if (s->given[t] == r && !s->done[t]) s->redo[s->n_redo++] = t, s->given[t] = -1, n++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* Rank 0: task's record from rank `from`. */
static void take_record(search *s, const char *text, int from) {
    int64_t task;
    int finished, n;
    sr_found *f;
    if (sr_task_parse(text, &task, &finished, &f, &n) || task >= s->n_tasks) {
        fprintf(stderr, "mugen: rank 0: a malformed record from rank %d was dropped\n", from);
        return;
    }
    sr_record(s, task, f, n, finished);
}

/* Rank 0: receives every message waiting. 1 if there was one. */
static int receive_at_root(search *s) {
    struct sr_ranks *rk = s->rk;
    int got = 0, flag = 1;
    MPI_Status st;
    while (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && flag) {
        int from = st.MPI_SOURCE, tag = st.MPI_TAG, n = 0;
        got = 1;
        if (tag == TAG_DONE) {
            MPI_Get_count(&st, MPI_CHAR, &n);
            char *text = base_alloc((size_t)n + 1);
            if (!text) { /* out of memory: its task stays given; the rank's death or the end redoes it */
                char c;
                MPI_Recv(&c, 0, MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                continue;
            }
            MPI_Recv(text, n, MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            text[n] = 0;
            if (rk->state[from] != R_DEAD) take_record(s, text, from);
            base_free(text);
        } else if (tag == TAG_REQ) {
            int64_t k = 0;
            MPI_Recv(&k, 1, MPI_INT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rk->want[from] = k > 0 && k <= SR_MAX_THREADS ? k : 1;
        } else {
            int64_t c[SR_N_COUNTS];
            MPI_Recv(c, SR_N_COUNTS, MPI_INT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (tag == TAG_COUNTS || tag == TAG_FINAL) memcpy(rk->counts[from], c, sizeof c);
            if (tag == TAG_FINAL && rk->state[from] == R_RUNNING) {
                rk->state[from] = R_FINISHED;
                take_back(s, from); /* a record it could not send (out of memory) is redone */
            }
        }
        rk->heard[from] = base_now_s();
    }
    return got;
}

/* Rank 0: answers the requests it can: tasks, or none left (every task done, or stopped). */
static void serve(search *s) {
    struct sr_ranks *rk = s->rk;
    for (int r = 1; r < s->n_ranks; r++) {
        if (!rk->want[r] || rk->state[r] != R_RUNNING) continue;
        int64_t ids[SR_MAX_THREADS];
        int n = 0;
        pthread_mutex_lock(&s->mu);
        int stop = __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
        while (!stop && n < rk->want[r] && (ids[n] = sr_dispense(s, r)) >= 0) n++;
        int none = stop || s->tasks_done >= s->n_tasks;
        pthread_mutex_unlock(&s->mu);
        if (!n && !none) continue; /* the last tasks are out: the request waits for a rank's death or the end */
        MPI_Send(ids, n, MPI_INT64_T, r, TAG_TASKS, MPI_COMM_WORLD);
        rk->want[r] = 0;
    }
}

/* Rank 0: a rank silent for the timeout is presumed dead; its unfinished tasks go to others. */
static void bury(search *s) {
    struct sr_ranks *rk = s->rk;
    double now = base_now_s(), limit = timeout_s();
    for (int r = 1; r < s->n_ranks; r++) {
        if (rk->state[r] != R_RUNNING || now - rk->heard[r] <= limit) continue;
        rk->state[r] = R_DEAD;
        rk->want[r] = 0;
        memset(rk->counts[r], 0, sizeof rk->counts[r]);
        int n = take_back(s, r);
        fprintf(stderr, "mugen: rank %d silent for %.0f s, presumed dead: its %d unfinished task%s go%s to "
                "the other ranks\n", r, limit, n, n == 1 ? "" : "s", n == 1 ? "es" : "");
    }
}

/* Rank 0: at a stop, tells every running rank once. */
static void spread_stop(search *s) {
    struct sr_ranks *rk = s->rk;
    if (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED) || rk->stop_sent) return;
    rk->stop_sent = 1;
    for (int r = 1; r < s->n_ranks; r++)
        if (rk->state[r] == R_RUNNING) MPI_Send(NULL, 0, MPI_INT64_T, r, TAG_STOP, MPI_COMM_WORLD);
}

static int others_running(const search *s) {
    for (int r = 1; r < s->n_ranks; r++)
        if (s->rk->state[r] == R_RUNNING) return 1;
    return 0;
}

/* Rank 0's main thread: until its workers and every other rank are done. */
static void watch_root(search *s) {
    struct sr_ranks *rk = s->rk;
    double last = base_now_s(), alive = 0;
    while (__atomic_load_n(&s->running, __ATOMIC_ACQUIRE) > 0 || others_running(s)) {
        int busy = receive_at_root(s);
        sr_check_stop(s);
        if (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED) && s->tasks_done >= s->n_tasks) {
            pthread_mutex_lock(&s->mu); /* every task done: waiting threads end */
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
        }
        spread_stop(s);
        serve(s);
        bury(s);
        if (base_now_s() - alive >= 1.0) {
            alive = base_now_s();
            for (int r = 1; r < s->n_ranks; r++)
                if (rk->state[r] == R_RUNNING) MPI_Send(NULL, 0, MPI_INT64_T, r, TAG_ALIVE, MPI_COMM_WORLD);
        }
        if (s->o->progress && base_now_s() - last >= 1.0) {
            int64_t c[SR_N_COUNTS];
            last = base_now_s();
            sr_totals(s, c);
            sr_progress(s, c, 0);
        }
        if (!busy) nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
}

void sr_ranks_watch(search *s) {
    if (s->rank == 0) watch_root(s);
    else watch_worker(s);
}

void sr_ranks_finish(search *s) {
    if (s->rank == 0) return; /* watch_root waited for every rank */
    send_posts(s);
    send_counts(s, TAG_FINAL);
}

#endif
