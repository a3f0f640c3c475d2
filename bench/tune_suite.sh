#!/bin/sh
# What tuning adds over the rules on the Mirage suite (issue #29; device: make gpu-carry, then
# sh bench/tune_suite.sh .carry/bin with carry [".carry/bin", ".carry/lib"]). For each case of
# bench/cases.txt, as make bench does: every search μGraph (bench/searched/CASE) and the
# hand-written one run untuned, the fastest correct is kept; `mugen tune` then runs its
# rules' point, SAMPLES random and GUIDED guided points (compiled ahead in JOBS processes,
# each checked) into a tuning cache; last, the kept μGraph at the rules' point (--untuned)
# and at the tuned point, ROUNDS rounds interleaved, REPS CUDA-graph replays each (medians).
#   sh bench/tune_suite.sh [BIN_DIR] [CASE...]     -> $OUT (default bench/results/tune-DATE)
B=${1:-build}
[ $# -ge 1 ] && shift
want=" $* "
OUTD=${OUT:-bench/results/tune-$(date +%Y-%m-%d)}
SAMPLES=${SAMPLES:-8} GUIDED=${GUIDED:-4} JOBS=${JOBS:-8} REPS=${REPS:-200} ROUNDS=${ROUNDS:-3}
mkdir -p "$OUTD/cases"
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
log="$OUTD/tune-log.txt" tab="$OUTD/tune-table.md"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$log" 2>&1
printf '| case | μGraph | rules (µs) | tuned (µs) | rules / tuned | tuned point |\n|---|---|---|---|---|---|\n' >"$tab"
t_of() { sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | tail -1; }
med() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : "-"}'; }
grep -v '^#' bench/cases.txt | while read -r case opts; do
    [ -n "$case" ] || continue
    [ "$want" = "  " ] || case "$want" in *" $case "*) ;; *) continue ;; esac
    P=examples/$case.mu best= bt=
    for u in bench/searched/"$case"/ugraph-*.mu examples/ugraphs/"$case".mu; do # compiled ahead, in parallel
        [ -f "$u" ] && "$B/mugen" run --backend gpu --reps 1 --untuned "$P" "$u" >/dev/null 2>&1 &
    done 2>/dev/null
    wait
    for u in bench/searched/"$case"/ugraph-*.mu examples/ugraphs/"$case".mu; do
        [ -f "$u" ] || continue
        out=$("$B/mugen" run --backend gpu --reps "$REPS" --untuned "$P" "$u" 2>&1)
        echo "== $case $u: $out" >>"$log"
        t=$(echo "$out" | t_of)
        echo "$out" | grep -q "^ok on" && [ -n "$t" ] || continue
        if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN {exit !(a < b)}'; then best=$u bt=$t; fi
    done
    [ -n "$best" ] || { echo "$case: no μGraph ran correctly" | tee -a "$log"; continue; }
    "$B/mugen" tune --backend gpu --samples "$SAMPLES" --guided "$GUIDED" --jobs "$JOBS" --reps "$REPS" \
        --dataset "$OUTD/cases/tune-$case.jsonl" "$P" "$best" >"$OUTD/cases/tune-$case.txt" 2>&1
    point=$(sed -n 's/^fastest: \([^:]*\):.*/\1/p' "$OUTD/cases/tune-$case.txt")
    ru= tu=
    for r in $(seq "$ROUNDS"); do
        ru="$ru $("$B/mugen" run --backend gpu --reps "$REPS" --untuned "$P" "$best" 2>&1 | t_of)"
        out=$("$B/mugen" run --backend gpu --reps "$REPS" "$P" "$best" 2>&1)
        echo "$out" | grep -q "^ok on" || echo "$case: the tuned run failed: $out" >>"$log"
        tu="$tu $(echo "$out" | t_of)"
    done
    echo "== $case A/B rules:$ru tuned:$tu" >>"$log"
    mr=$(echo "$ru" | med) mt=$(echo "$tu" | med)
    ratio=$(awk -v a="$mr" -v b="$mt" 'BEGIN {printf (b > 0 ? "%.3fx" : "-"), a / b}')
    printf '| %s | %s | %s | %s | %s | %s |\n' "$case" "${best#bench/searched/}" "$mr" "$mt" "$ratio" "${point:-(the rules')}" | tee -a "$tab"
done
# the per-case tunings and datasets in one file (the device tool returns few files)
tar czf "$OUTD/cases.tar.gz" -C "$OUTD" cases && rm -rf "$OUTD/cases"
