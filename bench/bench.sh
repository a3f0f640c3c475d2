#!/bin/sh
# make bench (issue #6), on a GPU machine (through the device tool: `make gpu-carry` here, then
# `sh bench/bench.sh .carry/bin` there with carry [".carry"]). For each case of bench/cases.txt:
#   1. every μGraph the search kept (bench/searched/CASE/ugraph-N.mu, from
#      bench/search_cases.sh) and the hand-written one (examples/ugraphs/CASE.mu) run through
#      `mugen run --backend gpu`: fresh random inputs, outputs poisoned, checked against the f32
#      reference, timed (median of REPS CUDA-graph replays over rotating input sets);
#   2. the fastest correct search μGraph runs again on new random inputs (a second check),
#      and once with each optimizer pass switched off (the ablations; the cases in $ABLATE,
#      by default the six benchmarks at b = 1), and, every case, once launched plainly
#      (--no-pdl: no kernel a programmatic dependent of the one before it);
#   3. PyTorch eager and torch.compile on the same cases, in the same run (bench/torch_ref.py);
#   4. bench/table.py joins them with the floors: table.md, and a summary on stdout.
# Everything goes to ${OUT:-bench/results/bench-DATE}.
#   sh bench/bench.sh [BIN_DIR] [CASE...]
B=${1:-build}
[ $# -ge 1 ] && shift
want=" $* "
OUTD=${OUT:-bench/results/bench-$(date +%Y-%m-%d)}
REPS=${REPS:-200}
mkdir -p "$OUTD"
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
if ! "$B/mugen" run --backend gpu --reps 0 examples/ntrans_b1.mu >/dev/null 2>"$OUTD/gpu-check.txt"; then
    echo "make bench needs a GPU: $(tail -1 "$OUTD/gpu-check.txt")" >&2
    echo "(run it through the device tool: make gpu-carry, then sh bench/bench.sh .carry/bin; docs/benchmarks.md)" >&2
    exit 1
fi
runs="$OUTD/runs.tsv" log="$OUTD/bench-log.txt"
: >"$runs"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$log" 2>&1
seed=$(date +%s)
one() { # case kind file [flag]: one timed, checked run -> a line of runs.tsv
    seed=$((seed + 1))
    echo "== $1 $2 $3 $4 (seed $seed)" >>"$log"
    # shellcheck disable=SC2086
    out=$("$B/mugen" run --backend gpu --reps "$REPS" --seed "$seed" $4 "examples/$1.mu" "$3" 2>&1)
    rc=$?
    echo "$out" >>"$log"
    t=$(echo "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | tail -1)
    e=$(echo "$out" | sed -n 's/.*rel err \([0-9.e+-]*\).*/\1/p' | sort -g | tail -1)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$rc" "${t:--}" "${e:--}" "$seed" >>"$runs"
}
grep -v '^#' bench/cases.txt | while read -r case opts; do
    [ -n "$case" ] || continue
    [ "$want" = "  " ] || case "$want" in *" $case "*) ;; *) continue ;; esac
    for u in bench/searched/"$case"/ugraph-*.mu; do [ -f "$u" ] && one "$case" search "$u"; done
    one "$case" hand "examples/ugraphs/$case.mu"
    best=$(awk -F'\t' -v c="$case" '$1 == c && $2 == "search" && $4 == 0 && $5 != "-" {print $5 "\t" $3}' "$runs" | sort -g | head -1 | cut -f2)
    [ -n "$best" ] && one "$case" recheck "$best"
    # every case: the best μGraph with no kernel launched as a programmatic dependent
    [ -n "$best" ] && one "$case" ablation--no-pdl "$best" --no-pdl
    # the optimizer's passes, each switched off on the best μGraph (docs/codegen.md)
    case " ${ABLATE:-rmsnorm_linear_b1 gated_mlp lora ntrans_b1 gqa_b1 gqa_b8 qknorm_b1} " in *" $case "*) abl=1 ;; *) abl= ;; esac
    if [ -n "$best" ] && [ -n "$abl" ]; then
        for flag in --no-layout --no-depth --no-reuse --no-pipeline --no-regacc --no-blocksize --no-chain --wgmma --persist --cluster; do
            one "$case" "ablation$flag" "$best" "$flag"
        done
    fi
    echo "$case: $(awk -F'\t' -v c="$case" '$1 == c {printf "%s %s %s us (exit %s); ", $2, $3, $5, $4}' "$runs")"
done
cases=$(grep -v '^#' bench/cases.txt | awk 'NF {print $1}' | tr '\n' ',' | sed 's/,$//')
[ "$want" = "  " ] || cases=$(echo $want | tr ' ' ',')
PYTHONUNBUFFERED=1 python3 bench/torch_ref.py --cases "$cases" --reps "$REPS" --json "$OUTD/torch.json" >"$OUTD/torch.txt" 2>&1 ||
    echo "torch_ref.py failed: see $OUTD/torch.txt"
python3 bench/table.py "$runs" "$OUTD/torch.json" | tee "$OUTD/table.md"
