#!/bin/sh
# Session 32's #30 call (docs/notes/2026-11-28-s32.md): the package's GPU checks with mg_launch's
# graphs on and off (MUGEN_LAUNCH_GRAPH=0), then the Mirage suite through torch.compile against
# the command line (bench/python/suite.py). Needs make gpu-carry.
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
for g in 1 0; do
    echo "== tests/python/gpu_check.py, MUGEN_LAUNCH_GRAPH=$g"
    MUGEN_LAUNCH_GRAPH=$g MUGEN_CACHE_DIR=$(mktemp -d) python3 tests/python/gpu_check.py 2>&1 | tee $O/gpu_check_graph$g.txt
done
echo "== bench/python/suite.py"
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/suite.py --bin .carry/bin/mugen --json $O/suite.json 2>&1 | tee $O/suite.txt | grep -v "^{"
