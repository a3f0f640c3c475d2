#!/bin/sh
# Old and new mugen binaries side by side on the GPU machine (a lowering or codegen change's
# before and after, docs/notes): each program lowered and run (`mugen run --backend gpu`,
# outputs checked against the reference), the two binaries interleaved, ROUNDS rounds; prints
# one line a program: its times (µs, CUDA graph replays) and each run's check, progressively.
#   sh bench/ab.sh OLD_BIN NEW_BIN ROUNDS REPS PROGRAM.mu ...
OLD=$1 NEW=$2 R=$3 REPS=$4
shift 4
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
printf '%-28s' program
i=0
while [ $i -lt "$R" ]; do printf '%10s %10s' old new; i=$((i + 1)); done
echo
for p in "$@"; do
    printf '%-28s' "$(basename "$p" .mu)"
    i=0
    while [ $i -lt "$R" ]; do
        for b in "$OLD" "$NEW"; do
            out=$(MUGEN_CACHE_DIR=$(mktemp -d) "$b" run --backend gpu --reps "$REPS" "$p" 2>&1)
            rc=$?
            t=$(printf '%s\n' "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | head -1)
            [ $rc -eq 0 ] && printf '%10s' "${t:-?}" || printf '%10s' "FAIL$rc"
            [ $rc -eq 0 ] || printf '%s\n' "$out" | tail -3 >&2
            printf ' '
        done
        i=$((i + 1))
    done
    echo
done
