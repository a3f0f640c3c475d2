#!/bin/sh
# Session 25, first device call (issue #27): random programs as one launch, optimize
# --megakernel's GPU branch, and traces (MUGEN_TRACE, tools/trace.py) of the decode step's
# static megakernel and of the ready-ticket experiment (.carry/bin/mugen-ready, branch
# exp/ready-tickets), with the small cases under each form.
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
M=.carry/bin/mugen R=.carry/bin/mugen-ready
echo "== run-random 24"; .carry/bin/run-random 24 2>&1 | grep -v "^ok" | tail -8
echo "== optimize --megakernel gqa_b1"
MUGEN_CACHE_DIR=$(mktemp -d) MUGEN_SEARCH_CACHE=off $M optimize --backend gpu --megakernel --time-limit 30 examples/gqa_b1.mu 2>&1 | grep "optimize:"
echo "== small cases: multi / static / ready / queues (mugen-ready binary)"
FORMS="|--megakernel|--ready|--queues" sh bench/megakernel/forms.sh $R 100 5 examples/gqa_b1.mu examples/qknorm_b1.mu examples/rmsnorm_linear_b1.mu examples/gqa_b8.mu examples/lora.mu
for f in megakernel ready queues; do
  MUGEN_TRACE=$O/gqa-$f.tr MUGEN_CACHE_DIR=$(mktemp -d) $R run --backend gpu --reps 50 --seed 5 --$f examples/gqa_b1.mu 2>&1 | grep -i "time\|error"
  python3 tools/trace.py $O/gqa-$f.tr | tail -12
done
echo "== decode b1 static, traced"
MUGEN_TRACE=$O/decode-static.tr MUGEN_CACHE_DIR=$(mktemp -d) $M run --backend gpu --reps 20 --seed 1 --megakernel examples/decode_1b_b1.mu 2>&1 | grep -i "time\|error"
python3 tools/trace.py $O/decode-static.tr --top 10 | tail -14
echo "== decode b1 ready, traced"
MUGEN_TRACE=$O/decode-ready.tr MUGEN_CACHE_DIR=$(mktemp -d) $R run --backend gpu --reps 20 --seed 1 --ready examples/decode_1b_b1.mu 2>&1 | grep -i "time\|error"
python3 tools/trace.py $O/decode-ready.tr --top 10 | tail -14
echo "== decode b1 multi"
MUGEN_CACHE_DIR=$(mktemp -d) $M run --backend gpu --reps 50 --seed 1 examples/decode_1b_b1.mu 2>&1 | grep -i "time\|error"
