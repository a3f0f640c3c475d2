#!/bin/sh
# Launch forms side by side, one binary, every run's outputs checked (FAILn: exit status n),
# times in µs (`mugen run --reps REPS`, CUDA graph):
#   FORMS="|--prefetch|--megakernel|--megakernel --prefetch" \
#     sh bench/megakernel/forms.sh BIN REPS SEED "PROGRAM [UGRAPH]" ...
# FORMS: the run switches of each column, separated by '|' (an empty one: the default path).
B=$1 REPS=$2 SEED=$3
shift 3
[ -d "$PWD/.carry/lib" ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
FORMS=${FORMS:-"|--prefetch|--megakernel|--megakernel --prefetch"}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
printf '%-44s' program
IFS='|'
for f in $FORMS; do printf ' %22s' "${f:-multi}"; done
unset IFS
echo
for a in "$@"; do
    printf '%-44s' "$a"
    IFS='|'
    for f in $FORMS; do
        unset IFS
        # shellcheck disable=SC2086
        out=$(MUGEN_CACHE_DIR=$(mktemp -d) "$B" run --backend gpu --reps "$REPS" --seed "$SEED" $f $a 2>&1)
        rc=$?
        t=$(printf '%s\n' "$out" | sed -n 's/.*time *\([0-9.]*\) us.*/\1/p' | head -1)
        [ $rc -eq 0 ] && printf ' %22s' "${t:-?}" || printf ' %22s' "FAIL$rc"
        [ $rc -eq 0 ] || printf '%s\n' "$out" | grep -v "^  " | tail -2 >&2
        IFS='|'
    done
    unset IFS
    echo
done
