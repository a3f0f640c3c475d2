# session 23: the persistent launch's watchdog (planted stall and fault), its cost, and the
# L2 prefetch on the decode step; OLD = session 22's binary. (Run at a commit where prefetch
# was on by default and --no-prefetch turned it off; it is now opt-in, --prefetch.)
export LD_LIBRARY_PATH=$PWD/.carry/lib
nvidia-smi --query-gpu=name --format=csv,noheader
.carry/bin/run-faults examples/lora.mu examples/ugraphs/lora.mu examples/gqa_b1.mu 2>&1 | tee $OUT/run-faults.txt
sh bench/persist_ab.sh .carry/s22/mugen .carry/bin/mugen examples/gqa_b1.mu examples/lora.mu bench/general/mlp_silu_down_b8.mu examples/qknorm_b1.mu 2>&1 | tee $OUT/persist-watchdog.txt
sh bench/megakernel/ab3.sh .carry/s22/mugen .carry/bin/mugen --no-prefetch 1 100 examples/decode_1b_b1.mu examples/gqa_b1.mu examples/qknorm_b1.mu bench/general/mlp_swiglu_down_b1.mu bench/general/rmsnorm_eps_linear_b1.mu 2>&1 | tee $OUT/ab-prefetch.txt
