#!/usr/bin/env python3
"""mugen's C backend against a CPU library on the same programs (issue #25 item 6).

For each examples/NAME.mu: `mugen run --backend c` on the plain program and, where it exists,
on examples/ugraphs/NAME.mu (each checks its outputs against mugen's f32 reference and says
ok or MISMATCH; its time is the median of its runs, which stop after 1 s), next to the same
program written with numpy in float32 (inputs drawn uniform in [-1, 1) and rounded to f16 as
mugen's are, then held as f32: numpy has no fast f16 matmul, and f32 copies of the weights are
what a numpy user would keep). numpy's output is checked against a float64 evaluation
(relative error ||out - ref|| / ||ref||). PyTorch CPU eager is timed too when `import torch`
works (the PyPI wheel for Linux is the CUDA build, which cannot be imported without its
nvidia-* libraries; see docs/notes/2026-11-26-cpu-backend.md).

    python3 bench/cpu.py [--mugen build/mugen] [--cases a,b] [--budget 1.0]

The ratio column is mugen's better time (plain or μGraph) over the anchor's: below 2 is the
issue's goal ("within 2x"). Timings on a shared machine move with its load; run it twice.
"""
import argparse, os, re, statistics, subprocess, sys, time

import numpy as np

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except Exception:  # ImportError, or OSError from a CUDA build missing its libraries
    HAVE_TORCH = False


def rms(x, d):
    # rmsnorm(X, dim=d) = X / sqrt(sum(sqr(X), dim=d) / n): no eps, no weight
    return x / np.sqrt(np.sum(x * x, axis=d, keepdims=True) / x.shape[d])


def silu(x):
    return x / (1 + np.exp(-x))


def gqa(Q, K, V):
    S = np.exp(np.matmul(Q, K))
    return np.matmul(S / np.sum(S, axis=2, keepdims=True), V)


def softmax_attention(Q, K, V):
    S = np.matmul(Q, K) * 0.125
    E = np.exp(S - np.max(S, axis=2, keepdims=True))
    return np.matmul(E / np.sum(E, axis=2, keepdims=True), V)


def attn_shapes(b):
    return dict(Q=(2 * b, 256, 64), K=(2 * b, 64, 4096), V=(2 * b, 4096, 64))


# name -> (input shapes, the program; the same functions take numpy or torch arrays where the
# calls agree, and numpy's here)
CASES = {
    "rmsnorm_linear_b1": (dict(X=(2, 4096), W=(4096, 6144)),
                          lambda X, W: np.matmul(X / np.sqrt(np.sum(X * X, axis=1, keepdims=True) / 4096), W)),
    "rmsnorm_linear_b8": (dict(X=(16, 4096), W=(4096, 6144)),
                          lambda X, W: np.matmul(X / np.sqrt(np.sum(X * X, axis=1, keepdims=True) / 4096), W)),
    "gated_mlp": (dict(X=(8, 4096), W1=(4096, 4096), W2=(4096, 4096)),
                  lambda X, W1, W2: silu(np.matmul(X, W1)) * np.matmul(X, W2)),
    "lora": (dict(X=(16, 256), W=(256, 4096), A=(256, 16), B=(16, 4096)),
             lambda X, W, A, B: np.matmul(X, W) + np.matmul(np.matmul(X, A), B)),
    "ntrans_b1": (dict(X=(1, 4096), H=(1, 4096), alpha=(1, 4096)),
                  lambda X, H, alpha: rms(X + alpha * rms(H - X, 1), 1)),
    "ntrans_b8": (dict(X=(8, 4096), H=(8, 4096), alpha=(8, 4096)),
                  lambda X, H, alpha: rms(X + alpha * rms(H - X, 1), 1)),
    "gqa_b1": (attn_shapes(1), gqa),
    "gqa_b8": (attn_shapes(8), gqa),
    "qknorm_b1": (attn_shapes(1), lambda Q, K, V: gqa(rms(Q, 2), rms(K, 1), V)),
    "qknorm_b8": (attn_shapes(8), lambda Q, K, V: gqa(rms(Q, 2), rms(K, 1), V)),
    "softmax_attention": (attn_shapes(1), softmax_attention),
}


def time_fn(fn, budget, max_runs=50):
    """Median seconds of fn() over runs after a warm-up, stopping after `budget` seconds of
    runs (at least one), as mugen's C timing does."""
    fn()
    ts = []
    while len(ts) < max_runs and (not ts or sum(ts) < budget):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), len(ts)


