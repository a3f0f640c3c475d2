/* Product loops on TMA and wgmma (opt/tma.c): tiles copied by the tensor memory accelerator
 * into 128-byte-swizzled stages, counted by one mbarrier a stage; products from them by
 * warpgroup wgmma (wgmma.cuh's mg_wgs). A tile [R, C] is C / 64 boxes [R, 64], each row of a
 * box 128 bytes with its 16-byte pieces XORed with row % 8 (op_tensor.tc.tma). */
struct __align__(64) mg_tmap { /* a CUtensorMap, passed by value (the runtime's rt_tmap) */
    unsigned long long v[16];
};
MG_DI unsigned mg_sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
MG_DI void mg_mbar_init(unsigned long long *b) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;\nfence.mbarrier_init.release.cluster;" ::"r"(mg_sa(b)) : "memory");
}
/* the stage's copies are `bytes` in all; this thread's arrival */
MG_DI void mg_mbar_expect(unsigned long long *b, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(mg_sa(b)), "r"(bytes) : "memory");
}
MG_DI void mg_mbar_wait(unsigned long long *b, unsigned parity) {
    asm volatile("{\n.reg .pred p;\nMG_W_%=: mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n@!p bra MG_W_%=;\n}"
                 ::"r"(mg_sa(b)), "r"(parity) : "memory");
}
/* the box of map m at column x, row y to dst, counted by barrier b */
MG_DI void mg_tma2(void *dst, const mg_tmap *m, long long x, long long y, unsigned long long *b) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(mg_sa(dst)), "l"(m), "r"((int)x), "r"((int)y), "r"(mg_sa(b)) : "memory");
}
/* a descriptor of a swizzled operand: leading offset lbo, stride offset sbo (bytes); layout
 * type 1: 128-byte swizzle, 2: 64-byte */
MG_DI unsigned long long mg_wg_desc_sw(const void *p, unsigned lbo, unsigned sbo, unsigned long long type = 1) {
    return (unsigned long long)((mg_sa(p) >> 4) & 0x3fff) | (unsigned long long)((lbo >> 4) & 0x3fff) << 16 |
           (unsigned long long)((sbo >> 4) & 0x3fff) << 32 | type << 62;
}
/* d += A B over one stage: A [M, K] and B [K, N] in the boxes' layout, warpgroup g the rows
 * g / (N / NW) * 64.. and columns g % (N / NW) * NW.., d its 64 x NW in mma.sync's C layout
 * (d[4 j..] the n8 column group j of this warp's 16 rows). N = 32: B one box of 64-byte rows
 * (64-byte swizzle, eight k-rows 512 bytes). Issued, not waited for. */
template <bool BF, int NW, int M, int N, int K, typename T>
MG_DI void mg_tma_mm(float (&d)[NW / 2], const T *A, const T *B) {
    const int g = threadIdx.x >> 7;
    const T *a = A + g / (N / NW) * 64 * 64, *b = B + (N < 64 ? 0 : g % (N / NW) * (NW / 64) * K * 64);
#pragma unroll
    for (int kq = 0; kq < K / 16; kq++)
        mg_wgs<BF, NW / 8>(d, mg_wg_desc_sw(a + kq / 4 * M * 64 + kq % 4 * 16, 16, 1024),
                           N < 64 ? mg_wg_desc_sw(b + kq * 16 * 32, 1024, 512, 2)
                                  : mg_wg_desc_sw(b + kq * 16 * 64, K * 128, 1024), 1);
}
/* The sums of mg_tma_mm to C [M, N] (row and column strides scm, scn). */
template <int NW, int N>
MG_DI void mg_tma_acc_store(float *C, const float (&d)[NW / 2], int scm, int scn) {
    const int g = threadIdx.x >> 7, w = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int m0 = g / (N / NW) * 64 + w * 16 + (lane >> 2), n0 = g % (N / NW) * NW + 2 * (lane & 3);
#pragma unroll
    for (int j = 0; j < NW / 8; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) C[(m0 + 8 * (r >> 1)) * scm + (n0 + 8 * j + (r & 1)) * scn] = d[4 * j + r];
}
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* one wgmma m64nNk16 (N = 8, 16, 32) with A read transposed (MN-major) and B K-major, both
 * from descriptors: the swapped products' B^T A^T */
#define MG_WGT(N, T, OUT, NR) \
    asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T " " OUT ", %" #NR ", %" MG_NEXT##NR \
                 ", 1, 1, 1, 1, 0;\n" : MG_WGT_D##N : "l"(a), "l"(b) : "memory")
#define MG_NEXT4 "5"
#define MG_NEXT8 "9"
#define MG_NEXT16 "17"
#define MG_WGT_D8 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define MG_WGT_D16 MG_WGD8(0)
#define MG_WGT_D32 MG_WGD16(0)
template <bool BF, int N> MG_DI void mg_wgt(float *d, unsigned long long a, unsigned long long b) {
    if (N == 8 && BF) MG_WGT(8, "bf16", "{%0, %1, %2, %3}", 4);
    if (N == 8 && !BF) MG_WGT(8, "f16", "{%0, %1, %2, %3}", 4);
    if (N == 16 && BF) MG_WGT(16, "bf16", "{%0, %1, %2, %3, %4, %5, %6, %7}", 8);
    if (N == 16 && !BF) MG_WGT(16, "f16", "{%0, %1, %2, %3, %4, %5, %6, %7}", 8);
    if (N == 32 && BF) MG_WGT(32, "bf16", "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}", 16);
    if (N == 32 && !BF) MG_WGT(32, "f16", "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}", 16);
}
#else
template <bool BF, int N> MG_DI void mg_wgt(float *, unsigned long long, unsigned long long) {
    static_assert(BF && !BF, "TMA products need sm_90a: plan with --no-tma");
}
#endif
/* d += (A B)^T over one stage for A [M, K] of M = 8, 16 or 32 rows (boxes of M rows) and B [K, N]: warpgroup
 * g takes B's columns g * 64.., read transposed as wgmma's A, and A as its B (K-major); d
 * holds C^T's 64 x M piece in mma.sync's C layout. Issued, not waited for. */
template <bool BF, int M, int K, typename T>
MG_DI void mg_tma_mm_t(float (&d)[M / 2], const T *A, const T *B) {
    const T *b = B + (threadIdx.x >> 7) * K * 64;
#pragma unroll
    for (int kq = 0; kq < K / 16; kq++)
        mg_wgt<BF, M>(d, mg_wg_desc_sw(b + kq * 16 * 64, K * 128, 1024),
                      mg_wg_desc_sw(A + kq / 4 * M * 64 + kq % 4 * 16, 16, 1024));
}
/* The sums of mg_tma_mm_t to C [MR, N], its first MR <= M rows (the others a box's padding):
 * C^T's element (n, m) is C's (m, n). */
template <int M, int MR> MG_DI void mg_tma_acc_store_t(float *C, const float (&d)[M / 2], int scm, int scn) {
    const int g = threadIdx.x >> 7, w = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int n0 = g * 64 + w * 16 + (lane >> 2), m0 = 2 * (lane & 3);
#pragma unroll
    for (int j = 0; j < M / 8; j++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            if (MR == M || m0 + 8 * j + (r & 1) < MR) C[(m0 + 8 * j + (r & 1)) * scm + (n0 + 8 * (r >> 1)) * scn] = d[4 * j + r];
}
