"""Does `mugen run`'s timing flatter small kernels by writing every input set's outputs to one
buffer? (#30: nTrans through torch.compile 1.12-1.14x the command line's time, session 33.)
For each program: the Kernel's time as bench/python/suite.py's graph_time measures it (a CUDA
graph of one call per rotating input set, median of 200 replays), with fresh outputs a call
(as a torch.compile'd function allocates them) and with one set of outputs for every call
(out=, as `mugen run` shares them); `mugen run`'s own figure is printed beside by the caller."""
import sys

import torch

sys.path.insert(0, "bench/python")
import mugen  # noqa: E402
from suite import graph_time  # noqa: E402


for path in sys.argv[1:]:
    p = mugen.Program.load(path)
    k = mugen.Kernel(p, target="cuda")
    xs = [(torch.rand(d.shape, device="cuda") * 2 - 1).to(getattr(torch, d.dtype)) for d in k.inputs]
    outs = [torch.empty(d.shape, dtype=getattr(torch, d.dtype), device="cuda") for d in k.outputs]
    fresh = [graph_time(lambda *a: k(*a), xs)[0] for _ in range(3)]
    shared = [graph_time(lambda *a: k(*a, out=outs), xs)[0] for _ in range(3)]
    synced = [graph_time(lambda *a: k(*a), xs, wait=True)[0] for _ in range(3)]
    side = torch.cuda.Stream()  # the replays and their events on a stream of its own, not the default one
    with torch.cuda.stream(side):
        other = [graph_time(lambda *a: k(*a), xs)[0] for _ in range(3)]
    print(f"{path}: fresh outputs {', '.join(f'{t:.2f}' for t in fresh)} us; one set of outputs {', '.join(f'{t:.2f}' for t in shared)} us; "
          f"fresh outputs, a wait after each replay {', '.join(f'{t:.2f}' for t in synced)} us; "
          f"fresh outputs, timed on a side stream {', '.join(f'{t:.2f}' for t in other)} us", flush=True)
