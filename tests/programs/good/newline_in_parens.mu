input A : bf16[2, 3, 4]
input B : bf16[2, 4, 5]
C = matmul(
  A,
  B
)
D = reshape(C,
  shape=[
    2,
    15
  ])
E = repeat(D, times=[
  1, 2])
output E
