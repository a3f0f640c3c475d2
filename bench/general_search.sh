#!/bin/sh
# The generalization suite's search phase (issue #26 item 1; docs/benchmarks.md, "Programs the
# project has not seen"), on a 2-core machine: every bench/general/NAME.mu (or those named) as
# a user would run it, default options, 2 threads, at most 10 minutes:
#   - a Lax program: mugen search --time-limit 600; its ranked μGraphs go to
#     bench/general/searched/NAME/ (summary.txt and the 4 best-ranked, which `mugen optimize`
#     would run);
#   - any other: mugen optimize (piece by piece, each Lax piece searched for up to
#     60 s, the default; its pieces timed on the GPU if there is one, else with the C backend);
#     its whole-program μGraph goes to bench/general/searched/NAME/best.mu.
# A program whose folder already holds summary.txt is skipped (FORCE=1 searches it again).
# JOBS=N searches N programs at once (2 threads each: on a machine of 2N cores, each search
# still has its 2 cores); TIME_LIMIT (600) and OUT (bench/general/searched) may be set.
# Then, on the GPU machine, bench/general.sh times each program's μGraphs and its plain
# lowering against PyTorch eager and torch.compile (bench/suite.py --searched).
#   sh bench/general_search.sh [BUILD/mugen] [NAME ...]
if [ "$1" = --one ]; then # one program: sh bench/general_search.sh --one MUGEN NAME
    M=$2
    set -- "$3"
else
    M=${1:-build/mugen}
    [ $# -ge 1 ] && shift
    [ $# -gt 0 ] || set -- $(ls bench/general/*.mu | sed 's|.*/||; s|\.mu$||')
    if [ "${JOBS:-1}" -gt 1 ]; then
        printf '%s\n' "$@" | xargs -P "$JOBS" -n 1 sh "$0" --one "$M"
        exit 0
    fi
fi
OUT=${OUT:-bench/general/searched}
mkdir -p "$OUT"
export MUGEN_SEARCH_CACHE=off
for n in "$@"; do
    p=bench/general/$n.mu
    d=$OUT/$n
    if [ -f "$d/summary.txt" ] && [ -z "$FORCE" ]; then
        echo "$n: already searched ($d/summary.txt)"
        continue
    fi
    rm -rf "$d" "$d.tmp"
    t0=$(date +%s)
    # the search stops itself at its limit; timeout only guards against one that does not
    timeout $((${TIME_LIMIT:-600} + 40)) "$M" search "$p" --threads 2 --time-limit "${TIME_LIMIT:-600}" --quiet --out "$d.tmp" >"$d.out" 2>"$d.err"
    rc=$?
    if grep -q 'not Lax' "$d.err"; then
        rm -rf "$d.tmp"
        mkdir -p "$d.tmp"
        timeout $((${TIME_LIMIT:-600} + 40)) "$M" optimize "$p" --threads 2 --out "$d.tmp" >"$d.out" 2>"$d.err"
        rc=$?
        { echo "# mugen optimize $p --threads 2 (not Lax: piece by piece), exit $rc"; cat "$d.out"; } >"$d.tmp/summary.txt"
    else
        # keep the summary and optimize's --top 4, drop the rest (checkpoint, .json, .dot)
        [ $rc -eq 124 ] && echo "search: killed $((${TIME_LIMIT:-600} + 40)) s after its start: it did not stop at its time limit" >"$d.tmp/summary.txt"
        rm -rf "$d.tmp/checkpoint" "$d.tmp"/*.json "$d.tmp"/*.dot "$d.tmp/.lock"
        for f in "$d.tmp"/ugraph-*.mu; do
            [ -f "$f" ] || continue
            k=${f##*/ugraph-}
            k=${k%.mu}
            [ "$k" -gt 4 ] && rm -f "$f"
        done
        # the summary's header, the table's first 4 rows and their verdicts and texts
        awk '/^rank  est/ {print; t = 1; next}
             t == 1 && /^ *[0-9]+ / {if (++r <= 4) print; next}
             t == 1 {t = 2}
             /^# rank / {split($3, a, ":"); keep = a[1] + 0 <= 4}
             t != 2 || keep {print}' "$d.tmp/summary.txt" >"$d.tmp/s" && mv "$d.tmp/s" "$d.tmp/summary.txt"
    fi
    secs=$(($(date +%s) - t0))
    echo "# $(date -u +%FT%TZ), $(nproc) cores, $secs s, exit $rc" >>"$d.tmp/summary.txt"
    rm -f "$d.out" "$d.err"
    mv "$d.tmp" "$d"
    echo "$n: exit $rc, $secs s: $(grep -m1 '^search:' "$d/summary.txt" | cut -c1-160)"
done
