"""Adds attntimes.cu's marks to `mugen emit`'s source of a two-kernel program (stdin -> stdout).
Kernel 1: 0 start, 1 loop start, 2 loop end, 3 first save, 4 end. Kernel 2: 5 start, 6 grid
wait done, 7 fixed tiles loaded, 8 first save, 9 end."""
import sys
s = sys.stdin.read()
g = [i for i in range(len(s)) if s.startswith('extern "C" __global__', i)]
assert len(g) == 2, "two kernels expected"
parts = [s[:g[0]], s[g[0]:g[1]], s[g[1]:]]
def mark(t, pat, k, before=True, first=True):
    i = t.index(pat) if first else t.rindex(pat)
    if not before:
        i += len(pat)
    return t[:i] + "MG_MARK(%d);\n" % k + t[i:]
def end(t, k):
    i = t.index("\n}\n")
    return t[:i] + "\n__syncthreads(); MG_MARK(%d);" % k + t[i:]
k1, k2 = parts[1], parts[2]
k1 = mark(k1, "bz = blockIdx.z;\n", 0, before=False)
k1 = mark(k1, "    for (int it = 0;", 1)
k1 = mark(k1, "    (void)0;\n", 2, before=False)
k1 = mark(k1, "    /* save:", 3)
k1 = end(k1, 4)
k2 = mark(k2, "    mg_grid_wait();", 5)
k2 = mark(k2, "    mg_grid_wait(); /* the previous kernel's results */\n", 6, before=False)
k2 = mark(k2, "/* the fixed tiles */\n    __syncthreads();\n", 7, before=False)
k2 = mark(k2, "    /* save:", 8)
k2 = end(k2, 9)
sys.stdout.write(parts[0] + k1 + k2)
