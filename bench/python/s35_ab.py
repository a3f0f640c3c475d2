"""Session 35, issue #30: the package before this session (OLD, a directory holding its mugen/,
loaded as mugen_old) against this one, in one process, rounds alternating, so that the host's
drift between processes (30-50% on the device machine) does not enter the ratio. Per case: host
µs a call (N calls queued without waiting) of the Kernel, mugen.compile's callable and the
Kernel with out=; the median of the rounds for each.
    python3 bench/python/s35_ab.py OLD"""
import importlib.util
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402
from suite import torch, mugen, CASES  # noqa: E402


def load_old(root):
    spec = importlib.util.spec_from_file_location("mugen_old", os.path.join(root, "mugen", "__init__.py"),
                                                  submodule_search_locations=[os.path.join(root, "mugen")])
    m = importlib.util.module_from_spec(spec)
    sys.modules["mugen_old"] = m
    spec.loader.exec_module(m)
    return m


def host(fn, n=200):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    return t


def main():
    old = load_old(sys.argv[1])
    cases = sys.argv[2].split(",") if len(sys.argv) > 2 else ["ntrans_b1", "lora", "gqa_b1", "rmsnorm_linear_b1", "gated_mlp"]
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "old:", old.__file__, flush=True)
    gen = torch.Generator(device="cuda").manual_seed(30)
    with torch.no_grad():
        for case, fn, spec in CASES:
            if case not in cases:
                continue
            xs = [((torch.rand(s, device="cuda", generator=gen) * 2 - 1) * c).half() for s, c in spec]
            ways = {}
            for tag, pkg in (("old", old), ("new", mugen)):
                mc = pkg.compile(fn, xs, progress=False)
                k = mc.kernel
                outs = [torch.empty(d.shape, dtype=getattr(torch, d.dtype), device="cuda") for d in k.outputs]
                y = mc(*xs)
                ref = fn(*[x.float() for x in xs])
                assert suite.rel(y, ref) < 2e-2, (tag, case)
                ways[f"Kernel {tag}"] = (lambda k=k: k(*xs))
                ways[f"mugen.compile {tag}"] = (lambda mc=mc: mc(*xs))
                ways[f"out= {tag}"] = (lambda k=k, outs=outs: k(*xs, out=outs))
            t = {w: [] for w in ways}
            for _ in range(7):
                for w, f in ways.items():
                    f()
                    t[w].append(host(f))
            med = {w: statistics.median(v) for w, v in t.items()}
            cells = [f"{w.split()[0]} {med[f'{w} old']:.1f} -> {med[f'{w} new']:.1f}"
                     for w in ("Kernel", "mugen.compile", "out=")]
            print(f"  {case:18s} " + ", ".join(cells) + " (old -> new, µs host a call)", flush=True)


if __name__ == "__main__":
    main()
