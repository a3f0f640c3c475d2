#!/bin/sh
# bench/search.sh: the search on each benchmark with pruning on and off (Mirage Table 5):
# wall time, states explored, μGraphs found. Prints one line per run; raw summaries go to
# bench/results/search-DATE/.
#   sh bench/search.sh [MUGEN] [TIME_LIMIT_S] [EXTRA SEARCH OPTIONS...]
mugen=${1:-build/mugen}
limit=${2:-600}
[ $# -ge 2 ] && shift 2 || shift $#
out=bench/results/search-$(date +%Y-%m-%d)
mkdir -p "$out"
printf '%-22s %-8s %10s %14s %8s %s\n' program pruning seconds states found note
for f in rmsnorm_linear_b1 gated_mlp lora ntrans_b1 gqa_b1 qknorm_b1; do
    for p in on off; do
        flag=""
        [ $p = off ] && flag=--no-prune
        dir=$(mktemp -d)
        "$mugen" search "examples/$f.mu" --out "$dir" --time-limit "$limit" --quiet $flag "$@" >"$out/$f-$p.txt" 2>&1
        line=$(grep '^search:' "$out/$f-$p.txt")
        secs=$(echo "$line" | sed 's/search: \([0-9.]*\) s.*/\1/')
        states=$(echo "$line" | sed 's/.* s, \([0-9]*\) states.*/\1/')
        found=$(echo "$line" | sed 's/.* \([0-9]*\) verified.*/\1/')
        note=$(echo "$line" | grep -o 'stopped early')
        printf '%-22s %-8s %10s %14s %8s %s\n' "$f" "$p" "$secs" "$states" "$found" "$note"
        rm -rf "$dir"
    done
done
