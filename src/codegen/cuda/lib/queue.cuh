/* A persistent launch with a scheduler block and the workers' queues (codegen's third
 * schedule, --queues; after task.cuh). The launch's last block is the scheduler, the others
 * workers; the words from sync[q] on (a mg_queues: offsets, wm the most workers codegen
 * planned for):
 *   head[w], tail[w]  worker w's queue: a ring of MG_Q task numbers (entry[w MG_Q ..]); only
 *                     the scheduler writes the head (tasks handed), only the worker the tail
 *                     (tasks taken): single producer, single consumer, no lock;
 *   got[t]            how many of task t's dependency entries are met (an event counter);
 *   ready[i], rtail   the tasks whose entries are all met, in the order they became so (+1;
 *                     0: not yet written): a worker finishing a task counts it into each
 *                     waiting task's got (atom.acq_rel) and appends the task it completes
 *                     (atomicAdd on rtail, st.release of the number); the scheduler reads
 *                     them in order and hands them out.
 * So a worker never waits for a dependency, and the scheduler never reads a dependency list:
 * the finishing task's successors (succ, and lsucc for a whole launch's waiters when its
 * count completes) are codegen's tables. Ordering: the finishing block's stores, its
 * barrier and fence, the release of got, the acquire-release of the last increment, the
 * release of ready[i], the scheduler's read and fence, its fence before the head's store,
 * the worker's acquire of the head and barrier (docs/megakernel.md). */
#define MG_Q 4
struct mg_queues {
    int head, tail, got, ready, rtail, entry, wm;
};
MG_DI unsigned mg_ld_rlx(const unsigned *p) {
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
MG_DI void mg_st_rel(unsigned *p, unsigned v) { asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }
MG_DI void mg_fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
/* Worker blockIdx.x's next task from its queue, -1 to leave (or -2: another block gave up);
 * slot[2] holds its tail (thread 0's, zeroed at the start). */
MG_DI int mg_queue_pop(unsigned *sync, int n, const mg_queues &Q, int *slot) {
    const int w = blockIdx.x;
    if (threadIdx.x == 0) {
        const unsigned tail = (unsigned)slot[2];
        for (int spin = 0;; spin++) {
            if (mg_ld_acq(sync + Q.head + w) != tail) {
                slot[0] = (int)*(volatile unsigned *)(sync + Q.entry + w * MG_Q + tail % MG_Q);
                slot[2] = (int)(tail + 1u);
                mg_st_rel(sync + Q.tail + w, tail + 1u); /* the entry is read: its place is free */
                break;
            }
            if ((spin & 63) == 63 && *(volatile unsigned *)&sync[4 + n]) {
                slot[0] = -2;
                break;
            }
            __nanosleep(32);
        }
    }
    __syncthreads();
    return slot[0];
}
/* One more of task s's m dependency entries met; the last appends s to the ready list. */
MG_DI void mg_entry_met(unsigned *sync, const mg_queues &Q, int s, int m) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(sync + Q.got + s) : "memory");
    if (old + 1u == (unsigned)m) mg_st_rel(sync + Q.ready + atomicAdd(sync + Q.rtail, 1u), (unsigned)s + 1u);
}
/* After task t's (of launch L) last store, with the scheduler: mg_task_done's flag and count,
 * then an entry met for each task waiting for t (succ[succ_at[t] ..)) and, when t completes
 * its launch, for each task waiting for the whole launch (lsucc[lsucc_at[L] ..)); slot[3]
 * passes that on. */
MG_DI void mg_task_done(unsigned *sync, int n, int t, int L, const int *lsize, const mg_queues &Q, const int *dep_at,
                        const int *succ_at, const int *succ, const int *lsucc_at, const int *lsucc, int *slot) {
    __syncthreads();
    if (threadIdx.x == 0) slot[3] = mg_publish(sync, n, t, L) == (unsigned)lsize[L];
    __syncthreads();
    __threadfence();
    for (int i = succ_at[t] + threadIdx.x; i < succ_at[t + 1]; i += blockDim.x) {
        const int s = succ[i];
        mg_entry_met(sync, Q, s, dep_at[s + 1] - dep_at[s]);
    }
    if (slot[3])
        for (int i = lsucc_at[L] + threadIdx.x; i < lsucc_at[L + 1]; i += blockDim.x) {
            const int s = lsucc[i];
            mg_entry_met(sync, Q, s, dep_at[s + 1] - dep_at[s]);
        }
}
/* Exclusive prefix sum of v over the block (blockDim.x a multiple of 32), *total the sum;
 * ws: 33 ints of shared memory. */
MG_DI int mg_block_scan(int v, int *ws, int *total) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    int x = v;
    for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o) x += y;
    }
    if (lane == 31) ws[wid] = x;
    __syncthreads();
    if (wid == 0) {
        int s = lane < nw ? ws[lane] : 0;
        for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(0xffffffffu, s, o);
            if (lane >= o) s += y;
        }
        if (lane < nw) ws[lane] = s;
    }
    __syncthreads();
    const int r = x - v + (wid ? ws[wid - 1] : 0);
    *total = ws[nw - 1];
    __syncthreads();
    return r;
}
/* The scheduler. First the tasks that wait for nothing (init[0 .. n0)) go to the ready list;
 * then each round reads the next B of the list (B threads), and hands its ready prefix to
 * workers, one each, the empty queues first, then those with room, from a rotating start
 * (a worker's tail is read only when it may have moved: tq, the tail last seen), and
 * publishes the heads (a fence, then the stores: a release). When every task is handed, each
 * worker gets -1. Nothing handed for limit_ns: the watchdog records the smallest task not yet
 * ready and its first unmet dependency (dep[dep_at[t] ..): a done flag or a launch's count),
 * sets the abort word and returns (workers leave at their next pop). sm: shared memory for
 * 4 wm + 34 ints. */
