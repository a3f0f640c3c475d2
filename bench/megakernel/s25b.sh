#!/bin/sh
# Session 25, second device call (issue #27): the megakernel after the element tasks' change
# (2,048 elements a task, a thread's 8 loads before its stores), with and without
# MUGEN_MK_MINBLOCKS=3 (registers capped for 3 blocks a multiprocessor); decode traced.
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
M=.carry/bin/mugen
nvidia-smi --query-gpu=name --format=csv,noheader
for mb in 0 3; do
  echo "== decode b1 static, MUGEN_MK_MINBLOCKS=$mb, traced"
  MUGEN_MK_MINBLOCKS=$mb MUGEN_TRACE=$O/decode-static-mb$mb.tr MUGEN_CACHE_DIR=$(mktemp -d) $M run --backend gpu --reps 20 --seed 1 --megakernel examples/decode_1b_b1.mu 2>&1 | grep -i "time\|error"
  python3 tools/trace.py $O/decode-static-mb$mb.tr | sed -n '1,17p;$p'
done
SMALL="examples/gqa_b1.mu examples/qknorm_b1.mu examples/rmsnorm_linear_b1.mu examples/gqa_b8.mu examples/lora.mu tests/programs/good/decode_small.mu"
FORMS="|--megakernel" sh bench/megakernel/forms.sh $M 100 5 $SMALL
echo "== MUGEN_MK_MINBLOCKS=3"
MUGEN_MK_MINBLOCKS=3 FORMS="--megakernel" sh bench/megakernel/forms.sh $M 100 5 $SMALL
echo "== decode b1 multi; b8 multi and static"
FORMS="|--megakernel" sh bench/megakernel/forms.sh $M 20 1 examples/decode_1b_b8.mu
FORMS="|" sh bench/megakernel/forms.sh $M 50 1 examples/decode_1b_b1.mu
