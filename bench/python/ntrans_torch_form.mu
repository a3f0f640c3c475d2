input l_h_ : f16[1, 4096]
input l_x_ : f16[1, 4096]
input l_alpha_ : f16[1, 4096]
sub = l_h_ - l_x_
mul = sub * sub
t6 = sum(mul, dim=1)
mean = t6 / 4096
sqrt = sqrt(mean)
truediv = sub / sqrt
mul_1 = l_alpha_ * truediv
add = l_x_ + mul_1
mul_2 = add * add
t14 = sum(mul_2, dim=1)
mean_1 = t14 / 4096
sqrt_1 = sqrt(mean_1)
truediv_1 = add / sqrt_1
output truediv_1

