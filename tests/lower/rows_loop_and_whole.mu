# ROW form: a sum over a long row (the loop walks it), a max-subtracting softmax over a short
# one (whole rows in a tile), a reduction over a middle dim, and a grouped sum (kernel level).
input X : f32[6, 4096]
input Y : f16[4, 5, 48]
A = sum(sqr(X), dim=1) / 4096
E = exp(Y - max(Y, dim=2))
P = E / sum(E, dim=2)
C = sum(Y, dim=1) * 2
D = sum(X, dim=1, group=512)
output A, P, C, D
