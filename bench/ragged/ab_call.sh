#!/bin/sh
# A/B of mugen binaries on the encoder (device): sh bench/ragged/ab_call.sh "BIN..." [FILES] [BATCHES]
# each case's CUDA-graph time (median of 100 replays, checked) per binary, rounds interleaved;
# a BIN of the form NAME@VAR=VALUE runs .carry/bin/NAME with that environment variable set
# (mugen@MUGEN_SEQATTN_LONG=128), NAME@--OPTION=VALUE with that option (mugen@--schedule=sketch=4:
# the encoder lowered without form MMROW; mugen@--untuned: the rules, not the tuning cache)
export LD_LIBRARY_PATH=$PWD/.carry/lib
BINS=${1:-mugen}
FILES=${2:-cola mnli race squad}
BATCHES=${3:-32 128}
nvidia-smi --query-gpu=name --format=csv,noheader
for f in $FILES; do
    for b in $BATCHES; do
        for spec in $BINS; do
            bin=${spec%%@*} var= arg=
            [ "$bin" != "$spec" ] && var=${spec#*@}
            case "$var" in --*=*) arg="${var%%=*} ${var#*=}" var= ;; --*) arg=$var var= ;; esac
            printf '%-9s b%-4s %-12s ' $f $b $spec
            env $var MUGEN_CACHE_DIR=$(mktemp -d) .carry/bin/$bin run $arg --backend gpu --reps 100 --seed 1 \
                --lengths len=.carry/lengths/$f.txt examples/ragged/encoder_b$b.mu 2>&1 |
                grep -E "time|FAIL|error|rel err" | sed 's/(median.*//' | tr -s ' ' | tr '\n' ' '
            echo
        done
    done
done
