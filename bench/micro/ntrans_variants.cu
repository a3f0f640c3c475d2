// Hand-edited copies of the nTrans b=1 kernel mugen generated at c73aaaa (`mugen emit
// bench/searched/ntrans_b1/ugraph-1.mu > nt1.cu`, kernel k3_O), for bench/micro/small.cu -DVARS.
#include "nt1.cu"
#define V_PRO \
    extern __shared__ __align__(16) unsigned char smem[]; \
    mg_h *s_t1 = (mg_h *)(smem + 32768); mg_h *s_t2 = (mg_h *)(smem + 16384); mg_h *s_t3 = (mg_h *)(smem + 40960); \
    float *s_t9 = (float *)(smem + 49152); float *s_t17 = (float *)(smem + 0); \
    { const int c3 = threadIdx.x; mg_cp16(&s_t1[c3 * 8], &g_X[c3 * 8]); mg_cp16(&s_t2[c3 * 8], &g_H[c3 * 8]); mg_cp16(&s_t3[c3 * 8], &g_alpha[c3 * 8]); } \
    mg_cp_commit(); mg_cp_wait<0>(); __syncthreads();
#define T5(i) (mg_ldh(s_t1[i]) - mg_ldh(s_t2[i]))
#define T13(i, n1) (mg_ldh(s_t1[i]) - mg_ldh(s_t3[i]) * mg_div(T5(i), n1))
#define RED(EXPR, OUT) { \
        const int l_ = threadIdx.x; float v0_ = 0, v1_ = 0, v2_ = 0, v3_ = 0; \
        for (int r_ = l_; r_ < 4096; r_ += 2048) { \
            { const int i = r_; v0_ += mg_sqr(EXPR); } { const int i = r_ + 512; v1_ += mg_sqr(EXPR); } \
            { const int i = r_ + 1024; v2_ += mg_sqr(EXPR); } { const int i = r_ + 1536; v3_ += mg_sqr(EXPR); } } \
        float v = (v0_ + v1_) + (v2_ + v3_); \
        for (int m = 16; m; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m); \
        __shared__ float red_[16]; if ((threadIdx.x & 31) == 0) red_[threadIdx.x >> 5] = v; mg_bar(); \
        v = red_[0]; for (int q_ = 1; q_ < 16; q_++) v += red_[q_]; OUT; }
// V1: t5, t13 recomputed (no stored steps); scalars through shared memory + barriers
extern "C" __global__ void __launch_bounds__(512) v1(mg_h *__restrict__ g_O, const mg_h *__restrict__ g_X, const mg_h *__restrict__ g_H, const mg_h *__restrict__ g_alpha) {
    V_PRO
    RED(T5(i), if (threadIdx.x == 0) s_t9[0] = sqrtf(mg_div(v, 4096.0f)))
    __syncthreads();
    __syncthreads(); /* loop end */
    RED(T13(i, s_t9[0]), if (threadIdx.x == 0) s_t17[0] = sqrtf(mg_div(v, 4096.0f)))
    __syncthreads();
    for (int e = threadIdx.x; e < 1024; e += 512)
        mg_put4(&g_O[e * 4], mg_div(T13(e * 4 + 0, s_t9[0]), s_t17[0]), mg_div(T13(e * 4 + 1, s_t9[0]), s_t17[0]),
                mg_div(T13(e * 4 + 2, s_t9[0]), s_t17[0]), mg_div(T13(e * 4 + 3, s_t9[0]), s_t17[0]));
}
// V2: V1 with the norms kept in registers by every thread (no barrier after a reduction)
extern "C" __global__ void __launch_bounds__(512) v2(mg_h *__restrict__ g_O, const mg_h *__restrict__ g_X, const mg_h *__restrict__ g_H, const mg_h *__restrict__ g_alpha) {
    V_PRO
    float n1, n2;
    RED(T5(i), n1 = sqrtf(mg_div(v, 4096.0f)))
    __syncthreads(); /* loop end */
    RED(T13(i, n1), n2 = sqrtf(mg_div(v, 4096.0f)))
    for (int e = threadIdx.x; e < 1024; e += 512)
        mg_put4(&g_O[e * 4], mg_div(T13(e * 4 + 0, n1), n2), mg_div(T13(e * 4 + 1, n1), n2),
                mg_div(T13(e * 4 + 2, n1), n2), mg_div(T13(e * 4 + 3, n1), n2));
}
// V3: V2 without the loop-end barrier
extern "C" __global__ void __launch_bounds__(512) v3(mg_h *__restrict__ g_O, const mg_h *__restrict__ g_X, const mg_h *__restrict__ g_H, const mg_h *__restrict__ g_alpha) {
    V_PRO
    float n1, n2;
    RED(T5(i), n1 = sqrtf(mg_div(v, 4096.0f)))
    RED(T13(i, n1), n2 = sqrtf(mg_div(v, 4096.0f)))
    for (int e = threadIdx.x; e < 1024; e += 512)
        mg_put4(&g_O[e * 4], mg_div(T13(e * 4 + 0, n1), n2), mg_div(T13(e * 4 + 1, n1), n2),
                mg_div(T13(e * 4 + 2, n1), n2), mg_div(T13(e * 4 + 3, n1), n2));
}
