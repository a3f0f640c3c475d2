B=.carry/bin; OUTD=${OUT:-/tmp}; log=$OUTD/log.txt; pass=0; failn=0; export LD_LIBRARY_PATH=$PWD/.carry/lib
# reduced dims (a KV length, docs/tuning.md "Reduced dims"): each tests/codegen/kv program at
# L = 129 and its range's maximum, checked against the program at L with NaN past L in its
# inputs; then GQA decode at L = 1000 (the variant for 1024, masked past 1000)
for f in tests/codegen/kv/*.mu examples/dims/gqa_decode.mu; do
    hi=$(sed -n 's/^dim L \[128, \([0-9]*\)\]/\1/p' "$f")
    case $f in examples/*) lens=1000 ;; *) lens="129 $hi" ;; esac
    for L in $lens; do
        if "$B/mugen" run --backend gpu --reps 20 --dim "L=$L" "$f" >"$OUTD/kv.txt" 2>&1 &&
            grep -q "L = $L ran as the variant for .*a reduced dim: entries past $L masked" "$OUTD/kv.txt"; then
            pass=$((pass + 1)); r=ok
        else failn=$((failn + 1)); r=FAIL; fi
        cat "$OUTD/kv.txt" >>"$log"
        printf 'dim L=%s of %s (masked past L) %s\n' "$L" "$f" "$r" | tee -a "$OUTD/summary.txt"
    done
done
rm -f "$OUTD/kv.txt"
echo "$pass passed, $failn failed"
