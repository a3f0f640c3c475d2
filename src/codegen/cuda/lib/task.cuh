/* a persistent launch (docs/codegen.md): sync[0] hands out tickets in the order blocks
 * ask, sync[1 + t] is task t's done flag, sync[1 + n] counts the blocks that left (n tasks);
 * the last to leave zeroes them all for the next launch */
MG_DI int mg_ticket(unsigned *sync, int *slot) {
    if (threadIdx.x == 0) *slot = (int)atomicAdd(sync, 1u);
    __syncthreads();
    return *slot;
}
MG_DI void mg_leave(unsigned *sync, int n, int *slot) {
    if (threadIdx.x == 0) *slot = atomicAdd(&sync[1 + n], 1u) == gridDim.x - 1u;
    __syncthreads();
    if (*slot) /* every other block has left: no one reads them any more */
        for (int i = threadIdx.x; i < n + 2; i += blockDim.x) sync[i] = 0u;
}
/* waits until tasks dep[0..n) are done: a thread a dependency reads its flag (acquire) until
 * set; the barrier then orders the block's reads after those tasks' writes */
MG_DI void mg_task_wait(const unsigned *sync, const int *dep, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        for (const unsigned *f = sync + 1 + dep[i];;) {
            unsigned v;
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
            if (v) break;
            __nanosleep(64);
        }
    __syncthreads();
}
/* after a task's last store: a barrier, then thread 0 publishes it (fence, flag) */
MG_DI void mg_task_done(unsigned *flag) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicExch(flag, 1u);
    }
}
