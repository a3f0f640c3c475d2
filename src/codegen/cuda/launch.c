/* codegen/cuda/launch: how a CUDA program's blocks are launched: one kernel a graph-defined
 * operator (cg_cuda_blocks), or several block kernels as one launch: persistent (tasks taken by
 * tickets) or cluster fusion (a split's combine inside the splits' thread-block clusters).
 * The future megakernel's starting point. Device side: cuda/lib/task.cuh. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../cg_internal.h"

void cg_cuda_blocks(em *E, const char **gn, int knode, const params *ps) {
    /* TMA's 128-byte-swizzled stages sit at multiples of 1 KB from here (opt/memory.c) */
    sb_printf(E->sb, "    extern __shared__ __align__(%d) unsigned char smem[];\n"
                     "    const int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;\n", E->k->tma ? 1024 : 16);
    cg_block_body(E, gn, knode, ps);
}

/* ---- one kernel for several block kernels (persistent launch, cluster fusion) ---- */

/* The call arguments of ps, each followed by ", ". */
static void arg_list(em *E, const params *ps) {
    for (int i = 0; i < ps->n; i++) sb_printf(E->sb, "%s, ", E->names[ps->node[i]]);
}

/* The parameters of one kernel running several block kernels: every kernel's outputs, then
 * what they read besides; *first, *last: the first and last KERNEL node, *nk their number. */
static void union_params(const op_plan *p, params *ps, int *first, int *last, int *nk) {
    const ir_graph *kg = p->g;
    *first = *last = -1, *nk = 0;
    for (int i = 0; i < kg->n_nodes; i++)
        if (kg->nodes[i].op == IR_OP_KERNEL && kg->nodes[i].index == 0) {
            params one = {0};
            cg_block_params(p, i, &one);
            for (int q = 0; q < one.n_out; q++) cg_add_param(ps, one.node[q]);
            *first = *first < 0 ? i : *first, *last = i, ++*nk;
        }
    ps->n_out = ps->n;
    for (int i = 0; i < kg->n_nodes; i++)
        if (kg->nodes[i].op == IR_OP_KERNEL && kg->nodes[i].index == 0) {
            params one = {0};
            cg_block_params(p, i, &one);
            for (int q = one.n_out; q < one.n; q++) cg_add_param(ps, one.node[q]);
        }
}

/* ---- a persistent launch (op_plan.fused, CUDA) ----
 * One kernel runs every graph-defined kernel. Each block takes tickets (mg_ticket: the next
 * number, in the order asked) until they run out; ticket t is task t of the plan's task graph
 * (opt/taskgraph.c): a block of kernel 0 for the first tickets, of kernel 1 for the next, ...
 * A task waits for exactly the tasks whose tiles it reads (mg_task_wait over its row of the
 * dependency tables in the source; a thread a dependency, each reading that task's done flag)
 * and sets its own flag when done (mg_task_done). No deadlock whatever the number of resident
 * blocks: a task waits only for tasks with smaller tickets, taken by blocks already running.
 * Blocks: as many a multiprocessor as the widest kernel alone would put on one (GQA: 128
 * chain blocks, so one each on 132), so no two blocks of kernel 0 share a multiprocessor
 * that another has to itself (192 blocks, one a task, put two chains on some: GQA b=1 15.6
 * against 9.8 us unfused). The ticket, the flags and the leave count live in a buffer of their
 * own (cg_program.sync_buf), zeroed by the runtime once and by the last block to leave. Buffers
 * a later task reads lose __restrict__, so no load of them takes the read-only path, which
 * does not see writes made during the launch. */

/* Each graph-defined kernel's block program as a function of its block index, compiled on its
 * own (all bodies inlined into one function took 255 registers: GQA b=1 12.7 us, against
 * 12.4). */
static void task_functions(em *KE, arena *a) {
    const op_plan *p = KE->p;
    const ir_graph *kg = p->g;
    const char **gn = KE->names;
    sb_puts(KE->sb, "extern __shared__ __align__(16) unsigned char smem[]; /* every task's */\n");
    for (int knode = 0; knode < kg->n_nodes && !KE->rc; knode++) {
        if (kg->nodes[knode].op != IR_OP_KERNEL || kg->nodes[knode].index != 0) continue;
        em E;
        if (cg_block_em(KE, knode, a, &E)) return;
        params kp = {0};
        cg_block_params(p, knode, &kp);
        cg_block_comment(&E, knode);
        sb_printf(E.sb, "static __device__ __noinline__ void t%d_%s(", knode, gn[knode] + 2);
        cg_param_list(&E, gn, &kp, 1);
        sb_puts(E.sb, ", const int bx, const int by, const int bz) {\n");
        cg_block_body(&E, gn, knode, &kp);
        sb_puts(E.sb, "}\n\n");
        if (E.rc) KE->rc = E.rc;
    }
}

