#!/bin/sh
# bench/search_cases.sh: the search behind `make bench`. For each case of bench/cases.txt
# (or the cases named), `mugen search` with that case's options writes its ranked μGraphs;
# the best-ranked of each distinct shape (kernel operators, grids, for-loops), up to TOP of
# them (default 8), keep their rank numbers in bench/searched/CASE/ with the summary, which
# `make bench` then times on the GPU. Runs anywhere (no GPU needed); deterministic for a
# given mugen and options when no time limit is hit. The tree keeps each summary trimmed to
# the kept ranks: run `sh bench/trim_summary.sh CASE` after this to compare with it.
#   sh bench/search_cases.sh [MUGEN] [LIMIT_S] [CASE...]
mugen=${1:-build/mugen}
limit=${2:-600}
[ $# -ge 2 ] && shift 2 || shift $#
top=${TOP:-8}
want=" $* "
grep -v '^#' bench/cases.txt | while read -r case opts; do
    [ -n "$case" ] || continue
    [ "$want" = "  " ] || case "$want" in *" $case "*) ;; *) continue ;; esac
    dir=$(mktemp -d)
    # shellcheck disable=SC2086
    "$mugen" search "examples/$case.mu" --out "$dir" --time-limit "$limit" --quiet --no-cache $opts >/dev/null 2>"$dir/stderr"
    rc=$?
    keep=bench/searched/$case
    rm -rf "$keep" && mkdir -p "$keep"
    cp "$dir/summary.txt" "$keep/" 2>/dev/null
    # the best-ranked μGraph of each shape (its kernel lines: operators, grids, for-loops),
    # in rank order, up to TOP: equal-cost variants of one design are timed once
    i=1 kept=0 seen=""
    while [ $kept -lt "$top" ] && [ -f "$dir/ugraph-$i.mu" ]; do
        sig=$(grep -v '^ \|^#\|^}' "$dir/ugraph-$i.mu" | sed 's/^[^=]*= *//' | tr -d ' \n' | cksum | cut -d' ' -f1)
        case " $seen " in *" $sig "*) ;; *) cp "$dir/ugraph-$i.mu" "$keep/"; kept=$((kept + 1)); seen="$seen $sig" ;; esac
        i=$((i + 1))
    done
    echo "$case (exit $rc, options: ${opts:-defaults}): $(grep '^search:' "$dir/summary.txt" 2>/dev/null | cut -c1-160)"
    [ $rc -eq 0 ] || cat "$dir/stderr"
    rm -rf "$dir"
done
