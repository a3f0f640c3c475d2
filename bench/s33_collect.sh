#!/bin/sh
# Session 33, one device call: the suite through torch.compile again (x * x now sqr), nTrans as
# the torch frontend wrote it before against examples/ntrans_b1.mu, then the selector's data.
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
for f in examples/ntrans_b1.mu bench/python/ntrans_torch_form.mu examples/ntrans_b1.mu bench/python/ntrans_torch_form.mu; do
    echo "$f $(.carry/bin/mugen run --backend gpu --reps 200 --seed 1 $f 2>&1 | grep -E 'time|^ok|MISMATCH' | tr -s ' ' | tr '\n' ' ')"
done > $O/ntrans.txt 2>&1
mkdir -p $O/suite; OUT=$O/suite sh bench/python/s33_suite.sh > /dev/null 2>&1
mkdir -p $O/sel
OUT=$O/sel LIMIT_S=${LIMIT_S:-460} sh bench/selector/collect.sh .carry/bin
cat $O/ntrans.txt; grep -v "^{" $O/suite/suite.txt | sed -n 3,16p
