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
    /* every case computed, then selected: no branch, so loops of stores vectorise */
    uint32_t u, a, s, r;
    float f;
    memcpy(&u, &x, 4);
    a = u & 0x7fffffffu;
    memcpy(&f, &a, 4);
    f += 0.5f;
    memcpy(&s, &f, 4);
    r = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    r = a < 0x38800000u ? s - 0x3f000000u : r;
    r = a >= 0x477ff000u ? 0x7c00u : r;
    r = a > 0x7f800000u ? 0x7e00u : r;
    mg_h h = {(uint16_t)(((u >> 16) & 0x8000u) | r)};
    return h;
}
static inline float mg_ldb(mg_bh h) { uint32_t u = (uint32_t)h.x << 16; float f; memcpy(&f, &u, 4); return f; }
static inline mg_bh mg_stb(float x) {
    uint32_t u; memcpy(&u, &x, 4); mg_bh h;
    if ((u & 0x7fffffffu) > 0x7f800000u) { h.x = (uint16_t)((u >> 16) | 0x40); return h; }
    u += 0x7fffu + ((u >> 16) & 1u); h.x = (uint16_t)(u >> 16); return h;
}
/* the operators' meaning: src/ir/scalar.h, which the program holds just before this */
static inline float mg_sqr(float x) { return MG_S_SQR(x); }
/* e^x without a libm call, so that loops over it vectorise (expf is one call an element: row
 * softmax 10x slower than PyTorch's on the CPU, bench/suite_cpu.py): x = n ln 2 + r, n =
 * rint(x log2 e) by the 1.5 * 2^23 rounding trick (its bits give n as an integer, with no
 * float-to-int conversion of a NaN), ln 2 in two parts, e^r by its degree-7 Taylor polynomial
 * on |r| <= 0.347 (truncation below 1e-8, within 2 ulp of expf), 2^n in two exact halves so
 * that results down to the subnormals and up to overflow come out with one rounding. x
 * clamped to [-104, 89] (0 and inf beyond); NaN returned as it is. */
static inline float mg_exp(float x) {
    float c = x > 89.0f ? 89.0f : x;
    c = c < -104.0f ? -104.0f : c;
    float t = c * 1.44269504088896341f + 12582912.0f, n = t - 12582912.0f;
    uint32_t tb, b1, b2;
    memcpy(&tb, &t, 4);
    int32_t ni = (int32_t)(tb - 0x4b400000u), n1 = ni >> 1, n2 = ni - n1;
    float r = (c - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.16666667f + r * (0.041666668f + r * (0.008333334f +
                                                   r * (0.0013888889f + r * 0.00019841270f))))));
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

