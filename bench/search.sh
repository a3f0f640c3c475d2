#!/bin/sh
# bench/search.sh: the search on each benchmark with pruning on and off (Mirage Table 5):
# wall time, states explored, μGraphs found, at the default limits. Prints one line per run;
# raw summaries go to bench/results/search-DATE/ (or $OUT).
#   sh bench/search.sh [MUGEN] [LIMIT_ON_S] [LIMIT_OFF_S] [EXTRA SEARCH OPTIONS...]
# LIMIT_ON_S (default 600) bounds each run with pruning on, LIMIT_OFF_S (default 120) each
# run without; a run that hits its limit says "stopped early".
mugen=${1:-build/mugen}
limit_on=${2:-600}
limit_off=${3:-120}
[ $# -ge 3 ] && shift 3 || shift $#
out=${OUT:-bench/results/search-$(date +%Y-%m-%d)}
mkdir -p "$out"
printf '%-20s %-8s %9s %12s %8s %9s %s\n' program pruning seconds states found verify_s note
for f in rmsnorm_linear_b1 gated_mlp lora ntrans_b1 gqa_b1 qknorm_b1; do
    for p in on off; do
        flag="" limit=$limit_on
        [ $p = off ] && flag=--no-prune limit=$limit_off
        dir=$(mktemp -d)
        "$mugen" search "examples/$f.mu" --out "$dir" --time-limit "$limit" --quiet --no-cache $flag "$@" >"$out/$f-$p.txt" 2>&1
        line=$(grep '^search:' "$out/$f-$p.txt")
        secs=$(echo "$line" | sed 's/search: \([0-9.]*\) s.*/\1/')
        states=$(echo "$line" | sed 's/.* s, \([0-9]*\) states.*/\1/')
        found=$(echo "$line" | sed 's/.* \([0-9]*\) verified.*/\1/')
        vs=$(echo "$line" | sed 's/.*verification \([0-9]*\) thread-s.*/\1/')
        note=$(echo "$line" | grep -o 'stopped early')
        printf '%-20s %-8s %9s %12s %8s %9s %s\n' "$f" "$p" "$secs" "$states" "$found" "$vs" "$note"
        rm -rf "$dir"
    done
done
