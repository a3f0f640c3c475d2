#!/bin/sh
# The Z3 cross-check corpus: sh tests/z3/run.sh [BUILD] [z3check options]   (POSIX sh, repo root)
#
# Builds BUILD/z3check (default BUILD: build) from tests/z3/z3check.c against libz3, runs it on
# tests/z3/pairs.txt and compares each answer with the expected one in the pair's 4th field.
# Prints one line per disagreement ("FAIL line N: expected yes, z3 said no: ..."), one line
# per pair Z3 could not decide ("z3 unknown line N (expected no): ..."), and ends with exactly
# one line "N passed, N failed". An unknown counts as neither passed nor failed; the line
# before the summary says how many there were. Extra arguments go to z3check (e.g. -t 2000).
# Exit status: 0 when nothing failed, 1 otherwise (also when libz3-dev is missing).
# Takes about 2.5 minutes on 2 cores, nearly all of it the pairs Z3 cannot decide (each runs
# to the 10 s limit); README.md explains which those are and why.

B=${1:-build}
[ $# -gt 0 ] && shift
if [ ! -f /usr/include/z3.h ]; then
    echo "run.sh: /usr/include/z3.h not found: the Z3 check needs libz3-dev" \
        "(Debian/Ubuntu: apt-get install libz3-dev)"
    exit 1
fi
if [ ! -f tests/z3/pairs.txt ]; then
    echo "run.sh: run it from the repository root" >&2
    exit 1
fi
mkdir -p "$B" || exit 1
CC=${CC:-cc}
if ! $CC -O2 -std=c11 -Wall -Wextra -Wpedantic tests/z3/z3check.c -lz3 -o "$B/z3check"; then
    echo "run.sh: building $B/z3check failed"
    echo "0 passed, 1 failed"
    exit 1
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/mugen-z3.XXXXXX") || exit 1
trap 'rm -rf "$T"' 0
trap 'exit 130' INT TERM

# Keep only the query lines (z3check skips the same lines), numbered by their line in pairs.txt.
grep -n -v -E '^[[:space:]]*(#|$)' tests/z3/pairs.txt >"$T/numbered"
cut -d: -f2- "$T/numbered" >"$T/queries"
start=$(date +%s)
"$B/z3check" -v "$@" "$T/queries" >"$T/answers" 2>"$T/stderr"
rc=$?
secs=$(($(date +%s) - start))
if [ "$rc" -ne 0 ]; then
    echo "run.sh: z3check exited with status $rc:"
    head -n 20 "$T/stderr"
fi

# One record a pair: pairs.txt line number, kind, expected, answer, ms, how, E1.
paste "$T/numbered" "$T/answers" | awk -F '\t' -v rc="$rc" -v secs="$secs" '
{
    split($1, a, ":"); line = a[1]; kind = substr($1, length(line) + 2)
    # z3check -v writes 3 fields (answer, ms, how) after the query fields
    n = NF; how = $n; ms = $(n - 1); ans = $(n - 2)
    expect = n - 3 >= 4 ? $4 : ""
    e1 = $2
    if (length(e1) > 60) e1 = substr(e1, 1, 57) "..."
    total++
    if (expect != "yes" && expect != "no") {
        printf "FAIL line %d: no expected answer in pairs.txt\n", line; fail++; next
    }
    if (ans == "unknown") {
        printf "z3 unknown line %d (expected %s, %s ms): %s %s\n", line, expect, ms, kind, e1
        unk++; next
    }
    if (ans != expect) {
        printf "FAIL line %d: expected %s, z3 said %s (%s): %s %s\n", \
            line, expect, ans, how, kind, e1
        fail++; next
    }
    pass++
    if (ans == "yes") yes++; else no++
    t += ms; if (ms + 0 > max) max = ms + 0
}
END {
    if (total == 0 || rc != 0) fail++
    printf "z3: %d pairs, %d yes and %d no agreed, %d unknown", total, yes, no, unk
    printf " (%d s; decided pairs: mean %.0f ms, max %d ms)\n", secs, pass ? t / pass : 0, max
    printf "%d passed, %d failed\n", pass, fail
    exit fail ? 1 : 0
}'
