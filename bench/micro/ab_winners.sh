#!/bin/sh
# A/B of make bench's winning μGraphs (docs/benchmarks.md's table) between two mugen binaries
# in one run on the GPU: each case's program and μGraph, both binaries interleaved, REPS
# CUDA-graph replays each, seed fixed; one line a case: time and largest relative error.
#   sh bench/micro/ab_winners.sh OLD_BIN NEW_BIN
OLD=$1 NEW=$2 REPS=${REPS:-100}
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
nvidia-smi --query-gpu=name --format=csv,noheader
for cu in rmsnorm_linear_b1:1 rmsnorm_linear_b8:1 gated_mlp:1 lora:17 ntrans_b1:1 ntrans_b8:1 gqa_b1:1 gqa_b8:35 qknorm_b1:1 qknorm_b8:1; do
    c=${cu%%:*} u=bench/searched/${c}/ugraph-${cu##*:}.mu line=$c
    for m in "$OLD" "$NEW"; do
        out=$("$m" run --backend gpu --reps "$REPS" --seed 7 "examples/$c.mu" "$u" 2>&1)
        t=$(echo "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | tail -1)
        e=$(echo "$out" | sed -n 's/.*rel err \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
        line="$line $(basename "$m"):${t:-FAIL}/${e}"
    done
    echo "$line"
done
