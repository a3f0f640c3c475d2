#!/usr/bin/env python3
"""PyTorch baseline for mugen: eager and torch.compile on Mirage's six benchmarks (ten cases).

Each case is the program in examples/<case>.mu written in PyTorch (same names, shapes, fp16).
Timing: one torch.cuda.CUDAGraph replay runs the function once per input set (the sets rotate so
the timed loop does not just hit L2); per-call time = median replay time / n_sets.
Floor = max(bytes / 3.0e12 B/s, flops / 660e12 FLOP/s, 2 us), bytes = inputs + output once each.

    python3 bench/torch_ref.py [--cases a,b,...] [--reps N] [--seed S] [--json PATH]

Note: gqa_* and qknorm_* compute exp(Q K) in fp16 as written (no max subtraction). With inputs in
[-1, 1) scores reach ~13 (gqa) and up to 64 (qknorm, unit-rms rows), beyond fp16's exp limit
(~11.09), so fp16 eager can give inf/NaN there; the error columns then say so. Timings stand.
"""
import argparse, datetime, json, math, os, sys, tempfile, time, traceback

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="mugen_inductor_"))
import torch  # noqa: E402

L2_BYTES = 50e6          # H100 L2
MAX_SETS = 8
HBM_BPS, TC_FLOPS, MIN_US = 3.0e12, 660e12, 2.0


def log(*a):
    print(*a, flush=True)


def rms(x, d):
    # rmsnorm(X, dim=d) = X / sqrt(sum(sqr(X), dim=d) / n), sum keeps a size-1 dim, no eps/weight
    return x / torch.sqrt(torch.sum(x * x, dim=d, keepdim=True) / x.shape[d])


# ---- the programs (examples/*.mu) -------------------------------------------------------------
def rmsnorm_linear(X, W):            # R = sqrt(sum(sqr(X), dim=1) / 4096); O = matmul(X / R, W)
    R = torch.sqrt(torch.sum(X * X, dim=1, keepdim=True) / 4096)
    return torch.matmul(X / R, W)


def gated_mlp(X, W1, W2):            # O = silu(matmul(X, W1)) * matmul(X, W2)
    return torch.nn.functional.silu(torch.matmul(X, W1)) * torch.matmul(X, W2)


def lora(X, W, A, B):                # O = matmul(X, W) + matmul(matmul(X, A), B)
    return torch.matmul(X, W) + torch.matmul(torch.matmul(X, A), B)


def ntrans(X, H, alpha):             # O = rmsnorm(X + alpha * rmsnorm(H - X, dim=1), dim=1)
    return rms(X + alpha * rms(H - X, 1), 1)


def gqa(Q, K, V):                    # S = exp(matmul(Q, K)); O = matmul(S / sum(S, dim=2), V)
    S = torch.exp(torch.matmul(Q, K))
    return torch.matmul(S / torch.sum(S, dim=2, keepdim=True), V)


def qknorm(Q, K, V):                 # Qn = rmsnorm(Q, dim=2); Kn = rmsnorm(K, dim=1); then gqa
    return gqa(rms(Q, 2), rms(K, 1), V)


def rl(b):   # X f16[2b, 4096], W f16[4096, 6144]; one matmul M=2b N=6144 K=4096
    return dict(X=(2 * b, 4096), W=(4096, 6144)), rmsnorm_linear, 2 * (2 * b) * 6144 * 4096


def attn(b, fn):  # Q [2b,256,64], K [2b,64,4096], V [2b,4096,64]; QK: 256x4096x64, SV: 256x64x4096
    return (dict(Q=(2 * b, 256, 64), K=(2 * b, 64, 4096), V=(2 * b, 4096, 64)), fn,
            2 * (2 * b) * 256 * 4096 * 64 * 2)


def nt(b):   # X, H, alpha f16[b, 4096]; no matmul
    return dict(X=(b, 4096), H=(b, 4096), alpha=(b, 4096)), ntrans, 0


CASES = {  # name -> (input shapes, function, matmul flops = sum of 2*M*N*K)
    "rmsnorm_linear_b1": rl(1),
    "rmsnorm_linear_b8": rl(8),
    "gated_mlp": (dict(X=(8, 4096), W1=(4096, 4096), W2=(4096, 4096)), gated_mlp,
                  2 * (2 * 8 * 4096 * 4096)),
    "lora": (dict(X=(16, 256), W=(256, 4096), A=(256, 16), B=(16, 4096)), lora,
             2 * 16 * 4096 * 256 + 2 * 16 * 16 * 256 + 2 * 16 * 4096 * 16),
    "ntrans_b1": nt(1),
    "ntrans_b8": nt(8),
    "gqa_b1": attn(1, gqa),
    "gqa_b8": attn(8, gqa),
    "qknorm_b1": attn(1, qknorm),
    "qknorm_b8": attn(8, qknorm),
}


def nbytes(shape, itemsize=2):
    return math.prod(shape) * itemsize


