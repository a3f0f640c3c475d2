/* eval/ragged: the float reference on a ragged program (docs/ragged.md). Sequences are
 * independent (ir/ragged.c's rules), so sequence b is evaluated as its own static program
 * (ir_ragged_instance) on its slabs of the packed inputs, and its results are written into
 * its slabs of the packed outputs; tensors without a batch are shared by every sequence. */
#include <math.h>
#include <string.h>

#include "eval.h"

/* Evaluates instance b of g (lengths lens, each >= 1 at b) on in (packed, offsets ioff)
 * into out: per-sequence outputs at ooff, the others (whole) when whole != 0. */
static mg_status one(const ir_graph *g, mg_ctx *ctx, int mode, const int64_t *const *lens, int64_t b,
                     const double *const *in, const int64_t *ioff, double *const *out, const int64_t *ooff, int whole) {
    ir_graph *inst = NULL;
    mg_status rc0 = ir_ragged_instance(g, ctx, lens, b, &inst);
    if (rc0) return rc0;
    int ni = 0;
    for (int i = 0; i < g->n_nodes; i++) ni += g->nodes[i].op == IR_OP_INPUT;
    const double **ib = base_calloc((size_t)ni + 1, sizeof *ib);
    double **ob = base_calloc((size_t)g->n_outputs + 1, sizeof *ob);
    mg_status rc = ib && ob ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    for (int i = 0, k = 0; !rc && i < g->n_nodes; i++)
        if (g->nodes[i].op == IR_OP_INPUT) {
            ib[k] = in[k] + (g->nodes[i].shape.rag[0] ? ioff[k] : 0);
            k++;
        }
    for (int k = 0; !rc && k < g->n_outputs; k++) {
        ob[k] = base_alloc((size_t)ir_numel(&inst->nodes[inst->outputs[k]].shape) * sizeof(double) + 1);
        if (!ob[k]) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    }
    if (!rc) rc = ev_float(inst, ctx, mode, ib, ob);
    for (int k = 0; !rc && k < g->n_outputs; k++) {
        const ir_shape *s = &g->nodes[g->outputs[k]].shape;
        int64_t n = ir_numel(&inst->nodes[inst->outputs[k]].shape);
        if (s->rag[0]) memcpy(out[k] + ooff[k], ob[k], (size_t)n * sizeof(double));
        else if (whole) memcpy(out[k], ob[k], (size_t)n * sizeof(double));
    }
    for (int k = 0; ob && k < g->n_outputs; k++) base_free(ob[k]);
    base_free(ob), base_free(ib);
    ir_graph_free(inst);
    return rc;
}

mg_status ev_float_ragged(const ir_graph *g, mg_ctx *ctx, int mode, const int64_t *const *lens, const double *const *in,
                          double *const *out) {
    int ni = 0, no = g->n_outputs, statics = 0;
    for (int i = 0; i < g->n_nodes; i++) ni += g->nodes[i].op == IR_OP_INPUT;
    for (int k = 0; k < no; k++) statics |= !g->nodes[g->outputs[k]].shape.rag[0];
    int64_t *ioff = base_calloc((size_t)ni + 1, sizeof *ioff), *ooff = base_calloc((size_t)no + 1, sizeof *ooff);
    int64_t *ones = base_alloc((size_t)g->lens[0].count * sizeof *ones);
    mg_status rc = ioff && ooff && ones ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
    int whole_done = 0;
    for (int64_t b = 0; !rc && b < g->lens[0].count; b++) {
        int empty = 0;
        for (int k = 0; k < g->n_lens; k++) empty |= lens[k][b] == 0;
        if (!empty) {
            rc = one(g, ctx, mode, lens, b, in, ioff, out, ooff, !whole_done);
            whole_done = 1;
        } else /* a ragged slab of an empty sequence has no elements; what is left (a reduction over
                * its ragged dim, another lengths' dims) is NaN */
            for (int k = 0; k < no; k++) {
                const ir_shape *s = &g->nodes[g->outputs[k]].shape;
                if (s->rag[0])
                    for (int64_t t = 0, n = ir_slab_numel(s, lens, b); t < n; t++) out[k][ooff[k] + t] = NAN;
            }
        for (int i = 0, k = 0; i < g->n_nodes; i++)
            if (g->nodes[i].op == IR_OP_INPUT) {
                if (g->nodes[i].shape.rag[0]) ioff[k] += ir_slab_numel(&g->nodes[i].shape, lens, b);
                k++;
            }
        for (int k = 0; k < no; k++)
            if (g->nodes[g->outputs[k]].shape.rag[0]) ooff[k] += ir_slab_numel(&g->nodes[g->outputs[k]].shape, lens, b);
    }
    if (!rc && statics && !whole_done) { /* every sequence empty: the shared outputs from lengths of 1 */
        const int64_t *l1[IR_MAX_LENS];
        for (int64_t b = 0; b < g->lens[0].count; b++) ones[b] = 1;
        for (int k = 0; k < g->n_lens; k++) l1[k] = ones;
        int64_t *z = base_calloc((size_t)(ni > no ? ni : no) + 1, sizeof *z);
        double **scratch = base_calloc((size_t)no + 1, sizeof *scratch);
        rc = z && scratch ? MG_OK : ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        /* per-sequence outputs go to scratch (not the caller's: they have no elements) */
        for (int k = 0; !rc && k < no; k++) {
            const ir_shape *s = &g->nodes[g->outputs[k]].shape;
            scratch[k] = s->rag[0] ? base_alloc((size_t)ir_slab_numel(s, l1, 0) * sizeof(double) + 1) : out[k];
            if (!scratch[k]) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        }
        /* per-sequence inputs have no elements either: a slab of zeros stands in */
        const double **zin = base_calloc((size_t)ni + 1, sizeof *zin);
        double *zeros = NULL;
        int64_t most = 1;
        for (int i = 0; i < g->n_nodes; i++)
            if (g->nodes[i].op == IR_OP_INPUT && g->nodes[i].shape.rag[0]) {
                int64_t n = ir_slab_numel(&g->nodes[i].shape, l1, 0);
                most = n > most ? n : most;
            }
        if (!rc) zeros = base_calloc((size_t)most, sizeof *zeros);
        if (!rc && (!zin || !zeros)) rc = ctx_err(ctx, MG_ERR_NOMEM, "out of memory");
        for (int i = 0, k = 0; !rc && i < g->n_nodes; i++)
            if (g->nodes[i].op == IR_OP_INPUT) zin[k] = g->nodes[i].shape.rag[0] ? zeros : in[k], k++;
        if (!rc) rc = one(g, ctx, mode, l1, 0, zin, z, scratch, z, 1);
        for (int k = 0; scratch && k < no; k++)
            if (g->nodes[g->outputs[k]].shape.rag[0]) base_free(scratch[k]);
        base_free(scratch), base_free(z), base_free(zin), base_free(zeros);
    }
    base_free(ioff), base_free(ooff), base_free(ones);
    return rc;
}
