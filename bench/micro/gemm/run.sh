#!/bin/sh
# GEMM tiling variants on the GPU (docs/notes/2026-11-26-gemm.md): each .mu here (a program
# with hand-written μGraph kernels) run by mugen, REPS CUDA-graph replays, seed fixed; then
# torch.matmul alone at the same shapes as the anchor. sh bench/micro/gemm/run.sh BIN_DIR [FLAG...]
# (FLAGs go to mugen run: --no-fixup, ...); NO_TORCH=1 skips the anchor.
BIN=$1 REPS=${REPS:-100}
shift
D=$(dirname "$0")
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
nvidia-smi --query-gpu=name --format=csv,noheader
for f in "$D"/*.mu; do
    out=$("$BIN/mugen" run --backend gpu --reps "$REPS" --seed 7 "$@" "$f" 2>&1)
    t=$(echo "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | tail -1)
    e=$(echo "$out" | sed -n 's/.*rel err \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
    k=$(echo "$out" | sed -n 's/.*: \([0-9]*\) kernel launch.*/\1/p')
    echo "$(basename "$f") ${t:-FAIL} us, $k launches, err $e"
    [ -n "$t" ] || echo "$out" | tail -5
done
[ -n "$NO_TORCH" ] || python3 "$D/torch_mm.py"
