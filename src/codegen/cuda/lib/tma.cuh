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
/* a descriptor of a 128-byte-swizzled operand: leading offset lbo, stride offset sbo (bytes) */
MG_DI unsigned long long mg_wg_desc_sw(const void *p, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((mg_sa(p) >> 4) & 0x3fff) | (unsigned long long)((lbo >> 4) & 0x3fff) << 16 |
           (unsigned long long)((sbo >> 4) & 0x3fff) << 32 | 1ull << 62;
}
/* d += A B over one stage: A [M, K] and B [K, N] in the boxes' layout, warpgroup g the rows
 * g / (N / NW) * 64.. and columns g % (N / NW) * NW.., d its 64 x NW in mma.sync's C layout
 * (d[4 j..] the n8 column group j of this warp's 16 rows). Issued, not waited for. */
template <bool BF, int NW, int M, int N, int K, typename T>
MG_DI void mg_tma_mm(float (&d)[NW / 2], const T *A, const T *B) {
    const int g = threadIdx.x >> 7;
    const T *a = A + g / (N / NW) * 64 * 64, *b = B + g % (N / NW) * (NW / 64) * K * 64;
#pragma unroll
    for (int kq = 0; kq < K / 16; kq++)
        mg_wgs<BF, NW / 8>(d, mg_wg_desc_sw(a + kq / 4 * M * 64 + kq % 4 * 16, 16, 1024),
                           mg_wg_desc_sw(b + kq * 16 * 64, K * 128, 1024), 1);
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
