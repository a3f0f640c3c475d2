export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name --format=csv,noheader
OUT=$OUT timeout 400 sh bench/ragged/run.sh > $OUT/run.log 2>&1
cat $OUT/run.log
printf '17\n0\n40\n5\n' > /tmp/ra.txt; printf '150\n0\n1\n97\n' >/tmp/l4.txt; printf '130\n64\n65\n3\n0\n' >/tmp/l5.txt
for c in "ragged_attention ra" "seqattn_d128 l4" "seqattn_d48 l5"; do set -- $c
  printf "%s " $1; MUGEN_CACHE_DIR=$(mktemp -d) timeout 60 .carry/bin/mugen run --backend gpu --reps 5 --lengths len=/tmp/$2.txt tests/codegen/$1.mu 2>&1 | grep -E "^ok|FAIL|error|rel err" | tr '\n' ' '; echo; done | tee $OUT/tests.log
for c in "mnli 128" "squad 32" "race 32"; do set -- $c
  for b in mugen-prev mugen mugen-prev mugen; do
  printf "%s b%s %s " $1 $2 $b; MUGEN_CACHE_DIR=$(mktemp -d) timeout 60 .carry/bin/$b run --backend gpu --reps 50 --seed 1 --lengths len=.carry/lengths/$1.txt examples/ragged/encoder_b$2.mu 2>&1 | grep -E "time|FAIL|error" | tr '\n' ' '; echo; done; done | tee $OUT/ab.log
