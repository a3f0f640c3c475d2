#!/bin/sh
# Symbolic dims on the GPU (issue #29 item 3, docs/tuning.md "Symbolic dims"; device: make
# gpu-carry, then sh bench/dims.sh .carry/bin with carry [".carry/bin", ".carry/lib"]). For each
# program of examples/dims (one dim B [1, 512]):
#   1. `mugen portfolio`: every capacity's variant compiled ahead (NVRTC), timed;
#   2. each variant timed at its capacity (`mugen run --dim B=C`, checked, REPS CUDA-graph
#      replays): a variant computes all its rows whatever B is, so this is its time at every B
#      it holds;
#   3. calls between capacities (B = 1, 37, 100, 200, 300, 511), checked, each reporting its
#      variant and that its code came from the compile cache (nothing compiled on the call);
#   4. bench/dims_table.py: for every B in [1, 512], the variant a call runs (the smallest that
#      holds B) against the single variant compiled for 512 rows (what a user of static shapes
#      pads to) and against the fastest variant that holds B (the oracle, by these timings).
B=${1:-build}
OUTD=${OUT:-bench/results/dims-$(date +%Y-%m-%d)}
REPS=${REPS:-200}
mkdir -p "$OUTD"
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
log="$OUTD/dims-log.txt" tsv="$OUTD/variants.tsv"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$log" 2>&1
: >"$tsv"
for P in examples/dims/*.mu; do
    w=$(basename "$P" .mu)
    echo "== $w: portfolio" >>"$log"
    "$B/mugen" portfolio "$P" >>"$log" 2>&1 || echo "$w: portfolio failed" | tee -a "$log"
    for c in $(sed -n 's/^B in \[[0-9]*, [0-9]*\]: the variant for \([0-9]*\) rows.*/\1/p' "$log" | sort -un); do
        out=$("$B/mugen" run --backend gpu --reps "$REPS" --dim "B=$c" "$P" 2>&1)
        echo "== $w B=$c: $out" >>"$log"
        t=$(echo "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | tail -1)
        ok=$(echo "$out" | grep -q "^ok on" && echo ok || echo FAIL)
        printf '%s\t%s\t%s\t%s\n' "$w" "$c" "${t:--}" "$ok" >>"$tsv"
    done
    for v in 1 37 100 200 300 511; do
        out=$("$B/mugen" run --backend gpu --reps 20 --dim "B=$v" "$P" 2>&1)
        echo "== $w call B=$v: $out" >>"$log"
        printf '%s B=%s: %s; %s\n' "$w" "$v" "$(echo "$out" | grep -c '^ok on') ok" "$(echo "$out" | sed -n 's/^ *dim *//p')"
    done
done | tee "$OUTD/calls.txt"
python3 bench/dims_table.py "$tsv" | tee "$OUTD/table.md"
