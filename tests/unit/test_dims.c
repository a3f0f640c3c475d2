/* Symbolic dims (docs/tuning.md "Symbolic dims", src/ir/sym.c): binding through the library,
 * the capacities, and the reference at a bound size against the same rows of its capacity's
 * instance (rows independent: the check that sym.c proves). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mugen.h"
#include "unit.h"

void test_dims(void);

void test_dims(void) {
    static const char src[] = "dim B [3, 300]\ninput x : f16[B, 8]\ninput w : f16[8, 4]\n"
                              "y = matmul(x / sqrt(sum(sqr(x), dim=1)), w)\noutput y\n";
    mg_ctx *ctx = mg_ctx_new();
    mg_program *p = NULL;
    CHECK(mg_program_parse(ctx, src, sizeof src - 1, "d.mu", &p) == MG_OK);
    if (!p) {
        mg_ctx_free(ctx);
        return;
    }
    const char *name;
    int64_t lo, hi, val;
    CHECK(mg_program_n_dims(p) == 1 && mg_program_dim(p, 0, &name, &lo, &hi, &val) == MG_OK);
    CHECK(!strcmp(name, "B") && lo == 3 && hi == 300 && val == 300);
    CHECK(mg_program_dim(p, 1, NULL, NULL, NULL, NULL) == MG_ERR_INVALID);
    /* capacities: powers of two to 128, then multiples of 128, at most HI */
    static const int64_t v[] = {3, 4, 5, 100, 128, 129, 256, 257, 300}, cap[] = {4, 4, 8, 128, 128, 256, 256, 300, 300};
    for (int i = 0; i < 9; i++) CHECK_MSG(mg_program_dim_capacity(p, 0, v[i]) == cap[i], "capacity of %lld", (long long)v[i]);
    CHECK(mg_program_bind_dim(ctx, p, "B", 2) == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), "outside its range [3, 300]"));
    CHECK(mg_program_bind_dim(ctx, p, "C", 5) == MG_ERR_INVALID && strstr(mg_ctx_error(ctx), "no dim 'C'"));
    /* bound to 5: the program's inputs and outputs have 5 rows; its reference on random rows
     * equals the first 5 rows of the capacity's (8) instance on the same rows plus others */
    CHECK(mg_program_bind_dim(ctx, p, "B", 5) == MG_OK);
    mg_tensor_desc d;
    CHECK(mg_program_input(p, 0, &d) == MG_OK && d.dims[0] == 5 && d.dims[1] == 8);
    mg_program *q = NULL;
    CHECK(mg_program_parse(ctx, src, sizeof src - 1, "d.mu", &q) == MG_OK && q);
    if (q) CHECK(mg_program_bind_dim(ctx, q, "B", mg_program_dim_capacity(p, 0, 5)) == MG_OK);
    double x8[8 * 8], w[8 * 4], y5[5 * 4], y8[8 * 4];
    for (int i = 0; i < 64; i++) x8[i] = (double)((i * 37 + 11) % 19) / 9.5 - 1.0 + 0.03;
    for (int i = 0; i < 32; i++) w[i] = (double)((i * 13 + 5) % 17) / 8.5 - 1.0 + 0.01;
    const double *in5[] = {x8, w}, *in8[] = {x8, w};
    double *o5[] = {y5}, *o8[] = {y8};
    for (int i = 0; i < 20; i++) y5[i] = NAN;
    for (int i = 0; i < 32; i++) y8[i] = NAN;
    CHECK(mg_eval_float(ctx, p, 0, in5, o5) == MG_OK);
    if (q) CHECK(mg_eval_float(ctx, q, 0, in8, o8) == MG_OK);
    for (int i = 0; q && i < 20; i++) CHECK_MSG(y5[i] == y8[i] && !isnan(y5[i]), "row %d: %g against %g", i / 4, y5[i], y8[i]);
    mg_program_free(q);
    mg_program_free(p);
    mg_ctx_free(ctx);
}
