#!/bin/sh
# Issue #28's benchmark on the GPU (needs `make gpu-carry`, which copies ../shared/data/lengths
# to .carry/lengths): mugen's encoder layer (examples/ragged/encoder_b*.mu) over the length
# files at batch 32 and 128, each run checked against the reference, then PyTorch's three forms
# of the same layer (bench/ragged/torch_ref.py) in the same call; and one synthetic batch of
# 128 lengths drawn uniformly in [0, 512] with 0, 1 and 512 among them (not one of the four
# files: the layer runs any lengths).
#   sh bench/ragged/run.sh [FILES] [BATCHES] [--no-torch]
export LD_LIBRARY_PATH=$PWD/.carry/lib
FILES=${1:-cola mnli race squad}
BATCHES=${2:-32 128}
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name --format=csv,noheader
python3 -c "import random; r = random.Random(28); print('\n'.join(map(str, [0, 1, 512] + [r.randint(0, 512) for _ in range(125)])))" \
    > $O/synthetic.txt
run() { # FILE BATCH LENGTHS
    printf '%-9s b%-4s ' $1 $2
    MUGEN_CACHE_DIR=$(mktemp -d) .carry/bin/mugen run --backend gpu --reps 100 --seed 1 --lengths len=$3 \
        examples/ragged/encoder_b$2.mu > $O/mugen-$1-b$2.txt 2>&1
    grep -E "time|FAIL|error|rel err" $O/mugen-$1-b$2.txt | tr '\n' ' '
    echo
}
for f in $FILES; do
    for b in $BATCHES; do run $f $b .carry/lengths/$f.txt; done
done
run synthetic 128 $O/synthetic.txt
[ "$3" = "--no-torch" ] || python3 bench/ragged/torch_ref.py --files $(echo $FILES | tr ' ' ',') \
    --batches $(echo $BATCHES | tr ' ' ',') --lengths .carry/lengths --json $O/torch-layer.json
