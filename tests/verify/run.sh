#!/bin/sh
# The adversarial verifier corpus: sh tests/verify/run.sh BUILD/mugen   (POSIX sh, repo root)
#
# Every tests/verify/cases/NAME.mu is a μGraph (or a plain program) with header lines
#   # program: PATH      the program it claims to implement
#   # expect: 0|3|5      mugen verify's exit status: equivalent, not equivalent, numerically
#                        unstable (equivalent over the reals, but the μGraph's float error is
#                        past the tolerance where the program's is not)
#   # class: CLASS       what it attacks (crafted constants, sqrt, field zeros, ...)
#   # why: ...           one line
# written by tests/verify/make_cases.py, which computes the constants aimed at the old fixed
# primes. The expected verdicts hold over the reals and in floating point by construction,
# whatever any build answers. A case passes when `mugen verify PROGRAM CASE` exits with the
# expected status, its stdout starts with the matching verdict ("equivalent", "not
# equivalent", "numerically unstable"), and the verdict takes at most 1 s.
#
# Prints each failing case with its first output line, a table per class (cases, accepted,
# rejected, wrong acceptances, wrong rejections, wrong labels, errors, slow verdicts, slowest
# verdict) and ends with exactly one line "N passed, N failed" (each case counts one).
M=$1
if [ -z "$M" ] || [ ! -x "$M" ]; then
    echo "usage: sh tests/verify/run.sh BUILD/mugen" >&2
    exit 2
fi
case $M in /*) ;; *) M=$(pwd)/$M ;; esac
DIR=tests/verify/cases
if [ ! -d "$DIR" ]; then
    echo "run.sh: run it from the repository root" >&2
    exit 2
fi
LIMIT_MS=${MUGEN_VERIFY_LIMIT_MS:-1000}
T=$(mktemp -d "${TMPDIR:-/tmp}/mugen-verify.XXXXXX") || exit 2
trap 'rm -rf "$T"' 0
trap 'exit 130' INT TERM

now_ms() { date +%s%3N; }
# hdr KEY FILE: the value of the header line "# KEY: value"
hdr() { sed -n "s/^# $1: //p" "$2" | head -n 1; }

: >"$T/rows"
n=0
for c in "$DIR"/*.mu; do
    name=$(basename "$c" .mu)
    prog=$(hdr program "$c")
    want=$(hdr expect "$c")
    class=$(hdr class "$c")
    if [ -z "$prog" ] || [ -z "$want" ] || [ -z "$class" ] || [ ! -f "$prog" ]; then
        echo "FAIL: $name: bad header (program '$prog', expect '$want', class '$class')"
        echo "${class:-?} ${want:-?} 1 0 error" >>"$T/rows"
        continue
    fi
    t0=$(now_ms)
    timeout 60 "$M" verify "$prog" "$c" >"$T/out" 2>"$T/err"
    rc=$?
    ms=$(($(now_ms) - t0))
    first=$(head -n 1 "$T/out")
    [ -n "$first" ] || first=$(head -n 1 "$T/err")
    case $first in
    "equivalent"*) said=0 ;;
    "not equivalent"*) said=3 ;;
    "numerically unstable"*) said=5 ;;
    *) said=x ;;
    esac
    # status: ok, wacc (accepted, should not be), wrej (should be accepted, was not),
    # wlabel (rejected under the wrong label, or a label that disagrees with the exit code),
    # error (a non-equivalent pair answered with neither verdict), slow (right but over the limit)
    if [ "$rc" = "$want" ] && [ "$said" = "$want" ]; then
        st=ok
        [ "$ms" -le "$LIMIT_MS" ] || st=slow
    elif [ "$rc" = 0 ]; then
        st=wacc
    elif [ "$want" = 0 ]; then
        st=wrej
    elif [ "$rc" = 3 ] || [ "$rc" = 5 ]; then
        st=wlabel
    else
        st=error
    fi
    echo "$class $want $rc $ms $st" >>"$T/rows"
    n=$((n + 1))
    if [ "$st" != ok ]; then
        echo "FAIL: $name ($class, expect $want, got $rc, $st, ${ms} ms): $first"
    fi
done

awk -v limit="$LIMIT_MS" '
{
    c = $1; cls[c] = 1; n[c]++; N++
    if ($3 == 0) acc[c]++; else if ($3 == 3 || $3 == 5) rej[c]++
    if ($5 == "wacc") wa[c]++
    if ($5 == "wrej") wr[c]++
    if ($5 == "wlabel") wl[c]++
    if ($5 == "error") er[c]++
    if ($5 == "slow") sl[c]++
    if ($5 != "ok") bad++
    if ($4 + 0 > mx[c]) mx[c] = $4 + 0
    if ($4 + 0 > MX) MX = $4 + 0
}
END {
    printf "%-11s %5s %8s %8s %9s %9s %9s %6s %5s %8s\n", "class", "cases", "accepted", "rejected",
           "wrong acc", "wrong rej", "wrong lab", "errors", "slow", "slowest"
    for (c in cls) {
        printf "%-11s %5d %8d %8d %9d %9d %9d %6d %5d %6d ms\n", c, n[c], acc[c], rej[c], wa[c], wr[c],
               wl[c], er[c], sl[c], mx[c]
        A += acc[c]; R += rej[c]; WA += wa[c]; WR += wr[c]; WL += wl[c]; ER += er[c]; SL += sl[c]
    }
    printf "%-11s %5d %8d %8d %9d %9d %9d %6d %5d %6d ms\n", "all", N, A, R, WA, WR, WL, ER, SL, MX
    printf "%d passed, %d failed\n", N - bad, bad
}' "$T/rows" >"$T/table"
# the class rows sorted, then the total and the summary line
head -n 1 "$T/table"
sed -n '2,$p' "$T/table" | grep -v -E '^(all |[0-9]+ passed)' | sort
grep -E '^all ' "$T/table"
line=$(tail -n 1 "$T/table")
echo "$line"
case $line in *" 0 failed") exit 0 ;; *) exit 1 ;; esac
