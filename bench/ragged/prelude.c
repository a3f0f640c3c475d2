/* bench/ragged/prelude: the host prelude of a ragged batch (docs/ragged.md, "Storage"), timed
 * on this CPU: for each length file and batch, the packed offsets of every per-sequence
 * tensor of the encoder layer (examples/ragged/encoder_b*.mu: rows [L, 512], heads [8, L, 64],
 * scores [8, L, L], FFN rows [L, 2048]; tiles of 64 rows padded where a kernel tiles them) and
 * the work items of attention's query tiles (64 and 128 rows, longest sequences first). Median
 * of 2001 runs after 100 warm-up runs.
 * Usage: bench-prelude LENGTHS_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/ir.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "../shared/data/lengths";
    static const char *files[] = {"cola", "mnli", "race", "squad"};
    printf("| file | batch | tokens | offsets of 5 tensor classes + 2 work tables (µs, median) | work items (64 / 128 rows) |\n");
    printf("|---|---|---|---|---|\n");
    for (int f = 0; f < 4; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.txt", dir, files[f]);
        FILE *fp = fopen(path, "r");
        if (!fp) {
            fprintf(stderr, "bench-prelude: cannot open %s\n", path);
            return 1;
        }
        int64_t len[128];
        int n = 0;
        long long v;
        while (n < 128 && fscanf(fp, "%lld", &v) == 1) len[n++] = v;
        fclose(fp);
        for (int bi = 0; bi < 2; bi++) {
            int B = bi ? 128 : 32;
            if (n < B) return 1;
            const int64_t *lens[1] = {len};
            /* the layer's per-sequence shapes: [B, L, 512], [B, 8, L, 64], [B, 8, L, L], [B, L, 2048] */
            ir_shape s[4] = {{.ndim = 3, .rag = {1, 1}, .d = {B, 512, 512}},
                             {.ndim = 4, .rag = {1, 0, 1}, .d = {B, 8, 512, 64}},
                             {.ndim = 4, .rag = {1, 0, 1, 1}, .d = {B, 8, 512, 512}},
                             {.ndim = 3, .rag = {1, 1}, .d = {B, 512, 2048}}};
            int64_t off[5][129], tok = 0;
            int32_t items[2][2 * 1024];
            int64_t ni[2] = {0, 0};
            double t[2001];
            for (int r = -100; r < 2001; r++) {
                double t0 = now();
                for (int c = 0; c < 4; c++) ir_packed_offsets(&s[c], lens, 1, off[c]);
                ir_packed_offsets(&s[1], lens, 64, off[4]); /* heads padded to 64-row tiles */
                ni[0] = ir_work_items(len, B, 64, items[0], 1024);
                ni[1] = ir_work_items(len, B, 128, items[1], 1024);
                if (r >= 0) t[r] = (now() - t0) * 1e6;
            }
            qsort(t, 2001, sizeof t[0], cmp);
            for (int b = 0; b < B; b++) tok += len[b];
            printf("| %s | %d | %lld | %.2f | %lld / %lld |\n", files[f], B, (long long)tok, t[1000], (long long)ni[0], (long long)ni[1]);
        }
    }
    return 0;
}
