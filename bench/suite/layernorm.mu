# LayerNorm with gain and bias over 4096 features, 256 rows.
input X : f16[256, 4096]
input G : f16[4096]
input B : f16[4096]
D = X - sum(X, dim=1) / 4096
O = D / sqrt(sum(sqr(D), dim=1) / 4096 + 0.00001) * G + B
output O
