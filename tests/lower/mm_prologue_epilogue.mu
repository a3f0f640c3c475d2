# MM form: an elementwise prologue on A (a row statistic and a gain), an epilogue with a bias
# and a residual (iterators that do not move with the loop, read after it).
input X : f16[32, 256]
input G : f16[256]
input W : f16[256, 96]
input Bias : f16[96]
input R : f16[32, 96]
S = sqrt(sum(sqr(X), dim=1) / 256 + 0.001)
O = matmul(X / S * G, W) + Bias + R
output O
