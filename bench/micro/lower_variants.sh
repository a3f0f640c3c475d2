#!/bin/sh
# The plain lowering's MM tiling rules compared (docs/notes/2026-11-26-lowering.md): each
# binary in BIN_DIR named mugen* (built with OPT="-O2 -DLW_...") runs every suite program and
# example program lowered on the GPU; one line per (program, binary): time and error.
#   sh bench/micro/lower_variants.sh BIN_DIR
B=${1:-.carry/bin}
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
nvidia-smi --query-gpu=name --format=csv,noheader
for f in bench/suite/*.mu examples/*.mu; do
    line="$(basename "$f" .mu)"
    for m in "$B"/mugen*; do
        out=$(timeout 120 "$m" run --backend gpu --reps 50 --seed 7 "$f" 2>&1)
        t=$(echo "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | tail -1)
        e=$(echo "$out" | sed -n 's/.*rel err \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
        k=$(echo "$out" | sed -n 's/.* \([0-9]*\) kernel launch.*/\1/p')
        line="$line $(basename "$m"):${t:-FAIL}/${k}k/${e}"
    done
    echo "$line"
done
