"""PyTorch to mugen (docs/python.md): mugen.compile(fn_or_module, example_inputs) traces the
function with torch.fx, propagates the example inputs' shapes and dtypes, writes the traced
graph as a mugen program (inputs first, then the module's parameters and buffers as inputs,
one statement per operator), compiles it (the C target for CPU tensors, CUDA for CUDA
tensors) and returns a callable. A graph with an operator mugen does not have runs in PyTorch
in PyTorch, and the graph is split around it (torch.fx split_module): mugen runs each piece
between such operators; explain=True prints the pieces, which operators PyTorch runs and why
(compiled.explain holds the same text). torch.compile(model, backend="mugen") takes the
same path for each graph Dynamo hands it."""
import operator

from .core import Kernel, Program, optimize_opts

KEYWORDS = {"input", "output", "dim", "lengths", "kernel"}


class Unsupported(Exception):
    pass


def _dtype(t):
    import torch
    m = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}
    if t not in m:
        raise Unsupported(f"dtype {t} (mugen: float16, bfloat16, float32)")
    return m[t]


class _Writer:
    """The mugen program of a traced graph: statements, inputs, and what could not be written."""

    def __init__(self, gm, sym=None):
        self.gm, self.sym = gm, sym  # sym: the one symbolic size (a sympy symbol) written as dim B
        self.lines, self.inputs, self.params, self.names = [], [], [], {}
        self.unsupported = []  # (node, why)
        self.supported = []    # node names written

    def name(self, node):
        n = "".join(c if c.isalnum() or c == "_" else "_" for c in node.name)
        if not n or n[0].isdigit() or n in KEYWORDS:
            n = "t_" + n
        while n in self.names.values() and self.names.get(node) != n:
            n += "_"
        self.names[node] = n
        return n

    def arg(self, a):
        import torch.fx
        if isinstance(a, torch.fx.Node):
            if a not in self.names:  # made by an operator PyTorch runs: an input of the piece after it
                shape, dt = self.shape(a)
                self.inputs.append(f"input {self.name(a)} : {_dtype(dt)}[{self.dims(shape)}]")
            return self.names[a]
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            raise Unsupported(f"operand {a!r} (tensors and numbers only)")
        v = float(a)
        return repr(v) if v >= 0 else f"(0 - {repr(-v)})"

    def shape(self, node):
        tm = node.meta.get("tensor_meta")
        if tm is None or not hasattr(tm, "shape"):
            raise Unsupported("no single tensor result (shape propagation)")
        return list(tm.shape), tm.dtype

    def dims(self, shape):
        """A shape as the program writes it: the symbolic size as B, K * B where K times it."""
        out = []
        for x in shape:
            if isinstance(x, int):
                out.append(str(x))
                continue
            e = getattr(getattr(x, "node", None), "expr", None)
            if e is None or self.sym is None:
                raise Unsupported(f"a size {x} that is not a number")
            if e == self.sym:
                out.append("B")
                continue
            k = e / self.sym
            if not (k.is_Integer and int(k) > 0):
                raise Unsupported(f"a size {x}: only the batch size or a multiple of it")
            out.append(f"{int(k)} * B")
        return ", ".join(out)

    def emit(self, node, expr):
        self.lines.append(f"{self.name(node)} = {expr}")


def _dims(d, rank):
    ds = d if isinstance(d, (list, tuple)) else [d]
    return sorted((x + rank) % rank for x in ds)


def _reduce(w, node, op, x, dims, keepdim, rank, out_shape):
    expr = x
    for d in dims:
        expr = f"{op}({expr}, dim={d})"
    if not keepdim:
        expr = f"reshape({expr}, shape=[{w.dims(out_shape)}])" if out_shape else None
        if expr is None:
            raise Unsupported("a reduction to a scalar")
    w.emit(node, expr)


