#!/bin/sh
# A/B of programs (lowered, no μGraph) between two mugen binaries in one run on the GPU, both
# interleaved, REPS CUDA-graph replays each, seed fixed; one line a program: time, launches
# and largest relative error per binary.
#   sh bench/micro/ab_programs.sh OLD_BIN NEW_BIN PROGRAM.mu ...
OLD=$1 NEW=$2 REPS=${REPS:-100}
shift 2
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
nvidia-smi --query-gpu=name --format=csv,noheader
for p in "$@"; do
    line=$(basename "$p" .mu)
    for m in "$OLD" "$NEW"; do
        out=$("$m" run --backend gpu --reps "$REPS" --seed 7 "$p" 2>&1)
        t=$(echo "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | tail -1)
        k=$(echo "$out" | sed -n 's/.*: \([0-9]*\) kernel launch.*/\1/p')
        e=$(echo "$out" | sed -n 's/.*rel err \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
        case "$out" in *"ok on"*) ok=ok ;; *) ok=FAIL ;; esac
        line="$line $(basename "$(dirname "$m")"):${t:-FAIL}/${k}k/${e}/$ok"
    done
    echo "$line"
done
