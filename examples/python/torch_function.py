"""A PyTorch function through mugen.compile: traced, translated, compiled, called on tensors
(CPU tensors on the C backend, CUDA tensors on the GPU). Run: python3 examples/python/torch_function.py"""
import torch

import mugen


def gated_mlp(x, w1, w2):
    return torch.nn.functional.silu(x @ w1) * (x @ w2)


dev = "cuda" if torch.cuda.is_available() else "cpu"
x, w1, w2 = (torch.randn(s, device=dev).half() * 0.1 for s in [(8, 512), (512, 256), (512, 256)])
f = mugen.compile(gated_mlp, [x, w1, w2], explain=True)  # prints the program and the split
y = f(x, w1, w2)
ref = gated_mlp(x.float(), w1.float(), w2.float())
print(f"relative error against PyTorch in f32: {((y.float() - ref).norm() / ref.norm()).item():.2e}")
