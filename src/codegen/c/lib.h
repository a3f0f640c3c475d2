#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef struct { uint16_t x; } mg_h;  /* f16 bits */
typedef struct { uint16_t x; } mg_bh; /* bf16 bits */
/* f16 bits -> float by integer operations (a loop of them vectorises; no _Float16 call):
 * the exponent rebased, inf and NaN kept (payload too), subnormals by an exact product */
static inline float mg_ldh(mg_h h) {
    uint32_t em = h.x & 0x7fffu, u = em >= 0x7c00u ? (em << 13) | 0x7f800000u : (em << 13) + 0x38000000u, s;
    float f = (float)(int)em * 0x1.0p-24f;
    memcpy(&s, &f, 4);
    u = (em < 0x400u ? s : u) | (uint32_t)(h.x & 0x8000u) << 16;
    memcpy(&f, &u, 4);
    return f;
}
/* float -> f16 bits, rounded to nearest even, by integer operations (no _Float16, which not
 * every compiler has): NaN -> 0x7e00, past 65520 -> inf, subnormals rounded by adding 0.5 (a
 * float whose last bit is worth 2^-24), normals rebased with the rounding carried in */
static inline mg_h mg_sth(float x) {
    /* every case computed, then selected by masks: no branch, so loops of stores vectorise
     * (with ?: selects, gcc 12 left bias_relu's relu-then-store loop scalar: 6.5 -> 4.8 ms) */
    uint32_t u, a, s, r, m;
    float f;
    memcpy(&u, &x, 4);
    a = u & 0x7fffffffu;
    memcpy(&f, &a, 4);
    f += 0.5f;
    memcpy(&s, &f, 4);
    r = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    m = 0u - (uint32_t)(a < 0x38800000u), r = (r & ~m) | ((s - 0x3f000000u) & m);
    m = 0u - (uint32_t)(a >= 0x477ff000u), r = (r & ~m) | (0x7c00u & m);
    m = 0u - (uint32_t)(a > 0x7f800000u), r = (r & ~m) | (0x7e00u & m);
    mg_h h = {(uint16_t)(((u >> 16) & 0x8000u) | r)};
    return h;
}
static inline float mg_ldb(mg_bh h) { uint32_t u = (uint32_t)h.x << 16; float f; memcpy(&f, &u, 4); return f; }
/* float -> bf16 bits, rounded to nearest even; NaN kept quiet (masks, no branch) */
static inline mg_bh mg_stb(float x) {
    uint32_t u, m;
    memcpy(&u, &x, 4);
    m = 0u - (uint32_t)((u & 0x7fffffffu) > 0x7f800000u);
    u = (((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) & ~m) | (((u >> 16) | 0x40u) & m);
    mg_bh h = {(uint16_t)u};
    return h;
}
/* the operators' meaning: src/ir/scalar.h, which the program holds just before this */
static inline float mg_sqr(float x) { return MG_S_SQR(x); }
/* a * b + c: one rounding where the target has fused multiply-add (a vector instruction),
 * else two (fmaf in software is a slow call) */
#if defined(FP_FAST_FMAF) || defined(__FMA__)
#define MG_FMA(a, b, c) fmaf(a, b, c)
#else
#define MG_FMA(a, b, c) ((a) * (b) + (c))
#endif
/* e^x without a libm call, so that loops over it vectorise (expf is one call an element: row
 * softmax 10x slower than PyTorch's on the CPU, bench/suite_cpu.py): x = n ln 2 + r, n =
 * rint(x log2 e) by the 1.5 * 2^23 rounding trick (its bits give n as an integer, with no
 * float-to-int conversion of a NaN), ln 2 in two parts, e^r by its degree-7 Taylor polynomial
 * on |r| <= 0.347 (Horner's rule in fused multiply-adds where the target has them: softmax_rows
 * 0.64 -> 0.57 ms) (truncation below 1e-8, within 2 ulp of expf), 2^n in two exact halves so
 * that results down to the subnormals and up to overflow come out with one rounding. x
 * clamped to [-104, 89] (0 and inf beyond); NaN returned as it is. */
static inline float mg_exp(float x) {
    float c = x > 89.0f ? 89.0f : x;
    c = c < -104.0f ? -104.0f : c;
    float t = c * 1.44269504088896341f + 12582912.0f, n = t - 12582912.0f;
    uint32_t tb, b1, b2;
    memcpy(&tb, &t, 4);
    int32_t ni = (int32_t)(tb - 0x4b400000u), n1 = ni >> 1, n2 = ni - n1;
    float r = MG_FMA(-n, 1.428606765330187e-06f, MG_FMA(-n, 0.693145751953125f, c));
    float p = MG_FMA(r, 0.00019841270f, 0.0013888889f);
    p = MG_FMA(r, p, 0.008333334f), p = MG_FMA(r, p, 0.041666668f), p = MG_FMA(r, p, 0.16666667f);
    p = MG_FMA(r, p, 0.5f), p = MG_FMA(r, p, 1.0f), p = MG_FMA(r, p, 1.0f);
    b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, 4), memcpy(&s2, &b2, 4);
    float y = p * s1 * s2;
    return x != x ? x : y;
}
static inline float mg_silu(float x) { return MG_S_SILU(float, mg_exp, x); }
static inline float mg_relu(float x) { return MG_S_RELU(float, x); }
static inline float mg_add(float a, float b) { return MG_S_ADD(a, b); }
static inline float mg_div(float a, float b) { return MG_S_DIV(a, b); }
static inline float mg_max(float a, float b) { return MG_S_MAX(a, b); }