def _translate(w, node):
    """One call node into w (raises Unsupported)."""
    import torch
    import torch.nn.functional as F
    t = node.target
    args, kw = node.args, node.kwargs
    out_shape, _ = w.shape(node)
    a = lambda i: w.arg(args[i])  # noqa: E731
    if node.op == "call_module":
        m = w.gm.get_submodule(t)
        if isinstance(m, torch.nn.Linear):
            wn, bn = _param(w, node, t + ".weight", m.weight), (_param(w, node, t + ".bias", m.bias) if m.bias is not None else None)
            expr = f"matmul({a(0)}, transpose({wn}, perm=[1, 0]))"
            return w.emit(node, f"{expr} + {bn}" if bn else expr)
        if isinstance(m, torch.nn.ReLU):
            return w.emit(node, f"relu({a(0)})")
        if isinstance(m, torch.nn.SiLU):
            return w.emit(node, f"silu({a(0)})")
        raise Unsupported(f"module {type(m).__name__}")
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    binary = {operator.add: "+", torch.add: "+", "add": "+", operator.sub: "-", torch.sub: "-", "sub": "-",
              operator.mul: "*", torch.mul: "*", "mul": "*", operator.truediv: "/", torch.div: "/", "div": "/"}
    if t in binary:
        if kw.get("alpha", 1) != 1 or kw.get("rounding_mode") is not None:
            raise Unsupported(f"{name} with alpha or rounding_mode")
        if binary[t] == "*" and len(args) == 2 and args[0] is args[1] and hasattr(args[0], "meta"):
            return w.emit(node, f"sqr({a(0)})")  # x * x: one operand, as the .mu files write it
        return w.emit(node, f"({a(0)} {binary[t]} {a(1)})")
    if t in (operator.matmul, torch.matmul, torch.mm, torch.bmm, "matmul", "mm", "bmm"):
        return w.emit(node, f"matmul({a(0)}, {a(1)})")
    unary = {torch.exp: "exp", "exp": "exp", torch.sqrt: "sqrt", "sqrt": "sqrt", torch.rsqrt: "rsqrt",
             "rsqrt": "rsqrt", torch.relu: "relu", F.relu: "relu", "relu": "relu", F.silu: "silu",
             torch.square: "sqr", "square": "sqr"}
    if t in unary:
        if t is F.relu and (kw.get("inplace") or (len(args) > 1 and args[1])):
            raise Unsupported("relu(inplace=True)")
        return w.emit(node, f"{unary[t]}({a(0)})")
    if t in (operator.pow, torch.pow, "pow") and len(args) == 2 and args[1] == 2:
        return w.emit(node, f"sqr({a(0)})")
    if t in (torch.sigmoid, "sigmoid"):
        return w.emit(node, f"(1.0 / (1.0 + exp(0 - {a(0)})))")
    if t in (operator.neg, torch.neg, "neg"):
        return w.emit(node, f"(0 - {a(0)})")
    rank = len(w.shape(args[0])[0]) if hasattr(args[0], "meta") else 0
    if t in (torch.sum, "sum", torch.mean, "mean", torch.amax, "amax"):
        d = kw.get("dim", args[1] if len(args) > 1 else None)
        if d is None:
            raise Unsupported(f"{name} over every dim")
        keep = kw.get("keepdim", args[2] if len(args) > 2 else False)
        op = {"sum": "sum", "mean": "mean", "amax": "max"}[name]
        return _reduce(w, node, op, a(0), _dims(d, rank), keep, rank, out_shape)
    if t in (torch.softmax, F.softmax, "softmax"):
        d = kw.get("dim", args[1] if len(args) > 1 else None)
        if d is None or kw.get("dtype") is not None:
            raise Unsupported("softmax without dim, or with dtype")
        d = _dims(d, rank)[0]
        x = a(0)
        return w.emit(node, f"exp({x} - max({x}, dim={d})) / sum(exp({x} - max({x}, dim={d})), dim={d})")
    if t is F.linear:
        x, wt = a(0), a(1)
        b = kw.get("bias", args[2] if len(args) > 2 else None)
        expr = f"matmul({x}, transpose({wt}, perm=[1, 0]))"
        return w.emit(node, f"{expr} + {w.arg(b)}" if b is not None else expr)
    if t in ("view", "reshape", torch.reshape, "flatten", torch.flatten, "unsqueeze", torch.unsqueeze,
             "squeeze", torch.squeeze):
        return w.emit(node, f"reshape({a(0)}, shape=[{w.dims(out_shape)}])")
    if t in ("transpose", torch.transpose, "t", torch.t, "permute", torch.permute):
        if name in ("t",):
            perm = [1, 0]
        elif name == "permute":
            perm = list(args[1:]) if not isinstance(args[1], (list, tuple)) else list(args[1])
            perm = [(p + rank) % rank for p in perm]
        else:
            d0, d1 = (args[1] + rank) % rank, (args[2] + rank) % rank
            perm = list(range(rank))
            perm[d0], perm[d1] = perm[d1], perm[d0]
        return w.emit(node, f"transpose({a(0)}, perm=[{', '.join(map(str, perm))}])")
    if t in ("contiguous",):
        return w.emit(node, f"reshape({a(0)}, shape=[{w.dims(out_shape)}])")
    raise Unsupported(f"operator {name}")


