#!/bin/sh
# Runs every CPU test suite and ends with one total line "N passed, N failed".
#   sh tests/run_all.sh RELEASE_BUILD_DIR SANITIZER_BUILD_DIR
# Suites: unit tests, the program suite and the codegen suite on the release build, then both again under
# AddressSanitizer + UBSan (the program suite in quick mode). MUGEN_CHECK=1 throughout.
rel=${1:-build}
asan=${2:-build/asan}
export MUGEN_CHECK=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1
total_p=0
total_f=0
status=0
log=$(mktemp)
run_suite() { # name, command...
    name=$1
    shift
    start=$(date +%s)
    "$@" >"$log" 2>&1
    rc=$?
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    secs=$(($(date +%s) - start))
    if [ -z "$line" ]; then
        echo "== $name: no summary line (exit $rc); last output:"
        tail -n 30 "$log"
        total_f=$((total_f + 1))
        status=1
        return
    fi
    p=${line%% passed*}
    f=${line#*passed, }
    f=${f%% failed*}
    total_p=$((total_p + p))
    total_f=$((total_f + f))
    if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
        status=1
        grep -E 'FAIL|check failed|ERROR|runtime error' "$log" | head -n 40
    fi
    echo "== $name: $line (${secs}s)"
}
run_suite "unit" "$rel/unit"
run_suite "programs" sh tests/programs/run.sh "$rel/mugen"
run_suite "codegen (NVRTC + C backend)" sh tests/codegen/run.sh "$rel"
run_suite "z3 cross-check of the pruning axioms" sh tests/z3/run.sh "$rel"
run_suite "unit (asan+ubsan)" "$asan/unit"
run_suite "programs (asan+ubsan, quick)" sh tests/programs/run.sh "$asan/mugen" quick
rm -f "$log"
echo "$total_p passed, $total_f failed"
exit $status
