#!/bin/sh
# Three runs a program, interleaved over ROUNDS rounds: OLD, NEW, NEW with EXTRA flags (an
# ablation); each `mugen run --backend gpu` with outputs checked (FAILn: exit status n).
#   sh bench/megakernel/ab3.sh OLD_BIN NEW_BIN "EXTRA" ROUNDS REPS PROGRAM.mu ...
OLD=$1 NEW=$2 X=$3 R=$4 REPS=$5
shift 5
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
echo "columns per round: old new new$X"
one() {
    out=$(MUGEN_CACHE_DIR=$(mktemp -d) "$@" 2>&1)
    rc=$?
    t=$(printf '%s\n' "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | head -1)
    [ $rc -eq 0 ] && printf '%10s' "${t:-?}" || printf '%10s' "FAIL$rc"
    [ $rc -eq 0 ] || printf '%s\n' "$out" | tail -3 >&2
}
for p in "$@"; do
    printf '%-26s' "$(basename "$p" .mu)"
    i=0
    while [ $i -lt "$R" ]; do
        one "$OLD" run --backend gpu --reps "$REPS" --seed $((i + 1)) "$p"
        one "$NEW" run --backend gpu --reps "$REPS" --seed $((i + 1)) "$p"
        # shellcheck disable=SC2086
        one "$NEW" run --backend gpu --reps "$REPS" --seed $((i + 1)) $X "$p"
        printf ' |'
        i=$((i + 1))
    done
    echo
done
