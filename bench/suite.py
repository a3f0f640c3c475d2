#!/usr/bin/env python3
"""The plain-lowering suite (issue #25): programs that are not the benchmark examples, run by
mugen with no search (`mugen run PROGRAM`: the program lowered, docs/lower.md) and, for
comparison, the per-operator path (`--plain`), beside PyTorch eager and torch.compile in the
same run, on the same GPU. Every output is checked: mugen's against its f32 reference
evaluation (mugen run exits 3 otherwise), PyTorch's against float64 PyTorch.

PyTorch runs each program as mugen reads it: `mugen check` prints the canonical form (one
operator a statement), which this script interprets with torch operators in the inputs'
dtype, as a user would write them (keepdim reductions, numpy broadcasting). Timing as
bench/torch_ref.py: CUDA-graph replays over rotating input sets, median; mugen's `run` times
the same way. Floor = max(bytes of inputs and outputs / 3.0 TB/s, matmul FLOPs / 660 TFLOP/s,
2 us).

    python3 bench/suite.py --bin build/mugen [--reps N] [--out DIR] [PROGRAM.mu ...]
"""
import argparse, math, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from torch_ref import time_graph, rel_err, L2_BYTES, MAX_SETS, HBM_BPS, TC_FLOPS, MIN_US  # noqa: E402

DT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
STMT = re.compile(r"^(\w+) = (.*)$")
CALL = re.compile(r"^(\w+)\((.*)\)$")
BIN = re.compile(r"^(\S+) ([-+*/]) (\S+)$")


def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "["
        depth -= ch == "]"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse(text):
    """Canonical .mu text -> (inputs [(name, dtype, shape)], statements, outputs)."""
    ins, stmts, outs = [], [], []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("input "):
            m = re.match(r"input (\w+) : (\w+)\[([^\]]*)\](?: range=(\S+))?", line)
            ins.append((m[1], m[2], [int(x) for x in m[3].split(",") if x.strip()], float(m[4] or 1)))
        elif line.startswith("output "):
            outs = [x.strip() for x in line[7:].split(",")]
        else:
            m = STMT.match(line)
            if not m:
                raise ValueError(f"cannot read '{line}'")
            stmts.append((m[1], m[2]))
    return ins, stmts, outs


def attr(v):
    v = v.strip()
    return [int(x) for x in v[1:-1].split(",")] if v.startswith("[") else int(v)


