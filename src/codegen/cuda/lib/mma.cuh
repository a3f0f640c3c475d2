/* d += a b on one 16x8x16 tile (PTX mma.sync.m16n8k16, f32 accumulators) */
template <bool BF> MG_DI void mg_mma(float *d, const unsigned *a, const unsigned *b) {
    if (BF)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
/* ldmatrix: four 8x8 matrices of 16-bit elements from shared memory, one row address per
 * lane (lanes 8i..8i+7 give matrix i's rows); .trans transposes each matrix. */
MG_DI void mg_ldm4(unsigned *r, const void *p) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
MG_DI void mg_ldm4t(unsigned *r, const void *p) {
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
/* The B fragments of one k-step (rows k0..k0+15) for two n8 column groups (columns n0..n0+15)
 * of B [K, N] (strides sbk, sbn), in the LB modes of mg_mm_tile below. */
template <bool BF, int LB, typename TB>
MG_DI void mg_bfrag(unsigned (&bf)[4], const TB *b_, int k0, int n0, int N, int K, int sbk, int sbn) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int bk = (lane & 7) + ((lane >> 3) & 1) * 8, bn = (lane >> 4) * 8; /* .trans */
    const int cn = lane & 7, ck = (lane >> 3) & 1, cs = lane >> 4;            /* non-trans */
    constexpr int L = LB & 15, SW = LB >> 4; /* SW: op_tensor.swz */
    if (L == 1 || L == 3) {
        const int k = k0 + bk, n = min(n0 + bn, N - 8), sw = SW == 1 ? (k & 7) : SW == 2 ? (k >> 1) & 3 : 0;
        mg_ldm4t(bf, b_ + k * sbk + (SW ? ((n >> 3) ^ sw) << 3 : n));
    } else if (L == 2 || L == 4) mg_ldm4(bf, b_ + min(n0 + cs * 8 + cn, N - 1) * sbn + k0 + ck * 8);
    if (L >= 3) for (int r = 0; r < 4; r++) bf[r] = mg_h2bf(bf[r]);
    if (!L) {
#pragma unroll
        for (int h = 0; h < 2; h++) { /* b: rows 2t, 2t+8 (+1); column g */
            const int n = n0 + h * 8 + g;
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int k = k0 + 2 * t + 8 * r;
                const float y0 = n < N && k < K ? mg_f(b_[k * sbk + n * sbn]) : 0.0f;
                const float y1 = n < N && k + 1 < K ? mg_f(b_[(k + 1) * sbk + n * sbn]) : 0.0f;
                bf[h * 2 + r] = mg_pack<BF>(y0, y1);
            }
        }
    }
}
/* One warp's 16x32 tile of C += A B (rows mi*16.., columns ni*32..) on tensor cores.
 * Strides in elements. LA = 1: A's fragments by ldmatrix (A row-major in the mma's type,
 * 16-byte rows, K a multiple of 16); LA = 2: A row-major f32, pairs by 8-byte loads; LB = 1: B's by ldmatrix.trans (row-major [K, N]),
 * LB = 2: by ldmatrix (column-major). Rows and columns past M, N then read clamped rows
 * (their results are never stored). LA = 3, LB = 3, 4: the same from f16 tiles, converted
 * to bf16 in registers (a bf16 product). 0: element by element, with rows, columns and depth
 * past M, N, K read as 0, so any shape and type works. */
