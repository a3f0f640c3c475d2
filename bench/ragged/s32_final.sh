#!/bin/sh
# Session 32's final #28 call: bmm_scale_add (the other kernel the pairing rule changed) at the
# session's start against now, then the benchmark with PyTorch's three forms
# (bench/ragged/run.sh); everything in one tarball under $OUT.
export LD_LIBRARY_PATH=$PWD/.carry/lib
R=/tmp/final; mkdir -p $R
for i in 1 2 3; do for b in mugen-old mugen; do
    printf '%s bmm_scale_add %s ' $i $b
    MUGEN_CACHE_DIR=$(mktemp -d) .carry/bin/$b run --backend gpu --reps 200 --seed 1 bench/suite/bmm_scale_add.mu 2>&1 | grep -E "time|FAIL|rel err" | tr '\n' ' '; echo
done; done > $R/bmm.log 2>&1
OUT=$R sh bench/ragged/run.sh > $R/run.log 2>&1
cp $R/torch-layer.json $R/torch-layer.jsonl 2>/dev/null
tar czf $OUT/final.tgz -C $R .
cat $R/bmm.log; grep -v "^\s*$" $R/run.log | tail -40
