"""Session 35, issue #30: does where nTrans's buffers sit move its time? In one process, after
the suite's cases before it (as suite.py --process one runs them), nTrans b1's mugen.compile
call timed as suite.graph_time times it: with fresh outputs, then with its output (out=) at
offsets into a 4 MiB slab, then its inputs and output copied to offsets into slabs.
    python3 bench/python/s35_place.py [--before rmsnorm_linear_b1,rmsnorm_linear_b8,gated_mlp,lora]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402
from suite import torch, mugen, CASES  # noqa: E402

OFFS = [0, 512, 4096, 65536, 1 << 20, 3 << 19, 2 << 20]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="rmsnorm_linear_b1,rmsnorm_linear_b8,gated_mlp,lora")
    ap.add_argument("--case", default="ntrans_b1")
    a = ap.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    gen = torch.Generator(device="cuda").manual_seed(30)
    keep = []
    with torch.no_grad():
        for case, fn, spec in CASES:
            xs = [((torch.rand(s, device="cuda", generator=gen) * 2 - 1) * c).half() for s, c in spec]
            if case in a.before.split(","):
                mc = mugen.compile(fn, xs, progress=False)
                t, _ = suite.graph_time(mc, xs)
                keep.append((mc, xs))
                print(f"  before: {case} {t:.2f}", flush=True)
            if case != a.case:
                continue
            mc = mugen.compile(fn, xs, progress=False)
            k = mc.kernel
            line = [f"fresh outputs {suite.graph_time(mc, xs)[0]:.2f}"]
            slab = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")
            base = (-slab.data_ptr()) % (2 << 20)
            nb = [torch.Size(d.shape).numel() * 2 for d in k.outputs]
            for off in OFFS:
                o = [slab[base + off:base + off + n].view(torch.float16).view(d.shape) for n, d in zip(nb, k.outputs)]
                line.append(f"out at +{off} {suite.graph_time(lambda *x: k(*x, out=o), xs)[0]:.2f}")
            ins = []
            for off in OFFS:
                sl = [torch.empty(4 << 20, dtype=torch.uint8, device="cuda") for _ in xs]
                xi = []
                for t, x in zip(sl, xs):
                    b = (-t.data_ptr()) % (2 << 20) + off
                    xi.append(t[b:b + x.numel() * 2].view(torch.float16).view(x.shape).copy_(x))
                ins.append(f"inputs at +{off} {suite.graph_time(mc, xi)[0]:.2f}")
            print(f"{a.case}: " + ", ".join(line), flush=True)
            print(f"{a.case}: " + ", ".join(ins), flush=True)


if __name__ == "__main__":
    main()
