#!/bin/sh
# Per-kernel profile of mugen's encoder layer on the GPU (needs `make gpu-carry`): each kernel
# of the token form timed alone (MUGEN_PROFILE=1, median of 5) beside the whole layer's CUDA
# graph time, for each FILE at each BATCH; one compact block a case on stdout.
#   sh bench/ragged/profile.sh [FILES] [BATCHES] [MUGEN_BIN]
export LD_LIBRARY_PATH=$PWD/.carry/lib
FILES=${1:-cola race}
BATCHES=${2:-32 128}
BIN=${3:-.carry/bin/mugen}
for f in $FILES; do
    for b in $BATCHES; do
        echo "== $f b$b"
        MUGEN_PROFILE=1 MUGEN_CACHE_DIR=$(mktemp -d) $BIN run --backend gpu --reps 50 --seed 1 \
            --lengths len=.carry/lengths/$f.txt examples/ragged/encoder_b$b.mu 2>&1 |
            grep -E "^ +[0-9.]+ us|profile:|time|FAIL|error|rel err"
    done
done
