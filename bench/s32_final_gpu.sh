#!/bin/sh
# Session 32's last device call: make test-gpu (tools/gpu_check.sh .carry/bin), then the Mirage
# suite through torch.compile against the command line (bench/python/s32_suite.sh); the
# results packed as $OUT/final-gpu.tgz (the device returns few files).
R=/tmp/s32final; rm -rf $R; mkdir -p $R/test-gpu $R/suite
OUT=$R/test-gpu sh tools/gpu_check.sh .carry/bin > $R/test-gpu/gpu-check-stdout.txt 2>&1
OUT=$R/suite sh bench/python/s32_suite.sh > $R/suite/stdout.txt 2>&1
rm -rf $R/test-gpu/pycache
tar czf $OUT/final-gpu.tgz -C $R .
tail -25 $R/test-gpu/summary.txt; tail -45 $R/suite/stdout.txt
