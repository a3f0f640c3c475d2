#!/bin/sh
# The generalization suite's GPU phase (issue #26 item 1; docs/benchmarks.md), on the GPU
# machine after bench/general_search.sh: every bench/general/NAME.mu timed as lowered
# (mugen run PROGRAM) and with each μGraph its search kept (bench/general/searched/NAME/),
# mugen's time the fastest correct of them (as mugen optimize chooses), beside PyTorch eager
# and torch.compile in the same run (bench/suite.py --searched). GPUS=N (default 1) spreads
# the programs over N GPUs, one suite.py each (each program's ratios from one GPU, one run),
# in gpuI/ under ${OUT_DIR:-bench/results/general-DATE}; table.md there joins them
# (bench/general_join.py). The device tool returns at most 8 files: tar the folder there.
#   [GPUS=N] sh bench/general.sh [BIN_DIR] [PROGRAM.mu ...]
B=${1:-build}
[ $# -ge 1 ] && shift
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
[ $# -eq 0 ] && set -- bench/general/*.mu
OUTD=${OUT_DIR:-bench/results/general-$(date +%Y-%m-%d)}
G=${GPUS:-1}
mkdir -p "$OUTD"
i=0
while [ $i -lt "$G" ]; do
    progs=$(printf '%s\n' "$@" | awk -v g="$G" -v i="$i" '(NR - 1) % g == i')
    # shellcheck disable=SC2086
    CUDA_VISIBLE_DEVICES=$i MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/suite.py --bin "$B/mugen" --no-plain \
        --searched bench/general/searched --out "$OUTD/gpu$i" $progs >"$OUTD/gpu$i.txt" 2>&1 &
    i=$((i + 1))
done
wait
python3 bench/general_join.py "$OUTD"/gpu*/table.md | tee "$OUTD/table.md"
