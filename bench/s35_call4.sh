#!/bin/sh
# Session 35, issue #30: the package's GPU checks; the per-call costs with the package before
# this session (.carry/oldpy: `git archive 81a7fe2 python/mugen`) and after, on one machine
# (bench/python/s35_probe.py part C); then the Mirage suite through torch.compile against the
# command line, both timers warmed for 25 ms (bench/python/suite.py). Needs make gpu-carry.
export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_LIB=$PWD/.carry/lib/libmugen.so PYTHONUNBUFFERED=1
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > $O/device.txt
lscpu | grep "Model name" >> $O/device.txt
MUGEN_CACHE_DIR=$(mktemp -d) PYTHONPATH=$PWD/python python3 tests/python/gpu_check.py > $O/gpu_check.txt 2>&1
tail -1 $O/gpu_check.txt
for v in old new old new; do
    p=$PWD/python; [ $v = old ] && p=$PWD/.carry/oldpy/python
    echo "== package: $v" >> $O/probe.txt
    MUGEN_CACHE_DIR=$(mktemp -d) PYTHONPATH=$p python3 bench/python/s35_probe.py --bin .carry/bin/mugen --parts C --skip "compile[inductor],compile[eager]" \
        --cases ntrans_b1,lora,gqa_b1 2>&1 | grep -v "^NVIDIA" >> $O/probe.txt
done
cat $O/device.txt $O/probe.txt
MUGEN_CACHE_DIR=$(mktemp -d) PYTHONPATH=$PWD/python python3 bench/python/suite.py --bin .carry/bin/mugen --json $O/suite.json > $O/suite.txt 2>&1
grep -v "^{" $O/suite.txt
