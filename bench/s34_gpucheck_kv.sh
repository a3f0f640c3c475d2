#!/bin/sh
# Session 34: the reduced-dim part of make test-gpu alone (tools/gpu_check.sh, from its dim_run
# helper to the end of its reduced-dim loop, taken from that file as it stands).
export LD_LIBRARY_PATH=$PWD/.carry/lib
B=${B:-.carry/bin} OUTD=${OUT:-/tmp} pass=0 failn=0 CD=
log=$OUTD/log.txt
eval "$(sed -n '/^# dim_run LABEL PATTERN ARGS/,/^}/p; /^# reduced dims (a KV length/,/^rm -f "\$OUTD\/dim.txt"/p' tools/gpu_check.sh)"
echo "$pass passed, $failn failed"
