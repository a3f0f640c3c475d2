"""The graph PyTorch captures around two Kernel calls, dumped as DOT (CUDAGraph.debug_dump):
do its edges between our kernels keep programmatic dependent launch (#30's torch-graph gap,
docs/notes/2026-11-29-s34.md)? Writes OUT/NAME-torch.dot for each program given."""
import os
import sys

import torch

import mugen

out = os.environ.get("OUT", "/tmp")
for path in sys.argv[1:]:
    p = mugen.Program.load(path)
    k = mugen.Kernel(p, target="cuda")
    xs = [(torch.rand(d.shape, device="cuda") * 2 - 1).to(getattr(torch, d.dtype)) for d in k.inputs]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        k(*xs)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    g.enable_debug_mode()
    with torch.cuda.graph(g):
        k(*xs)
        k(*xs)
    name = os.path.basename(path)[:-3]
    g.debug_dump(os.path.join(out, name + "-torch.dot"))
    print(name, "dumped", flush=True)
