#!/bin/sh
# The multi-kernel path (CUDA graph, PDL) beside the persistent launch with tickets
# (--persist) and with the static schedule (--megakernel), one binary, every run's
# outputs checked (FAILn: exit status n); two seeds a program, times in µs.
#   sh bench/megakernel/persist3.sh BIN "PROGRAM [UGRAPH]" ...
B=$1
shift
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
one() {
    out=$(MUGEN_CACHE_DIR=$(mktemp -d) "$@" 2>&1)
    rc=$?
    t=$(printf '%s\n' "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | head -1)
    [ $rc -eq 0 ] && printf '%10s' "${t:-?}" || printf '%10s' "FAIL$rc"
    [ $rc -eq 0 ] || printf '%s\n' "$out" | grep -v "^  " | tail -2 >&2
}
printf '%-48s %10s %10s %10s %10s %10s %10s\n' program multi persist static multi persist static
for a in "$@"; do
    printf '%-48s' "$a"
    for s in 5 6; do
        for f in "" --persist --megakernel; do
            # shellcheck disable=SC2086
            one "$B" run --backend gpu --reps 300 --seed $s $f $a
        done
    done
    echo
done
