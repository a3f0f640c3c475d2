"""A mugen program from text, compiled for the C backend and called on NumPy arrays, checked
against mugen's reference evaluator. Run: python3 examples/python/numpy_program.py"""
import numpy as np

import mugen

p = mugen.Program("""
input X : f16[16, 256]
input W : f16[256, 512]
R = sqrt(sum(sqr(X), dim=1) / 256)
O = matmul(X / R, W)
output O
""")
k = mugen.Kernel(p, target="c")  # target="cuda" takes CUDA tensors (torch) on a GPU
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (16, 256)).astype(np.float16)
w = rng.uniform(-0.1, 0.1, (256, 512)).astype(np.float16)
o = k(x, w)
ref = p.reference(x, w)[0]
print(p)
print(f"{k.info['launches']} kernels on {k.info['device']}; relative error "
      f"{np.linalg.norm(o - ref) / np.linalg.norm(ref):.2e}")
