#!/usr/bin/env python3
"""What the attention libraries on the machine reach on the shapes of the GQA cases.

The bench's GQA program is exp(Q K) / rowsum times V with no max subtraction; a library's
fused attention (softmax with its running max, scale 1) does the same products and exps, so
its time says how close a specialist kernel gets to the floor on these shapes. Each backend of
torch.nn.functional.scaled_dot_product_attention (FlashAttention, memory-efficient, cuDNN) is
timed the way bench/torch_ref.py times PyTorch (one CUDA graph over rotating input sets, median
replay / sets), with its output checked against a float64 softmax reference.

    python3 bench/micro/sdpa.py [--reps N]
"""
import argparse, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
import torch_ref  # noqa: E402  (time_graph, rel_err, the floor's constants)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    a = ap.parse_args()
    print(f"# device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("# case     heads  Lq    Lk    d   floor_us  backend     us      rel_err  x_floor")
    for b in (1, 8):
        h, lq, lk, d = 2 * b, 256, 4096, 64
        flops = 2 * h * lq * lk * d * 2
        moved = 2 * (h * lq * d * 2 + 2 * h * lk * d)
        floor = max(moved / torch_ref.HBM_BPS * 1e6, flops / torch_ref.TC_FLOPS * 1e6, torch_ref.MIN_US)
        set_bytes = 2 * (h * lq * d + 2 * h * lk * d)
        n_sets = min(torch_ref.MAX_SETS, int(2 * torch_ref.L2_BYTES // set_bytes) + 1)
        gen = torch.Generator(device="cuda").manual_seed(1234 + b)
        sets = [dict(q=torch.rand(1, h, lq, d, generator=gen, device="cuda", dtype=torch.float16) * 2 - 1,
                     k=torch.rand(1, h, lk, d, generator=gen, device="cuda", dtype=torch.float16) * 2 - 1,
                     v=torch.rand(1, h, lk, d, generator=gen, device="cuda", dtype=torch.float16) * 2 - 1)
                for _ in range(n_sets)]
        s0 = {k: t.double() for k, t in sets[0].items()}
        ref = torch.softmax(s0["q"] @ s0["k"].transpose(-1, -2), dim=-1) @ s0["v"]
        for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                         ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            def fn(q, k, v, be=be):
                with sdpa_kernel(be):
                    return torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=1.0)
            try:
                us, outs, g = torch_ref.time_graph(fn, sets, a.reps)
                err = torch_ref.rel_err(outs[0], ref)
                print(f"gqa_b{b}    {h:5d} {lq:5d} {lk:5d} {d:3d}  {floor:8.2f}  {name:10s} {us:7.2f}  {err:.2e}  {us / floor:5.2f}x")
                del outs, g
            except Exception as e:
                print(f"gqa_b{b}    {h:5d} {lq:5d} {lk:5d} {d:3d}  {floor:8.2f}  {name:10s} failed: {type(e).__name__}: {e}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
