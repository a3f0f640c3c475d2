/* sm_90a warpgroup products (wgmma) for chains whose B and V tiles are in the core-matrix
 * layout (op_tensor.wg): element (k, n) of a [K, N] tile at k / 8 * 8N + n / 8 * 64 +
 * k % 8 * 8 + n % 8. wgmma reads it MN-major (transpose flag 1) with the leading offset
 * stepping 8 rows (16N bytes) and the stride offset 8 columns (128 bytes); measured in
 * bench/micro/wgmma.cu. */
MG_DI unsigned long long mg_wg_desc(const void *p, int N) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    return (unsigned long long)((a >> 4) & 0x3fff) | (unsigned long long)(N & 0x3fff) << 16 | 8ull << 32;
}
/* the same tile read K-major (an A operand [M, K]): 8 columns apart 128 bytes, 8 rows 16K */
MG_DI unsigned long long mg_wg_desca(const void *p, int K) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    return (unsigned long long)((a >> 4) & 0x3fff) | 8ull << 16 | (unsigned long long)(K & 0x3fff) << 32;
}
MG_DI void mg_fence_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
MG_DI void mg_wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
MG_DI void mg_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> MG_DI void mg_wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
/* wgmma's accumulators d[i..] as asm output operands */
#define MG_WGD8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
                   "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define MG_WGD16(i) MG_WGD8(i), MG_WGD8(i + 8)
#define MG_WGD32(i) MG_WGD16(i), MG_WGD16(i + 16)
/* one wgmma (m64nNk16, f32 += T x T): A fragments a[4] in registers, B at descriptor b */
#define MG_WG32(T, TB) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n32k16.f32." T "." T \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}" \
        ", {%16, %17, %18, %19}, %20, p, 1, 1, " TB ";\n}\n" \
        : MG_WGD16(0) \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(add) \
        : "memory")
#define MG_WG64(T, TB) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." T "." T \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
        " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}" \
        ", {%32, %33, %34, %35}, %36, p, 1, 1, " TB ";\n}\n" \
        : MG_WGD32(0) \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(add) \
        : "memory")
#define MG_WG128(T, TB) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
        " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
        " %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
        " %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}" \
        ", {%64, %65, %66, %67}, %68, p, 1, 1, " TB ";\n}\n" \
        : MG_WGD32(0), MG_WGD32(32) \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(add) \
        : "memory")
/* d = a b, or d += a b when add: the warpgroup's 64 x 16 A (this warp's 16 rows in registers,
 * mma.sync's A fragment) times the 16 x (8 NI) B at descriptor b, read MN-major (KM false:
 * mg_wg_desc) or K-major (KM: an [8 NI, 16] tile as mg_wg_desca describes one); d this warp's
 * rows in mma.sync's C layout, d[4 j..] the n8 column group j (NI 4, 8 or 16) */
template <bool BF, int NI, bool KM = false> MG_DI void mg_wg(float *d, const unsigned (&a)[4], unsigned long long b, int add) {
    if (NI == 4 && BF) { if (KM) MG_WG32("bf16", "0"); else MG_WG32("bf16", "1"); }
    if (NI == 4 && !BF) { if (KM) MG_WG32("f16", "0"); else MG_WG32("f16", "1"); }
    if (NI == 8 && BF) { if (KM) MG_WG64("bf16", "0"); else MG_WG64("bf16", "1"); }
    if (NI == 8 && !BF) { if (KM) MG_WG64("f16", "0"); else MG_WG64("f16", "1"); }
    if (NI == 16 && BF) { if (KM) MG_WG128("bf16", "0"); else MG_WG128("bf16", "1"); }
    if (NI == 16 && !BF) { if (KM) MG_WG128("f16", "0"); else MG_WG128("f16", "1"); }
}
#else
MG_DI void mg_wg_fence() {}
MG_DI void mg_wg_commit() {}
template <int N> MG_DI void mg_wg_wait() {}
template <bool BF, int NI, bool KM = false> MG_DI void mg_wg(float *, const unsigned (&)[4], unsigned long long, int) {
    static_assert(BF && !BF, "wgmma needs sm_90a: plan without --wgmma");
}
#endif
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* one wgmma with A from shared memory too (descriptor a) */
#define MG_WGS32(T, TB) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n32k16.f32." T "." T \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}" \
        ", %16, %17, p, 1, 1, 0, " TB ";\n}\n" \
        : MG_WGD16(0) \
        : "l"(a), "l"(b), "r"(add) \
        : "memory")
#define MG_WGS64(T, TB) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." T "." T \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
        " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}" \
        ", %32, %33, p, 1, 1, 0, " TB ";\n}\n" \
        : MG_WGD32(0) \
        : "l"(a), "l"(b), "r"(add) \
        : "memory")
#define MG_WGS128(T, TB) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." T "." T \
        " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
        " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
        " %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
        " %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}" \
        ", %64, %65, p, 1, 1, 0, " TB ";\n}\n" \
        : MG_WGD32(0), MG_WGD32(32) \
        : "l"(a), "l"(b), "r"(add) \
        : "memory")
/* mg_wg with A read from shared memory too: descriptor a, K-major (a [64, K] tile in the
 * core-matrix layout: leading offset 128 bytes, stride offset 16K bytes); B read MN-major, or
 * K-major (KM) as in mg_wg */