/* The persistent kernel's dispatch: ticket t_ is task t_ - start of the kernel whose tickets
 * start at `start` (its dependencies waited for before, its flag set after). */
static void task_dispatch(em *KE) {
    const op_plan *p = KE->p;
    const ir_graph *kg = p->g;
    const char **gn = KE->names;
    int64_t start = 0;
    int q = 0;
    for (int knode = 0; knode < kg->n_nodes; knode++) {
        if (kg->nodes[knode].op != IR_OP_KERNEL || kg->nodes[knode].index != 0) continue;
        const ir_graph *b = p->kernels[q].body;
        int64_t n = (int64_t)b->grid[0] * b->grid[1] * b->grid[2];
        sb_printf(KE->sb, "    %sif (t_ < %" PRId64 ") {\n", q ? "else " : "", start + n);
        params kp = {0};
        cg_block_params(p, knode, &kp);
        sb_printf(KE->sb, "    const int tk_ = t_ - %" PRId64 ";\n    t%d_%s(", start, knode, gn[knode] + 2);
        arg_list(KE, &kp);
        sb_printf(KE->sb, "tk_ %% %d, tk_ / %d %% %d, tk_ / %d);\n    }\n", b->grid[0], b->grid[0], b->grid[1],
                  b->grid[0] * b->grid[1]);
        start += n, q++;
    }
}

/* The persistent launch (above) of every graph-defined kernel of the plan, its counters a
 * buffer of their own (out->sync_buf). */
