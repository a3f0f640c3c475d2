# Row reductions whose length no lane count divides (1025 and 4099 elements, as a decode
# step's softmax over a cache of 1024 plus the new token): a block's lanes must not read past
# the row (the CUDA reduction once unrolled by four whatever the length: illegal address).
input S : f32[2, 4, 1025]
input T : f16[3, 4099]
E = exp(S - max(S, dim=2))
P = E / sum(E, dim=2)
Q = sum(sqr(T), dim=1)
output P, Q