template <bool BF, int NI, bool KM = false> MG_DI void mg_wgs(float *d, unsigned long long a, unsigned long long b, int add) {
    if (NI == 4 && BF) { if (KM) MG_WGS32("bf16", "0"); else MG_WGS32("bf16", "1"); }
    if (NI == 4 && !BF) { if (KM) MG_WGS32("f16", "0"); else MG_WGS32("f16", "1"); }
    if (NI == 8 && BF) { if (KM) MG_WGS64("bf16", "0"); else MG_WGS64("bf16", "1"); }
    if (NI == 8 && !BF) { if (KM) MG_WGS64("f16", "0"); else MG_WGS64("f16", "1"); }
    if (NI == 16 && BF) { if (KM) MG_WGS128("bf16", "0"); else MG_WGS128("bf16", "1"); }
    if (NI == 16 && !BF) { if (KM) MG_WGS128("f16", "0"); else MG_WGS128("f16", "1"); }
}
#else
template <bool BF, int NI, bool KM = false> MG_DI void mg_wgs(float *, unsigned long long, unsigned long long, int) {
    static_assert(BF && !BF, "wgmma needs sm_90a: plan without --wgmma");
}
#endif
/* mg_chain on wgmma: each warpgroup's four warps hold four consecutive strips (G a multiple
 * of 4); A (fragments in registers, or SA: a descriptor), B and V (core-matrix layout) are
 * read by the warpgroup's products, up to 128 columns wide. The columns go in NH parts,
 * each part's scores one commit group: part h's exps run while part h + 1's scores and
 * part h - 1's P V are on the tensor cores. */
template <int NW, bool BF1, int LA, bool SA, int NC, int NT2, int TS, int SK, int RS, int KS, typename TA,
          typename TB, typename TV, typename F>
MG_DI void mg_chain_wg(float (&o)[TS * NT2][4][4], float *R, int srm, const TA *A, const TB *B, const TV *V,
                       int M, int N1, int N2, int sam, int sak, F f) {
    constexpr int G = NW / SK, NH = NC % 2 == 0 ? 2 : 1, NP = NC / NH; /* NP chunks a part */
    constexpr int NB = NP % 4 == 0 ? 4 : NP % 2 == 0 ? 2 : 1, NB2 = NT2 % 4 == 0 ? 4 : NT2 % 2 == 0 ? 2 : 1;
    const int w = (threadIdx.x >> 5) % G, n1 = (threadIdx.x >> 5) / G * NC * 32;
    unsigned ah[SA ? 1 : TS][SA ? 1 : KS][4], pf[TS][NC * 2][4]; /* SA: A read from shared memory */
    float sc[TS][NC][4][4], rs[TS][2] = {};
#pragma unroll
    for (int i = 0; i < (SA ? 0 : TS * KS); i++) mg_afrag<BF1, LA>(ah[i / KS][i % KS], A, w + i / KS * G, i % KS * 16, M, KS * 16, sam, sak);
    mg_wg_fence();
#pragma unroll
    for (int h = 0; h < NH; h++) { /* S, part by part */
#pragma unroll
        for (int kq = 0; kq < KS; kq++)
#pragma unroll
            for (int i = 0; i < TS * (NP / NB); i++) {
                const int q = i % TS, c = h * NP + i / TS * NB;
                const unsigned long long bd = mg_wg_desc(B + kq * 16 * N1 + (n1 + c * 32) * 8, N1);
                if (SA) mg_wgs<BF1, NB * 4>(&sc[q][c][0][0], mg_wg_desca(A + (w - w % 4 + q * G) * 16 * KS * 16 + kq * 128, KS * 16), bd, kq);
                else mg_wg<BF1, NB * 4>(&sc[q][c][0][0], ah[SA ? 0 : q][SA ? 0 : kq], bd, kq);
            }
        mg_wg_commit();
    }
#pragma unroll
    for (int h = 0; h < NH; h++) {
        mg_wg_wait<NH - 1>(); /* part h's scores (the groups after them: NH - 1) */
#pragma unroll
        for (int i = 0; i < TS * NP * 16; i++) { /* P = f(S); rows g and g + 8 of each strip */
            float &x = sc[i / (NP * 16)][h * NP + i / 16 % NP][i / 4 % 4][i % 4];
            x = f(x);
            rs[i / (NP * 16)][(i & 3) >> 1] += x;
        }
#pragma unroll
        for (int i = 0; i < TS * NP * 2; i++) {
            const int q = i / (NP * 2), kk = h * NP * 2 + i % (NP * 2);
            mg_pfrag(pf[q][kk], sc[q][kk / 2], kk & 1);
        }
        mg_wg_fence();
#pragma unroll
        for (int kk = h * NP * 2; kk < (h + 1) * NP * 2; kk++) /* o += P V */
#pragma unroll
            for (int i = 0; i < TS * (NT2 / NB2); i++)
                mg_wg<true, NB2 * 4>(&o[i % TS * NT2 + i / TS * NB2][0][0], pf[i % TS][kk],
                                     mg_wg_desc(V + (n1 + kk * 16) * N2 + i / TS * NB2 * 256, N2), 1);
        mg_wg_commit();
    }
    mg_wg_wait<0>();
    if (RS) mg_chain_rsum<G, TS, SK, RS>(rs, R, srm, M);
}
