# An MoE router: logits over 64 experts and their softmax (without the max), 16 tokens of 2048.
input X : f16[16, 2048]
input Wr : f16[2048, 64]
E = exp(matmul(X, Wr))
O = E / sum(E, dim=1)
output O
