/* unit: one runner, every test in one table (Redis-style). Ends with "N passed, N failed".
 * Usage: unit [substring] runs the tests whose name contains substring. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

int unit_fails;

#define TESTS(X) /* in the order they run, grouped by file (tests/unit/test_*.c) */      \
    X(test_f16_rounding) X(test_arena_strmap) X(test_rng)                             \
    X(test_parse_print_roundtrip) X(test_json_roundtrip) X(test_input_range) X(test_shape_errors)       \
    X(test_parse_errors_caret) X(test_const_literals) X(test_lax_checker)             \
    X(test_partition_examples) X(test_partition_recompose) X(test_ir_check)           \
    X(test_docs_op_table) X(test_op_table_columns)                                    \
    X(test_float_ops_by_hand) X(test_float_f32_vs_f64) X(test_float_special_values)   \
    X(test_float_layout_random)                                                       \
    X(test_field_ops_by_hand) X(test_field_exp_add) X(test_field_distributive)        \
    X(test_field_sqrt_mul) X(test_field_matmul_assoc) X(test_field_div_zero)          \
    X(test_field_rejects_non_lax) X(test_field_float_agree) X(test_field_silu)        \
    X(test_field_decoder_ops) X(test_eval_stop_in_matmul)                             \
    X(test_field_draw) X(test_field_factor)                                           \
    X(test_alloc_failures) X(test_alloc_search) X(test_alloc_compile)                                       \
    X(test_aexpr_subexpr) X(test_aexpr_print_parse) X(test_aexpr_z3_corpus)           \
    X(test_search_finds_fused) X(test_search_split_reduction) X(test_search_screen) X(test_search_small_instance) X(test_search_fewer_blocks)   \
    X(test_search_ops) X(test_search_set_by_name) X(test_search_lowered) X(test_search_threads_same) X(test_search_compound_rmsnorm)    \
    X(test_search_theorem1) X(test_search_nothing_found) X(test_search_progress_stop)  \
    X(test_canon_renaming) X(test_canon_mutations) X(test_canon_random)               \
    X(test_scache_roundtrip) X(test_scache_renamed_piece) X(test_scache_damage)       \
    X(test_scache_key_misses) X(test_scache_partial) X(test_scache_evict)             \
    X(test_scache_concurrent) X(test_scache_alloc)                                    \
    X(test_device_table)                                                              \
    X(test_ugraph_roundtrip) X(test_ugraph_validity) X(test_ugraph_semantics)         \
    X(test_ugraph_smem_peak) X(test_verify_verdicts) X(test_property_regrid)          \
    X(test_verify_adversaries) X(test_verify_expform)                                 \
    X(test_runtime_cache) X(test_runtime_c_build_run) X(test_runtime_c_compile_error) \
    X(test_runtime_c_crash) X(test_runtime_c_budget) X(test_near_overflow) X(test_runtime_nvrtc)           \
    X(test_runtime_gpu_open)                                                          \
    X(test_plan_invariants) X(test_plan_passes) X(test_emit_readable) X(test_persist) \
    X(test_cluster) X(test_matmul_warps) X(test_acc_scratch) X(test_vector_reads) X(test_tma_rows) X(test_tma_pair) X(test_row_grids) X(test_space) X(test_taskgraph) X(test_task_protocol)      \
    X(test_lower_examples) X(test_lower_random) X(test_lower_attention) X(test_lower_store_normed)                                       \
    X(test_compiled_c_programs) X(test_compiled_errors) X(test_compiled_threads) \
    X(test_compiled_fake_gpu)                                                         \
    X(test_ragged_forms) X(test_ragged_rules) X(test_ragged_lengths) X(test_ragged_eval_vs_padded) X(test_ragged_verify) X(test_ragged_layout) X(test_ragged_field) X(test_ragged_token_form) X(test_ragged_attention) X(test_ragged_random) X(test_compiled_ragged) X(test_compiled_ragged_attention) X(test_compiled_reduced) X(test_dims) X(test_selector)

#define DECL(t) void t(void);
TESTS(DECL)
#undef DECL

static const struct {
    const char *name;
    void (*fn)(void);
} tests[] = {
#define ROW(t) {#t, t},
    TESTS(ROW)
#undef ROW
};

ir_graph *unit_parse(const char *src) {
    mg_ctx ctx = {{0}};
    ir_graph *g = NULL;
    if (ir_parse_text(&ctx, src, strlen(src), "<test>", &g)) {
        fprintf(stderr, "test program does not parse:\n%s\n%s\n", src, ctx.msg);
        abort();
    }
    if (ir_check(g, &ctx)) {
        fprintf(stderr, "ir_check failed: %s\n", ctx.msg);
        abort();
    }
    return g;
}

void unit_parse_fails(const char *src, mg_status rc, const char *needle) {
    mg_ctx ctx = {{0}};
    ir_graph *g = NULL;
    mg_status got = ir_parse_text(&ctx, src, strlen(src), "t.mu", &g);
    CHECK_MSG(got == rc, "status %d, wanted %d, for: %s (%s)", got, rc, src, ctx.msg);
    CHECK_MSG(strstr(ctx.msg, needle) != NULL, "message '%s' lacks '%s'", ctx.msg, needle);
    CHECK(g == NULL);
    ir_graph_free(g);
}

mg_status unit_feval(const ir_graph *g, int f64, const double *const *in, double *const *out) {
    mg_ctx ctx = {{0}};
    mg_status rc = ev_float(g, &ctx, f64, in, out);
    if (rc) fprintf(stderr, "  ev_float: %s\n", ctx.msg);
    return rc;
}

int main(int argc, char **argv) {
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        unit_fails = 0;
        tests[i].fn();
        printf("%s %s\n", unit_fails ? "FAIL" : "ok  ", tests[i].name);
        if (unit_fails) failed++;
        else passed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
