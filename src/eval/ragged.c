/* eval/ragged: both reference evaluators on a ragged program (docs/ragged.md). Sequences are
 * independent (ir/ragged.c's rules), so sequence b is evaluated as its own static program
 * (ir_ragged_instance) on its slabs of the packed inputs, and its results are written into
 * its slabs of the packed outputs; tensors without a batch are shared by every sequence. One
 * walk serves both: a value is `planes` arrays of `elem`-byte elements (float: one plane of
 * doubles; field: the Z_p and Z_q planes of uint32). */
#include <math.h>
#include <string.h>

#include "eval.h"

typedef struct walk {
    const ir_graph *g;
    mg_ctx *ctx;
    int planes;
    size_t elem;
    /* evaluates static program inst: in[plane][input], out[plane][output] */
    mg_status (*run)(const struct walk *w, const ir_graph *inst, const void *const *in[2], void *const *out[2]);
    int mode;            /* float: ev_float's mode */
    const ff_field *F;   /* field */
    unsigned char fill;  /* the byte an empty sequence's per-sequence outputs are filled with */
} walk;

static mg_status run_float(const walk *w, const ir_graph *inst, const void *const *in[2], void *const *out[2]) {
    return ev_float(inst, w->ctx, w->mode, (const double *const *)in[0], (double *const *)out[0]);
}
static mg_status run_field(const walk *w, const ir_graph *inst, const void *const *in[2], void *const *out[2]) {
    return ev_field(inst, w->ctx, w->F, (const uint32_t *const *)in[0], (const uint32_t *const *)in[1],
                    (uint32_t *const *)out[0], (uint32_t *const *)out[1]);
}

static int n_inputs(const ir_graph *g) {
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i].op == IR_OP_INPUT;
    return n;
}

/* Instance b of g (lens[k][b] >= 1) on in at the slab offsets ioff into out at ooff (the
 * per-sequence outputs) and, when whole, the outputs without a batch. */
static mg_status one(const walk *w, const int64_t *const *lens, int64_t b, const void *const *in[2], const int64_t *ioff,
                     void *const *out[2], const int64_t *ooff, int whole) {
    const ir_graph *g = w->g;
    ir_graph *inst = NULL;
    mg_status rc = ir_ragged_instance(g, w->ctx, lens, b, &inst);
    if (rc) return rc;
    int ni = n_inputs(g), no = g->n_outputs;
    const void **ib[2] = {base_calloc((size_t)ni + 1, sizeof(void *)), base_calloc((size_t)ni + 1, sizeof(void *))};
    void **ob[2] = {base_calloc((size_t)no + 1, sizeof(void *)), base_calloc((size_t)no + 1, sizeof(void *))};
    if (!ib[0] || !ib[1] || !ob[0] || !ob[1]) rc = ctx_err(w->ctx, MG_ERR_NOMEM, "out of memory");
    for (int p = 0; !rc && p < w->planes; p++) {
        for (int i = 0, k = 0; i < g->n_nodes; i++)
            if (g->nodes[i].op == IR_OP_INPUT) {
                ib[p][k] = (const unsigned char *)in[p][k] + (g->nodes[i].shape.rag[0] ? (size_t)ioff[k] * w->elem : 0);
                k++;
            }
        for (int k = 0; !rc && k < no; k++) {
            ob[p][k] = base_alloc((size_t)ir_numel(&inst->nodes[inst->outputs[k]].shape) * w->elem + 1);
            if (!ob[p][k]) rc = ctx_err(w->ctx, MG_ERR_NOMEM, "out of memory");
        }
    }
    if (!rc) rc = w->run(w, inst, (const void *const *[2]){ib[0], ib[1]}, (void *const *[2]){ob[0], ob[1]});
    for (int p = 0; !rc && p < w->planes; p++)
        for (int k = 0; k < no; k++) {
            const ir_shape *s = &g->nodes[g->outputs[k]].shape;
            size_t n = (size_t)ir_numel(&inst->nodes[inst->outputs[k]].shape) * w->elem;
            if (s->rag[0]) memcpy((unsigned char *)out[p][k] + (size_t)ooff[k] * w->elem, ob[p][k], n);
            else if (whole) memcpy(out[p][k], ob[p][k], n);
        }
    for (int p = 0; p < 2; p++) {
        for (int k = 0; ob[p] && k < no; k++) base_free(ob[p][k]);
        base_free(ob[p]), base_free((void *)ib[p]);
    }
    ir_graph_free(inst);
    return rc;
}

