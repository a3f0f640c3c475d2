// Times a kernel mugen generated (mugen emit ... > rms.cu; the kernel k2_O of
// bench/searched/rmsnorm_linear_b1/ugraph-1.mu) and hand-edited variants of it, back to back
// and as one CUDA-graph replay: nvcc -arch=sm_90a -O3 -DSRC=\"v.cu\" -DSMEM=184384 -DNAME=\"v\"
#include <cstdio>
#include <cuda_runtime.h>
#include SRC
int main() {
    void *O, *X, *W;
    cudaMalloc(&O, 2 * 6144 * 2); cudaMalloc(&X, 4 * 2 * 4096 * 2); cudaMalloc(&W, (size_t)4 * 4096 * 6144 * 2);
    cudaMemset(W, 0, (size_t)4 * 4096 * 6144 * 2); cudaMemset(X, 0x3c, 4 * 2 * 4096 * 2);
    cudaFuncSetAttribute(k2_O, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 5; i++) k2_O<<<96, 512, SMEM>>>((mg_h *)O, (mg_h *)X, (mg_h *)W);
    // throughput: back to back
    cudaEventRecord(a);
    for (int i = 0; i < 100; i++) k2_O<<<96, 512, SMEM>>>((mg_h *)O, (mg_h *)X + (i % 4) * 8192, (mg_h *)W + (size_t)(i % 4) * 4096 * 6144);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    // latency: one launch in a CUDA graph, replayed
    cudaStream_t s; cudaStreamCreate(&s); cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    k2_O<<<96, 512, SMEM, s>>>((mg_h *)O, (mg_h *)X, (mg_h *)W);
    cudaStreamEndCapture(s, &g); cudaGraphInstantiate(&ge, g, 0);
    float best = 1e9;
    for (int r = 0; r < 50; r++) {
        cudaEventRecord(a, s); cudaGraphLaunch(ge, s); cudaEventRecord(b, s); cudaEventSynchronize(b);
        float m; cudaEventElapsedTime(&m, a, b); if (r > 5 && m < best) best = m;
    }
    printf("%-14s back-to-back %6.2f us, graph replay best %6.2f us  %s\n", NAME, ms * 10, best * 1000, cudaGetErrorString(cudaGetLastError()));
}
