/* tune/selector: the learned choice of a variant for a call of B rows (issue #29 item 4,
 * docs/tuning.md "The selector"). A small Reformer (Γ-blocks, ../shared/papers/reformer.txt
 * §3) trained by bench/selector/train.py on measured times scores the variants of a program of
 * one symbolic dim; the run path (api.c mg_program_variant) runs the best-scored variant that
 * holds B, and the smallest that holds B outside the range it was trained on. */
#ifndef MG_SELECTOR_H
#define MG_SELECTOR_H

#include <stdint.h>

#include "mugen.h"

enum { SL_MAX_CLASSES = 64, SL_MAX_BLOCKS = 8, SL_MAX_WIDTH = 256 };

typedef struct sl_model sl_model;

/* Loads a weights file (format: docs/tuning.md "The selector"; data/selector/) into *out (free
 * with sl_model_free). MG_ERR_IO when it cannot be read, MG_ERR_PARSE naming the first bad or
 * missing entry (ctx's message), MG_ERR_LIMIT past SL_MAX_*, MG_ERR_NOMEM. */
mg_status sl_model_load(mg_ctx *ctx, const char *path, sl_model **out);
/* Parses weights from text (len bytes), as sl_model_load does; file names them in messages. */
mg_status sl_model_parse(mg_ctx *ctx, const char *text, size_t len, const char *file, sl_model **out);
void sl_model_free(sl_model *m);
/* The range of B m was trained on (sl_choose answers within it). */
void sl_model_range(const sl_model *m, int64_t *lo, int64_t *hi);

/* The features of a call of b rows (docs/tuning.md): log2 b, b / hi, and for each class's
 * capacity c, b / c where c >= b, else 0. x holds 2 + the model's classes; returns how many. */
int sl_features(const sl_model *m, int64_t b, float *x);

/* The capacity of the variant m chooses for a call of b rows: the highest-scored class whose
 * capacity holds b. MG_OK with *cap; MG_ERR_INVALID when b is outside the range m was trained
 * on, or no class holds b (the caller then runs the smallest capacity that holds b). */
mg_status sl_choose(const sl_model *m, int64_t b, int64_t *cap);

#endif