template <bool BF, int LA, typename TA>
MG_DI void mg_afrag(unsigned (&af)[4], const TA *a_, int mi, int k0, int M, int K, int sam, int sak) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    if (LA == 1 || LA == 3) { /* ldmatrix rows */
        mg_ldm4(af, a_ + min(mi * 16 + (lane & 15), M - 1) * sam + k0 + (lane >> 4) * 8);
        if (LA == 3) for (int r = 0; r < 4; r++) af[r] = mg_h2bf(af[r]);
    } else if (LA == 2) { /* f32 rows: each (k, k+1) pair one 8-byte load */
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int m = min(mi * 16 + g + 8 * (r & 1), M - 1), k = k0 + 2 * t + 8 * (r >> 1);
            const float2 x = *(const float2 *)((const float *)a_ + m * sam + k);
            af[r] = mg_pack<BF>(x.x, x.y);
        }
    } else {
#pragma unroll
        for (int r = 0; r < 4; r++) { /* a: rows g, g+8; columns 2t, 2t+8 (+1) */
            const int m = mi * 16 + g + 8 * (r & 1), k = k0 + 2 * t + 8 * (r >> 1);
            const float x0 = m < M && k < K ? mg_f(a_[m * sam + k * sak]) : 0.0f;
            const float x1 = m < M && k + 1 < K ? mg_f(a_[m * sam + (k + 1) * sak]) : 0.0f;
            af[r] = mg_pack<BF>(x0, x1);
        }
    }
}
/* the fragments of k-step k0: A's, and B's for the tile's two 16-column halves */
template <bool BF, int LA, int LB, typename TA, typename TB>
MG_DI void mg_frags(unsigned (&af)[4], unsigned (&bf)[2][4], const TA *a_, const TB *b_, int mi, int ni, int k0,
                    int M, int N, int K, int sam, int sak, int sbk, int sbn) {
    mg_afrag<BF, LA>(af, a_, mi, k0, M, K, sam, sak);
    mg_bfrag<BF, LB>(bf[0], b_, k0, ni * 32, N, K, sbk, sbn);
    mg_bfrag<BF, LB>(bf[1], b_, k0, ni * 32 + 16, N, K, sbk, sbn);
}
/* LA = LB = 8: a product of two f32 tiles of f16 values whose precision matters (scores
 * before an exp: a score of 500 rounded to f16 is 0.25 off, and exp turns that into 25%):
 * each operand as hi + lo, hi its f16 rounding and lo the f16 rounding of the rest, and
 * a b as hi hi + lo hi + hi lo (22 bits of each operand, about f32's product), read element
 * by element (these are small matmuls). */
MG_DI void mg_split2(unsigned &hi, unsigned &lo, float x0, float x1) {
    hi = mg_pack<false>(x0, x1);
    const mg_h h0 = {(unsigned short)(hi & 0xffffu)}, h1 = {(unsigned short)(hi >> 16)};
    lo = mg_pack<false>(x0 - mg_ldh(h0), x1 - mg_ldh(h1));
}
template <typename TA, typename TB>
MG_DI void mg_mm_tile_split(float (&acc)[4][4], const TA *a_, const TB *b_, int mi, int ni, int M, int N, int K,
                            int sam, int sak, int sbk, int sbn) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int k0 = 0; k0 < K; k0 += 16) {
        unsigned ah[4], al[4], bh[2][4], bl[2][4];
#pragma unroll
        for (int r = 0; r < 4; r++) { /* a: rows g, g+8; columns 2t, 2t+8 (+1) */
            const int m = mi * 16 + g + 8 * (r & 1), k = k0 + 2 * t + 8 * (r >> 1);
            mg_split2(ah[r], al[r], m < M && k < K ? mg_f(a_[m * sam + k * sak]) : 0.0f,
                      m < M && k + 1 < K ? mg_f(a_[m * sam + (k + 1) * sak]) : 0.0f);
        }
#pragma unroll
        for (int h = 0; h < 4; h++) { /* b: rows 2t, 2t+8 (+1); column g, two 16-column halves */
            const int n = ni * 32 + (h >> 1) * 16 + (h & 1) * 8 + g;
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int k = k0 + 2 * t + 8 * r;
                mg_split2(bh[h >> 1][(h & 1) * 2 + r], bl[h >> 1][(h & 1) * 2 + r],
                          n < N && k < K ? mg_f(b_[k * sbk + n * sbn]) : 0.0f,
                          n < N && k + 1 < K ? mg_f(b_[(k + 1) * sbk + n * sbn]) : 0.0f);
            }
        }
#pragma unroll
        for (int h = 0; h < 4; h++) {
            mg_mma<false>(acc[h], al, bh[h >> 1] + (h & 1) * 2);
            mg_mma<false>(acc[h], ah, bl[h >> 1] + (h & 1) * 2);
            mg_mma<false>(acc[h], ah, bh[h >> 1] + (h & 1) * 2);
        }
    }
}
/* LB = 10: a bf16 product (A bf16 or f16, read in mode LA) whose B is an f32 tile (a
 * softmax's P times V stored f32): B as hi + lo, each its bf16 rounding, a b as a hi + a lo
 * (16 bits of V instead of 8, whose 2^-9 errors otherwise add up over a model's layers). */
