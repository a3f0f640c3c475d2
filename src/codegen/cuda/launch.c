/* codegen/cuda/launch: how a CUDA program's blocks are launched: one kernel a graph-defined
 * operator (cg_cuda_blocks), or several block kernels as one launch: persistent (the
 * megakernel: tasks taken by ticket, by a static schedule, or from a scheduler block's queues;
 * docs/megakernel.md) or cluster fusion (a split's combine inside the splits' thread-block
 * clusters). Device side: cuda/lib/task.cuh, queue.cuh. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cg_internal.h"

/* A block's range of program input x (kernel input read by iterator j) into L2: every
 * row of the elements op_block_range gives (all for-loop iterations), clipped to the tensor,
 * one prefetch.global.L2 a 128-byte line, rows shared over the threads. With share < 1 only
 * that share of the range, the first for-loop iterations' (nothing when the tile does not
 * move with the loop). Nothing when the input has no dim of stride 1. *bytes: the range's
 * size in bytes; with emit 0 only that is computed. */
static void prefetch_input(em *E, int j, const char *gname, int x, double share, int emit, int64_t *size) {
    const ir_node *n = &E->g->nodes[j];
    const ir_shape *ts = &E->p->g->nodes[x].shape;
    const int64_t *fst = E->p->kst[x];
    int64_t td[4], fd[4], ext[4], chunk[4];
    op_pad4(&n->shape, td);
    op_pad4(ts, fd);
    int pad = 4 - n->shape.ndim, c = -1;
    int64_t bytes = (int64_t)base_dtype_size(E->p->store[x]);
    for (int d = 0; d < 4; d++) {
        chunk[d] = td[d] * (n->fmap >= 0 && n->fmap + pad == d ? E->k->body->forloop : 1);
        ext[d] = chunk[d] < fd[d] ? chunk[d] : fd[d];
        if (fst[d] == 1 && fd[d] > 1) c = d;
        bytes *= ext[d];
    }
    *size = c < 0 ? 0 : bytes;
    if (c < 0 || !emit) return;
    if (share < 1) { /* the first iterations' share */
        if (n->fmap < 0) return;
        int f = n->fmap + pad;
        ext[f] = (int64_t)((double)ext[f] * share);
        if (ext[f] < 1) return;
    }
    static const char *bvar[3] = {"bx", "by", "bz"};
    sb_printf(E->sb, "    { /* %s: this block's tiles (the first iterations'), into L2 */\n", gname);
    for (int d = 0; d < 4; d++) { /* the range's first element in each dim */
        sb_printf(E->sb, "    const long long l%d_ = 0", d);
        for (int gd = 0; gd < 3; gd++)
            if (n->map[gd] >= 0 && n->map[gd] + pad == d) sb_printf(E->sb, " + (long long)%s * %" PRId64 "LL", bvar[gd], chunk[d]);
        sb_puts(E->sb, ";\n");
    }
    int64_t rows = 1;
    for (int d = 0; d < 4; d++) rows *= d == c ? 1 : ext[d];
    sb_printf(E->sb, "    for (int r_ = threadIdx.x; r_ < %" PRId64 "; r_ += blockDim.x) {\n        int q_ = r_;\n", rows);
    sb_puts(E->sb, "        long long o_ = 0;\n        bool in_ = true;\n");
    for (int d = 3; d >= 0; d--) {
        if (d == c || ext[d] == 1) {
            if (d != c) sb_printf(E->sb, "        in_ = in_ && l%d_ < %" PRId64 "LL, o_ += l%d_ * %" PRId64 "LL;\n", d, fd[d], d, fst[d]);
            continue;
        }
        sb_printf(E->sb, "        { const long long i_ = l%d_ + q_ %% %" PRId64 "; q_ /= %" PRId64 "; in_ = in_ && i_ < %" PRId64
                         "LL; o_ += i_ * %" PRId64 "LL; }\n", d, ext[d], ext[d], fd[d], fst[d]);
    }
    sb_printf(E->sb, "        const long long n_ = %" PRId64 "LL - l%d_ < %" PRId64 "LL ? %" PRId64 "LL - l%d_ : %" PRId64 "LL;\n",
              fd[c], c, ext[c], fd[c], c, ext[c]);
    sb_printf(E->sb, "        if (in_ && n_ > 0) mg_prefetch_l2(%s + o_ + l%d_, n_ * (long long)sizeof(*%s));\n    }\n    }\n",
              gname, c, gname);
}

