"""Programs and compiled kernels over libmugen (docs/python.md): parse a .mu program, compile
it for the C backend (host arrays) or CUDA (device tensors), and call it on NumPy arrays or
torch tensors, zero-copy: the kernels read the inputs' storage and write fresh outputs."""
import ctypes
import threading
import time

from . import _capi as C

_DTYPES = {C.MG_F16: "float16", C.MG_BF16: "bfloat16", C.MG_F32: "float32"}


class MugenError(RuntimeError):
    """A failed library call: .status names the C status (parse, shape, compile, ...)."""

    def __init__(self, status, message):
        self.status = C.STATUS[status] if 0 <= status < len(C.STATUS) else str(status)
        super().__init__(message or self.status)


_tls = threading.local()


def _ctx():
    c = getattr(_tls, "ctx", None)
    if c is None:
        c = _tls.ctx = C.lib.mg_ctx_new()
        if not c:
            raise MemoryError("mugen: out of memory")
    return c


def _check(st):
    if st != C.MG_OK:
        raise MugenError(st, (C.lib.mg_ctx_error(_ctx()) or b"").decode(errors="replace"))


def optimize_opts(limits):
    """mg_optimize_opts (as bytes) with the defaults and limits set by name (mg_optimize_set:
    MugenError naming a bad one), and the values' bytes, to keep alive while the options are
    used (ops= is kept by them, not copied)."""
    opts = (ctypes.c_ubyte * C.OPTIMIZE_OPTS_BYTES)()
    C.lib.mg_optimize_defaults(opts)
    held = []
    for k, v in limits.items():
        held.append(str(v).encode())
        _check(C.lib.mg_optimize_set(_ctx(), opts, k.encode(), held[-1]))
    return opts, held


class Tensor:
    """An input or output: name, dtype ('float16', 'bfloat16', 'float32'), shape, and range (an
    input's `range=` hint: test values uniform in [-range, range]; None when it has none)."""

    def __init__(self, d):
        self.name = d.name.decode()
        self.dtype = _DTYPES[d.dtype]
        self.shape = tuple(d.dims[k] for k in range(d.ndim))
        self.range = d.range if d.range > 0 else None
        # dim k ragged by the program's lengths declaration ragged[k] - 1 (shape[k]: its maximum)
        self.ragged = tuple(d.ragged[k] for k in range(d.ndim))

    def __repr__(self):
        return f"{self.name}: {self.dtype}{list(self.shape)}"


