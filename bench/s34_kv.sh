#!/bin/sh
# Session 34's first device call: reduced dims (a KV length, docs/tuning.md "Reduced dims") on
# the GPU. (1) each tests/codegen/kv program at its range's ends and two lengths between, every
# run checked against the program at that length with NaN past it in the inputs; (2) GQA decode
# (examples/dims/gqa_decode.mu) at a few lengths beside the static GQA b=1 program (L = 4096),
# and --variant all at L = 4096 and 1000; (3) the selector's dataset for GQA decode
# (bench/selector/collect.sh). Files to $OUT as each part ends.
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
M=.carry/bin/mugen
export MUGEN_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name --format=csv,noheader > $O/device.txt
for f in tests/codegen/kv/*.mu; do
    hi=$(sed -n 's/^dim L \[128, \([0-9]*\)\]/\1/p' $f)
    for L in 128 129 $((hi / 3 + 7)) $hi; do
        printf '%s L=%s: ' $f $L
        $M run --backend gpu --reps 20 --dim L=$L $f 2>&1 | grep -E "^ok|MISMATCH|FAIL|time|mugen:" | tr -s ' ' | tr '\n' ' '
        echo
    done
done > $O/kv-programs.txt 2>&1
{
    printf 'static gqa_b1 (L = 4096): '
    $M run --backend gpu --reps 100 examples/gqa_b1.mu 2>&1 | grep -E "^ok|MISMATCH|time" | tr -s ' ' | tr '\n' ' '; echo
    for L in 128 1000 4096 4097 16000 32768; do
        printf 'gqa_decode L=%s: ' $L
        $M run --backend gpu --reps 100 --dim L=$L examples/dims/gqa_decode.mu 2>&1 | grep -E "^ok|MISMATCH|FAIL|time|ran as" | tr -s ' ' | tr '\n' ' '; echo
    done
    for L in 4096 1000; do
        echo "gqa_decode --variant all at L=$L:"
        $M run --backend gpu --reps 100 --dim L=$L --variant all examples/dims/gqa_decode.mu 2>&1 | grep -E "variant|MISMATCH|FAIL"
    done
} > $O/gqa-decode.txt 2>&1
cat $O/kv-programs.txt $O/gqa-decode.txt
mkdir -p $O/sel
OUT=$O/sel PROGRAMS=gqa_decode NB=${NB:-72} LIMIT_S=${LIMIT_S:-300} sh bench/selector/collect.sh .carry/bin > $O/sel/stdout.txt 2>&1
tail -3 $O/sel/stdout.txt
