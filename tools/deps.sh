#!/bin/sh
# Checks for what the build needs (a C compiler, make, libcjson-dev; libz3-dev, clang,
# libclang-rt-dev (libFuzzer), python3-numpy, python3-pytest, python3-torch, graphviz, libopenmpi-dev and
# openmpi-bin for the tests) and, on Debian or
# Ubuntu, installs what is missing (as root, or through sudo). Prints what to install
# otherwise. Quiet when everything is present.
missing=""
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
[ -f /usr/include/cjson/cJSON.h ] || missing="$missing libcjson-dev"
[ -f /usr/include/z3.h ] || missing="$missing libz3-dev" # tests/z3: the independent check of the search's pruning
# tests/mpi (make test): the search over MPI ranks, built by make mpi. Optional: a machine that
# cannot install them still builds mugen (tests/mpi then fails, saying why).
optional=""
command -v mpicc >/dev/null 2>&1 || optional="$optional libopenmpi-dev"
command -v mpirun >/dev/null 2>&1 || optional="$optional openmpi-bin"
# tests/python: a notebook's picture of a program (python/mugen/display.py) is Graphviz's
# dot -Tsvg; without it the notebook shows text and that test is skipped
command -v dot >/dev/null 2>&1 || optional="$optional graphviz"
# tests/fuzz (make fuzz-short, part of make test): clang and its libFuzzer runtime
if ! command -v clang >/dev/null 2>&1; then
    missing="$missing clang libclang-rt-dev"
elif ! sh "$(dirname "$0")/../tests/fuzz/need_libfuzzer.sh" clang 2>/dev/null; then
    missing="$missing libclang-rt-dev"
fi
# tests/python (make test): the Python package against PyTorch on the CPU, under Debian's
# Python with its numpy, pytest and torch (docs/python.md)
for m in numpy:python3-numpy pytest:python3-pytest torch:python3-torch; do
    /usr/bin/python3 -c "import ${m%%:*}" >/dev/null 2>&1 || missing="$missing ${m#*:}"
done
# NVRTC (CUDA toolkit) is loaded at run time, not linked: the build works without it, but the
# tests compile every generated kernel with it. Say so clearly when it is missing.
nvrtc_found() {
    [ -n "$MUGEN_NVRTC" ] && [ -f "$MUGEN_NVRTC" ] && return 0
    for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu; do
        ls "$d"/libnvrtc.so* >/dev/null 2>&1 && return 0
    done
    ldconfig -p 2>/dev/null | grep -q libnvrtc
}
if ! nvrtc_found; then
    echo "mugen: libnvrtc (CUDA toolkit) not found: 'make test' compiles every generated kernel" >&2
    echo "       with NVRTC and will fail. Install the CUDA toolkit or set MUGEN_NVRTC=/path/to/libnvrtc.so." >&2
fi
if [ -n "$optional" ] && command -v apt-get >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO=sudo
    echo "mugen: installing$optional (make mpi and the notebook's pictures; optional)" >&2
    $SUDO apt-get update -qq >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $optional >/dev/null 2>&1 ||
        echo "mugen: note: could not install$optional: make mpi, tests/mpi and the SVG test need them; the plain build does not" >&2
fi
[ -z "$missing" ] && exit 0
echo "mugen: installing missing build dependencies:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi
fi
if command -v apt-get >/dev/null 2>&1; then
    $SUDO apt-get update -qq >/dev/null 2>&1
    if DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null; then
        exit 0
    fi
fi
echo "mugen: could not install:$missing. Install them (Debian: apt-get install$missing) and retry." >&2
exit 1
