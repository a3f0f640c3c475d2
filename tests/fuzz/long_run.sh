#!/bin/bash
# The long fuzz run (issue 24; bench/results/fuzz-2026-11-25.txt): both formats at once, W
# workers each (libFuzzer -fork), SECS seconds, then the new inputs minimized against the
# corpus. Run from a folder holding fuzz_text, fuzz_json (make fuzz-build), mu.dict, json.dict,
# corpus/{text,json} and lib/libcjson.so.1 (carried: the device machine may lack it):
#   bash long_run.sh [W=8] [SECS=520]     (OUT=folder for the results tarball, as the device
#                                          tool sets it)
# Prints each format's CPU time and last libFuzzer status lines, and the machine's CPU
# jiffies before and after; crashes (art-*), the new corpus files (min-*) and the logs go to
# $OUT/fuzz-out.tgz.
W=${1:-8}
SECS=${2:-520}
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
nproc; uname -a; date -u
head -n 1 /proc/stat >/tmp/stat0
for f in text json; do
    mkdir -p /tmp/new-$f /tmp/art-$f /tmp/min-$f
    dict=mu.dict; [ $f = json ] && dict=json.dict
    ( TIMEFORMAT="$f: real %R s, user %U s, sys %S s"; time ./fuzz_$f -fork=$W -ignore_crashes=1 \
        -ignore_timeouts=1 -ignore_ooms=1 -max_total_time=$SECS -max_len=8192 -timeout=10 \
        -rss_limit_mb=2048 -dict=$dict -artifact_prefix=/tmp/art-$f/ /tmp/new-$f corpus/$f \
        >/tmp/$f.log 2>&1 ) 2>/tmp/$f.time &
done
wait
head -n 1 /proc/stat >/tmp/stat1
echo "cpu jiffies (user nice system idle ...) before/after:"; cat /tmp/stat0 /tmp/stat1; getconf CLK_TCK
for f in text json; do
    cat /tmp/$f.time
    grep -v NEW_FUNC /tmp/$f.log | grep -E '^#|INFO: exiting|crash|ERROR|SUMMARY' | tail -n 4
    ls /tmp/art-$f | head -20
    ./fuzz_$f -merge=1 -max_len=8192 /tmp/min-$f corpus/$f /tmp/new-$f >/tmp/merge-$f.log 2>&1
    tail -n 1 /tmp/merge-$f.log
    # only the files the checked-in corpus lacks
    for x in /tmp/min-$f/*; do [ -e corpus/$f/${x##*/} ] && rm "$x"; done
    echo "$f: $(ls /tmp/min-$f | wc -l) new corpus files"
    grep -v NEW_FUNC /tmp/$f.log > /tmp/$f-stats.log
done
tar czf $OUT/fuzz-out.tgz -C /tmp art-text art-json min-text min-json text-stats.log json-stats.log text.time json.time merge-text.log merge-json.log
ls -la $OUT
