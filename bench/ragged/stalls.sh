#!/bin/sh
# Hardware counters of chosen kernels of the encoder layer under Nsight Compute (device, needs
# `make gpu-carry`): speed of light, occupancy, warp stall reasons, scheduler and memory
# sections for the first launch of each kernel named (k29_ is the 29th node's kernel; `mugen
# emit` names them), clocks as they run.
#   sh bench/ragged/stalls.sh "KERNEL..." [FILE] [BATCH] [MUGEN_BIN]
export LD_LIBRARY_PATH=$PWD/.carry/lib
F=${2:-race}
BT=${3:-128}
BIN=${4:-.carry/bin/mugen}
nvidia-smi --query-gpu=name --format=csv,noheader
for k in ${1:?kernel names}; do
    MUGEN_CACHE_DIR=$(mktemp -d) ncu --clock-control none -k "regex:^$k" -c 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        $BIN run --backend gpu --reps 1 --seed 1 --lengths len=.carry/lengths/$F.txt \
        examples/ragged/encoder_b$BT.mu 2>&1 | grep -v "^==PROF==" | sed -n '/^  k[0-9]/,$p' |
        grep -v -E "^ +(-+|Section:.*)$" | tr -s ' ' | head -150
done
