#!/bin/sh
# Builds bench/micro/attntimes.cu for a two-kernel attention μGraph (on any machine with nvcc):
#   sh bench/micro/attntimes.sh MUGEN UGRAPH HEADS SPLITS OUT
# HEADS: Q's first dim (2 for b=1, 16 for b=8); SPLITS: the partial sums' last dim.
set -e
mugen=$1 u=$2 h=$3 sp=$4 out=$5
d=$(mktemp -d)
"$mugen" emit "$u" | python3 "$(dirname "$0")/attnmarks.py" >"$d/gen_m.cu"
set -- $(sed -n 's|^/\* [a-zA-Z0-9_]*: graph-defined kernel (node [0-9]*); grid \[\([0-9]*\), \([0-9]*\), \([0-9]*\)\] x \([0-9]*\) threads, for-loop [0-9]*, \([0-9]*\) bytes.*|\1 \2 \3 \4 \5|p' "$d/gen_m.cu")
names=$(sed -n 's/^extern "C" __global__ void __launch_bounds__([0-9]*) \([a-zA-Z0-9_]*\)(.*/\1/p' "$d/gen_m.cu" | tr '\n' ' ')
k1=${names%% *} k2=$(echo $names | cut -d' ' -f2)
cp "$(dirname "$0")/attntimes.cu" "$d/"
nvcc -arch=sm_90a -O3 -I"$d" -DSRC=\"gen_m.cu\" -DK1="$k1" -DK2="$k2" -DG1X=$1 -DG1Y=$2 -DG1Z=$3 -DT1=$4 -DSMEM1=$5 \
    -DG2X=$6 -DG2Y=$7 -DG2Z=$8 -DT2=$9 -DSMEM2=${10} -DNAME=\""$u"\" \
    -DQN="($h*256*64)" -DKN="($h*64*4096)" -DVN="($h*4096*64)" -DP3="($h*256*$sp)" -DP4="($h*256*64*$sp)" -DON="($h*256*64)" \
    -o "$out" "$d/attntimes.cu" 2>&1 | grep -i error || true
rm -rf "$d"
