# session 23: which kernels let the next launch early (griddepcontrol.launch_dependents) and
# which prefetch their weights into L2 first (MUGEN_PF_MODE, an experiment: 0 neither,
# 1 every kernel lets the next launch, 2 that and every kernel but the first prefetches,
# 3 a kernel lets the next launch only when the next prefetches); then the watchdog's cost
# (The knob was removed after this run: mode 2 became `--prefetch`, mode 0 the default.)
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name --format=csv,noheader
B=.carry/bin/mugen
printf '%-24s %10s %10s %10s %10s %10s\n' program old mode0 mode1 mode2 mode3
for p in examples/decode_1b_b1.mu bench/general/mlp_swiglu_down_b1.mu bench/general/rmsnorm_eps_linear_b1.mu examples/gqa_b1.mu examples/qknorm_b1.mu bench/general/mlp_silu_down_b8.mu; do
  printf '%-24s' $(basename $p .mu)
  for m in old 0 1 2 3; do
    if [ $m = old ]; then b=.carry/s22/mugen; else b=$B; fi
    out=$(MUGEN_PF_MODE=$m MUGEN_CACHE_DIR=$(mktemp -d) $b run --backend gpu --reps 100 --seed 3 $p 2>&1); rc=$?
    t=$(printf '%s\n' "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | head -1)
    [ $rc -eq 0 ] && printf ' %10s' "$t" || printf ' %10s' "FAIL$rc"
  done
  echo
done 2>&1 | tee $OUT/pf-modes.txt
sh bench/persist_ab.sh .carry/s22/mugen .carry/bin/mugen examples/gqa_b1.mu examples/lora.mu examples/qknorm_b1.mu 2>&1 | tee $OUT/persist-watchdog2.txt
.carry/bin/run-faults examples/lora.mu examples/ugraphs/lora.mu examples/gqa_b1.mu 2>&1 | grep -v "^  \|mugen.cu\|^ *\^\|^$" | tee $OUT/run-faults2.txt
