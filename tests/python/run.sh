#!/bin/sh
# The Python package's tests (tests/run_all.sh): pytest on tests/python with the library of
# `make pylib`, under the Python that has numpy and pytest (and torch for test_torch.py:
# Debian's python3-torch, python3-numpy and python3-pytest, which tools/deps.sh installs).
# Ends with "N passed, N failed" (skips counted apart).
PY=${MUGEN_PYTHON:-}
if [ -z "$PY" ]; then
    for p in /usr/bin/python3 python3; do
        if "$p" -c "import numpy, pytest" >/dev/null 2>&1; then PY=$p; break; fi
    done
fi
if [ -z "$PY" ]; then
    echo "tests/python: no Python with numpy and pytest (Debian: apt-get install python3-numpy python3-pytest)"
    echo "0 passed, 1 failed"
    exit 1
fi
out=$(mktemp)
"$PY" -m pytest -q -p no:cacheprovider tests/python >"$out" 2>&1
rc=$?
cat "$out"
last=$(tail -n 1 "$out")
p=$(echo "$last" | sed -n 's/.*\b\([0-9][0-9]*\) passed.*/\1/p')
f=$(echo "$last" | sed -n 's/.*\b\([0-9][0-9]*\) failed.*/\1/p')
e=$(echo "$last" | sed -n 's/.*\b\([0-9][0-9]*\) error.*/\1/p')
rm -f "$out"
echo "${p:-0} passed, $(( ${f:-0} + ${e:-0} + (rc != 0 && ${f:-0} + ${e:-0} == 0) )) failed"
exit $rc
