/* opt/launch: several graph-defined kernels as one launch. The persistent launch (blocks take
 * the kernels' blocks as tasks in order) and cluster fusion (a split's combine inside the
 * splits' thread-block clusters); both opt-in (op_opts.persist, op_opts.cluster). */
#include <string.h>

#include "opt_internal.h"

int64_t op_elem_tasks(const ir_node *n) {
    int64_t b = (ir_numel(&n->shape) + 4095) / 4096;
    return b < 1 ? 1 : b < 4096 ? b : 4096;
}

/* The kernels planned again at kernels[0]'s block size where theirs differs, into a new array
 * (the arena's), or NULL when one fails: a kernel graph of graph-defined kernels only, two or
 * more. *smem: the largest shared memory. */
static op_kernel *same_threads(op_plan *p, const mg_device *dev, int64_t *smem) {
    if (p->n_kernels < 2) return NULL;
    int T = p->kernels[0].threads;
    op_kernel *k = arena_alloc(&p->mem, (size_t)p->n_kernels * sizeof *k);
    if (!k) return NULL; /* a plan without fusion is still whole */
    *smem = 0;
    for (int q = 0; q < p->n_kernels; q++) {
        k[q] = p->kernels[q];
        if (k[q].threads != T) {
            int knode = 0;
            while (p->kern[knode] != q) knode++;
            mg_ctx c = {{0}}; /* a failed try is no error: the kernels launch one by one */
            memset(&k[q], 0, sizeof k[q]);
            if (op_plan_kernel(p, &c, dev, knode, &k[q], T) || k[q].threads != T) return NULL;
        }
        if (k[q].smem > *smem) *smem = k[q].smem;
    }
    return k;
}

/* Persistent launch (opts.persist): several graph-defined kernels, and the kernel-level
 * operators stored between them (pieces of their element loops, op_elem_tasks), become one
 * launch whose blocks take the launches' blocks in order as tasks (codegen: a ticket each or
 * a static schedule, and done flags a task waits on). What it saves is a launch and its
 * ramp a kernel: the attention cases' combining kernel starts as the last chain block ends.
 * One block size for all: the first kernel's (attention's chain, sized to its registers);
 * a kernel planned with another is planned again with it. Not fused when that fails or the
 * largest shared memory plus the ticket's 16 bytes does not fit a block. */
void op_plan_fused(op_plan *p, const mg_device *dev) {
    int64_t smem;
    op_kernel *k = same_threads(p, dev, &smem);
    if (!k || smem + 16 > dev->smem_per_block) return;
    memcpy(p->kernels, k, (size_t)p->n_kernels * sizeof *k);
    p->fused = 1;
}

void op_block_range(const ir_graph *bg, const ir_node *n, const int b[3], int64_t lo[4], int64_t hi[4]) {
    int iter = n->op == IR_OP_ITER;
    const ir_shape *ts = iter ? &n->shape : &bg->nodes[n->in[0]].shape;
    int64_t td[4];
    op_pad4(ts, td);
    int pad = 4 - ts->ndim;
    for (int d = 0; d < 4; d++) lo[d] = 0, hi[d] = td[d] * (iter && n->fmap >= 0 && n->fmap + pad == d ? bg->forloop : 1);
    for (int gd = 0; gd < 3; gd++) {
        if (n->map[gd] < 0) continue;
        int d = n->map[gd] + pad;
        int64_t chunk = td[d] * (iter && n->fmap >= 0 && n->fmap + pad == d ? bg->forloop : 1);
        lo[d] += b[gd] * chunk, hi[d] += b[gd] * chunk;
    }
}

void op_block_coord(const int grid[3], int i, int b[3]) {
    b[0] = i % grid[0], b[1] = i / grid[0] % grid[1], b[2] = i / (grid[0] * grid[1]);
}

/* 1 if block b2 of kernel 2 (body g2, KERNEL node k2) reads anything block b1 of kernel 1
 * (body g1, KERNEL node k1) writes. */
