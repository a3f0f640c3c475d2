#!/bin/sh
# Session 32's last device call: make test-gpu (tools/gpu_check.sh .carry/bin), then the Mirage
# suite through torch.compile against the command line (bench/python/s32_suite.sh); the
# results packed as $OUT/final-gpu.tgz (the device returns few files).
R=/tmp/s32final; rm -rf $R; mkdir -p $R/test-gpu $R/suite
OUT=$R/test-gpu sh tools/gpu_check.sh .carry/bin > $R/test-gpu/gpu-check-stdout.txt 2>&1
OUT=$R/suite sh bench/python/s32_suite.sh > $R/suite/stdout.txt 2>&1
# run-time grids (#29): calls between capacities on variants above them, each checked
export LD_LIBRARY_PATH=$PWD/.carry/lib
for w in rmsnorm_linear gated_mlp; do
    for bc in 1:4 3:4 3:8 5:8 37:64 37:512 100:128 200:256 300:384 511:512; do
        b=${bc%%:*} c=${bc#*:}
        printf '%s B=%s C=%s ' $w $b $c
        MUGEN_CACHE_DIR=$R/gcache .carry/bin/mugen run --backend gpu --reps 50 --dim B=$b --variant $c examples/dims/$w.mu 2>&1 |
            grep -E "^ok on|FAIL|time|launched" | tr -s ' ' | tr '\n' ' '
        echo
    done
done > $R/grids.txt 2>&1
rm -rf $R/gcache
rm -rf $R/test-gpu/pycache
tar czf $OUT/final-gpu.tgz -C $R .
tail -25 $R/test-gpu/summary.txt; tail -45 $R/suite/stdout.txt; cat $R/grids.txt
