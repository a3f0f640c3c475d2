#!/bin/sh
# Session 35's last call, final binary and package: the Mirage suite through torch.compile
# against the command line, each case in a fresh process, both timers warmed for 25 ms
# (bench/python/suite.py), then the package before this session against this one in one
# process (bench/python/s35_ab.py, .carry/oldpy).
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/suite.py --bin .carry/bin/mugen --json $O/suite.json > $O/suite.txt 2>&1
grep -v "^{" $O/suite.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/s35_ab.py $PWD/.carry/oldpy/python > $O/ab.txt 2>&1
cat $O/ab.txt