def apply(rhs, env, flops):
    """One statement's value; matmul FLOPs added to flops[0]."""
    def val(a):
        return env[a] if a in env else float(a)
    m = BIN.match(rhs)
    if m and not CALL.match(rhs):
        a, op, b = val(m[1]), m[2], val(m[3])
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b}[op]()
    m = CALL.match(rhs)
    fn, args = m[1], split_args(m[2])
    ops = [val(a) for a in args if "=" not in a]
    kw = {a.split("=", 1)[0].strip(): attr(a.split("=", 1)[1]) for a in args if "=" in a}
    x = ops[0]
    if fn == "matmul":
        flops[0] += 2 * math.prod(torch.broadcast_shapes(x.shape[:-2], ops[1].shape[:-2]) or (1,)) \
            * x.shape[-2] * x.shape[-1] * ops[1].shape[-1]
        return torch.matmul(x, ops[1])
    unary = {"exp": torch.exp, "sqrt": torch.sqrt, "relu": torch.relu,
             "silu": torch.nn.functional.silu, "sqr": lambda t: t * t,
             "rsqrt": torch.rsqrt, "neg": lambda t: -t}
    if fn in unary:
        return unary[fn](x)
    if fn == "sum":
        d, n = kw["dim"], x.shape[kw["dim"]]
        g = kw.get("group", n)
        if g == n:
            return x.sum(dim=d, keepdim=True)
        s = list(x.shape)
        return x.reshape(s[:d] + [n // g, g] + s[d + 1:]).sum(dim=d + 1)
    if fn == "max":
        return x.amax(dim=kw["dim"], keepdim=True)
    if fn == "reshape":
        return x.reshape(kw["shape"])
    if fn == "repeat":
        return x.repeat(*kw["times"])
    if fn == "concat":
        return torch.cat([x, ops[1]], dim=kw["dim"])
    if fn == "transpose":
        return x.permute(*kw["perm"])
    if fn == "slice":
        return x.narrow(kw["dim"], kw["start"], kw["len"])
    raise ValueError(f"operator {fn} is not known to bench/suite.py")


def program_fn(text):
    ins, stmts, outs = parse(text)

    def run(inputs, flops):
        env = dict(inputs)
        for name, rhs in stmts:
            env[name] = apply(rhs, env, flops)
        return tuple(env[o] for o in outs)

    def fn(**inputs):
        return run(inputs, [0])

    def count(**inputs):  # the reference run, counting matmul FLOPs
        flops = [0]
        return run(inputs, flops), flops[0]
    return ins, outs, fn, count


def run_mugen(binary, path, reps, seed, extra, ugraph=None):
    t0 = time.time()
    p = subprocess.run([binary, "run", "--backend", "gpu", "--reps", str(reps), "--seed", str(seed)]
                       + extra + [path] + ([ugraph] if ugraph else []), capture_output=True, text=True)
    out = p.stdout + p.stderr
    t = re.findall(r"time\s+([0-9.]+) us", out)
    e = [float(x) for x in re.findall(r"rel err ([0-9.e+-]+|nan|inf)", out)]
    k = re.search(r"(\d+) kernel launch", out)
    return dict(rc=p.returncode, us=float(t[-1]) if t else None, err=max(e) if e else None,
                launches=int(k[1]) if k else None, log=out, secs=time.time() - t0)


def write_table(rows, out, say, seed, final):
    def f(v, w=8, p=2):
        return f"{v:{w}.{p}f}" if isinstance(v, float) else f"{'-':>{w}}"
    head = (f"| {'program':<18} | {'mugen us':>8} | {'kernels':>7} | {'plain us':>8} | {'eager us':>8} | "
            f"{'compile us':>10} | {'floor us':>8} | {'eager/mugen':>11} | {'compile/mugen':>13} | mugen err | "
            f"eager err | compile err |")
    lines = [head, "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|"]
    for r in rows:
        m = r.get("mugen")
        lines.append(f"| {r['case']:<18} | {f(m)} | {r.get('mugen_k') or '-':>7} | {f(r.get('plain'))} | "
                     f"{f(r.get('eager'))} | {f(r.get('compile'), 10)} | {f(r['floor'])} | "
                     f"{f(r.get('eager') / m if m and r.get('eager') else None, 11)} | "
                     f"{f(r.get('compile') / m if m and r.get('compile') else None, 13)} | "
                     f"{r.get('mugen_err') if r.get('mugen_err') is not None else '-'} | "
                     + " | ".join(f"{r[k]:.3g}" if isinstance(r.get(k), float) else "-" for k in ("eager_err", "compile_err"))
                     + " |")
    best = [min(x for x in (r.get("eager"), r.get("compile")) if x) / r["mugen"]
            for r in rows if r.get("mugen") and (r.get("eager") or r.get("compile"))]
    lines.append("")
    lines.append(f"| {'program':<18} | {'mugen from':>12} | {'lowered us':>10} | {'searched us':>11} | {'best torch/mugen':>16} |")
    lines.append(f"|{'-' * 20}|{'-' * 14}|{'-' * 12}|{'-' * 13}|{'-' * 18}|")
    for r in rows:
        bt = min([x for x in (r.get("eager"), r.get("compile")) if x] or [0])
        lines.append(f"| {r['case']:<18} | {r.get('mugen_src', '-'):>12} | {f(r.get('lowered'), 10)} | "
                     f"{f(r.get('searched'), 11)} | {f(bt / r['mugen'] if bt and r.get('mugen') else None, 16)} |")
    lines.append(f"\nbest of eager and torch.compile over mugen: geometric mean {geo(best):.3f}x, lowest "
                 f"{min(best) if best else float('nan'):.3f}x, {sum(1 for b in best if b < 0.9)} programs below 0.9x")
    ge = geo([r["eager"] / r["mugen"] for r in rows if r.get("mugen") and r.get("eager")])
    gc = geo([r["compile"] / r["mugen"] for r in rows if r.get("mugen") and r.get("compile")])
    behind = [r["case"] for r in rows if not (r.get("mugen") and r.get("eager") and r["mugen"] <= r["eager"])]
    lines.append(f"\ngeometric mean: eager/mugen {ge:.3f}x, compile/mugen {gc:.3f}x over {len(rows)} programs; "
                 f"not at least as fast as eager: {', '.join(behind) or 'none'}")
    if final:
        for s in lines:
            say(s)
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "table.md"), "w") as fh:
            fh.write(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, seed {seed}"
                     f"{'' if final else ' (partial: the run did not finish)'}\n\n")
            fh.write("\n".join(lines) + "\n")


