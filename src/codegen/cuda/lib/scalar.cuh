typedef struct { unsigned short x; } mg_h;  /* f16 bits */
typedef struct { unsigned short x; } mg_bh; /* bf16 bits */
#define MG_DI static __device__ __forceinline__
MG_DI float mg_ldh(mg_h h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x)); return f; }
MG_DI mg_h mg_sth(float x) { mg_h h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(x)); return h; }
MG_DI float mg_ldb(mg_bh h) { return __uint_as_float((unsigned)h.x << 16); }
MG_DI mg_bh mg_stb(float x) { mg_bh h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.x) : "f"(x)); return h; }
/* the operators' meaning: src/ir/scalar.h, which the program holds just before this */
MG_DI float mg_sqr(float x) { return MG_S_SQR(x); }
/* 2^x through ex2.approx.ftz (2^-inf = 0); exp as 2^(x log2 e): relative error ~2^-21, far
 * inside the f16/bf16 tolerances; results below 2^-126 flush to 0. Two instructions (__expf
 * adds range fixes). */
MG_DI float mg_ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
MG_DI float mg_exp(float x) { return mg_ex2(x * 1.44269504088896341f); }
MG_DI float mg_silu(float x) { return MG_S_SILU(float, __expf, x); }
MG_DI float mg_relu(float x) { return MG_S_RELU(float, x); }
MG_DI float mg_add(float a, float b) { return MG_S_ADD(a, b); }
MG_DI float mg_max(float a, float b) { return MG_S_MAX(a, b); }
/* division as rcp.approx times a (2 ulp; no slow path for denormal divisors) */
MG_DI float mg_div(float a, float b) { return __fdividef(a, b); }
MG_DI void mg_bar() { __syncthreads(); } /* a barrier inside one step (not a planned one) */
/* programmatic dependent launch (sm_90): wait for the grids this one depends on */
MG_DI void mg_grid_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/* programmatic dependent launch: the grid after this one may launch (once every block of this
 * one has said so or ended); its blocks then run up to their own mg_grid_wait */
MG_DI void mg_grid_go() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
/* bytes bytes from p into L2, a prefetch a 128-byte line (a hint: no fault, no result) */
MG_DI void mg_prefetch_l2(const void *p, long long bytes) {
    const char *a = (const char *)((unsigned long long)p & ~127ull);
    const char *e = (const char *)p + bytes;
    for (; a < e; a += 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
}
/* every thread of the block's cluster arrives (release) and waits (acquire): what each
 * block wrote before it, to global memory too, is visible to the others after it */
MG_DI void mg_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
/* overloads for the templated matmul */
MG_DI float mg_f(mg_h v) { return mg_ldh(v); }
MG_DI float mg_f(mg_bh v) { return mg_ldb(v); }
MG_DI float mg_f(float v) { return v; }
MG_DI void mg_put(mg_h *p, float v) { *p = mg_sth(v); }
MG_DI void mg_put(mg_bh *p, float v) { *p = mg_stb(v); }
MG_DI void mg_put(float *p, float v) { *p = v; }
/* two floats -> one register of two f16 (or bf16), lo in the low half */
template <bool BF> MG_DI unsigned mg_pack(float lo, float hi) {
    unsigned r;
    if (BF) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    else asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
/* two f16 in one register -> two bf16 (through f32, rounded to nearest) */
MG_DI unsigned mg_h2bf(unsigned h) {
    float lo, hi;
    asm("{.reg .f16 a, b; mov.b32 {a, b}, %2; cvt.f32.f16 %0, a; cvt.f32.f16 %1, b;}" : "=f"(lo), "=f"(hi) : "r"(h));
    return mg_pack<true>(lo, hi);
}