MG_DI void mg_schedule(unsigned *sync, int n, const mg_queues &Q, const int *init, int n0, const int *dep_at, const int *dep,
                       const int *lsize, unsigned long long limit_ns, int *sm) {
    const int W = (int)gridDim.x - 1, B = (int)blockDim.x, wm = Q.wm;
    unsigned *hl = (unsigned *)sm, *tq = hl + wm; /* each worker's head, as handed; its tail, as seen */
    int *dq = sm + 2 * wm, *elig = sm + 3 * wm, *ws = sm + 4 * wm;
    for (int i = threadIdx.x; i < W; i += B) hl[i] = tq[i] = 0u;
    for (int i = threadIdx.x; i < n0; i += B) sync[Q.ready + i] = (unsigned)init[i] + 1u;
    if (threadIdx.x == 0) sync[Q.rtail] = (unsigned)n0;
    int rc = 0, rr = 0; /* the ready list's next, the rotating start */
    unsigned long long last = mg_clock_ns();
    __syncthreads();
    while (rc < n) {
        if (threadIdx.x == 0) ws[33] = B;
        __syncthreads();
        const unsigned v = rc + (int)threadIdx.x < n ? mg_ld_rlx(sync + Q.ready + rc + threadIdx.x) : 0u;
        if (!v) atomicMin(&ws[33], (int)threadIdx.x); /* the ready prefix ends there */
        int ne = 0, np = 0; /* the workers with room, empty ones first: 4 tails at once */
        for (int j0 = threadIdx.x; j0 < W; j0 += 4 * B) {
            unsigned tl[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int j = j0 + k * B, w = (rr + j) % W;
                if (j < W) tl[k] = tq[w] == hl[w] ? tq[w] : mg_ld_rlx(sync + Q.tail + w);
            }
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const int j = j0 + k * B, w = (rr + j) % W;
                if (j >= W) continue;
                const int depth = (int)(hl[w] - tl[k]);
                tq[w] = tl[k], dq[j] = depth;
                ne += depth == 0, np += depth > 0 && depth < MG_Q;
            }
        }
        mg_fence_gpu(); /* what the ready tasks' and the tails' writers wrote is seen from here on */
        int E0, E1;
        int eo = mg_block_scan(ne, ws, &E0), po = mg_block_scan(np, ws, &E1);
        for (int j = threadIdx.x; j < W; j += B) {
            const int w = (rr + j) % W;
            if (dq[j] == 0) elig[eo++] = w;
            else if (dq[j] < MG_Q) elig[E0 + po++] = w;
        }
        __syncthreads();
        const int R = ws[33], given = R < E0 + E1 ? R : E0 + E1;
        if ((int)threadIdx.x < given) { /* to worker elig[i] (no other thread writes its queue now) */
            const int w = elig[threadIdx.x];
            *(volatile unsigned *)(sync + Q.entry + w * MG_Q + hl[w] % MG_Q) = v - 1u;
            hl[w] += 1u;
        }
        __syncthreads();
        if ((int)threadIdx.x < given) { /* the heads: a fence, then the stores */
            mg_fence_gpu();
            *(volatile unsigned *)(sync + Q.head + elig[threadIdx.x]) = hl[elig[threadIdx.x]];
        }
        rc += given, rr = W ? (rr + given) % W : 0;
        const unsigned long long now = mg_clock_ns(); /* thread 0's decides, for every thread */
        if (given) last = now;
        else if (__syncthreads_or(threadIdx.x == 0 && *(volatile unsigned *)&sync[4 + n])) return;
        else if (__syncthreads_or(threadIdx.x == 0 && now - last > limit_ns)) { /* the watchdog */
            if (threadIdx.x == 0) ws[0] = n;
            __syncthreads();
            for (int t = threadIdx.x; t < n; t += B) /* the smallest task not ready */
                if (mg_ld_rlx(sync + Q.got + t) < (unsigned)(dep_at[t + 1] - dep_at[t])) {
                    atomicMin(&ws[0], t);
                    break;
                }
            __syncthreads();
            const int t = ws[0];
            if (threadIdx.x == 0 && t < n) {
                int d = dep[dep_at[t]];
                for (int e = dep_at[t]; e < dep_at[t + 1]; e++) {
                    d = dep[e];
                    if (mg_ld_rlx(d >= 0 ? sync + 1 + d : sync + 5 + n + (-1 - d)) < (d >= 0 ? 1u : (unsigned)lsize[-1 - d])) break;
                }
                if (atomicCAS(&sync[2 + n], 0u, (unsigned)t + 1u) == 0u)
                    atomicExch(&sync[3 + n], d >= 0 ? (unsigned)d + 1u : 0x80000000u | (unsigned)(-1 - d));
            }
            if (threadIdx.x == 0 && atomicExch(&sync[4 + n], 1u) == 0u) atomicAdd(sync, 1u << 30);
            return;
        } else __nanosleep(64);
    }
    for (int w = threadIdx.x; w < W; w += B) { /* every worker: leave */
        for (int spin = 0; hl[w] - mg_ld_acq(sync + Q.tail + w) >= MG_Q; spin++) {
            if ((spin & 63) == 63 && *(volatile unsigned *)&sync[4 + n]) return;
            __nanosleep(64);
        }
        *(volatile unsigned *)(sync + Q.entry + w * MG_Q + hl[w] % MG_Q) = 0xffffffffu;
        __threadfence();
        mg_st_rel(sync + Q.head + w, hl[w] + 1u);
    }
}
