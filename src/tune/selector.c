/* tune/selector: a Reformer over (B, variant) features that chooses the variant a call of B
 * rows runs (docs/tuning.md "The selector"; selector.h). Inference only: weights come from
 * bench/selector/train.py as text; this file reads them and evaluates
 *   x0 = (features - mean) / std                                   (Υ: z-score, Reformer §4)
 *   x_l = ReLU(A1 x + b1 + A3 T(x) + b3), T(x) = LN(ReLU(A2 x + b2))  (Γ-block, eq. 1)
 *   scores = Af x_L + bf                      (Ξ without its softmax: the argmax is the same)
 * and takes the best-scored class whose capacity holds B. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "selector.h"

typedef struct sl_block {
    int d_in, d_mid, d_out;
    const float *a1, *b1, *a2, *b2, *lg, *lb, *a3, *b3; /* into sl_model.w; a*: [out][in] */
} sl_block;

/* Invariant: n_feat == 2 + n_classes; each block's d_in is the previous block's d_out (the
 * first: n_feat); every width <= SL_MAX_WIDTH; w holds every array the pointers name. */
struct sl_model {
    int n_classes, n_feat, n_blocks;
    int64_t caps[SL_MAX_CLASSES], lo, hi; /* class i runs the variant for caps[i] rows; trained on [lo, hi] */
    const float *mean, *std, *af, *bf;
    sl_block blk[SL_MAX_BLOCKS];
    float *w;
    size_t n_w, cap_w;
};

void sl_model_free(sl_model *m) {
    if (!m) return;
    base_free(m->w);
    base_free(m);
}

void sl_model_range(const sl_model *m, int64_t *lo, int64_t *hi) { *lo = m->lo, *hi = m->hi; }

/* ---- reading ---- */

typedef struct rd {
    const char *p, *end, *file;
    mg_ctx *ctx;
    mg_status rc;
} rd;

/* The next whitespace-separated word into buf; 0 at the end of the text. */
static int word(rd *r, char *buf, size_t n) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
    size_t k = 0;
    while (r->p < r->end && !(*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) {
        if (k + 1 < n) buf[k++] = *r->p;
        r->p++;
    }
    buf[k] = 0;
    return k > 0;
}

static void expect(rd *r, const char *key) {
    char w[64];
    if (r->rc) return;
    if (!word(r, w, sizeof w) || strcmp(w, key))
        r->rc = ctx_err(r->ctx, MG_ERR_PARSE, "%s: expected '%s', found '%s'", r->file, key, w);
}

static double number(rd *r, const char *what) {
    char w[64], *e;
    if (r->rc) return 0;
    if (!word(r, w, sizeof w)) return r->rc = ctx_err(r->ctx, MG_ERR_PARSE, "%s: %s: missing number", r->file, what), 0;
    errno = 0;
    double v = strtod(w, &e);
    if (*e || errno || !isfinite(v)) r->rc = ctx_err(r->ctx, MG_ERR_PARSE, "%s: %s: '%s' is not a finite number", r->file, what, w);
    return v;
}

/* An integer in [lo, hi] (MG_ERR_LIMIT above hi where limit). */
static int64_t count(rd *r, const char *what, int64_t lo, int64_t hi, int limit) {
    double v = number(r, what);
    if (r->rc) return lo;
    if (v != floor(v) || v < (double)lo || (v > (double)hi && !limit))
        return r->rc = ctx_err(r->ctx, MG_ERR_PARSE, "%s: %s: %g is not an integer in [%lld, %lld]", r->file, what, v, (long long)lo,
                               (long long)hi), lo;
    if (v > (double)hi) return r->rc = ctx_err(r->ctx, MG_ERR_LIMIT, "%s: %s: %g is past the limit %lld", r->file, what, v, (long long)hi), lo;
    return (int64_t)v;
}

/* `key` then n numbers into the model's storage; their offset in m->w. */
static size_t array(rd *r, sl_model *m, const char *key, size_t n) {
    expect(r, key);
    size_t at = m->n_w;
    if (r->rc) return 0;
    if (m->n_w + n > m->cap_w) {
        r->rc = ctx_err(r->ctx, MG_ERR_LIMIT, "%s: %s: more weights than the file's sizes allow", r->file, key);
        return 0;
    }
    for (size_t i = 0; i < n && !r->rc; i++) m->w[m->n_w++] = (float)number(r, key);
    return at;
}

