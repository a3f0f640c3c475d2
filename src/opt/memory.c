/* opt/memory: shared-memory planning. Live ranges in barrier intervals, each tensor at the
 * lowest offset no tensor live at the same time holds (reuse), and the software pipeline's
 * depth: the deepest that still fits. */
#include "opt_internal.h"

#ifndef OP_MAX_STAGES
#define OP_MAX_STAGES 4
#endif
#ifndef OP_PAIR_MIN_STAGES
#define OP_PAIR_MIN_STAGES 2 /* the shallowest pipeline two blocks an SM take (each block 1 request ahead) */
#endif
enum { MAX_STAGES = OP_MAX_STAGES }; /* deepest software pipeline tried for iterator tiles */
enum { MAX_TMA_STAGES = 6 }; /* the same for TMA-loaded tiles (op_kernel.tma): with one stage
                              * read by the wgmmas still in flight, 4 are ahead of the loop
                              * (bench/micro/gemm/wg_gemm.cu: 5-6 stages fastest) */

/* Level at which node j is last read. A value made before the loop and read inside it must
 * survive every iteration, so it lives to the loop's last level. */
static void live_ranges(op_kernel *k, const int *ph, const int *level, int loop_first, int loop_last) {
    const ir_graph *b = k->body;
    int n = b->n_nodes;
    int *at = base_alloc((size_t)n * sizeof *at); /* level where node i's value is computed */
    if (!at) return;
    /* a node with no step is computed wherever it is read: the latest of its readers (an
     * inlined one-iteration accumulator can have several) */
    for (int i = n - 1; i >= 0; i--) {
        at[i] = ph[i] >= 0 ? level[i] : 0;
        if (ph[i] >= 0) continue;
        for (int j = i + 1; j < n; j++)
            for (int a = 0; a < b->nodes[j].n_in; a++)
                if (b->nodes[j].in[a] == i && at[j] > at[i]) at[i] = at[j];
    }
    for (int i = 0; i < n; i++) {
        op_tensor *t = &k->t[i];
        t->level = t->last = at[i];
        /* zeroed in the prologue; pipelined tiles are loaded from the kernel's start */
        if (b->nodes[i].op == IR_OP_ACCUM || t->pipe.stages) t->level = 0;
    }
    /* a register accumulator is stored after the loop's last barrier */
    int after = loop_last + 1;
    for (int j = 0; j < n; j++)
        for (int a = 0; a < b->nodes[j].n_in; a++) {
            op_tensor *t = &k->t[b->nodes[j].in[a]];
            int l = at[j];
            if (t->level < loop_first && l >= loop_first && l <= loop_last) l = loop_last;
            if (l > t->last) t->last = l;
        }
    for (int i = 0; i < n; i++) {
        op_tensor *t = &k->t[i];
        if (b->nodes[i].op == IR_OP_ACCUM && t->fuse.regacc >= 0) {
            t->level = after;
            if (t->last < after) t->last = after;
        } else if ((b->nodes[i].op == IR_OP_ACCUM || t->pipe.stages) && t->last < loop_last) t->last = loop_last;
    }
    base_free(at);
}

static int overlap(const op_tensor *a, const op_tensor *b) {
    return !(a->last < b->level || b->last < a->level);
}

/* First fit, largest first: each tensor goes at the lowest 16-byte aligned offset where it
 * does not collide with a placed tensor whose live range overlaps its own (all overlap when
 * reuse is off). */
static int64_t place(op_kernel *k, int reuse) {
    int n = k->body->n_nodes, m = 0;
    int *ord = base_alloc((size_t)n * sizeof *ord + 1);
    if (!ord) return -1;
    for (int i = 0; i < n; i++)
        if (k->t[i].mat) ord[m++] = i;
    for (int a = 1; a < m; a++) /* insertion sort by bytes, descending; stable */
        for (int c = a; c > 0 && k->t[ord[c]].bytes > k->t[ord[c - 1]].bytes; c--) {
            int tmp = ord[c];
            ord[c] = ord[c - 1], ord[c - 1] = tmp;
        }
    int64_t top = 0;
    for (int a = 0; a < m; a++) {
        op_tensor *t = &k->t[ord[a]];
        int64_t off = 0;
        const int64_t al = t->tc.tma ? 1024 : 1; /* TMA's 128-byte swizzle repeats every 1 KB */
        for (int moved = 1; moved;) {
            moved = 0;
            for (int c = 0; c < a; c++) {
                const op_tensor *u = &k->t[ord[c]];
                if ((reuse && !overlap(t, u)) || off >= u->off + u->bytes || u->off >= off + t->bytes)
                    continue;
                off = (u->off + u->bytes + al - 1) / al * al, moved = 1;
            }
        }
        t->off = off;
        if (off + t->bytes > top) top = off + t->bytes;
    }
    base_free(ord);
    return top;
}

