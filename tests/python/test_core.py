"""The package's C API binding on NumPy arrays (docs/python.md): programs, the reference, the
C backend's kernels against it on fresh random inputs with poisoned outputs, and clear errors."""
import os

import numpy as np
import pytest

import mugen

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rand(t, rng):
    return rng.uniform(-1, 1, size=t.shape).astype(t.dtype)


@pytest.mark.parametrize("name", ["lora", "gated_mlp", "rmsnorm_linear_b1", "softmax_attention"])
def test_examples_match_reference(name):
    p = mugen.Program.load(os.path.join(ROOT, "examples", name + ".mu"))
    k = mugen.Kernel(p, target="c")
    rng = np.random.default_rng(sum(map(ord, name)))
    ins = [rand(t, rng) for t in p.inputs]
    outs = [np.full(d.shape, np.nan, dtype=d.dtype) for d in k.outputs]  # poisoned
    k(*ins, out=outs)
    for o, r in zip(outs, p.reference(*ins)):
        assert not np.isnan(o).any()
        err = np.linalg.norm(o.astype(np.float64) - r) / np.linalg.norm(r)
        assert err < 1e-2, err


def test_program_introspection_and_formats():
    p = mugen.Program("input x : f16[4, 8]\ny = exp(x) * 2\noutput y\n")
    assert [str(t) for t in p.inputs] == ["x: float16[4, 8]"]
    assert p.outputs[0].shape == (4, 8)
    assert "exp(x)" in p.format() and '"shape"' in p.format("json") and "digraph" in p.format("dot")


def test_symbolic_dim_binding():
    p = mugen.Program("dim B [1, 64]\ninput x : f32[B, 8]\ny = relu(x) + 1\noutput y\n")
    assert p.inputs[0].shape == (64, 8)
    p.bind("B", 5)
    assert p.inputs[0].shape == (5, 8)
    x = np.random.default_rng(1).uniform(-1, 1, (5, 8)).astype(np.float32)
    assert np.allclose(p.reference(x)[0], np.maximum(x, 0) + 1)
    with pytest.raises(mugen.MugenError, match="outside its range"):
        p.bind("B", 65)
    assert p.capacities() == [1, 2, 4, 8, 16, 32, 64]
    k = mugen.Kernel(p, target="c")  # the variant for 8 rows (B = 5): buffers of 8 rows
    assert k.inputs[0].shape == (8, 8)
    x8 = np.full((8, 8), np.nan, dtype=np.float32)
    x8[:5] = x
    assert np.allclose(k(x8, rows=5)[:5], np.maximum(x, 0) + 1)
    with pytest.raises(mugen.MugenError, match="holds 1 to 8"):
        k(x8, rows=9)


def test_reduced_dim_kv_length():
    """A KV length (a reduced dim, docs/tuning.md): one kernel for the capacity of L = 300 (512)
    runs L = 300 and then 170 (rows=), its K and V buffers NaN past each length, against numpy."""
    p = mugen.Program("dim L [128, 2048]\ninput q : f32[8, 32]\ninput k : f32[32, L]\ninput v : f32[L, 16]\n"
                      "e = exp(matmul(q, k) * 0.25)\no = matmul(e / sum(e, dim=1), v)\noutput o\n")
    assert p.reduced() and p.capacities() == [128, 256, 512, 1024, 2048]
    p.bind("L", 300)
    kern = mugen.Kernel(p, target="c")
    assert kern.inputs[1].shape == (32, 512) and kern.inputs[2].shape == (512, 16)
    rng = np.random.default_rng(34)
    q = rng.uniform(-1, 1, (8, 32)).astype(np.float32)
    for n in (300, 170):
        k = np.full((32, 512), np.nan, np.float32)
        v = np.full((512, 16), np.nan, np.float32)
        k[:, :n] = rng.uniform(-1, 1, (32, n))
        v[:n] = rng.uniform(-1, 1, (n, 16))
        e = np.exp(q.astype(np.float64) @ k[:, :n] * 0.25)
        want = (e / e.sum(axis=1, keepdims=True)) @ v[:n]
        got = kern(q, k, v, rows=n)
        assert not np.isnan(got).any() and np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-4
    with pytest.raises(mugen.MugenError, match="holds 1 to 512"):
        kern(q, k, v, rows=513)
    assert not mugen.Program("dim B [1, 8]\ninput x : f32[B, 4]\ny = x + 1\noutput y\n").reduced()