/* The matmuls' register blocks (codegen/c/matmul.c). mg_mm_tile adds to c[i][j] (i < m,
 * j < n) the products a[i][k] * b[k][j] for k < kn, in k order, one fused multiply-add a step
 * where the target has them (MG_FMA): each element the same sum as a loop of fmaf. Blocks of
 * R rows by V vectors of MG_VW floats keep their sums in vector registers over the whole
 * depth (4 x 4 vectors: 16 multiply-adds for 4 loads of b and 4 broadcasts of a, at the FMA
 * units' rate: 214 GFLOP/s on one Sapphire Rapids core); the rows and columns left over take
 * smaller blocks, then a plain loop. The vectors are AVX-512's or AVX2's when the compiler
 * targets them (-march=native), else single floats. */
#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 mg_v;
#define MG_VW 16
#define MG_VN 4
#define MG_VLD(p) _mm512_loadu_ps(p)
#define MG_VST(p, v) _mm512_storeu_ps(p, v)
#define MG_VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define MG_VSET1(x) _mm512_set1_ps(x)
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256 mg_v;
#define MG_VW 8
#define MG_VN 2
#define MG_VLD(p) _mm256_loadu_ps(p)
#define MG_VST(p, v) _mm256_storeu_ps(p, v)
#define MG_VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define MG_VSET1(x) _mm256_set1_ps(x)
#else
typedef float mg_v;
#define MG_VW 1
#define MG_VN 4
#define MG_VLD(p) (*(p))
#define MG_VST(p, v) (*(p) = (v))
#define MG_VFMA(a, b, c) MG_FMA(a, b, c)
#define MG_VSET1(x) (x)
#endif
#define MG_MK(name, R, V)                                                                          \
    static inline void name(const float *a, long lda, const float *b, long ldb, float *c, long ldc, \
                            int kn) {                                                              \
        mg_v s[R][V];                                                                              \
        for (int r = 0; r < R; r++)                                                                \
            for (int v = 0; v < V; v++) s[r][v] = MG_VLD(c + r * ldc + v * MG_VW);                  \
        for (int k = 0; k < kn; k++) {                                                             \
            mg_v bv[V];                                                                            \
            for (int v = 0; v < V; v++) bv[v] = MG_VLD(b + k * ldb + v * MG_VW);                    \
            for (int r = 0; r < R; r++) {                                                          \
                mg_v av = MG_VSET1(a[r * lda + k]);                                                \
                for (int v = 0; v < V; v++) s[r][v] = MG_VFMA(av, bv[v], s[r][v]);                 \
            }                                                                                      \
        }                                                                                          \
        for (int r = 0; r < R; r++)                                                                \
            for (int v = 0; v < V; v++) MG_VST(c + r * ldc + v * MG_VW, s[r][v]);                  \
    }
MG_MK(mg_mk_4n, 4, MG_VN)
MG_MK(mg_mk_1n, 1, MG_VN)
MG_MK(mg_mk_41, 4, 1)
MG_MK(mg_mk_11, 1, 1)
static inline void mg_mm_tile(const float *a, long lda, const float *b, long ldb, float *c, long ldc,
                              int m, int n, int kn) {
    const int nr = MG_VW * MG_VN, mr = m - m % 4, n1 = n - n % nr, n2 = n - n % MG_VW;
    for (int i = 0; i < m; i += i < mr ? 4 : 1) {
        const float *ai = a + i * lda;
        float *ci = c + i * ldc;
        for (int j = 0; j < n1; j += nr)
            (i < mr ? mg_mk_4n : mg_mk_1n)(ai, lda, b + j, ldb, ci + j, ldc, kn);
        for (int j = n1; j < n2; j += MG_VW)
            (i < mr ? mg_mk_41 : mg_mk_11)(ai, lda, b + j, ldb, ci + j, ldc, kn);
    }
    if (n2 < n)
        for (int i = 0; i < m; i++)
            for (int k = 0; k < kn; k++)
                for (int j = n2; j < n; j++) c[i * ldc + j] = MG_FMA(a[i * lda + k], b[k * ldb + j], c[i * ldc + j]);
}
