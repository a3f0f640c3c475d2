#!/bin/sh
# The selector's dataset (issue #29 item 4, docs/tuning.md "The selector's dataset"): for each
# program of examples/dims named below (dim B [1, 512]), every variant of capacity >= B timed
# on the GPU at NB values of B (default 72), each run checked against the reference at B (B's
# rows; the rest of the variant's rows poisoned and, with run-time grids, not computed). The
# variants of one B run in one process (`mugen run --variant all`: one set of inputs and one
# reference for all of them), which is what lets a 5-minute call hold a program's runs.
#   device: make gpu-carry, then sh bench/selector/collect.sh .carry/bin with
#   carry [".carry/bin", ".carry/lib"]; the files come back under $OUT.
# B values: 1, 512 and the capacities (1, 2, 4, ..., 128, 256, 384, 512), then log-uniform draws
# in [1, 512] (Python's random, seeded with SEED) until NB distinct, visited in a seeded order so
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
while len(v) < int(sys.argv[3]):
    b = min(512, max(1, int(math.exp(r.uniform(0, math.log(513))))))
    if b not in v: v.append(b)
r.shuffle(v); print(" ".join(map(str, v)))' "$SEED" "$caps" "${NB:-72}")
echo "B values: $(echo $bs)" >>"$log"
n_ok=0 n_bad=0 n_left=0
for w in $PROGRAMS; do
    P=$DIMS/$w.mu
    "$B/mugen" portfolio "$P" >>"$log" 2>&1 || echo "$w: portfolio failed" | tee -a "$log"
done
for b in $bs; do
    for w in $PROGRAMS; do
        P=$DIMS/$w.mu
        if [ $(( $(date +%s) - start )) -ge "$LIMIT_S" ]; then
            n_left=$((n_left + $(for c in $caps; do [ "$c" -ge "$b" ] && echo; done | wc -l))); continue
        fi
        sched=""
        [ "$SCHEDULE" != rules ] && sched="--schedule $SCHEDULE"
        # every variant that holds B in one process, on one set of inputs and one reference
        out=$("$B/mugen" run --backend $BACKEND --reps "$REPS" --dim "B=$b" --variant all $sched "$P" 2>&1)
        echo "$out" | sed -n 's/^  variant  \([0-9]*\): ok, time \([0-9.]*\) us, .* \([0-9]*\) blocks in \([0-9]*\) waves$/\1 \2 \3 \4/p' |
            while read -r c t bl wv; do echo "$w,$b,$c,$SCHEDULE,$t,${dev:-$BACKEND},$bl,$wv"; done >>"$csv"
        k=$(echo "$out" | grep -c "^  variant  [0-9]*: ok")
        f=$(echo "$out" | grep -c "^  variant  [0-9]*: FAILED")
        [ "$k" = 0 ] && [ "$f" = 0 ] && f=1 # it failed before any variant ran
        n_ok=$((n_ok + k)) n_bad=$((n_bad + f))
        [ "$f" = 0 ] || printf '== %s B=%s FAILED:\n%s\n' "$w" "$b" "$out" >>"$log"
        echo "$w B=$b: $(echo "$out" | grep "^  variant" | tr -s ' ' | tr '\n' ';')" >>"$log"
    done
done
echo "selector data: $n_ok runs checked and timed, $n_bad failed, $n_left not run (past ${LIMIT_S}s), $(( $(date +%s) - start ))s" | tee -a "$log"
tar -czf "$OUTD/selector-data.tar.gz" -C "$OUTD" selector-data.csv collect-log.txt
