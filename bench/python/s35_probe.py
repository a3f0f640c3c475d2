"""Session 35, issue #30: (A) the host cost of the primitives a call is made of (µs a call, N
calls queued without waiting, median of 5 rounds), PyTorch's own floors beside mugen's; (B) for
a few suite cases, whether the gap of a torch CUDA graph against `mugen run` is PyTorch's replay
(CUDAGraph.replay's prologue) rather than the kernels: the same captured graph replayed by
g.replay() and by cuGraphLaunch of its raw exec, and graphs of 1 and 4 rounds of the sets;
(C) per case, the host time and the end-to-end time without graphs of PyTorch eager,
torch.compile (Inductor; backend="eager": Dynamo and the graph in eager; a backend returning its first
input: Dynamo's own cost), torch.compile(backend="mugen"),
mugen.compile and the Kernel.
    python3 bench/python/s35_probe.py --bin .carry/bin/mugen"""
import argparse
import ctypes
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402  (sets MUGEN_LIB, imports torch and mugen)
from suite import torch, mugen, CASES, cli_time  # noqa: E402

N = 200
cu = ctypes.CDLL("libcuda.so.1")


def host(fn, n=N):
    rounds = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - t0) / n * 1e6)
        torch.cuda.synchronize()
    return statistics.median(rounds)


def e2e(fn, n=N):
    fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(rounds)


def primitives():
    from mugen import _capi as C
    dev = torch.device("cuda", 0)
    a = torch.rand(1, 4096, device=dev).half()
    b, c = a.clone(), a.clone()
    stream = torch.cuda.current_stream().cuda_stream
    ctx = ctypes.c_void_p()
    cap = ctypes.c_int()
    p = mugen.Program.load(os.path.join(suite.ROOT, "examples", "ntrans_b1.mu"))
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.add(a, b, out=c)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        torch.add(a, b, out=c)
    raw = ctypes.c_void_p(g.raw_cuda_graph_exec())
    st = ctypes.c_void_p(stream)
    f = {
        "ctypes no-op": lambda: C.lib.mg_program_n_inputs(p._p),
        "cuCtxGetCurrent": lambda: cu.cuCtxGetCurrent(ctypes.byref(ctx)),
        "cuStreamIsCapturing": lambda: cu.cuStreamIsCapturing(st, ctypes.byref(cap)),
        "torch.empty(device=dev)": lambda: torch.empty((1, 4096), dtype=torch.float16, device=dev),
        "x.new_empty": lambda: a.new_empty((1, 4096)),
        "torch.empty_like": lambda: torch.empty_like(a),
        "x.data_ptr()": lambda: a.data_ptr(),
        "x.shape == s": lambda: a.shape == (1, 4096),
        "x.is_contiguous()": lambda: a.is_contiguous(),
        "x.device": lambda: a.device,
        "torch.add(out=)": lambda: torch.add(a, b, out=c),
        "a + b": lambda: a + b,
        "g.replay() (1 add)": g.replay,
        "cuGraphLaunch(raw)": lambda: cu.cuGraphLaunch(raw, st),
    }
    print("## (A) host µs a call")
    for k, fn in f.items():
        print(f"  {k:28s} {host(fn):6.2f}", flush=True)


def graph(fn, sets, rounds):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            for st in sets:
                fn(*st)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        ys = [fn(*st) for _ in range(rounds) for st in sets]
    return g, ys


def timed(launch, reps=200):
    for _ in range(3):
        launch()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        a.record()
        launch()
        b.record()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) * 1e3 for a, b in ev)
    return t[len(t) // 2]


def replay_gap(a, names):
    print("\n## (B) µs a call in a torch CUDA graph: g.replay() against cuGraphLaunch of its raw exec; 1 and 4 rounds of the sets")
    gen = torch.Generator(device="cuda").manual_seed(30)
    for case, fn, spec in CASES:
        if case not in names:
            continue
        xs = [((torch.rand(s, device="cuda", generator=gen) * 2 - 1) * c).half() for s, c in spec]
        mc = mugen.compile(fn, xs, progress=False)
        nbytes = sum(x.numel() * x.element_size() for x in xs)
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        sets = [xs] + [[x.clone() for x in xs] for _ in range(min(8, int(2 * l2 / max(nbytes, 1)) + 1) - 1)]
        line = []
        for rounds in (1, 4):
            g, ys = graph(mc, sets, rounds)
            n = rounds * len(sets)
            raw = ctypes.c_void_p(g.raw_cuda_graph_exec())
            st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            t_rep = timed(g.replay) / n
            t_raw = timed(lambda: cu.cuGraphLaunch(raw, st)) / n
            line.append(f"{rounds} round(s) of {len(sets)}: replay {t_rep:.2f} raw {t_raw:.2f}")
            del g
        tc = [cli_time(a.bin, case)[0] for _ in range(2)]
        print(f"  {case:18s} " + "; ".join(line) + f"; mugen run {tc[0]:.2f} {tc[1]:.2f}", flush=True)


def per_call(names, skip=()):
    print("\n## (C) µs a call without graphs: host (queued) / end to end (then a sync)")
    gen = torch.Generator(device="cuda").manual_seed(30)
    with torch.no_grad():
        for case, fn, spec in CASES:
            if case not in names:
                continue
            xs = [((torch.rand(s, device="cuda", generator=gen) * 2 - 1) * c).half() for s, c in spec]
            ways = {"eager": fn}
            for be in ("inductor", "eager", "mugen"):
                if f"compile[{be}]" in skip:
                    continue
                torch._dynamo.reset()
                ways[f"compile[{be}]"] = torch.compile(fn, backend=be)
                ways[f"compile[{be}]"](*xs)
            torch._dynamo.reset()
            ways["compile[nop]"] = torch.compile(fn, backend=lambda gm, ex: (lambda *a: (a[0],)))  # Dynamo alone
            ways["compile[nop]"](*xs)
            mc = mugen.compile(fn, xs, progress=False)
            ways["mugen.compile"] = mc
            k, pv = mc.kernel, tuple(p for _, _, p in mc._params)
            ways["Kernel"] = lambda *x: k(*x, *pv)
            outs = [torch.empty(d.shape, dtype=getattr(torch, d.dtype), device="cuda") for d in k.outputs]
            ways["Kernel out="] = lambda *x: k(*x, *pv, out=outs)
            cells = []
            for w, f in ways.items():
                cells.append(f"{w} {host(lambda: f(*xs)):.1f}/{e2e(lambda: f(*xs)):.1f}")
            cells.append(f"kernels (suite.graph_time) {suite.graph_time(mc, xs)[0]:.2f}")
            print(f"  {case:18s} " + ", ".join(cells), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(suite.ROOT, "build", "mugen"))
    ap.add_argument("--parts", default="ABC")
    ap.add_argument("--skip", default="", help="ways of part C left out, comma-separated (compile[inductor], compile[eager])")
    ap.add_argument("--cases", default="ntrans_b1,ntrans_b8,lora,gqa_b1,rmsnorm_linear_b1")
    a = ap.parse_args()
    names = a.cases.split(",")
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    cu.cuInit(0)
    if "A" in a.parts:
        primitives()
    if "B" in a.parts:
        replay_gap(a, names)
    if "C" in a.parts:
        per_call(names, a.skip.split(","))


if __name__ == "__main__":
    main()
