input A : f16[2, 3]
input B : f16[3]
input C : f16[2]
D = A / B
E = D / C
output E
