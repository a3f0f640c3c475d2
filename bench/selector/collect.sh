#!/bin/sh
# The selector's dataset (issue #29 item 4, docs/tuning.md "The selector's dataset"): for each
# program of examples/dims named below (dim B [1, 512]), every variant of capacity >= B timed
# on the GPU at 64 values of B, each run checked against the reference at B (B's rows; the
# rest of the variant's rows poisoned and, with run-time grids, not computed).
#   device: make gpu-carry, then sh bench/selector/collect.sh .carry/bin with
#   carry [".carry/bin", ".carry/lib"]; the files come back under $OUT.
# B values: 1, 512 and the capacities (1, 2, 4, ..., 128, 256, 384, 512), then log-uniform draws
# in [1, 512] (Python's random, seeded with SEED) until 64 distinct, visited in a seeded order so
# that a run cut short by LIMIT_S (seconds; default 280) is still a random sample of them.
# Output: $OUT/selector-data.csv (program,B,capacity,schedule,time_us,device,blocks,waves; one
# row a run, blocks and waves those launched with run-time grids, as `mugen run` reports them;
# time_us "-" and the row left out where the check failed: see collect-log.txt), packed with the
# log into $OUT/selector-data.tar.gz.
B=${1:-build}
OUTD=${OUT:-bench/results/selector-$(date +%Y-%m-%d)}
SEED=${SEED:-29}
REPS=${REPS:-30}
LIMIT_S=${LIMIT_S:-280}
PROGRAMS=${PROGRAMS:-"rmsnorm_linear gated_mlp"}
DIMS=${DIMS:-examples/dims} # where PROGRAMS are
BACKEND=${BACKEND:-gpu}    # c: to try the script without a GPU
SCHEDULE=${SCHEDULE:-rules}
mkdir -p "$OUTD"
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
unset MUGEN_SELECTOR # every variant by --variant, none chosen
csv="$OUTD/selector-data.csv" log="$OUTD/collect-log.txt"
start=$(date +%s)
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "device: ${dev:-none}; seed $SEED, reps $REPS, limit ${LIMIT_S}s" >"$log"
echo "program,B,capacity,schedule,time_us,device,blocks,waves" >"$csv"
caps="1 2 4 8 16 32 64 128 256 384 512"
# the B values, each with a seeded sort key: the order they are visited in
bs=$(python3 -c '
import math, random, sys
r = random.Random(int(sys.argv[1])); caps = [int(c) for c in sys.argv[2].split()]
v = sorted(set(caps) | {1, 512})
while len(v) < 64:
    b = min(512, max(1, int(math.exp(r.uniform(0, math.log(513))))))
    if b not in v: v.append(b)
r.shuffle(v); print(" ".join(map(str, v)))' "$SEED" "$caps")
echo "B values: $(echo $bs)" >>"$log"
n_ok=0 n_bad=0 n_left=0
for w in $PROGRAMS; do
    P=$DIMS/$w.mu
    "$B/mugen" portfolio "$P" >>"$log" 2>&1 || echo "$w: portfolio failed" | tee -a "$log"
done
for b in $bs; do
    for w in $PROGRAMS; do
        P=$DIMS/$w.mu
        for c in $caps; do
            [ "$c" -lt "$b" ] && continue
            if [ $(( $(date +%s) - start )) -ge "$LIMIT_S" ]; then n_left=$((n_left + 1)); continue; fi
            sched=""
            [ "$SCHEDULE" != rules ] && sched="--schedule $SCHEDULE"
            out=$("$B/mugen" run --backend $BACKEND --reps "$REPS" --dim "B=$b" --variant "$c" $sched "$P" 2>&1)
            t=$(echo "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | tail -1)
            if echo "$out" | grep -q "^ok on" && [ -n "$t" ]; then
                bw=$(echo "$out" | sed -n 's/^ *\([0-9]*\) blocks in \([0-9]*\) waves.*/\1,\2/p' | tail -1)
                echo "$w,$b,$c,$SCHEDULE,$t,${dev:-$BACKEND},${bw:-,}" >>"$csv"
                n_ok=$((n_ok + 1))
            else
                printf '== %s B=%s C=%s FAILED:\n%s\n' "$w" "$b" "$c" "$out" >>"$log"
                n_bad=$((n_bad + 1))
            fi
            echo "$w B=$b C=$c: ${t:--} $(echo "$out" | grep -o '[0-9]* of [0-9]* launches cut')" >>"$log"
        done
    done
done
echo "selector data: $n_ok runs checked and timed, $n_bad failed, $n_left not run (past ${LIMIT_S}s), $(( $(date +%s) - start ))s" | tee -a "$log"
tar -czf "$OUTD/selector-data.tar.gz" -C "$OUTD" selector-data.csv collect-log.txt
