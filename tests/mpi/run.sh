#!/bin/sh
# The search over many ranks (docs/search.md, "Ranks"):
#   sh tests/mpi/run.sh BUILD/mugen BUILD_MPI/mugen     (POSIX sh, repo root; Open MPI's mpirun)
#
# One search (lora, small limits: about 2 s, 836 tasks, 50 μGraphs) run by the plain build with
# 1 and 2 threads and by the MPI build under mpirun with 1, 2 and 4 ranks (1 or 2 threads each);
# each must give exactly the same ranked list (the μGraph files, their verdict lines aside) and
# the same state count. Then: a time limit that stops every rank while it prepares (all stop,
# none crashes); a search stopped by its time limit with 2 ranks and resumed with 3
# (the same list, tasks reloaded from rank 0's checkpoint); a rank that dies as it takes its
# second task (MUGEN_TEST_RANK_EXIT, mpirun --enable-recovery; MUGEN_RANK_TIMEOUT=2), whose task
# another rank redoes (the same list); ranks given different searches (refused by every rank,
# no hang); a program the search refuses (an error, no hang); optimize under mpirun (refused).
# Every mpirun is bounded by `timeout`. Ends with one line "N passed, N failed".
M=$1
MP=$2
if [ -z "$M" ] || [ ! -x "$M" ] || [ -z "$MP" ]; then
    echo "usage: sh tests/mpi/run.sh BUILD/mugen BUILD_MPI/mugen" >&2
    exit 2
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}
if [ ! -x "$MP" ] || ! command -v mpirun >/dev/null 2>&1; then
    bad "no MPI build ($MP) or no mpirun: make mpi needs libopenmpi-dev and openmpi-bin (tools/deps.sh installs them)"
    echo "$pass passed, $fail failed"
    exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/mugen-mpi.XXXXXX") || exit 2
trap 'rm -rf "$T"' 0
trap 'exit 130' INT TERM
export MUGEN_SEARCH_CACHE=off OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
PROG=examples/lora.mu
OPTS="--max-kin 4 --max-kops 4 --max-bops 9 --quiet"
# mpi N ARGS...: mpirun of N ranks of the MPI build, at most 120 s
mpi() {
    n=$1
    shift
    timeout 120 mpirun -n "$n" "$@"
}
# list DIR: the ranked list of a search's output folder (each μGraph file, verdict lines aside)
list() {
    for f in $(ls "$1" | grep '^ugraph-.*\.mu$' | sort -t- -k2 -n); do
        echo "== $f"
        grep -v '^#' "$1/$f"
    done
}
states() { sed -n 's/^search: [0-9.]* s, \([0-9]*\) states.*/\1/p' "$1/summary.txt"; }
# same NAME DIR: DIR's list and state count are the reference's
same() {
    if [ ! -f "$2/summary.txt" ]; then
        bad "$1: no summary.txt"
        return
    fi
    list "$2" >"$T/list"
    if ! cmp -s "$T/ref.list" "$T/list"; then
        bad "$1: a ranked list unlike the single process's ($(grep -c '^==' "$T/list") μGraphs against $(grep -c '^==' "$T/ref.list"))"
    elif [ "$(states "$2")" != "$(states "$T/ref")" ]; then
        bad "$1: $(states "$2") states against $(states "$T/ref")"
    else
        ok
    fi
}

"$M" search $PROG $OPTS --threads 2 --out "$T/ref" >/dev/null 2>&1
list "$T/ref" >"$T/ref.list"
n=$(grep -c '^==' "$T/ref.list")
if [ "$n" -lt 10 ]; then
    bad "the single-process search found $n μGraphs (expected dozens)"
else
    ok
fi
"$M" search $PROG $OPTS --threads 1 --out "$T/t1" >/dev/null 2>&1
same "1 process, 1 thread" "$T/t1"
mpi 1 "$MP" search $PROG $OPTS --threads 2 --out "$T/r1" >/dev/null 2>"$T/r1.err"
same "1 rank, 2 threads" "$T/r1"
mpi 2 "$MP" search $PROG $OPTS --threads 1 --out "$T/r2" >/dev/null 2>"$T/r2.err"
same "2 ranks, 1 thread each" "$T/r2"
mpi 4 "$MP" search $PROG $OPTS --threads 1 --out "$T/r4" >/dev/null 2>"$T/r4.err"
same "4 ranks, 1 thread each" "$T/r4"
mpi 4 "$MP" search $PROG $OPTS --threads 2 --out "$T/r42" >/dev/null 2>"$T/r42.err"
same "4 ranks, 2 threads each" "$T/r42"
[ -s "$T/r4.err" ] && { echo "4 ranks wrote to stderr:"; head -5 "$T/r4.err"; }

