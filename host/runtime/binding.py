"""ctypes binding of the microarena C runtime (host build).

The shared library is built on demand with ``make -C firmware host`` (into build/ in a
checkout, else into the user's cache: host/paths.py). Set
``MICROARENA_LIB`` to load another build, e.g. the AddressSanitizer one
(``make -C firmware asan``; the process then needs ``LD_PRELOAD`` of libasan).

    it = Interpreter(model_bytes)          # arena sized exactly (probe, then reopen)
    it.set_input(0, array); it.invoke(); y = it.get_output(0)
    print("\\n".join(it.report()))
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from host import paths

STATUS_NAMES = {
    0: "MA_OK",
    1: "MA_ERR_MODEL",
    2: "MA_ERR_UNSUPPORTED",
    3: "MA_ERR_ARENA",
    4: "MA_ERR_PLAN",
    5: "MA_ERR_ARG",
    6: "MA_ERR_KERNEL",
}
MA_ERR_MODEL, MA_ERR_UNSUPPORTED, MA_ERR_ARENA, MA_ERR_PLAN, MA_ERR_ARG, MA_ERR_KERNEL = range(1, 7)

# ma_type -> numpy dtype (TFLite TensorType values).
DTYPES = {
    0: np.float32,
    1: np.float16,
    2: np.int32,
    3: np.uint8,
    4: np.int64,
    6: np.bool_,
    7: np.int16,
    8: np.complex64,
    9: np.int8,
    10: np.float64,
    11: np.complex128,
    12: np.uint64,
    13: np.int32,
    15: np.uint32,
    16: np.uint16,
}
REC_COUNT = 7  # MA_REC_COUNT: the recorder categories (names from the library)
MAX_DIMS = 6
PROBE_ARENA = 64 << 20  # address space only: pages never touched are never committed
MSG_SIZE = 512


class MicroarenaError(Exception):
    """A runtime error status with the runtime's message."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(f"{STATUS_NAMES.get(status, status)}: {message}")


class MaQuant(ctypes.Structure):
    _fields_ = [
        ("scale", ctypes.c_void_p),
        ("zero_point", ctypes.c_void_p),
        ("count", ctypes.c_int32),
        ("dim", ctypes.c_int32),
    ]


class MaTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("bytes", ctypes.c_size_t),
        ("dims", ctypes.c_int32 * MAX_DIMS),
        ("ndims", ctypes.c_int32),
        ("type", ctypes.c_uint8),
        ("is_const", ctypes.c_uint8),
        ("is_variable", ctypes.c_uint8),
        ("quant", MaQuant),
        ("index", ctypes.c_int32),
    ]


class _Rec(ctypes.Structure):
    _fields_ = [
        ("requested", ctypes.c_size_t),
        ("used", ctypes.c_size_t),
        ("count", ctypes.c_size_t),
    ]


class _Stats(ctypes.Structure):
    _fields_ = [
        ("head", ctypes.c_size_t),
        ("tail", ctypes.c_size_t),
        ("total", ctypes.c_size_t),
        ("temp_peak", ctypes.c_size_t),
        ("required", ctypes.c_size_t),
        ("rec", _Rec * REC_COUNT),
    ]


_EMIT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
_LOG = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_int32, ctypes.c_int32
)
_lock = threading.Lock()
_libs: dict[str, ctypes.CDLL] = {}


class RuntimeBuildError(RuntimeError):
    """The host runtime could not be built (the message says why, or what to install)."""


NEED_TOOLS = (
    "building the microarena host runtime needs make and a C compiler ({cc}); {missing} not "
    "found: install them (Debian/Ubuntu: apt install make gcc; Fedora: dnf install make gcc; "
    "macOS: xcode-select --install; Windows: MSYS2's make and mingw-w64-gcc)"
)


def build(target: str = "host") -> Path:
    """Builds (incrementally in a checkout) and returns the shared library for `target` (host
    or asan). An installed package builds once per source version into the user's cache."""
    root = paths.runtime_build_root()
    out = root / target / "libmicroarena.so"
    if paths.CHECKOUT:
        _make(target, root)
    elif not out.exists():  # the folder is named for the sources' hash: a built one is current
        # Built aside, then renamed into place: a process running at the same time never loads
        # a half-written library; when two finish, the second keeps the first one's.
        partial = root / f"{target}.partial-{os.getpid()}"
        try:
            _make(target, partial)
            with contextlib.suppress(OSError):
                (partial / target).rename(root / target)
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return out


