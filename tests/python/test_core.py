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


def test_errors_are_clear():
    with pytest.raises(mugen.MugenError) as e:
        mugen.Program("input x : f16[4, 8]\ny = exq(x)\noutput y\n")
    assert e.value.status == "parse" and "unknown operator 'exq'" in str(e.value) and "^" in str(e.value)
    k = mugen.Kernel(mugen.Program("input x : f32[4, 8]\ny = x + x\noutput y\n"), target="c")
    with pytest.raises(ValueError, match="input x is float32\\[4, 8\\], got float16\\[4, 8\\]"):
        k(np.zeros((4, 8), np.float16))
    with pytest.raises(ValueError, match="takes 1 inputs, got 2"):
        k(np.zeros((4, 8), np.float32), np.zeros((4, 8), np.float32))
