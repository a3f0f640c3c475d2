/* a persistent launch (docs/megakernel.md) of n tasks in nl launches: sync[0] hands out
 * tickets in the order blocks ask, sync[1 + t] is task t's done flag, sync[1 + n] counts the
 * blocks that left, sync[5 + n + L] counts launch L's finished tasks (what a wait for a whole
 * launch reads); the last block to leave zeroes those for the next launch. The watchdog's
 * words stay for the host to read (it zeroes them): sync[2 + n] = 1 + a task that waited past
 * the limit, sync[3 + n] = 1 + the task whose flag it waited for (or 2^31 + L: launch L's
 * count), sync[4 + n] = 1 once any block gave up (every block then leaves at its next wait;
 * the ticket counter jumps by 2^30, so at its next ticket too: codegen keeps n below 2^30). */
MG_DI int mg_ticket(unsigned *sync, int *slot) {
    if (threadIdx.x == 0) *slot = (int)atomicAdd(sync, 1u); /* >= 2^30 once given up: leave */
    __syncthreads();
    return *slot;
}
/* slot[0..2) in shared memory: the ticket and the leaving's verdict, apart so that no thread
 * still reading the ticket is raced by the next write. The last block to leave also zeroes
 * the queues' heads and tails, sync[q0 .. q0 + nq) (none: nq 0). */
MG_DI void mg_leave(unsigned *sync, int n, int nl, int *slot, int q0 = 0, int nq = 0) {
    slot += 1;
    if (threadIdx.x == 0) *slot = atomicAdd(&sync[1 + n], 1u) == gridDim.x - 1u;
    __syncthreads();
    if (*slot) { /* every other block has left: no one reads them any more */
        for (int i = threadIdx.x; i < n + 2; i += blockDim.x) sync[i] = 0u;
        for (int i = threadIdx.x; i < nl; i += blockDim.x) sync[5 + n + i] = 0u;
        for (int i = threadIdx.x; i < nq; i += blockDim.x) sync[q0 + i] = 0u;
    }
}
/* *p read with acquire semantics at GPU scope: what its writer stored before releasing it is
 * seen after */
MG_DI unsigned mg_ld_acq(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
MG_DI unsigned long long mg_clock_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* Task t waits until dep[0..m) are done: an entry d >= 0 is task d's flag, d < 0 the whole of
 * launch L = -1 - d (its count reaching lsize[L]); a thread an entry reads it (acquire) until
 * met; the barrier then orders the block's reads after those tasks' writes. An entry still
 * unmet after limit_ns (the watchdog), or another block's giving up, ends the wait: the first
 * to give up records itself and the entry; returns nonzero when the block must leave without
 * running the task. */
MG_DI int mg_task_wait(unsigned *sync, int n, int t, const int *dep, int m, const int *lsize,
                       unsigned long long limit_ns) {
    int gave = 0;
    for (int i = threadIdx.x; i < m; i += blockDim.x) {
        const int d = dep[i];
        const unsigned *f = d >= 0 ? sync + 1 + d : sync + 5 + n + (-1 - d);
        const unsigned need = d >= 0 ? 1u : (unsigned)lsize[-1 - d];
        const unsigned long long t0 = mg_clock_ns();
        for (int spin = 0;; spin++) {
            if (mg_ld_acq(f) >= need) break;
            if ((spin & 63) == 63) {
                if (*(volatile unsigned *)&sync[4 + n]) {
                    gave = 1;
                    break;
                }
                if (mg_clock_ns() - t0 > limit_ns) {
                    if (atomicCAS(&sync[2 + n], 0u, (unsigned)t + 1u) == 0u)
                        atomicExch(&sync[3 + n], d >= 0 ? (unsigned)d + 1u : 0x80000000u | (unsigned)(-1 - d));
                    if (atomicExch(&sync[4 + n], 1u) == 0u) atomicAdd(sync, 1u << 30); /* once */
                    gave = 1;
                    break;
                }
            }
            __nanosleep(64);
        }
    }
    return __syncthreads_or(gave);
}
/* Thread 0, after the barrier that follows task t's (of launch L) last store: publishes it (a
 * fence, its flag, its launch's count); returns the count after it. */
MG_DI unsigned mg_publish(unsigned *sync, int n, int t, int L) {
    __threadfence();
    atomicExch(&sync[1 + t], 1u);
    return atomicAdd(&sync[5 + n + L], 1u) + 1u;
}
/* after task t's last store: a barrier, then thread 0 publishes it */
MG_DI void mg_task_done(unsigned *sync, int n, int t, int L) {
    __syncthreads();
    if (threadIdx.x == 0) mg_publish(sync, n, t, L);
}
/* MUGEN_TRACE: thread 0 records task t's times (%globaltimer, ns) in tr[4 t ..): s0 before its
 * wait (or its pop), s1 when it may run, the end after its publish, then its SM and block */
MG_DI void mg_trace(unsigned long long *tr, int t, unsigned long long s0, unsigned long long s1) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    tr += 4 * (long long)t;
    tr[0] = s0, tr[1] = s1, tr[2] = mg_clock_ns(), tr[3] = (unsigned long long)sm << 32 | blockIdx.x;
}
