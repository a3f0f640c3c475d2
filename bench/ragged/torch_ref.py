#!/usr/bin/env python3
"""PyTorch anchors for the ragged encoder layer (issue #28; examples/ragged/encoder_b*.mu):
CORA's layer (hidden 512, 8 heads of 64, FFN 2048, ReLU, post-LayerNorm, biases, fp16) on a
batch of consecutive lines of a length file, in the issue's three forms, each replayed as a
CUDA graph:
  padded   x [B, Lmax, 512], nn.functional ops, an additive key mask
  compile  torch.compile of the padded layer
  packed   tokens [T, 512] for every token-wise op; attention per sequence over its own keys
           (torch.nn.attention.varlen when this PyTorch has it, else a nested-jagged SDPA,
           else one SDPA a sequence; the form used is printed)
Every form's output rows inside the sequences are checked against an f32 per-sequence
reference on the same inputs. Timing: median of --reps graph replays.

usage: bench/ragged/torch_ref.py [--files cola,mnli,race,squad] [--batches 32,128]
                                 [--lengths DIR] [--reps 50] [--json PATH]
"""
import argparse, json, os, statistics, sys, tempfile

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="mugen_inductor_"))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

H, NH, HD, FF, EPS = 512, 8, 64, 2048, 1e-5


def weights(gen, dev):
    def u(*s, fan):
        return ((torch.rand(*s, generator=gen) * 2 - 1) * (3.0 / fan) ** 0.5).to(dev, torch.float16)

    def v(*s):
        return (torch.rand(*s, generator=gen) * 2 - 1).to(dev, torch.float16)
    return dict(wq=u(H, H, fan=H), wk=u(H, H, fan=H), wv=u(H, H, fan=H), wo=u(H, H, fan=H),
                bq=v(H), bk=v(H), bv=v(H), bo=v(H), w1=u(H, FF, fan=H), b1=v(FF), w2=u(FF, H, fan=FF),
                b2=v(H), g1=v(H), be1=v(H), g2=v(H), be2=v(H))


def ffn_ln(x, a, W):  # the layer after attention: residual, LayerNorm, FFN, residual, LayerNorm
    y1 = F.layer_norm(x + a @ W["wo"] + W["bo"], (H,), W["g1"], W["be1"], EPS)
    f = torch.relu(y1 @ W["w1"] + W["b1"])
    return F.layer_norm(y1 + f @ W["w2"] + W["b2"], (H,), W["g2"], W["be2"], EPS)


def ffn_half(x, W):  # examples/ragged/ffn_b*.mu: FFN, residual, LayerNorm (the token-wise half)
    f = torch.relu(x @ W["w1"] + W["b1"])
    return F.layer_norm(x + f @ W["w2"] + W["b2"], (H,), W["g2"], W["be2"], EPS)


def padded_layer(x, mask, W):  # x [B, L, H]; mask [B, 1, 1, L] additive (0 or -inf)
    B, L, _ = x.shape

    def heads(t):
        return t.view(B, L, NH, HD).transpose(1, 2)
    q, k, v = (heads(x @ W["w" + n] + W["b" + n]) for n in "qkv")
    a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return ffn_ln(x, a.transpose(1, 2).reshape(B, L, H), W)


def packed_attention_fn():
    """(name, fn(q, k, v, cu, lens, maxlen) -> [T, NH, HD]) for q, k, v [T, NH, HD]"""
    try:
        from torch.nn.attention.varlen import varlen_attn  # PyTorch >= 2.9

        def fn(q, k, v, cu, lens, mx):
            return varlen_attn(q, k, v, cu, cu, mx, mx)
        return "varlen_attn", fn
    except Exception:
        pass
    try:
        def fn(q, k, v, cu, lens, mx):
            nq, nk, nv = (torch.nested.nested_tensor_from_jagged(t, offsets=cu).transpose(1, 2) for t in (q, k, v))
            return F.scaled_dot_product_attention(nq, nk, nv).transpose(1, 2).values()
        return "nested-jagged SDPA", fn
    except Exception:
        pass

    def loop(q, k, v, cu, lens, mx):
        out, c = [], cu.tolist()
        for i in range(len(c) - 1):
            s = slice(c[i], c[i + 1])
            out.append(F.scaled_dot_product_attention(q[s].transpose(0, 1), k[s].transpose(0, 1), v[s].transpose(0, 1)).transpose(0, 1))
        return torch.cat(out)
    return "one SDPA a sequence", loop