def test_errors_are_clear():
    with pytest.raises(mugen.MugenError) as e:
        mugen.Program("input x : f16[4, 8]\ny = exq(x)\noutput y\n")
    assert e.value.status == "parse" and "unknown operator 'exq'" in str(e.value) and "^" in str(e.value)
    k = mugen.Kernel(mugen.Program("input x : f32[4, 8]\ny = x + x\noutput y\n"), target="c")
    with pytest.raises(ValueError, match="input x is float32\\[4, 8\\], got float16\\[4, 8\\]"):
        k(np.zeros((4, 8), np.float16))
    with pytest.raises(ValueError, match="takes 1 inputs, got 2"):
        k(np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32))
    x = np.random.default_rng(35).uniform(-1, 1, (4, 8)).astype(np.float32)
    with pytest.raises(ValueError, match="out\\[0\\] \\(y\\) must be a contiguous float32\\[4, 8\\] where the inputs are, got float16\\[4, 8\\]"):
        k(x, out=[np.empty((4, 8), np.float16)])
    with pytest.raises(ValueError, match="out\\[0\\] \\(y\\) must be a contiguous"):
        k(x, out=[np.empty((8, 4), np.float32).T])
    o = np.full((4, 8), np.nan, np.float32)
    assert k(x, out=[o]) is o and np.allclose(o, 2 * x)


def test_ragged_encoder_from_packed_tensors():
    """A ragged program (an encoder layer, tools/make_encoder.py) bound to lengths with 0, 1 and
    the maximum among them: the kernel takes the lengths and packed tokens in capacity rows (junk
    past the tokens), and its first rows match the reference on the packed tensors."""
    import subprocess
    import sys
    text = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_encoder.py"), "--batch", "5", "--max", "48",
                           "--hidden", "64", "--heads", "2", "--ffn", "128", "--dtype", "f32"],
                          capture_output=True, text=True, check=True).stdout
    p = mugen.Program(text, "encoder.mu")
    with pytest.raises(ValueError, match="bind its lengths"):
        p.reference(*[np.zeros(1)] * len(p.inputs))
    lens = [0, 1, 48, 17, 30]
    p.bind_lengths("len", lens)
    k = mugen.Kernel(p, target="c")
    assert k.inputs[0].name == "len" and k.inputs[0].shape == (5,)
    rng = np.random.default_rng(28)
    ins = {d.name: rng.uniform(-1, 1, size=p._packed_shape(d)).astype(np.float32) * (d.range or 1) for d in p.inputs}
    assert ins["x"].shape == (sum(lens), 64)
    kin = []
    for d in k.inputs:
        if d.name == "len":
            kin.append(np.array(lens, dtype=np.float32))
            continue
        x = ins[d.name]
        if x.shape != d.shape:  # capacity rows: junk past the tokens, which the kernel ignores
            x = np.concatenate([x, np.full((d.shape[0] - x.shape[0],) + x.shape[1:], 1e4, dtype=np.float32)])
        kin.append(x)
    out = np.full(k.outputs[0].shape, np.nan, dtype=np.float32)
    k(*kin, out=[out])
    ref = p.reference(*[ins[d.name] for d in p.inputs])[0]
    t = sum(lens)
    assert not np.isnan(out[:t]).any()
    err = np.linalg.norm(out[:t] - ref) / np.linalg.norm(ref)
    assert err < 1e-4, err
    with pytest.raises(mugen.MugenError):
        p.bind_lengths("len", [1, 2])  # five sequences declared