def _param(w, node, qual, tensor):
    """A parameter or buffer as a program input (its current value is passed at each call)."""
    for q, n, _ in w.params:
        if q == qual:
            return n
    n = "p_" + "".join(c if c.isalnum() else "_" for c in qual)
    w.params.append((qual, n, tensor))
    w.inputs.append(f"input {n} : {_dtype(tensor.dtype)}[{', '.join(str(s) for s in tensor.shape)}]")
    return n


def _dynamo_meta(gm):
    """Fills each node's tensor_meta from the example value torch.compile (Dynamo) left on it,
    when every node but the output has a tensor there; False (nothing changed) otherwise."""
    import torch
    try:
        from torch.fx.passes.shape_prop import _extract_tensor_metadata
    except ImportError:
        return False
    nodes = [n for n in gm.graph.nodes if n.op != "output"]
    if not nodes or not all(isinstance(n.meta.get("example_value"), torch.Tensor) for n in nodes):
        return False
    for n in nodes:
        n.meta["tensor_meta"] = _extract_tensor_metadata(n.meta["example_value"])
    return True


def _prop(g, args):
    """ShapeProp on real (or meta) tensors, not the fake mode of a torch.compile in progress
    (its shape env refuses our tensors, and Dynamo's guards then name tensors it never saw)."""
    from torch.fx.passes.shape_prop import ShapeProp
    sp = ShapeProp(g)
    sp.fake_mode = None
    sp.propagate(*args)


class _Meta:
    """A node's shape (sizes may be symbolic) and dtype, from Dynamo's example value."""

    def __init__(self, v):
        self.shape, self.dtype = tuple(v.shape), v.dtype


def translate(gm, example_inputs, sym=None):
    """(program text, the writer, outputs). sym: the graph's one symbolic size (torch.compile's
    dynamic shapes, _symbolic), written as `dim B`; the shapes then come from Dynamo's example
    values."""
    import copy

    import torch
    prop = _prop
    if sym is not None:
        for n in gm.graph.nodes:
            v = n.meta.get("example_value")
            if isinstance(v, torch.Tensor):
                n.meta["tensor_meta"] = _Meta(v)
    elif not _dynamo_meta(gm):
        try:  # shapes and dtypes only: on the meta device, nothing computed (CPU lacks some f16 ops)
            meta = copy.deepcopy(gm).to("meta")
            prop(meta, [x.to("meta") for x in example_inputs])
            for a, b in zip(gm.graph.nodes, meta.graph.nodes):
                a.meta["tensor_meta"] = b.meta.get("tensor_meta")
        except Exception:
            prop(gm, example_inputs)
    w = _Writer(gm, sym)
    outputs = []
    for node in gm.graph.nodes:
        try:
            if node.op == "placeholder" and sym is not None and not isinstance(node.meta.get("example_value"), torch.Tensor):
                continue  # a size (SymInt) Dynamo passes: B is found from the tensors
            if node.op == "placeholder":
                shape, dt = w.shape(node)
                w.inputs.append(f"input {w.name(node)} : {_dtype(dt)}[{w.dims(shape)}]")
            elif node.op == "get_attr":
                val = gm
                for part in node.target.split("."):
                    val = getattr(val, part)
                if not isinstance(val, torch.Tensor):
                    raise Unsupported(f"attribute {node.target} is not a tensor")
                w.names[node] = _param(w, node, node.target, val)
            elif node.op == "output":
                outs = node.args[0] if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
                if w.unsupported:  # already left to PyTorch
                    continue
                for o in outs:
                    if not isinstance(o, torch.fx.Node) or o not in w.names:
                        raise Unsupported("an output that is not a translated tensor")
                    outputs.append(w.names[o])
                if len(set(outputs)) != len(outputs) or any(n.startswith("p_") for n in outputs):
                    raise Unsupported("an output given twice, or a parameter as an output")
            else:
                _translate(w, node)
                w.supported.append(node.name)
        except Unsupported as e:
            w.unsupported.append((node, str(e)))
    head = [f"dim B [{_dynamic_lo()}, {_dynamic_max()}]"] if sym is not None else []
    text = "\n".join(head + w.inputs + w.lines + ([f"output {', '.join(outputs)}"] if outputs else [])) + "\n"
    return text, w, outputs


