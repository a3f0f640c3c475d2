#!/bin/sh
# Session 35's make test-gpu on the final binary (tools/gpu_check.sh; the package's checks in it
# run tests/python/gpu_check.py). Needs make gpu-carry, .carry/lengths carried.
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
OUT=$O/test-gpu sh tools/gpu_check.sh .carry/bin > $O/test-gpu.txt 2>&1
tail -30 $O/test-gpu.txt
