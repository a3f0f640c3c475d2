# leading comment
   # indented comment
input X : f32[4, 8]   # trailing comment on an input
input W : f32[8, 8]#no space before the hash

# blank lines and comments between statements
Y = matmul(  # inside the parentheses
    X,       # first operand
    W        # second operand
)            # after the closing parenthesis
Z = sum(Y, # comment between arguments
        dim=1)
output Y, Z  # comment after the outputs
# final comment without a newline