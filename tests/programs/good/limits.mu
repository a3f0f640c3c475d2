# sizes at the limits: checked, never evaluated
input A : f16[2147483647]
input B : f32[1024, 1024, 1024, 1024]
input C : bf16[1, 1, 1, 1]
D = B * 2
E = reshape(C, shape=[1])
F = A + 999999999999999999 - 0.000000000000000001 + 9e18
output D, E, F
