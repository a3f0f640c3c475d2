// Per-block timeline of a weight-stream kernel mugen generated: each block records %globaltimer
// at its start, after its for-loop and at its end (a copy of the generated source with three
// stores added by sed, see bench/micro/README.md), over a graph replay of 8 launches on
// rotating weights, and prints the spread: when blocks start, how long their loop and their
// tail take, when the last one ends. Sizes what imbalance and the post-loop steps cost.
#include <cstdio>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
__device__ unsigned long long mg_tl_[3][1024];
static __device__ __forceinline__ unsigned long long mg_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}
#define MG_MARK(k) do { if (threadIdx.x == 0) mg_tl_[k][blockIdx.x] = mg_now(); } while (0)
#include SRC
int main() {
    const int sets = 4;
    void *O, *X, *W;
    cudaMalloc(&O, 2 * 6144 * 2); cudaMalloc(&X, sets * 2 * 4096 * 2); cudaMalloc(&W, (size_t)sets * 4096 * 6144 * 2);
    cudaMemset(W, 0x11, (size_t)sets * 4096 * 6144 * 2); cudaMemset(X, 0x3c, sets * 2 * 4096 * 2);
    cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
    cudaStream_t s; cudaStreamCreate(&s);
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < sets; i++)
            KERNEL<<<BLOCKS, THREADS, SMEM, s>>>((mg_h *)O, (mg_h *)X + i * 8192, (mg_h *)W + (size_t)i * 4096 * 6144);
    cudaStreamSynchronize(s);
    unsigned long long t[3][1024];
    cudaMemcpyFromSymbol(t, mg_tl_, sizeof t);
    unsigned long long t0 = ~0ull, tend = 0;
    std::vector<double> st, loop, tail, end;
    for (int b = 0; b < BLOCKS; b++) t0 = std::min(t0, t[0][b]);
    for (int b = 0; b < BLOCKS; b++) {
        st.push_back((t[0][b] - t0) / 1e3), loop.push_back((t[1][b] - t[0][b]) / 1e3);
        tail.push_back((t[2][b] - t[1][b]) / 1e3), end.push_back((t[2][b] - t0) / 1e3);
        tend = std::max(tend, t[2][b]);
    }
    auto pr = [](const char *n, std::vector<double> v) {
        std::sort(v.begin(), v.end());
        printf("%-6s min %6.2f  p10 %6.2f  median %6.2f  p90 %6.2f  max %6.2f us\n", n, v[0], v[v.size() / 10], v[v.size() / 2],
               v[v.size() * 9 / 10], v.back());
    };
    printf("%s, %d blocks x %d threads (last launch of %d back to back)\n", NAME, BLOCKS, THREADS, 3 * sets);
    pr("start", st), pr("loop", loop), pr("tail", tail), pr("end", end);
    printf("first start to last end %.2f us  %s\n", (tend - t0) / 1e3, cudaGetErrorString(cudaGetLastError()));
}
