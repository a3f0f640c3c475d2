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
    uint32_t u, a, r;
    memcpy(&u, &x, 4);
    a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) r = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
    else if (a >= 0x477ff000u) r = 0x7c00u;
    else if (a < 0x38800000u) {
        float f;
        memcpy(&f, &a, 4);
        f += 0.5f;
        memcpy(&r, &f, 4);
        r -= 0x3f000000u;
    } else r = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
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
static inline float mg_exp(float x) { return expf(x); }
static inline float mg_silu(float x) { return MG_S_SILU(float, expf, x); }
static inline float mg_relu(float x) { return MG_S_RELU(float, x); }
static inline float mg_add(float a, float b) { return MG_S_ADD(a, b); }
static inline float mg_div(float a, float b) { return MG_S_DIV(a, b); }
static inline float mg_max(float a, float b) { return MG_S_MAX(a, b); }

