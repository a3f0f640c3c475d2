/* run_faults: bad candidates stay contained (issue #4). In one process, mg_run is given a
 * candidate that does not compile, one that asks for too much shared memory (GPU only) and
 * one that faults, each planted with MUGEN_PLANT (docs/env.md); each must come back as an
 * error status naming the cause, and a correct run afterwards must still pass. Runs on the
 * GPU when there is one (make test-gpu), else on the C backend (tests/codegen/run.sh).
 * With PERSIST_PROGRAM (GPU only), that program lowered runs as one persistent launch
 * (mg_run_opts.persist) with a task that never finishes planted (MUGEN_PLANT=stall): the
 * watchdog must end it as an error naming the stalled task, with a fault planted, and then
 * cleanly, timed (graph replays) as well.
 * Usage: run-faults PROGRAM UGRAPH [PERSIST_PROGRAM]. Ends with "N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mugen.h"

static int n_pass, n_fail;

static void one(mg_program *p, mg_program *u, int persist, const char *plant, mg_status want, const char *needle) {
    mg_ctx *ctx = mg_ctx_new();
    mg_run_opts o = {.seed = 7, .reps = persist ? 3 : -1, .persist = persist};
    mg_run_report r;
    if (plant) setenv("MUGEN_PLANT", plant, 1);
    else unsetenv("MUGEN_PLANT");
    mg_status rc = mg_run(ctx, p, u, &o, &r);
    const char *msg = rc ? mg_ctx_error(ctx) : r.text;
    int ok = rc == want && (!needle || strstr(msg, needle)) && (want || r.ok);
    if (plant && !strcmp(plant, "smem") && rc == MG_OK && r.backend == MG_BACKEND_C) ok = 1; /* no limit in C */
    printf("%s%s planted %-8s -> %s: %.300s\n", ok ? "ok  " : "FAIL", persist == 3 ? " persistent queues," : persist == 2 ? " persistent static," : persist ? " persistent," : "",
           plant ? plant : "nothing", mg_status_name(rc), msg);
    ok ? n_pass++ : n_fail++;
    mg_ctx_free(ctx);
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: run-faults PROGRAM UGRAPH [PERSIST_PROGRAM]\n");
        return 2;
    }
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL, *u = NULL;
    if (mg_program_load(ctx, argv[1], &p) || mg_program_load(ctx, argv[2], &u)) {
        fprintf(stderr, "run-faults: %s\n", mg_ctx_error(ctx));
        return 1;
    }
    one(p, u, 0, "compile", MG_ERR_COMPILE, "planted");
    one(p, u, 0, "smem", MG_ERR_LAUNCH, "shared memory");
    one(p, u, 0, "fault", MG_ERR_LAUNCH, NULL);
    one(p, u, 0, NULL, MG_OK, "ok on");
    mg_program *q = NULL;
    if (argc == 4 && mg_program_load(ctx, argv[3], &q)) {
        fprintf(stderr, "run-faults: %s\n", mg_ctx_error(ctx));
        return 1;
    }
    if (q) {
        setenv("MUGEN_WATCHDOG_MS", "200", 1);
        one(q, NULL, 1, "stall", MG_ERR_LAUNCH, "stalled: task");
        one(q, NULL, 1, NULL, MG_OK, "ok on");
        one(q, NULL, 1, "fault", MG_ERR_LAUNCH, NULL);
        one(q, NULL, 1, NULL, MG_OK, "ok on");
        one(q, NULL, 2, "stall", MG_ERR_LAUNCH, "stalled: task"); /* the static schedule */
        one(q, NULL, 2, NULL, MG_OK, "ok on");
        one(q, NULL, 3, "stall", MG_ERR_LAUNCH, "stalled: task"); /* the scheduler and queues */
        one(q, NULL, 3, NULL, MG_OK, "ok on");
        one(q, NULL, 3, "fault", MG_ERR_LAUNCH, NULL);
        one(q, NULL, 3, NULL, MG_OK, "ok on");
        mg_program_free(q);
    }
    printf("%d passed, %d failed\n", n_pass, n_fail);
    mg_program_free(p), mg_program_free(u), mg_ctx_free(ctx);
    return n_fail != 0;
}
