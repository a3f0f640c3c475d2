"""Issue #30 on the CPU: what a notebook shows of mugen's objects (SVG through Graphviz's dot,
else text), the search's progress callback, and stopping a search (a callback raising
KeyboardInterrupt, or a real SIGINT) with the search cache keeping the pieces that ended."""
import os
import re
import shutil
import signal
import time

import pytest

import mugen
from mugen import display

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Two searched pieces (relu is not Lax: it cuts the program) of different forms, each searched
# in well under a second on two cores.
TWO = ("input x : f16[8, 64]\ninput w : f16[64, 32]\ninput v : f16[32, 16]\n"
       "y = relu(matmul(x, w))\nz = matmul(y, v)\noutput z\n")


def slow():  # one piece whose search runs for seconds on two cores (160-odd tasks)
    return mugen.Program.load(os.path.join(ROOT, "examples", "rmsnorm_linear_b1.mu"))


def entries(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".entry"))


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed (tools/deps.sh)")
def test_svg_of_program_kernel_and_optimized():
    p = mugen.Program(TWO)
    s = p._repr_svg_()
    assert s is not None and "<svg" in s and "</svg>" in s
    k = mugen.Kernel(p)
    assert "<svg" in k._repr_svg_()


def test_text_when_dot_is_absent(monkeypatch):
    monkeypatch.setattr(display.shutil, "which", lambda name: None)  # no dot program
    p = mugen.Program(TWO)
    assert p._repr_svg_() is None  # Jupyter then shows _repr_html_
    h = p._repr_html_()
    assert h.startswith("<pre>") and "inputs: x: float16[8, 64]" in h and "matmul(x, w)" in h
    r = repr(p)
    assert "outputs: z: float16[8, 16]" in r and "statements: 3" in r
    k = mugen.Kernel(p)
    assert k._repr_svg_() is None
    assert "target c" in repr(k) and "compile time" in repr(k) and "launches" in k._repr_html_()


def test_repr_shows_the_search_summary(tmp_path, monkeypatch):
    monkeypatch.setenv("MUGEN_SEARCH_CACHE", str(tmp_path))
    p = mugen.Program(TWO)
    ug, log = p.optimize()
    assert ug.search["unique"] == 2 and ug.search["searched"] == 2 and ug.search["from_cache"] == 0
    r = repr(mugen.Kernel(p, ugraph=ug))
    assert "runs the μGraph optimize kept" in r
    assert "statements: 2, 2 of them graph-defined kernels" in repr(ug), repr(ug)
    assert "2 searched forms (2 searched, 0 from the search cache)" in r, r
    ug2, _ = p.optimize()
    assert "(0 searched, 2 from the search cache)" in repr(ug2)


def test_progress_counts_increase_then_a_stop():
    seen = []

    def cb(q):
        seen.append((q.piece, q.piece_done, q.tasks_done, q.n_tasks, q.found, q.n_pieces))
        if sum(s[3] > 0 for s in seen) == 11:
            raise KeyboardInterrupt
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        slow().optimize(progress=cb)
    assert time.perf_counter() - t0 < 6  # the whole search takes 8 s or more here
    assert seen[0] == (1, 0, 0, 0, 0, 1)  # the piece's start
    # then the calls before the tasks (the e-graph, the screen's tests: 0 of 0), then the tasks'
    pre = [s for s in seen[1:] if s[3] == 0]
    tasks = seen[1 + len(pre):]
    assert all(s == (1, 0, 0, 0, 0, 1) for s in pre), seen
    done = [s[2] for s in tasks]
    assert len(tasks) == 11 and all(a <= b for a, b in zip(done, done[1:])) and done[-1] > done[0], seen
    assert all(s[3] > 0 and s[2] < s[3] and s[1] == 0 for s in tasks), seen  # stopped mid-search


def test_interrupt_between_pieces_then_resume(tmp_path, monkeypatch):
    monkeypatch.setenv("MUGEN_SEARCH_CACHE", str(tmp_path))
    p = mugen.Program(TWO)
    seen = []

    def cb(q):
        seen.append((q.piece, q.piece_done))
        if q.piece == 2:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        p.optimize(progress=cb)
    assert seen[-1] == (2, 0) and (1, 1) in seen
    assert len(entries(tmp_path)) == 1  # piece 1's search, whole; piece 2 never ran
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ug, log = p.optimize()  # the same program object, again: piece 1 read, piece 2 searched
    assert "piece 0: search from the search cache" in log and "piece 2: search complete" in log, log
    assert len(entries(tmp_path)) == 2
    assert ug.search["from_cache"] == 1 and ug.search["searched"] == 2


