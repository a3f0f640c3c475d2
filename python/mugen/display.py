"""What a notebook or a terminal shows of mugen's objects (docs/python.md, "In a notebook"), and
the progress of a long search.

Notebooks: Program, Kernel and what mugen.compile returns have _repr_svg_ (the graph through
Graphviz's `dot -Tsvg`, the text of the library's dot printer, `mugen dot`; None when the dot
program is not installed, so Jupyter shows the next form), _repr_html_ and __repr__ (a summary:
inputs, outputs, operators, what optimize searched, found and kept, and the timings known).

Searches: optimize(progress=...) runs mg_optimize_program with a progress callback that the
library calls on the calling thread about ten times a second (mg_progress_fn, include/mugen.h):
a tqdm bar when tqdm can be imported, else one line on stderr. Ctrl-C during the call stops the
search at the next callback (the callback returns nonzero) and raises KeyboardInterrupt once the
library has returned: the pieces whose search ended are in the search cache, a later call reads
them from there and searches the rest."""
import html
import shutil
import signal
import subprocess
import sys
import threading

from . import _capi as C

# ---- pictures and summaries ----

DOT_TIMEOUT_S = 20


def svg(dot_text):
    """dot_text drawn by Graphviz as SVG text, or None when the dot program is absent or fails
    (a notebook then shows the object's HTML or text form)."""
    exe = shutil.which("dot")
    if exe is None or dot_text is None:
        return None
    try:
        r = subprocess.run([exe, "-Tsvg"], input=dot_text.encode(), capture_output=True, timeout=DOT_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.decode(errors="replace") if r.returncode == 0 and r.stdout else None


def _tensors(ts):
    return ", ".join(repr(t) for t in ts)


def search_lines(s):
    """The lines of an optimize summary s (Program.optimize's .search dict)."""
    if not s:
        return []
    out = [f"search: {s['parts']} pieces, {s['lax_parts']} Lax; {s['unique']} searched forms "
           f"({s['searched'] - s['from_cache']} searched, {s['from_cache']} from the search cache); "
           f"{s['kept']} pieces kept a μGraph",
           f"search time: {s['search_seconds']:.2f} s searching, {s['piece_run_seconds']:.2f} s timing pieces, "
           f"{s['optimize_seconds']:.2f} s in all"]
    return out + ["  " + x for x in s["log"].splitlines()]


def program_lines(p):
    top = [x for x in p.format().splitlines() if " = " in x and not x[:1].isspace() and not x.startswith("#")]
    kernels = sum(1 for x in top if " = kernel(" in x)  # a μGraph's graph-defined kernels
    return [f"inputs: {_tensors(p.inputs)}", f"outputs: {_tensors(p.outputs)}",
            f"statements: {len(top)}" + (f", {kernels} of them graph-defined kernels" if kernels else "")]


def program_repr(p):
    lines = ["mugen.Program"] + ["  " + x for x in program_lines(p) + search_lines(getattr(p, "search", None))]
    return "\n".join(lines)


def kernel_repr(k):
    i = k.info
    lines = [f"mugen.Kernel: target {k.target}, {i['launches']} launches on {i['device']}, "
             f"workspace {i['workspace_bytes']} bytes{', code from the compile cache' if i['cached'] else ''}",
             f"  inputs: {_tensors(k.inputs)}", f"  outputs: {_tensors(k.outputs)}"]
    if getattr(k, "compile_seconds", None) is not None:
        lines.append(f"  compile time: {k.compile_seconds:.3f} s")
    if k.ugraph is not None:
        lines.append("  runs the μGraph optimize kept")
        lines += ["  " + x for x in search_lines(getattr(k.ugraph, "search", None))]
    return "\n".join(lines)


def compiled_repr(c):
    """What mugen.compile returned (torch_frontend.Compiled)."""
    if c.fallback:
        head = f"mugen.compile: the graph in pieces, {c.pieces} run by mugen, the rest by PyTorch"
    else:
        head = "mugen.compile: the whole graph runs in mugen"
    lines = [head]
    t = getattr(c, "timings", None) or {}
    if t:
        lines.append("  time: " + ", ".join(f"{k} {v:.3f} s" for k, v in t.items()))
    if c.kernel is not None:
        lines += ["  " + x for x in kernel_repr(c.kernel).splitlines()]
    elif c.explain:
        lines += ["  " + x for x in c.explain.splitlines()]
    return "\n".join(lines)


def html_of(text):
    return f"<pre>{html.escape(text)}</pre>"


# ---- progress and interruption ----


class _Bar:
    """A tqdm bar over a piece's tasks when tqdm imports, else one line on stderr (redrawn with a
    carriage return on a terminal, a line per piece otherwise)."""

    def __init__(self):
        try:
            from tqdm.auto import tqdm
            self.tqdm = tqdm(total=0, desc="mugen optimize", unit="task", leave=True)
        except Exception:
            self.tqdm = None
        self.tty = sys.stderr.isatty()
        self.width, self.piece = 0, None

    def update(self, p):
        what = f"piece {p.piece}/{p.n_pieces}"
        if self.tqdm is not None:
            if p.piece != self.piece:  # a bar (and a rate) a piece
                self.piece = p.piece
                self.tqdm.reset()
                self.tqdm.set_description(f"mugen optimize {what}", refresh=False)
            if p.n_tasks > 0:  # 0 at the piece's start: the tasks are not made yet
                self.tqdm.total = int(p.n_tasks)
            self.tqdm.n = int(p.tasks_done)
            self.tqdm.set_postfix(found=int(p.found))  # and redraws
            return
        line = (f"mugen optimize: {what}, tasks {p.tasks_done}/{p.n_tasks}, {p.found} found, "
                f"{p.seconds:.1f} s{' (done)' if p.piece_done else ''}")
        if self.tty:
            sys.stderr.write("\r" + line.ljust(self.width))
            self.width = len(line)
        elif p.piece_done:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def close(self):
        if self.tqdm is not None:
            self.tqdm.close()
        elif self.tty and self.width:
            sys.stderr.write("\n")
            sys.stderr.flush()


def run_with_progress(opts, call, progress):
    """Runs call() (mg_optimize_program on opts, a status) with a progress callback set in opts.
    progress: True (a bar), False (none: Ctrl-C still stops the search), or a callable taking
    each C.Progress (it may raise, e.g.
    KeyboardInterrupt, to stop the search). Ctrl-C on the main thread is caught meanwhile and
    stops the search. Returns call()'s status, or raises what stopped it."""
    state = {"error": None, "interrupted": False}
    bar = _Bar() if progress is True else None
    user = progress if callable(progress) else None

    def on_progress(_arg, pp):
        if state["error"] is not None or state["interrupted"]:
            return 1  # stopping: the library's last calls are not passed on
        try:
            p = pp.contents
            if bar is not None:
                bar.update(p)
            if user is not None:
                user(p)
        except BaseException as e:  # noqa: BLE001 (stops the search; raised again after it)
            state["error"] = e
        return 1 if state["error"] is not None or state["interrupted"] else 0

    def on_sigint(_sig, _frame):
        state["interrupted"] = True

    fn = C.PROGRESS_FN(on_progress)  # held until the call returns
    C.lib.mg_optimize_set_progress(opts, fn, None)
    installed, old = threading.current_thread() is threading.main_thread(), None
    if installed:
        old = signal.signal(signal.SIGINT, on_sigint)
    try:
        st = call()
    finally:
        if installed:  # None: a handler not set from Python, which Python cannot set back
            signal.signal(signal.SIGINT, old if old is not None else signal.SIG_DFL)
        C.lib.mg_optimize_set_progress(opts, C.PROGRESS_FN(), None)
        if bar is not None:
            bar.close()
    if state["error"] is not None:
        raise state["error"]
    if state["interrupted"]:
        raise KeyboardInterrupt
    return st