def run_mugen(mugen, prog, ugraph, seed):
    cmd = [mugen, "run", "--backend", "c", "--seed", str(seed), prog] + ([ugraph] if ugraph else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    m = re.search(r"time\s+([0-9.]+) us \(median of (\d+)", out)
    status = "ok" if p.returncode == 0 else "MISMATCH" if p.returncode == 3 else "error"
    return (float(m.group(1)) / 1e3 if m else None), (int(m.group(2)) if m else 0), status


def anchor(name, budget, seed):
    shapes, fn = CASES[name]
    rng = np.random.default_rng(seed)
    xs = {k: (rng.random(s, dtype=np.float32) * 2 - 1).astype(np.float16).astype(np.float32)
          for k, s in shapes.items()}
    ref = fn(**{k: v.astype(np.float64) for k, v in xs.items()})
    out = fn(**xs)
    err = float(np.linalg.norm(out.astype(np.float64) - ref) / np.linalg.norm(ref))
    t, n = time_fn(lambda: fn(**xs), budget)
    res = dict(numpy_ms=t * 1e3, numpy_runs=n, numpy_err=err)
    if HAVE_TORCH:
        import torch
        tx = {k: torch.from_numpy(v) for k, v in xs.items()}
        tfn = TORCH.get(name)
        if tfn:
            with torch.no_grad():
                tt, tn = time_fn(lambda: tfn(**tx), budget)
            res.update(torch_ms=tt * 1e3, torch_runs=tn)
    return res


def torch_cases():
    if not HAVE_TORCH:
        return {}
    import torch

    def trms(x, d):
        return x / torch.sqrt(torch.sum(x * x, dim=d, keepdim=True) / x.shape[d])

    def tgqa(Q, K, V):
        S = torch.exp(Q @ K)
        return (S / S.sum(2, keepdim=True)) @ V

    rl = lambda X, W: (X / torch.sqrt(torch.sum(X * X, 1, keepdim=True) / 4096)) @ W  # noqa: E731
    nt = lambda X, H, alpha: trms(X + alpha * trms(H - X, 1), 1)  # noqa: E731
    return {
        "rmsnorm_linear_b1": rl, "rmsnorm_linear_b8": rl,
        "gated_mlp": lambda X, W1, W2: torch.nn.functional.silu(X @ W1) * (X @ W2),
        "lora": lambda X, W, A, B: X @ W + (X @ A) @ B,
        "ntrans_b1": nt, "ntrans_b8": nt, "gqa_b1": tgqa, "gqa_b8": tgqa,
        "qknorm_b1": lambda Q, K, V: tgqa(trms(Q, 2), trms(K, 1), V),
        "qknorm_b8": lambda Q, K, V: tgqa(trms(Q, 2), trms(K, 1), V),
        "softmax_attention": lambda Q, K, V: torch.softmax((Q @ K) * 0.125, 2) @ V,
    }


TORCH = torch_cases()


def fmt(x):
    return "-" if x is None else f"{x:.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mugen", default="build/mugen")
    ap.add_argument("--cases", default="")
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    names = [n for n in (a.cases.split(",") if a.cases else
             sorted(os.path.basename(p)[:-3] for p in os.listdir("examples") if p.endswith(".mu")))]
    cpu = ""
    try:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    print(f"# {cpu}, {os.cpu_count()} cores; numpy {np.__version__}"
          f"{'; torch ' + __import__('torch').__version__ if HAVE_TORCH else '; torch: not importable'};"
          f" ms, median of runs stopping after {a.budget:g} s")
    head = f"{'case':<20} {'mugen plain':>12} {'mugen ugraph':>13} {'numpy f32':>10}"
    head += f" {'torch f32':>10}" if HAVE_TORCH else ""
    print(head + f" {'best/anchor':>12}  checks")
    bad = 0
    for n in names:
        if n not in CASES:
            print(f"{n:<20} (no numpy version: skipped)")
            continue
        prog, ug = f"examples/{n}.mu", f"examples/ugraphs/{n}.mu"
        tp, _, sp = run_mugen(a.mugen, prog, None, a.seed)
        tu, _, su = run_mugen(a.mugen, prog, ug, a.seed) if os.path.exists(ug) else (None, 0, "-")
        r = anchor(n, a.budget, a.seed)
        best = min(t for t in (tp, tu) if t is not None) if (tp or tu) else None
        anc = min(r["numpy_ms"], r.get("torch_ms", float("inf")))
        row = f"{n:<20} {fmt(tp):>12} {fmt(tu):>13} {fmt(r['numpy_ms']):>10}"
        row += f" {fmt(r.get('torch_ms')):>10}" if HAVE_TORCH else ""
        ratio = f"{best / anc:.2f}" if best else "-"
        print(row + f" {ratio:>12}  mugen {sp}/{su}, numpy rel err {r['numpy_err']:.1e}", flush=True)
        bad += sp != "ok" or su not in ("ok", "-")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