class Compiled:
    """What mugen.compile returns: mugen's kernel when the whole graph translated; else
    (fallback) the graph split into pieces, mugen's and PyTorch's (.pieces: how many mugen
    runs). .program and .kernel (None when split), .explain (the split)."""

    def __init__(self, fn, kernel, program, params, explain, n_out, fallback):
        self.fn, self.kernel, self.program, self._params = fn, kernel, program, params
        self.explain, self._n_out, self.fallback = explain, n_out, fallback
        self.pieces = 0 if fallback else 1  # graph pieces mugen runs
        self.ugraph = None  # the μGraph optimize kept (optimize=True)
        self.timings = {}   # seconds: translate, optimize, compile (the whole graph's)

    def __call__(self, *args):
        if self.fallback:
            return self.fn(*args)
        pv = self.__dict__.get("_pvals")
        if pv is None:  # the weights passed after the inputs, gathered once
            pv = self._pvals = tuple(p for _, _, p in self._params)
        return self.kernel(*args, *pv)

    def __repr__(self):
        from . import display
        return display.compiled_repr(self)

    def _repr_html_(self):  # a notebook shows the summary, the program and the split
        from . import display
        whole = self.kernel is not None and self.explain  # in pieces the summary holds the split
        return display.html_of(display.compiled_repr(self) + ("\n\n" + self.explain if whole else ""))

    def _repr_svg_(self):  # the graph mugen runs whole (None in pieces: the HTML form then)
        return self.kernel._repr_svg_() if self.kernel is not None else None


def _compile_whole(gm, ex, target, device, optimize=False, progress=True, limits=None):
    """(Compiled, report lines) for a graph every operator of which translated, or None."""
    import time

    import torch
    t0 = time.perf_counter()
    text, w, outputs = translate(gm, ex)
    if w.unsupported:
        return None, [f"  runs in PyTorch: {n.name}: {why}" for n, why in w.unsupported]
    timings = {"translate": time.perf_counter() - t0}
    try:
        program = Program(text, "<torch.fx>")
        if [str(getattr(torch, d.dtype)) for d in program.outputs] != [str(n.meta["tensor_meta"].dtype) for n in _out_nodes(gm)]:
            raise Unsupported("an output's dtype differs from PyTorch's")
        t1 = time.perf_counter()
        ug, log = program.optimize(progress=progress, **(limits or {})) if optimize else (None, "")
        if optimize:
            timings["optimize"] = time.perf_counter() - t1
        kernel = Kernel(program, target=target, device=device, ugraph=ug)
        timings["compile"] = kernel.compile_seconds
    except Exception as e:  # a program mugen refuses: PyTorch runs it (KeyboardInterrupt goes up)
        return None, [f"  runs in PyTorch: the graph: {e}"]
    c = Compiled(gm, kernel, program, w.params, "", len(outputs), False)
    c.ugraph, c.timings = ug, timings
    return c, [f"mugen runs {len(w.supported)} operators ({kernel.info['launches']} kernels, {kernel.info['device']}"
               f"{', the μGraph mugen optimize kept' if ug else ''}):", program.format() + (log and "\n" + log)]


