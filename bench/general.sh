#!/bin/sh
# The generalization suite's GPU phase (issue #26 item 1; docs/benchmarks.md), on the GPU
# machine after bench/general_search.sh ran here: every bench/general/NAME.mu timed as lowered
# (mugen run PROGRAM) and with each μGraph its search kept (bench/general/searched/NAME/),
# mugen's time the fastest correct of them (as mugen optimize chooses), beside PyTorch eager
# and torch.compile in the same run (bench/suite.py --searched); table.md and log.txt in
# ${OUT_DIR:-bench/results/general-DATE}.
#   sh bench/general.sh [BIN_DIR] [PROGRAM.mu ...]
B=${1:-build}
[ $# -ge 1 ] && shift
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}" PYTHONUNBUFFERED=1
[ $# -eq 0 ] && set -- bench/general/*.mu
exec python3 bench/suite.py --bin "$B/mugen" --no-plain --searched bench/general/searched \
    --out "${OUT_DIR:-bench/results/general-$(date +%Y-%m-%d)}" "$@"