static int depends(const op_plan *p, int k1, int k2, const int b1[3], const int b2[3]) {
    const ir_graph *kg = p->g, *g1 = kg->nodes[k1].body, *g2 = kg->nodes[k2].body;
    for (int i = 0; i < g2->n_nodes; i++) {
        const ir_node *it = &g2->nodes[i];
        if (it->op != IR_OP_ITER) continue;
        const ir_node *x = &kg->nodes[kg->nodes[k2].in[it->index]];
        if (x->op != IR_OP_KERNEL || x->body != g1) continue;
        for (int j = 0; j < g1->n_nodes; j++) {
            const ir_node *sv = &g1->nodes[j];
            if (sv->op != IR_OP_SAVE || sv->index != x->index) continue;
            int64_t l1[4], h1[4], l2[4], h2[4];
            op_block_range(g1, sv, b1, l1, h1);
            op_block_range(g2, it, b2, l2, h2);
            int meet = 1;
            for (int d = 0; d < 4; d++) meet &= l1[d] < h2[d] && l2[d] < h1[d];
            if (meet) return 1;
        }
    }
    return 0;
}

/* Cluster fusion (opts.cluster): kernel graphs of two graph-defined kernels with as many
 * blocks each, where kernel 1's blocks fall into clusters along one grid dim (the split: all
 * of it, 2 to 16 blocks) and every block of kernel 2 reads only what one cluster wrote, each
 * cluster feeding as many kernel-2 blocks as it has blocks (GQA and QKNorm b=8: 8 key splits
 * of a head, and the 8 row blocks of the combine that head's partial sums feed). Codegen then
 * runs kernel 1's block, a cluster barrier (its writes are then visible to the cluster), and
 * one block of kernel 2 (cluster_map): no second launch, and no waiting for the whole grid.
 * Both run at kernel 1's block size (kernel 2 planned again at it). Found by enumerating the
 * blocks' tiles (at most 1024 blocks). */
void op_plan_cluster(op_plan *p, const mg_device *dev) {
    const ir_graph *kg = p->g;
    if (p->n_kernels != 2 || 0) return;
    int k1 = -1, k2 = -1;
    for (int i = 0; i < kg->n_nodes; i++)
        if (kg->nodes[i].op == IR_OP_KERNEL && kg->nodes[i].index == 0) {
            if (k1 < 0) k1 = i;
            else k2 = i;
        }
    const int *g1 = kg->nodes[k1].body->grid, *g2 = kg->nodes[k2].body->grid;
    int n = g1[0] * g1[1] * g1[2];
    if (n != g2[0] * g2[1] * g2[2] || n > 1024) return;
    int *map = arena_alloc(&p->mem, (size_t)n * sizeof(int)), *fill = base_calloc((size_t)n, sizeof(int));
    for (int g = 0; g < 3 && map && fill; g++) {
        int S = g1[g], ok = S >= 2 && S <= 16, stride = g == 0 ? 1 : g == 1 ? g1[0] : g1[0] * g1[1];
        memset(fill, 0, (size_t)n * sizeof(int));
        /* cluster of kernel-1 block i: its coordinates but g's; rank: its coordinate along g */
        for (int j = 0; j < n && ok; j++) {
            int b2[3], b1[3], c = -1;
            op_block_coord(g2, j, b2);
            for (int i = 0; i < n && ok; i++) {
                op_block_coord(g1, i, b1);
                if (!depends(p, k1, k2, b1, b2)) continue;
                int ci = i - b1[g] * stride;
                ok = c < 0 || c == ci, c = ci;
            }
            if (!ok || c < 0 || fill[c] >= S) {
                ok = 0;
                break;
            }
            /* the fill[c]-th kernel-2 block of cluster c runs on its block of rank fill[c] */
            map[c + fill[c]++ * stride] = j;
        }
        if (!ok) continue;
        int64_t smem;
        op_kernel *k = same_threads(p, dev, &smem);
        if (!k) break;
        memcpy(p->kernels, k, (size_t)p->n_kernels * sizeof *k);
        p->clustered = 1, p->cluster_map = map;
        p->cluster[0] = p->cluster[1] = p->cluster[2] = 1, p->cluster[g] = S;
        break;
    }
    base_free(fill);
}
