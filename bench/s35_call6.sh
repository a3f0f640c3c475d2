#!/bin/sh
# Session 35, issue #30: nTrans b1's time against where its buffers sit (bench/python/s35_place.py),
# then the Mirage suite through torch.compile against the command line, each case in a fresh
# process (bench/python/suite.py, its default now).
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/s35_place.py > $O/place.txt 2>&1
cat $O/device.txt $O/place.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/suite.py --bin .carry/bin/mugen --json $O/suite.json > $O/suite.txt 2>&1
grep -v "^{" $O/suite.txt
