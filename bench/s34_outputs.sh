#!/bin/sh
# Session 34: bench/python/s34_outputs.py beside `mugen run` for the small suite programs.
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
export MUGEN_CACHE_DIR=$(mktemp -d)
O=${OUT:-/tmp}
P="examples/ntrans_b1.mu examples/ntrans_b8.mu examples/lora.mu examples/gqa_b1.mu"
for f in $P; do printf '%s: mugen run ' $f; .carry/bin/mugen run --backend gpu --reps 200 $f 2>&1 | grep time | tr -s ' '; done > $O/outputs.txt
python3 bench/python/s34_outputs.py $P >> $O/outputs.txt 2>&1
for f in $P; do printf '%s: mugen run ' $f; .carry/bin/mugen run --backend gpu --reps 200 $f 2>&1 | grep time | tr -s ' '; done >> $O/outputs.txt
cat $O/outputs.txt
