#!/bin/sh
# Session 34: a chain's masked scores by count (mg_mask0: f applied everywhere, f(0) taken off the
# row sums once a place past L) instead of a select an element: the kv programs at four lengths
# and GQA decode at six, each checked with NaN past L; GQA decode at L = 4096 and 4000 beside
# the static program, twice.
export LD_LIBRARY_PATH=$PWD/.carry/lib
export MUGEN_CACHE_DIR=$(mktemp -d)
O=${OUT:-/tmp}
M=.carry/bin/mugen
sh bench/s34_softmax.sh > /dev/null 2>&1
cp $O/kv-programs.txt $O/kv-programs-chain.txt 2>/dev/null
{
    for L in 128 1000 4097 12345 30000; do
        printf 'gqa_decode L=%s: ' $L
        $M run --backend gpu --reps 100 --dim L=$L examples/dims/gqa_decode.mu 2>&1 | grep -E "^ok|MISMATCH|FAIL|time" | tr -s ' ' | tr '\n' ' '; echo
    done
    echo "--variant all at L=1000:"; $M run --backend gpu --reps 50 --dim L=1000 --variant all examples/dims/gqa_decode.mu 2>&1 | grep -E "variant  |MISMATCH"
    for i in 1 2; do
        $M run --backend gpu --reps 100 examples/gqa_b1.mu 2>&1 | grep time | sed 's/^/static gqa_b1 /'
        for L in 4096 4000; do printf 'gqa_decode L=%s ' $L; $M run --backend gpu --reps 100 --dim L=$L examples/dims/gqa_decode.mu 2>&1 | grep -E "^ok|MISMATCH|time" | tr -s ' ' | tr '\n' ' '; echo; done
    done
} > $O/gqa-chain.txt 2>&1
grep -c "ok on" $O/kv-programs-chain.txt; grep -v "ok on" $O/kv-programs-chain.txt
cat $O/gqa-chain.txt
