#!/bin/sh
# For the next session's device time (issue #28): what session 25 built but could not run on
# the GPU. Needs `make gpu-carry` first (it also copies ../shared/data/lengths to
# .carry/lengths). The ragged FFN half (examples/ragged/ffn_b*.mu, token form) on the GPU over
# the four length files, beside PyTorch's three forms of the same half, and PyTorch's three
# forms of the whole layer (the anchors; mugen does not run the attention yet).
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
for f in cola mnli race squad; do
    for b in 32 128; do
        printf '%-6s b%-4s ' $f $b
        MUGEN_CACHE_DIR=$(mktemp -d) .carry/bin/mugen run --backend gpu --reps 100 --seed 1 --lengths len=.carry/lengths/$f.txt \
            examples/ragged/ffn_b$b.mu 2>&1 | grep -E "time|FAIL|error|rel err" | tr '\n' ' '
        echo
    done
done
python3 bench/ragged/torch_ref.py --part ffn --lengths .carry/lengths --json $O/torch-ffn.json
python3 bench/ragged/torch_ref.py --lengths .carry/lengths --json $O/torch-layer.json
