# session 23, first call: the decode step b=1 timed (with and without PDL), each of its
# launches alone under ncu, and the 40-addition chain (bench/results/h100-2026-11-27-s23/)
set -x
export LD_LIBRARY_PATH=$PWD/.carry/lib
B=.carry/bin/mugen
nvidia-smi --query-gpu=name --format=csv,noheader
for s in 1 2; do $B run --backend gpu --reps 100 --seed $s examples/decode_1b_b1.mu 2>&1 | tail -4; done > $OUT/decode_b1.txt
$B run --backend gpu --reps 100 --seed 1 --no-pdl examples/decode_1b_b1.mu 2>&1 | tail -3 >> $OUT/decode_b1.txt
for o in "" "--plain" "--plain --persist" "--persist" "--plain --no-pdl"; do echo "== $o"; $B run --backend gpu --reps 300 --seed 1 $o bench/megakernel/chain40.mu 2>&1 | grep -v "^  A\|^#"; done > $OUT/chain40.txt 2>&1
sh bench/ncu_kernels.sh $B examples/decode_1b_b1.mu > $OUT/ncu_b1.txt 2>&1
tail -5 $OUT/ncu_b1.txt
