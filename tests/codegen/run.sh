#!/bin/sh
# Code generation on a machine without a GPU (issue #4, docs/codegen.md):
#   - every example program, every μGraph in examples/ugraphs/, the small test μGraphs and the
#     valid edge-case programs: the generated CUDA compiles with NVRTC for sm_90a, and the
#     generated C compiles, runs on fresh random inputs (outputs poisoned first) and matches
#     the float reference within per-dtype tolerance;
#   - each optimizer pass switched off still gives correct code;
#   - near-miss μGraphs (wrong on purpose) run and are caught as mismatches (exit 3);
#   - the C target's tiled matmuls on ragged, broadcast, mixed-dtype shapes (matmul_tiles.mu);
#   - each piece of device code (src/codegen/cuda/lib/*.cuh) compiles with nvcc after the
#     pieces it needs, and the C target's lib.h with cc;
#   - planted failures (compile error, fault) come back as errors, and the process goes on;
#   - random programs of many small kernels run on C, and compile as one persistent launch;
#   - the library API's example (build/run-program --c) runs and matches the reference;
#   - --backend gpu (and run-program) without a GPU is a clear error.
# The compile-and-run list runs on two workers (NVRTC is single-threaded: 343 -> 271 s here).
# Usage: sh tests/codegen/run.sh BUILD_DIR. Ends with "N passed, N failed".
B=${1:-build}
M=$B/mugen
T=$(mktemp -d)
export MUGEN_CACHE_DIR=$T/cache # compile for real: no cubins or .so from earlier runs
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
seed=$(date +%s)

cuda_compiles() { # file
    if "$M" emit --compile "$1" >"$W/out.cu" 2>"$W/err"; then ok; else bad "$1: NVRTC: $(head -c 600 "$W/err")"; fi
}
c_runs() { # program [ugraph] [flags...]
    seed=$((seed + 1))
    if "$M" run --backend c --reps 0 --seed "$seed" "$@" >"$W/out" 2>"$W/err"; then ok
    else bad "mugen run --backend c --seed $seed $*: $(cat "$W/out" "$W/err" | head -c 800)"; fi
}
W=$T

# The compile-and-run list (program, μGraph or none), shared out over two workers (NVRTC is
# single-threaded; each worker has its own files and compile cache); their counts and
# failures are added up after.
list=$T/list
for f in examples/*.mu; do echo "$f -"; done >"$list"
for u in examples/ugraphs/*.mu; do echo "examples/$(basename "$u") $u"; done >>"$list"
# the searched μGraphs make bench times on the GPU (bench/searched/CASE/)
for u in bench/searched/*/ugraph-*.mu; do echo "examples/$(basename "$(dirname "$u")").mu $u"; done >>"$list"
for u in tests/ugraphs/good/*.mu; do echo "$(sed -n 's/^# program: //p' "$u") $u"; done >>"$list"
# (decode_small.mu: run by tests/programs/run.sh, lowered on a fixed seed: bf16 operands)
for f in tests/programs/good/*.mu; do case $f in */decode_small.mu) echo "$f nvrtc" ;; *) echo "$f -" ;; esac; done >>"$list"
# the plain lowering's forms (docs/lower.md): lowered, compiled and run like the examples
for f in tests/lower/*.mu; do echo "$f -"; done >>"$list"
# the lowering suite (bench/suite.py times it on the GPU): NVRTC only, too slow for the C target
for f in bench/suite/*.mu; do echo "$f nvrtc"; done >>"$list"
# the TMA loops' forms (opt/tma.c: 32- and 64-column tiles, bf16, swapped products): NVRTC only
for f in bench/micro/tma/*.mu; do echo "$f nvrtc"; done >>"$list"
worker() { # k: lines k, k + 2, ...
    W=$T/w$1 pass=0 fail=0 seed=$((seed + 100000 * $1))
    mkdir -p "$W"
    export MUGEN_CACHE_DIR=$W/cache
    awk -v k="$1" 'NR % 2 == k' "$list" | while read -r prog u; do
        if [ "$u" = nvrtc ]; then
            cuda_compiles "$prog"
        elif [ "$u" = - ]; then
            cuda_compiles "$prog"
            case $prog in
            */decode_1b_*) ;; # 2 GB of weights: NVRTC only (good/decode_small.mu runs in C)
            */limits.mu) # terabyte tensors: refused by name, not attempted
                if "$M" run --backend c --reps 0 "$prog" >/dev/null 2>"$W/err"; then bad "$prog ran"
                elif grep -q "over the limit" "$W/err"; then ok; else bad "$prog: $(cat "$W/err")"; fi ;;
            *) c_runs "$prog" ;;
            esac
        else
            cuda_compiles "$u"
            c_runs "$prog" "$u"
        fi
        echo "$pass $fail" >"$W/count"
    done
}
worker 0 >"$T/fails0" &
worker 1 >"$T/fails1" &
wait
for k in 0 1; do
    cat "$T/fails$k"
    read -r p f <"$T/w$k/count" || { p=0 f=1; echo "FAIL worker $k reported nothing"; }
    pass=$((pass + p)) fail=$((fail + f))
done
# ablations: each optimizer pass off, on the μGraphs with the most structure
for flag in --no-reuse --no-depth --no-layout --no-pipeline --no-regacc --no-blocksize --no-chain; do
    for u in rmsnorm_linear_b1 lora ntrans_b1; do
        "$M" emit --compile $flag "examples/ugraphs/$u.mu" >/dev/null 2>"$T/err" && ok || bad "$u $flag: NVRTC: $(head -c 400 "$T/err")"
        c_runs "examples/$u.mu" "examples/ugraphs/$u.mu" $flag
    done
done
# wgmma (opt-in): the attention chains' warpgroup code compiles for sm_90a
for u in examples/ugraphs/gqa_b1.mu examples/ugraphs/gqa_b8.mu bench/searched/gqa_b1/ugraph-1.mu bench/searched/gqa_b8/ugraph-1.mu; do
    if "$M" emit --compile --wgmma "$u" >"$T/out" 2>"$T/err" && grep -q "mg_chain_wg<" "$T/out"; then ok
    else bad "$u --wgmma: $(head -c 400 "$T/err")"; fi