static mg_status ragged_walk(const walk *w, const int64_t *const *lens, const void *const *in[2], void *const *out[2]) {
    const ir_graph *g = w->g;
    int ni = n_inputs(g), no = g->n_outputs, statics = 0;
    int64_t count = g->lens[0].count;
    for (int k = 0; k < no; k++) statics |= !g->nodes[g->outputs[k]].shape.rag[0];
    int64_t *ioff = base_calloc((size_t)ni + 1, sizeof *ioff), *ooff = base_calloc((size_t)no + 1, sizeof *ooff);
    mg_status rc = ioff && ooff ? MG_OK : ctx_err(w->ctx, MG_ERR_NOMEM, "out of memory");
    int whole_done = 0;
    for (int64_t b = 0; !rc && b < count; b++) {
        int empty = 0;
        for (int k = 0; k < g->n_lens; k++) empty |= lens[k][b] == 0;
        if (!empty) {
            rc = one(w, lens, b, in, ioff, out, ooff, !whole_done);
            whole_done = 1;
        } else /* a ragged slab of an empty sequence has no elements; what is left (a reduction
                * over its ragged dim, another lengths' dims) is filled (float: NaN) */
            for (int k = 0; k < no; k++) {
                const ir_shape *s = &g->nodes[g->outputs[k]].shape;
                int64_t n = s->rag[0] ? ir_slab_numel(s, lens, b) : 0;
                for (int p = 0; p < w->planes && n; p++)
                    if (w->planes == 1 && w->elem == sizeof(double))
                        for (int64_t t = 0; t < n; t++) ((double *)out[p][k])[ooff[k] + t] = NAN;
                    else memset((unsigned char *)out[p][k] + (size_t)ooff[k] * w->elem, w->fill, (size_t)n * w->elem);
            }
        for (int i = 0, k = 0; i < g->n_nodes; i++)
            if (g->nodes[i].op == IR_OP_INPUT) {
                if (g->nodes[i].shape.rag[0]) ioff[k] += ir_slab_numel(&g->nodes[i].shape, lens, b);
                k++;
            }
        for (int k = 0; k < no; k++)
            if (g->nodes[g->outputs[k]].shape.rag[0]) ooff[k] += ir_slab_numel(&g->nodes[g->outputs[k]].shape, lens, b);
    }
    if (!rc && statics && !whole_done) {
        /* every sequence empty: the outputs without a batch depend on no per-sequence input, so
         * any instance gives them; lengths of 1, zeros for the per-sequence inputs, their
         * per-sequence outputs into scratch */
        int64_t *ones = base_alloc((size_t)count * sizeof *ones + 1), most = 1;
        const int64_t *l1[IR_MAX_LENS];
        if (!ones) rc = ctx_err(w->ctx, MG_ERR_NOMEM, "out of memory");
        for (int64_t b = 0; !rc && b < count; b++) ones[b] = 1;
        for (int k = 0; k < g->n_lens; k++) l1[k] = ones;
        for (int i = 0; !rc && i < g->n_nodes; i++)
            if (g->nodes[i].op == IR_OP_INPUT && g->nodes[i].shape.rag[0]) {
                int64_t n = ir_slab_numel(&g->nodes[i].shape, l1, 0);
                most = n > most ? n : most;
            }
        for (int k = 0; !rc && k < no; k++) {
            int64_t n = ir_slab_numel(&g->nodes[g->outputs[k]].shape, l1, 0);
            most = n > most ? n : most;
        }
        void *zeros = rc ? NULL : base_calloc((size_t)most + 1, w->elem);
        const void **zin[2] = {base_calloc((size_t)ni + 1, sizeof(void *)), base_calloc((size_t)ni + 1, sizeof(void *))};
        void **sout[2] = {base_calloc((size_t)no + 1, sizeof(void *)), base_calloc((size_t)no + 1, sizeof(void *))};
        if (!rc && (!zeros || !zin[0] || !zin[1] || !sout[0] || !sout[1])) rc = ctx_err(w->ctx, MG_ERR_NOMEM, "out of memory");
        int64_t *z = rc ? NULL : base_calloc((size_t)(ni > no ? ni : no) + 1, sizeof *z);
        if (!rc && !z) rc = ctx_err(w->ctx, MG_ERR_NOMEM, "out of memory");
        for (int p = 0; !rc && p < w->planes; p++) {
            for (int i = 0, k = 0; i < g->n_nodes; i++)
                if (g->nodes[i].op == IR_OP_INPUT) zin[p][k] = g->nodes[i].shape.rag[0] ? zeros : in[p][k], k++;
            for (int k = 0; k < no; k++) {
                sout[p][k] = g->nodes[g->outputs[k]].shape.rag[0] ? base_alloc((size_t)most * w->elem + 1) : out[p][k];
                if (!sout[p][k]) rc = ctx_err(w->ctx, MG_ERR_NOMEM, "out of memory");
            }
        }
        if (!rc) rc = one(w, l1, 0, (const void *const *[2]){zin[0], zin[1]}, z, (void *const *[2]){sout[0], sout[1]}, z, 1);
        for (int p = 0; p < 2; p++) {
            for (int k = 0; sout[p] && k < no; k++)
                if (g->nodes[g->outputs[k]].shape.rag[0]) base_free(sout[p][k]);
            base_free(sout[p]), base_free((void *)zin[p]);
        }
        base_free(z), base_free(zeros), base_free(ones);
    }
    base_free(ioff), base_free(ooff);
    return rc;
}

mg_status ev_float_ragged(const ir_graph *g, mg_ctx *ctx, int mode, const int64_t *const *lens, const double *const *in,
                          double *const *out) {
    walk w = {.g = g, .ctx = ctx, .planes = 1, .elem = sizeof(double), .run = run_float, .mode = mode};
    return ragged_walk(&w, lens, (const void *const *[2]){(const void *const *)in, NULL}, (void *const *[2]){(void *const *)out, NULL});
}

mg_status ev_field_ragged(const ir_graph *g, mg_ctx *ctx, const ff_field *F, const int64_t *const *lens,
                          const uint32_t *const *in_p, const uint32_t *const *in_q, uint32_t *const *out_p,
                          uint32_t *const *out_q) {
    walk w = {.g = g, .ctx = ctx, .planes = 2, .elem = sizeof(uint32_t), .run = run_field, .F = F, .fill = 0xFF};
    return ragged_walk(&w, lens, (const void *const *[2]){(const void *const *)in_p, (const void *const *)in_q},
                       (void *const *[2]){(void *const *)out_p, (void *const *)out_q});
}