void cg_cuda_emit_fused(em *KE, cg_program *out, arena *a) {
    const op_plan *p = KE->p;
    const char **gn = KE->names;
    params ps = {0};
    int first, last, nk;
    union_params(p, &ps, &first, &last, &nk);
    cg_uses(KE, CG_LIB_TASK);
    const op_kernel *k0 = &p->kernels[p->kern[first]];
    int64_t smem = 0, total = 0, widest = 1;
    for (int q = 0; q < p->n_kernels; q++) {
        const ir_graph *b = p->kernels[q].body;
        int64_t n = (int64_t)b->grid[0] * b->grid[1] * b->grid[2];
        smem = p->kernels[q].smem > smem ? p->kernels[q].smem : smem;
        total += n, widest = n > widest ? n : widest;
    }
    /* blocks: as many a multiprocessor as the widest kernel alone would put on one */
    int64_t sm = p->n_sm > 0 ? p->n_sm : 1, blocks = sm * ((widest + sm - 1) / sm);
    blocks = blocks < total ? blocks : total;
    op_taskgraph *tg = NULL;
    if ((KE->rc = op_taskgraph_new(p, KE->ctx, &tg))) return;
    if (tg->n_launches != nk || tg->n_tasks != total) { /* a plan of graph-defined kernels only (opt/launch.c) */
        op_taskgraph_free(tg);
        KE->rc = ctx_err(KE->ctx, MG_ERR_UNSUPPORTED, "codegen: a persistent launch of %d kernels has %d launches as tasks",
                         nk, tg ? tg->n_launches : -1);
        return;
    }
    task_functions(KE, a);
    if (KE->rc) {
        op_taskgraph_free(tg);
        return;
    }
    char kname[64];
    snprintf(kname, sizeof kname, "kp%d_%s", last, gn[last] + 2);
    /* the task graph's dependencies: task t's are dep[dep_at[t] .. dep_at[t + 1]) */
    sb_printf(KE->sb, "/* the tasks' dependencies (opt/taskgraph.c): %" PRId64 " for %d tasks */\n"
                      "static __device__ const int %s_dep_at[%d] = {", tg->n_deps, tg->n_tasks, kname, tg->n_tasks + 1);
    for (int t = 0; t <= tg->n_tasks; t++) sb_printf(KE->sb, "%s%" PRId64, t ? (t % 32 ? ", " : ",\n    ") : "", tg->dep_at[t]);
    sb_printf(KE->sb, "};\nstatic __device__ const int %s_dep[%" PRId64 "] = {", kname, tg->n_deps ? tg->n_deps : 1);
    for (int64_t e = 0; e < tg->n_deps; e++) sb_printf(KE->sb, "%s%d", e ? (e % 32 ? ", " : ",\n    ") : "", tg->dep[e]);
    sb_puts(KE->sb, tg->n_deps ? "};\n" : "0};\n");
    op_taskgraph_free(tg);
    sb_printf(KE->sb, "/* one persistent launch of %d graph-defined kernels: %" PRId64 " blocks of %d threads take %" PRId64
                      " tasks */\n", nk, blocks, k0->threads, total);
    sb_printf(KE->sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", k0->threads, kname);
    cg_param_list(KE, gn, &ps, 1);
    sb_printf(KE->sb, ", unsigned *__restrict__ g_sync_) {\n"
                      "    for (;;) {\n"
                      "    const int t_ = mg_ticket(g_sync_, (int *)(smem + %" PRId64 "));\n"
                      "    if (t_ >= %" PRId64 ") {\n    mg_leave(g_sync_, %" PRId64 ", (int *)(smem + %" PRId64 "));\n    break;\n    }\n"
                      "    mg_task_wait(g_sync_, %s_dep + %s_dep_at[t_], %s_dep_at[t_ + 1] - %s_dep_at[t_]);\n",
              smem, total, total, smem, kname, kname, kname, kname);
    task_dispatch(KE);
    sb_puts(KE->sb, "    mg_task_done(g_sync_ + 1 + t_);\n    }\n}\n\n");
    unsigned grid[3] = {(unsigned)blocks, 1, 1};
    cg_record_launch(KE, out, kname, last, &ps, grid, (unsigned)k0->threads, smem + 16);
    cg_launch *l = &out->launches[out->n_launches - 1];
    out->sync_buf = out->n_bufs++;
    out->buf_bytes[out->sync_buf] = 4 * (total + 2), out->buf_alias[out->sync_buf] = -1;
    l->args[l->n_args++] = out->sync_buf;
}

/* ---- cluster fusion (op_plan.clustered, CUDA) ----
 * One kernel: kernel 1's block program, a cluster barrier (mg_cluster_sync: kernel 1's stores
 * of the whole cluster are visible after it, global memory included), then kernel 2's block
 * program for block cluster_map[i] (a table in the source, i the block's linear index), which
 * reads only what its own cluster wrote (opt/launch.c checked it). Launched over kernel 1's
 * grid in clusters (cg_launch.cluster). Both bodies share shared memory from offset 0: the
 * barrier also ends kernel 1's use of it. */
void cg_cuda_emit_clustered(em *KE, cg_program *out, arena *a) {
    const op_plan *p = KE->p;
    const ir_graph *kg = p->g;
    const char **gn = KE->names;
    params ps = {0};
    int k1, k2, nk;
    union_params(p, &ps, &k1, &k2, &nk);
    const int *g1 = kg->nodes[k1].body->grid, *g2 = kg->nodes[k2].body->grid;
    int n = g1[0] * g1[1] * g1[2];
    int64_t smem = p->kernels[0].smem > p->kernels[1].smem ? p->kernels[0].smem : p->kernels[1].smem;
    char kname[64];
    snprintf(kname, sizeof kname, "kc%d_%s", k2, gn[k2] + 2);
    sb_printf(KE->sb, "/* which block of kernel %d each block runs after the cluster barrier */\n"
                      "static __device__ const unsigned short %s_map[%d] = {", k2, kname, n);
    for (int i = 0; i < n; i++) sb_printf(KE->sb, "%s%d", i ? (i % 32 ? ", " : ",\n    ") : "", p->cluster_map[i]);
    sb_puts(KE->sb, "};\n");
    sb_printf(KE->sb, "/* kernels %d and %d as one: clusters of [%d, %d, %d] blocks */\n", k1, k2, p->cluster[0],
              p->cluster[1], p->cluster[2]);
    sb_printf(KE->sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(", p->kernels[0].threads, kname);
    cg_param_list(KE, gn, &ps, 1);
    sb_puts(KE->sb, ") {\n    extern __shared__ __align__(16) unsigned char smem[];\n");
    for (int q = 0; q < 2 && !KE->rc; q++) {
        int knode = q ? k2 : k1;
        em E;
        if (cg_block_em(KE, knode, a, &E)) return;
        params kp = {0};
        cg_block_params(p, knode, &kp);
        cg_block_comment(&E, knode);
        if (!q) sb_puts(E.sb, "    {\n    const int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;\n");
        else
            sb_printf(E.sb, "    mg_cluster_sync(); /* the cluster's results of kernel %d */\n    {\n"
                            "    const int t_ = %s_map[blockIdx.x + %d * (blockIdx.y + %d * blockIdx.z)];\n"
                            "    const int bx = t_ %% %d, by = t_ / %d %% %d, bz = t_ / %d;\n",
                      k1, kname, g1[0], g1[1], g2[0], g2[0], g2[1], g2[0] * g2[1]);
        cg_block_body(&E, gn, knode, &kp);
        sb_puts(E.sb, "    }\n");
        if (E.rc) KE->rc = E.rc;
    }
    sb_puts(KE->sb, "}\n\n");
    unsigned grid[3] = {(unsigned)g1[0], (unsigned)g1[1], (unsigned)g1[2]};
    cg_record_launch(KE, out, kname, k2, &ps, grid, (unsigned)p->kernels[0].threads, smem);
    for (int d = 0; d < 3; d++) out->launches[out->n_launches - 1].cluster[d] = (unsigned)p->cluster[d];
}
