/* P's A fragment for k-step h (columns 16 h..) of a 32-column score chunk s in mma.sync's
 * C layout: the m16n8 accumulator layout is the m16n8k16 A layout, packed to bf16 */
MG_DI void mg_pfrag(unsigned (&af)[4], const float (&s)[4][4], int h) {
    const float *pa = s[h * 2], *pb = s[h * 2 + 1];
    af[0] = mg_pack<true>(pa[0], pa[1]), af[1] = mg_pack<true>(pa[2], pa[3]);
    af[2] = mg_pack<true>(pb[0], pb[1]), af[3] = mg_pack<true>(pb[2], pb[3]);
}
/* The row sums rs of a warp's TS strips (each lane holds part of rows g, g + 8) to R: the
 * quad adds, then the SK groups, one at a time (a fixed order). Every thread calls it. */
template <int G, int TS, int SK, int RS>
MG_DI void mg_chain_rsum(float (&rs)[TS][2], float *R, int srm, int M) {
    const int w = (threadIdx.x >> 5) % G, s = (threadIdx.x >> 5) / G, g = (threadIdx.x & 31) >> 2;
#pragma unroll
    for (int q = 0; q < TS; q++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            rs[q][h] += __shfl_xor_sync(0xffffffffu, rs[q][h], 1);
            rs[q][h] += __shfl_xor_sync(0xffffffffu, rs[q][h], 2);
        }
    for (int step = 0; step < SK; step++) {
        if (step) __syncthreads();
        if (s != step || (threadIdx.x & 3)) continue;
#pragma unroll
        for (int q = 0; q < TS; q++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int m = (w + q * G) * 16 + g + 8 * h;
                if (m < M) R[m * srm] = (RS == 2 && !step ? 0.0f : R[m * srm]) + rs[q][h];
            }
    }
}
/* mg_chain's sums o to C through f: group 0 stores, then each further group adds its
 * slice's, one group at a time (f is the identity when SK > 1). Every thread calls it. */
template <int NW, int NT2, int TS, int SK, typename TC, typename F>
MG_DI void mg_chain_put(TC *C, const float (&o)[TS * NT2][4][4], int M, int N2, int scm, int scn, F f) {
    constexpr int G = NW / SK;
    const int w = (threadIdx.x >> 5) % G, s = (threadIdx.x >> 5) / G;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int step = 0; step < SK; step++) {
        if (step) __syncthreads();
        if (s != step) continue;
#pragma unroll
        for (int q = 0; q < TS; q++)
#pragma unroll
            for (int c2 = 0; c2 < NT2; c2++)
#pragma unroll
                for (int i = 0; i < 16; i++) { /* o[.][s4][r]: row g + 8 (r >> 1), column s4 * 8 + 2t + (r & 1) */
                    const int s4 = i >> 2, r = i & 3;
                    const int m = (w + q * G) * 16 + g + 8 * (r >> 1), n = c2 * 32 + s4 * 8 + 2 * t + (r & 1);
                    if (m >= M || n >= N2) continue;
                    TC *c_ = &C[m * scm + n * scn];
                    mg_put(c_, mg_ep(f, (step ? mg_f(*c_) : 0.0f) + o[q * NT2 + c2][s4][r], m, n));
                }
    }
}
/* Attention's chain, a warp per 16-row strip of M (FlashAttention's inner step): the strip's
 * scores S = A B over this warp group's NC * 32 of the N1 columns (depth KS * 16), in
 * registers; P = f(S); P's row sums to R (RS = 1: added; 2: stored; 0: none) and
 * o += P V, with P as bf16 A fragments straight from the score registers. SK groups of
 * warps split N1 (group s takes columns s * NC * 32..), G = warps / SK warps a group take
 * strips w, w + G, .. (TS each). Every thread calls it. */
template <int NW, bool BF1, int LA, int LB, int LV, int NC, int NT2, int TS, int SK, int RS, int KS, typename TA,
          typename TB, typename TV, typename F>
MG_DI void mg_chain(float (&o)[TS * NT2][4][4], float *R, int srm, const TA *A, const TB *B, const TV *V, int M,
                    int N1, int N2, int sam, int sak, int sbk, int sbn, int svk, int svn, F f) {
    constexpr int G = NW / SK, K1 = KS * 16;
    const int w = (threadIdx.x >> 5) % G, n1 = (threadIdx.x >> 5) / G * NC * 32;
    float sc[TS][NC][4][4] = {}, rs[TS][2] = {};
    /* S, k-step by k-step over all chunks; a B fragment serves TS strips (strips past M
     * read clamped rows) */
#pragma unroll
    for (int k0 = 0; k0 < K1; k0 += 16) {
        unsigned af[TS][4];
#pragma unroll
        for (int q = 0; q < TS; q++) mg_afrag<BF1, LA>(af[q], A, w + q * G, k0, M, K1, sam, sak);
#pragma unroll
        for (int c = 0; c < NC * 2; c++) {
            unsigned bf[4];
            mg_bfrag<BF1, LB>(bf, B, k0, n1 + c * 16, N1, K1, sbk, sbn);
#pragma unroll
            for (int q = 0; q < TS; q++)
                mg_mma<BF1>(sc[q][c / 2][c % 2 * 2], af[q], bf), mg_mma<BF1>(sc[q][c / 2][c % 2 * 2 + 1], af[q], bf + 2);
        }
    }
    /* P = f(S) and its row sums (rows g and g + 8 of each strip); a masked f (mg_mask) checks
     * each element's place only where this warp group's columns reach its limits */
    if (mg_ep_whole(f, M, n1 + NC * 32)) {
#pragma unroll
        for (int i = 0; i < TS * NC * 16; i++) {
            float &x = sc[i / (NC * 16)][i / 16 % NC][i / 4 % 4][i % 4];
            x = mg_ep_fn(f)(x);
            rs[i / (NC * 16)][(i & 3) >> 1] += x;
        }
    } else {
#pragma unroll
        for (int i = 0; i < TS * NC * 16; i++) {
            float &x = sc[i / (NC * 16)][i / 16 % NC][i / 4 % 4][i % 4];
            const int g = (threadIdx.x & 31) >> 2, t = threadIdx.x & 3, r = i % 4;
            x = mg_ep(f, x, (w + i / (NC * 16) * G) * 16 + g + 8 * (r >> 1), n1 + i / 16 % NC * 32 + i / 4 % 4 * 8 + 2 * t + (r & 1));
            rs[i / (NC * 16)][(i & 3) >> 1] += x;
        }
    }
    mg_ep_fix<TS, NC>(f, rs, n1 + 2 * (threadIdx.x & 3));
    /* o += P V: P's k-step kk (columns 16 kk..) as bf16 A fragments */
#pragma unroll
    for (int kk = 0; kk < NC * 2; kk++) {
        unsigned af[TS][4];
#pragma unroll
        for (int q = 0; q < TS; q++) mg_pfrag(af[q], sc[q][kk >> 1], kk & 1);
#pragma unroll
        for (int c2 = 0; c2 < NT2 * 2; c2++) {
            unsigned bf[4];
            mg_bfrag<true, LV>(bf, V, n1 + kk * 16, c2 * 16, N2, N1, svk, svn);
#pragma unroll
            for (int q = 0; q < TS; q++)
                mg_mma<true>(o[q * NT2 + c2 / 2][c2 % 2 * 2], af[q], bf), mg_mma<true>(o[q * NT2 + c2 / 2][c2 % 2 * 2 + 1], af[q], bf + 2);
        }
    }
    if (RS) mg_chain_rsum<G, TS, SK, RS>(rs, R, srm, M);
}
