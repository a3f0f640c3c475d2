#!/bin/sh
# Session 34's sixth device call: attention with its maximum subtracted over a reduced dim
# (tests/codegen/kv/softmax.mu: scores near -200, so a 0 past L would win the max) at four
# lengths, each checked with NaN past L; and the whole kv set again on the final binary.
export LD_LIBRARY_PATH=$PWD/.carry/lib
export MUGEN_CACHE_DIR=$(mktemp -d)
O=${OUT:-/tmp}
for f in tests/codegen/kv/*.mu; do
    hi=$(sed -n 's/^dim L \[128, \([0-9]*\)\]/\1/p' $f)
    for L in 128 129 $((hi / 3 + 7)) $hi; do
        printf '%s L=%s: ' $f $L
        .carry/bin/mugen run --backend gpu --reps 20 --dim L=$L $f 2>&1 | grep -E "^ok|MISMATCH|FAIL|time|mugen:" | tr -s ' ' | tr '\n' ' '
        echo
    done
done > $O/kv-programs.txt 2>&1
cat $O/kv-programs.txt
