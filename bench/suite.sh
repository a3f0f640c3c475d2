#!/bin/sh
# The lowering suite on a GPU machine (issue #25; docs/lower.md, docs/benchmarks.md): every
# program of bench/suite/ (and any given) through bench/suite.py, mugen lowered beside PyTorch
# eager and torch.compile in one run; table.md and log.txt in ${OUT_DIR:-bench/results/suite-DATE}.
#   sh bench/suite.sh [BIN_DIR] [--no-plain] [PROGRAM.mu ...]
B=${1:-build}
[ $# -ge 1 ] && shift
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}" PYTHONUNBUFFERED=1
exec python3 bench/suite.py --bin "$B/mugen" --out "${OUT_DIR:-bench/results/suite-$(date +%Y-%m-%d)}" "$@"