class Program:
    """A parsed, shape-checked mugen program (.mu text or its JSON form)."""

    def __init__(self, text, filename="<python>"):
        self._p = ctypes.c_void_p()
        raw = text.encode() if isinstance(text, str) else bytes(text)
        _check(C.lib.mg_program_parse(_ctx(), raw, len(raw), filename.encode(), ctypes.byref(self._p)))

    @classmethod
    def load(cls, path):
        with open(path, "rb") as f:
            return cls(f.read(), str(path))

    def __del__(self):
        if getattr(self, "_p", None):
            C.lib.mg_program_free(self._p)
            self._p = None

    def _descs(self, n, get):
        out = []
        for i in range(n(self._p)):
            d = C.TensorDesc()
            _check(get(self._p, i, ctypes.byref(d)))
            out.append(Tensor(d))
        return out

    @property
    def inputs(self):
        return self._descs(C.lib.mg_program_n_inputs, C.lib.mg_program_input)

    @property
    def outputs(self):
        return self._descs(C.lib.mg_program_n_outputs, C.lib.mg_program_output)

    def format(self, fmt="text"):
        """The program as .mu text, JSON or Graphviz dot."""
        out = ctypes.c_void_p()
        _check(C.lib.mg_program_format(_ctx(), self._p, {"text": C.MG_FMT_TEXT, "json": C.MG_FMT_JSON,
                                                          "dot": C.MG_FMT_DOT}[fmt], ctypes.byref(out)))
        try:
            return ctypes.string_at(out).decode()
        finally:
            C.lib.mg_free(out)

    def __str__(self):
        return self.format()

    def bind_lengths(self, name, lengths):
        """Binds lengths declaration `name` (lengths NAME[B] max=M) to one length a sequence: the
        batch a Kernel then compiles for (docs/ragged.md; its ragged tensors packed, in buffers of
        capacity rows), and the packed tensors reference() takes and gives."""
        v = [int(x) for x in lengths]
        arr = (ctypes.c_int64 * len(v))(*v)
        _check(C.lib.mg_program_bind_lengths(_ctx(), self._p, name.encode(), arr, len(v)))
        for k in range(C.lib.mg_program_n_lengths(self._p)):
            nm = ctypes.c_char_p()
            _check(C.lib.mg_program_lengths(self._p, k, ctypes.byref(nm), None, None))
            if nm.value.decode() == name:
                self.__dict__.setdefault("_lens", {})[k] = v
        return self

    def _packed_shape(self, d):
        """d's shape as the evaluators take it: a ragged dim k after its batch dim k - 1 becomes
        the sequences' tokens, packed (one dim of sum(lengths))."""
        for k, r in enumerate(d.ragged):
            if r:
                lens = getattr(self, "_lens", {}).get(r - 1)
                if lens is None:
                    raise ValueError(f"mugen: {d.name} is ragged: bind its lengths first (Program.bind_lengths)")
                return d.shape[:k - 1] + (sum(lens),) + d.shape[k + 1:]
        return d.shape

    def reduced(self, k=0):
        """Whether symbolic dim k is a reduced dim (a KV length, summed or contracted) rather
        than a batch of independent rows (docs/tuning.md "Reduced dims")."""
        return bool(C.lib.mg_program_dim_reduced(self._p, k))

    def capacities(self, k=0):
        """The capacities of symbolic dim k (dim NAME [LO, HI]), increasing: the sizes mugen
        compiles a variant for, each running any value up to it (docs/tuning.md)."""
        nm, lo, hi, val = ctypes.c_char_p(), ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        _check(C.lib.mg_program_dim(self._p, k, ctypes.byref(nm), ctypes.byref(lo), ctypes.byref(hi), ctypes.byref(val)))
        caps, c = [], C.lib.mg_program_dim_capacity(self._p, k, lo.value)
        while True:
            caps.append(c)
            if c >= hi.value:
                return caps
            c = C.lib.mg_program_dim_capacity(self._p, k, c + 1)

    def variant(self, k=0):
        """The capacity whose variant a call of dim k's bound value runs: the learned selector's
        choice where MUGEN_SELECTOR names its weights, else the smallest that holds it."""
        return C.lib.mg_program_dim_choice(self._p, k)

    def set_variant(self, name, cap):
        """Runs (and compiles) symbolic dim `name` as the variant for capacity cap, whatever the
        selector would choose (cap >= the bound value; 0: chosen again)."""
        _check(C.lib.mg_program_set_variant(_ctx(), self._p, name.encode(), int(cap)))
        return self

    def bind(self, name, value):
        """Binds symbolic dim `name` (dim NAME [LO, HI]) to value: the program is then that instance."""
        _check(C.lib.mg_program_bind_dim(_ctx(), self._p, name.encode(), int(value)))
        return self

    def optimize(self, progress=False, **limits):
        """mugen optimize (docs/search.md): each Lax piece searched through the search cache, its
        best μGraph kept where it runs faster than the piece lowered; returns (the μGraph as a
        Program, the log: a line a piece). limits: the search's, named as `mugen optimize`'s
        flags with '_' for '-' (time_limit=30 seconds a piece, max_kops=4, max_kernels=2,
        threads=8, max_piece_ops=24, ...; docs/python.md); a bad one raises MugenError naming
        it. The μGraph's .search holds the summary (pieces, searched, from the cache, kept,
        seconds, the log). progress: True shows a bar (tqdm, else a line on stderr); a callable
        gets each mugen._capi.Progress and may raise to stop. Ctrl-C (or the callable raising)
        stops the search and raises KeyboardInterrupt (or what it raised): the pieces whose
        search ended stay in the search cache, and the stopped one's finished tasks in its
        partial folder, reloaded by the next call (docs/python.md, "What resume means")."""
        from . import display
        opts, held = optimize_opts(limits)  # held: alive through the search
        rep = C.OptimizeReport()
        t0 = time.perf_counter()
        try:  # the report freed however the call ends (a stopped one holds its log so far)
            # with or without a bar, through the callback: Ctrl-C then stops the search
            _check(display.run_with_progress(opts, lambda: C.lib.mg_optimize_program(_ctx(), self._p, opts, ctypes.byref(rep)),
                                             progress))
            text = ctypes.string_at(rep.ugraph_text).decode() if rep.ugraph_text else None
            log = ctypes.string_at(rep.log).decode() if rep.log else ""
        finally:
            C.lib.mg_optimize_report_free(ctypes.byref(rep))
        ug = Program(text, "<optimized>") if text else None
        if ug is not None:
            ug.search = {k: getattr(rep, k) for k in ("parts", "lax_parts", "unique", "searched", "from_cache", "kept",
                                                       "search_seconds", "piece_run_seconds")}
            ug.search.update(optimize_seconds=time.perf_counter() - t0, log=log)
        return ug, log

    def __repr__(self):
        from . import display
        return display.program_repr(self)

    def _repr_html_(self):
        from . import display
        return display.html_of(display.program_repr(self) + "\n\n" + self.format())

    def _repr_svg_(self):
        from . import display
        return display.svg(self.format("dot"))

    def reference(self, *inputs):
        """The f32 reference evaluation on NumPy inputs (any float dtype): NumPy float64 outputs.
        A ragged program's ragged tensors are packed: [tokens, ...] for [B, len, ...]."""
        import numpy as np
        ins = [np.ascontiguousarray(np.asarray(x, dtype=np.float64)) for x in inputs]
        descs = self.inputs
        if len(ins) != len(descs):
            raise ValueError(f"mugen: the program takes {len(descs)} inputs, got {len(ins)}")
        for x, d in zip(ins, descs):
            if x.shape != self._packed_shape(d):
                raise ValueError(f"mugen: input {d.name} is {list(self._packed_shape(d))}, got {list(x.shape)}")
        outs = [np.empty(self._packed_shape(d), dtype=np.float64) for d in self.outputs]
        ip = (ctypes.c_void_p * len(ins))(*[x.ctypes.data for x in ins])
        op = (ctypes.c_void_p * len(outs))(*[o.ctypes.data for o in outs])
        _check(C.lib.mg_eval_float(_ctx(), self._p, 0, ip, op))
        return outs


