/* The selector's inference (src/tune/selector.c, docs/tuning.md "The selector"): tiny
 * hand-made weights whose decision is worked out by hand, and files it must refuse. */
#include <stdio.h>
#include <string.h>

#include "tune/selector.h"
#include "unit.h"

void test_selector(void);

/* Two classes, the variants for 4 and 8 rows, trained on B in [1, 8]. One Γ-block of width 1:
 * A1 picks feature 0 (log2 B); the nonlinear path is 0 (A2, b2 = 0: its layer norm gives
 * ln_b = 0, A3 = 0). Scores: 1.5 - log2 B for 4 rows, log2 B for 8: B = 1 takes 4, B = 2 to 4
 * take 8 (where the smallest that holds them is 4), B = 5 to 8 take 8, the only one that holds them. */
static const char tiny[] = "mugen-selector 1\nclasses 2\ncaps 4 8\nrange 1 8\nfeatures 4\nblocks 1\nwidth 1 1\n"
                           "mean 0 0 0 0\nstd 1 1 1 1\n"
                           "A1 1 0 0 0\nb1 0\nA2 0 0 0 0\nb2 0\nln_g 1\nln_b 0\nA3 0\nb3 0\n"
                           "Af -1 1\nbf 1.5 0\n";

static void refuses(const char *text, mg_status want, const char *msg) {
    mg_ctx ctx = {{0}};
    sl_model *m = (sl_model *)&ctx; /* must be set to NULL */
    mg_status rc = sl_model_parse(&ctx, text, strlen(text), "w.txt", &m);
    CHECK_MSG(rc == want && !m && strstr(ctx.msg, msg), "want %d '%s', got %d '%s'", want, msg, rc, ctx.msg);
}

void test_selector(void) {
    mg_ctx ctx = {{0}};
    sl_model *m = NULL;
    CHECK_MSG(sl_model_parse(&ctx, tiny, sizeof tiny - 1, "tiny", &m) == MG_OK && m, "%s", ctx.msg);
    if (!m) return;
    static const int64_t b[] = {1, 2, 4, 5, 8}, want[] = {4, 8, 8, 8, 8};
    for (int i = 0; i < 5; i++) {
        int64_t cap = 0;
        CHECK_MSG(sl_choose(m, b[i], &cap) == MG_OK && cap == want[i], "B = %lld: %lld, want %lld", (long long)b[i], (long long)cap,
                  (long long)want[i]);
    }
    float x[4];
    CHECK(sl_features(m, 2, x) == 4 && x[0] == 1.0f && x[1] == 0.25f && x[2] == 0.5f && x[3] == 0.25f);
    int64_t cap = -1;
    CHECK(sl_choose(m, 9, &cap) == MG_ERR_INVALID && cap == -1); /* outside [1, 8]: the caller's rule */
    CHECK(sl_choose(m, 0, &cap) == MG_ERR_INVALID && sl_choose(NULL, 3, &cap) == MG_ERR_INVALID);
    sl_model_free(m);
    sl_model_free(NULL);
    /* files it refuses, each by name */
    CHECK(sl_model_load(&ctx, "/nonexistent/selector.txt", &m) == MG_ERR_IO && !m && strstr(ctx.msg, "cannot read"));
    char bad[sizeof tiny + 64];
    refuses("mugen-selector 2\n", MG_ERR_PARSE, "expected '1'");
    refuses("", MG_ERR_PARSE, "expected 'mugen-selector'");
    refuses("mugen-selector 1\nclasses 2\ncaps 8 4\n", MG_ERR_PARSE, "caps: not increasing");
    refuses("mugen-selector 1\nclasses 1000\n", MG_ERR_LIMIT, "classes: 1000 is past the limit");
    snprintf(bad, sizeof bad, "%.*s", (int)(strstr(tiny, "Af") - tiny), tiny); /* cut before the last layer */
    refuses(bad, MG_ERR_PARSE, "expected 'Af'");
    snprintf(bad, sizeof bad, "%s 7\n", tiny);
    refuses(bad, MG_ERR_PARSE, "'7' after the last weights");
    snprintf(bad, sizeof bad, "%s", tiny);
    memcpy(strstr(bad, "bf 1.5"), "bf nan", 6);
    refuses(bad, MG_ERR_PARSE, "'nan' is not a finite number");
    snprintf(bad, sizeof bad, "%s", tiny);
    memcpy(strstr(bad, "features 4"), "features 5", 10);
    refuses(bad, MG_ERR_PARSE, "features: 5 is not an integer in [4, 4]");
}
