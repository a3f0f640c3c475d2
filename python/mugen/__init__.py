"""mugen: a superoptimizing compiler for GPU tensor programs, from Python (docs/python.md).

    import mugen
    p = mugen.Program(open("examples/lora.mu").read())
    k = mugen.Kernel(p, target="c")          # or "cuda" for device tensors
    y = k(x, w)                              # NumPy arrays or torch tensors
    f = mugen.compile(fn, example_inputs)    # a PyTorch function, traced and translated
"""
from .core import Kernel, MugenError, Program, Tensor

__all__ = ["Program", "Kernel", "Tensor", "MugenError", "compile"]


def compile(fn, example_inputs, **kw):  # noqa: A001 (the name users expect)
    """mugen.compile(fn_or_module, example_inputs, explain=False): see mugen.torch_frontend."""
    from .torch_frontend import compile as _compile
    return _compile(fn, example_inputs, **kw)

import sys as _sys

if "torch" in _sys.modules:  # torch.compile(backend="mugen") where PyTorch is already loaded
    from .torch_frontend import _register
    _register()
