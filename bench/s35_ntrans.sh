#!/bin/sh
# Session 35: bench/python/s35_ntrans.py (the one-kernel cases' torch-graph gap), then the
# probe's graph parts (B) and the suite's cases again on the same machine.
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > $O/device.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/s35_ntrans.py --bin .carry/bin/mugen > $O/ntrans.txt 2>&1
cat $O/device.txt $O/ntrans.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/s35_probe.py --bin .carry/bin/mugen --parts B > $O/probe-b.txt 2>&1
cat $O/probe-b.txt