def _make(target: str, build_root: Path) -> None:
    cc = "gcc" if target == "asan" else os.environ.get("CC") or "cc"
    missing = [tool for tool in ("make", cc.split()[0]) if shutil.which(tool) is None]
    if missing:
        raise RuntimeBuildError(NEED_TOOLS.format(cc=cc, missing=" and ".join(missing)))
    proc = subprocess.run(
        ["make", "-s", "-C", str(paths.FIRMWARE), target, f"BUILD={build_root}"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeBuildError(
            f"building the {target} runtime failed:\n{proc.stdout}{proc.stderr}"
        )


@functools.cache
def _host_library() -> Path:
    """Built once per process: asking make again costs ~0.1 s per interpreter opened."""
    return build("host")


def load_library(path: str | os.PathLike[str] | None = None) -> ctypes.CDLL:
    """The runtime library: `path`, else $MICROARENA_LIB, else the host build (built if needed)."""
    with _lock:
        if path is None:
            path = os.environ.get("MICROARENA_LIB") or _host_library()
        key = str(path)
        if key not in _libs:
            lib = ctypes.CDLL(key)
            _declare(lib)
            _libs[key] = lib
        return _libs[key]


def _declare(lib: ctypes.CDLL) -> None:
    p, i32, sz = ctypes.c_void_p, ctypes.c_int32, ctypes.c_size_t
    tp = ctypes.POINTER(MaTensor)
    lib.ma_open.argtypes = [ctypes.POINTER(p), p, sz, p, sz, ctypes.c_char_p, sz]
    lib.ma_open.restype = ctypes.c_int
    lib.ma_open_logged.argtypes = [ctypes.POINTER(p), p, sz, p, sz, ctypes.c_char_p, sz, _LOG, p]
    lib.ma_open_logged.restype = ctypes.c_int
    lib.ma_arena_shortfall.argtypes = [p, sz, p, sz, p, sz, ctypes.c_char_p, sz, p]
    lib.ma_arena_shortfall.restype = ctypes.c_int
    lib.ma_set_while_limit.argtypes = [p, i32]
    lib.ma_set_while_limit.restype = None
    lib.ma_invoke.argtypes = [p]
    lib.ma_invoke.restype = ctypes.c_int
    lib.ma_error.argtypes = [p]
    lib.ma_error.restype = ctypes.c_char_p
    for name in ("ma_num_inputs", "ma_num_outputs", "ma_num_subgraphs"):
        getattr(lib, name).argtypes = [p]
        getattr(lib, name).restype = i32
    lib.ma_num_tensors.argtypes = [p, i32]
    lib.ma_num_tensors.restype = i32
    for name in ("ma_input", "ma_output"):
        getattr(lib, name).argtypes = [p, i32]
        getattr(lib, name).restype = tp
    lib.ma_tensor_info.argtypes = [p, i32, i32, tp]
    lib.ma_tensor_info.restype = ctypes.c_int
    lib.ma_tensor_offset.argtypes = [p, i32, i32]
    lib.ma_tensor_offset.restype = ctypes.c_int64
    lib.ma_arena_stats_get.argtypes = [p, ctypes.POINTER(_Stats)]
    lib.ma_arena_stats_get.restype = None
    lib.ma_report.argtypes = [p, _EMIT, p]
    lib.ma_report.restype = None
    lib.ma_op_name.argtypes = [i32]
    lib.ma_op_name.restype = ctypes.c_char_p
    lib.ma_rec_category_name.argtypes = [ctypes.c_int]
    lib.ma_rec_category_name.restype = ctypes.c_char_p


def categories(lib: ctypes.CDLL | None = None) -> tuple[str, ...]:
    """TFLM's RecordingMicroAllocator category names, in the runtime's order (report.c)."""
    return _category_names(lib if lib is not None else load_library())


@functools.cache
def _category_names(lib: ctypes.CDLL) -> tuple[str, ...]:
    return tuple(lib.ma_rec_category_name(c).decode() for c in range(REC_COUNT))


def _aligned(nbytes: int, align: int = 16) -> np.ndarray:
    """A zeroed uint8 buffer of nbytes whose start is `align`-aligned."""
    raw = np.zeros(nbytes + align, dtype=np.uint8)
    skip = (-raw.ctypes.data) % align
    return raw[skip : skip + nbytes]


@dataclass(frozen=True)
class TensorInfo:
    subgraph: int
    index: int
    shape: tuple[int, ...]
    dtype: type
    nbytes: int
    offset: int  # from the arena start, -1 when not in the arena
    is_const: bool
    is_variable: bool
    scale: float | None
    zero_point: int | None


@dataclass(frozen=True)
class ArenaStats:
    head: int
    tail: int
    total: int
    temp_peak: int
    required: int
    categories: dict[str, tuple[int, int, int]]  # name -> (used, requested, count)


class Interpreter:
    """One model on the C runtime, in its own arena.

    arena_size None: probe with a large arena, then reopen with exactly the required size.
    """

    def __init__(
        self,
        model: bytes,
        arena_size: int | None = None,
        lib: ctypes.CDLL | None = None,
        arena_misalign: int = 0,
    ) -> None:
        self._lib = lib or load_library()
        self._model = _aligned(max(len(model), 1), 16)
        self._model[: len(model)] = np.frombuffer(model, dtype=np.uint8)
        self._model_size = len(model)
        if arena_size is None:
            probe = Interpreter(model, PROBE_ARENA, self._lib)
            arena_size = probe.stats().required
            del probe
        self.arena_size = arena_size
        self._arena_buf = _aligned(arena_size + arena_misalign, 16)
        self._arena = self._arena_buf[arena_misalign:]
        self._msg = ctypes.create_string_buffer(MSG_SIZE)
        self._it = ctypes.c_void_p()
        status = self._lib.ma_open(
            ctypes.byref(self._it),
            self._model.ctypes.data,
            self._model_size,
            self._arena.ctypes.data,
            arena_size,
            self._msg,
            MSG_SIZE,
        )
        if status == MA_ERR_ARENA:
            status = self._explain_shortfall()
        if status != 0:
            raise MicroarenaError(status, self._msg.value.decode(errors="replace"))

    def _explain_shortfall(self) -> int:
        """Rewrites the message to name the model's full requirement (set-up stopped short), or
        gives the status and message with which the model fails in any arena."""
        work = _aligned(PROBE_ARENA, 16)
        return int(
            self._lib.ma_arena_shortfall(
                self._model.ctypes.data,
                self._model_size,
                self._arena.ctypes.data,
                self.arena_size,
                work.ctypes.data,
                PROBE_ARENA,
                self._msg,
                MSG_SIZE,
                None,
            )
        )

    # -- tensors
    def _tensor(self, ptr: ctypes._Pointer[MaTensor] | None, what: str) -> MaTensor:
        if not ptr:
            raise IndexError(f"no such {what}")
        return ptr.contents

    def _info(self, t: MaTensor, subgraph: int) -> TensorInfo:
        scale = zp = None
        if t.quant.scale and t.quant.count > 0:
            scale = float(ctypes.cast(t.quant.scale, ctypes.POINTER(ctypes.c_float))[0])
            zp = int(ctypes.cast(t.quant.zero_point, ctypes.POINTER(ctypes.c_int64))[0])
        offset = self._lib.ma_tensor_offset(self._it, subgraph, t.index)
        return TensorInfo(
            subgraph,
            t.index,
            tuple(t.dims[: t.ndims]),
            DTYPES.get(t.type, np.uint8),
            t.bytes,
            offset,
            bool(t.is_const),
            bool(t.is_variable),
            scale,
            zp,
        )

    def num_inputs(self) -> int:
        return int(self._lib.ma_num_inputs(self._it))

    def num_outputs(self) -> int:
        return int(self._lib.ma_num_outputs(self._it))

    def input_details(self, i: int) -> TensorInfo:
        return self._info(self._tensor(self._lib.ma_input(self._it, i), f"input {i}"), 0)

    def output_details(self, i: int) -> TensorInfo:
        return self._info(self._tensor(self._lib.ma_output(self._it, i), f"output {i}"), 0)

    def tensors(self) -> list[TensorInfo]:
        out = []
        for sg in range(self._lib.ma_num_subgraphs(self._it)):
            for i in range(self._lib.ma_num_tensors(self._it, sg)):
                t = MaTensor()
                self._lib.ma_tensor_info(self._it, sg, i, ctypes.byref(t))
                out.append(self._info(t, sg))
        return out

    def _view(self, t: MaTensor) -> np.ndarray:
        dtype = DTYPES.get(t.type, np.uint8)
        shape = tuple(t.dims[: t.ndims])
        if t.bytes == 0 or not t.data:
            return np.zeros(shape, dtype=dtype)
        raw = (ctypes.c_uint8 * t.bytes).from_address(t.data)
        return np.frombuffer(raw, dtype=dtype).reshape(shape)

    def set_input(self, i: int, value: np.ndarray) -> None:
        t = self._tensor(self._lib.ma_input(self._it, i), f"input {i}")
        dst = self._view(t)
        src = np.asarray(value)
        if src.size != dst.size:
            raise ValueError(f"input {i} needs {dst.size} elements of {dst.dtype}, got {src.size}")
        dst[...] = src.reshape(dst.shape).astype(dst.dtype, copy=False)

    def get_output(self, i: int) -> np.ndarray:
        t = self._tensor(self._lib.ma_output(self._it, i), f"output {i}")
        return self._view(t).copy()

    def invoke(self) -> None:
        status = self._lib.ma_invoke(self._it)
        if status != 0:
            raise MicroarenaError(status, self._lib.ma_error(self._it).decode(errors="replace"))

    # -- arena
    def stats(self) -> ArenaStats:
        s = _Stats()
        self._lib.ma_arena_stats_get(self._it, ctypes.byref(s))
        cats = {
            name: (int(r.used), int(r.requested), int(r.count))
            for name, r in zip(categories(self._lib), s.rec, strict=True)
            if r.requested
        }
        return ArenaStats(
            int(s.head), int(s.tail), int(s.total), int(s.temp_peak), int(s.required), cats
        )

    def report(self) -> list[str]:
        lines: list[str] = []

        def emit(_ctx: int | None, line: bytes) -> None:
            lines.append(line.decode())

        cb = _EMIT(emit)
        self._lib.ma_report(self._it, cb, None)
        return lines


def open_refusal(model: bytes) -> str | None:
    """None when the runtime opens the model, else why not: with an unsupported operator, the
    runtime's list of every one (operator, position and reason)."""
    try:
        Interpreter(model)
    except MicroarenaError as e:
        return e.message
    return None


@dataclass(frozen=True)
class Request:
    """A set-up request whose size a kernel decides (see ma_open_logged)."""

    kind: int  # 0 kernel persistent data, 1 kernel scratch, 2 resource variable buffer
    nbytes: int
    subgraph: int
    node: int


def kernel_requests(model: bytes, lib: ctypes.CDLL | None = None) -> list[Request]:
    """The kernel-sized requests the host build makes while loading `model`, in order."""
    lib = lib or load_library()
    buf = _aligned(max(len(model), 1))
    buf[: len(model)] = np.frombuffer(model, dtype=np.uint8)
    arena = _aligned(PROBE_ARENA)
    msg = ctypes.create_string_buffer(MSG_SIZE)
    out: list[Request] = []

    def log(_ctx: int | None, kind: int, nbytes: int, sg: int, node: int) -> None:
        out.append(Request(kind, nbytes, sg, node))

    cb = _LOG(log)
    it = ctypes.c_void_p()
    status = lib.ma_open_logged(
        ctypes.byref(it),
        buf.ctypes.data,
        len(model),
        arena.ctypes.data,
        PROBE_ARENA,
        msg,
        MSG_SIZE,
        cb,
        None,
    )
    if status != 0:
        raise MicroarenaError(status, msg.value.decode(errors="replace"))
    return out


def op_name(code: int, lib: ctypes.CDLL | None = None) -> str:
    return (lib or load_library()).ma_op_name(code).decode()
