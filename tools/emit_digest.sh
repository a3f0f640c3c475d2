#!/bin/sh
# tools/emit_digest.sh MUGEN: one line per (file, target, switches) with the SHA-256 of the
# source `mugen emit` generates, for every example program and μGraph (examples/,
# examples/ugraphs/, bench/searched/, tests/ugraphs/), both targets; the optimizer switches
# and opt-in launch forms on the examples' μGraphs. The codegen suite compares this with
# tests/golden/emit.sha256, so a change of generated source is seen and explained in the
# commit that makes it; programs are emitted lowered (docs/lower.md) and with --plain
# (regenerate: sh tools/emit_digest.sh build/mugen > tests/golden/emit.sha256).
mugen=${1:-build/mugen}
LC_ALL=C
export LC_ALL
digest() { # target, switches, file
    h=$("$mugen" emit --target "$1" $2 "$3" 2>&1 | sha256sum | cut -c1-16)
    echo "$h $1 ${2:--} $3"
}
for f in examples/*.mu examples/ugraphs/*.mu bench/searched/*/ugraph-*.mu tests/ugraphs/*/*.mu; do
    [ -f "$f" ] || continue
    digest cuda "" "$f"
    digest c "" "$f"
done
for f in examples/*.mu tests/ugraphs/programs/*.mu bench/suite/*.mu; do # programs: lowered above,
    [ -f "$f" ] || continue                                          # the per-operator path here
    digest cuda --plain "$f"
    digest c --plain "$f"
done
for f in bench/suite/*.mu; do
    digest cuda "" "$f"
    digest c "" "$f"
done
for f in examples/ugraphs/*.mu; do
    for s in --no-reuse --no-depth --no-layout --no-pipeline --no-regacc --no-blocksize \
        --no-chain --wgmma --persist --megakernel --queues --cluster --prefetch; do
        digest cuda "$s" "$f"
    done
    digest c --no-reuse "$f"
done
