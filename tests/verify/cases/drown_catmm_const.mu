# program: tests/verify/programs/catmm.mu
# expect: 3
# class: drown
# why: concat along rows: c*X with c = -8.223371137059149241 = 1 mod p, q beside 10^5*A*B
input X : f32[4, 16]
input A : f32[4, 16]
input B : f32[16, 16]
O = concat(X * -8.223371137059149241, matmul(A, B) * 100000, dim=0)
output O
