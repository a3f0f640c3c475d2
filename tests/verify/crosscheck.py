#!/usr/bin/env python3
"""An independent check of the corpus's expected verdicts, without the field test:
    python3 tests/verify/crosscheck.py BUILD/mugen [CASE ...]      (needs numpy)

For each case it draws the same inputs for the program and the μGraph over several ranges
([-1, 1), tens with positive and negative offsets, [-30, 30)), evaluates both with
`mugen eval` in f64 and in f32, and guesses the verdict from the numbers alone:
  3  the f64 results differ somewhere the program's f64 result is finite (not equal over the reals)
  5  equal in f64, but on some range where the program's own f32 result is within tolerance
     the μGraph's f32 result is not
  0  otherwise
Errors are per element, |a - b| / (|b| + 1e-6 max|b|), equal infinities count as equal.
It prints one line per case and "MISMATCH" where the guess differs from `# expect`. It is a
sanity check of the corpus (float evaluation only sees what rounding to f64 shows: a pair that
differs by 1e-10 relative, such as zero_divp_near, is argued in its `# why`), not a test suite.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

RANGES = [("[-1,1)", 0.0, 1.0), ("40+-10", 40.0, 10.0), ("-40+-10", -40.0, 10.0), ("[-30,30)", 0.0, 30.0)]
TOL = {"f32": 1e-4, "f16": 1e-2, "bf16": 4e-2}


def header(path, key):
    for line in open(path):
        if line.startswith("# %s: " % key):
            return line.split(": ", 1)[1].strip()
    return None


def interface(path):
    ins, outs = [], []
    for line in open(path):
        w = line.split()
        if w[:1] == ["input"]:
            dt, shape = w[3].split("[")[0], line.split("[")[1].split("]")[0]
            dims = [int(s) for s in shape.split(",") if s.strip()]
            ins.append((w[1], dt, dims))
        elif w[:1] == ["output"]:
            outs += [s.strip() for s in line[len("output"):].split(",")]
    return ins, outs


def evaluate(mugen, path, files, f64, d):
    out = os.path.join(d, "o%d_%s" % (f64, os.path.basename(path)))
    os.makedirs(out, exist_ok=True)
    cmd = [mugen, "eval", "--show", "0", "--out", out] + (["--f64"] if f64 else [])
    for name, f in files.items():
        cmd += ["--in", "%s=%s" % (name, f)]
    r = subprocess.run(cmd + [path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (path, r.stderr.strip()))
    return out


def load(out, name, dt):
    return np.fromfile(os.path.join(out, name + ".bin"), dtype={"f32": np.float32, "f16": np.float16}[dt]).astype(np.float64)


def err(a, b, sens=None):
    """Per-element error of a against b; equal infinities and NaN against NaN count 0. The
    scale of an element is |b| plus 10^6 times sens, how far it moves when the inputs move by
    one f32 rounding (so an element that is a cancellation of larger terms is not held to
    its own tiny value), plus 10^-9 of the output's largest value."""
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    fin = np.isfinite(b)
    scale = np.abs(b) + 1e-9 * (np.max(np.abs(b[fin])) if fin.any() else 1.0) + 1e-300
    if sens is not None:
        scale = scale + 1e6 * np.where(np.isfinite(sens), sens, 0.0)
    e = np.where(same, 0.0, np.abs(a - b) / scale)
    e = np.where(np.isnan(e), np.inf, e)
    return float(np.max(e)) if e.size else 0.0


def check(mugen, case, seed):
    prog = header(case, "program")
    want = int(header(case, "expect"))
    ins, outs = interface(prog)
    dts = {n: dt for n, dt, _ in ins}
    odt = {}
    for line in open(prog):
        pass
    rng = np.random.default_rng(seed)
    notes, guess = [], 0
    real_bad = unstable = False
    with tempfile.TemporaryDirectory() as d:
        for rname, off, half in RANGES:
            files, moved = {}, {}
            for name, dt, dims in ins:
                v = off + half * (2 * rng.random(int(np.prod(dims)) if dims else 1) - 1)
                v = v.astype(np.float16 if dt == "f16" else np.float32).astype(np.float64)
                f = os.path.join(d, "%s.txt" % name)
                np.savetxt(f, v.reshape(-1, 1), fmt="%.17g")
                files[name] = f
                w = v * (1 + 2.0**-24 * rng.choice([-1.0, 1.0], v.shape))
                f = os.path.join(d, "%s_moved.txt" % name)
                np.savetxt(f, w.reshape(-1, 1), fmt="%.17g")
                moved[name] = f
            o = {}
            for tag, path, f64 in (("p64", prog, 1), ("u64", case, 1), ("p32", prog, 0), ("u32", case, 0)):
                o[tag] = evaluate(mugen, path, files, f64, d)
            o["m64"] = evaluate(mugen, prog, moved, 1, os.path.join(d, "m"))
            worst = []
            for out in outs:
                dt = open(os.path.join(o["p64"], out + ".bin"), "rb") and None
                # the output dtype: f16 iff the file has 2 bytes per element of the f64 program
                n_el = None
                size = os.path.getsize(os.path.join(o["p64"], out + ".bin"))
                dt = "f16" if all(x == "f16" for x in dts.values()) else "f32"
                p64, u64 = load(o["p64"], out, dt), load(o["u64"], out, dt)
                p32, u32 = load(o["p32"], out, dt), load(o["u32"], out, dt)
                sens = np.abs(load(o["m64"], out, dt) - p64)
                fin = np.isfinite(p64)
                rd = err(u64[fin], p64[fin]) if fin.any() else 0.0
                pe, ue = err(p32, p64, sens), err(u32, p64, sens)
                tol = TOL[dt]
                if rd > (1e-5 if dt == "f32" else 2e-3):
                    real_bad = True
                if pe <= tol and ue > tol:
                    unstable = True
                worst.append("%s real %.1e prog32 %.1e ug32 %.1e" % (out, rd, pe, ue))
            notes.append("%s: %s" % (rname, "; ".join(worst)))
    guess = 3 if real_bad else 5 if unstable else 0
    return want, guess, notes


def main():
    mugen = os.path.abspath(sys.argv[1])
    cases = sys.argv[2:] or sorted(os.path.join("tests/verify/cases", f) for f in os.listdir("tests/verify/cases"))
    bad = 0
    for i, c in enumerate(cases):
        try:
            want, guess, notes = check(mugen, c, 1000 + i)
        except RuntimeError as e:
            print("ERROR %s: %s" % (os.path.basename(c), e))
            bad += 1
            continue
        tag = "ok" if want == guess else "MISMATCH"
        bad += want != guess
        print("%-8s %-28s expect %d guess %d | %s" % (tag, os.path.basename(c)[:-3], want, guess, " | ".join(notes)))
    print("%d cases, %d mismatches" % (len(cases), bad))


if __name__ == "__main__":
    main()
