# program: tests/verify/programs/bigmul.mu
# expect: 0
# class: inf
# why: X * 10^54 (outside f32) as X * 10^18 * (10^18 * 10^18): +-inf in both
input X : f32[4, 8]
O = X * 1e18 * (1e18 * 1e18)
output O
