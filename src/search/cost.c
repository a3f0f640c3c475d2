/* cost: the cost model that ranks the search's μGraphs (search.h: sr_cost_us, docs/search.md
 * "Ranking"): per kernel, bytes over bandwidth or FLOPs over the tensor-core rate, whichever
 * is larger, over the share of the SMs its waves keep busy, plus a launch. */
#include <math.h>

#include "search_int.h"

/* ---- the device numbers: H100, measured or fitted ----
 * These are the target GPU's numbers, kept in one place until they move into the device
 * table (ir_device) with the other per-GPU facts (issue #23, item 5); only n_sm comes from
 * the device today. */
enum { COST_BW = 3000, COST_LAUNCH_US = 2 }; /* bandwidth in GB/s; a launch in µs */
static const double cost_rate = 660e12; /* tensor-core FLOP/s */
/* µs each for-loop iteration adds per wave of blocks (its barriers and pipeline wait), and
 * how far one SM may pull more than its share of the bandwidth when others idle. Fitted on
 * H100 (RMSNorm+Linear, docs/notes/2026-11-22-hopper-codegen.md): grid 128 with 8, 16, 32,
 * 64 iterations took 29.7, 28.1, 25.6, 34.7 µs; grid 96 (128-byte rows) 24.4 µs. */
static const double cost_iter_us = 0.05, cost_sm_share = 1.5;
/* mugen's pre-defined operators (kernel-level loops): scalar matmul FLOP/s, and µs per
 * element a reducing thread reads */
static const double cost_scalar_rate = 0.34e12, cost_serial_us = 0.5e-3;

/* ---- the model ---- */

/* Bytes device memory moves for rows of w bytes read at offsets that are multiples of w:
 * whole 64-byte bursts (HBM), averaged over the offsets. A 96-byte row costs 128. */
static double row_bytes(double w) {
    if (w <= 0) return 0;
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
 *   blocks of a wave pulling at most cost_sm_share of an SM's share each;
 *   compute: FLOPs over the tensor-core rate, divided by the share of SMs its waves keep busy;
 *   plus the pipeline's fill (one iteration's tiles of a wave) and cost_iter_us per iteration
 *   and wave. */
double sr_block_us(const ir_graph *b, const ir_device *dev, unsigned outs) {
    double n_sm = dev && dev->n_sm > 0 ? dev->n_sm : 1, bytes = 0, flops = 0, iter_bytes = 0;
    double blocks = (double)b->grid[0] * b->grid[1] * b->grid[2], waves = ceil(blocks / n_sm);
    double util = blocks / (waves * n_sm), mem_util = fmin(1.0, cost_sm_share * util);
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
    double bw = COST_BW * 1e9;
    return (fmax(bytes / bw / mem_util, flops / cost_rate / util) + (b->forloop > 1 ? iter_bytes / bw : 0)) * 1e6 +
           cost_iter_us * (double)b->forloop * waves;
}

double sr_cost_us(const ir_graph *ug, const ir_device *dev) {
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
            us += COST_LAUNCH_US + sr_block_us(n->body, dev, outs);
            continue;
        }
        /* a pre-defined operator: mugen's kernel-level code, a grid-stride loop with one
         * thread per output element (codegen/emit.c): memory-bound for elementwise
         * operators; a reduction's thread reads its group serially; a matmul's thread runs
         * its dot product in scalar f32 (measured on H100: 2x4096 @ 4096x6144 in 294 µs,
         * 0.34 TFLOP/s), far from a tensor-core library */
        double bytes = (double)ir_numel(&n->shape) * (double)base_dtype_size(n->dtype), flops = 0, serial = 0;
        for (int k = 0; k < n->n_in; k++) {
            const ir_node *m = &ug->nodes[n->in[k]];
            bytes += (double)ir_numel(&m->shape) * (double)base_dtype_size(m->dtype);
        }
        if (n->op == IR_OP_MATMUL) {
            const ir_shape *a = &ug->nodes[n->in[0]].shape;
            flops = 2.0 * (double)ir_numel(&n->shape) * (double)a->d[a->ndim - 1];
        }
        if (ir_ops[n->op].kind == IR_KIND_REDUCE) serial = (double)n->group * cost_serial_us;
        us += COST_LAUNCH_US + fmax(fmax(bytes / (COST_BW * 1e9), flops / cost_scalar_rate) * 1e6, serial);
    }
    return us;
}