def geo(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--bin", default="build/mugen")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", help="directory for table.md and log.txt")
    ap.add_argument("--no-plain", action="store_true", help="skip the --plain runs")
    ap.add_argument("--searched", help="DIR/NAME/ holds program NAME's searched μGraphs (ugraph-N.mu, "
                    "best.mu; bench/general_search.sh): mugen's time is the fastest correct of them and "
                    "the lowered program, as mugen optimize chooses")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    progs = a.programs or sorted(os.path.join(here, "suite", f)
                                 for f in os.listdir(os.path.join(here, "suite")) if f.endswith(".mu"))
    log = []

    def say(s):
        print(s, flush=True)
        log.append(s)
    say(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, seed {a.seed}, reps {a.reps}")
    rows = []
    for i, path in enumerate(progs):
        name = os.path.basename(path)[:-3]
        seed = a.seed + i
        text = subprocess.run([a.bin, "check", path], capture_output=True, text=True, check=True).stdout
        ins, outs, fn, count = program_fn(text)
        set_bytes = sum(math.prod(s) * torch.tensor([], dtype=DT[d]).element_size() for _, d, s, _ in ins)
        n_sets = min(MAX_SETS, int(2 * L2_BYTES // set_bytes) + 1)
        gen = torch.Generator(device="cuda").manual_seed(seed)
        sets = [{n: ((torch.rand(s, generator=gen, device="cuda") * 2 - 1) * r).to(DT[d]) for n, d, s, r in ins}
                for _ in range(n_sets)]
        ref, flops = count(**{k: v.double() for k, v in sets[0].items()})
        moved = set_bytes + sum(r.numel() * 2 for r in ref)
        floor = max(moved / HBM_BPS * 1e6, flops / TC_FLOPS * 1e6, MIN_US)
        r = dict(case=name, floor=floor)
        for mode in ("eager", "compile"):
            torch._dynamo.reset()
            f = fn if mode == "eager" else torch.compile(fn, dynamic=False, fullgraph=True)
            try:
                us, o, g = time_graph(f, sets, a.reps)
                r[mode] = us
                r[mode + "_err"] = max(rel_err(x, y) for x, y in zip(o[0], ref))
                del o, g
            except Exception as e:  # keep going
                say(f"[{name}] {mode} FAILED: {type(e).__name__}: {e}")
        for mode, extra in (("mugen", []), ("plain", ["--plain"])):
            if mode == "plain" and a.no_plain:
                continue
            m = run_mugen(a.bin, path, a.reps, seed, extra)
            log.append(f"== {name} {mode} (exit {m['rc']}, {m['secs']:.1f} s)\n{m['log']}")
            r[mode] = m["us"] if m["rc"] == 0 else None
            r[mode + "_err"], r[mode + "_rc"], r[mode + "_k"] = m["err"], m["rc"], m["launches"]
        r["lowered"], r["mugen_src"] = r.get("mugen"), "lowered"
        sdir = os.path.join(a.searched, name) if a.searched else None
        found = sorted((f for f in os.listdir(sdir) if re.match(r"(ugraph-\d+|best)\.mu$", f)),
                       key=lambda f: int(re.sub(r"\D", "", f) or 0)) if sdir and os.path.isdir(sdir) else []
        for f in found:
            m = run_mugen(a.bin, path, a.reps, seed, [], os.path.join(sdir, f))
            log.append(f"== {name} searched {f} (exit {m['rc']}, {m['secs']:.1f} s)\n{m['log']}")
            say(f"[{name}] searched {f}: {m['us']} us (exit {m['rc']}, err {m['err']})")
            if m["rc"] == 0 and m["us"] and (r.get("searched") is None or m["us"] < r["searched"]):
                r["searched"], r["searched_src"] = m["us"], f
            if m["rc"] == 0 and m["us"] and (r.get("mugen") is None or m["us"] < r["mugen"]):
                r["mugen"], r["mugen_src"], r["mugen_k"], r["mugen_err"] = m["us"], f, m["launches"], m["err"]
        say(f"[{name}] mugen {r.get('mugen')} us ({r['mugen_src']}, exit {r.get('mugen_rc')}, {r.get('mugen_k')} launches, "
            f"err {r.get('mugen_err')}), plain {r.get('plain')}, eager {r.get('eager')}, "
            f"compile {r.get('compile')}, floor {floor:.2f}")
        rows.append(r)
        write_table(rows, a.out, say, a.seed, False)
        if a.out:
            with open(os.path.join(a.out, "log.txt"), "w") as fh:
                fh.write("\n".join(log) + "\n")
        torch.cuda.empty_cache()

    write_table(rows, a.out, say, a.seed, True)
    if a.out:
        with open(os.path.join(a.out, "log.txt"), "w") as fh:
            fh.write("\n".join(log) + "\n")


if __name__ == "__main__":
    main()
