#!/bin/sh
# bench/trim_summary.sh: trims bench/searched/CASE/summary.txt to what `make bench` uses.
# bench/search_cases.sh copies the search's whole summary.txt (every rank and every μGraph's
# text, up to 13,000 lines); the tree keeps its header lines, the table rows of the ranks kept
# in the folder (its ugraph-N.mu files, which make bench runs), a line saying so, and those
# ranks' verification verdicts. The same input gives the same output, and a trimmed file trims
# to itself, so a new search compares with the committed one after this script:
#   sh bench/search_cases.sh build/mugen LIMIT_S CASE && sh bench/trim_summary.sh CASE && git diff bench/searched/CASE
#   sh bench/trim_summary.sh [CASE...]   (default: every folder of bench/searched)
if [ $# -eq 0 ]; then
    for d in bench/searched/*/; do set -- "$@" "$(basename "$d")"; done
fi
for case in "$@"; do
    dir=bench/searched/$case
    [ -f "$dir/summary.txt" ] || { echo "trim_summary: no $dir/summary.txt" >&2; exit 1; }
    kept=""
    for u in "$dir"/ugraph-*.mu; do
        [ -f "$u" ] || continue
        n=${u##*/ugraph-}
        kept="$kept ${n%.mu}"
    done
    awk -v kept=" $kept" -v case="$case" '
        BEGIN { n = split(kept, k, " "); for (i = 1; i <= n; i++) keep[k[i]] = 1 }
        /^# trimmed/ { next }
        !table && /^rank  est\./ { table = 1; print; next }
        !table { print; next }
        /^ *[0-9]+ .* ugraph-[0-9]+\.mu$/ { if ($1 in keep) print; next }
        /^# rank [0-9]+:/ { r = $3; sub(":", "", r); if (r in keep) verdict[++nv] = $0; next }
        END {
            if (!table) exit
            print "# trimmed to the ranks kept in this folder (the μGraphs make bench runs) by bench/trim_summary.sh;"
            print "# every rank and each μGraph'"'"'s text: sh bench/search_cases.sh MUGEN LIMIT_S " case " (bench/cases.txt)"
            for (i = 1; i <= nv; i++) print (i == 1 ? "\n" : "") verdict[i]
        }' "$dir/summary.txt" >"$dir/summary.txt.tmp" && mv "$dir/summary.txt.tmp" "$dir/summary.txt"
done
