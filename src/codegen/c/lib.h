#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
typedef struct { uint16_t x; } mg_h;  /* f16 bits */
typedef struct { uint16_t x; } mg_bh; /* bf16 bits */
static inline float mg_ldh(mg_h h) { _Float16 f; memcpy(&f, &h, 2); return (float)f; }
static inline mg_h mg_sth(float x) { _Float16 f = (_Float16)x; mg_h h; memcpy(&h, &f, 2); return h; }
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