def test_a_search_stopped_part_way_resumes_its_finished_tasks(tmp_path, monkeypatch):
    """A piece's search stopped part way keeps its finished tasks in the cache's partial
    folder; the next optimize reloads them (the log says how many) and goes on from there, and
    the folder goes once the search has ended and is stored."""
    monkeypatch.setenv("MUGEN_SEARCH_CACHE", str(tmp_path))
    p = slow()

    def cb(q):
        if q.tasks_done >= 10:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        p.optimize(progress=cb, threads=2)
    (folder,) = list((tmp_path / "partial").iterdir())
    done = {f for f in os.listdir(folder / "checkpoint") if f.startswith("task-")}
    assert len(done) >= 10 and entries(tmp_path) == []
    ug, log = p.optimize(threads=2, time_limit=1)  # resumed, then stopped again at its limit
    m = re.search(r"stopped at its time limit \((\d+) of (\d+) tasks resumed\)", log)
    assert m and int(m.group(1)) == len(done), log
    more = {f for f in os.listdir(folder / "checkpoint") if f.startswith("task-")}
    assert more > done and entries(tmp_path) == []
    ug, log = p.optimize(threads=2)  # to the end: stored, the partial folder gone
    m = re.search(r"search complete \((\d+) of (\d+) tasks resumed\)", log)
    assert m and int(m.group(1)) == len(more), log
    assert len(entries(tmp_path)) == 1 and list((tmp_path / "partial").iterdir()) == []
    assert ug is not None and ug.search["searched"] == 1


def test_real_sigint_stops_the_search(tmp_path, monkeypatch):
    monkeypatch.setenv("MUGEN_SEARCH_CACHE", str(tmp_path))
    n = [0]

    def cb(q):
        n[0] += 1
        if n[0] == 3:  # as Ctrl-C would: the handler optimize installed sees it
            os.kill(os.getpid(), signal.SIGINT)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        slow().optimize(progress=cb)
    assert time.perf_counter() - t0 < 6 and n[0] <= 5, n
    assert entries(tmp_path) == []  # a stopped search is never stored
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_progress_line_without_tqdm(monkeypatch, capsys):
    import builtins
    real = builtins.__import__

    def no_tqdm(name, *a, **k):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    ug, _ = mugen.Program(TWO).optimize(progress=True)
    err = capsys.readouterr().err
    assert "mugen optimize: piece 1/2" in err and "piece 2/2" in err and "(done)" in err, err
    assert ug is not None


def test_stopped_optimize_is_a_limit_status_in_c():
    import ctypes

    from mugen import _capi as C
    from mugen.core import _ctx
    opts = (ctypes.c_ubyte * C.OPTIMIZE_OPTS_BYTES)()
    C.lib.mg_optimize_defaults(opts)
    fn = C.PROGRESS_FN(lambda arg, p: 1)  # stop at the first call
    C.lib.mg_optimize_set_progress(opts, fn, None)
    rep = C.OptimizeReport()
    p = mugen.Program(TWO)
    st = C.lib.mg_optimize_program(_ctx(), p._p, opts, ctypes.byref(rep))
    assert st == C.MG_ERR_LIMIT and b"stopped by the progress callback" in C.lib.mg_ctx_error(_ctx())
    assert not rep.ugraph_text
    log = ctypes.string_at(rep.log).decode()  # the relu piece's line only: no search ran
    assert "piece 1: not Lax" in log and "search" not in log, log
    C.lib.mg_optimize_report_free(ctypes.byref(rep))
    assert display.search_lines(None) == []


def test_torch_compile_result_shows_itself_and_ctrl_c_goes_up(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("MUGEN_SEARCH_CACHE", str(tmp_path))

    def f(x, w, v):
        return torch.relu(x @ w) @ v
    g = torch.Generator().manual_seed(3)
    x, w, v = ((torch.rand(*s, generator=g) - 0.5).half() for s in [(8, 64), (64, 32), (32, 16)])

    def stop(q):
        if q.piece == 2:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):  # not swallowed into "PyTorch runs the graph"
        mugen.compile(f, [x, w, v], optimize=True, progress=stop)
    c = mugen.compile(f, [x, w, v], optimize=True, progress=False)
    r = repr(c)
    assert "the whole graph runs in mugen" in r and "time: translate" in r and "optimize" in r, r
    assert "(1 searched, 1 from the search cache)" in r, r
    assert "runs the μGraph optimize kept" in c._repr_html_()
    if shutil.which("dot"):
        assert "<svg" in c._repr_svg_()
    assert (c(x, w, v).float() - f(x.float(), w.float(), v.float())).norm() < 1e-2 * f(x.float(), w.float(), v.float()).norm()


def test_tqdm_bar(capsys):
    pytest.importorskip("tqdm")
    ug, _ = mugen.Program(TWO).optimize(progress=True)
    err = capsys.readouterr().err
    assert "mugen optimize piece 1/2" in err and "mugen optimize piece 2/2" in err, err
    assert re.search(r"100%.* (\d+)/\1 ", err), err  # a piece's tasks, all done
    assert ug is not None


def test_split_compile_result_shows_its_pieces_as_text():
    torch = pytest.importorskip("torch")

    def f(x, w):
        y = torch.relu(x @ w)
        return torch.exp(torch.cumsum(y, 1) * 0.01) * 2 + y
    c = mugen.compile(f, [torch.rand(8, 64), torch.rand(64, 32)])
    assert c._repr_svg_() is None  # no one graph to draw: the notebook shows the HTML
    h = c._repr_html_()
    assert "the graph in pieces, 2 run by mugen" in h and "PyTorch runs cumsum" in h
    assert h.count("PyTorch runs cumsum") == 1, h  # the split once


def test_sigint_without_a_bar_stops_the_search():
    import threading
    # SIGINT half a second in, from another thread, as a terminal's Ctrl-C would come
    t = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    t.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            slow().optimize(progress=False)
    finally:
        t.cancel()
    assert time.perf_counter() - t0 < 6  # the whole search takes 8 s or more here
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
