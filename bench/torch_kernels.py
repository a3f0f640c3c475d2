#!/usr/bin/env python3
"""Where PyTorch's time goes on a suite program: the CUDA kernels torch.compile (or eager)
launches for one call of each program, with each kernel's GPU time (torch.profiler, median
over 20 calls after warm-up), to set beside `MUGEN_PROFILE=1 mugen run PROGRAM`.

    python3 bench/torch_kernels.py [--bin build/mugen] [--mode compile|eager] PROGRAM.mu ...
"""
import argparse, os, statistics, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from suite import program_fn, DT  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("programs", nargs="+")
    ap.add_argument("--bin", default="build/mugen")
    ap.add_argument("--mode", choices=("compile", "eager"), default="compile")
    a = ap.parse_args()
    for path in a.programs:
        text = subprocess.run([a.bin, "check", path], capture_output=True, text=True, check=True).stdout
        ins, _, fn, _ = program_fn(text)
        x = {n: ((torch.rand(s, device="cuda") * 2 - 1) * r).to(DT[d]) for n, d, s, r in ins}
        torch._dynamo.reset()
        f = torch.compile(fn, dynamic=False, fullgraph=True) if a.mode == "compile" else fn
        for _ in range(5):
            f(**x)
        torch.cuda.synchronize()
        calls = 20
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                f(**x)
            torch.cuda.synchronize()
        times = {}
        order = []
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                if e.name not in times:
                    order.append(e.name)
                times.setdefault(e.name, []).append(e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total)
        print(f"== {os.path.basename(path)} ({a.mode}, {torch.cuda.get_device_name()})")
        total = 0.0
        for n in order:
            per = len(times[n]) / calls
            med = statistics.median(times[n])
            total += med * per
            print(f"  {med:8.2f} us x{per:g}  {n[:110]}")
        print(f"  {total:8.2f} us in kernels a call")


if __name__ == "__main__":
    main()
