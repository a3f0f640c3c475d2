/* a persistent launch (docs/codegen.md): sync[0] hands out tickets in the order blocks
 * ask, sync[1 + k] counts kernel k's finished tasks, sync[1 + nk] the blocks that left;
 * the last to leave zeroes them for the next launch */
MG_DI int mg_ticket(unsigned *sync, int *slot) {
    if (threadIdx.x == 0) *slot = (int)atomicAdd(sync, 1u);
    __syncthreads();
    return *slot;
}
MG_DI void mg_leave(unsigned *sync, int nk) {
    if (threadIdx.x == 0 && atomicAdd(&sync[1 + nk], 1u) == gridDim.x - 1u)
        for (int i = 0; i < nk + 2; i++) sync[i] = 0u; /* no block touches them any more */
}
/* thread 0 waits (acquire) until *done >= n; the barrier then orders the block's reads */
MG_DI void mg_task_after(const unsigned *done, unsigned n) {
    if (threadIdx.x == 0)
        for (;;) {
            unsigned v;
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(done) : "memory");
            if (v >= n) break;
            __nanosleep(100);
        }
    __syncthreads();
}
/* after a task's last store: a barrier, then thread 0 publishes it (fence, count) */
MG_DI void mg_task_done(unsigned *done) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(done, 1u);
    }
}
