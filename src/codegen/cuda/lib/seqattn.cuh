/* seqattn (ops.def, docs/ragged.md): attention within each sequence of a packed batch, one
 * block per work item (sequence b, BM-query tile, head h), FlashAttention's loop over 64-key
 * tiles of the sequence's own keys with the running maximum and sum, products on mma.sync
 * (f16 or bf16, BF; operands stored otherwise are rounded to it as they load). Each warp takes
 * MT strips of 16 query rows (BM / (16 MT) warps a block), so each K and V fragment read from
 * shared memory serves MT products; K and V tiles come by cp.async, two stages where they
 * fit (D <= 64), when stored in BF's type (else loaded, rounded and stored by the threads).
 * q, k, v, out: [T, H, D] rows; lens[B]: the lengths as floats.
 *
 * Work items come longest sequence first (CORA's balancing: a sequence's work grows as its
 * length squared), every head of an item adjacent: block x = item * H + h. Each block finds
 * its item from the lengths (prefix sums over B in shared memory, no prelude launch): item
 * ranks order sequences by tile count, then index. Blocks past the last item write the zero
 * rows past the last sequence. Keys past a sequence's end score -inf; query rows past it are
 * computed on zeros and not stored. Launch: ((ceil(T / BM) + B + 1) * H) blocks of
 * BM / (16 MT) warps. BM = 128 shares each K and V tile among twice the query rows, at the
 * cost of more rows computed past a short sequence's end (codegen/seqattn.c chooses). */
#define MG_NEG_INF __int_as_float(0xff800000)
/* Operands stored in any of f16, bf16, f32, loaded as the products' 16-bit type (BF: bf16):
 * two elements in a register, eight in a uint4 (as stored when the types match, else through
 * f32, rounded to nearest). */
MG_DI float2 mg_sa_f2(const mg_h *p) { return make_float2(mg_ldh(p[0]), mg_ldh(p[1])); }
MG_DI float2 mg_sa_f2(const mg_bh *p) { return make_float2(mg_ldb(p[0]), mg_ldb(p[1])); }
MG_DI float2 mg_sa_f2(const float *p) { return *(const float2 *)p; }
template <bool BF, typename T> struct mg_sa_same { static constexpr bool v = false; };
template <> struct mg_sa_same<false, mg_h> { static constexpr bool v = true; };
template <> struct mg_sa_same<true, mg_bh> { static constexpr bool v = true; };
template <bool BF, typename T> MG_DI unsigned mg_sa_ld2(const T *p) {
    if (mg_sa_same<BF, T>::v) return *(const unsigned *)p;
    const float2 f = mg_sa_f2(p);
    return mg_pack<BF>(f.x, f.y);
}
template <bool BF, typename T> MG_DI uint4 mg_sa_ld8(const T *p) {
    if (mg_sa_same<BF, T>::v) return *(const uint4 *)p;
    return make_uint4(mg_sa_ld2<BF>(p), mg_sa_ld2<BF>(p + 2), mg_sa_ld2<BF>(p + 4), mg_sa_ld2<BF>(p + 6));
}
/* Block w's work item (h = its head): *off, *L its sequence's first row and length, *tile
 * its BM-row query tile; false past the items, after writing 0 to this block's share of the
 * rows past the last sequence (then nothing else to do). Every thread of the NT calls it; it
 * waits for the previous kernel's results (q, k, v) once the lengths are read. Each sequence's
 * first item is a sum over the other sequences, split among P adjacent threads (P B <= NT, at
 * most 8) and combined by shuffles: a batch of 32 takes 4 steps a thread instead of 32. */
