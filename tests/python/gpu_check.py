"""The Python package on the GPU (docs/python.md; device: sh tools/gpu_check.sh runs it, or
python3 tests/python/gpu_check.py with MUGEN_LIB=build/libmugen.so and python/ on the path).
Each check prints "ok" or "FAIL" and a line of figures; the last line is "N passed, N failed".
- mugen.compile of three functions on CUDA f16 tensors against PyTorch in f32;
- the per-call cost on the host: Kernel.__call__ against torch's own launch of the same work,
  N calls queued without synchronising (host time per call), and the GPU time per call;
- a CUDA graph captured around the call, replayed on new inputs, checked;
- the decode step (a 2-layer step written by tools/make_decode.py) through mugen.Program and
  mugen.Kernel on CUDA f16 tensors, against the reference evaluator;
- the ragged encoder layer bound to 32 lengths, from packed tensors, against the reference;
- torch.compile(model, backend="mugen") against the eager model."""
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("MUGEN_LIB", os.path.join(ROOT, "build", "libmugen.so"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import mugen  # noqa: E402

passed = failed = 0


def check(name, ok, figures=""):
    global passed, failed
    passed, failed = passed + ok, failed + (not ok)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {figures}", flush=True)


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def gated(x, w1, w2):
    return torch.nn.functional.silu(x @ w1) * (x @ w2)


def rmsnorm_linear(x, w):
    return (x / torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True))) @ w


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2) * 0.125, dim=-1) @ v


g = torch.Generator(device="cuda").manual_seed(1)
cases = [(gated, [(8, 4096), (4096, 4096), (4096, 4096)], [1, 1 / 64, 1 / 64]),
         (rmsnorm_linear, [(16, 4096), (4096, 6144)], [1, 1 / 64]),
         (attention, [(2, 64, 64), (2, 512, 64), (2, 512, 64)], [1, 1, 1])]
for fn, shapes, scale in cases:
    xs = [((torch.rand(s, device="cuda", generator=g) * 2 - 1) * c).half() for s, c in zip(shapes, scale)]
    try:
        f = mugen.compile(fn, xs)
        y = f(*xs)
        torch.cuda.synchronize()
        e = rel(y, fn(*[x.float() for x in xs]))
        ok = not f.fallback and e < 1e-2
        # per call, without CUDA graphs: host time (20 calls queued, no wait), end to end (200
        # calls, then a synchronisation); against the same work replayed as a CUDA graph below
        fig = {}
        for impl, name in [(lambda: f(*xs), "mugen"), (lambda: fn(*xs), "torch")]:
            impl()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(20):
                impl()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            for _ in range(200):
                impl()
            torch.cuda.synchronize()
            t3 = time.perf_counter()
            fig[name] = ((t1 - t0) / 20 * 1e6, (t3 - t2) / 200 * 1e6)
        check(f"mugen.compile {fn.__name__} (CUDA f16)", ok, f"rel err {e:.2e}; {f.kernel.info['launches'] if f.kernel else 0} kernels")
        # the host time with preallocated outputs (bench/python/s35_probe.py takes a call apart)
        outs = [torch.empty(d.shape, dtype=getattr(torch, d.dtype), device="cuda") for d in f.kernel.outputs]
        allin = [*xs, *[p for _, _, p in f._params]]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            f.kernel(*allin, out=outs)
        fig["out"] = (time.perf_counter() - t0) / 20 * 1e6
        torch.cuda.synchronize()
        # a CUDA graph around the call: replayed on new inputs written into the captured ones
        st = torch.cuda.Stream()
        st.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(st):
            f(*xs)
        torch.cuda.current_stream().wait_stream(st)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            yg = f(*xs)
        for x in xs:
            x.copy_(x.flip(0))
        yg.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        e2 = rel(yg, fn(*[x.float() for x in xs]))
        s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s0.record()
        for _ in range(200):
            graph.replay()
        s1.record()
        torch.cuda.synchronize()
        gu = s0.elapsed_time(s1) / 200 * 1e3
        check(f"CUDA graph of {fn.__name__}", e2 < 1e-2 and not torch.isnan(yg).any().item(), f"rel err {e2:.2e} after replay")
        print(f"     {fn.__name__}: mugen a call: host {fig['mugen'][0]:.1f} us, end to end {fig['mugen'][1]:.1f} us, "
              f"as a CUDA graph {gu:.1f} us (overhead {fig['mugen'][1] - gu:.1f} us); torch eager: host {fig['torch'][0]:.1f} us, "
              f"end to end {fig['torch'][1]:.1f} us; host with out=: {fig['out']:.1f} us", flush=True)
    except Exception as ex:  # a failure is a result, reported
        check(f"mugen.compile {fn.__name__} (CUDA f16)", False, repr(ex)[:400])

