# A token-wise ragged program (no attention over the ragged dim): mugen search --lengths
# searches its token form at that batch's capacity (docs/ragged.md), and the μGraphs found run
# any batch of that capacity against the per-sequence reference (the codegen suite, on C).
lengths len[4] max=40
input x : f16[4, len, 64]
input g : f16[64]
y = x * rsqrt(mean(x * x, dim=-1) + 1e-6) * g
output y
