#!/bin/sh
# Runs every CPU test suite and ends with one total line "N passed, N failed".
#   sh tests/run_all.sh RELEASE_BUILD_DIR SANITIZER_BUILD_DIR [FUZZ_BUILD_DIR]
# Suites: unit tests, the program suite, the codegen suite, the Z3 check, the adversarial verifier
# corpus (tests/verify) on the release build, the Python package (tests/python, build/libmugen.so), the search over MPI ranks (tests/mpi, the build of
# `make mpi` in build/mpi), then unit and program suites again under
# AddressSanitizer + UBSan (the program suite in quick mode), then the short fuzz run of both
# front ends (tests/fuzz/run.sh: the corpus replayed, then FUZZ_SECONDS, 30, of fuzzing per format,
# with the fuzzers of `make fuzz-build` in FUZZ_BUILD_DIR, build/fuzz). MUGEN_CHECK=1 throughout.
# The whole run took 19 min 53 s in CI on 2 cores at d10f852 (the sanitizer program suite's quick
# mode halved, 196 s in the background; the others one after another the long pole), so the
# codegen suite now follows it in the background. Each suite says when it starts and ends, and a
# foreground suite's own progress lines ("... " first) are shown as they come.
rel=${1:-build}
asan=${2:-build/asan}
fuzz=${3:-build/fuzz}
export MUGEN_CHECK=1
export MUGEN_SEARCH_CACHE=off # the cache tests use folders of their own, never the user's
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1
total_p=0
total_f=0
status=0
log=$(mktemp)
rcf=$(mktemp)
# finish NAME LOG RC SECS: reads LOG's summary line into the totals and prints the suite's line
finish() {
    name=$1 flog=$2 rc=$3 secs=$4
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$flog" | tail -n 1)
    if [ -z "$line" ]; then
        echo "== $name: no summary line (exit $rc); last output:"
        tail -n 30 "$flog"
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
        grep -E 'FAIL|check failed|ERROR|runtime error' "$flog" | head -n 40
    fi
    echo "== $name: $line (${secs}s)"
}
# shows: passes on the progress lines of a suite's output (those starting "... "), indented
shows() {
    while IFS= read -r l; do
        case $l in "... "*) echo "   $l" ;; esac
    done
}
run_suite() { # name, command...
    name=$1
    shift
    echo "== $name: running ..."
    start=$(date +%s)
    { "$@" 2>&1; echo $? >"$rcf"; } | tee "$log" | shows
    rc=$(cat "$rcf")
    finish "$name" "$log" "${rc:-1}" $(($(date +%s) - start))
}
# The sanitizer program suite, then the codegen suite, run beside the others, one process at a
# time each (2 cores; CI at d10f852: the others 1,096 s one after another, codegen 483 of them).
bglog=$(mktemp)
bgrc=$(mktemp)
bgend=$(mktemp) # its own end, so its line says how long it ran, not how long the others did
cglog=$(mktemp)
cgrc=$(mktemp)
cgend=$(mktemp)
bgstart=$(date +%s)
(
    sh tests/programs/run.sh "$asan/mugen" quick >"$bglog" 2>&1
    echo $? >"$bgrc"
    date +%s >"$bgend"
    sh tests/codegen/run.sh "$rel" >"$cglog" 2>&1
    echo $? >"$cgrc"
    date +%s >"$cgend"
) &
bgpid=$!
echo "== programs (asan+ubsan, quick), then codegen (NVRTC + C backend): running in the background ..."
run_suite "unit" "$rel/unit"
run_suite "programs" sh tests/programs/run.sh "$rel/mugen"
run_suite "z3 cross-check of the pruning axioms" sh tests/z3/run.sh "$rel"
run_suite "verifier corpus (adversarial pairs)" sh tests/verify/run.sh "$rel/mugen"
run_suite "python (the package against PyTorch on the CPU)" env MUGEN_LIB="$rel/libmugen.so" sh tests/python/run.sh
run_suite "ranks (MPI: 1, 2 and 4 ranks, resume, a dead rank)" sh tests/mpi/run.sh "$rel/mugen" "${MPI_BUILD:-build/mpi}/mugen"
run_suite "unit (asan+ubsan)" "$asan/unit"
run_suite "fuzz (libFuzzer: corpus, then ${FUZZ_SECONDS:-30} s per format)" sh tests/fuzz/run.sh "$fuzz" "${FUZZ_SECONDS:-30}"
if kill -0 "$bgpid" 2>/dev/null; then
    echo "== programs (asan+ubsan, quick), then codegen: waiting for them ($(($(date +%s) - bgstart))s so far) ..."
fi
wait "$bgpid"
bgsecs=$(($(cat "$bgend" 2>/dev/null || date +%s) - bgstart))
finish "programs (asan+ubsan, quick)" "$bglog" "$(cat "$bgrc" 2>/dev/null || echo 1)" "$bgsecs"
cgsecs=$(($(cat "$cgend" 2>/dev/null || date +%s) - $(cat "$bgend" 2>/dev/null || echo "$bgstart")))
finish "codegen (NVRTC + C backend)" "$cglog" "$(cat "$cgrc" 2>/dev/null || echo 1)" "$cgsecs"
rm -f "$log" "$rcf" "$bglog" "$bgrc" "$bgend" "$cglog" "$cgrc" "$cgend"
echo "$total_p passed, $total_f failed"
exit $status