# the decode step from Python: a 2-layer LLaMA-style step (tools/make_decode.py: GQA attention
# over a KV cache, SwiGLU, RMSNorm) parsed from its .mu text, compiled for CUDA and run on f16
# tensors (inputs uniform in +-range, +-1 without one), every output against the reference
try:
    import subprocess
    text = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_decode.py"), "--layers", "2", "--hidden", "1024",
                           "--heads", "16", "--kv-heads", "4", "--head-dim", "64", "--ffn", "4096", "--cache", "512",
                           "--batch", "1", "--dtype", "f16", "--eps", "1e-5"], capture_output=True, text=True, check=True).stdout
    p = mugen.Program(text, "decode_2l.mu")
    k = mugen.Kernel(p, target="cuda")
    ins = [((torch.rand(d.shape, device="cuda", generator=g) * 2 - 1) * (d.range or 1)).half() for d in p.inputs]
    outs = k(*ins)
    outs = outs if isinstance(outs, tuple) else (outs,)
    refs = p.reference(*[x.float().cpu().numpy() for x in ins])
    errs = [float(np.linalg.norm(o.float().cpu().numpy() - r) / max(np.linalg.norm(r), 1e-30)) for o, r in zip(outs, refs)]
    check("the decode step (2 layers) from Python on CUDA f16", max(errs) < 1e-2,
          f"{k.info['launches']} kernels; rel err per output {', '.join(f'{e:.1e}' for e in errs)}")
except Exception as ex:
    check("the decode step (2 layers) from Python on CUDA f16", False, repr(ex)[:400])

# the ragged encoder from packed tensors: examples/ragged/encoder_b32.mu bound to 32 seeded
# lengths in [0, 512] (0, 1 and 512 among them), its kernels on the lengths and the packed
# tokens in capacity rows (junk past them), against the reference on the packed tensors
try:
    import random
    r = random.Random(30)
    lens = [0, 1, 512] + [r.randint(0, 512) for _ in range(29)]
    p = mugen.Program.load(os.path.join(ROOT, "examples", "ragged", "encoder_b32.mu")).bind_lengths("len", lens)
    k = mugen.Kernel(p, target="cuda")
    ins = {d.name: ((torch.rand(p._packed_shape(d), device="cuda", generator=g) * 2 - 1) * (d.range or 1)).half() for d in p.inputs}
    kin = []
    for d in k.inputs:
        x = torch.tensor(lens, dtype=torch.float32, device="cuda") if d.name == "len" else ins[d.name]
        if x.shape != torch.Size(d.shape):  # capacity rows: junk past the tokens
            x = torch.cat([x, torch.full((d.shape[0] - x.shape[0],) + tuple(x.shape[1:]), 1e4, dtype=x.dtype, device="cuda")])
        kin.append(x)
    y = k(*kin)
    torch.cuda.synchronize()
    ref = p.reference(*[ins[d.name].float().cpu().numpy() for d in p.inputs])[0]
    t = sum(lens)
    e = float(np.linalg.norm(y[:t].float().cpu().numpy() - ref) / np.linalg.norm(ref))
    check("the ragged encoder (32 sequences) from packed tensors on CUDA f16", e < 1e-2 and not torch.isnan(y[:t]).any().item(),
          f"{t} tokens in {k.inputs[1].shape[0]} rows, {k.info['launches']} kernels; rel err {e:.1e}")
except Exception as ex:
    check("the ragged encoder (32 sequences) from packed tensors on CUDA f16", False, repr(ex)[:400])

if hasattr(torch, "compile"):
    try:
        m = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.SiLU(), torch.nn.Linear(2048, 1024)).cuda().half()
        x = torch.randn(32, 1024, device="cuda").half()
        mc = torch.compile(m, backend="mugen")
        with torch.no_grad():
            y, r = mc(x), m.float()(x.float())
        m.half()
        check("torch.compile(backend='mugen')", rel(y, r) < 1e-2, f"rel err {rel(y, r):.2e}")
    except Exception as ex:
        check("torch.compile(backend='mugen')", False, repr(ex)[:400])
if hasattr(torch, "compile"):  # a new batch size: Dynamo's dynamic graph as a program of dim B
    try:
        from mugen import torch_frontend as tf
        torch._dynamo.reset()
        w1 = torch.randn(1024, 2048, device="cuda").half() / 32
        w2 = torch.randn(2048, 512, device="cuda").half() / 45

        def mlp(x):
            return torch.nn.functional.silu(x @ w1) @ w2
        mc = torch.compile(mlp, backend="mugen")
        errs, caps = [], []
        for b in (8, 13, 100, 300):
            x = torch.randn(b, 1024, device="cuda").half()
            y = mc(x)
            errs.append(rel(y, mlp(x.float().half()).float()) if y.shape == (b, 512) else 1.0)
            caps.append(getattr(tf.last_compiled, "last_capacity", None))
        dyn = isinstance(tf.last_compiled, tf.Dynamic)
        x = torch.randn(100, 1024, device="cuda").half()
        for fn in (mc, mlp):
            fn(x)
        torch.cuda.synchronize()
        tm = []
        for fn in (mc, mlp):  # end to end, 200 calls then a synchronisation
            t0 = time.perf_counter()
            for _ in range(200):
                fn(x)
            torch.cuda.synchronize()
            tm.append((time.perf_counter() - t0) / 200 * 1e6)
        print(f"     dynamic batch 100: mugen {tm[0]:.1f} us a call (a staging copy, the 128-row variant over 100 rows), PyTorch eager {tm[1]:.1f} us", flush=True)
        check("torch.compile at batch 8, then 13, 100, 300 (dim B, CUDA f16)", dyn and max(errs) < 1e-2 and None not in caps[1:],
              f"rel err {max(errs):.1e}; capacities {caps[1:]}; {tf.last_compiled.explain.splitlines()[0][:160]}")
    except Exception as ex:
        check("torch.compile at batch 8, then 13, 100, 300 (dim B, CUDA f16)", False, repr(ex)[:400])
print(f"{passed} passed, {failed} failed")
