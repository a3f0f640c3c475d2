# Residual add then RMSNorm with gain, 1 token of 8192 (the fused add-norm of decoders).
input X : f16[1, 8192]
input R : f16[1, 8192]
input G : f16[8192]
O = rmsnorm(X + R, dim=1) * G
output O
