# torch.matmul alone (cuBLAS) at the variants' shapes, f16: a CUDA graph of 20 products, each
# on its own operands (none served from L2 by the one before), median of replays / 20
import torch
def t(m, k, n, reps=50, n_mm=20):
    a = [torch.randn(m, k, device='cuda', dtype=torch.half) for _ in range(n_mm)]
    b = [torch.randn(k, n, device='cuda', dtype=torch.half) for _ in range(n_mm)]
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for i in range(n_mm): c = a[i] @ b[i]
        with torch.cuda.graph(g):
            for i in range(n_mm): c = a[i] @ b[i]
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
        e0.record(); g.replay(); e1.record(); torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1000 / n_mm)
    ts.sort()
    print(f"torch.matmul {m}x{k}x{n}: {ts[len(ts)//2]:.2f} us")
for s in [(128, 1024, 4096), (128, 4096, 1024), (16, 2048, 8192), (16, 8192, 2048), (16, 1024, 4096), (16, 4096, 1024)]:
    t(*s)
