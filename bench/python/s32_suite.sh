#!/bin/sh
# Session 32: the Mirage suite through torch.compile against the command line (bench/python/suite.py)
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/suite.py --bin .carry/bin/mugen --profile --json $O/suite.json 2>&1 | tee $O/suite.txt | grep -v "^{"