template <int BM, int NT, typename TO>
MG_DI bool mg_sa_item(TO *__restrict__ out, const float *__restrict__ lens, int T, int H, int D, int B, int w, int h,
                      int *off, int *L, int *tile) {
    __shared__ int sl[1024], sn[1024], s_b, s_tile, s_off, s_len, s_items, s_sum;
    const int tid = threadIdx.x;
    if (tid == 0) s_b = -1, s_items = 0, s_sum = 0;
    for (int b = tid; b < B; b += NT) {
        const float Lf = lens[b];
        const int Lb = Lf > 0.0f ? (Lf < (float)T ? (int)Lf : T) : 0;
        sl[b] = Lb, sn[b] = (Lb + BM - 1) / BM;
    }
    __syncthreads();
    const int P = B * 8 <= NT ? 8 : B * 4 <= NT ? 4 : B * 2 <= NT ? 2 : 1, part = tid % P, G = NT / P;
    int items = 0, sum = 0; /* this thread's share of the totals */
    for (int r = 0, b0 = tid / P; r < (B + G - 1) / G; r++, b0 += G) { /* every thread the same steps */
        const int b = b0 < B ? b0 : B - 1;
        const int Lb = sl[b], nt = sn[b];
        int start = 0, o = 0; /* items before b's first: longer sequences', then equal ones' before b */
        for (int c = part; c < b; c += P) {
            const int n = sn[c];
            start += n >= nt ? n : 0, o += sl[c];
        }
        for (int c = b + 1 + part; c < B; c += P) {
            const int n = sn[c];
            start += n > nt ? n : 0;
        }
#pragma unroll
        for (int x = 1; x < 8; x *= 2)
            if (x < P) start += __shfl_xor_sync(0xffffffffu, start, x), o += __shfl_xor_sync(0xffffffffu, o, x);
        if (b0 >= B || part) continue;
        items += nt, sum += Lb;
        if (w >= start && w < start + nt) s_b = b, s_tile = w - start, s_off = o, s_len = min(Lb, T - o);
    }
    items = __reduce_add_sync(0xffffffffu, items), sum = __reduce_add_sync(0xffffffffu, sum);
    if ((tid & 31) == 0) atomicAdd(&s_items, items), atomicAdd(&s_sum, sum);
    __syncthreads();
    mg_grid_wait(); /* the previous kernel's results: q, k, v */
    if (s_b < 0) { /* past the items: the rows past the last sequence are 0 */
        const int r0 = s_sum + (w - s_items) * BM, HD = H * D;
        for (int e = tid; e < BM * D; e += NT) {
            const int r = r0 + e / D;
            if (w >= s_items && r >= s_sum && r < T) mg_put(&out[(long long)r * HD + h * D + e % D], 0.0f);
        }
        return false;
    }
    *off = s_off, *L = s_len, *tile = s_tile;
    return true;
}
template <int D, bool BF, int MT, int BM, typename TQ, typename TK, typename TV, typename TO>
MG_DI void mg_seqattn(TO *__restrict__ out, const TQ *__restrict__ q, const TK *__restrict__ k,
                      const TV *__restrict__ v, const float *__restrict__ lens, int T, int H, int B) {
    constexpr int BN = 64, LD = D + 8, CH = D / 8; /* CH 16-byte chunks a row */
    constexpr int NT = BM / (16 * MT) * 32, S = D <= 64 ? 2 : 1; /* threads, K/V stages */
    constexpr bool ASYNC = mg_sa_same<BF, TK>::v && mg_sa_same<BF, TV>::v;
    static_assert(D % 16 == 0 && D <= 128 && (MT == 1 || MT == 2) && (BM == 64 || BM == 128),
                  "head dim a multiple of 16, at most 128; 64 or 128 query rows a block");
    __shared__ __align__(16) unsigned short ks[S][BN * LD], vs[S][BN * LD];
    const int tid = threadIdx.x, h = blockIdx.x % H, w = blockIdx.x / H;
    const int lane = tid & 31, wi = tid >> 5, g = lane >> 2, t = lane & 3;
    int off, L, tile;
    if (!mg_sa_item<BM, NT>(out, lens, T, H, D, B, w, h, &off, &L, &tile)) return;
    const int HD = H * D;
    const int q0 = tile * BM + wi * 16 * MT;
    const long long base = (long long)off * HD + h * D;
    /* this warp's MT strips of 16 query rows as A fragments (rows g, g + 8; columns 2t.., 2t + 8..) */
    unsigned qf[MT][D / 16][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int kk = 0; kk < D / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int row = q0 + mt * 16 + g + 8 * (r & 1), col = kk * 16 + 2 * t + 8 * (r >> 1);
                qf[mt][kk][r] = row < L ? mg_sa_ld2<BF>(&q[base + (long long)row * HD + col]) : 0u;
            }
    float o[MT][D / 8][4] = {}, m[MT][2], l[MT][2] = {};
#pragma unroll
    for (int mt = 0; mt < MT; mt++) m[mt][0] = m[mt][1] = MG_NEG_INF;
    const int ntiles = (L + BN - 1) / BN;
    auto fetch = [&](int kt, int st) { /* key tile kt into stage st; rows past L are 0 */
        for (int c = tid; c < BN * CH; c += NT) {
            const int row = c / CH, col = c % CH * 8, key = kt * BN + row;
            const long long a = base + (long long)key * HD + col;
            unsigned short *kd = &ks[st][row * LD + col], *vd = &vs[st][row * LD + col];
            if (key >= L) *(uint4 *)kd = *(uint4 *)vd = make_uint4(0, 0, 0, 0);
            else if (ASYNC) mg_cp16(kd, &k[a]), mg_cp16(vd, &v[a]);
            else *(uint4 *)kd = mg_sa_ld8<BF>(&k[a]), *(uint4 *)vd = mg_sa_ld8<BF>(&v[a]);
        }
        mg_cp_commit();
    };
    if (S == 2) fetch(0, 0);
    for (int kt = 0; kt < ntiles; kt++) {
        const int st = S == 2 ? kt & 1 : 0;
        if (S == 2) { /* the next tile in flight during this one's products */
            if (kt + 1 < ntiles) fetch(kt + 1, st ^ 1);
            else mg_cp_commit();
            mg_cp_wait<1>();
        } else fetch(kt, 0), mg_cp_wait<0>();
        __syncthreads();
        const unsigned short *kst = ks[st], *vst = vs[st];
        float s[MT][BN / 8][4] = {};
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int kk = 0; kk < D / 16; kk += 2) { /* K fragments of two k-steps: keys j*8.., dims kk*16.. */
                unsigned bf[4];
                if (kk + 1 < D / 16) mg_ldm4(bf, &kst[(j * 8 + (lane & 7)) * LD + kk * 16 + (lane >> 3) * 8]);
                else { /* the last k-step of an odd count */
                    const unsigned *kp = (const unsigned *)&kst[(j * 8 + g) * LD + kk * 16 + 2 * t];
                    bf[0] = kp[0], bf[1] = kp[4];
                }
#pragma unroll
                for (int mt = 0; mt < MT; mt++) {
                    mg_mma<BF>(s[mt][j], qf[mt][kk], bf);
                    if (kk + 1 < D / 16) mg_mma<BF>(s[mt][j], qf[mt][kk + 1], bf + 2);
                }
            }
        if (kt == ntiles - 1) /* the only tile with keys past L: they score -inf */
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int j = 0; j < BN / 8; j++)
#pragma unroll
                    for (int r = 0; r < 4; r++)
                        if (kt * BN + j * 8 + 2 * t + (r & 1) >= L) s[mt][j][r] = MG_NEG_INF;
        constexpr float LOG2E = 1.4426950408889634f; /* p = 2^(s log2 e - m log2 e), one FMA */
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            float mx[2] = {m[mt][0], m[mt][1]};
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
#pragma unroll
                for (int r = 0; r < 4; r++) mx[r >> 1] = fmaxf(mx[r >> 1], s[mt][j][r]);
            float alpha[2], ml[2];