/* Reads the header: classes and their capacities, the range, the widths. */
static void header(rd *r, sl_model *m) {
    expect(r, "mugen-selector"), expect(r, "1"), expect(r, "classes");
    m->n_classes = (int)count(r, "classes", 1, SL_MAX_CLASSES, 1);
    expect(r, "caps");
    for (int i = 0; i < m->n_classes && !r->rc; i++) {
        m->caps[i] = count(r, "caps", 1, INT32_MAX, 0);
        if (!r->rc && i && m->caps[i] <= m->caps[i - 1]) r->rc = ctx_err(r->ctx, MG_ERR_PARSE, "%s: caps: not increasing", r->file);
    }
    expect(r, "range");
    m->lo = count(r, "range", 1, INT32_MAX, 0), m->hi = count(r, "range", m->lo, INT32_MAX, 0);
    m->n_feat = 2 + m->n_classes;
    expect(r, "features");
    if (!r->rc && count(r, "features", m->n_feat, m->n_feat, 0) != m->n_feat) return;
    expect(r, "blocks");
    m->n_blocks = (int)count(r, "blocks", 1, SL_MAX_BLOCKS, 1);
    m->cap_w = 2 * (size_t)m->n_feat;
    for (int l = 0, d = m->n_feat; l < m->n_blocks && !r->rc; l++) { /* the widths come first: the storage is sized once */
        sl_block *b = &m->blk[l];
        expect(r, "width");
        b->d_in = d, b->d_mid = (int)count(r, "width", 1, SL_MAX_WIDTH, 1), b->d_out = (int)count(r, "width", 1, SL_MAX_WIDTH, 1);
        d = b->d_out;
        m->cap_w += (size_t)b->d_mid * (size_t)(b->d_in + 3) + (size_t)b->d_out * (size_t)(b->d_in + b->d_mid + 2);
    }
    if (!r->rc) m->cap_w += (size_t)m->n_classes * (size_t)(m->blk[m->n_blocks - 1].d_out + 1);
}

mg_status sl_model_parse(mg_ctx *ctx, const char *text, size_t len, const char *file, sl_model **out) {
    *out = NULL;
    rd r = {text, text + len, file ? file : "<selector>", ctx, MG_OK};
    sl_model *m = base_calloc(1, sizeof *m);
    if (!m) return ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    header(&r, m);
    if (!r.rc && !(m->w = base_alloc(m->cap_w * sizeof *m->w))) r.rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    size_t o_mean = array(&r, m, "mean", (size_t)m->n_feat), o_std = array(&r, m, "std", (size_t)m->n_feat);
    size_t ob[SL_MAX_BLOCKS][8];
    for (int l = 0; l < m->n_blocks && !r.rc; l++) {
        const sl_block *b = &m->blk[l];
        size_t i = (size_t)b->d_in, h = (size_t)b->d_mid, o = (size_t)b->d_out;
        ob[l][0] = array(&r, m, "A1", o * i), ob[l][1] = array(&r, m, "b1", o);
        ob[l][2] = array(&r, m, "A2", h * i), ob[l][3] = array(&r, m, "b2", h);
        ob[l][4] = array(&r, m, "ln_g", h), ob[l][5] = array(&r, m, "ln_b", h);
        ob[l][6] = array(&r, m, "A3", o * h), ob[l][7] = array(&r, m, "b3", o);
    }
    size_t last = m->n_blocks ? (size_t)m->blk[m->n_blocks - 1].d_out : 0;
    size_t o_af = array(&r, m, "Af", (size_t)m->n_classes * last), o_bf = array(&r, m, "bf", (size_t)m->n_classes);
    char w[64];
    if (!r.rc && word(&r, w, sizeof w)) r.rc = ctx_err(ctx, MG_ERR_PARSE, "%s: '%s' after the last weights", r.file, w);
    if (r.rc) {
        sl_model_free(m);
        return r.rc;
    }
    m->mean = m->w + o_mean, m->std = m->w + o_std, m->af = m->w + o_af, m->bf = m->w + o_bf;
    for (int l = 0; l < m->n_blocks; l++) {
        sl_block *b = &m->blk[l];
        b->a1 = m->w + ob[l][0], b->b1 = m->w + ob[l][1], b->a2 = m->w + ob[l][2], b->b2 = m->w + ob[l][3];
        b->lg = m->w + ob[l][4], b->lb = m->w + ob[l][5], b->a3 = m->w + ob[l][6], b->b3 = m->w + ob[l][7];
    }
    *out = m;
    return MG_OK;
}

