"""An nn.Module through mugen: its parameters become inputs read at each call; an operator
mugen lacks leaves the graph to PyTorch, and explain says which. With PyTorch 2,
torch.compile(model, backend="mugen") takes the same path for each graph it captures.
Run: python3 examples/python/torch_module.py"""
import torch

import mugen

model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.SiLU(), torch.nn.Linear(512, 64))
x = torch.randn(16, 256)
f = mugen.compile(model, [x])
print(f.explain.splitlines()[0])
print("max |mugen - PyTorch|:", (f(x) - model(x)).abs().max().item())
if hasattr(torch, "compile"):
    m2 = torch.compile(model, backend="mugen")
    print("torch.compile(backend='mugen'):", (m2(x) - model(x)).abs().max().item())
g = mugen.compile(lambda t: torch.cumsum(t, 1), [x])
print(g.explain)
