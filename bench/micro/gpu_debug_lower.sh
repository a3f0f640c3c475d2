export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_CACHE_DIR=$(mktemp -d) CUDA_LAUNCH_BLOCKING=1
M=.carry/bin/mugen
for f in tests/lower/*.mu tests/programs/good/decode_small.mu bench/suite/attn_decode_gqa.mu; do
  echo "== $f"; timeout 60 $M run --backend gpu --reps 0 --seed 3 $f 2>&1 | tail -4
done
echo "== decode_1b_b1"; timeout 150 $M run --backend gpu --reps 5 --seed 3 examples/decode_1b_b1.mu 2>&1 | tail -40
