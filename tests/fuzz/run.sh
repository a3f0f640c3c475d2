#!/bin/sh
# The short fuzz run of `make fuzz-short` and `make test`: sh tests/fuzz/run.sh BUILD SECONDS
# (from the repository root; BUILD holds fuzz_text and fuzz_json from `make fuzz-build`).
#   1. replays the checked-in corpus tests/fuzz/corpus/{text,json} once (every input that ever
#      crashed a front end is in it: a regression test);
#   2. fuzzes each format SECONDS seconds from that corpus, with its dictionary, new inputs
#      going to a temporary folder (the checked-in corpus is never written).
# A crash, a sanitizer report, a timeout (10 s per input) or more than 2 GB of memory is a
# failure: the input is kept under BUILD/crashes/ and the line says how to replay it.
# Ends with exactly one line "N passed, N failed", like the other suites (tests/run_all.sh).
B=${1:-build/fuzz}
S=${2:-30}
pass=0
fail=0
if [ ! -x "$B/fuzz_text" ] || [ ! -x "$B/fuzz_json" ]; then
    echo "FAIL: no fuzzers in $B: 'make fuzz-build' needs clang and libFuzzer (Debian 12:" \
        "apt-get install clang libclang-rt-dev, or tools/deps.sh)"
    echo "0 passed, 1 failed"
    exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/mugen-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$T"' 0
trap 'exit 130' INT TERM
mkdir -p "$B/crashes"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1
OPTS="-max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1"

# step NAME FUZZER ARGS...: runs one libFuzzer command, log in $T/NAME.log; a failure names the
# input it saved (libFuzzer's "Test unit written to ...").
step() {
    name=$1 fz=$2
    shift 2
    mkdir -p "$T/art-$name"
    if "$B/$fz" $OPTS -artifact_prefix="$T/art-$name/" "$@" >"$T/$name.log" 2>&1; then
        pass=$((pass + 1))
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$T/$name.log" | tail -n 1)
        echo "... fuzz $name: ok (${execs:-?} inputs run)" >&2
        return
    fi
    fail=$((fail + 1))
    for a in "$T/art-$name"/*; do
        [ -f "$a" ] && cp "$a" "$B/crashes/" && echo "FAIL: fuzz $name: input kept as $B/crashes/${a##*/}; replay: $B/$fz $B/crashes/${a##*/}"
    done
    grep -E 'ERROR|SUMMARY|runtime error|fuzz: |Sanitizer' "$T/$name.log" | head -n 8
}

for f in text json; do
    step "replay-$f" "fuzz_$f" -runs=0 tests/fuzz/corpus/$f
done
for f in text json; do
    dict=tests/fuzz/mu.dict
    [ $f = json ] && dict=tests/fuzz/json.dict
    mkdir -p "$T/new-$f"
    step "$f-${S}s" "fuzz_$f" -max_total_time="$S" -dict=$dict "$T/new-$f" tests/fuzz/corpus/$f
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
