# no inputs at all: a program of constants
A = 1 + 2 * 3
B = A / 4 - 0.5
output A, B
