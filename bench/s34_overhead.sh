#!/bin/sh
# Session 34: the host time of a Kernel call taken apart (bench/python/s34_overhead.py), with
# mg_launch's graphs and without; then GQA decode's masked copies (whole-tile path) at L = 4096
# and 4000 beside the static program.
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
export MUGEN_CACHE_DIR=$(mktemp -d)
O=${OUT:-/tmp}
P="examples/ntrans_b1.mu examples/lora.mu examples/gated_mlp.mu examples/gqa_b1.mu"
python3 bench/python/s34_overhead.py $P > $O/overhead.txt 2>&1
MUGEN_LAUNCH_GRAPH=0 python3 bench/python/s34_overhead.py $P >> $O/overhead.txt 2>&1
cat $O/overhead.txt
M=.carry/bin/mugen
for i in 1 2; do
    $M run --backend gpu --reps 100 examples/gqa_b1.mu 2>&1 | grep time | sed 's/^/static gqa_b1 /'
    for L in 4096 4000 1000; do $M run --backend gpu --reps 100 --dim L=$L examples/dims/gqa_decode.mu 2>&1 | grep -E "^ok|MISMATCH|time" | tr '\n' ' ' | sed "s/^/gqa_decode L=$L /"; echo; done
done > $O/gqa-whole-copies.txt 2>&1
cat $O/gqa-whole-copies.txt
