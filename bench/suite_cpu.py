#!/usr/bin/env python3
"""The suite on the CPU (issue #25 item 6): every program of bench/suite/ through mugen's C
backend (`mugen run --backend c`: the program lowered, compiled with the C compiler, OpenMP over
the cores; its outputs checked against mugen's f32 reference) beside PyTorch eager on the CPU on
the same machine and threads. PyTorch runs each program as bench/suite.py does (mugen check's
canonical form interpreted with torch operators), twice: in the program's own dtypes (f16, as
written) and with every input converted to float32 (what a CPU user would pick where f16 is
slow); the anchor is the faster of the two, each output checked against float64. Times: medians
of runs that stop after --budget seconds (at least 3 runs), in ms.

    python3 bench/suite_cpu.py [--bin build/mugen] [--threads N] [--budget 1.0] [PROGRAM.mu ...]

The ratio column is mugen's time over the anchor's: at most 2 is the issue's goal ("within 2x
of PyTorch on the CPU (eager)"). Timings on a shared machine move with its load; run it twice.
Needs a PyTorch that imports on a machine without a GPU (PyPI's Linux wheel does, with its
nvidia-* dependencies installed: pip install torch).
"""
import argparse, math, os, re, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from suite import program_fn  # noqa: E402

DT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def timed(fn, budget):
    ts, t_end = [], time.perf_counter() + budget
    while len(ts) < 3 or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def rel_err(out, ref):
    d = (out.double() - ref).norm().item()
    n = ref.norm().item()
    return d / n if n else d


def run_mugen(binary, path, seed, budget):
    p = subprocess.run([binary, "run", "--backend", "c", "--seed", str(seed), path], capture_output=True, text=True)
    out = p.stdout + p.stderr
    t = re.findall(r"time\s+([0-9.]+) (us|ms|s)\b", out)
    e = [float(x) for x in re.findall(r"rel err ([0-9.e+-]+|nan|inf)", out)]
    ms = None
    if t:
        v, unit = float(t[-1][0]), t[-1][1]
        ms = v / 1e3 if unit == "us" else v if unit == "ms" else v * 1e3
    return p.returncode, ms, max(e) if e else None, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--bin", default="build/mugen")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    progs = a.programs or sorted(os.path.join(here, "suite", f)
                                 for f in os.listdir(os.path.join(here, "suite")) if f.endswith(".mu"))
    torch.set_num_threads(a.threads)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"# {cpu}, {os.cpu_count()} cores, {a.threads} threads each side; torch {torch.__version__}; "
          f"load average {os.getloadavg()[0]:.1f}; ms, medians of runs stopping after {a.budget} s")
    print(f"{'program':<18} {'mugen C':>9} {'torch f16':>10} {'torch f32':>10} {'mugen/best':>10}  checks")
    ratios = []
    for path in progs:
        name = os.path.basename(path)[:-3]
        canon = subprocess.run([a.bin, "check", path], capture_output=True, text=True).stdout
        ins, outs, fn, count = program_fn(canon)
        g = torch.Generator().manual_seed(a.seed)
        inputs = {n: ((torch.rand(s, generator=g) * 2 - 1) * r).to(DT[d]) for n, d, s, r in ins}
        ref, _ = count(**{n: v.double() for n, v in inputs.items()})
        res = {}
        for label, conv in (("f16", lambda v: v), ("f32", lambda v: v.float())):
            xs = {n: conv(v) for n, v in inputs.items()}
            try:
                out = fn(**xs)
                err = max(rel_err(o, r) for o, r in zip(out, ref))
                res[label] = (timed(lambda: fn(**xs), a.budget), err)
            except Exception as e:  # an operator PyTorch's CPU lacks for the dtype
                res[label] = (None, str(e).splitlines()[0][:40])
        rc, ms, merr, log = run_mugen(a.bin, path, a.seed, a.budget)
        best = min((t for t, _ in res.values() if t), default=None)
        r = ms / best if ms and best else None
        if r:
            ratios.append(r)
        f = lambda v: f"{v:10.3f}" if isinstance(v, float) else f"{'-':>10}"
        chk = (f"mugen {'ok' if rc == 0 else 'FAIL(exit %d)' % rc} {merr}, torch rel err "
               + ", ".join(f"{k} {v[1]:.1e}" if isinstance(v[1], float) else f"{k} {v[1]}" for k, v in res.items()))
        print(f"{name:<18} {f(ms)[1:]} {f(res['f16'][0])} {f(res['f32'][0])} {f(r)}  {chk}", flush=True)
    if ratios:
        print(f"\ngeometric mean mugen/best {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}; "
              f"within 2x: {sum(r <= 2 for r in ratios)} of {len(ratios)}")


if __name__ == "__main__":
    main()
