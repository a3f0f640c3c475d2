# session 23: the decode step as one persistent launch (kernel-level operators as element-loop
# tasks, whole-launch waits as launch counts, the buffers packed), beside the multi-kernel path
export LD_LIBRARY_PATH=$PWD/.carry/lib
B=.carry/bin/mugen
nvidia-smi --query-gpu=name --format=csv,noheader
for f in "" --megakernel --persist; do
  echo "== decode_1b_b1 $f"
  MUGEN_CACHE_DIR=$(mktemp -d) $B run --backend gpu --reps 50 --seed 1 $f examples/decode_1b_b1.mu 2>&1 | grep -v "^  l\|^  x" | tail -6
done 2>&1 | tee $OUT/decode-persist.txt
for f in "" --megakernel; do
  echo "== decode_small $f"
  MUGEN_CACHE_DIR=$(mktemp -d) $B run --backend gpu --reps 50 --seed 2 $f tests/programs/good/decode_small.mu 2>&1 | tail -3
done 2>&1 | tee -a $OUT/decode-persist.txt
sh bench/megakernel/persist3.sh $B examples/gqa_b1.mu examples/lora.mu bench/general/mlp_silu_down_b8.mu 2>&1 | tee $OUT/persist3b.txt
.carry/bin/run-faults examples/lora.mu examples/ugraphs/lora.mu examples/gqa_b1.mu 2>&1 | grep "^ok\|^FAIL\|passed" | cut -c1-200 | tee $OUT/run-faults4.txt
