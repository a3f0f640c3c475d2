#!/bin/sh
# The persistent launch (--persist) beside the multi-kernel path, on the GPU machine: each
# program (lowered, or with its μGraph) run by NEW without and with --persist and by OLD with
# it, every run's outputs checked (a time followed by !rcN: the run failed or its check did).
#   sh bench/persist_ab.sh OLD_BIN NEW_BIN "PROGRAM [UGRAPH]" ...
OLD=$1 NEW=$2
shift 2
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
run() {
    out=$(MUGEN_CACHE_DIR=$(mktemp -d) "$@" 2>&1)
    rc=$?
    t=$(printf '%s\n' "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | head -1)
    [ $rc -eq 0 ] && printf '%12s' "$t" || printf '%12s' "${t:-?}!rc$rc"
}
printf '%-52s %12s %12s %12s %12s\n' program new new-persist old-persist new
for a in "$@"; do
    printf '%-52s' "$a"
    # shellcheck disable=SC2086
    run "$NEW" run --backend gpu --reps 300 --seed 5 $a
    # shellcheck disable=SC2086
    run "$NEW" run --backend gpu --reps 300 --seed 5 --persist $a
    # shellcheck disable=SC2086
    run "$OLD" run --backend gpu --reps 300 --seed 5 --persist $a
    # shellcheck disable=SC2086
    run "$NEW" run --backend gpu --reps 300 --seed 6 $a
    echo
done
