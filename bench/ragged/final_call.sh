#!/bin/sh
# Session 28's final device call: the final binary against the previous commit's (A/B, all 8
# cases), then the benchmark with PyTorch's three forms (bench/ragged/run.sh); everything in
# one tarball under $OUT (the device returns at most 8 files).
R=/tmp/final; mkdir -p $R
sh bench/ragged/ab_call.sh "mugen-prev mugen" > $R/ab.log 2>&1
OUT=$R sh bench/ragged/run.sh > $R/run.log 2>&1
cp $R/torch-layer.json $R/torch-layer.jsonl 2>/dev/null
tar czf $OUT/final.tgz -C $R .
cat $R/ab.log; grep -v "^\s*$" $R/run.log | tail -40
