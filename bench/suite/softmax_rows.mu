# Row softmax with max subtraction, 256 rows of 2048.
input X : f16[256, 2048]
E = exp(X - max(X, dim=1))
O = E / sum(E, dim=1)
output O
