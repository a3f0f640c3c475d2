#!/bin/sh
# Session 32 A/B (docs/notes/2026-11-28-s32.md), all 8 cases: the session's start (mugen-old),
# QKV paired + seqattn 4 stages (mugen-prev with MUGEN_SEQATTN_STAGES=4), + the item search
# split among threads (mugen)
OUTD=${OUTD:-/tmp}
sh bench/ragged/ab_call.sh "mugen-old mugen-prev@MUGEN_SEQATTN_STAGES=4 mugen" 2>&1 | tee $OUTD/ab.txt
