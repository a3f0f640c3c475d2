"""ctypes declarations of libmugen's C API (include/mugen.h), the one binding of the package.

ctypes rather than a C extension or cffi: the package then needs no Python headers and no
compiler beyond the one that builds libmugen itself, one .so serves every Python version, and
each call is a plain C call (the launch path is a handful of them, docs/python.md)."""
import ctypes
import os

MG_OK = 0
MG_ERR_LIMIT = 8
STATUS = ["ok", "parse", "shape", "io", "nomem", "unsupported", "div_zero", "invalid", "limit",
          "no_device", "compile", "launch", "mismatch"]
MG_F16, MG_BF16, MG_F32 = 0, 1, 2
MG_TARGET_CUDA, MG_TARGET_C = 0, 1
MG_FMT_TEXT, MG_FMT_JSON, MG_FMT_DOT = 0, 1, 2
MAX_DIMS = 4


class TensorDesc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("dims", ctypes.c_int64 * MAX_DIMS), ("numel", ctypes.c_int64),
                ("ragged", ctypes.c_int * MAX_DIMS), ("range", ctypes.c_double)]


class CompileOpts(ctypes.Structure):
    # mg_compile_opts: target, device, then mg_run_opts, zeroed (the defaults); 1024 bytes
    # hold it (include/mugen.h: mg_run_opts is under 256)
    _fields_ = [("target", ctypes.c_int), ("device", ctypes.c_char_p), ("opt", ctypes.c_ubyte * 1024)]


class CompiledInfo(ctypes.Structure):
    _fields_ = [("target", ctypes.c_int), ("n_inputs", ctypes.c_int), ("n_outputs", ctypes.c_int),
                ("n_launches", ctypes.c_int), ("workspace_bytes", ctypes.c_size_t), ("align", ctypes.c_size_t),
                ("cached", ctypes.c_int), ("device", ctypes.c_char * 64)]


class OptimizeReport(ctypes.Structure):
    # mg_optimize_report up to its log, then the run report (12,080 bytes in this build) in a
    # larger zeroed tail
    _fields_ = [("parts", ctypes.c_int), ("lax_parts", ctypes.c_int), ("unique", ctypes.c_int),
                ("searched", ctypes.c_int), ("from_cache", ctypes.c_int), ("kept", ctypes.c_int),
                ("search_seconds", ctypes.c_double), ("piece_run_seconds", ctypes.c_double),
                ("seconds_before_compile", ctypes.c_double), ("ugraph_text", ctypes.c_void_p),
                ("log", ctypes.c_void_p), ("run", ctypes.c_ubyte * 65536)]


class Progress(ctypes.Structure):
    # mg_progress: where a search stands (include/mugen.h)
    _fields_ = [("piece", ctypes.c_int), ("n_pieces", ctypes.c_int), ("tasks_done", ctypes.c_int64),
                ("n_tasks", ctypes.c_int64), ("found", ctypes.c_int64), ("seconds", ctypes.c_double),
                ("piece_done", ctypes.c_int)]


PROGRESS_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Progress))  # mg_progress_fn

OPTIMIZE_OPTS_BYTES = 8192  # mg_optimize_opts (392 bytes in this build), filled by mg_optimize_defaults


def _find():
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.environ.get("MUGEN_LIB"), os.path.join(here, "libmugen.so"),
              os.path.join(here, "..", "..", "build", "libmugen.so")):
        if p and os.path.exists(p):
            return p
    raise ImportError("mugen: libmugen.so not found (pip install the package from the repository's python/ "
                      "folder, or build it with `make pylib` and set MUGEN_LIB to build/libmugen.so)")


lib = ctypes.CDLL(_find())
P, I, S, D = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(TensorDesc)
for name, res, args in [
    ("mg_ctx_new", P, []), ("mg_ctx_free", None, [P]), ("mg_ctx_error", S, [P]),
    ("mg_program_parse", I, [P, S, ctypes.c_size_t, S, ctypes.POINTER(P)]), ("mg_program_free", None, [P]),
    ("mg_program_n_inputs", I, [P]), ("mg_program_n_outputs", I, [P]),
    ("mg_program_input", I, [P, I, D]), ("mg_program_output", I, [P, I, D]),
    ("mg_program_format", I, [P, P, I, ctypes.POINTER(P)]), ("mg_free", None, [P]),
    ("mg_program_n_dims", I, [P]),
    ("mg_program_dim", I, [P, I, ctypes.POINTER(S), ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                           ctypes.POINTER(ctypes.c_int64)]),
    ("mg_program_bind_dim", I, [P, P, S, ctypes.c_int64]),
    ("mg_program_dim_capacity", ctypes.c_int64, [P, I, ctypes.c_int64]),
    ("mg_program_dim_reduced", I, [P, I]),
    ("mg_program_dim_choice", ctypes.c_int64, [P, I]),
    ("mg_program_set_variant", I, [P, P, S, ctypes.c_int64]),
    ("mg_program_n_lengths", I, [P]),
    ("mg_program_lengths", I, [P, I, ctypes.POINTER(S), ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)]),
    ("mg_program_bind_lengths", I, [P, P, S, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64]),
    ("mg_eval_float", I, [P, P, I, ctypes.POINTER(P), ctypes.POINTER(P)]),
    ("mg_compile", I, [P, P, P, ctypes.POINTER(CompileOpts), ctypes.POINTER(P)]),
    ("mg_optimize_defaults", None, [P]), ("mg_optimize_program", I, [P, P, P, ctypes.POINTER(OptimizeReport)]),
    ("mg_optimize_report_free", None, [ctypes.POINTER(OptimizeReport)]),
    ("mg_optimize_set_progress", None, [P, PROGRESS_FN, P]),
    ("mg_optimize_set", I, [P, P, S, S]),
    ("mg_compiled_free", None, [P]), ("mg_compiled_get_info", I, [P, ctypes.POINTER(CompiledInfo)]),
    ("mg_compiled_input", I, [P, I, D]), ("mg_compiled_output", I, [P, I, D]),
    ("mg_launch", I, [P, P, I, ctypes.POINTER(P), I, ctypes.POINTER(P), P, ctypes.c_size_t, P]),
    ("mg_launch_rows", I, [P, P, ctypes.c_int64, I, ctypes.POINTER(P), I, ctypes.POINTER(P), P, ctypes.c_size_t, P]),
]:
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args

# The CUDA launch path's handle: the same library through PyDLL, so a launch (which only queues
# work) keeps the GIL instead of releasing and taking it back; no argtypes, so each argument
# goes through as the ctypes object the caller made once (core.Kernel's torch path) instead of
# being converted per call.
pylib = ctypes.PyDLL(lib._name)
pylib.mg_launch.restype = pylib.mg_launch_rows.restype = I
