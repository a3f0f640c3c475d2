#!/bin/sh
# Session 35, issue #30: (1) the package before this session against this one in one process
# (bench/python/s35_ab.py); (2) the nTrans cases of the suite alone, then after the cases
# before them in CASES, then all ten again (bench/python/suite.py --cases).
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt
MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/s35_ab.py $PWD/.carry/oldpy/python > $O/ab.txt 2>&1
cat $O/device.txt $O/ab.txt
for c in ntrans_b1,ntrans_b8 gated_mlp,ntrans_b1,ntrans_b8; do
    echo "== suite.py --cases $c" >> $O/ntrans-order.txt
    MUGEN_CACHE_DIR=$(mktemp -d) python3 bench/python/suite.py --bin .carry/bin/mugen --cases $c 2>&1 | grep "^| [a-z]" >> $O/ntrans-order.txt
done
cat $O/ntrans-order.txt
