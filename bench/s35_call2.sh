#!/bin/sh
# Session 35, issue #30, after the torch call path made once a device: the package's GPU checks,
# the probe's primitives and per-call costs (bench/python/s35_probe.py), then the Mirage suite
# through torch.compile against the command line (bench/python/suite.py). Needs make gpu-carry.
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 tests/python/gpu_check.py > $O/gpu_check.txt 2>&1
tail -3 $O/gpu_check.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/s35_probe.py --bin .carry/bin/mugen --parts ${PARTS:-AC} > $O/probe.txt 2>&1
cat $O/probe.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/suite.py --bin .carry/bin/mugen --json $O/suite.json > $O/suite.txt 2>&1
grep -v "^{" $O/suite.txt
