// Per-block timeline of a two-kernel attention program mugen generated (chain kernel, then the
// combining kernel launched as a programmatic dependent, as mugen's runtime does): a copy of
// `mugen emit`'s source with marks added (bench/micro/README.md). Kernel 1 marks its start (0),
// its tiles loaded (1), its chain done (2), its end (3); kernel 2 its start (4), the end of its
// grid wait (5), its end (6). A CUDA graph of 8 launch pairs on rotating inputs is replayed;
// the last pair's marks are printed as spreads, relative to kernel 1's first block start.
#include <cstdio>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
__device__ unsigned long long mg_tl_[10][1024];
__device__ unsigned mg_sm_[2][1024];
static __device__ __forceinline__ unsigned long long mg_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}
static __device__ __forceinline__ unsigned mg_smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %smid;" : "=r"(r));
    return r;
}
#define MG_MARK(k) do { if (threadIdx.x == 0) { const int b_ = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); \
    mg_tl_[k][b_] = mg_now(); if (k == 0 || k == 5) mg_sm_[k / 5][b_] = mg_smid(); } } while (0)
#include SRC
#ifndef QN
#define QN (2 * 256 * 64)
#define KN (2 * 64 * 4096)
#define VN (2 * 4096 * 64)
#define P3 (2 * 256 * 32)
#define P4 (2 * 256 * 64 * 32)
#define ON (2 * 256 * 64)
#endif
int main() {
    const int sets = 8;
    mg_h *Q, *K, *V, *O; float *v3, *v4;
    cudaMalloc(&Q, sets * QN * 2); cudaMalloc(&K, sets * KN * 2); cudaMalloc(&V, sets * VN * 2);
    cudaMalloc(&O, ON * 2); cudaMalloc(&v3, P3 * 4); cudaMalloc(&v4, (size_t)P4 * 4);
    cudaMemset(Q, 0x2c, sets * QN * 2); cudaMemset(K, 0x2c, sets * KN * 2); cudaMemset(V, 0x3c, sets * VN * 2);
    cudaFuncSetAttribute(K1, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM1);
    cudaFuncSetAttribute(K2, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM2);
    cudaStream_t s; cudaStreamCreate(&s);
    cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    for (int i = 0; i < sets; i++) {
        K1<<<dim3(G1X, G1Y, G1Z), T1, SMEM1, s>>>(v3, v4, Q + i * QN, K + (size_t)i * KN, V + (size_t)i * VN);
        cudaLaunchConfig_t c = {};
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization, at[0].val.programmaticStreamSerializationAllowed = 1;
        c.gridDim = dim3(G2X, G2Y, G2Z), c.blockDim = T2, c.dynamicSmemBytes = SMEM2, c.stream = s, c.attrs = at, c.numAttrs = 1;
        cudaLaunchKernelEx(&c, K2, O, (const float *)v3, (const float *)v4);
    }
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&ge, g, 0);
    std::vector<float> reps;
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int r = 0; r < 50; r++) {
        cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); reps.push_back(ms * 1000 / sets);
    }
    std::sort(reps.begin(), reps.end());
    static unsigned long long t[10][1024];
    static unsigned sm[2][1024];
    cudaMemcpyFromSymbol(sm, mg_sm_, sizeof sm);
    cudaMemcpyFromSymbol(t, mg_tl_, sizeof t);
    const int n1 = G1X * G1Y * G1Z, n2 = G2X * G2Y * G2Z;
    unsigned long long t0 = ~0ull;
    for (int i = 0; i < n1; i++) t0 = std::min(t0, t[0][i]);
    auto pr = [](const char *n, std::vector<double> v) {
        std::sort(v.begin(), v.end());
        printf("%-22s min %6.2f  p10 %6.2f  median %6.2f  p90 %6.2f  max %6.2f us\n", n, v[0], v[v.size() / 10],
               v[v.size() / 2], v[v.size() * 9 / 10], v.back());
    };
    auto span = [&](const char *n, int from, int to, int cnt, int off) {
        std::vector<double> v;
        for (int i = 0; i < cnt; i++) v.push_back(((double)t[to][i] - (double)(from < 0 ? t0 : t[from][i])) / 1e3);
        (void)off;
        pr(n, v);
    };
    printf("%s: graph replay median %.2f us per pair (%d pairs)\n", NAME, reps[reps.size() / 2], sets);
    span("k1 start (abs)", -1, 0, n1, 0), span("k1 prologue", 0, 1, n1, 0), span("k1 loop", 1, 2, n1, 0);
    span("k1 after loop", 2, 3, n1, 0), span("k1 saves", 3, 4, n1, 0), span("k1 end (abs)", -1, 4, n1, 0);
    span("k2 start (abs)", -1, 5, n2, 0), span("k2 wait done (abs)", -1, 6, n2, 0), span("k2 loads", 6, 7, n2, 0);
    span("k2 compute", 7, 8, n2, 0), span("k2 saves", 8, 9, n2, 0), span("k2 end (abs)", -1, 9, n2, 0);
    for (int k = 0; k < 2; k++) {
        int used[1024] = {0}, n = k ? n2 : n1, d = 0, two = 0;
        for (int i = 0; i < n; i++) used[sm[k][i]]++;
        for (int i = 0; i < 1024; i++) d += used[i] > 0, two += used[i] > 1;
        printf("kernel %d: %d blocks on %d multiprocessors (%d with more than one)\n", k + 1, n, d, two);
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
