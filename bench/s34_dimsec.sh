#!/bin/sh
# Session 34: the symbolic-dim part of make test-gpu (tools/gpu_check.sh) alone, after its refactor.
export LD_LIBRARY_PATH=$PWD/.carry/lib
export MUGEN_CACHE_DIR=$(mktemp -d)
B=.carry/bin OUTD=${OUT:-/tmp} pass=0 failn=0 CD=
log=$OUTD/log.txt
eval "$(sed -n '/^# symbolic dims (docs\/tuning.md): the portfolio of/,/^rm -f "\$OUTD\/dim.txt"/p' tools/gpu_check.sh)"
echo "$pass passed, $failn failed"
