#!/bin/sh
# Session 33's last device call: the Python package's GPU checks (the dynamic-batch path is
# new), the suite through torch.compile and mugen.compile against mugen run, and the trained
# selector deployed (MUGEN_SELECTOR) at held-out B values, each run checked. Files to $OUT as
# each part ends.
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
MUGEN_CACHE_DIR=$(mktemp -d) python3 tests/python/gpu_check.py > $O/gpu_check.txt 2>&1
mkdir -p $O/suite; OUT=$O/suite sh bench/python/s33_suite.sh > /dev/null 2>&1
C=$(mktemp -d)
for w in rmsnorm_linear gated_mlp; do
    MUGEN_CACHE_DIR=$C .carry/bin/mugen portfolio examples/dims/$w.mu > /dev/null 2>&1
    for b in 3 19 67 100 140 229 418; do
        printf '%s B=%s: ' $w $b
        MUGEN_CACHE_DIR=$C MUGEN_SELECTOR=data/selector/$w.txt .carry/bin/mugen run --backend gpu --reps 50 --dim B=$b examples/dims/$w.mu 2>&1 |
            grep -E "^ok|MISMATCH|time|ran as|chosen|could not" | tr -s ' ' | tr '\n' ' '
        echo
    done
done > $O/selector-runs.txt 2>&1
tail -12 $O/gpu_check.txt; grep -v "^{" $O/suite/suite.txt | tail -16; cat $O/selector-runs.txt