#pragma unroll
            for (int h2 = 0; h2 < 2; h2++) {
                mx[h2] = fmaxf(mx[h2], __shfl_xor_sync(0xffffffffu, mx[h2], 1));
                mx[h2] = fmaxf(mx[h2], __shfl_xor_sync(0xffffffffu, mx[h2], 2));
                alpha[h2] = mg_ex2((m[mt][h2] - mx[h2]) * LOG2E), m[mt][h2] = mx[h2], l[mt][h2] *= alpha[h2];
                ml[h2] = -mx[h2] * LOG2E;
            }
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
#pragma unroll
                for (int r = 0; r < 4; r++)
                    s[mt][j][r] = mg_ex2(fmaf(s[mt][j][r], LOG2E, ml[r >> 1])), l[mt][r >> 1] += s[mt][j][r];
#pragma unroll
            for (int j = 0; j < D / 8; j++)
#pragma unroll
                for (int r = 0; r < 4; r++) o[mt][j][r] *= alpha[r >> 1];
        }
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            unsigned pa[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                pa[mt][0] = mg_pack<BF>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
                pa[mt][1] = mg_pack<BF>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
                pa[mt][2] = mg_pack<BF>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
                pa[mt][3] = mg_pack<BF>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
            }
#pragma unroll
            for (int jn = 0; jn < D / 8; jn += 2) {
                unsigned vb[4];
                mg_ldm4t(vb, &vst[(kk * 16 + (lane >> 3 & 1) * 8 + (lane & 7)) * LD + (jn + (lane >> 4)) * 8]);
#pragma unroll
                for (int mt = 0; mt < MT; mt++) mg_mma<BF>(o[mt][jn], pa[mt], vb), mg_mma<BF>(o[mt][jn + 1], pa[mt], vb + 2);
            }
        }
        __syncthreads(); /* this stage's readers are done before it is filled again */
    }
