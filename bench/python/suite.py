"""Issue #30's target on the GPU: the Mirage suite (make bench's ten cases, examples/CASE.mu)
written as PyTorch functions and run through torch.compile(backend="mugen"), against the same
program from the command line (`mugen run --backend gpu`, lowered: the backend lowers too), in
one run. Both timed the same way: the median of 200 replays of a CUDA graph of one call
per input set (rotating sets, as the command line times: see graph_time). Also the
per-call time without graphs (200 calls, then a synchronisation) and the host time of a call,
against the graph time: the Python call path's cost over the kernels. Every output checked
against PyTorch in f32. Each case runs in a fresh process, as `mugen run` does (--process one:
all in this process; there the one-kernel nTrans cases have timed 12% slow after the cases
before them, their buffers placed where a 2.6 µs kernel runs slower: docs/notes/2026-11-29-s35.md).
Prints a markdown table; --json FILE keeps the figures.
    python3 bench/python/suite.py --bin .carry/bin/mugen [--json FILE] [--cases A,B] [--process one]"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("MUGEN_LIB", os.path.join(ROOT, "build", "libmugen.so"))
import torch  # noqa: E402

import mugen  # noqa: E402  (registers the backend)


def rms(v, d):
    return v / torch.sqrt(torch.mean(v * v, dim=d, keepdim=True))


def gated_mlp(X, W1, W2):
    return torch.nn.functional.silu(X @ W1) * (X @ W2)


def rmsnorm_linear(X, W):
    return rms(X, 1) @ W


def lora(X, W, A, B):
    return X @ W + (X @ A) @ B


def ntrans(X, H, alpha):
    return rms(X + alpha * rms(H - X, 1), 1)


def gqa(Q, K, V):
    S = torch.exp(Q @ K)
    return (S / torch.sum(S, dim=2, keepdim=True)) @ V


def qknorm(Q, K, V):
    S = torch.exp(rms(Q, 2) @ rms(K, 1))
    return (S / torch.sum(S, dim=2, keepdim=True)) @ V


# case, function, input shapes and scales (the programs' own, examples/CASE.mu)
CASES = [("rmsnorm_linear_b1", rmsnorm_linear, [((2, 4096), 1), ((4096, 6144), 1 / 64)]),
         ("rmsnorm_linear_b8", rmsnorm_linear, [((16, 4096), 1), ((4096, 6144), 1 / 64)]),
         ("gated_mlp", gated_mlp, [((8, 4096), 1), ((4096, 4096), 1 / 64), ((4096, 4096), 1 / 64)]),
         ("lora", lora, [((16, 256), 1), ((256, 4096), 1 / 16), ((256, 16), 1 / 16), ((16, 4096), 1 / 4)]),
         ("ntrans_b1", ntrans, [((1, 4096), 1), ((1, 4096), 1), ((1, 4096), 1)]),
         ("ntrans_b8", ntrans, [((8, 4096), 1), ((8, 4096), 1), ((8, 4096), 1)]),
         ("gqa_b1", gqa, [((2, 256, 64), 1 / 8), ((2, 64, 4096), 1 / 8), ((2, 4096, 64), 1)]),
         ("gqa_b8", gqa, [((16, 256, 64), 1 / 8), ((16, 64, 4096), 1 / 8), ((16, 4096, 64), 1)]),
         ("qknorm_b1", qknorm, [((2, 256, 64), 1), ((2, 64, 4096), 1), ((2, 4096, 64), 1)]),
         ("qknorm_b8", qknorm, [((16, 256, 64), 1), ((16, 64, 4096), 1), ((16, 4096, 64), 1)])]


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def warm(replay, seconds=0.025):
    """Replays for at least `seconds` (the clocks up from idle), as driver.c gpu_warm does
    before `mugen run` times."""
    t0, n = time.perf_counter(), 3
    while time.perf_counter() - t0 < seconds:
        for _ in range(n):
            replay()
        torch.cuda.synchronize()
        n = min(2 * n, 4096)


def graph_time(fn, xs, reps=200, wait=False):
    """Median µs of one call, timed as `mugen run` times (driver.c gpu_time): a CUDA graph of one
    call per input set, the sets rotating (2 x L2 over the inputs' bytes + 1 of them, at most 8:
    the inputs come from DRAM, not L2), warmed for 25 ms, replayed reps times, each replay timed by events, the
    median over the sets. Returns (µs, the first set's output)."""
    nbytes = sum(x.numel() * x.element_size() for x in xs)
    l2 = getattr(torch.cuda.get_device_properties(xs[0].device), "L2_cache_size", 50 << 20)
    sets = [xs] + [[x.clone() for x in xs] for _ in range(min(8, int(2 * l2 / max(nbytes, 1)) + 1) - 1)]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            for st in sets:
                fn(*st)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        ys = [fn(*st) for st in sets]
    warm(g.replay)
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        a.record()
        g.replay()
        b.record()
        if wait:  # each replay on an idle GPU, as driver.c gpu_time waits for it
            b.synchronize()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) * 1e3 for a, b in ev)
    return t[len(t) // 2] / len(sets), ys[0]


def call_time(fn, xs, reps=200):
    """(host µs a call, end-to-end µs a call) without CUDA graphs."""
    fn(*xs)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(20):
        fn(*xs)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    for _ in range(reps):
        fn(*xs)
    torch.cuda.synchronize()
    return (t1 - t0) / 20 * 1e6, (time.perf_counter() - t2) / reps * 1e6


def cli_time(binary, case):
    out = subprocess.run([binary, "run", "--backend", "gpu", "--reps", "200", "--seed", "1", f"examples/{case}.mu"],
                         capture_output=True, text=True, cwd=ROOT)
    m = re.search(r"time\s+([0-9.]+) us", out.stdout + out.stderr)
    ok = out.returncode == 0 and m is not None
    return (float(m.group(1)) if m else float("nan")), ok, (out.stdout + out.stderr)[-300:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "mugen"))
    ap.add_argument("--json")
    ap.add_argument("--process", choices=("each", "one"), default="each",
                    help="each: every case in a fresh process, as the command line runs it (default); one: all in this one")
    ap.add_argument("--cases", help="the cases to run, comma-separated (default: all, in CASES order)")
    ap.add_argument("--profile", action="store_true", help="profile the host side of the last case's calls")
    a = ap.parse_args()
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    g = torch.Generator(device="cuda").manual_seed(30)
    rows, res = [], []
    for case, fn, spec in CASES:
        if a.cases and case not in a.cases.split(","):
            continue
        if a.process == "each":  # a fresh process a case, as `mugen run` is one
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--bin", a.bin, "--process", "one", "--cases", case],
                                 capture_output=True, text=True)
            got = [json.loads(ln) for ln in out.stdout.splitlines() if ln.startswith("{")]
            r = got[0] if got else {"case": case, "ok": False, "error": (out.stdout + out.stderr)[-400:]}
        else:
            xs = [((torch.rand(s, device="cuda", generator=g) * 2 - 1) * c).half() for s, c in spec]
            torch._dynamo.reset()
            cf = torch.compile(fn, backend="mugen")
            try:
                r = one(a, case, fn, cf, xs)
            except Exception as ex:  # a failure is a result, reported
                r = {"case": case, "ok": False, "error": repr(ex)[-400:]}
        print(json.dumps(r), flush=True)
        res.append(r)
        if "error" in r:
            rows.append(f"| {case} | FAIL: {r['error'][:120]} | | | | | | | |")
            continue
        rows.append(f"| {case} | {r['compile_mugen_us']:.2f} | {r['cli_us']:.2f} | {r['ratio']:.3f} | {r['host_us']:.1f} | "
                    f"{r['call_us']:.1f} | {r['overhead_us']:+.1f} | {r['eager_us']:.2f} | {r['rel_err']:.1e} {'ok' if r['ok'] else 'FAIL'}"
                    f"{'' if r['mugen_ran'] else ' (PyTorch ran it)'}, {r['kernels']} kernels |")
    print_table(rows, res, a)
    if a.profile and a.process == "one":  # where the host time of a torch.compile call goes (the last case)
        import cProfile
        import pstats
        cf(*xs)
        torch.cuda.synchronize()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(500):
            cf(*xs)
        pr.disable()
        torch.cuda.synchronize()
        print(f"\nhost profile of 500 calls of {case} through torch.compile (top 15 by own time):")
        pstats.Stats(pr).sort_stats("tottime").print_stats(15)