/* The bytes block kernel knode's blocks each prefetch (0: none, the program's first launch
 * included: nothing runs before it); with emit, also writes the prefetches. Each block gets
 * its share of half the L2 (the grid's blocks all prefetch), at most 1 MB. */
static int64_t prefetches(const em *E0, int knode, int emit, const char **gn) {
    em E = *E0;
    const op_plan *p = E.p;
    const ir_graph *kg = p->g;
    int first = 1;
    for (int i = 0; i < knode && first; i++) first = !cg_is_launch(p, i);
    if (first) return 0;
    E.g = kg->nodes[knode].body, E.k = &p->kernels[p->kern[knode]];
    const int *gr = E.g->grid;
    double budget = (double)mg_device_default()->l2_bytes / 2 / ((double)gr[0] * gr[1] * gr[2]);
    budget = budget < 1 << 20 ? budget : 1 << 20;
    int64_t total = 0, size;
    for (int pass = 0; pass < 1 + emit; pass++)
        for (int j = 0; j < E.g->n_nodes; j++) {
            if (E.g->nodes[j].op != IR_OP_ITER) continue;
            int x = kg->nodes[knode].in[E.g->nodes[j].index];
            if (kg->nodes[p->view[x] >= 0 ? p->view[x] : x].op != IR_OP_INPUT) continue;
            prefetch_input(&E, j, gn[x], x, total > budget ? budget / (double)total : 1, pass, &size);
            total += pass ? 0 : size;
        }
    return total;
}

/* The opening of a block kernel launched as a programmatic dependent. With opts.prefetch:
 * first this block's ranges of the program's inputs (the weights: no earlier kernel writes
 * them) into L2, then the wait for the previous kernel, then the signal that lets the next
 * kernel launch (its blocks then prefetch while this one runs: one kernel of lookahead,
 * never a chain of waiting grids). Signalling only before a kernel that prefetches measured
 * slower than signalling always (docs/notes/2026-11-27-s23.md). Without it just the wait. */
static void open_dependent(em *E, const char **gn, int knode) {
    const op_plan *p = E->p;
    if (p->opts.prefetch) prefetches(E, knode, 1, gn);
    sb_puts(E->sb, "    mg_grid_wait(); /* the previous kernel's results */\n");
    if (!p->opts.prefetch) return;
    int next = knode + 1; /* the next launch: a block kernel is let launch early */
    while (next < p->g->n_nodes && !cg_is_launch(p, next)) next++;
    if (next < p->g->n_nodes && p->g->nodes[next].op == IR_OP_KERNEL)
        sb_puts(E->sb, "    mg_grid_go(); /* the next kernel may launch */\n");
}

void cg_cuda_blocks(em *E, const char **gn, int knode, const params *ps) {
    /* TMA's 128-byte-swizzled stages sit at multiples of 1 KB from here (opt/memory.c) */
    sb_printf(E->sb, "    extern __shared__ __align__(%d) unsigned char smem[];\n"
                     "    const int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;\n", E->k->tma ? 1024 : 16);
    open_dependent(E, gn, knode);
    cg_block_body(E, gn, knode, ps);
}

/* ---- one kernel for several block kernels (persistent launch, cluster fusion) ---- */

/* The call arguments of ps, each followed by ", ". */
static void arg_list(em *E, const params *ps) {
    for (int i = 0; i < ps->n; i++) sb_printf(E->sb, "%s, ", E->names[ps->node[i]]);
}

/* Launch i's parameters: a graph-defined kernel's or a kernel-level operator's. */
static void launch_params(const op_plan *p, int i, params *ps) {
    if (p->g->nodes[i].op == IR_OP_KERNEL) cg_block_params(p, i, ps);
    else cg_op_params(p, i, ps);
}

/* The parameters of one kernel running every launch of the plan: every launch's outputs,
 * then what they read besides; *first: the first KERNEL node, *last the last launch, *nk the
 * launches. */

