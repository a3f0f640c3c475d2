#!/bin/sh
# The selector's dataset (issue #29 item 4, docs/tuning.md "The selector's dataset"): for each
# program of examples/dims named below (one symbolic dim, as dim B [1, 512] or dim L [128,
# 32768]), every variant that holds the dim's value timed on the GPU at NB values of it (default
# 72), each run checked against the reference at that value (the rest of the variant's rows or
# entries poisoned or not computed). The variants of one value run in one process (`mugen run
# --variant all`: one set of inputs and one reference for all of them), which is what lets a
# 5-minute call hold a program's runs.
#   device: make gpu-carry, then sh bench/selector/collect.sh .carry/bin with
#   carry [".carry/bin", ".carry/lib"]; the files come back under $OUT.
# Values: per program (its dim, range and capacities read from `mugen portfolio`'s lines), the
# range's ends and the capacities, then log-uniform draws in the range (Python's random, seeded
# with SEED) until NB distinct; all programs' values visited in one seeded order so that a run
# cut short by LIMIT_S (seconds; default 280) is still a random sample of them. Column B is the
# dim's value, whatever its name. DONE=CSV skips the values that CSV (an earlier call's, with
# the same SEED and NB) holds, so a second call finishes what the first left.
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
PTARGET=""
[ "$BACKEND" = c ] && PTARGET="--target c"
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
n_ok=0 n_bad=0 n_left=0
# each program's portfolio compiled ahead; its output names the dim, the capacities and the range
for w in $PROGRAMS; do
    "$B/mugen" portfolio $PTARGET "$DIMS/$w.mu" >"$OUTD/portfolio-$w.txt" 2>&1 || echo "$w: portfolio failed" | tee -a "$log"
    cat "$OUTD/portfolio-$w.txt" >>"$log"
done
# the (program, B) pairs: per program its range's ends and capacities, then log-uniform draws in
# its range until NB distinct; all pairs in one seeded order (a cut-short run is a random sample)
pairs=$(python3 - "$SEED" "${NB:-72}" "$OUTD" $PROGRAMS <<'PY'
import math, random, re, sys
r = random.Random(int(sys.argv[1])); nb = int(sys.argv[2]); out = []
for w in sys.argv[4:]:
    txt = open("%s/portfolio-%s.txt" % (sys.argv[3], w)).read()
    m = re.findall(r"^(\w+) in \[(\d+), (\d+)\]: the variant for (\d+) rows", txt, re.M)
    if not m:
        continue
    name, lo, hi = m[0][0], int(m[0][1]), max(int(x[2]) for x in m)
    caps = sorted({int(x[3]) for x in m})
    v = sorted(set(c for c in caps if lo <= c <= hi) | {lo, hi})
    while len(v) < min(nb, hi - lo + 1):
        b = min(hi, max(lo, int(math.exp(r.uniform(math.log(lo), math.log(hi + 1))))))
        if b not in v:
            v.append(b)
    out += ["%s:%s:%d:%s" % (w, name, b, ",".join(map(str, caps))) for b in v]
r.shuffle(out)
print(" ".join(out))
PY
)
echo "pairs (program:dim:value:capacities): $pairs" >>"$log"
for pr in $pairs; do
    w=${pr%%:*} rest=${pr#*:}
    name=${rest%%:*} rest=${rest#*:}
    b=${rest%%:*} caps=$(echo "${rest#*:}" | tr ',' ' ')
    P=$DIMS/$w.mu
    # DONE=CSV: a value an earlier collection (that CSV) holds for this program is not run again
    [ -n "$DONE" ] && grep -q "^$w,$b," "$DONE" && continue
    if [ $(( $(date +%s) - start )) -ge "$LIMIT_S" ]; then
        n_left=$((n_left + $(for c in $caps; do [ "$c" -ge "$b" ] && echo; done | wc -l))); continue
    fi
    sched=""
    [ "$SCHEDULE" != rules ] && sched="--schedule $SCHEDULE"
    # every variant that holds B in one process, on one set of inputs and one reference
    out=$("$B/mugen" run --backend $BACKEND --reps "$REPS" --dim "$name=$b" --variant all $sched "$P" 2>&1)
    echo "$out" | sed -n 's/^  variant  \([0-9]*\): ok, time \([0-9.]*\) us, .* \([0-9]*\) blocks in \([0-9]*\) waves$/\1 \2 \3 \4/p' |
        while read -r c t bl wv; do echo "$w,$b,$c,$SCHEDULE,$t,${dev:-$BACKEND},$bl,$wv"; done >>"$csv"
    k=$(echo "$out" | grep -c "^  variant  [0-9]*: ok")
    f=$(echo "$out" | grep -c "^  variant  [0-9]*: FAILED")
    [ "$k" = 0 ] && [ "$f" = 0 ] && f=1 # it failed before any variant ran
    n_ok=$((n_ok + k)) n_bad=$((n_bad + f))
    [ "$f" = 0 ] || printf '== %s %s=%s FAILED:\n%s\n' "$w" "$name" "$b" "$out" >>"$log"
    echo "$w $name=$b: $(echo "$out" | grep "^  variant" | tr -s ' ' | tr '\n' ';')" >>"$log"
done
echo "selector data: $n_ok runs checked and timed, $n_bad failed, $n_left not run (past ${LIMIT_S}s), $(( $(date +%s) - start ))s" | tee -a "$log"
tar -czf "$OUTD/selector-data.tar.gz" -C "$OUTD" selector-data.csv collect-log.txt