# a time limit that ends every rank's preparation: all stop with the message, none crashes
# (a rank stopped before its workers existed dereferenced them: exit 139 until session 20)
mpi 2 "$MP" search $PROG $OPTS --threads 1 --time-limit 0.001 --out "$T/early" >/dev/null 2>"$T/early.err"
rc=$?
if [ "$rc" -eq 3 ] && grep -q 'time limit stopped' "$T/early.err" && ! grep -q 'another search\|Segmentation' "$T/early.err"; then
    ok
else
    bad "time limit during the preparation: exit $rc, $(head -c 200 "$T/early.err")"
fi
# stopped by the time limit with 2 ranks, resumed with 3: rank 0's checkpoint (a limit that
# stops it midway on this machine: 1 s, or 2 or 4 where preparing took the whole second)
for lim in 1 2 4; do
    rm -rf "$T/res"
    mpi 2 "$MP" search $PROG $OPTS --threads 1 --time-limit $lim --out "$T/res" >/dev/null 2>"$T/res1.err"
    done1=$(ls "$T/res/checkpoint" 2>/dev/null | grep -c '^task-')
    [ "$done1" -gt 0 ] && break
done
mpi 3 "$MP" search $PROG $OPTS --threads 1 --out "$T/res" >"$T/res2.out" 2>"$T/res2.err"
resumed=$(sed -n 's/.*(\([0-9]*\) resumed).*/\1/p' "$T/res/summary.txt")
if [ "$done1" -gt 0 ] && [ "$done1" -lt 836 ] && [ "$resumed" = "$done1" ]; then
    ok
else
    bad "resume: $done1 tasks checkpointed by the stopped run (expected some, not all), $resumed reloaded"
fi
list "$T/res" >"$T/list"
if cmp -s "$T/ref.list" "$T/list"; then ok; else bad "stopped with 2 ranks, resumed with 3: a ranked list unlike the single process's"; fi

# a rank dies with its second task; another rank redoes it
MUGEN_TEST_RANK_EXIT=1:2 MUGEN_RANK_TIMEOUT=2 mpi 3 --enable-recovery -x MUGEN_TEST_RANK_EXIT -x MUGEN_RANK_TIMEOUT \
    "$MP" search $PROG $OPTS --threads 1 --out "$T/dead" >/dev/null 2>"$T/dead.err"
if grep -q 'rank 1 exits with task' "$T/dead.err" && grep -q 'rank 1 silent for 2 s, presumed dead' "$T/dead.err"; then
    ok
else
    bad "dead rank: rank 1 did not exit and get presumed dead: $(head -3 "$T/dead.err")"
fi
list "$T/dead" >"$T/list"
if cmp -s "$T/ref.list" "$T/list"; then ok; else bad "dead rank: a ranked list unlike the single process's"; fi

# ranks given different searches: every rank refuses, nothing hangs
mpi 1 "$MP" search $PROG $OPTS --threads 1 --out "$T/mix" : -n 1 "$MP" search $PROG $OPTS --threads 1 --max-bops 8 \
    --out "$T/mix1" >"$T/mix.out" 2>"$T/mix.err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'prepared another search than rank 0' "$T/mix.err"; then
    ok
else
    bad "different searches on the ranks: exit $rc, $(head -2 "$T/mix.err")"
fi

# a program the search refuses: an error from every rank, no hang
mpi 2 "$MP" search examples/softmax_attention.mu --threads 1 --out "$T/no" >"$T/no.out" 2>"$T/no.err"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q 'not Lax' "$T/no.err"; then ok; else bad "refused program: exit $rc, $(head -2 "$T/no.err")"; fi

# optimize under mpirun is refused with a pointer to the search cache
mpi 2 "$MP" optimize $PROG --threads 1 >"$T/opt.out" 2>"$T/opt.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "only 'mugen search' runs" "$T/opt.err"; then ok; else bad "optimize under mpirun: exit $rc"; fi

[ -n "$MUGEN_MPI_TEST_SHOW" ] && for f in "$T"/*.err; do echo "== $f"; head -5 "$f"; done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