MG_DI void mg_split2b(unsigned &hi, unsigned &lo, float x0, float x1) {
    hi = mg_pack<true>(x0, x1);
    lo = mg_pack<true>(x0 - __uint_as_float(hi << 16), x1 - __uint_as_float(hi & 0xffff0000u));
}
template <int LA, typename TA, typename TB>
MG_DI void mg_mm_tile_split_b(float (&acc)[4][4], const TA *a_, const TB *b_, int mi, int ni, int M, int N, int K,
                              int sam, int sak, int sbk, int sbn) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int k0 = 0; k0 < K; k0 += 16) {
        unsigned af[4], bh[2][4], bl[2][4];
        mg_afrag<true, LA>(af, a_, mi, k0, M, K, sam, sak);
#pragma unroll
        for (int h = 0; h < 4; h++) { /* b: rows 2t, 2t+8 (+1); column g, two 16-column halves */
            const int n = ni * 32 + (h >> 1) * 16 + (h & 1) * 8 + g;
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const int k = k0 + 2 * t + 8 * r;
                mg_split2b(bh[h >> 1][(h & 1) * 2 + r], bl[h >> 1][(h & 1) * 2 + r],
                           n < N && k < K ? mg_f(b_[k * sbk + n * sbn]) : 0.0f,
                           n < N && k + 1 < K ? mg_f(b_[(k + 1) * sbk + n * sbn]) : 0.0f);
            }
        }
#pragma unroll
        for (int h = 0; h < 4; h++) {
            mg_mma<true>(acc[h], af, bl[h >> 1] + (h & 1) * 2);
            mg_mma<true>(acc[h], af, bh[h >> 1] + (h & 1) * 2);
        }
    }
}
/* Loads one k-step ahead: k-step k + 1's fragments are requested before k-step k's
 * products issue, so a warp waits for shared memory once, not once a step (the products
 * and their order are unchanged). */
template <bool BF, int LA, int LB, typename TA, typename TB>
MG_DI void mg_mm_tile(float (&acc)[4][4], const TA *a_, const TB *b_, int mi, int ni, int M, int N, int K,
                      int sam, int sak, int sbk, int sbn) {
    if (LA == 8) { /* f32 operands split in two f16 halves (above) */
        mg_mm_tile_split(acc, a_, b_, mi, ni, M, N, K, sam, sak, sbk, sbn);
        return;
    }
    if (LB == 10) { /* a bf16 product's f32 B split in two bf16 halves */
        mg_mm_tile_split_b<LA>(acc, a_, b_, mi, ni, M, N, K, sam, sak, sbk, sbn);
        return;
    }
    unsigned a0[4], b0[2][4], a1[4], b1[2][4];
    if (K > 0) mg_frags<BF, LA, LB>(a0, b0, a_, b_, mi, ni, 0, M, N, K, sam, sak, sbk, sbn);
    for (int k0 = 0; k0 < K; k0 += 32) { /* two k-steps an iteration, one register set each */
        if (k0 + 16 < K) mg_frags<BF, LA, LB>(a1, b1, a_, b_, mi, ni, k0 + 16, M, N, K, sam, sak, sbk, sbn);
#pragma unroll
        for (int h = 0; h < 4; h++) mg_mma<BF>(acc[h], a0, b0[h >> 1] + (h & 1) * 2);
        if (k0 + 16 >= K) break;
        if (k0 + 32 < K) mg_frags<BF, LA, LB>(a0, b0, a_, b_, mi, ni, k0 + 32, M, N, K, sam, sak, sbk, sbn);
#pragma unroll
        for (int h = 0; h < 4; h++) mg_mma<BF>(acc[h], a1, b1[h >> 1] + (h & 1) * 2);
    }
}
/* one warp's 16x32 tile of accumulators to C (rows g, g+8; columns 2t (+1)) */
struct mg_idf { __device__ __forceinline__ float operator()(float x) const { return x; } }; /* no epilogue */
/* An epilogue f at row m, column n of its tile: f(x); for a masked one (a reduced dim's rows or
 * columns past the call's length, docs/tuning.md "Reduced dims") 0 where m >= rows or n >= cols
 * (a select: f's value there, NaN or not, never enters) */
template <typename F> struct mg_msk { F f; long long rows, cols; };
template <typename F> MG_DI mg_msk<F> mg_mask(F f, long long rows, long long cols) { return mg_msk<F>{f, rows, cols}; }
template <typename F> MG_DI float mg_ep(const F &f, float x, int, int) { return f(x); }
template <typename F> MG_DI float mg_ep(const mg_msk<F> &w, float x, int m, int n) { return m < w.rows && n < w.cols ? w.f(x) : 0.0f; }
/* whether every element of rows [0, rows) and columns [0, cols) keeps f's value (no mask
 * reaches them), and f itself there */
