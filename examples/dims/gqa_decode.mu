# Group-query attention decode over a KV length L given per call (LLaMA-3-70B heads as Mirage's
# GQA benchmark, examples/gqa_b1.mu, at L = 4096): a reduced dim (docs/tuning.md "Reduced dims").
# `mugen portfolio` compiles a variant for each of L's capacities (128, 256, ..., 32768);
# `mugen run --dim L=1000` runs the variant for 1024 with L = 1000 a kernel parameter: K and V
# entries past 1000 are never read, whatever the buffers hold there.
dim L [128, 32768]
input Q : f16[2, 256, 64]
input K : f16[2, 64, L]
input V : f16[2, L, 64]
S = exp(matmul(Q, K))
O = matmul(S / sum(S, dim=2), V)
output O
