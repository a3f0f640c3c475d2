#!/bin/sh
# Issue #26 item 2 on the GPU machine: each bench/attn case's guided search (bench/attn/cases.txt,
# enumeration only: --no-lowered) on the machine's cores, then every case's lowered μGraph (the
# one `mugen search` ranks among its results by default) and the guided μGraphs timed in one run;
# the benchmark's gqa/qknorm cases are timed against their guided μGraphs of `make bench`
# (bench/searched/). Output under ${OUT:-bench/results/attn-DATE}.
#   sh bench/attn/run.sh [BIN_DIR] [SEARCH_SECONDS]
B=${1:-build}
T=${2:-240}
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
O=${OUT:-bench/results/attn-$(date +%Y-%m-%d)}
mkdir -p "$O/guided"
n=$(grep -cv '^#' bench/attn/cases.txt)
th=$(( $(nproc) / n )); [ "$th" -lt 1 ] && th=1
while read -r p opts; do # (not a pipeline: wait must see the searches)
    case $p in '#'* | '') continue ;; esac
    # shellcheck disable=SC2086
    MUGEN_SEARCH_CACHE=off "$B/mugen" search "bench/attn/$p.mu" $opts --no-lowered --threads "$th" \
        --time-limit "$T" --out "$O/guided/$p" --quiet >"$O/guided/$p.log" 2>&1 &
done <bench/attn/cases.txt
wait
timed() { # mugen run's median time of program [μGraph], or FAIL when an output is off
    out=$("$B/mugen" run "$@" --seed 1 2>&1) || { echo FAIL; return; }
    echo "$out" | awk '/^  time/{print $2}' | head -1
}
best() { # program, μGraph files: the fastest correct time
    p=$1; shift
    for u in "$@"; do timed "$p" "$u"; done | grep -v FAIL | sort -g | head -1
}
top() { # a search folder: its first 5 μGraphs by rank
    for i in 1 2 3 4 5; do [ -f "$1/ugraph-$i.mu" ] && echo "$1/ugraph-$i.mu"; done
}
echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); lowered = the plain lowering's μGraph (in mugen search's results by default); guided = the fastest of the guided search's top 5" | tee "$O/table.txt"
for p in mqa_b1 mqa_b8 mha_b1 mha_b8 gqa_b1 gqa_b8 qknorm_b1 qknorm_b8; do
    if [ -f "bench/attn/$p.mu" ]; then f=bench/attn/$p.mu g=$O/guided/$p; else f=examples/$p.mu g=bench/searched/$p; fi
    low=$(timed "$f")
    # shellcheck disable=SC2046
    gd=$(best "$f" $(top "$g"))
    low2=$(timed "$f")
    echo "$p lowered $low $low2 us, guided ${gd:--} us; guided search: $(grep '^search:' "$g/summary.txt" 2>/dev/null | cut -c1-120)" | tee -a "$O/table.txt"
done
