#!/bin/sh
# Session 25, third device call (issue #27): the waits backing off (MUGEN_MK_SLEEP_MAX: the
# longest sleep between polls of a done flag, 64 ns today) — do the polling blocks slow the
# task they wait for? Small cases at 64 (default) and 512; decode b1 traced at 512.
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
M=.carry/bin/mugen
nvidia-smi --query-gpu=name --format=csv,noheader
SMALL="examples/gqa_b1.mu examples/qknorm_b1.mu examples/rmsnorm_linear_b1.mu tests/programs/good/decode_small.mu"
FORMS="--megakernel" sh bench/megakernel/forms.sh $M 100 5 $SMALL
echo "== MUGEN_MK_SLEEP_MAX=512"
MUGEN_MK_SLEEP_MAX=512 FORMS="--megakernel" sh bench/megakernel/forms.sh $M 100 5 $SMALL
echo "== decode b1 static, MUGEN_MK_SLEEP_MAX=512, traced"
MUGEN_MK_SLEEP_MAX=512 MUGEN_TRACE=$O/decode-sleep512.tr MUGEN_CACHE_DIR=$(mktemp -d) $M run --backend gpu --reps 20 --seed 1 --megakernel examples/decode_1b_b1.mu 2>&1 | grep -i "time\|error"
python3 tools/trace.py $O/decode-sleep512.tr | sed -n '1,17p;$p'
gzip -9 $O/decode-sleep512.tr
