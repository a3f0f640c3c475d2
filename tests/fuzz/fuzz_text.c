/* fuzz_text: libFuzzer harness for the .mu text front end (ir_parse_text, parse.c and lex.c),
 * then fuzz_common.h's checks on what parses. Built by `make fuzz-build` (tests/fuzz/README.md). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ir_graph *g = fz_parse(ir_parse_text, data, size, "fuzz.mu");
    if (g) fz_check_graph(g);
    ir_graph_free(g);
    return 0;
}
