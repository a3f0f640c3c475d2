/* The selector's decision time (docs/tuning.md "The selector"; target < 20 µs a call): loads a
 * weights file (data/selector/, or the argument) and times sl_choose over every B of its
 * range, many rounds; prints the mean per decision and the decisions at a few B.
 * usage: build/bench-select [WEIGHTS [all]]; with `all`, only 'B capacity' for every B of the
 * range (to compare with train.py --decisions: the same model in PyTorch). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "tune/selector.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "data/selector/rmsnorm_linear.txt";
    mg_ctx ctx = {{0}};
    sl_model *m = NULL;
    double t0 = now_s();
    if (sl_model_load(&ctx, path, &m)) {
        fprintf(stderr, "bench-select: %s\n", ctx.msg);
        return 1;
    }
    double load = now_s() - t0;
    int64_t lo, hi, cap = 0, sum = 0, n = 0;
    sl_model_range(m, &lo, &hi);
    if (argc > 2 && !strcmp(argv[2], "all")) {
        for (int64_t b = lo; b <= hi; b++)
            if (sl_choose(m, b, &cap) == MG_OK) printf("%" PRId64 " %" PRId64 "\n", b, cap);
        sl_model_free(m);
        return 0;
    }
    t0 = now_s();
    for (int r = 0; r < 200 || now_s() - t0 < 0.2; r++)
        for (int64_t b = lo; b <= hi; b++) sum += sl_choose(m, b, &cap) == MG_OK ? cap : 0, n++;
    double per = (now_s() - t0) / (double)n;
    printf("selector %s: B in [%" PRId64 ", %" PRId64 "], loaded in %.1f us; %.2f us a decision (mean of %" PRId64 "; checksum %" PRId64 ")\n",
           path, lo, hi, load * 1e6, per * 1e6, n, sum);
    static const int64_t at[] = {1, 7, 37, 100, 129, 200, 300, 511, 512};
    for (int i = 0; i < 9; i++)
        if (sl_choose(m, at[i], &cap) == MG_OK) printf("  B = %" PRId64 ": the variant for %" PRId64 " rows\n", at[i], cap);
    printf("%s\n", per < 20e-6 ? "within the 20 us target" : "PAST the 20 us target");
    sl_model_free(m);
    return 0;
}