def _check_input(d, shape, dtype):
    """Refuses an input of another shape or dtype than its description d's."""
    if tuple(shape) != d.shape or dtype != d.dtype:
        raise ValueError(f"mugen: input {d.name} is {d.dtype}{list(d.shape)}, got {dtype}{list(shape)}")


def _check_out(descs, outs, fits):
    """Refuses out= unless it holds one array or tensor per output, each fits(k, o): its shape,
    dtype, place and a contiguous layout (the kernels write it in place)."""
    if len(outs) != len(descs):
        raise ValueError(f"mugen: out= takes {len(descs)} outputs, got {len(outs)}")
    for k, (d, o) in enumerate(zip(descs, outs)):
        if not fits(k, o):
            raise ValueError(f"mugen: out[{k}] ({d.name}) must be a contiguous {d.dtype}{list(d.shape)} where the inputs are, "
                             f"got {str(getattr(o, 'dtype', type(o).__name__)).replace('torch.', '')}"
                             f"{list(getattr(o, 'shape', ()))}")


class Kernel:
    """A program compiled for one target ('c': host memory; 'cuda': device memory on a stream).
    Calling it with inputs (NumPy arrays or torch tensors, in the program's input order) returns
    fresh outputs of the same kind; `out=` takes preallocated ones."""

    def __init__(self, program, target="c", device=None, ugraph=None):
        self.program, self.ugraph = program, ugraph  # ugraph: a μGraph of program (Program.optimize)
        o = C.CompileOpts()
        o.target = C.MG_TARGET_C if target == "c" else C.MG_TARGET_CUDA
        o.device = device.encode() if device else None
        self._c = ctypes.c_void_p()
        t0 = time.perf_counter()
        _check(C.lib.mg_compile(_ctx(), program._p, ugraph._p if ugraph else None, ctypes.byref(o), ctypes.byref(self._c)))
        self.compile_seconds = time.perf_counter() - t0
        self.target = target
        info = C.CompiledInfo()
        _check(C.lib.mg_compiled_get_info(self._c, ctypes.byref(info)))
        self.info = {"launches": info.n_launches, "workspace_bytes": info.workspace_bytes,
                     "cached": bool(info.cached), "device": info.device.decode()}
        self.inputs = self._descs(info.n_inputs, C.lib.mg_compiled_input)
        self.outputs = self._descs(info.n_outputs, C.lib.mg_compiled_output)
        self._torch_calls = {}  # torch.device -> the call made for it (_torch_call)

    def _descs(self, n, get):
        out = []
        for i in range(n):
            d = C.TensorDesc()
            _check(get(self._c, i, ctypes.byref(d)))
            out.append(Tensor(d))
        return out

    def __del__(self):
        if getattr(self, "_c", None):
            C.lib.mg_compiled_free(self._c)
            self._c = None

    def __repr__(self):
        from . import display
        return display.kernel_repr(self)

    def _repr_html_(self):
        from . import display
        return display.html_of(display.kernel_repr(self))

    def _repr_svg_(self):  # the μGraph it runs when optimize kept one, else its program
        from . import display
        return display.svg((self.ugraph or self.program).format("dot"))

    def __call__(self, *inputs, out=None, rows=None):
        """rows: for a program of one symbolic dim, the call's value of it (at most the capacity
        compiled for; the buffers hold the capacity's rows): on CUDA only the blocks over those
        rows run (mg_launch_rows)."""
        if len(inputs) != len(self.inputs):
            raise ValueError(f"mugen: the kernel takes {len(self.inputs)} inputs, got {len(inputs)}")
        if inputs and type(inputs[0]).__module__.startswith("torch"):
            return self._call_torch(inputs, out, rows)
        return self._call_numpy(inputs, out, rows)

    def _call_numpy(self, inputs, out, rows=None):
        import numpy as np
        if self.target != "c":
            raise ValueError("mugen: NumPy arrays run on the C target (Kernel(program, target='c'))")
        ins = []
        for i, x in enumerate(inputs):
            x = np.ascontiguousarray(x)
            _check_input(self.inputs[i], x.shape, str(x.dtype))
            ins.append(x)
        if out is None:
            outs = [np.empty(d.shape, dtype=d.dtype) for d in self.outputs]
        else:
            outs = out
            _check_out(self.outputs, outs, lambda k, o: isinstance(o, np.ndarray) and o.shape == self.outputs[k].shape and
                       str(o.dtype) == self.outputs[k].dtype and o.flags.c_contiguous and o.flags.writeable)
        n = self.info["workspace_bytes"]  # a workspace and pointer arrays a call: threads may share the Kernel
        ws = np.empty(n + 256, dtype=np.uint8) if n else None
        ip = (ctypes.c_void_p * len(ins))(*[x.ctypes.data for x in ins])
        op = (ctypes.c_void_p * len(outs))(*[o.ctypes.data for o in outs])
        args = (len(ins), ip, len(outs), op, (ws.ctypes.data + 255) // 256 * 256 if n else None, n, None)
        _check(C.lib.mg_launch(_ctx(), self._c, *args) if rows is None else C.lib.mg_launch_rows(_ctx(), self._c, rows, *args))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _call_torch(self, inputs, out, rows=None):
        """The torch path (docs/python.md, "The cost of a call"): a call made once a device
        (_torch_call) checks shapes and dtypes against sizes made then, takes fresh outputs
        with torch.empty_like of a one-element template, reads the stream as PyTorch's raw
        pointer, and makes one C call with arguments built then (mg_launch replays the kernels
        as one CUDA graph for buffers it has seen)."""
        dev = inputs[0].device
        f = self._torch_calls.get(dev)
        if f is None:
            cuda = dev.type == "cuda"
            if cuda != (self.target == "cuda"):
                raise ValueError(f"mugen: a {self.target} kernel takes {'CUDA' if self.target == 'cuda' else 'CPU'} tensors, got {dev}")
            f = self._torch_calls[dev] = self._torch_call(dev)
        return f(inputs, out, rows)

    def _torch_call(self, dev):
        """The call on torch tensors of device dev: its sizes, output templates, workspace and
        C arguments made here, once, so that a call is the checks, the allocations and one
        C call. The call holds no reference to the Kernel (its handle is freed with it)."""
        import torch
        cuda = dev.type == "cuda"
        n_in = len(self.inputs)
        metas = [(torch.Size(d.shape), getattr(torch, d.dtype)) for d in self.inputs]
        ometas, odescs = [(torch.Size(d.shape), getattr(torch, d.dtype)) for d in self.outputs], self.outputs
        # torch.empty_like of a one-element tensor expanded to the shape: a fresh contiguous
        # tensor, and the cheapest allocation PyTorch offers from Python
        tmpls = [torch.empty((), dtype=getattr(torch, d.dtype), device=dev).expand(d.shape) for d in self.outputs]
        empty_like = torch.empty_like
        ip, op, descs = (ctypes.c_void_p * n_in)(), (ctypes.c_void_p * len(self.outputs))(), self.inputs
        nb = self.info["workspace_bytes"]
        ws = torch.empty(nb + 256, dtype=torch.uint8, device=dev) if nb else None  # call.workspace keeps it
        wsp = ctypes.c_void_p((ws.data_ptr() + 255) // 256 * 256 if nb else None)
        ctx, c = ctypes.c_void_p(_ctx()), self._c
        n_i, n_o, nbs = ctypes.c_int(n_in), ctypes.c_int(len(op)), ctypes.c_size_t(nb)
        stream = ctypes.c_void_p()
        owner, n_out = threading.get_ident(), len(op)  # ip, op and stream are the building thread's
        ws_stream = {}  # "s": the stream the kept workspace serves (None on the C target)
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None) if cuda else None
        current = getattr(torch._C, "_cuda_getDevice", None) if cuda else None
        idx = dev.index if cuda else -1  # as Tensor.get_device() gives it
        launch, launch_rows = (C.pylib.mg_launch, C.pylib.mg_launch_rows) if cuda else (C.lib.mg_launch, C.lib.mg_launch_rows)

        def call(inputs, out, rows):
            if len(inputs) != n_in:
                raise ValueError(f"mugen: the kernel takes {n_in} inputs, got {len(inputs)}")
            own = threading.get_ident() == owner
            if own:
                ip_, op_, stream_ = ip, op, stream
            else:  # another thread: arrays of its own (a thread switch may come before the launch)
                ip_, op_, stream_ = (ctypes.c_void_p * n_in)(), (ctypes.c_void_p * n_out)(), ctypes.c_void_p()
            keep = None
            for i, x in enumerate(inputs):
                shape, dt = metas[i]
                if x.shape != shape or x.dtype != dt:
                    _check_input(descs[i], x.shape, str(x.dtype).replace("torch.", ""))
                if x.get_device() != idx:
                    raise ValueError(f"mugen: input {descs[i].name} is on {x.device}, the first on {dev}")
                if not x.is_contiguous():
                    x = x.contiguous()
                    keep = (keep or []) + [x]  # alive until the launch is queued
                ip_[i] = x.data_ptr()
            if out is None:
                outs = [empty_like(t) for t in tmpls]
            else:
                outs = out
                _check_out(odescs, outs, lambda k, o: isinstance(o, torch.Tensor) and o.shape == ometas[k][0] and
                           o.dtype == ometas[k][1] and o.get_device() == idx and o.is_contiguous())
            for k, o in enumerate(outs):
                op_[k] = o.data_ptr()
            if cuda:
                stream_.value = raw(idx) if raw else torch.cuda.current_stream(dev).cuda_stream
            wsp_ = wsp
            if nb and not (own and ws_stream.setdefault("s", stream_.value) == stream_.value):
                # the kept workspace serves its thread's first stream; a call on another stream
                # or thread may run beside it: a workspace of its own from PyTorch's allocator
                # (stream-ordered: reused only after this launch on that stream)
                t = torch.empty(nb + 256, dtype=torch.uint8, device=dev)
                keep = (keep or []) + [t]
                wsp_ = ctypes.c_void_p((t.data_ptr() + 255) // 256 * 256)
            cx = ctx if getattr(_tls, "ctx", None) == ctx.value else ctypes.c_void_p(_ctx())  # this thread's
            args = (cx, c, n_i, ip_, n_o, op_, wsp_, nbs, stream_) if rows is None else \
                (cx, c, ctypes.c_int64(rows), n_i, ip_, n_o, op_, wsp_, nbs, stream_)
            fn = launch if rows is None else launch_rows
            if cuda and current and current() != idx:  # PyTorch's current device is another GPU:
                with torch.cuda.device(idx):            # the launch in the tensors' device's context
                    st = fn(*args)
            else:
                st = fn(*args)
            if st:
                _check(st)
            del keep
            return outs[0] if len(outs) == 1 else tuple(outs)
        call.workspace = ws
        return call
