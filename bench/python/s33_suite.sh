#!/bin/sh
# Session 33: issue #30's target on the GPU, the Mirage suite through torch.compile against the
# command line (bench/python/suite.py), each case's line written to $OUT as it finishes.
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/suite.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/suite.py --bin .carry/bin/mugen --profile --json $O/suite.json >> $O/suite.txt 2>&1
grep -v "^{" $O/suite.txt | head -60
