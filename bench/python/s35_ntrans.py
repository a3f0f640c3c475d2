"""Session 35, issue #30: why a one-kernel suite case (nTrans) times 0.3 µs slower in a torch
CUDA graph than `mugen run` on some machines. The same mugen.compile call captured by PyTorch
with (1) the suite's input sets (clones: PyTorch packs small tensors side by side), (2) every
input and output at its own 2 MiB-aligned address (as the command line's own allocations),
(3) outputs preallocated (out=) beside (1)'s inputs; each by g.replay() and the raw exec, and
with a wait after each replay; against `mugen run` in the same call.
    python3 bench/python/s35_ntrans.py --bin .carry/bin/mugen"""
import argparse
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402
from suite import torch, mugen, CASES, cli_time  # noqa: E402

cu = ctypes.CDLL("libcuda.so.1")


def capture(call, sets):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            for i, st in enumerate(sets):
                call(i, st)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i, st in enumerate(sets):
            call(i, st)
    return g


def timed(launch, n, wait=False, reps=300):
    for _ in range(3):
        launch()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        a.record()
        launch()
        b.record()
        if wait:
            b.synchronize()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) * 1e3 for a, b in ev)
    return t[len(t) // 2] / n


def aligned(shape, dtype):
    """A tensor alone at a 2 MiB-aligned address (a 2 MiB block of its own)."""
    n = 1 << 21
    big = torch.empty(n * 2, dtype=torch.uint8, device="cuda")
    off = (-big.data_ptr()) % n
    nb = torch.Size(shape).numel() * torch.tensor([], dtype=dtype).element_size()
    t = big[off:off + nb].view(dtype).view(shape)
    t._keep = big
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(suite.ROOT, "build", "mugen"))
    ap.add_argument("--cases", default="ntrans_b1,ntrans_b8,lora")
    a = ap.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    gen = torch.Generator(device="cuda").manual_seed(30)
    st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    for case, fn, spec in CASES:
        if case not in a.cases.split(","):
            continue
        xs = [((torch.rand(s, device="cuda", generator=gen) * 2 - 1) * c).half() for s, c in spec]
        mc = mugen.compile(fn, xs, progress=False)
        k = mc.kernel
        packed = [xs] + [[x.clone() for x in xs] for _ in range(7)]
        spread = [[aligned(x.shape, x.dtype).copy_(x) for x in xs] for _ in range(8)]
        outs_p = [[torch.empty(d.shape, dtype=torch.float16, device="cuda") for d in k.outputs] for _ in range(8)]
        outs_a = [[aligned(d.shape, torch.float16) for d in k.outputs] for _ in range(8)]
        ways = {"packed, fresh outputs": (packed, lambda i, s: mc(*s)),
                "packed, out= packed": (packed, lambda i, s: k(*s, out=outs_p[i])),
                "2MiB-aligned, fresh outputs": (spread, lambda i, s: mc(*s)),
                "2MiB-aligned, out= aligned": (spread, lambda i, s: k(*s, out=outs_a[i]))}
        cells = []
        for name, (sets, call) in ways.items():
            g = capture(call, sets)
            raw = ctypes.c_void_p(g.raw_cuda_graph_exec())
            cells.append(f"{name}: replay {timed(g.replay, 8):.2f} raw {timed(lambda: cu.cuGraphLaunch(raw, st), 8):.2f} "
                         f"wait {timed(g.replay, 8, True):.2f}")
            del g
        tc = [cli_time(a.bin, case)[0] for _ in range(2)]
        print(f"{case}: " + "; ".join(cells) + f"; mugen run {tc[0]:.2f} {tc[1]:.2f}", flush=True)


if __name__ == "__main__":
    main()