mg_status sl_model_load(mg_ctx *ctx, const char *path, sl_model **out) {
    *out = NULL;
    if (!path) return ctx_err(ctx, MG_ERR_INVALID, "sl_model_load: NULL path");
    FILE *f = fopen(path, "rb");
    if (!f) return ctx_err(ctx, MG_ERR_IO, "cannot read the selector's weights '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = base_alloc(cap);
    mg_status rc = buf ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    while (!rc) {
        if (n == cap) {
            char *nb = cap < ((size_t)64 << 20) ? base_realloc(buf, cap * 2) : NULL;
            if (!nb) rc = ctx_err(ctx, MG_ERR_LIMIT, "%s: larger than 64 MB", path);
            else buf = nb, cap *= 2;
            if (rc) break;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (!k) break;
    }
    if (!rc && ferror(f)) rc = ctx_err(ctx, MG_ERR_IO, "cannot read '%s'", path);
    fclose(f);
    if (!rc) rc = sl_model_parse(ctx, buf, n, path, out);
    base_free(buf);
    return rc;
}

/* ---- inference ---- */

int sl_features(const sl_model *m, int64_t b, float *x) {
    x[0] = (float)log2((double)b), x[1] = (float)((double)b / (double)m->hi);
    for (int i = 0; i < m->n_classes; i++) x[2 + i] = m->caps[i] >= b ? (float)((double)b / (double)m->caps[i]) : 0.0f;
    return m->n_feat;
}

/* y[o] = bias[o] + sum_i a[o][i] x[i] */
static void affine(const float *a, const float *bias, const float *x, int n_in, int n_out, float *y) {
    for (int o = 0; o < n_out; o++) {
        float s = bias[o];
        for (int i = 0; i < n_in; i++) s += a[(size_t)o * (size_t)n_in + (size_t)i] * x[i];
        y[o] = s;
    }
}

/* One Γ-block (Reformer eq. 1): x (d_in) -> y (d_out). */
static void gamma_block(const sl_block *b, const float *x, float *y) {
    float h[SL_MAX_WIDTH], t[SL_MAX_WIDTH];
    affine(b->a2, b->b2, x, b->d_in, b->d_mid, h);
    double mean = 0, var = 0;
    for (int i = 0; i < b->d_mid; i++) h[i] = h[i] > 0 ? h[i] : 0, mean += h[i];
    mean /= b->d_mid;
    for (int i = 0; i < b->d_mid; i++) var += (h[i] - mean) * (h[i] - mean);
    float inv = (float)(1.0 / sqrt(var / b->d_mid + 1e-5)); /* layer norm, torch's eps */
    for (int i = 0; i < b->d_mid; i++) h[i] = (float)(h[i] - mean) * inv * b->lg[i] + b->lb[i];
    affine(b->a1, b->b1, x, b->d_in, b->d_out, y);
    affine(b->a3, b->b3, h, b->d_mid, b->d_out, t);
    for (int o = 0; o < b->d_out; o++) y[o] = y[o] + t[o] > 0 ? y[o] + t[o] : 0;
}

mg_status sl_choose(const sl_model *m, int64_t b, int64_t *cap) {
    if (!m || !cap || b < m->lo || b > m->hi) return MG_ERR_INVALID;
    float x[SL_MAX_WIDTH > SL_MAX_CLASSES + 2 ? SL_MAX_WIDTH : SL_MAX_CLASSES + 2], y[SL_MAX_WIDTH], s[SL_MAX_CLASSES];
    sl_features(m, b, x);
    for (int i = 0; i < m->n_feat; i++) x[i] = (x[i] - m->mean[i]) / (m->std[i] > 0 ? m->std[i] : 1.0f);
    for (int l = 0; l < m->n_blocks; l++) {
        gamma_block(&m->blk[l], x, y);
        memcpy(x, y, (size_t)m->blk[l].d_out * sizeof *y);
    }
    affine(m->af, m->bf, x, m->blk[m->n_blocks - 1].d_out, m->n_classes, s);
    int best = -1;
    for (int i = 0; i < m->n_classes; i++)
        if (m->caps[i] >= b && (best < 0 || s[i] > s[best])) best = i;
    if (best < 0) return MG_ERR_INVALID;
    *cap = m->caps[best];
    return MG_OK;
}
