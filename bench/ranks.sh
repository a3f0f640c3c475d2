#!/bin/sh
# Scaling of the search over ranks and threads on one machine (docs/search.md, "Ranks"):
#   sh bench/ranks.sh BUILD/mugen BUILD_MPI/mugen PROGRAM [search options...]
# Runs PROGRAM's search (no cache) with 1 process of 1 and 2 threads, then under mpirun with
# 1, 2 and 4 ranks of 1 thread and 2 ranks of 2 threads; prints each run's wall time, states
# and states per second, and whether its ranked list is the first run's.
M=$1 MP=$2 P=$3
shift 3
export MUGEN_SEARCH_CACHE=off OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
T=$(mktemp -d)
trap 'rm -rf "$T"' 0
list() { for f in $(ls "$1" | grep '^ugraph-.*\.mu$' | sort -t- -k2 -n); do echo "== $f"; grep -v '^#' "$1/$f"; done; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(date -u +%F)"
echo "program: $P $*"
printf '%-22s %8s %12s %12s %6s %s\n' run wall_s states states/s found same
i=0
for run in "1 1 plain" "1 2 plain" "1 1 mpi" "2 1 mpi" "4 1 mpi" "2 2 mpi"; do
    set -- $run "$@"
    n=$1 th=$2 how=$3
    shift 3
    d=$T/r$i
    t0=$(date +%s.%N)
    if [ "$how" = plain ]; then
        "$M" search "$P" "$@" --threads "$th" --quiet --out "$d" >/dev/null 2>&1
    else
        mpirun -n "$n" "$MP" search "$P" "$@" --threads "$th" --quiet --out "$d" >/dev/null 2>&1
    fi
    t1=$(date +%s.%N)
    st=$(sed -n 's/^search: [0-9.]* s, \([0-9]*\) states.*/\1/p' "$d/summary.txt")
    found=$(ls "$d" | grep -c '^ugraph-.*\.mu$')
    list "$d" >"$d.list"
    same=yes
    [ $i -gt 0 ] && ! cmp -s "$T/r0.list" "$d.list" && same=NO
    wall=$(echo "$t1 - $t0" | bc)
    printf '%-22s %8.1f %12s %12.0f %6s %s\n' "$how $n rank x $th thr" "$wall" "$st" "$(echo "$st / $wall" | bc)" "$found" "$same"
    i=$((i + 1))
done
