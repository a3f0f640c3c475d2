# RMSNorm followed by a linear layer (LLaMA-2-7B sizes) over a batch of B tokens, B given per
# call (a symbolic dim, docs/tuning.md): `mugen portfolio` compiles a variant per capacity,
# `mugen run --dim B=37` runs the smallest that holds 37 rows.
dim B [1, 512]
input X : f16[B, 4096]
input W : f16[4096, 6144]
R = sqrt(sum(sqr(X), dim=1) / 4096)
O = matmul(X / R, W)
output O
