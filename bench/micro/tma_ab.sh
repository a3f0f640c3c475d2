#!/bin/sh
# TMA product loops on and off (--no-tma) side by side on the suite's programs, then the suite
# beside PyTorch (session 16, docs/notes/2026-11-27-tma.md). Needs .carry (make gpu-carry) and
# .carry/notma/mugen, a wrapper adding --no-tma. OUT: where the files go.
O=${OUT:-/tmp}
sh bench/micro/ab_programs.sh .carry/notma/mugen .carry/bin/mugen bench/suite/*.mu 2>&1 | tee "$O/ab.txt"
OUT_DIR="$O/suite" sh bench/suite.sh .carry/bin --no-plain 2>&1 | tail -25