template <typename F> MG_DI bool mg_ep_whole(const F &, long long, long long) { return true; }
template <typename F> MG_DI bool mg_ep_whole(const mg_msk<F> &w, long long rows, long long cols) { return rows <= w.rows && cols <= w.cols; }
template <typename F> MG_DI const F &mg_ep_fn(const F &f) { return f; }
template <typename F> MG_DI const F &mg_ep_fn(const mg_msk<F> &w) { return w.f; }
/* A chain's scores masked past column `cols` where every score there is 0 and f(0) = f0 is
 * finite (mask.c: the zeros a reduced dim keeps past L): the chain applies f everywhere and
 * takes f0 once a place past the limit off its row sums (its product with V adds f0 * 0);
 * anywhere else a select as mg_msk */
template <typename F> struct mg_mskz { F f; long long cols; float f0; };
template <typename F> MG_DI mg_mskz<F> mg_mask0(F f, long long cols, float f0) { return mg_mskz<F>{f, cols, f0}; }
template <typename F> MG_DI float mg_ep(const mg_mskz<F> &w, float x, int, int n) { return n < w.cols ? w.f(x) : 0.0f; }
template <typename F> MG_DI bool mg_ep_whole(const mg_mskz<F> &, long long, long long) { return true; }
template <typename F> MG_DI const F &mg_ep_fn(const mg_mskz<F> &w) { return w.f; }
/* Row sums rs of TS strips over a thread's columns (from + 32 c + 8 s4 + b, c < NC): those
 * of mg_mskz's places past its limit taken off (nothing for any other f) */
template <int TS, int NC, typename F> MG_DI void mg_ep_fix(const F &, float (&)[TS][2], long long) {}
template <int TS, int NC, typename F> MG_DI void mg_ep_fix(const mg_mskz<F> &w, float (&rs)[TS][2], long long from) {
    int past = 0;
#pragma unroll
    for (int c = 0; c < NC * 8; c++) past += from + c / 8 * 32 + c % 8 / 2 * 8 + c % 2 >= w.cols;
    if (!past) return;
#pragma unroll
    for (int q = 0; q < TS; q++) rs[q][0] -= past * w.f0, rs[q][1] -= past * w.f0;
}
template <typename TC, typename F>
MG_DI void mg_mm_put(TC *c_, const float (&acc)[4][4], int mi, int ni, int M, int N, int scm, int scn, F f) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int s = 0; s < 4; s++)
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int m = mi * 16 + g + 8 * (r >> 1), n = ni * 32 + s * 8 + 2 * t + (r & 1);
            if (m < M && n < N) mg_put(&c_[m * scm + n * scn], mg_ep(f, acc[s][r], m, n));
        }
}
/* C = A B for every matrix of a [B0, B1] batch, by the whole block: warps take the 16x32
 * output tiles in turn, tile 0 on warp W0 (so matmuls of one barrier interval start on
 * different warps). Strides are in elements (0 on broadcast dims). */
template <bool BF, int LA, int LB, int W0, typename TA, typename TB, typename TC, typename F>
MG_DI void mg_mm_tc(TC *C, const TA *A, const TB *B, int B0, int B1, int M, int N, int K,
                    int sa0, int sa1, int sam, int sak, int sb0, int sb1, int sbk, int sbn,
                    int sc0, int sc1, int scm, int scn, F f) { /* C = f(A B) */
    const int mt = (M + 15) >> 4, nt = (N + 31) >> 5, tiles = B0 * B1 * mt * nt, W = blockDim.x >> 5;
    for (int tile = ((threadIdx.x >> 5) + W - W0 % W) % W; tile < tiles; tile += W) {
        const int ni = tile % nt, mi = tile / nt % mt, b1 = tile / (nt * mt) % B1, b0 = tile / (nt * mt * B1);
        float acc[4][4] = {};
        mg_mm_tile<BF, LA, LB>(acc, A + b0 * sa0 + b1 * sa1, B + b0 * sb0 + b1 * sb1, mi, ni, M, N, K, sam, sak, sbk, sbn);
        mg_mm_put(C + b0 * sc0 + b1 * sc1, acc, mi, ni, M, N, scm, scn, f);
    }
}
/* acc += A B, the sum kept in registers across the for-loop. The warps form SK groups;
 * group s sums the s-th of SK equal slices of the depth K (split-K within the block, for
 * matmuls with fewer 16x32 tiles than warps); within a group, warp w owns tiles w, w + G,
 * ... for G warps a group (at most T of them, acc[q] for its q-th). */
