#!/bin/sh
# Session 32 A/B (docs/notes/2026-11-28-s32.md): QKV two blocks an SM, seqattn stages, sketch 4
OUTD=${OUTD:-/tmp}
sh bench/ragged/ab_call.sh "mugen-old mugen mugen@MUGEN_SEQATTN_STAGES=4 mugen@--schedule=sketch=4 mugen@MUGEN_SEQATTN_LONG=0" "race squad" "32 128" 2>&1 | tee $OUTD/ab.txt
sh bench/ragged/ab_call.sh "mugen-old mugen" "mnli cola" "128" 2>&1 | tee -a $OUTD/ab.txt