/* One stage's elements of each iterator tile, taken before the stages multiply its bytes. */
void op_pipe_init(op_kernel *k) {
    for (int i = 0; i < k->body->n_nodes; i++)
        if (k->body->nodes[i].op == IR_OP_ITER)
            k->t[i].pipe.elems = k->t[i].bytes / (int64_t)base_dtype_size(k->t[i].store);
}

/* st stages for each stored iterator whose tile moves with the loop (none when st is 0). */
static void set_stages(op_kernel *k, int st) {
    const ir_graph *b = k->body;
    k->stages = 0;
    for (int i = 0; i < b->n_nodes; i++) {
        op_tensor *t = &k->t[i];
        if (b->nodes[i].op != IR_OP_ITER) continue;
        t->pipe.stages = t->mat && st && b->nodes[i].fmap >= 0 ? st : 0;
        int64_t copies = t->pipe.stages ? t->pipe.stages : 1;
        t->bytes = t->pipe.elems * (int64_t)base_dtype_size(t->store) * copies;
        if (t->pipe.stages) k->stages = st;
    }
}

/* Iterators whose tiles move get the deepest pipeline (up to MAX_STAGES, at most the trip
 * count; one stage with o->pipeline off) that fits in `limit` bytes, else one stage; `stages`
 * > 0 (a forced schedule, opt/space.c) that depth as it is. */
void op_place_stages(op_kernel *k, const int *ph, const int *level, const op_opts *o,
                     int64_t limit, int stages) {
    const ir_graph *b = k->body;
    int has_loop = k->loop_end > k->loop_begin;
    int loop_first = has_loop ? level[k->step[k->loop_begin]] : 0;
    int loop_last = has_loop ? level[k->step[k->loop_end - 1]] : 0;
    int cap = k->tma ? MAX_TMA_STAGES : MAX_STAGES;
    int smax = !has_loop || b->forloop < 2 ? 0
               : !o->pipeline              ? 1
               : b->forloop < cap          ? (int)b->forloop
                                           : cap;
    if (stages > 0) { /* forced: that depth wherever it lands */
        set_stages(k, has_loop && b->forloop >= 2 ? stages : 0);
        live_ranges(k, ph, level, loop_first, loop_last);
        k->smem = place(k, o->reuse);
        return;
    }
    /* two blocks an SM (k->min_blocks): each gets half of it less the 1 KB the hardware keeps a
     * block (an SM has the opt-in limit plus 1 KB), with at least OP_PAIR_MIN_STAGES stages (2:
     * one request ahead, the other block's products covering the wait); else one block */
    int64_t full = limit - (k->tma ? 8 * MAX_TMA_STAGES : 0); /* the stages' mbarriers, placed after (plan.c) */
    int64_t half = (limit + 1024) / 2 - 1024 - (k->tma ? 8 * MAX_TMA_STAGES : 0);
    for (int pair = k->min_blocks > 1; pair >= 0; pair--) {
        const int64_t lim = pair ? half : full;
        for (int st = smax;; st--) {
            set_stages(k, st);
            live_ranges(k, ph, level, loop_first, loop_last);
            k->smem = place(k, o->reuse);
            if (k->smem < 0 || k->smem <= lim || st <= 1) break;
        }
        if (!pair || (k->smem >= 0 && k->smem <= lim && k->stages >= OP_PAIR_MIN_STAGES)) break;
        k->min_blocks = 1;
    }
}

/* Moves the pipelined iterators out of the loop's steps into load[], puts the barrier after
 * the wait for them before the loop's first step, and recounts the barriers. Splitting a
 * barrier interval only shortens live ranges, so the memory plan made before stays valid. */
void op_pipeline_steps(op_kernel *k) {
    int m = 0, begin = k->loop_begin, end = k->loop_end;
    for (int s = 0; s < k->n_steps; s++) {
        int i = k->step[s];
        if (k->t[i].pipe.stages) {
            k->load[k->n_loads++] = i;
            begin -= s < k->loop_begin, end -= s < k->loop_end;
            continue;
        }
        k->step[m] = i, k->sync[m] = k->sync[s], m++;
    }
    k->n_steps = m, k->loop_begin = begin, k->loop_end = end;
    if (begin < end) k->sync[begin] = 1;
    k->n_barriers = 2 + k->post_sync + k->cvt_sync;
    for (int s = 0; s < m; s++) k->n_barriers += k->sync[s];
}
