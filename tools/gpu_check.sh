#!/bin/sh
# make test-gpu, run on the GPU machine through the device tool (docs/codegen.md):
#   1. tests/gpu/rt_faults: planted compile error, too much shared memory, a faulting kernel,
#      then correct work after the fault, events and CUDA graphs;
#   1b. examples/c/run_program (the library API: mg_compile, mg_launch on buffers and a stream
#      it owns, in its own CUDA context) on lowered programs and μGraphs, against the reference;
#   2. every example program and every μGraph in examples/ugraphs/ through `mugen run
#      --backend gpu` on fresh random inputs (outputs poisoned before each run), timed;
#   3. with --torch, PyTorch eager and torch.compile on the six benchmarks (bench/torch_ref.py).
# Writes everything to ${OUT:-bench/results/gpu-run}; the last lines are a summary.
# Usage: sh tools/gpu_check.sh BUILD_DIR [--torch]
B=${1:-build}
TORCH=$2
OUTD=${OUT:-bench/results/gpu-run}
mkdir -p "$OUTD"
export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MUGEN_CACHE_DIR="${MUGEN_CACHE_DIR:-$(mktemp -d)}"
log="$OUTD/test-gpu.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$log" 2>&1
pass=0 failn=0
echo "== tests/gpu/rt_faults" | tee -a "$log"
if "$B/rt-faults" >>"$log" 2>&1; then pass=$((pass + 1)); else failn=$((failn + 1)); echo "rt_faults FAILED" | tee -a "$log"; fi
tail -1 "$log"
echo "== tests/gpu/run_random (random programs of many small kernels: separate, and one launch with each schedule)" | tee -a "$log"
if "$B/run-random" 24 >>"$log" 2>&1; then pass=$((pass + 1)); else failn=$((failn + 1)); echo "run_random FAILED" | tee -a "$log"; fi
tail -1 "$log"
echo "== tests/gpu/run_faults (planted compile error, too much shared memory, fault; a persistent launch's stall and fault)" | tee -a "$log"
if "$B/run-faults" examples/lora.mu examples/ugraphs/lora.mu examples/gqa_b1.mu >>"$log" 2>&1; then pass=$((pass + 1)); else failn=$((failn + 1)); echo "run_faults FAILED" | tee -a "$log"; fi
tail -1 "$log"
# every example program (the decode steps aside: bench/megakernel/forms.sh times them) as one
# persistent launch, with the static schedule and with the scheduler and queues: outputs
# checked against the reference (issue #27 item 4)
for f in examples/*.mu; do
    case $f in *decode_1b_*) continue ;; esac
    for flag in --megakernel --queues; do
        echo "== mugen run --backend gpu --reps 20 $flag $f" >>"$log"
        if "$B/mugen" run --backend gpu --reps 20 $flag "$f" >>"$log" 2>&1; then pass=$((pass + 1)); r=ok
        else failn=$((failn + 1)); r=FAIL; fi
        printf '%-32s %-12s %-4s\n' "$f" "$flag" "$r" | tee -a "$OUTD/summary.txt"
    done
done
# ragged programs on the GPU over the real length files (carried by make gpu-carry into
# .carry/lengths), checked against the reference (docs/ragged.md): the token-wise half and the
# whole encoder layer (attention as seqattn); ragged_run FILE PROGRAM [VAR=VALUE]
ragged_run() {
    echo "== $3 mugen run --backend gpu --lengths len=$1 examples/ragged/$2.mu" >>"$log"
    if env $3 "$B/mugen" run --backend gpu --reps 20 --lengths len=.carry/lengths/$1.txt "examples/ragged/$2.mu" >>"$log" 2>&1; then
        pass=$((pass + 1)); r=ok
    else failn=$((failn + 1)); r=FAIL; fi
    t=$(tail -1 "$log" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p')
    printf 'ragged %-12s %-6s %-22s %-4s %10s us\n' "$2" "$1" "$3" "$r" "$t" | tee -a "$OUTD/summary.txt"
}
for f in cola mnli race squad; do
    [ -f .carry/lengths/$f.txt ] || continue
    for p in ffn encoder; do
        for b in 32 128; do ragged_run $f ${p}_b$b; done
    done
done
# the default forms turned off: Q, K and V as three kernels (MUGEN_FUSE_SIBLINGS=0) and seqattn
# blocks of 64 query rows (MUGEN_SEQATTN_LONG=0), on the encoder at both ends of the sizes
for c in "cola 32" "race 128"; do
    set -- $c
    [ -f .carry/lengths/$1.txt ] || continue
    for v in MUGEN_FUSE_SIBLINGS=0 MUGEN_SEQATTN_LONG=0; do ragged_run $1 encoder_b$2 $v; done
done
# seqattn whose K has another reader (stored f16), lengths with 0 and the maximum
printf '17\n0\n40\n5\n' >"$OUTD/ra.txt"
echo "== mugen run --backend gpu tests/codegen/ragged_attention.mu" >>"$log"
if "$B/mugen" run --backend gpu --reps 5 --lengths len="$OUTD/ra.txt" tests/codegen/ragged_attention.mu >>"$log" 2>&1; then
    pass=$((pass + 1)); r=ok
else failn=$((failn + 1)); r=FAIL; fi
printf 'ragged attention, K read twice %s\n' "$r" | tee -a "$OUTD/summary.txt"
# seqattn at head dims 128 (one strip a warp, one K/V stage), 48 (bf16, odd k-steps) and 32
# (bf16, an f32 result)
printf '150\n0\n1\n97\n' >"$OUTD/l4.txt"
printf '130\n64\n65\n3\n0\n' >"$OUTD/l5.txt"
printf '200\n1\n0\n129\n64\n' >"$OUTD/l6.txt"
# (sm_90a: head dims 64 and 128 on warpgroups, mg_seqattn_wg; WG=0 the warps' mg_seqattn)
for c in "d128 l4 0 1" "d48 l5 0 1" "d128 l4 1 1" "d48 l5 1 1" "ra ra 1 1" "d128 l4 1 0" "ra ra 0 0" "d32 l6 0 1" "d32 l6 1 1"; do
    set -- $c # MUGEN_SEQATTN_LONG=1: 128 query rows a block
    f=tests/codegen/seqattn_$1.mu
    [ "$1" = ra ] && f=tests/codegen/ragged_attention.mu
    echo "== MUGEN_SEQATTN_LONG=$3 MUGEN_SEQATTN_WG=$4 mugen run --backend gpu $f" >>"$log"
    if MUGEN_SEQATTN_LONG=$3 MUGEN_SEQATTN_WG=$4 "$B/mugen" run --backend gpu --reps 5 \
        --lengths len="$OUTD/$2.txt" $f >>"$log" 2>&1; then
        pass=$((pass + 1)); r=ok
    else failn=$((failn + 1)); r=FAIL; fi
    printf 'seqattn %-4s rows %-3s wg %s %s\n' "$1" "$([ "$3" = 1 ] && echo 128 || echo 64)" "$4" "$r" |
        tee -a "$OUTD/summary.txt"
done
# a point of the schedule space (--schedule, docs/tuning.md): bias_relu's TMA loop at 3 stages,
# two blocks an SM, and LoRA with depth scheduling and layouts off, each checked
for c in "bench/suite/bias_relu.mu k0.stages=3,k0.pair=2" "examples/lora.mu depth=0,layout=0"; do
    set -- $c
    echo "== mugen run --backend gpu --schedule $2 $1" >>"$log"
    if "$B/mugen" run --backend gpu --reps 5 --schedule "$2" $1 >>"$log" 2>&1; then pass=$((pass + 1)); r=ok
    else failn=$((failn + 1)); r=FAIL; fi
    printf 'schedule %s %s %s\n' "$1" "$2" "$r" | tee -a "$OUTD/summary.txt"
done
# the tuner on the GPU (docs/tuning.md): bias_relu's rules' point, its other lowering's, 3 random ones and 2 the cost
# model picks, compiled ahead in 3 processes, timed and checked, the fastest kept in a fresh
# tuning cache; the next run plans at it and says so
echo "== mugen tune --samples 3 --guided 2 --jobs 3 bench/suite/bias_relu.mu, then mugen run" >>"$log"
if MUGEN_CACHE_DIR="$OUTD/tunecache" "$B/mugen" tune --backend gpu --samples 3 --guided 2 --jobs 3 --reps 20 \
    bench/suite/bias_relu.mu >>"$log" 2>&1 &&
    MUGEN_CACHE_DIR="$OUTD/tunecache" "$B/mugen" run --backend gpu --reps 20 bench/suite/bias_relu.mu >"$OUTD/tuned.txt" 2>&1 &&
    grep -q "schedule the tuning cache's point" "$OUTD/tuned.txt"; then pass=$((pass + 1)); r=ok
else failn=$((failn + 1)); r=FAIL; fi
cat "$OUTD/tuned.txt" >>"$log" 2>/dev/null
rm -rf "$OUTD/tunecache"
printf 'tune bench/suite/bias_relu.mu, then run at the tuned point %s\n' "$r" | tee -a "$OUTD/summary.txt"
# symbolic dims (docs/tuning.md): the portfolio of examples/dims/rmsnorm_linear.mu compiled
# ahead into a fresh cache; calls of 1, 37 and 300 rows each run their capacity's variant,
# checked, with its code from the cache
DC="$OUTD/dimcache"
echo "== mugen portfolio examples/dims/rmsnorm_linear.mu, then runs at B = 1, 37, 300" >>"$log"
MUGEN_CACHE_DIR="$DC" "$B/mugen" portfolio examples/dims/rmsnorm_linear.mu >>"$log" 2>&1
# dim_run LABEL PATTERN ARGS...: `mugen run --backend gpu --reps 20 ARGS` (with
# MUGEN_CACHE_DIR=$CD when CD is set), counted ok when it exits 0 and its report holds PATTERN
# (grep); its output goes to the log, LABEL to the summary
dim_run() {
    label=$1 pat=$2
    shift 2
    if env ${CD:+MUGEN_CACHE_DIR="$CD"} "$B/mugen" run --backend gpu --reps 20 "$@" >"$OUTD/dim.txt" 2>&1 && grep -q "$pat" "$OUTD/dim.txt"; then
        pass=$((pass + 1)); r=ok
    else failn=$((failn + 1)); r=FAIL; fi
    cat "$OUTD/dim.txt" >>"$log"
    printf '%s %s\n' "$label" "$r" | tee -a "$OUTD/summary.txt"
}
# below a capacity, run-time grids cut some launches to B's rows (docs/tuning.md), at it none
CD=$DC # these find their code in the portfolio's cache
for v in 1@1@0 "37@64@[1-9][0-9]*" "300@384@[1-9][0-9]*"; do
    c=${v#*@}
    dim_run "dim B=${v%%@*} of examples/dims/rmsnorm_linear.mu (the variant for ${c%@*} rows, compiled ahead)" \
        "B = ${v%%@*} ran as the variant for ${c%@*} rows, its code from the compile cache, ${v##*@} of [0-9]* launches cut" \
        --dim "B=${v%%@*}" examples/dims/rmsnorm_linear.mu
done
rm -rf "$DC"
CD=
# reduced dims (a KV length, docs/tuning.md "Reduced dims"): each tests/codegen/kv program at
# L = 129 and its range's maximum, checked against the program at L with NaN past L in its
# inputs; then GQA decode at L = 1000 (the variant for 1024, masked past 1000)
for f in tests/codegen/kv/*.mu examples/dims/gqa_decode.mu; do
    hi=$(sed -n 's/^dim L \[128, \([0-9]*\)\]/\1/p' "$f")
    case $f in examples/*) lens=1000 ;; *) lens="129 $hi" ;; esac
    for L in $lens; do
        dim_run "dim L=$L of $f (masked past L)" "L = $L ran as the variant for .*a reduced dim: entries past $L masked" --dim "L=$L" "$f"
    done
done
rm -f "$OUTD/dim.txt"
# the Python package on CUDA tensors (tests/python/gpu_check.py): mugen.compile against
# PyTorch, the host cost a call, a CUDA graph around it, torch.compile(backend="mugen")
LIBSO=$(dirname "$B")/lib/libmugen.so
[ -f "$LIBSO" ] || LIBSO=$B/libmugen.so
if python3 -c "import torch" >/dev/null 2>&1 && [ -f "$LIBSO" ]; then
    echo "== python3 tests/python/gpu_check.py" >>"$log"
    MUGEN_LIB=$LIBSO MUGEN_CACHE_DIR="$OUTD/pycache" python3 tests/python/gpu_check.py >"$OUTD/python.txt" 2>&1
    cat "$OUTD/python.txt" >>"$log"
    pp=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$OUTD/python.txt")
    pf=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$OUTD/python.txt")
    pass=$((pass + ${pp:-0})) failn=$((failn + ${pf:-1}))
    grep -E '^(ok|FAIL) |^     ' "$OUTD/python.txt" | tee -a "$OUTD/summary.txt"
    rm -rf "$OUTD/pycache"
else
    echo "python: no torch or no libmugen.so ($LIBSO): the package's GPU checks skipped" | tee -a "$OUTD/summary.txt"
fi
# the library API through its example program: each run compiles (a second run of the same
# program must hit the compile cache), launches 100 times on a stream, compares with the reference
for args in "examples/lora.mu" "examples/lora.mu examples/ugraphs/lora.mu" \
    "examples/rmsnorm_linear_b8.mu examples/ugraphs/rmsnorm_linear_b8.mu" "examples/gqa_b1.mu" \
    "examples/gqa_b1.mu examples/ugraphs/gqa_b1.mu" "examples/softmax_attention.mu" "bench/suite/bias_relu.mu" \
    "bench/suite/mlp_relu.mu" "examples/lora.mu" "--megakernel examples/gqa_b1.mu" \
    "--megakernel tests/programs/good/decode_small.mu"; do
    echo "== run-program --reps 100 $args" >>"$log"
    if [ ! -x "$B/run-program" ]; then
        echo "run-program missing: make $B/run-program" >>"$log"; r=FAIL
    elif "$B/run-program" --reps 100 $args >>"$log" 2>&1; then r=ok
    else r=FAIL; fi
    if [ "$r" = ok ]; then pass=$((pass + 1)); else failn=$((failn + 1)); fi
    t=$(tail -1 "$log" | sed -n 's/.*time per launch *\([0-9.]*\) us.*/\1/p')
    printf 'run-program %-60s %-4s %10s us\n' "$args" "$r" "$t" | tee -a "$OUTD/summary.txt"
