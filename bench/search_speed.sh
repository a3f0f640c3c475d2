#!/bin/sh
# bench/search_speed.sh: issue #26 item 3's measure, binaries side by side in one run on this
# machine (default limits, 2 threads): RMSNorm + Linear b=1's whole search with each binary,
# then states in 60 s on QKNorm b=1, then nTrans b=1's whole search (600 s limit) with the first
# and the last binary. Each line: the binary, the load average (1 min) before it, the wall
# time, the search's summary line (the machine may be shared: compare lines run close together).
#   sh bench/search_speed.sh OUT.txt MUGEN_OLD [MUGEN ...]
out=$1
shift
first=$1
for last in "$@"; do :; done
run() { # label binary program [options]
    l=$1 b=$2 f=$3
    shift 3
    d=$(mktemp -d)
    ld=$(cut -d' ' -f1 /proc/loadavg)
    t0=$(date +%s.%N)
    "$b" search "examples/$f.mu" --out "$d" --quiet --no-cache "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$f ($l) $b load $ld wall $(echo "$t1 - $t0" | bc) s; $(grep '^search:' "$d/summary.txt")" | tee -a "$out"
    echo "  ranked list md5 $(cat "$d"/ugraph-*.mu 2>/dev/null | grep -v '^#' | md5sum | cut -c1-12)" | tee -a "$out"
    rm -rf "$d"
}
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); binaries: $*" | tee -a "$out"
for b in "$@"; do run whole "$b" rmsnorm_linear_b1; done
for b in "$@"; do run "60 s limit" "$b" qknorm_b1 --time-limit 60; done
for b in "$first" "$last"; do run "whole, 600 s limit" "$b" ntrans_b1 --time-limit 600; done
echo "# end $(date -u +%FT%TZ)" | tee -a "$out"