done
# persistent launch (opt-in): every two-kernel attention μGraph the search kept compiles as
# one launch of tasks
for u in examples/ugraphs/gqa_b1.mu examples/ugraphs/qknorm_b8.mu bench/searched/gqa_b1/ugraph-*.mu bench/searched/qknorm_b1/ugraph-*.mu; do
    if "$M" emit --compile --persist "$u" >"$T/out" 2>"$T/err" && grep -q "mg_task_wait(g_sync_, " "$T/out"; then ok
    else bad "$u --persist: $(head -c 400 "$T/err")"; fi
    if "$M" emit --compile --megakernel "$u" >"$T/out" 2>"$T/err" && grep -q "for (int t_ = blockIdx.x;; t_ += gridDim.x)" "$T/out"; then ok
    else bad "$u --megakernel: $(head -c 400 "$T/err")"; fi
    if "$M" emit --compile --queues "$u" >"$T/out" 2>"$T/err" && grep -q "    mg_schedule(g_sync_, " "$T/out" &&
        grep -q "_succ_at\[" "$T/out"; then ok
    else bad "$u --queues: $(head -c 400 "$T/err")"; fi
done
# the megakernel of a whole program: the small decode step (views, the caches' concat as
# element-loop tasks, whole-launch waits as counts, the buffers as one struct) compiles as
# one launch
if "$M" emit --compile --megakernel tests/programs/good/decode_small.mu >"$T/out" 2>"$T/err" &&
    [ "$(grep -c '__global__' "$T/out")" -eq 1 ] && grep -q "_lsize\[" "$T/out" && grep -q "kernel-level operator, " "$T/out"; then ok
else bad "decode_small --megakernel: $(head -c 400 "$T/err")"; fi
# ... and with a scheduler block and the workers' queues (--queues): the successor tables,
# one kernel, the scheduler and the pop
if "$M" emit --compile --queues tests/programs/good/decode_small.mu >"$T/out" 2>"$T/err" &&
    [ "$(grep -c '__global__' "$T/out")" -eq 1 ] && grep -q "_lsucc\[" "$T/out" && grep -q "mg_queue_pop(g_sync_, " "$T/out"; then ok
else bad "decode_small --queues: $(head -c 400 "$T/err")"; fi
# L2 prefetch before the wait (opt-in): the decode steps and the searched μGraphs compile
# with every kernel but the first prefetching its weights and letting the next launch
for u in examples/decode_1b_b1.mu bench/general/mlp_swiglu_down_b1.mu bench/general/lora_qkv_b4.mu; do
    if "$M" emit --compile --prefetch "$u" >"$T/out" 2>"$T/err" && grep -q "mg_prefetch_l2(g_" "$T/out" && grep -q "    mg_grid_go();" "$T/out"; then ok
    else bad "$u --prefetch: $(head -c 400 "$T/err")"; fi
done
# cluster fusion (opt-in): the designs whose combine fits the splits' clusters compile as one
# kernel with a cluster barrier (16 splits: clusters of 16)
for u in tests/ugraphs/good/gqa_b1_q4.mu bench/searched/gqa_b8/ugraph-1.mu bench/searched/qknorm_b8/ugraph-1.mu; do
    if "$M" emit --compile --cluster "$u" >"$T/out" 2>"$T/err" && grep -q "    mg_cluster_sync();" "$T/out"; then ok
    else bad "$u --cluster: $(head -c 400 "$T/err")"; fi
done
# the device code by itself (src/codegen/cuda/lib/, src/codegen/c/lib.h): each CUDA piece
# compiles for sm_90a with nvcc, after only the pieces it needs (the order of emit.c's
# cuda_lib; warnings are errors, unused functions aside), and the C target's lib.h with the C
# runtime's flags. NVRTC, which compiles programs at run time, compiles every generated
# program above (cuda_compiles).
NVCC=${NVCC:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}
L=src/codegen/cuda/lib
if [ -x "$NVCC" ]; then
    for set in scalar "scalar mma" "scalar copy" "scalar mma chain" "scalar mma chain wgmma" "scalar task" "scalar task queue" "scalar mma chain wgmma tma" "scalar mma copy chain wgmma seqattn"; do
        { cat src/ir/scalar.h; for p in $set; do cat "$L/$p.cuh"; done; } >"$T/piece.cu"
        if "$NVCC" -c -arch=sm_90a -x cu -diag-suppress 177 -Werror all-warnings "$T/piece.cu" -o "$T/piece.o" >"$T/err" 2>&1; then ok
        else bad "$L/${set##* }.cuh after $set: nvcc: $(head -c 600 "$T/err")"; fi
    done
