#!/bin/sh
# Says clearly whether CC (default clang) can build a libFuzzer harness with ASan + UBSan:
# exit 0 if so, else a message naming the Debian packages and exit 1. Used by make fuzz-build.
CC=${1:-clang}
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "mugen: fuzzing needs clang ('$CC' not found): install clang libclang-rt-dev" \
        "(Debian 12; tools/deps.sh does) or set FUZZ_CC" >&2
    exit 1
fi
d=$(mktemp -d "${TMPDIR:-/tmp}/mugen-fuzzcc.XXXXXX") || exit 1
trap 'rm -rf "$d"' 0
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$d/t.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$d/t.c" -o "$d/t" >"$d/log" 2>&1; then
    echo "mugen: $CC cannot link a libFuzzer harness (-fsanitize=fuzzer): install the fuzzer" \
        "runtime, libclang-rt-dev on Debian 12 (libclang-rt-14-dev for clang 14)." >&2
    sed -n 1,3p "$d/log" >&2
    exit 1
fi
exit 0
