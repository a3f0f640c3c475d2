#!/bin/sh
# Session 34's second device call. (1) The suite's programs with the binary before this
# session's reduced-dim work (.carry/old/mugen, 2fad65b) and after, interleaved (bench/ab.sh):
# the shared device code it touched (mma.cuh's epilogues, chain.cuh) must cost nothing where no
# dim is reduced. (2) GQA decode with the trained selector (MUGEN_SELECTOR) at lengths none of
# the collection ran, each checked. (3) Where GQA decode's variant for 4096 spends its time
# against the static GQA b=1 program (MUGEN_PROFILE=1). Files to $OUT as each part ends.
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
M=.carry/bin/mugen
sh bench/ab.sh .carry/old/mugen $M 2 100 examples/gqa_b1.mu examples/gqa_b8.mu examples/gated_mlp.mu examples/ntrans_b1.mu \
    examples/ntrans_b8.mu examples/lora.mu examples/qknorm_b1.mu examples/rmsnorm_linear_b8.mu examples/decode_1b_b1.mu > $O/ab.txt 2>&1
cat $O/ab.txt
C=$(mktemp -d)
MUGEN_CACHE_DIR=$C $M portfolio examples/dims/gqa_decode.mu > $O/portfolio.txt 2>&1
for L in 150 777 3000 5000 9000 12345 20000 30000; do
    printf 'gqa_decode L=%s: ' $L
    MUGEN_CACHE_DIR=$C MUGEN_SELECTOR=data/selector/gqa_decode.txt $M run --backend gpu --reps 100 --dim L=$L examples/dims/gqa_decode.mu 2>&1 |
        grep -E "^ok|MISMATCH|FAIL|time|ran as|chosen|could not" | tr -s ' ' | tr '\n' ' '
    echo
done > $O/selector-runs.txt 2>&1
cat $O/selector-runs.txt
{
    echo "== static gqa_b1"; MUGEN_PROFILE=1 $M run --backend gpu --reps 100 examples/gqa_b1.mu 2>&1 | tail -8
    echo "== gqa_decode L=4096"; MUGEN_PROFILE=1 $M run --backend gpu --reps 100 --dim L=4096 examples/dims/gqa_decode.mu 2>&1 | tail -8
    echo "== gqa_decode L=4096 --untuned"; $M run --backend gpu --reps 100 --untuned --dim L=4096 examples/dims/gqa_decode.mu 2>&1 | grep time
    echo "== static gqa_b1 --untuned"; $M run --backend gpu --reps 100 --untuned examples/gqa_b1.mu 2>&1 | grep time
} > $O/profile.txt 2>&1
cat $O/profile.txt
