// How many thread-block clusters the GPU keeps resident at once (cudaOccupancyMaxActiveClusters)
// for the shapes mugen's cluster fusion launches: per-block shared memory, threads, cluster size.
// nvcc -arch=sm_90a -O3 -o cluster cluster.cu && ./cluster
#include <cstdio>
__global__ void k(int *p) {
    extern __shared__ int s[];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (p) p[blockIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
int main() {
    cudaDeviceProp pr;
    cudaGetDeviceProperties(&pr, 0);
    printf("%s: %d SMs\n", pr.name, pr.multiProcessorCount);
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
    cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    int smems[] = {20000, 81152, 113000, 181248, 215040};
    int threads[] = {128, 256};
    for (int si = 0; si < 5; si++)
        for (int ti = 0; ti < 2; ti++)
            for (int c = 1; c <= 16; c *= 2) {
                cudaLaunchConfig_t cfg = {};
                cudaLaunchAttribute at[1];
                at[0].id = cudaLaunchAttributeClusterDimension;
                at[0].val.clusterDim.x = c, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
                cfg.gridDim = dim3(128, 1, 1), cfg.blockDim = dim3(threads[ti], 1, 1);
                cfg.dynamicSmemBytes = smems[si], cfg.attrs = at, cfg.numAttrs = 1;
                int n = -1;
                cudaError_t e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
                printf("smem %6d threads %3d cluster %2d: %3d clusters (%3d blocks) %s\n", smems[si], threads[ti], c, n,
                       n * c, e ? cudaGetErrorString(e) : "");
            }
    return 0;
}