def one(a, case, fn, cf, xs):
    """The figures of one case (a dict)."""
    with torch.no_grad():
        y = cf(*xs)
        ref = fn(*[x.float() for x in xs])
        torch.cuda.synchronize()
        e = rel(y, ref)
        tg, yg = graph_time(cf, xs)
        e2 = rel(yg, ref)
        host, e2e = call_time(cf, xs)
        te, _ = graph_time(fn, xs)  # PyTorch eager, for reference
        mc = mugen.compile(fn, xs, progress=False)  # the same program without Dynamo
        e3 = rel(mc(*xs), ref)
        mg, _ = graph_time(mc, xs)
        mh, me = call_time(mc, xs)
    tc, okc, log = cli_time(a.bin, case)
    if not okc:
        print("  command line:", log, flush=True)
    from mugen import torch_frontend as tf
    c = tf.last_compiled
    ran = bool(c is not None and not c.fallback and c.kernel)
    ok = e < 2e-2 and e2 < 2e-2 and e3 < 2e-2 and okc and ran
    return {"case": case, "mugen_ran": ran, "kernels": c.kernel.info["launches"] if ran else 0, "compile_mugen_us": tg, "cli_us": tc, "ratio": tg / tc, "host_us": host, "call_us": e2e,
            "overhead_us": e2e - tg, "eager_us": te, "rel_err": e, "ok": ok,
            "mc_graph_us": mg, "mc_host_us": mh, "mc_call_us": me, "mc_overhead_us": me - mg}


def print_table(rows, res, a):
    print("\n| case | torch.compile(backend=\"mugen\") graph (µs) | mugen run (µs) | ratio | host a call (µs) "
          "| a call, no graph (µs) | over the graph (µs) | eager graph (µs) | rel err |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    ratios = [r["ratio"] for r in res if r.get("ratio") == r.get("ratio") and "ratio" in r]
    if ratios:
        gm = 1.0
        for x in ratios:
            gm *= x
        print(f"\ngeometric mean of the ratios {gm ** (1 / len(ratios)):.3f}; within 5%: {sum(abs(x - 1) <= 0.05 for x in ratios)} of {len(ratios)}; "
              f"checked: {sum(r['ok'] for r in res)} of {len(res)}")
    print("\nmugen.compile of the same functions (no Dynamo), µs a call: host; end to end without a graph; its graph; over the graph")
    for r in res:
        if "mc_host_us" in r:
            print(f"  {r['case']:18s} host {r['mc_host_us']:5.1f}  end to end {r['mc_call_us']:6.2f}  graph {r['mc_graph_us']:6.2f}  over {r['mc_overhead_us']:+5.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
