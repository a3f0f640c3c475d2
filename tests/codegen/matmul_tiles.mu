# The C target's tiled matmuls (src/codegen/c/matmul.c) on shapes its tiles do not divide,
# run by tests/codegen/run.sh against the reference on fresh random inputs:
# P: N = 1031 columns (a 1024-wide tile and one of 7), 19 rows (16 a tile at that width, then
#    3), depth 1100 (4 steps a pass), both batch dims broadcast (A's second, W's first), a
#    prologue (A * 0.5) read in place, f16 times bf16;
# Q: 200 rows of 100 columns (163 rows a tile, then 37), depth 6 (2 steps a pass), f32 A with
#    exp as its prologue, B broadcast over the batch;
# R: one row times one column, depth 37 (1 step a pass); S: depth 1, one column times one row.
input A : f16[2, 1, 19, 1100]
input W : bf16[1, 3, 1100, 1031]
input X : f32[3, 200, 6]
input Y : f16[1, 6, 100]
input Z : bf16[1, 37]
input V : f32[37, 1]
P = matmul(A * 0.5, W)
Q = matmul(exp(X), Y)
R = matmul(Z, V)
S = matmul(V, Z)
output P, Q, R, S
