"""Where a Kernel call's host time goes (issue #30's "Python overhead per call"), on CUDA
tensors, for a few suite programs run whole (Program + Kernel, no torch.compile): each line is
the host time per call (perf_counter over N calls queued without waiting, median of 5 rounds),
for: the call with fresh outputs; torch.empty of those outputs alone; the call with out=;
Kernel._launch with the pointers ready (ctypes + mg_launch); a ctypes call that does nothing
(mg_program_n_inputs); the raw stream getter; then the GPU time of the kernels (a CUDA graph
of the call, replayed). MUGEN_LAUNCH_GRAPH=0 in the environment: direct launches instead of
mg_launch's own graph."""
import ctypes
import os
import statistics
import sys
import time

import torch

import mugen
from mugen import _capi as C
from mugen.core import _ctx

N = 50


def host(fn):
    rounds = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(N):
            fn()
        rounds.append((time.perf_counter() - t0) / N * 1e6)
        torch.cuda.synchronize()
    return statistics.median(rounds)


def main(paths):
    print(f"device {torch.cuda.get_device_name()}, MUGEN_LAUNCH_GRAPH={os.environ.get('MUGEN_LAUNCH_GRAPH', '1')}", flush=True)
    for path in paths:
        p = mugen.Program.load(path)
        k = mugen.Kernel(p, target="cuda")
        xs = [(torch.rand(d.shape, device="cuda") * 2 - 1).to(getattr(torch, d.dtype)) for d in k.inputs]
        outs = [torch.empty(d.shape, dtype=getattr(torch, d.dtype), device="cuda") for d in k.outputs]
        meta = [(torch.Size(d.shape), getattr(torch, d.dtype)) for d in k.outputs]
        ip, op = [x.data_ptr() for x in xs], [o.data_ptr() for o in outs]
        stream = torch.cuda.current_stream().cuda_stream
        raw = torch._C._cuda_getCurrentRawStream
        k(*xs)
        fig = {
            "call": host(lambda: k(*xs)),
            "empty": host(lambda: [torch.empty(s, dtype=t, device="cuda") for s, t in meta]),
            "out=": host(lambda: k(*xs, out=outs)),
            "_launch": host(lambda: k._launch(ip, op, stream, None)),
            "ctypes": host(lambda: C.lib.mg_program_n_inputs(p._p)),
            "stream": host(lambda: raw(0)),
            "_ctx": host(_ctx),
        }
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            k(*xs, out=outs)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            k(*xs, out=outs)
        g.replay()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(200):
            g.replay()
        torch.cuda.synchronize()
        gpu = (time.perf_counter() - t0) / 200 * 1e6
        print(f"{os.path.basename(path):24s} " + ", ".join(f"{a} {b:.1f}" for a, b in fig.items()) +
              f" us; graph replay {gpu:.1f} us, {k.info['launches']} launches", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
