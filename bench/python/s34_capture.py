"""#30's torch-graph gap (docs/notes/2026-11-29-s34.md): the same Kernel calls captured by the
driver directly (cuStreamBeginCapture on a stream of ours, through ctypes), their graph dumped
(cuGraphDebugDotPrint, verbose: edge types) and replayed with mugen-run-style timing, beside
PyTorch's capture of the same calls (bench/python/suite.py graph_time). Prints µs a call for
both, and writes OUT/NAME-driver.dot."""
import ctypes
import os
import sys

import torch

sys.path.insert(0, "bench/python")
import mugen  # noqa: E402
from suite import graph_time  # noqa: E402

cu = ctypes.CDLL("libcuda.so.1")
out = os.environ.get("OUT", "/tmp")


def check(r, what):
    if r:
        raise RuntimeError(f"{what}: CUresult {r}")


def driver_graph_time(fn, sets, reps=200):
    s = torch.cuda.Stream()
    h = ctypes.c_void_p(s.cuda_stream)
    g, ge = ctypes.c_void_p(), ctypes.c_void_p()
    with torch.cuda.stream(s):
        check(cu.cuStreamBeginCapture_v2(h, 2), "cuStreamBeginCapture")  # relaxed
        for st in sets:
            fn(*st)
        check(cu.cuStreamEndCapture(h, ctypes.byref(g)), "cuStreamEndCapture")
    check(cu.cuGraphInstantiateWithFlags(ctypes.byref(ge), g, ctypes.c_ulonglong(0)), "cuGraphInstantiate")
    t = []
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s):
        for i in range(reps + 3):
            a.record()
            check(cu.cuGraphLaunch(ge, h), "cuGraphLaunch")
            b.record()
            b.synchronize()
            if i >= 3:
                t.append(a.elapsed_time(b) * 1e3)
    t.sort()
    return t[len(t) // 2] / len(sets), g


for path in sys.argv[1:]:
    name = os.path.basename(path)[:-3]
    p = mugen.Program.load(path)
    k = mugen.Kernel(p, target="cuda")
    xs = [(torch.rand(d.shape, device="cuda") * 2 - 1).to(getattr(torch, d.dtype)) for d in k.inputs]
    sets = [xs] + [[x.clone() for x in xs] for _ in range(7)]
    for st in sets:
        k(*st)
    torch.cuda.synchronize()
    dt = [driver_graph_time(lambda *a: k(*a), sets) for _ in range(3)]
    check(cu.cuGraphDebugDotPrint(dt[0][1], os.path.join(out, name + "-driver.dot").encode(), ctypes.c_uint(1 | 2 | 4 | 8 | 0x400)), "dot")
    tt = [graph_time(lambda *a: k(*a), xs, wait=True)[0] for _ in range(3)]
    print(f"{name}: driver capture {', '.join(f'{x[0]:.2f}' for x in dt)} us; torch capture {', '.join(f'{x:.2f}' for x in tt)} us", flush=True)
