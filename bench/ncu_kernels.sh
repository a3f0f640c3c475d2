#!/bin/sh
# Each kernel of a program's lowered run, timed alone under Nsight Compute on the GPU machine
# (caches flushed before each, clocks as they run): duration, DRAM bytes read and the share of
# the DRAM peak, grid size. Beside bench/torch_kernels.py (torch.compile's kernels) it shows
# where a program's time goes (docs/notes/2026-11-27-s21.md). ncu serialises the launches, so
# the sum is not the CUDA graph's time.
#   sh bench/ncu_kernels.sh [BIN] PROGRAM.mu [UGRAPH.mu]
B=${1:-.carry/bin/mugen}
shift
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR=${MUGEN_CACHE_DIR:-$(mktemp -d)}
n=$("$B" run --backend gpu --reps 1 "$@" 2>&1 | sed -n 's/.* on .*: \([0-9]*\) kernel launches.*/\1/p')
[ -n "$n" ] || { echo "ncu_kernels: $B run $* failed" >&2; exit 1; }
echo "== $* ($n launches, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
ncu --csv --cache-control all --clock-control none -c "$n" \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
    "$B" run --backend gpu --reps 1 "$@" 2>/dev/null | grep '^"' | awk -F'","' '{print $5, $(NF-2), $NF}' | sed 's/"//g'
