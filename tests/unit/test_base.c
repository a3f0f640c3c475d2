/* Tests of src/base: f16/bf16 rounding, arena, strmap, rng. */
#include <stdint.h>
#include <string.h>

#include "unit.h"

void test_f16_rounding(void);
void test_arena_strmap(void);
void test_rng(void);

void test_f16_rounding(void) {
    CHECK(base_round_f16(1.0f) == 1.0f);
    CHECK(base_round_f16(65504.0f) == 65504.0f);
    CHECK(isinf(base_round_f16(65520.0f)));            /* halfway to the next binade: inf */
    CHECK(base_round_f16(65519.0f) == 65504.0f);
    CHECK(base_round_f16(1.0f / 3) == 0.333251953125f); /* 0x3555 */
    CHECK(base_round_f16(0x1p-24f) == 0x1p-24f);        /* smallest subnormal */
    CHECK(base_round_f16(0x1p-25f) == 0.0f);            /* tie to even: 0 */
    CHECK(base_round_f16(3 * 0x1p-26f) == 0x1p-24f);
    CHECK(base_round_f16(1 + 0x1p-11f) == 1.0f);          /* tie, even stays */
    CHECK(base_round_f16(1 + 3 * 0x1p-11f) == 1 + 0x1p-9f); /* tie, odd rounds up */
    CHECK(base_round_f16(-2.5f) == -2.5f);
    CHECK(isnan(base_round_f16(NAN)));
    CHECK(base_round_bf16(1.0f / 3) == 0.333984375f);   /* 0x3EAB */
    CHECK(base_round_bf16(1 + 0x1p-8f) == 1.0f);          /* tie to even */
    CHECK(base_round_bf16(1 + 3 * 0x1p-8f) == 1 + 0x1p-6f);
    CHECK(isnan(base_round_bf16(NAN)));
    /* against the compiler's own conversion on many values, subnormals included */
    rng r = {7};
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        float x = (float)((rng_uniform(&r) * 2 - 1) * ldexp(1.0, (int)rng_below(&r, 48) - 30));
        __extension__ _Float16 h = (_Float16)x;
        if (base_round_f16(x) != (float)h) bad++;
        uint16_t bits = base_f32_to_f16(x), ref;
        memcpy(&ref, &h, 2);
        if (bits != ref) bad++;
        if (base_f16_to_f32(bits) != (float)h) bad++;
    }
    CHECK_MSG(bad == 0, "%d mismatches against _Float16", bad);
}

void test_arena_strmap(void) {
    arena a;
    arena_init(&a);
    for (int i = 1; i < 2000; i += 37) {
        unsigned char *p = arena_alloc(&a, (size_t)i);
        CHECK(p && ((uintptr_t)p & 15) == 0);
        int zero = 1;
        for (int k = 0; k < i; k++) zero &= p[k] == 0;
        CHECK(zero);
        memset(p, 0xff, (size_t)i);
    }
    CHECK(arena_alloc(&a, 200000) != NULL); /* larger than a chunk */
    strmap m = {0};
    char *keys[5000];
    for (int i = 0; i < 5000; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "key%d", i * 7);
        keys[i] = arena_strdup(&a, buf);
        CHECK(strmap_put(&m, keys[i], i) == 0);
    }
    int ok = 1;
    for (int i = 0; i < 5000; i++) ok &= strmap_get(&m, keys[i]) == i;
    CHECK(ok);
    CHECK(strmap_get(&m, "key1") == -1);
    CHECK(strmap_put(&m, keys[3], 99) == 0 && strmap_get(&m, keys[3]) == 99 && m.n == 5000);
    strmap_free(&m);
    arena_free(&a);
}

void test_rng(void) {
    rng r = {1}, r2 = {1};
    int hist[10] = {0}, same = 1;
    for (int i = 0; i < 100000; i++) {
        uint32_t x = rng_below(&r, 10);
        same &= x == rng_below(&r2, 10);
        CHECK(x < 10);
        hist[x]++;
    }
    CHECK(same); /* deterministic from the seed */
    for (int k = 0; k < 10; k++) CHECK_MSG(hist[k] > 9500 && hist[k] < 10500, "bucket %d: %d", k, hist[k]);
}
