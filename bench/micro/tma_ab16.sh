REPS=100 sh bench/micro/ab_programs.sh .carry/notma/mugen .carry/bin/mugen bench/suite/mlp_relu.mu bench/suite/residual_mlp.mu bench/suite/swiglu_b8.mu bench/suite/swiglu_prefill.mu bench/suite/bias_relu.mu 2>&1 | tee $OUT/ab16.txt
REPS=20 sh bench/micro/ab_programs.sh .carry/notma/mugen .carry/bin/mugen examples/decode_1b_b8.mu examples/decode_1b_b1.mu 2>&1 | tee $OUT/abdec.txt