done
# the library's watchdog check: a persistent launch with a task that never finishes (planted)
# must come back from mg_compiled_check as a stall naming the task, not as a pass
echo "== run-program --megakernel with a planted stall" >>"$log"
if MUGEN_PLANT=stall MUGEN_WATCHDOG_MS=200 "$B/run-program" --reps 3 --megakernel examples/gqa_b1.mu >"$OUTD/stall.txt" 2>&1; then
    failn=$((failn + 1)); echo "run-program: a planted stall passed" | tee -a "$log"
elif grep -q 'persistent launch stalled: task' "$OUTD/stall.txt"; then pass=$((pass + 1)); echo "run-program planted stall: ok ($(grep -o 'stalled: task [0-9]*' "$OUTD/stall.txt"))" | tee -a "$OUTD/summary.txt"
else failn=$((failn + 1)); echo "run-program planted stall: wrong error: $(tail -1 "$OUTD/stall.txt")" | tee -a "$log"; fi
grep -q 'from the compile cache' "$log" || { failn=$((failn + 1)); echo "run-program: the second compile of lora did not hit the cache" | tee -a "$log"; }
seed=$(date +%s)
for f in examples/*.mu examples/ugraphs/*.mu; do
    # the decode steps (2 GB of weights, 145 inputs, 33 outputs) pass mg_run's limits on
    # outputs and buffers, and their reference takes minutes on the host: not run here
    case $f in examples/decode_1b_*) continue ;; esac
    prog=examples/$(basename "$f")
    seed=$((seed + 1))
    if [ "$f" = "$prog" ]; then set -- "$prog"; else set -- "$prog" "$f"; fi
    echo "== mugen run --backend gpu --seed $seed $*" >>"$log"
    if "$B/mugen" run --backend gpu --reps 100 --seed "$seed" "$@" >>"$log" 2>&1; then
        pass=$((pass + 1)); r=ok
    else
        failn=$((failn + 1)); r=FAIL
    fi
    t=$(tail -1 "$log" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p')
    e=$(grep -o 'rel err [0-9.e+-]*' "$log" | tail -1)
    printf '%-32s %-4s %10s us  %s\n' "$f" "$r" "$t" "$e" | tee -a "$OUTD/summary.txt"
done
# the plain lowering's forms (docs/lower.md), lowered and run on the GPU
for f in tests/lower/*.mu tests/programs/good/decode_small.mu; do
    seed=$((seed + 1))
    echo "== mugen run --backend gpu --seed $seed $f" >>"$log"
    if "$B/mugen" run --backend gpu --reps 0 --seed "$seed" "$f" >>"$log" 2>&1; then pass=$((pass + 1)); r=ok
    else failn=$((failn + 1)); r=FAIL; fi
    printf '%-32s %-4s\n' "$f" "$r" | tee -a "$OUTD/summary.txt"
done
# special values (NaN, +-inf, signed zeros) through every operator and the block-level paths of
# the examples' μGraphs: outputs must match the reference's exactly where it is not finite
for f in tests/codegen/specials.mu examples/ugraphs/rmsnorm_linear_b1.mu examples/ugraphs/gqa_b1.mu \
    examples/ugraphs/ntrans_b1.mu examples/ugraphs/lora.mu examples/ugraphs/gated_mlp.mu; do
    prog=examples/$(basename "$f")
    if [ "$f" = tests/codegen/specials.mu ]; then set -- "$f"; else set -- "$prog" "$f"; fi
    echo "== mugen run --backend gpu --specials $*" >>"$log"
    if "$B/mugen" run --backend gpu --reps 0 --specials "$@" >>"$log" 2>&1; then pass=$((pass + 1)); r=ok
    else failn=$((failn + 1)); r=FAIL; fi
    printf '%-32s --specials %-4s\n' "$f" "$r" | tee -a "$OUTD/summary.txt"
done
# the opt-in launch forms on the attention μGraphs they apply to: correct (timings in the log)
for f in tests/ugraphs/good/gqa_b1_q4.mu bench/searched/gqa_b8/ugraph-1.mu bench/searched/qknorm_b8/ugraph-1.mu; do
    prog=$(sed -n 's/^# program: //p' "$f")
    [ -n "$prog" ] || prog=examples/$(basename "$(dirname "$f")").mu
    for flag in --cluster --persist; do
        seed=$((seed + 1))
        echo "== mugen run --backend gpu --seed $seed $flag $prog $f" >>"$log"
        if "$B/mugen" run --backend gpu --reps 100 --seed "$seed" $flag "$prog" "$f" >>"$log" 2>&1; then
            pass=$((pass + 1)); r=ok
        else
            failn=$((failn + 1)); r=FAIL
        fi
        t=$(tail -1 "$log" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p')
        printf '%-32s %-10s %-4s %10s us\n' "$(basename "$(dirname "$f")")/$(basename "$f")" "$flag" "$r" "$t" | tee -a "$OUTD/summary.txt"
    done
done
# ablations: each optimizer pass off (docs/codegen.md)
for u in rmsnorm_linear_b1 rmsnorm_linear_b8 gated_mlp lora ntrans_b1 gqa_b1 gqa_b8; do
    for flag in "" --no-reuse --no-depth --no-layout --no-pipeline --no-regacc --no-blocksize --no-chain --wgmma --persist; do
        echo "== ablation $u $flag" >>"$log"
        "$B/mugen" run --backend gpu --reps 100 $flag "examples/$u.mu" "examples/ugraphs/$u.mu" >>"$log" 2>&1
        t=$(tail -1 "$log" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p')
        printf 'ablation %-20s %-12s %10s us\n' "$u" "${flag:-(all on)}" "${t:-refused}" | tee -a "$OUTD/summary.txt"
    done
done
if [ "$TORCH" = "--torch" ]; then
    PYTHONUNBUFFERED=1 python3 bench/torch_ref.py --json "$OUTD/torch.json" >"$OUTD/torch.txt" 2>&1
    tail -14 "$OUTD/torch.txt"
fi
echo "$pass passed, $failn failed" | tee -a "$log"
[ "$failn" -eq 0 ]
