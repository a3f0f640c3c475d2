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
    mg_tl_[k][b_] = mg_now(); if (k == 0 || k == 4) mg_sm_[k / 4][b_] = mg_smid(); } } while (0)
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
    std::vector<double> st, ld, ch, sv, en, s2, w2, e2, c2;
    for (int i = 0; i < n1; i++) {
        st.push_back((t[0][i] - t0) / 1e3), ld.push_back((t[1][i] - t[0][i]) / 1e3), ch.push_back((t[2][i] - t[1][i]) / 1e3);
        sv.push_back((t[3][i] - t[2][i]) / 1e3), en.push_back((t[3][i] - t0) / 1e3);
    }
    for (int i = 0; i < n2; i++)
        s2.push_back((t[4][i] - t0) / 1e3 - 0.0), w2.push_back((t[5][i] - t0) / 1e3), c2.push_back((t[6][i] - t[5][i]) / 1e3),
            e2.push_back((t[6][i] - t0) / 1e3);
    printf("%s: graph replay median %.2f us per pair (%d pairs)\n", NAME, reps[reps.size() / 2], sets);
    pr("k1 start", st), pr("k1 loads", ld), pr("k1 chain", ch), pr("k1 save", sv), pr("k1 end (abs)", en);
    pr("k2 start (abs)", s2), pr("k2 wait done (abs)", w2), pr("k2 work", c2), pr("k2 end (abs)", e2);
    for (int k = 0; k < 2; k++) {
        int used[1024] = {0}, n = k ? n2 : n1, d = 0, two = 0;
        for (int i = 0; i < n; i++) used[sm[k][i]]++;
        for (int i = 0; i < 1024; i++) d += used[i] > 0, two += used[i] > 1;
        printf("kernel %d: %d blocks on %d multiprocessors (%d with more than one)\n", k + 1, n, d, two);
    }
    std::vector<double> l2;
    for (int i = 0; i < n2; i++) l2.push_back((t[7][i] - t[5][i]) / 1e3);
    pr("k2 loads (7 - 5)", l2);
    std::vector<double> a8, a9, a6;
    for (int i = 0; i < n2; i++)
        a8.push_back((t[8][i] - t[7][i]) / 1e3), a9.push_back((t[9][i] - t[8][i]) / 1e3), a6.push_back((t[6][i] - t[9][i]) / 1e3);
    pr("k2 8 - 7", a8), pr("k2 9 - 8", a9), pr("k2 6 - 9", a6);
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
