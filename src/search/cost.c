/* cost: the cost model that ranks the search's μGraphs (search.h: sr_cost_us, docs/search.md
 * "Ranking"): per kernel, bytes over bandwidth or FLOPs over the tensor-core rate, whichever
 * is larger, over the share of the SMs its waves keep busy, plus a launch. */
#include <math.h>

#include "search_int.h"

/* The device's numbers (bandwidth, tensor-core and scalar rates, launch cost, and the terms
 * fitted on the H100: iter_us, sm_share, serial_us) come from its row of the device table
 * (ir/device.c, which says where each was measured). */

/* ---- the model ---- */

/* Bytes device memory moves for rows of w bytes read at offsets that are multiples of w:
 * whole 64-byte bursts (HBM), averaged over the offsets. A 96-byte row costs 128. */
static double row_bytes(double w) {
    if (w <= 0) return 0;
    if (w == floor(w) && w < 1e12) { /* whole bytes (always, from tiles): the same sum in integers */
        int64_t iw = (int64_t)w, isum = 0;
        for (int64_t k = 0; k < 64; k++) isum += ((k + 1) * iw + 63) / 64 - k * iw / 64;
        return (double)(isum * 64) / 64;
    }
    double sum = 0;
    for (int k = 0; k < 64; k++) {
        double lo = floor(k * w / 64), hi = ceil((k * w + w) / 64);
        sum += (hi - lo) * 64;
    }
    return sum / 64;
}

/* The cost model's time for graph-defined kernel body b, its launch not included:
 *   memory: bytes (every iterator's tile each iteration in each block, in 64-byte bursts per
 *   row where a tile is narrower than its tensor; every saved tile) over bandwidth, the
 *   blocks of a wave pulling at most sm_share of an SM's share each;
 *   compute: FLOPs over the tensor-core rate, divided by the share of SMs its waves keep busy;
 *   plus the pipeline's fill (one iteration's tiles of a wave) and iter_us per iteration
 *   and wave. */
double sr_block_us(const ir_graph *b, const mg_device *dev, unsigned outs) {
    double n_sm = dev->n_sm > 0 ? dev->n_sm : 1, bytes = 0, flops = 0, iter_bytes = 0;
    double blocks = (double)b->grid[0] * b->grid[1] * b->grid[2], waves = ceil(blocks / n_sm);
    double util = blocks / (waves * n_sm), mem_util = fmin(1.0, dev->sm_share * util);
    for (int j = 0; j < b->n_nodes; j++) {
        const ir_node *m = &b->nodes[j];
        double el = (double)ir_numel(&m->shape), esz = (double)base_dtype_size(m->dtype);
        if (m->op == IR_OP_ITER) {
            const ir_shape *full = &b->kin_shape[m->index];
            double w = m->shape.ndim ? (double)m->shape.d[m->shape.ndim - 1] : 1, t = el * esz;
            if (full->ndim && (double)full->d[full->ndim - 1] > w) t = el / w * row_bytes(w * esz);
            bytes += t * (double)b->forloop * blocks;
            iter_bytes += t * fmin(blocks, n_sm);
        }
        if (m->op == IR_OP_SAVE) {
            /* a program output is row-major: rows of w elements when a grid dim splits its last
             * dim; codegen lays intermediates out so that each block's tile is contiguous */
            const ir_shape *src = &b->nodes[m->in[0]].shape;
            int last = src->ndim - 1, split = 0;
            for (int g = 0; g < 3 && (outs >> m->index & 1); g++) split |= last >= 0 && m->map[g] == last && b->grid[g] > 1;
            double w = last >= 0 ? (double)src->d[last] : 1;
            bytes += (split ? el / w * row_bytes(w * esz) : el * esz) * blocks;
        }
        if (m->op == IR_OP_MATMUL) {
            const ir_shape *a = &b->nodes[m->in[0]].shape;
            flops += 2.0 * el * (double)a->d[a->ndim - 1] * (double)b->forloop * blocks;
        }
    }
    double bw = dev->bw;
    return (fmax(bytes / bw / mem_util, flops / dev->tc_rate / util) + (b->forloop > 1 ? iter_bytes / bw : 0)) * 1e6 +
           dev->iter_us * (double)b->forloop * waves;
}

double sr_cost_us(const ir_graph *ug, const mg_device *dev) {
    double us = 0;
    for (int i = 0; i < ug->n_nodes; i++) {
        const ir_node *n = &ug->nodes[i];
        if (n->op == IR_OP_INPUT || n->op == IR_OP_CONST) continue;
        if (n->op == IR_OP_KERNEL) {
            if (n->index) continue;
            unsigned outs = 0; /* which of its outputs are the program's */
            for (int j = i; j < ug->n_nodes; j++)
                for (int q = 0; q < ug->n_outputs; q++)
                    if (ug->outputs[q] == j && ug->nodes[j].op == IR_OP_KERNEL && ug->nodes[j].body == n->body)
                        outs |= 1u << ug->nodes[j].index;
            us += dev->launch_us + sr_block_us(n->body, dev, outs);
            continue;
        }
        /* a pre-defined operator: mugen's kernel-level code, a grid-stride loop with one
         * thread per output element (codegen/emit.c emit_op_kernel): memory-bound for elementwise
         * operators; a reduction's thread reads its group serially; a matmul's thread runs
         * its dot product in scalar f32 (the device's scalar_rate, ir/device.c), far from
         * a tensor-core library */
        double bytes = (double)ir_numel(&n->shape) * (double)base_dtype_size(n->dtype), flops = 0, serial = 0;
        for (int k = 0; k < n->n_in; k++) {
            const ir_node *m = &ug->nodes[n->in[k]];
            bytes += (double)ir_numel(&m->shape) * (double)base_dtype_size(m->dtype);
        }
        if (n->op == IR_OP_MATMUL) {
            const ir_shape *a = &ug->nodes[n->in[0]].shape;
            flops = 2.0 * (double)ir_numel(&n->shape) * (double)a->d[a->ndim - 1];
        }
        if (ir_ops[n->op].kind == IR_KIND_REDUCE) serial = (double)n->group * dev->serial_us;
        us += dev->launch_us + fmax(fmax(bytes / dev->bw, flops / dev->scalar_rate) * 1e6, serial);
    }
    return us;
}

