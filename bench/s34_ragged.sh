#!/bin/sh
# The ragged half of make test-gpu (tools/gpu_check.sh's ragged_run), which session 34's run of
# it skipped for want of the length files in the carry: each program of examples/ragged at both
# batches over each length file, checked against the per-sequence reference.
export LD_LIBRARY_PATH=$PWD/.carry/lib
O=${OUT:-/tmp}
export MUGEN_CACHE_DIR=$(mktemp -d)
for f in .carry/lengths/*.txt; do
    for p in ffn encoder; do
        for b in 32 128; do
            printf 'ragged %-12s %-8s ' ${p}_b$b $(basename $f .txt)
            .carry/bin/mugen run --backend gpu --reps 20 --lengths len=$f examples/ragged/${p}_b$b.mu 2>&1 | grep -E "^ok|MISMATCH|FAIL|time|mugen:" | tr -s ' ' | tr '\n' ' '
            echo
        done
    done
done > $O/ragged.txt 2>&1
cat $O/ragged.txt