static void union_params(const op_plan *p, params *ps, int *first, int *last, int *nk) {
    const ir_graph *kg = p->g;
    *first = *last = -1, *nk = 0;
    for (int i = 0; i < kg->n_nodes; i++)
        if (cg_is_launch(p, i)) {
            params one = {0};
            launch_params(p, i, &one);
            for (int q = 0; q < one.n_out; q++) cg_add_param(ps, one.node[q]);
            if (kg->nodes[i].op == IR_OP_KERNEL) *first = *first < 0 ? i : *first;
            *last = i, ++*nk;
        }
    ps->n_out = ps->n;
    for (int i = 0; i < kg->n_nodes; i++)
        if (cg_is_launch(p, i)) {
            params one = {0};
            launch_params(p, i, &one);
            for (int q = one.n_out; q < one.n; q++) cg_add_param(ps, one.node[q]);
        }
}

/* ---- a persistent launch (op_plan.fused, CUDA) ----
 * One kernel runs every launch of the plan: a graph-defined kernel's blocks and a kernel-level
 * operator's pieces (op_elem_tasks) are tasks, numbered as the plan's task graph
 * (opt/taskgraph.c). Each block takes tickets (mg_ticket: the next number, in the order asked)
 * until they run out, ticket t being task t; or, with the static schedule (opts.persist 2),
 * block b runs tasks b, b + G, ... on G co-resident blocks.
 * A task waits for exactly the tasks whose tiles it reads (mg_task_wait over its row of the
 * dependency tables in the source; a thread an entry, each reading a done flag or, for a whole
 * launch, its count) and sets its own flag when done (mg_task_done). With tickets no deadlock
 * whatever the number of resident blocks: a task waits only for tasks with smaller tickets,
 * taken by blocks already running; the static schedule needs every block resident (the
 * runtime launches only as many, cg_launch.coresident), and a watchdog ends any stall.
 * With opts.persist 3 the last block is a scheduler instead, handing each task, once every
 * task it waits for is done, to a worker block's queue (queue.cuh): the workers never wait.
 * Blocks: as many a multiprocessor as the widest kernel alone would put on one (GQA: 128
 * chain blocks, so one each on 132), so no two blocks of kernel 0 share a multiprocessor
 * that another has to itself (192 blocks, one a task, put two chains on some: GQA b=1 15.6
 * against 9.8 us unfused). The ticket, the flags, the leave count, the watchdog's words and
 * the launches' counts live in a buffer of their own (cg_program.sync_buf, task.cuh), zeroed
 * by the runtime once and by the last block to leave. Buffers written in the launch lose
 * __restrict__, so no load of them takes the read-only path, which does not see writes made
 * during the launch. */

/* Each graph-defined kernel's block program as a function of its block index, compiled on its
 * own (all bodies inlined into one function took 255 registers: GQA b=1 12.7 us, against
 * 12.4). */
