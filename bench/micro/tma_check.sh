export LD_LIBRARY_PATH=$PWD/.carry/lib MUGEN_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name --format=csv,noheader
for f in bias_relu swiglu_prefill bmm_scale_add; do
  for fl in "" --no-tma; do
    echo "== $f $fl"; .carry/bin/mugen run --backend gpu --reps 50 --seed 7 $fl bench/suite/$f.mu 2>&1 | grep -v "^inputs" | head -8
  done
done
