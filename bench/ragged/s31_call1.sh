#!/bin/sh
# session 31 call 1: MMROW off A/B on all 8 cases; the tuner's first GPU runs
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
start=$(date +%s)
sh bench/ragged/ab_call.sh "mugen mugen@--schedule=sketch=4" > $OUT/ab-sketch4.txt 2>&1
echo "ab: $(( $(date +%s) - start )) s"; cat $OUT/ab-sketch4.txt
t=$(date +%s)
C=$(mktemp -d)
MUGEN_CACHE_DIR=$C .carry/bin/mugen tune --backend gpu --samples 3 --guided 2 --jobs 3 --reps 20 bench/suite/bias_relu.mu > $OUT/tune-bias.txt 2>&1; echo "rc $?" >> $OUT/tune-bias.txt
MUGEN_CACHE_DIR=$C .carry/bin/mugen run --backend gpu --reps 20 bench/suite/bias_relu.mu >> $OUT/tune-bias.txt 2>&1
echo "tune bias: $(( $(date +%s) - t )) s"; tail -20 $OUT/tune-bias.txt
t=$(date +%s)
C2=$(mktemp -d)
MUGEN_CACHE_DIR=$C2 timeout 240 .carry/bin/mugen tune --backend gpu --samples 14 --guided 8 --jobs 12 --reps 50 \
  --dataset $OUT/tune-race32.jsonl --lengths len=.carry/lengths/race.txt examples/ragged/encoder_b32.mu > $OUT/tune-race32.txt 2>&1
echo "rc $?" >> $OUT/tune-race32.txt
echo "tune race32: $(( $(date +%s) - t )) s"; tail -40 $OUT/tune-race32.txt