#pragma unroll
    for (int mt = 0; mt < MT; mt++) {
#pragma unroll
        for (int h2 = 0; h2 < 2; h2++) {
            l[mt][h2] += __shfl_xor_sync(0xffffffffu, l[mt][h2], 1);
            l[mt][h2] += __shfl_xor_sync(0xffffffffu, l[mt][h2], 2);
        }
#pragma unroll
        for (int j = 0; j < D / 8; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int row = q0 + mt * 16 + g + 8 * (r >> 1);
                if (row < L) mg_put(&out[base + (long long)row * HD + j * 8 + 2 * t + (r & 1)], o[mt][j][r] / l[mt][r >> 1]);
            }
    }
}
/* two results packed as the output's 16-bit type */
MG_DI unsigned mg_sa_pk(const mg_h *, float a, float b) { return mg_pack<false>(a, b); }
MG_DI unsigned mg_sa_pk(const mg_bh *, float a, float b) { return mg_pack<true>(a, b); }
/* 16-byte chunk c of a tile of rows r0.. (row r0 + c / D * 8 + c % 8, columns c / 8 % (D / 8) * 8..)
 * of x (row stride HD from base) into the core-matrix layout at d + c * 8, by cp.async when x is
 * stored in the products' type, else loaded and rounded; rows past L are 0 */
template <bool BF, int D, typename T>
MG_DI void mg_sa_chunk(const T *__restrict__ x, unsigned short *d, long long base, int HD, int r0, int L, int c) {
    const int row = r0 + c / D * 8 + c % 8, col = c / 8 % (D / 8) * 8;
    const long long a = base + (long long)row * HD + col;
    if (row >= L) *(uint4 *)&d[c * 8] = make_uint4(0, 0, 0, 0);
    else if (mg_sa_same<BF, T>::v) mg_cp16(&d[c * 8], &x[a]);
    else *(uint4 *)&d[c * 8] = mg_sa_ld8<BF>(&x[a]);
}
/* mg_seqattn on sm_90a warpgroup products (wgmma.cuh): the same work items and online softmax,
 * each warpgroup 64 query rows (BM / 64 warpgroups a block, sharing each K and V tile), the
 * scores S = Q K^T with Q and K read K-major from shared memory, O += P V with P in registers
 * and V read MN-major; the tiles in the core-matrix layout (element (row, d) at row / 8 * 8D +
 * d / 8 * 64 + row % 8 * 8 + d % 8), filled by cp.async in that order (each warp's writes
 * contiguous) or by the threads when the types differ. D 32, 64 or 128. S stages of K and V,
 * S - 2 tiles requested ahead. Each step: one barrier (tile kt landed; every warpgroup's P V of
 * tile kt - 2 done), tile kt + S - 2 requested into tile kt - 2's stage, S of tile kt issued,
 * then P V of tile kt - 1 (FlashAttention-3's overlap within a
 * warpgroup: it runs during tile kt's softmax, and is waited for before O is rescaled). O / l
 * leaves through the Q rows' shared memory, 16 bytes a lane (16-bit results). Dynamic shared
 * memory: S stages of K and V and the BM query rows ((2 S * 64 + BM) * D * 2 bytes). */