static void task_functions(em *KE, arena *a) {
    const op_plan *p = KE->p;
    const ir_graph *kg = p->g;
    const char **gn = KE->names;
    sb_puts(KE->sb, "extern __shared__ __align__(16) unsigned char smem[]; /* every task's */\n");
    for (int knode = 0; knode < kg->n_nodes && !KE->rc; knode++) {
        if (!cg_is_launch(p, knode)) continue;
        if (kg->nodes[knode].op != IR_OP_KERNEL) { /* a kernel-level operator: task tb_ of its element loop */
            params kp = {0};
            cg_op_params(p, knode, &kp);
            char lb[128];
            sb_printf(KE->sb, "/* %s = %s (node %d): kernel-level operator, %" PRId64 " tasks */\n"
                              "static __device__ __noinline__ void t%d_%s(", ir_node_label(kg, knode, lb, sizeof lb),
                      ir_ops[kg->nodes[knode].op].name, knode, op_elem_tasks(&kg->nodes[knode]), knode, gn[knode] + 2);
            cg_param_list(KE, gn, &kp, 1);
            sb_printf(KE->sb, ", const int tb_) {\n    const int tn_ = %" PRId64 ";\n", op_elem_tasks(&kg->nodes[knode]));
            KE->op_task = 1;
            cg_op_body(KE, knode);
            KE->op_task = 0;
            sb_puts(KE->sb, "}\n\n");
            continue;
        }
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
    int q = 0, L = 0;
    for (int knode = 0; knode < kg->n_nodes; knode++) {
        if (!cg_is_launch(p, knode)) continue;
        if (kg->nodes[knode].op != IR_OP_KERNEL) {
            int64_t n = op_elem_tasks(&kg->nodes[knode]);
            params kp = {0};
            cg_op_params(p, knode, &kp);
            sb_printf(KE->sb, "    %sif (t_ < %" PRId64 ") {\n    L_ = %d;\n    t%d_%s(", start ? "else " : "", start + n, L,
                      knode, gn[knode] + 2);
            arg_list(KE, &kp);
            sb_printf(KE->sb, "t_ - %" PRId64 ");\n    }\n", start);
            start += n, L++;
            continue;
        }
        const ir_graph *b = p->kernels[q].body;
        int64_t n = (int64_t)b->grid[0] * b->grid[1] * b->grid[2];
        sb_printf(KE->sb, "    %sif (t_ < %" PRId64 ") {\n    L_ = %d;\n", start ? "else " : "", start + n, L++);
        params kp = {0};
        cg_block_params(p, knode, &kp);
        sb_printf(KE->sb, "    const int tk_ = t_ - %" PRId64 ";\n    t%d_%s(", start, knode, gn[knode] + 2);
        arg_list(KE, &kp);
        sb_printf(KE->sb, "tk_ %% %d, tk_ / %d %% %d, tk_ / %d);\n    }\n", b->grid[0], b->grid[0], b->grid[1],
                  b->grid[0] * b->grid[1]);
        start += n, q++;
    }
}

enum { CG_QUEUE = 4 }; /* a worker's queue holds this many tasks (queue.cuh's MG_Q) */

/* `static __device__ const int K_name[n] = {v...};` (one 0 when n is 0) */
static void table(strbuf *sb, const char *k, const char *name, const int *v, int64_t n) {
    sb_printf(sb, "static __device__ const int %s_%s[%" PRId64 "] = {", k, name, n ? n : 1);
    for (int64_t i = 0; i < n; i++) sb_printf(sb, "%s%d", i ? (i % 32 ? ", " : ",\n    ") : "", v[i]);
    sb_puts(sb, n ? "};\n" : "0};\n");
}
static void table64(strbuf *sb, const char *k, const char *name, const int64_t *v, int64_t n) {
    sb_printf(sb, "static __device__ const int %s_%s[%" PRId64 "] = {", k, name, n ? n : 1);
    for (int64_t i = 0; i < n; i++) sb_printf(sb, "%s%" PRId64, i ? (i % 32 ? ", " : ",\n    ") : "", v[i]);
    sb_puts(sb, n ? "};\n" : "0};\n");
}

/* The scheduler's tables (queue.cuh, --queues), from the entries ent[at[t] .. at[t + 1]) of
 * each task t: init, the tasks with none; succ[succ_at[d] ..), the tasks with an entry d
 * (task d); lsucc[lsucc_at[L] ..), those with an entry -1 - L (all of launch L). Returns
 * init's length. */
static int successors(em *KE, const char *kname, const op_taskgraph *tg, const int64_t *at, const int *ent) {
    int n = tg->n_tasks, nl = tg->n_launches;
    int64_t m = at[n];
    int64_t *sa = base_alloc(((size_t)n + 1) * sizeof *sa), *la = base_alloc(((size_t)nl + 1) * sizeof *la);
    int *sv = base_alloc(((size_t)m + 1) * sizeof *sv), *lv = base_alloc(((size_t)m + 1) * sizeof *lv);
    int *init = base_alloc(((size_t)n + 1) * sizeof *init), n0 = 0;
    if (!sa || !la || !sv || !lv || !init) {
        KE->rc = ctx_err(KE->ctx, MG_ERR_NOMEM, "out of memory");
    } else {
        memset(sa, 0, ((size_t)n + 1) * sizeof *sa), memset(la, 0, ((size_t)nl + 1) * sizeof *la);
        for (int64_t e = 0; e < m; e++) ent[e] >= 0 ? sa[ent[e] + 1]++ : la[-ent[e]]++; /* -1 - L: la[L + 1] */
        for (int i = 0; i < n; i++) sa[i + 1] += sa[i];
        for (int L = 0; L < nl; L++) la[L + 1] += la[L];
        for (int t = 0; t < n; t++) { /* in task order: each list sorted */
            if (at[t] == at[t + 1]) init[n0++] = t;
            for (int64_t e = at[t]; e < at[t + 1]; e++) ent[e] >= 0 ? (sv[sa[ent[e]]++] = t) : (lv[la[-1 - ent[e]]++] = t);
        }
        for (int i = n; i > 0; i--) sa[i] = sa[i - 1]; /* back to the starts */
        for (int L = nl; L > 0; L--) la[L] = la[L - 1];
        sa[0] = la[0] = 0;
        sb_printf(KE->sb, "/* the scheduler's: the tasks waiting for nothing, and for each task and launch the tasks "
                          "waiting for it */\n");
        table(KE->sb, kname, "init", init, n0);
        table64(KE->sb, kname, "succ_at", sa, n + 1);
        table(KE->sb, kname, "succ", sv, sa[n]);
        table64(KE->sb, kname, "lsucc_at", la, nl + 1);
        table(KE->sb, kname, "lsucc", lv, la[nl]);
    }
    base_free(sa), base_free(la), base_free(sv), base_free(lv), base_free(init);
    return n0;
}

/* The persistent launch's watchdog (task.cuh): a wait for one flag gives up after this many
 * milliseconds, MUGEN_WATCHDOG_MS (docs/env.md; 1 to 600000, default 2000). */
static long long cg_watchdog_ms(void) {
    const char *e = getenv("MUGEN_WATCHDOG_MS");
    long long v = e && *e ? atoll(e) : 2000;
    return v < 1 ? 1 : v > 600000 ? 600000 : v;
}

/* The persistent launch (above) of every launch of the plan, its counters a buffer of their
 * own (out->sync_buf). */
void cg_cuda_emit_fused(em *KE, cg_program *out, arena *a) {
    const op_plan *p = KE->p;
    const char **gn = KE->names;
    params ps = {0};
    int first, last, nk;
    union_params(p, &ps, &first, &last, &nk);
    if (ps.n + 1 >= CG_MAX_ARGS) {
        KE->rc = ctx_err(KE->ctx, MG_ERR_UNSUPPORTED, "codegen: a persistent launch of %d buffers (at most %d)", ps.n,
                         CG_MAX_ARGS - 2);
        return;
    }
    cg_uses(KE, p->opts.persist == 3 ? CG_LIB_TASK | CG_LIB_QUEUE : CG_LIB_TASK);
    const op_kernel *k0 = &p->kernels[p->kern[first]];
    int64_t smem = 0, total = 0, widest = 1;
    for (int q = 0; q < p->n_kernels; q++) {
        const ir_graph *b = p->kernels[q].body;
        int64_t n = (int64_t)b->grid[0] * b->grid[1] * b->grid[2];
        smem = p->kernels[q].smem > smem ? p->kernels[q].smem : smem;
        total += n, widest = n > widest ? n : widest;
    }
    for (int i = 0; i < p->g->n_nodes; i++) /* kernel-level operators: their element loops' blocks */
        if (cg_is_launch(p, i) && p->g->nodes[i].op != IR_OP_KERNEL) total += op_elem_tasks(&p->g->nodes[i]);
    /* blocks: as many a multiprocessor as the widest kernel alone would put on one */
    int64_t sm = p->n_sm > 0 ? p->n_sm : 1, blocks = sm * ((widest + sm - 1) / sm);
    blocks = blocks < total ? blocks : total;
    op_taskgraph *tg = NULL;
    if ((KE->rc = op_taskgraph_new(p, KE->ctx, &tg))) return;
    if (total >= 1 << 30) { /* task.cuh's tickets jump by 2^30 when the watchdog gives up */
        op_taskgraph_free(tg);
        KE->rc = ctx_err(KE->ctx, MG_ERR_LIMIT, "codegen: a persistent launch of %" PRId64 " tasks (at most 2^30)", total);
        return;
    }
    if (tg->n_launches != nk || tg->n_tasks != total) { /* the task graph's launches are codegen's */
        op_taskgraph_free(tg);
        KE->rc = ctx_err(KE->ctx, MG_ERR_UNSUPPORTED, "codegen: a persistent launch of %d kernels has %d launches as tasks",
                         nk, tg->n_launches);
        return;
    }
    task_functions(KE, a);
    if (KE->rc) {
        op_taskgraph_free(tg);
        return;
    }
    char kname[64];
    snprintf(kname, sizeof kname, "kp%d_%s", last, gn[last] + 2);
    /* the task graph's dependencies: task t's are dep[dep_at[t] .. dep_at[t + 1]), every task of
     * a launch of several (a whole-launch wait) as one entry -1 - L: its count (task.cuh) */
    int64_t *at = base_alloc(((size_t)tg->n_tasks + 1) * sizeof *at), m = 0;
    int *ent = base_alloc(((size_t)tg->n_deps + 1) * sizeof *ent);
    if (!at || !ent) {
        base_free(at), base_free(ent), op_taskgraph_free(tg);
        KE->rc = ctx_err(KE->ctx, MG_ERR_NOMEM, "out of memory");
        return;
    }
    for (int t = 0; t < tg->n_tasks; t++) {
        at[t] = m;
        for (int64_t e = tg->dep_at[t]; e < tg->dep_at[t + 1];) {
            int d = tg->dep[e], L = tg->launch[d], size = tg->first[L + 1] - tg->first[L];
            int whole = size > 1 && d == tg->first[L] && e + size <= tg->dep_at[t + 1] &&
                        tg->dep[e + size - 1] == tg->first[L + 1] - 1; /* sorted and distinct: all of L */
            ent[m++] = whole ? -1 - L : d;
            e += whole ? size : 1;
        }
    }
    at[tg->n_tasks] = m;
    sb_printf(KE->sb, "/* the tasks' dependencies (opt/taskgraph.c): %" PRId64 " for %d tasks, %" PRId64
                      " entries (a whole launch one) */\n", tg->n_deps, tg->n_tasks, m);
    table64(KE->sb, kname, "dep_at", at, tg->n_tasks + 1);
    table(KE->sb, kname, "dep", ent, m);
    int n0 = p->opts.persist == 3 ? successors(KE, kname, tg, at, ent) : 0;
    base_free(at), base_free(ent);
    sb_printf(KE->sb, "static __device__ const int %s_lsize[%d] = {", kname, tg->n_launches);
    for (int L = 0; L < tg->n_launches; L++) sb_printf(KE->sb, "%s%d", L ? (L % 32 ? ", " : ",\n    ") : "", tg->first[L + 1] - tg->first[L]);
    sb_puts(KE->sb, "};\n");
    int nl = tg->n_launches;
    out->task_first = base_alloc(((size_t)tg->n_launches + 1) * sizeof *out->task_first);
    out->task_node = base_alloc(((size_t)tg->n_launches + 1) * sizeof *out->task_node);
    if (out->task_first && out->task_node) {
        out->n_task_launches = tg->n_launches;
        memcpy(out->task_first, tg->first, ((size_t)tg->n_launches + 1) * sizeof *tg->first);
        memcpy(out->task_node, tg->node, (size_t)tg->n_launches * sizeof *tg->node);
    } else KE->rc = ctx_err(KE->ctx, MG_ERR_NOMEM, "out of memory");
    op_taskgraph_free(tg);
    if (KE->rc) return;
    sb_printf(KE->sb, "/* one persistent launch of %d launches' tasks: %" PRId64 " blocks of %d threads take %" PRId64
                      " tasks */\n", nk, blocks, k0->threads, total);
    /* the buffers as one struct by value (cg_launch.packed), named again inside */
    sb_printf(KE->sb, "struct %s_args {\n    ", kname);
    for (int i = 0; i < ps.n; i++) {
        params one = {.n = 1, .node = {ps.node[i]}, .n_out = i < ps.n_out};
        cg_param_list(KE, gn, &one, 1);
        sb_puts(KE->sb, i + 1 < ps.n ? ";\n    " : ";\n};\n");
    }
    sb_printf(KE->sb, "extern \"C\" __global__ void __launch_bounds__(%d) %s(const %s_args a_, unsigned *__restrict__ g_sync_) {\n",
              k0->threads, kname, kname);
    for (int i = 0; i < ps.n; i++) {
        params one = {.n = 1, .node = {ps.node[i]}, .n_out = i < ps.n_out};
        sb_puts(KE->sb, "    ");
        cg_param_list(KE, gn, &one, 1);
        sb_printf(KE->sb, " = a_.%s;\n", gn[ps.node[i]]);
    }
    int stat = p->opts.persist == 2; /* a static schedule: block b runs tasks b, b + G, ... */
    int queues = p->opts.persist == 3; /* a scheduler block hands ready tasks to the workers' queues */
    long long wd = (long long)cg_watchdog_ms() * 1000000;
    /* the queues' words (queue.cuh mg_queues) from q0, for `blocks` workers: heads, tails, got,
     * the ready list and its length (zeroed when the launch ends), the queues' entries */
    int64_t q0 = total + 5 + nl, wm = blocks, zq = 2 * wm + 2 * total + 1;
    if (queues) { /* the scheduler's shared memory: 4 wm + 34 ints */
        int64_t need = ((4 * wm + 34) * 4 + 15) / 16 * 16;
        smem = smem > need ? smem : need;
    }
    char leave[128];
    if (queues) snprintf(leave, sizeof leave, "mg_leave(g_sync_, %" PRId64 ", %d, slot_, %" PRId64 ", %" PRId64 ")", total, nl, q0, zq);
    else snprintf(leave, sizeof leave, "mg_leave(g_sync_, %" PRId64 ", %d, slot_)", total, nl);
    sb_printf(KE->sb, "    int *const slot_ = (int *)(smem + %" PRId64 ");\n", smem);
    /* MUGEN_TRACE (docs/env.md): each task's times after the counters, 8-byte aligned */
    const char *te = getenv("MUGEN_TRACE");
    int trace = te && *te;
    int64_t tr0 = (q0 + (queues ? zq + wm * CG_QUEUE : 0) + 1) / 2 * 2;
    const char *s0 = trace ? "    const unsigned long long s0_ = mg_clock_ns();\n" : "";
    const char *s1 = trace ? "    const unsigned long long s1_ = mg_clock_ns();\n" : "";
    if (queues) {
        sb_printf(KE->sb, "    const mg_queues Q_ = {%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "};\n",
                  q0, q0 + wm, q0 + 2 * wm, q0 + 2 * wm + total, q0 + 2 * wm + 2 * total, q0 + zq, wm);
        sb_printf(KE->sb, "    if (blockIdx.x == gridDim.x - 1) { /* the scheduler */\n"
                          "    mg_schedule(g_sync_, %" PRId64 ", Q_, %s_init, %d, %s_dep_at, %s_dep, %s_lsize, %lldull, (int *)smem);\n"
                          "    %s;\n    return;\n    }\n    if (threadIdx.x == 0) slot_[2] = 0; /* the queue's tail */\n"
                          "    for (;;) {\n%s    const int t_ = mg_queue_pop(g_sync_, %" PRId64 ", Q_, slot_);\n"
                          "    if (t_ < 0) {\n    %s;\n    break;\n    }\n%s    int L_ = 0;\n",
                  total, kname, n0, kname, kname, kname, wd, leave, s0, total, leave, s1);
    } else {
        sb_puts(KE->sb, stat ? "    for (int t_ = blockIdx.x;; t_ += gridDim.x) {\n"
                             : "    for (;;) {\n    const int t_ = mg_ticket(g_sync_, slot_);\n");
        sb_printf(KE->sb, "%s    if (t_ >= %" PRId64 " || mg_task_wait(g_sync_, %" PRId64 ", t_, %s_dep + %s_dep_at[t_], "
                          "%s_dep_at[t_ + 1] - %s_dep_at[t_], %s_lsize, %lldull)) {\n    %s;\n"
                          "    break;\n    }\n%s    int L_ = 0;\n",
                  s0, total, total, kname, kname, kname, kname, kname, wd, leave, s1);
    }
    task_dispatch(KE);
    if (queues)
        sb_printf(KE->sb, "    mg_task_done(g_sync_, %" PRId64 ", t_, L_, %s_lsize, Q_, %s_dep_at, %s_succ_at, %s_succ, %s_lsucc_at, "
                          "%s_lsucc, slot_);\n", total, kname, kname, kname, kname, kname, kname);
    else sb_printf(KE->sb, "    mg_task_done(g_sync_, %" PRId64 ", t_, L_);\n", total);
    if (trace)
        sb_printf(KE->sb, "    if (threadIdx.x == 0) mg_trace((unsigned long long *)(g_sync_ + %" PRId64 "), t_, s0_, s1_);\n", tr0);
    sb_puts(KE->sb, "    }\n}\n\n");
    unsigned grid[3] = {(unsigned)(blocks + queues), 1, 1};
    cg_record_launch(KE, out, kname, last, &ps, grid, (unsigned)k0->threads, smem + 16);
    cg_launch *l = &out->launches[out->n_launches - 1];
    l->coresident = stat || queues; /* the runtime launches as many as are resident, at most the grid */
    l->packed = 1;
    out->sync_buf = out->n_bufs++;
    out->buf_bytes[out->sync_buf] = trace ? 4 * tr0 + 32 * total : 4 * (q0 + (queues ? zq + wm * CG_QUEUE : 0));
    out->buf_alias[out->sync_buf] = -1, out->trace_at = trace ? 4 * tr0 : -1;
    out->n_tasks = (int)total;
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
