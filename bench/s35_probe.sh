#!/bin/sh
# Session 35, issue #30: the host primitives, PyTorch's graph replay against its raw exec, and
# the per-call costs of each way to run a suite case (bench/python/s35_probe.py).
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
export MUGEN_CACHE_DIR=$(mktemp -d)
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt
lscpu | grep -E "Model name|^CPU\(s\)" >> $O/device.txt
python3 bench/python/s35_probe.py --bin .carry/bin/mugen "$@" > $O/probe.txt 2>&1
cat $O/device.txt $O/probe.txt
