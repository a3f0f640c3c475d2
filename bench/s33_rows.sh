#!/bin/sh
# Session 33: the Python package's GPU checks after mg_launch_rows (the dynamic-batch path
# launches only the blocks over B's rows).
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONUNBUFFERED=1
MUGEN_CACHE_DIR=$(mktemp -d) python3 tests/python/gpu_check.py > ${OUT:-/tmp}/gpu_check_rows.txt 2>&1
cat ${OUT:-/tmp}/gpu_check_rows.txt