template <int D, bool BF, int BM, int S, typename TQ, typename TK, typename TV, typename TO>
MG_DI void mg_seqattn_wg(TO *__restrict__ out, const TQ *__restrict__ q, const TK *__restrict__ k,
                         const TV *__restrict__ v, const float *__restrict__ lens, int T, int H, int B) {
    constexpr int BN = 64, CH = D / 8, NT = BM / 64 * 128, A = S - 2; /* A tiles ahead */
    static_assert((D == 32 || D == 64 || D == 128) && (BM == 64 || BM == 128) && S >= 3, "head dim 32, 64 or 128; 64 or 128 rows; 3 stages or more");
    extern __shared__ __align__(128) unsigned char mg_sa_dyn[];
    unsigned short (*ks)[BN * D] = (unsigned short (*)[BN * D])mg_sa_dyn, (*vs)[BN * D] = ks + S, *qsm = vs[S];
    const int tid = threadIdx.x, h = blockIdx.x % H, w = blockIdx.x / H;
    const int lane = tid & 31, g = lane >> 2, t = lane & 3;
    int off, L, tile;
    if (!mg_sa_item<BM, NT>(out, lens, T, H, D, B, w, h, &off, &L, &tile)) return;
    const int HD = H * D, q0 = tile * BM + (tid >> 5) * 16; /* warp tid / 32's 16 rows */
    const long long base = (long long)off * HD + h * D;
    /* the BM query rows, read by the products from shared memory (warpgroup i's 64 from
     * qsm + 64 i D); after the loop each warp's 16 rows hold its results on their way out */
    for (int c = tid; c < BM * CH; c += NT) mg_sa_chunk<BF, D>(q, qsm, base, HD, tile * BM, L, c);
    const unsigned short *qa = qsm + (tid >> 7) * 64 * D;
    unsigned short *qs = qsm + (tid >> 5) * 16 * D;
    float o[D / 8][4] = {}, m[2] = {MG_NEG_INF, MG_NEG_INF}, l[2] = {};
    const int ntiles = (L + BN - 1) / BN;
    auto fetch = [&](int kt) { /* key tile kt into its stage; one commit group a tile, empty past the last */
        if (kt < ntiles)
            for (int c = tid; c < BN * CH; c += NT) mg_sa_chunk<BF, D>(k, ks[kt % S], base, HD, kt * BN, L, c), mg_sa_chunk<BF, D>(v, vs[kt % S], base, HD, kt * BN, L, c);
        mg_cp_commit();
    };
#pragma unroll
    for (int kt = 0; kt < A; kt++) fetch(kt); /* tile 0 with Q: one commit group */
    unsigned pa[BN / 16][4] = {};
    for (int kt = 0; kt < ntiles; kt++) {
        const int st = kt % S;
        mg_cp_wait<A - 1>(); /* tile kt */
        mg_fence_async(); /* the threads' writes, before the async proxy's reads */
        __syncthreads();
        fetch(kt + A); /* into tile kt - 2's stage */
        float s[BN / 8][4];
        mg_wg_fence();
#pragma unroll
        for (int kq = 0; kq < D / 16; kq++)
            mg_wgs<BF, BN / 8, true>(&s[0][0], mg_wg_desca(&qa[kq * 128], D), mg_wg_desca(&ks[st][kq * 128], D), kq);
        mg_wg_commit();
        /* P V of tile kt - 1 behind S; at kt = 0, P = 0 times tile 0's V (one code path:
         * ptxas serializes every wgmma when the waits differ by branch) */
        const int pv = kt > 0 ? (kt - 1) % S : 0;
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) mg_wg<BF, D / 8>(&o[0][0], pa[kk], mg_wg_desc(&vs[pv][kk * 16 * D], D), 1);
        mg_wg_commit();
        mg_wg_wait<1>(); /* S only */
        if (kt == ntiles - 1) /* the only tile with keys past L: they score -inf */
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
#pragma unroll
                for (int r = 0; r < 4; r++)
                    if (kt * BN + j * 8 + 2 * t + (r & 1) >= L) s[j][r] = MG_NEG_INF;
        constexpr float LOG2E = 1.4426950408889634f;
        float mx[2] = {m[0], m[1]}, alpha[2], ml[2];
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) mx[r >> 1] = fmaxf(mx[r >> 1], s[j][r]);
#pragma unroll
        for (int h2 = 0; h2 < 2; h2++) {
            mx[h2] = fmaxf(mx[h2], __shfl_xor_sync(0xffffffffu, mx[h2], 1));
            mx[h2] = fmaxf(mx[h2], __shfl_xor_sync(0xffffffffu, mx[h2], 2));
            alpha[h2] = mg_ex2((m[h2] - mx[h2]) * LOG2E), m[h2] = mx[h2], l[h2] *= alpha[h2];
            ml[h2] = -mx[h2] * LOG2E;
        }
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) s[j][r] = mg_ex2(fmaf(s[j][r], LOG2E, ml[r >> 1])), l[r >> 1] += s[j][r];
        mg_wg_wait<0>(); /* P V of tile kt - 1: O complete */