def compile(fn, example_inputs, explain=False, target=None, device=None, optimize=False, progress=True, **limits):  # noqa: A001
    """Traces fn (a function or nn.Module) on example_inputs; mugen runs the graph, or where an
    operator is not mugen's, the maximal pieces between such operators (torch.fx split_module),
    PyTorch the rest. explain=True prints the split. optimize=True: each piece through `mugen
    optimize` (searched through the search cache, MUGEN_SEARCH_CACHE; the fastest correct μGraph
    kept), else lowered by the rules; progress (with optimize): True a bar, False none, or a
    callable (Program.optimize). Ctrl-C stops the search and raises KeyboardInterrupt; the
    pieces searched to the end stay in the search cache (docs/python.md). limits: the search's
    (Program.optimize: time_limit=30, max_kops=4, ...); giving any implies optimize=True, and a
    bad one raises MugenError here, before anything is traced."""
    import torch
    if limits:
        optimize_opts(limits)  # each limit checked now, by name
        optimize = True
    import torch.fx
    from torch.fx.passes.split_module import split_module
    ex = list(example_inputs)
    tgt = target or _target(ex)
    gm = fn if isinstance(fn, torch.fx.GraphModule) else torch.fx.symbolic_trace(fn)
    whole, lines = _compile_whole(gm, ex, tgt, device, optimize, progress, limits)
    if whole is not None:
        whole.explain = "\n".join(["mugen: the whole graph"] + lines)
        if explain:
            print(whole.explain)
        return whole
    # the pieces: consecutive operators on one side of the line between what translated and not
    _, w, _ = translate(gm, ex)
    ok = {n.name for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module")} - {n.name for n, _ in w.unsupported}
    state = {"part": 0, "side": None}

    def side_of(node):
        s = node.name in ok or node.op == "get_attr"
        if state["side"] is not None and s != state["side"] and node.op != "get_attr":
            state["part"] += 1
        if node.op != "get_attr":
            state["side"] = s
        return state["part"]
    split = split_module(gm, gm, side_of)
    import copy
    meta = copy.deepcopy(split).to("meta")
    _prop(meta, [x.to("meta") for x in ex])
    report, pieces = [f"mugen: {len(ok)} operators translated, {len(w.unsupported)} not; the graph in pieces:"], 0
    for node in meta.graph.nodes:
        if node.op != "call_module":
            continue
        sub = getattr(split, node.target)
        names = [n.name for n in sub.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
        if not names or not all(n in ok for n in names):
            report.append(f"- {node.target}: PyTorch runs {', '.join(names)}")
            report += [f"  {n.name}: {why}" for n, why in w.unsupported if n.name in names]
            continue
        sub_ex = [a.meta["tensor_meta"] for a in node.args]
        sub_in = [torch.empty(t.shape, dtype=t.dtype, device="meta") for t in sub_ex]
        c, lines = _compile_whole(sub, sub_in, tgt, device, optimize, progress, limits)
        if c is None:
            report.append(f"- {node.target}: PyTorch runs {', '.join(names)}")
            report += lines
            continue
        pieces += 1
        report.append(f"- {node.target}: " + lines[0])
        report += ["    " + x for x in lines[1].splitlines()]
        setattr(split, node.target, _Runner(c))
    text = "\n".join(report)
    if explain:
        print(text)
    out = Compiled(split, None, None, [], text, 0, True)
    out.pieces = pieces
    return out


def _runner_class():
    import torch

    class Runner(torch.nn.Module):
        """A piece of a split graph that mugen runs (compile): called as the submodule was."""

        def __init__(self, c):
            super().__init__()
            self.c = c

        def forward(self, *args):
            return self.c(*args)
    return Runner


def _Runner(c):
    return _runner_class()(c)


def _out_nodes(gm):
    import torch.fx
    for node in gm.graph.nodes:
        if node.op == "output":
            outs = node.args[0] if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
            return [o for o in outs if isinstance(o, torch.fx.Node)]
    return []


last_compiled = None  # what the backend made of the last graph it was given (explain, fallback, kernel)


def _target(ex):
    """The target for example inputs: CUDA when the first tensor among them is on the GPU."""
    import torch
    ts = [x for x in ex if isinstance(x, torch.Tensor)]
    return "cuda" if ts and ts[0].is_cuda else "c"


def _dynamic_lo():
    return 2  # Dynamo specialises sizes 0 and 1: its dynamic graphs see 2 and more


def _dynamic_max():
    import os
    v = os.environ.get("MUGEN_DYNAMIC_MAX", "512")
    try:
        v = int(v)
    except ValueError:
        v = 0
    if v < 3:
        raise Unsupported(f"MUGEN_DYNAMIC_MAX={os.environ.get('MUGEN_DYNAMIC_MAX')}: a whole number of 3 or more")
    return v


def _symbolic(gm):
    """The one free symbol of the sizes Dynamo gave the graph's inputs (dynamic shapes), None
    when every size is a number; Unsupported when there are several."""
    import torch
    syms = set()
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("example_value")
        sizes = v.shape if isinstance(v, torch.Tensor) else [v] if isinstance(v, torch.SymInt) else []
        for x in sizes:
            e = getattr(getattr(x, "node", None), "expr", None)
            if e is not None and not getattr(e, "is_number", True):
                syms |= set(e.free_symbols)
    if len(syms) > 1:
        raise Unsupported(f"{len(syms)} symbolic sizes ({', '.join(sorted(map(str, syms)))}); mugen takes one, a batch")
    return next(iter(syms)) if syms else None


class Dynamic:
    """A graph of one symbolic size (torch.compile's dynamic shapes) as a mugen program of
    `dim B [2, MUGEN_DYNAMIC_MAX]`: a Kernel per capacity of B, all compiled when the graph is;
    a call of B rows copies the inputs that carry B into the smallest capacity's buffers
    (cached), runs its Kernel over B's rows (mg_launch_rows), and returns the outputs' first
    rows. B past the range runs in
    PyTorch (the graph as Dynamo gave it). docs/python.md, "Dynamic shapes"."""

    fallback = False

    def __init__(self, gm, program, kernels, params, tensor_args, carries, n_out, explain):
        self.fn, self.program, self.kernels, self._params = gm, program, kernels, params
        self._args, self._carries, self._n_out, self.explain = tensor_args, carries, n_out, explain
        self.kernel = None
        self.caps = sorted(kernels)
        self._table = {}   # B -> capacity, made as calls come
        self._stage = {}   # (capacity, input index) -> the staging tensor
        self.last_capacity = None
        self.pieces = 1

    def capacity(self, b):
        c = self._table.get(b)
        if c is None:
            c = self._table[b] = next((c for c in self.caps if c >= b), None)
        return c

    def __call__(self, *args):
        import torch
        xs = [args[i] for i in self._args]
        k0 = self._carries[0] if self._carries else None
        b = xs[k0[0]].shape[0] // k0[1] if k0 else None
        c = self.capacity(b) if b is not None else None
        if c is None:  # outside the range: PyTorch runs the graph
            self.last_capacity = None
            return self.fn(*args)
        self.last_capacity = c
        ins = list(xs)
        for i, k in self._carries:
            t = self._stage.get((c, i))
            x = xs[i]
            if t is None or t.device != x.device:
                t = self._stage[(c, i)] = torch.empty((k * c,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
            t[: k * b].copy_(x)
            ins[i] = t
        pv = self.__dict__.get("_pvals")
        if pv is None:
            pv = self._pvals = tuple(p for _, _, p in self._params)
        out = self.kernels[c](*ins, *pv, rows=b)  # on CUDA only the blocks over B's rows run
        outs = out if isinstance(out, tuple) else (out,)
        res = tuple(o[: k * b] if k else o for o, k in zip(outs, self._out_k))
        return res if len(res) > 1 else res[0]

    def __repr__(self):
        return self.explain


def _compile_dynamic(gm, ex, sym):
    """Dynamic for gm (one symbolic size, sym), or Unsupported with the reason."""
    import time

    import torch
    t0 = time.perf_counter()
    text, w, outputs = translate(gm, ex, sym)
    if w.unsupported:
        raise Unsupported("; ".join(f"{n.name}: {why}" for n, why in w.unsupported))
    try:
        program = Program(text, "<torch.fx, dynamic>")  # the C library checks B is a batch (sym.c)
    except Exception as e:
        raise Unsupported(str(e).strip()) from None
    if program.reduced():  # rows are staged and cut here; a summed size needs the length masks
        raise Unsupported(f"the symbolic size {sym} is summed or contracted over (a reduced dim); "
                          "the dynamic path takes a batch of independent rows")
    tensor_args = [i for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")
                   if isinstance(n.meta.get("example_value"), torch.Tensor)]
    # rows per B (K of K * B in dim 0) of each input and output, None where dim 0 does not
    # follow B: the program at the range's ends compared
    lo, hi = _dynamic_lo(), _dynamic_max()
    at_lo, at_hi = Program(text, "<torch.fx, dynamic>").bind("B", lo), Program(text, "<torch.fx, dynamic>").bind("B", hi)

    def per_b(x, y):
        return x.shape[0] // lo if x.shape and x.shape[0] != y.shape[0] else None
    n = len(tensor_args)
    carries = [(i, k) for i, k in enumerate(per_b(x, y) for x, y in zip(at_lo.inputs[:n], at_hi.inputs[:n])) if k]
    out_k = [per_b(x, y) for x, y in zip(at_lo.outputs, at_hi.outputs)]
    tgt = _target(ex)
    import os
    table = {}  # with MUGEN_SELECTOR, the learned selector's capacity for each B, asked once
    if os.environ.get("MUGEN_SELECTOR"):
        p = Program(text, "<torch.fx, dynamic>")
        for b in range(_dynamic_lo(), _dynamic_max() + 1):
            table[b] = p.bind("B", b).variant()
    kernels = {}
    for c in program.capacities():
        p = Program(text, "<torch.fx, dynamic>").bind("B", c).set_variant("B", c)  # c, not the selector's
        kernels[c] = Kernel(p, target=tgt)
    lines = [f"mugen: the whole graph, dynamic: B (Dynamo's {sym}) in [{_dynamic_lo()}, {_dynamic_max()}], "
             f"{len(kernels)} variants (capacities {', '.join(map(str, sorted(kernels)))}) compiled in "
             f"{time.perf_counter() - t0:.1f} s; a call of B rows runs " +
             ("the learned selector's capacity (MUGEN_SELECTOR)" if table else "the smallest capacity that holds B"),
             text.strip()]
    d = Dynamic(gm, program, kernels, w.params, tensor_args, carries, len(outputs), "\n".join(lines))
    d._out_k = out_k
    d._table.update(table)
    return d


last_compiled = None  # what the backend made of the last graph it was given (explain, fallback, kernel)


def backend(gm, example_inputs):
    """torch.compile(model, backend="mugen"): each graph Dynamo captures, compiled as above;
    a graph mugen cannot run whole runs as Dynamo gave it (split, or all in PyTorch), and a
    graph of one symbolic size (dynamic shapes) as a program of `dim B` (Dynamic). Whatever
    mugen cannot take runs in PyTorch with the reason in last_compiled.explain: the backend
    never fails torch.compile."""
    global last_compiled
    try:
        sym = _symbolic(gm)
        c = _compile_dynamic(gm, example_inputs, sym) if sym is not None else compile(gm, example_inputs)
    except KeyboardInterrupt:
        raise
    except Exception as e:  # Unsupported, or anything unexpected: PyTorch runs the graph
        c = Compiled(gm, None, None, [], f"mugen: the graph runs in PyTorch: {type(e).__name__}: {e}", 0, True)
    last_compiled = c
    if c.fallback:  # in pieces (or wholly PyTorch's): the split graph returns what gm does
        return c
    if isinstance(c, Dynamic):
        def run(*args):
            out = c(*args)
            return out if isinstance(out, tuple) else (out,)
        return run
    # Dynamo's guards hold the inputs' devices, dtypes and shapes to the example's: the call
    # goes straight to the kernel's torch path, the weights after the inputs
    call, pv = c.kernel._call_torch, tuple(p for _, _, p in c._params)

    def run(*args):
        out = call(args + pv, None, None)
        return out if isinstance(out, tuple) else (out,)
    return run


def _register():
    try:
        from torch._dynamo import register_backend
    except Exception:  # PyTorch before 2.0: no torch.compile
        return
    try:
        register_backend(name="mugen")(backend)
    except Exception:
        pass
