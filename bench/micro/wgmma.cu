// Microtest: which shared-memory layout and descriptor fields wgmma reads for a B operand
// stored MN-major (the N index contiguous, as attention's K [dim, keys] and V [keys, dim]
// tiles are), with A from registers in mma.sync's m16n8k16 fragment layout. It tries the
// core-matrix layouts (8 k-rows of 8 n-values, 128 contiguous bytes each) with the two
// offsets in either descriptor field and either transpose flag, against a CPU product, for
// f16 and bf16, and times the winning form against mma.sync's. Prints one line a try.
// nvcc -gencode arch=compute_90a,code=sm_90a -O3 -o wgmma wgmma.cu &&
//   for a in 0 1; do for b in 0 1; do for c in 0 1; do for d in 0 1; do ./wgmma $a $b $c $d; done; done; done; done
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define KD 16
#define ND 64
template <bool BF> __device__ __forceinline__ unsigned pk(float a, float b) {
    if (BF) { __nv_bfloat162 h = __floats2bfloat162_rn(a, b); return *(unsigned *)&h; }
    __half2 h = __floats2half2_rn(a, b); return *(unsigned *)&h;
}
__device__ __forceinline__ unsigned long long desc(const void *p, unsigned lbo, unsigned sbo) {
    unsigned a = (unsigned)__cvta_generic_to_shared(p);
    return (unsigned long long)((a >> 4) & 0x3fff) | (unsigned long long)((lbo >> 4) & 0x3fff) << 16 |
           (unsigned long long)((sbo >> 4) & 0x3fff) << 32;
}
#define WG_OUT16 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define WG_ASM(T, TN) "wgmma.mma_async.sync.aligned.m64n32k16.f32." T "." T " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, {%16,%17,%18,%19}, %20, 1, 1, 1, " TN ";"
template <bool BF, int TN> __device__ __forceinline__ void wg32(float (&d)[16], const unsigned (&a)[4], unsigned long long b) {
    if (BF && TN) asm volatile(WG_ASM("bf16", "1") : WG_OUT16 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
    if (BF && !TN) asm volatile(WG_ASM("bf16", "0") : WG_OUT16 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
    if (!BF && TN) asm volatile(WG_ASM("f16", "1") : WG_OUT16 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
    if (!BF && !TN) asm volatile(WG_ASM("f16", "0") : WG_OUT16 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
// B element (k, n) at core matrix (k / 8, n / 8): n-adjacent ones CN bytes apart, k-adjacent CK
__device__ __host__ int boff(int k, int n, int CN, int CK) { return (n / 8) * CN / 2 + (k / 8) * CK / 2 + (k % 8) * 8 + n % 8; }
// one warpgroup: C [64, 64] = A [64, 16] B [16, 64]; A, B f32 in global (values exact in both types)
template <bool BF, int TN>
__global__ void k_wg(const float *A, const float *B, float *C, int CN, int CK, int lbo, int sbo) {
    __shared__ __align__(128) unsigned short sb[KD * ND];
    for (int i = threadIdx.x; i < KD * ND; i += 128) {
        int k = i / ND, n = i % ND;
        unsigned v = pk<BF>(B[i], 0.0f);
        sb[boff(k, n, CN, CK)] = (unsigned short)(v & 0xffff);
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    unsigned a[4];
    for (int r = 0; r < 4; r++) {
        int m = w * 16 + g + 8 * (r & 1), k = 2 * t + 8 * (r >> 1);
        a[r] = pk<BF>(A[m * KD + k], A[m * KD + k + 1]);
    }
    float d0[16] = {}, d1[16] = {};
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    wg32<BF, TN>(d0, a, desc(sb, lbo, sbo));
    wg32<BF, TN>(d1, a, desc(sb + boff(0, 32, CN, CK), lbo, sbo));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    for (int i = 0; i < 32; i++) {
        int j = i / 4, r = i % 4, m = w * 16 + g + 8 * (r >> 1), n = 8 * j + 2 * t + (r & 1);
        C[m * ND + n] = i < 16 ? d0[i] : d1[i - 16];
    }
}
int main(int argc, char **argv) {
    // one try a process (a wrong descriptor can fault and end the context): bf tn layout swap
    if (argc != 5) { fprintf(stderr, "usage: wgmma BF TNSP LAYOUT SWAP (each 0 or 1)\n"); return 2; }
    const int BF_ = atoi(argv[1]), TN_ = atoi(argv[2]), L_ = atoi(argv[3]), SW_ = atoi(argv[4]);
    float *A, *B, *C;
    cudaMallocManaged(&A, 64 * KD * 4), cudaMallocManaged(&B, KD * ND * 4), cudaMallocManaged(&C, 64 * ND * 4);
    srand(7);
    for (int i = 0; i < 64 * KD; i++) A[i] = (float)(rand() % 9 - 4) / 4.0f;
    for (int i = 0; i < KD * ND; i++) B[i] = (float)(rand() % 9 - 4) / 4.0f;
    // layouts: n-adjacent core matrices contiguous (CN 128, CK 128 * ND / 8), or k-adjacent (CK 128)
    const int lay[2][2] = {{128, 128 * ND / 8}, {128 * KD / 8, 128}};
                {
                    const int bf = BF_, tn = TN_, l = L_, sw = SW_;
                    int CN = lay[l][0], CK = lay[l][1], lbo = sw ? CK : CN, sbo = sw ? CN : CK;
                    for (int i = 0; i < 64 * ND; i++) C[i] = NAN;
                    if (bf && tn) k_wg<true, 1><<<1, 128>>>(A, B, C, CN, CK, lbo, sbo);
                    if (bf && !tn) k_wg<true, 0><<<1, 128>>>(A, B, C, CN, CK, lbo, sbo);
                    if (!bf && tn) k_wg<false, 1><<<1, 128>>>(A, B, C, CN, CK, lbo, sbo);
                    if (!bf && !tn) k_wg<false, 0><<<1, 128>>>(A, B, C, CN, CK, lbo, sbo);
                    cudaError_t e = cudaDeviceSynchronize();
                    double err = 0;
                    for (int m = 0; m < 64; m++)
                        for (int n = 0; n < ND; n++) {
                            double r = 0;
                            for (int k = 0; k < KD; k++) r += (double)A[m * KD + k] * B[k * ND + n];
                            double x = C[m * ND + n];
                            err = fmax(err, std::isnan(x) ? 1e9 : fabs(x - r));
                        }
                    printf("%s tnsp-b %d CN %4d CK %4d lbo %4d sbo %4d: max err %g %s%s\n", bf ? "bf16" : "f16 ", tn, CN,
                           CK, lbo, sbo, err, err < 1e-3 ? "MATCH" : "", e ? cudaGetErrorString(e) : "");
                    if (e) return 1;
                }
    return 0;
}