def packed_layer(xt, cu, lens, mx, W, attn):  # xt [T, H]
    T = xt.shape[0]
    q, k, v = ((xt @ W["w" + n] + W["b" + n]).view(T, NH, HD) for n in "qkv")
    return ffn_ln(xt, attn(q, k, v, cu, lens, mx).reshape(T, H), W)


def reference(xs, W):  # f32, one sequence at a time
    Wf = {n: t.float() for n, t in W.items()}
    out = []
    for x in xs:
        x = x.float()[None]
        m = torch.zeros(1, 1, 1, x.shape[1], device=x.device)
        out.append(padded_layer(x, m, Wf)[0])
    return torch.cat(out)


def graph_time(fn, reps):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", default="cola,mnli,race,squad")
    ap.add_argument("--batches", default="32,128")
    ap.add_argument("--lengths", default=os.path.join(os.path.dirname(__file__), "../../../shared/data/lengths"))
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json")
    ap.add_argument("--part", choices=("layer", "ffn"), default="layer",
                    help="ffn: only the token-wise half (examples/ragged/ffn_b*.mu), padded / compile / packed")
    a = ap.parse_args()
    dev = "cuda"
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    gen = torch.Generator().manual_seed(28)
    W = weights(gen, dev)
    aname, afn = packed_attention_fn()
    print("packed attention:", aname, flush=True)
    rows = []
    for name in a.files.split(","):
        lens_all = [int(x) for x in open(os.path.join(a.lengths, name + ".txt")) if x.strip()]
        for B in map(int, a.batches.split(",")):
            lens = lens_all[:B]
            mx, T = max(lens), sum(lens)
            xs = [((torch.rand(n, H, generator=gen) * 2 - 1)).to(dev, torch.float16) for n in lens]
            if a.part == "ffn":
                Wf = {n: t.float() for n, t in W.items()}
                ref = torch.cat([ffn_half(x.float(), Wf) for x in xs])
            else:
                ref = reference(xs, W)
            xt = torch.cat(xs)
            xp = torch.zeros(B, mx, H, device=dev, dtype=torch.float16)
            mask = torch.full((B, 1, 1, mx), float("-inf"), device=dev, dtype=torch.float16)
            for i, x in enumerate(xs):
                xp[i, :lens[i]] = x
                mask[i, ..., :lens[i]] = 0
            cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0).tolist()), device=dev, dtype=torch.int32)
            lt = torch.tensor(lens, device=dev, dtype=torch.int32)
            valid = torch.cat([torch.arange(n, device=dev) + i * mx for i, n in enumerate(lens)])
            if a.part == "ffn":
                comp = torch.compile(ffn_half, dynamic=False)
                forms = [("padded", lambda: ffn_half(xp, W), True), ("compile", lambda: comp(xp, W), True),
                         ("packed", lambda: ffn_half(xt, W), False)]
            else:
                comp = torch.compile(padded_layer, dynamic=False)
                forms = [("padded", lambda: padded_layer(xp, mask, W), True),
                         ("compile", lambda: comp(xp, mask, W), True),
                         ("packed", lambda: packed_layer(xt, cu, lt, mx, W, afn), False)]
            row = dict(file=name, batch=B, tokens=T, max_len=mx)
            for fname, fn, pad in forms:
                try:
                    us, out = graph_time(fn, a.reps)
                    o = out.reshape(-1, H)[valid] if pad else out
                    err = ((o.float() - ref).norm() / ref.norm()).item()
                    row[fname] = round(us, 2)
                    row[fname + "_err"] = err
                    if not err < 2e-2:
                        row[fname + "_bad"] = True
                except Exception as e:  # a form that cannot run here is reported, not fatal
                    row[fname] = None
                    row[fname + "_error"] = str(e).splitlines()[0][:200]
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("| file | batch | tokens | padded (µs) | compile (µs) | packed (µs) | errors |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        e = ", ".join("%s %.1e" % (f, r[f + "_err"]) for f in ("padded", "compile", "packed") if f + "_err" in r)
        print("| %s | %d | %d | %s | %s | %s | %s |" % (r["file"], r["batch"], r["tokens"], r["padded"], r["compile"], r["packed"], e))
    if a.json:
        json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, packed_attention=aname, rows=rows),
                  open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