#pragma unroll
        for (int j = 0; j < D / 8; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) {
                asm volatile("" : "+f"(o[j][r])::"memory"); /* not moved above the wait */
                o[j][r] *= alpha[r >> 1];
            }
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++) {
            pa[kk][0] = mg_pack<BF>(s[2 * kk][0], s[2 * kk][1]);
            pa[kk][1] = mg_pack<BF>(s[2 * kk][2], s[2 * kk][3]);
            pa[kk][2] = mg_pack<BF>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
            pa[kk][3] = mg_pack<BF>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
        }
    }
    mg_wg_fence(); /* P V of the last tile */
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++) mg_wg<BF, D / 8>(&o[0][0], pa[kk], mg_wg_desc(&vs[(ntiles - 1) % S][kk * 16 * D], D), 1);
    mg_wg_commit();
    mg_wg_wait<0>();
#pragma unroll
    for (int j = 0; j < D / 8; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) asm volatile("" : "+f"(o[j][r])::"memory");
#pragma unroll
    for (int h2 = 0; h2 < 2; h2++) {
        l[h2] += __shfl_xor_sync(0xffffffffu, l[h2], 1);
        l[h2] += __shfl_xor_sync(0xffffffffu, l[h2], 2);
    }
    const float il[2] = {1.0f / l[0], 1.0f / l[1]};
    if constexpr (sizeof(TO) == 4) { /* f32: two results a lane, 32 bytes a row of a store */
#pragma unroll
        for (int j = 0; j < D / 8; j++)
#pragma unroll
            for (int h2 = 0; h2 < 2; h2++) {
                const int row = q0 + g + 8 * h2;
                if (row < L) *(float2 *)&out[base + (long long)row * HD + j * 8 + 2 * t] =
                    make_float2(o[j][2 * h2] * il[h2], o[j][2 * h2 + 1] * il[h2]);
            }
    } else {
        /* 16-bit: O / l through this warp's Q rows (every warpgroup's products done: the barrier),
         * each row's 16-byte chunks rotated by the row (conflict-free both ways), 16 bytes a lane */
        __syncthreads();
        constexpr int X = CH < 8 ? CH - 1 : 7;
        unsigned *qw = (unsigned *)qs;
#pragma unroll
        for (int j = 0; j < D / 8; j++)
#pragma unroll
            for (int h2 = 0; h2 < 2; h2++) {
                const int r = g + 8 * h2;
                qw[(r * D + (j ^ (r & X)) * 8 + 2 * t) / 2] = mg_sa_pk(out, o[j][2 * h2] * il[h2], o[j][2 * h2 + 1] * il[h2]);
            }
        __syncwarp();
        for (int c = lane; c < 16 * CH; c += 32) {
            const int r = c / CH, j = c % CH;
            if (q0 + r < L) *(uint4 *)&out[base + (long long)(q0 + r) * HD + j * 8] = *(const uint4 *)&qs[r * D + (j ^ (r & X)) * 8];
        }
    }
}