else echo "note: no nvcc ($NVCC): the CUDA pieces are checked only inside generated programs (NVRTC)"; fi
if cc -std=c11 -fopenmp -Wall -Wextra -Werror -fsyntax-only -include src/ir/scalar.h -x c src/codegen/c/lib.h 2>"$T/err"; then ok
else bad "src/codegen/c/lib.h: cc: $(head -c 600 "$T/err")"; fi
# without reuse, GQA's first kernel needs more shared memory and keeps fewer pipeline stages
with=$("$M" emit examples/ugraphs/gqa_b1.mu 2>"$T/err" | grep -o '[0-9]* bytes of shared memory' | head -1 | cut -d' ' -f1)
without=$("$M" emit --no-reuse examples/ugraphs/gqa_b1.mu 2>>"$T/err" | grep -o '[0-9]* bytes of shared memory' | head -1 | cut -d' ' -f1)
if [ -n "$with" ] && [ -n "$without" ] && [ "$with" -lt "$without" ]; then ok; else bad "gqa reuse: $with vs $without bytes: $(cat "$T/err")"; fi
# near misses run, and the comparison catches them (exit 3)
for u in tests/ugraphs/near/*.mu; do
    prog=$(sed -n 's/^# program: //p' "$u")
    "$M" run --backend c --reps 0 "$prog" "$u" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -eq 3 ] && grep -q MISMATCH "$T/out"; then ok
    elif [ "$rc" -eq 1 ] && grep -q "division by zero\|not divisible\|shared memory" "$T/err"; then ok
    else bad "$u: near miss not caught by the run (exit $rc): $(head -c 300 "$T/out") $(head -c 300 "$T/err")"; fi
done
# the C target's tiled matmuls on shapes their tiles do not divide (ragged row and column
# tiles, depths of 4k, 2k and odd, broadcast batch dims, f16/bf16/f32, prologues): all four
# written by c/matmul.c, and each f32 output within 1e-4 of the reference
n_tiled=$("$M" emit --target c tests/codegen/matmul_tiles.mu 2>"$T/err" | grep -c '(c/matmul.c)')
if [ "$n_tiled" = 4 ]; then ok; else bad "matmul_tiles.mu: $n_tiled tiled matmuls in the C, not 4: $(head -c 300 "$T/err")"; fi
c_runs tests/codegen/matmul_tiles.mu
"$M" emit --compile tests/codegen/matmul_tiles.mu >/dev/null 2>"$T/err" && ok || bad "matmul_tiles.mu: NVRTC: $(head -c 400 "$T/err")"
# special values (NaN, +-inf, signed zeros) through every operator and the block-level paths
# of the examples' μGraphs: the C target matches the reference's exactly (make test-gpu: CUDA)
for f in tests/codegen/specials.mu examples/ugraphs/rmsnorm_linear_b1.mu examples/ugraphs/gqa_b1.mu \
    examples/ugraphs/ntrans_b1.mu examples/ugraphs/lora.mu examples/ugraphs/gated_mlp.mu; do
    if [ "$f" = tests/codegen/specials.mu ]; then c_runs "$f" --specials; else c_runs "examples/$(basename "$f")" "$f" --specials; fi
done
# generated source is byte-identical to tests/golden/emit.sha256 (tools/emit_digest.sh): a
# change in what mugen emits must be explained, and the digests regenerated, in its commit
sh tools/emit_digest.sh "$M" >"$T/digest"
if diff tests/golden/emit.sha256 "$T/digest" >"$T/ddiff"; then ok
else bad "generated source changed (tools/emit_digest.sh; regenerate tests/golden/emit.sha256 if meant): $(head -c 1200 "$T/ddiff")"; fi
# planted failures stay contained (C backend here; the GPU versions run in make test-gpu)
if "$B/run-faults" examples/lora.mu examples/ugraphs/lora.mu >"$T/out" 2>&1; then ok; else bad "run-faults: $(cat "$T/out")"; fi
# random programs of many small kernels (issue #27): each correct on the C backend, and its
# one-launch forms (static, scheduler and queues, tickets) compile with NVRTC
if "$B/run-random" 12 >"$T/out" 2>&1; then ok; else bad "run-random: $(grep -v '^ok' "$T/out" | head -c 1200)"; fi
if MUGEN_PLANT=compile "$M" emit --compile examples/ugraphs/lora.mu >/dev/null 2>"$T/err"; then bad "planted NVRTC error accepted"
elif grep -q "NVRTC" "$T/err" && grep -q "planted" "$T/err"; then ok; else bad "planted NVRTC error: $(head -c 400 "$T/err")"; fi
# the library API's example (examples/c/run_program.c) on the C target: compile, launch on host
# buffers, compare with the reference; the same program compiled again comes from the cache
# (make test-gpu runs it on the GPU)
for args in "examples/lora.mu examples/ugraphs/lora.mu" examples/ntrans_b1.mu examples/ntrans_b1.mu; do
    if "$B/run-program" --c --reps 2 $args >"$T/out" 2>&1 && grep -q "time per launch" "$T/out"; then ok
    else bad "run-program --c $args: $(head -c 600 "$T/out")"; fi
done
if grep -q "from the compile cache" "$T/out"; then ok; else bad "run-program: a second compile missed the cache: $(cat "$T/out")"; fi
# ragged programs (docs/ragged.md) on the C backend over real length files, checked against
# the token form's reference: the token-wise half and the whole encoder layer (attention as
# seqattn); the encoder's CUDA (token form, seqattn.cuh) compiles with NVRTC at both batches
LD=../shared/data/lengths
for f in cola mnli; do
    if [ ! -f "$LD/$f.txt" ]; then bad "ragged: $LD/$f.txt missing (../shared beside the checkout)"; continue; fi
    for p in ffn_b32 encoder_b32; do
        if "$M" run --backend c --reps 2 --seed 3 --lengths len="$LD/$f.txt" examples/ragged/$p.mu >"$T/out" 2>&1 &&
            grep -q "^ok on C" "$T/out"; then ok; else bad "ragged $p on $f: $(head -c 600 "$T/out")"; fi
    done
done
# (cola b32: 7 kernels; race b128: 6: Q, K and V one kernel of three saves sharing x's tile
# (lower.c find_siblings), the output projection and the first LayerNorm one MMROW kernel; no
# kernel writes f32: the products' results that LayerNorms add are stored f16); with the
# siblings off (MUGEN_FUSE_SIBLINGS=0) 9 and 8
for c in "cola 32 7 1" "race 128 6 1" "cola 32 9 0" "race 128 8 0"; do
    set -- $c
    MUGEN_FUSE_SIBLINGS=$4 "$M" emit --compile --lengths len="$LD/$1.txt" examples/ragged/encoder_b$2.mu >"$T/out" 2>&1 &&
        grep -q "mg_seqattn_wg<64, false, " "$T/out" && [ "$(grep -c '__global__' "$T/out")" = "$3" ] &&
        ! grep '__global__' "$T/out" | grep -q '(float \*__restrict__' && ok ||
        bad "ragged encoder_b$2 on $1 (siblings $4): NVRTC, $3 kernels, no f32 result: $(grep '__global__' "$T/out" | cut -c 1-160)"
done
# the encoder's kernels through ptxas (nvcc, when present): no wgmma serialized (C7514, C7515:
# a product's registers read or written between its issue and its wait, which NVRTC compiles
# silently into one wgmma at a time)
if [ -x "$NVCC" ]; then
    "$M" emit --lengths len="$LD/race.txt" examples/ragged/encoder_b128.mu >"$T/enc.cu" 2>&1 &&
        grep -q "mg_seqattn_wg<64, false, 128, 4>" "$T/enc.cu" &&
        "$NVCC" -cubin -arch=sm_90a -Xptxas -v -diag-suppress 177 "$T/enc.cu" -o "$T/enc.cubin" >"$T/out" 2>&1 &&
        ! grep -q "C751[45]" "$T/out" && ok || bad "encoder b128: ptxas: $(grep -E 'C751[45]|error' "$T/out" | head -c 600)"
fi
# the siblings' GPU lowering (cola b32: 6 graph-defined kernels, x's the A of one of them with
# three results) runs on C against the per-sequence reference
"$M" lower --lengths len="$LD/cola.txt" examples/ragged/encoder_b32.mu >"$T/sib.mu" 2>&1 &&
    [ "$(grep -c '= kernel(' "$T/sib.mu")" = 6 ] && grep -q "^t[0-9]*, t[0-9]*, t[0-9]* = kernel(x, " "$T/sib.mu" &&
    "$M" run --backend c --reps 1 --lengths len="$LD/cola.txt" examples/ragged/encoder_b32.mu "$T/sib.mu" >"$T/out" 2>&1 &&
    grep -q "^ok on C" "$T/out" && ok || bad "sibling products, cola b32: $(grep '= kernel(' "$T/sib.mu" | cut -c 1-120) $(tail -c 300 "$T/out")"
# form MMROW (lower.c): the GPU's lowering of a LayerNorm after a product is one kernel; that
# μGraph runs on C against the reference, verifies, and its CUDA compiles
"$M" lower tests/lower/layernorm_product.mu >"$T/lnp.mu" 2>&1 && [ "$(grep -c '= kernel(' "$T/lnp.mu")" = 1 ] &&
    "$M" run --backend c --reps 1 tests/lower/layernorm_product.mu "$T/lnp.mu" >"$T/out" 2>&1 && grep -q "^ok on C" "$T/out" &&
    "$M" verify tests/lower/layernorm_product.mu "$T/lnp.mu" >"$T/out" 2>&1 && grep -q "^equivalent" "$T/out" &&
    "$M" emit --compile tests/lower/layernorm_product.mu >"$T/out" 2>&1 && grep -q "grid \[68, 1, 1\] x 256 threads" "$T/out" &&
    ok || bad "layernorm_product.mu, GPU lowering: $(tail -c 400 "$T/out")"
"$M" lower tests/lower/layernorm_product_deep.mu >"$T/lnp.mu" 2>&1 && [ "$(grep -c '= kernel(' "$T/lnp.mu")" = 2 ] && ok ||
    bad "layernorm_product_deep.mu: not two kernels: $(grep '= kernel(' "$T/lnp.mu")"
# seqattn whose K has another reader, stored f16 all the same (lengths 17, 0, 40, 5): NVRTC, and C checked
printf '17\n0\n40\n5\n' >"$T/ra.txt"
"$M" emit --compile --lengths len="$T/ra.txt" tests/codegen/ragged_attention.mu >"$T/out" 2>"$T/err" &&
    grep -q "const mg_h \*__restrict__ g_t12" "$T/out" && ok ||
    bad "ragged_attention.mu: NVRTC or store types: $(head -c 600 "$T/err"); $(grep -m 3 "__restrict__ g_t1[0-9]" "$T/out" | cut -c 1-300)"
for tg in cuda c; do
    "$M" emit --compile --target $tg tests/codegen/seqattn_shared.mu >"$T/out" 2>&1 && ok || bad "seqattn_shared.mu ($tg): $(tail -c 400 "$T/out")"
done
if "$M" run --backend c --reps 2 --lengths len="$T/ra.txt" tests/codegen/ragged_attention.mu >"$T/out" 2>&1 &&
    grep -q "^ok on C" "$T/out"; then ok; else bad "ragged_attention.mu on C: $(head -c 600 "$T/out")"; fi
# in f32: the GPU's seqattn (16-bit tensor cores) refuses it by name, the C backend runs it (1e-4)
"$M" emit --compile --lengths len="$T/ra.txt" tests/codegen/ragged_attention_f32.mu >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "seqattn computes on 16-bit tensor cores" "$T/out" && ok || bad "ragged_attention_f32.mu, CUDA: $(tail -c 400 "$T/out")"
"$M" run --backend c --reps 1 --lengths len="$T/ra.txt" tests/codegen/ragged_attention_f32.mu >"$T/out" 2>&1 &&
    grep -q "^ok on C" "$T/out" && ok || bad "ragged_attention_f32.mu on C: $(head -c 600 "$T/out")"
# optimize of a ragged program: its token form piece by piece (the projections searched), the
# μGraph run on the same batch against the per-sequence reference; a batch of another token
# capacity is refused by name
rm -rf "$T/opt"
if MUGEN_SEARCH_CACHE=off "$M" optimize --backend c --time-limit 10 --reps 2 --quiet --lengths len="$T/ra.txt" --out "$T/opt" \
    tests/codegen/ragged_attention.mu >"$T/out" 2>&1 && grep -q "search complete" "$T/out" &&
    "$M" run --backend c --reps 1 --lengths len="$T/ra.txt" tests/codegen/ragged_attention.mu "$T/opt/best.mu" >"$T/out" 2>&1 &&
    grep -q "^ok on C" "$T/out" && grep -q "1 attention as seqattn" "$T/out"; then ok; else bad "optimize --lengths: $(tail -c 600 "$T/out")"; fi
printf '40\n40\n40\n40\n' >"$T/ra4.txt"
"$M" run --backend c --reps 1 --lengths len="$T/ra4.txt" tests/codegen/ragged_attention.mu "$T/opt/best.mu" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "input 'x' is f16\[256, 32\] in the program but f16\[128, 32\] in the μGraph" "$T/out" && ok ||
    bad "optimize --lengths, another capacity: $(tail -c 400 "$T/out")"
# search of a token-wise ragged program: its token form at the batch's capacity (128 rows); the
# best μGraph then runs three other batches of that capacity against the per-sequence reference,
# and a batch of 160 tokens (256 rows) is refused by name; without lengths, or with attention
# over the ragged dim, the search is refused with a message
rm -rf "$T/rs"
if MUGEN_SEARCH_CACHE=off "$M" search --time-limit 10 --quiet --lengths len="$T/ra.txt" --out "$T/rs" tests/codegen/ragged_mlp.mu \
    >"$T/out" 2>&1 && [ -f "$T/rs/ugraph-1.mu" ]; then ok; else bad "search --lengths: $(tail -c 600 "$T/out")"; fi
for L in "1 40 40 40" "0 0 0 1" "40 40 40 0"; do
    printf '%s\n' $L >"$T/lv.txt"
    "$M" run --backend c --reps 1 --lengths len="$T/lv.txt" tests/codegen/ragged_mlp.mu "$T/rs/ugraph-1.mu" >"$T/out" 2>&1 &&
        grep -q "^ok on C" "$T/out" && ok || bad "searched ragged μGraph at lengths $L: $(tail -c 400 "$T/out")"
done
# mugen verify of the ragged program against the μGraph: as its token form over the μGraph's 128
# rows, for every batch of that capacity (exit 0); a wrong one (the mean over 32) exit 3; with
# attention over the ragged dim refused
"$M" verify tests/codegen/ragged_mlp.mu "$T/rs/ugraph-1.mu" >"$T/out" 2>&1 && grep -q "^as the program's token form over 128 rows" "$T/out" &&
    grep -q "equivalent: " "$T/out" && ok || bad "verify, ragged program and token μGraph: $(tail -c 400 "$T/out")"
sed 's| / 64$| / 32|' "$T/rs/ugraph-1.mu" >"$T/rs-bad.mu"
"$M" verify tests/codegen/ragged_mlp.mu "$T/rs-bad.mu" >"$T/out" 2>&1
[ $? -eq 3 ] && grep -q "^not equivalent" "$T/out" && ok || bad "verify, a wrong token μGraph: $(tail -c 400 "$T/out")"
"$M" lower --lengths len="$T/ra.txt" tests/codegen/ragged_attention.mu >"$T/ra-ug.mu" 2>&1
"$M" verify tests/codegen/ragged_attention.mu "$T/ra-ug.mu" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "seqattn, which has no field evaluation" "$T/out" && ok || bad "verify, token μGraph with seqattn: $(tail -c 400 "$T/out")"
printf '40\n40\n40\n40\n' >"$T/lv.txt"
"$M" run --backend c --reps 1 --lengths len="$T/lv.txt" tests/codegen/ragged_mlp.mu "$T/rs/ugraph-1.mu" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "input 'x' is f16\[256, 64\] in the program but f16\[128, 64\] in the μGraph" "$T/out" && ok ||
    bad "searched ragged μGraph, another capacity: $(tail -c 400 "$T/out")"
"$M" search --quiet --out "$T/rs2" tests/codegen/ragged_mlp.mu >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "lengths 'len' are not bound" "$T/out" && [ ! -d "$T/rs2" ] && ok || bad "search, lengths unbound: $(tail -c 400 "$T/out")"
"$M" search --quiet --out "$T/rs3" --lengths len="$T/ra.txt" tests/codegen/ragged_attention.mu >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "attention over its ragged dim is not supported" "$T/out" && ok || bad "search with seqattn: $(tail -c 400 "$T/out")"
# seqattn at head dims 128 (one strip a warp, one stage), 48 (bf16, an odd count of k-steps)
# and 32 (bf16, warpgroups, an f32 result): NVRTC, and C checked
printf '150\n0\n1\n97\n' >"$T/l4.txt"
printf '130\n64\n65\n3\n0\n' >"$T/l5.txt"
printf '200\n1\n0\n129\n64\n' >"$T/l6.txt"
# on sm_90a (the default device), head dim 128 takes the warpgroup form (mg_seqattn_wg, 4 K/V
# stages for 128 rows, 3 for 64), 48 the warps' (mg_seqattn, two strips a warp);
# MUGEN_SEQATTN_WG=0 the warps' always
for c in "d128 l4 mg_seqattn_wg<128,@false,@R,@S> 1" "d128 l4 mg_seqattn<128,@false,@1,@R> 0" \
    "d48 l5 mg_seqattn<48,@true,@2,@R> 1" "d32 l6 mg_seqattn_wg<32,@true,@R,@S> 1"; do
    set -- $c
    # 128 query rows a block (MUGEN_SEQATTN_LONG: sequences of 1+ tokens on average)
    for r in 64 128; do
        want=$(echo "$3" | sed "s/R/$r/; s/S/$([ $r = 128 ] && echo 4 || echo 3)/; s/@/ /g")
        MUGEN_SEQATTN_WG=$4 MUGEN_SEQATTN_LONG=$([ $r = 128 ] && echo 1 || echo 0) "$M" emit --compile \
            --lengths len="$T/$2.txt" tests/codegen/seqattn_$1.mu >"$T/out" 2>&1 &&
            grep -qF "$want" "$T/out" && ok || bad "seqattn_$1.mu, $want: NVRTC: $(grep -o 'mg_seqattn[_wg]*<[^>]*>' "$T/out" | tail -1) $(tail -c 400 "$T/out")"
    done
    [ $4 = 1 ] || continue
    if "$M" run --backend c --reps 1 --lengths len="$T/$2.txt" tests/codegen/seqattn_$1.mu >"$T/out" 2>&1 &&
        grep -q "^ok on C" "$T/out"; then ok; else bad "seqattn_$1.mu on C: $(head -c 600 "$T/out")"; fi
done
# mugen space (opt/space.c, docs/tuning.md): a μGraph's and a lowered program's spaces, the
# rules' own point valid, every distinct point checked where there are few (rmsnorm_linear_b8)
# and each constraint's count printed; a ragged program needs its lengths; bad options refused
for f in examples/ugraphs/rmsnorm_linear_b8.mu bench/suite/bias_relu.mu; do
    "$M" space --samples 300 --seed 5 $f >"$T/out" 2>&1 && grep -q "^the rules' point: valid" "$T/out" &&
        grep -Eq "^points: [0-9]+, valid [0-9]+ " "$T/out" && [ "$(grep -Ec '^  (threads|stages|trip|smem|regs|plan) +[0-9]+  ' "$T/out")" -ge 6 ] &&
        grep -q "k0.stages " "$T/out" && ok || bad "mugen space $f: $(head -c 600 "$T/out")"
done
"$M" space examples/ugraphs/rmsnorm_linear_b8.mu 2>&1 | grep -q "rejected of all " && ok ||
    bad "mugen space: a small space not checked point by point"
"$M" space --lengths len="$LD/cola.txt" examples/ragged/encoder_b32.mu >"$T/out" 2>&1 && grep -q "^the rules' point: valid" "$T/out" &&
    "$M" space examples/ragged/encoder_b32.mu >"$T/out" 2>&1; [ $? -eq 1 ] && grep -q "lengths 'len' are not bound" "$T/out" && ok ||
    bad "mugen space, ragged: $(head -c 400 "$T/out")"
# the rules never plan a point the device constraints reject, in any sketch (lowering) of the
# suite's programs and of the ragged encoder (a sibling kernel's 192 accumulator floats a
# thread under the 128-column tiling was one, fixed in lower.c mm_tiles)
for f in bench/suite/*.mu; do
    "$M" space --samples 20 $f >"$T/out" 2>&1 && ! grep -q "rules' point: rejected" "$T/out" && grep -q "^in all: 5 sketches" "$T/out" ||
        { bad "mugen space $f: $(grep -E "rules' point: rejected|mugen:" "$T/out" | head -c 400)"; continue; }
done
ok
"$M" space --samples 20 --lengths len="$LD/race.txt" examples/ragged/encoder_b128.mu >"$T/out" 2>&1 &&
    ! grep -q "rules' point: rejected" "$T/out" && grep -q "^in all: 5 sketches" "$T/out" && ok ||
    bad "mugen space, encoder race b128: $(grep -E "rules' point|mugen:" "$T/out" | head -c 400)"
# --schedule (mg_run_opts.schedule): a point of the space planned and compiled (bias_relu's
# TMA loop at 3 stages, two blocks an SM: __launch_bounds__(128, 2), less shared memory than the
# rules' 6 stages); names, values and points the limits reject refused, each by name
"$M" emit --compile --schedule "k0.stages=3,k0.pair=2" bench/suite/bias_relu.mu >"$T/out" 2>&1 &&
    grep -q "__launch_bounds__(128, 2) k3_O" "$T/out" && "$M" emit bench/suite/bias_relu.mu >"$T/out2" 2>&1 &&
    [ "$(grep -o '[0-9]* bytes of shared memory' "$T/out")" != "$(grep -o '[0-9]* bytes of shared memory' "$T/out2")" ] && ok ||
    bad "emit --schedule: $(grep -E 'launch_bounds|mugen:' "$T/out" | head -c 400)"
for c in "k0.stages=1@reject it: stages" "k0.pair=2@reject it: smem" "k9.stages=2@no parameter 'k9.stages'" \
    "k0.stages=9@takes none of 9" "k0.stages@is not NAME=VALUE"; do
    "$M" emit --schedule "${c%%@*}" bench/suite/bias_relu.mu >"$T/out" 2>&1
    [ $? -eq 1 ] && grep -q "${c#*@}" "$T/out" && ok || bad "emit --schedule ${c%%@*}: $(head -c 300 "$T/out")"
done
# mugen tune (src/tune/tune.c) on the C backend (the schedule is the GPU's: the machinery):
# the rules' point, the rules' point of bias_relu's other lowering (sketch=1) and 2 random
# ones run, checked and appended to the dataset as JSON lines; again with 3, the first four
# come from the dataset and one more runs; a dataset that cannot be written is refused
rm -f "$T/ds.jsonl"
"$M" tune --backend c --samples 2 --reps 2 --dataset "$T/ds.jsonl" bench/suite/bias_relu.mu >"$T/out" 2>&1 &&
    grep -q "^points: 4 (4 run, 0 from the dataset, 0 failed)" "$T/out" && [ "$(wc -l <"$T/ds.jsonl")" = 4 ] &&
    [ "$(grep -c '"rules": true' "$T/ds.jsonl")" = 1 ] && grep -q "\"point\": \"sketch=1,[^\"]*\", \"rules\": false, \"how\": \"the rules' of its sketch\"" "$T/ds.jsonl" && grep -q '"ok": true, "kernels": \[\[' "$T/ds.jsonl" &&
    "$M" tune --backend c --samples 3 --reps 2 --dataset "$T/ds.jsonl" bench/suite/bias_relu.mu >"$T/out" 2>&1 &&
    grep -q "^points: 5 (1 run, 4 from the dataset, 0 failed)" "$T/out" && [ "$(wc -l <"$T/ds.jsonl")" = 5 ] &&
    python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1])]" "$T/ds.jsonl" && ok ||
    bad "mugen tune: $(tail -c 500 "$T/out")"
# the cost model's points (--guided) and compiles ahead in two processes (--jobs): 2 random and
# 2 guided points after the two sketches' rules' points, all 6 distinct, each timed run finding its code compiled
rm -f "$T/ds2.jsonl"
MUGEN_CACHE_DIR=$T/tc2 "$M" tune --backend c --samples 2 --guided 2 --jobs 2 --reps 1 --dataset "$T/ds2.jsonl" \
    bench/suite/bias_relu.mu >"$T/out" 2>&1 && grep -q "^points: 6 (6 run, 0 from the dataset, 0 failed)" "$T/out" &&
    grep -q "^compiled ahead: 6 points in 2 processes; 6 timed runs found their code in the cache" "$T/out" &&
    [ "$(grep -c '"how": "guided, predicted' "$T/ds2.jsonl")" = 2 ] && [ "$(grep -c '"how": "random"' "$T/ds2.jsonl")" = 2 ] &&
    [ "$(grep -o '"point": "[^"]*"' "$T/ds2.jsonl" | sort -u | wc -l)" = 6 ] && ok || bad "mugen tune --guided --jobs: $(tail -c 500 "$T/out")"
"$M" run --guided 2 bench/suite/bias_relu.mu >"$T/out" 2>&1; r1=$?
"$M" tune --jobs 65 bench/suite/bias_relu.mu >"$T/out" 2>&1; r2=$?
[ $r1 = 2 ] && [ $r2 = 2 ] && ok || bad "mugen tune: --guided on run exits $r1, --jobs 65 exits $r2"
"$M" tune --backend c --samples 1 --dataset /nonexistent/ds.jsonl bench/suite/bias_relu.mu >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "cannot open the dataset" "$T/out" && ok || bad "mugen tune, unwritable dataset: $(head -c 300 "$T/out")"
# the tuning cache (driver.c dr_tuned_*, docs/tuning.md): the C backend's tuning keeps nothing;
# a pinned point plans emit's code exactly as --schedule does, --untuned the rules' code; an
# entry torn on disk is passed over; pins outside the space or the limits, for an unknown
# device, or with options that run points are refused
TC=$T/tunecache
MUGEN_CACHE_DIR=$TC "$M" tune --backend c --samples 1 --reps 1 bench/suite/bias_relu.mu >"$T/out" 2>&1 &&
    grep -q "^not kept: the C backend" "$T/out" && ! ls "$TC"/*.tune-* >/dev/null 2>&1 && ok || bad "tune on C kept a point: $(tail -c 300 "$T/out")"
MUGEN_CACHE_DIR=$TC "$M" emit bench/suite/bias_relu.mu >"$T/rules.cu" 2>&1 &&
    MUGEN_CACHE_DIR=$TC "$M" emit --schedule "k0.stages=3,k0.pair=2" bench/suite/bias_relu.mu >"$T/sched.cu" 2>&1 &&
    MUGEN_CACHE_DIR=$TC "$M" tune --pin "k0.stages=3,k0.pair=2" bench/suite/bias_relu.mu >"$T/out" 2>&1 &&
    grep -q "^pinned: k0.stages=3,k0.pair=2" "$T/out" && MUGEN_CACHE_DIR=$TC "$M" emit bench/suite/bias_relu.mu >"$T/tuned.cu" 2>&1 &&
    MUGEN_CACHE_DIR=$TC "$M" emit --untuned bench/suite/bias_relu.mu >"$T/untuned.cu" 2>&1 &&
    cmp -s "$T/tuned.cu" "$T/sched.cu" && cmp -s "$T/untuned.cu" "$T/rules.cu" && ! cmp -s "$T/tuned.cu" "$T/rules.cu" &&
    MUGEN_CACHE_DIR=$TC "$M" tune --pin "k0.stages=3" --device h200 bench/suite/bias_relu.mu >"$T/out" 2>&1 &&
    MUGEN_CACHE_DIR=$TC "$M" emit bench/suite/bias_relu.mu >"$T/tuned2.cu" 2>&1 && cmp -s "$T/tuned2.cu" "$T/sched.cu" &&
    [ "$(ls "$TC"/*.tune-h200 | wc -l)" = 1 ] && ok || bad "tuning cache: a pinned point $(tail -c 300 "$T/out")"
# a lowering's sketch (sketch=N, lw_tilings): layernorm_product's fifth lowering (no form MMROW)
# pinned plans emit's code as --schedule sketch=4 does; --untuned the default lowering; a
# sketch no lowering has, one that lowers as the default does, and a μGraph's are refused
P=tests/lower/layernorm_product.mu
MUGEN_CACHE_DIR=$T/tc3 "$M" emit $P >"$T/p0.cu" 2>&1 && MUGEN_CACHE_DIR=$T/tc3 "$M" emit --schedule sketch=4 $P >"$T/p4.cu" 2>&1 &&
    ! cmp -s "$T/p0.cu" "$T/p4.cu" && MUGEN_CACHE_DIR=$T/tc3 "$M" tune --pin sketch=4 $P >"$T/out" 2>&1 &&
    MUGEN_CACHE_DIR=$T/tc3 "$M" emit $P >"$T/pt.cu" 2>&1 && cmp -s "$T/pt.cu" "$T/p4.cu" &&
    MUGEN_CACHE_DIR=$T/tc3 "$M" emit --untuned $P >"$T/pu.cu" 2>&1 && cmp -s "$T/pu.cu" "$T/p0.cu" && ok ||
    bad "tuning cache: a pinned sketch $(tail -c 300 "$T/out")"
for c in "emit --schedule sketch=9 $P@sketch= takes 0 to 4" "tune --pin sketch=1 $P@names none of this program's distinct lowerings" \
    "emit --schedule sketch=1 examples/ugraphs/gated_mlp.mu@a μGraph already"; do
    MUGEN_CACHE_DIR=$T/tc3 "$M" ${c%%@*} >"$T/out" 2>&1
    [ $? = 1 ] && grep -q "${c#*@}" "$T/out" && ok || bad "${c%%@*}: $(head -c 300 "$T/out")"
done
for f in "$TC"/*.tune-h100; do printf 'point k0.stages=1\n' >"$f"; done
MUGEN_CACHE_DIR=$TC "$M" emit bench/suite/bias_relu.mu >"$T/torn.cu" 2>&1 && cmp -s "$T/torn.cu" "$T/rules.cu" && ok ||
    bad "tuning cache: a torn entry was not passed over"
for c in "--pin k9.stages=2@no parameter 'k9.stages'@1" "--pin k0.pair=2@reject it: smem@1" \
    "--pin k0.stages=3 --device h999@unknown device 'h999'@1" "--device h200@--device goes with --pin@2" \
    "--pin k0.stages=3 --samples 2@--pin runs nothing@2"; do
    set -f
    MUGEN_CACHE_DIR=$TC "$M" tune ${c%%@*} bench/suite/bias_relu.mu >"$T/out" 2>&1; r=$?
    set +f
    w=${c#*@}
    [ $r = "${w#*@}" ] && grep -q -- "${w%@*}" "$T/out" && ok || bad "tune ${c%%@*}: exit $r, $(head -c 300 "$T/out")"
done
"$M" space --samples 0 examples/lora.mu >"$T/out" 2>&1; r1=$?
"$M" emit --samples 5 examples/lora.mu >"$T/out" 2>&1; r2=$?
[ $r1 = 2 ] && [ $r2 = 2 ] && ok || bad "mugen space: bad options exit $r1, $r2"
# symbolic dims (dim B [1, 64], docs/tuning.md): a call of B rows runs the variant of the
# smallest capacity holding them (C backend, checked against the reference), at the range's
# ends and between capacities; B = 37 and B = 64 emit the same code (one variant), B = 5
# another; the portfolio compiles the 7 variants ahead; values outside the range, a dim the
# program does not declare, and a μGraph with a program of dims are refused by name
D=tests/programs/good/dims.mu
# (checked against the reference at B on B's rows, the rest poisoned); run-time grids cut the
# launches over B's rows below the capacity (2 of 2 here), none at it
for v in 1@1@0 37@64@2 64@64@0 3@4@1; do
    b=${v%%@*} c=${v#*@}
    "$M" run --backend c --reps 1 --dim "B=$b" $D >"$T/out" 2>&1 &&
        grep -q "^ok on C" "$T/out" && grep -q "dim      B = $b ran as the variant for ${c%@*} rows.*, ${v##*@} of 2 launches cut" "$T/out" && ok ||
        bad "run --dim B=$b: $(tail -c 300 "$T/out")"
done
# --variant runs another capacity's variant (checked, its launches cut to B's rows); the
# selector (MUGEN_SELECTOR, tests/unit/test_selector.c's hand-made weights: B in [1, 8], the
# variants for 4 and 8 rows) runs 8 rows at B = 2 and falls back to the smallest capacity
# outside its range (B = 37); a missing weights file falls back the same way
"$M" run --backend c --reps 1 --dim B=3 --variant 64 $D >"$T/out" 2>&1 && grep -q "^ok on C" "$T/out" &&
    grep -q "B = 3 ran as the variant for 64 rows.*, 2 of 2 launches cut" "$T/out" && ok || bad "run --variant 64: $(tail -c 300 "$T/out")"
# --variant all: every variant that holds B (B = 5: 8, 16, 32, 64) on one set of inputs, each checked
"$M" run --backend c --reps 1 --dim B=5 --variant all $D >"$T/out" 2>&1 && grep -q "^ok on C" "$T/out" &&
    [ "$(grep -c "^  variant  [0-9]*: ok, time" "$T/out")" = 4 ] && grep -q "^  variant  64: ok, time .*, 2 of 2 launches cut" "$T/out" &&
    grep -q "B = 5 on each of 4 variants" "$T/out" && ok || bad "run --variant all: $(tail -c 400 "$T/out")"
"$M" run --backend c --reps 1 --dim B=37 --variant 16 $D >"$T/out" 2>&1
[ $? = 1 ] && grep -q "the variant for 16 rows does not hold it" "$T/out" && ok || bad "run --variant 16 at B = 37: $(tail -c 300 "$T/out")"
printf 'mugen-selector 1\nclasses 2\ncaps 4 8\nrange 1 8\nfeatures 4\nblocks 1\nwidth 1 1\nmean 0 0 0 0\nstd 1 1 1 1\nA1 1 0 0 0\nb1 0\nA2 0 0 0 0\nb2 0\nln_g 1\nln_b 0\nA3 0\nb3 0\nAf -1 1\nbf 1.5 0\n' >"$T/sel.txt"
for v in 2@8@"chosen by the selector" 1@4@"chosen by the selector" 37@64@"could not choose"; do
    b=${v%%@*} w=${v#*@}
    MUGEN_SELECTOR=$T/sel.txt "$M" run --backend c --reps 1 --dim "B=$b" $D >"$T/out" 2>&1 && grep -q "^ok on C" "$T/out" &&
        grep -q "B = $b ran as the variant for ${w%%@*} rows" "$T/out" && grep -q "${w#*@}" "$T/out" && ok || bad "MUGEN_SELECTOR B=$b: $(tail -c 300 "$T/out")"
done
MUGEN_SELECTOR=$T/none.txt "$M" run --backend c --reps 1 --dim B=2 $D >"$T/out" 2>&1 && grep -q "B = 2 ran as the variant for 2 rows" "$T/out" &&
    grep -q "could not choose" "$T/out" && ok || bad "MUGEN_SELECTOR missing: $(tail -c 300 "$T/out")"
"$M" emit --dim B=37 $D >"$T/e37.cu" 2>&1 && "$M" emit --dim B=64 $D >"$T/e64.cu" 2>&1 && "$M" emit --dim B=5 $D >"$T/e5.cu" 2>&1 &&
    cmp -s "$T/e37.cu" "$T/e64.cu" && ! cmp -s "$T/e37.cu" "$T/e5.cu" && ok || bad "emit --dim: one variant for B = 37 and 64, another for 5"
"$M" eval --dim B=3 --show 100 $D >"$T/out" 2>&1 && grep -q "f32\[3, 512\]\|\[3, 512\]" "$T/out" && ok || bad "eval --dim B=3: $(head -c 300 "$T/out")"
MUGEN_CACHE_DIR=$T/pc "$M" portfolio --target c $D >"$T/out" 2>&1 && [ "$(grep -c ': the variant for' "$T/out")" = 7 ] &&
    grep -q "^B in \[33, 64\]: the variant for 64 rows" "$T/out" && grep -q "^portfolio: 7 variants of B in \[1, 64\]" "$T/out" && ok ||
    bad "portfolio: $(tail -c 300 "$T/out")"
for c in "run --dim B=0@the value is a positive integer@1" "run --dim B=65@dim B = 65 is outside its range [1, 64]@1" \
    "run --dim C=3@the program declares no dim 'C'@1" "run --dim B@--dim wants NAME=VALUE@2"; do
    w=${c#*@}
    "$M" ${c%%@*} $D >"$T/out" 2>&1; r=$?
    [ $r = "${w#*@}" ] && grep -qF -- "${w%@*}" "$T/out" && ok || bad "${c%%@*}: exit $r, $(head -c 300 "$T/out")"
done
# reduced dims (a KV length, docs/tuning.md "Reduced dims"): each tests/codegen/kv program on C
# at its range's ends and between, checked against the program at that length with NaN in every
# input entry past it (a load or an elementwise value not masked makes the output NaN); its
# CUDA at one length compiled with NVRTC; --variant all runs every variant that holds L on one
# set of inputs (each variant's buffers the leading box of the largest's)
for f in tests/codegen/kv/*.mu; do
    hi=$(sed -n 's/^dim L \[128, \([0-9]*\)\]/\1/p' "$f")
    for L in 128 129 $((hi / 3 + 7)) "$hi"; do
        "$M" run --backend c --reps 1 --dim "L=$L" "$f" >"$T/out" 2>&1 && grep -q "^ok on C" "$T/out" &&
            grep -q "L = $L ran as the variant for .*a reduced dim: entries past $L masked" "$T/out" && ok ||
            bad "$f --dim L=$L: $(tail -c 400 "$T/out")"
    done
    "$M" emit --compile --dim L=$((hi / 2 + 3)) "$f" >"$T/kv.cu" 2>"$T/err" && grep -q "const long long mg_L" "$T/kv.cu" && ok ||
        bad "$f: NVRTC at L = $((hi / 2 + 3)): $(head -c 400 "$T/err")"
done
"$M" run --backend c --reps 1 --dim L=300 --variant all tests/codegen/kv/gqa.mu >"$T/out" 2>&1 && grep -q "^ok on C" "$T/out" &&
    [ "$(grep -c "^  variant  [0-9]*: ok, time" "$T/out")" = 3 ] && grep -q "L = 300 on each of 3 variants" "$T/out" && ok ||
    bad "kv --variant all: $(tail -c 400 "$T/out")"
MUGEN_CACHE_DIR=$T/pkv "$M" portfolio --target c tests/codegen/kv/expsum.mu >"$T/out" 2>&1 &&
    grep -q "^portfolio: 6 variants of L in \[128, 4096\]" "$T/out" && grep -q "^L in \[1025, 2048\]: the variant for 2048" "$T/out" && ok ||
    bad "kv portfolio: $(tail -c 400 "$T/out")"
"$M" run --dim B=2 $D examples/ugraphs/gated_mlp.mu >"$T/out" 2>&1
[ $? = 1 ] && grep -q "a μGraph is for one size" "$T/out" && ok || bad "run --dim with a μGraph: $(head -c 300 "$T/out")"
"$M" portfolio examples/lora.mu >"$T/out" 2>&1
[ $? = 1 ] && grep -q "declares 0 symbolic dims" "$T/out" && ok || bad "portfolio of a static program: $(head -c 300 "$T/out")"
# asking for the GPU where there is none
if [ ! -e /dev/nvidia0 ]; then
    "$B/run-program" examples/lora.mu >"$T/out" 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && grep -qi "no CUDA driver\|no CUDA device\|CUDA error" "$T/out"; then ok; else bad "run-program without a GPU: exit $rc: $(cat "$T/out")"; fi
    "$M" run --backend gpu examples/lora.mu >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -eq 1 ] && grep -qi "libcuda\|no CUDA device\|no GPU" "$T/err"; then ok; else bad "--backend gpu without a GPU: exit $rc: $(cat "$T/err")"; fi
fi
rm -rf "$T"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