template <bool BF, int LA, int LB, int T, int SK, typename TA, typename TB>
MG_DI void mg_mm_acc(float (&acc)[T][4][4], const TA *A, const TB *B, int B0, int B1, int M, int N, int K,
                     int sa0, int sa1, int sam, int sak, int sb0, int sb1, int sbk, int sbn) {
    const int mt = (M + 15) >> 4, nt = (N + 31) >> 5, tiles = B0 * B1 * mt * nt;
    const int G = (blockDim.x >> 5) / SK, w = (threadIdx.x >> 5) % G, ks = (threadIdx.x >> 5) / G * (K / SK);
    if ((threadIdx.x >> 5) >= G * SK) return;
#pragma unroll
    for (int q = 0; q < T; q++) {
        const int tile = w + q * G;
        if (tile >= tiles) break;
        const int ni = tile % nt, mi = tile / nt % mt, b1 = tile / (nt * mt) % B1, b0 = tile / (nt * mt * B1);
        mg_mm_tile<BF, LA, LB>(acc[q], A + b0 * sa0 + b1 * sa1 + ks * sak, B + b0 * sb0 + b1 * sb1 + ks * sbk, mi, ni,
                               M, N, K / SK, sam, sak, sbk, sbn);
    }
}
/* The sums of mg_mm_acc to C. With scratch P (SK - 1 dense [B0, B1, M, N] copies): group
 * 0 to C and group s to copy s - 1, side by side, then one pass adds the copies in
 * order; without (P null): group 0 stores, then each further group adds its slice's,
 * one group at a time. Either way C = ((g0 + g1) + g2) + ..: the same result every run.
 * Every thread calls it; P may be the next call's scratch as soon as it returns. */
template <int T, int SK>
MG_DI void mg_mm_acc_store(float *C, const float (&acc)[T][4][4], float *P, int B0, int B1, int M, int N,
                           int sc0, int sc1, int scm, int scn) {
    const int mt = (M + 15) >> 4, nt = (N + 31) >> 5, tiles = B0 * B1 * mt * nt, all = B0 * B1 * M * N;
    const int G = (blockDim.x >> 5) / SK, w = (threadIdx.x >> 5) % G, s = (threadIdx.x >> 5) / G;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int step = 0; step < (P ? 1 : SK); step++) {
        if (step) __syncthreads();
        if (!P && s != step) continue;
#pragma unroll
        for (int q = 0; q < T; q++) {
            const int tile = w + q * G;
            if (tile >= tiles || s >= SK) break;
            const int ni = tile % nt, mi = tile / nt % mt, b1 = tile / (nt * mt) % B1, b0 = tile / (nt * mt * B1);
            float *c_ = P && s ? P + (s - 1) * all + (b0 * B1 + b1) * M * N : C + b0 * sc0 + b1 * sc1;
            const int cm = P && s ? N : scm, cn = P && s ? 1 : scn;
#pragma unroll
            for (int s4 = 0; s4 < 4; s4++)
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    const int m = mi * 16 + g + 8 * (r >> 1), n = ni * 32 + s4 * 8 + 2 * t + (r & 1);
                    if (m < M && n < N) c_[m * cm + n * cn] = (step ? c_[m * cm + n * cn] : 0.0f) + acc[q][s4][r];
                }
        }
    }
    if (!P || SK == 1) return;
    __syncthreads();
    for (int e = threadIdx.x; e < all; e += blockDim.x) {
        const int n = e % N, m = e / N % M, b1 = e / (M * N) % B1, b0 = e / (M * N * B1);
        float *c_ = C + b0 * sc0 + b1 * sc1 + m * scm + n * scn;
        float v = *c_;
#pragma unroll
        for (int q = 0; q < SK - 1; q++) v += P[q * all + e];
        *c_ = v;
    }
    /* P is read to the end before a next store (another accumulator's, a gate and an up
     * projection's) writes its copies there: without this barrier that store's groups
     * overwrote P under this one's adding pass (RMSNorm + gate/up at 2 tokens: a few
     * outputs off by up to 164 in a third of the runs) */
    __syncthreads();
}