def time_graph(fn, sets, reps):
    """Warm up fn on every set (compiles), capture one graph calling fn once per set, time it.
    Returns (median us per call, outputs of the captured calls, the graph: keep it while the
    outputs are used)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            for s in sets:
                fn(**s)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = [fn(**s) for s in sets]
    for _ in range(5):
        g.replay()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        g.replay()
        ends[i].record()
    torch.cuda.synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    return ms[len(ms) // 2] * 1e3 / len(sets), outs, g


def rel_err(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm()).item()


def run_case(name, reps, seed):
    shapes, fn, flops = CASES[name]
    torch._dynamo.reset()
    set_bytes = sum(nbytes(s) for s in shapes.values())
    n_sets = min(MAX_SETS, int(2 * L2_BYTES // set_bytes) + 1)   # total > 2x L2 when possible
    gen = torch.Generator(device="cuda").manual_seed(seed)
    sets = [{k: torch.rand(s, generator=gen, device="cuda", dtype=torch.float16) * 2 - 1
             for k, s in shapes.items()} for _ in range(n_sets)]
    ref = fn(**{k: v.double() for k, v in sets[0].items()})        # float64 reference, set 0
    out_bytes = nbytes(ref.shape)
    moved = set_bytes + out_bytes
    floor = max(moved / HBM_BPS * 1e6, flops / TC_FLOPS * 1e6, MIN_US)
    r = dict(case=name, seed=seed, n_sets=n_sets, set_bytes=set_bytes, bytes_moved=moved,
             flops=flops, out_shape=list(ref.shape), floor_us=floor)
    log(f"[{name}] seed {seed}, {n_sets} input sets x {set_bytes / 1e6:.2f} MB, "
        f"{moved / 1e6:.2f} MB moved, {flops / 1e9:.3f} GFLOP, floor {floor:.2f} us")
    outs = {}
    for mode in ("eager", "compile"):
        try:
            t0 = time.time()
            f = fn if mode == "eager" else torch.compile(fn, dynamic=False, fullgraph=True)
            us, o, g = time_graph(f, sets, reps)
            outs[mode] = o[0].clone()
            del o, g
            r[f"{mode}_us"] = us
            r[f"{mode}_err"] = rel_err(outs[mode], ref)
            log(f"[{name}] {mode}: {us:.2f} us/call, rel err vs f64 {r[f'{mode}_err']:.2e} "
                f"({time.time() - t0:.1f} s incl. warm-up)")
        except Exception as e:  # keep going with the other mode / case
            r[f"{mode}_error"] = f"{type(e).__name__}: {e}"
            log(f"[{name}] {mode} FAILED: {type(e).__name__}: {e}")
            traceback.print_exc(limit=3)
    if len(outs) == 2:
        r["eager_vs_compile"] = rel_err(outs["eager"], outs["compile"])
    for key in ("eager_err", "compile_err", "eager_vs_compile"):
        v = r.get(key)
        if v is not None and not (v < 1e-2):      # NaN fails too
            log(f"WARNING [{name}] {key} = {v:.3e} (>= 1e-2 or NaN)")
    times = [r[k] for k in ("eager_us", "compile_us") if k in r]
    r["best_us"] = min(times) if times else None
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated subset")
    ap.add_argument("--reps", type=int, default=100, help="timed graph replays per mode")
    ap.add_argument("--seed", type=int, default=0, help="base seed; case i uses seed + i")
    ap.add_argument("--json", help="write results here")
    a = ap.parse_args()
    names = [c for c in a.cases.split(",") if c]
    unknown = [c for c in names if c not in CASES]
    if unknown:
        sys.exit(f"unknown cases {unknown}; known: {list(CASES)}")
    torch._dynamo.config.cache_size_limit = max(64, torch._dynamo.config.cache_size_limit)
    dev = torch.cuda.get_device_name()
    log(f"device {dev}, torch {torch.__version__}, inductor cache "
        f"{os.environ['TORCHINDUCTOR_CACHE_DIR']}")
    results, t0 = [], time.time()
    for name in names:
        seed = a.seed + list(CASES).index(name)
        try:
            results.append(run_case(name, a.reps, seed))
        except Exception as e:
            log(f"[{name}] FAILED: {type(e).__name__}: {e}")
            traceback.print_exc(limit=3)
            results.append(dict(case=name, seed=seed, error=f"{type(e).__name__}: {e}"))
        torch.cuda.empty_cache()

    def f(v, fmt):
        return "-" if v is None else format(v, fmt)
    log(f"\n{'case':<18} {'eager us':>9} {'compile us':>10} {'best us':>8} {'floor us':>8} "
        f"{'err eager':>9} {'err compile':>11}")
    for r in results:
        log(f"{r['case']:<18} {f(r.get('eager_us'), '9.2f')} {f(r.get('compile_us'), '10.2f')} "
            f"{f(r.get('best_us'), '8.2f')} {f(r.get('floor_us'), '8.2f')} "
            f"{f(r.get('eager_err'), '9.2e')} {f(r.get('compile_err'), '11.2e')}")
    log(f"total {time.time() - t0:.1f} s")
    if a.json:
        def clean(v):  # JSON has no NaN/inf
            return None if isinstance(v, float) and not math.isfinite(v) else v
        doc = dict(device=dev, torch=torch.__version__, date=datetime.datetime.now().isoformat(),
                   reps=a.reps, hbm_Bps=HBM_BPS, tc_flops=TC_FLOPS, min_us=MIN_US,
                   cases=[{k: clean(v) for k, v in r.items()} for r in results])
        with open(a.json, "w") as fh:
            json.dump(doc, fh, indent=1)
        log(f"wrote {a.json}")


if __name__ == "__main__":
    main()
