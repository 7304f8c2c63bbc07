"""The real TFLM + CMSIS-NN measured by hand on QEMU boards (tests/data/tflm_cmsis_nn/measured.json;
method, commits and figures in docs/tflm_cmsis_nn.md): one typed way for tests to read it.

A run is one model x board x kernel set x plan ("none": TFLM plans online; "offline": the plan
`python -m host.plan M -o P` embedded when the data was measured; "overlap": the same with
`--overlap --kernels cmsis-nn --cpu cortex-m4`, in OVERLAP_DATA; each plan is kept as its
offsets so that the exact planned model can be rebuilt whatever the planner does later:
planned_model_bytes). BANDS_DATA holds `--bands --overlap` runs: the rewrite is kept as its cut
and band bounds, so the banded model too is rebuilt exactly.

Some runs also carry seeded inputs (`inputs`): per input, a CRC-32 of every operator's outputs,
in the order of the run's `nodes`, from TFLM's Reset() on that input.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import deterministic_inputs, oracle, random_inputs

from host.paths import REPO, SHARED_MODELS, SHARED_ZOO
from host.planning.libraries.registry import library
from host.planning.model import metadata
from host.rewrite.bands import rewrite
from host.tflite.model import Model
from host.tflite.modelgen import build_demo_model

DATA = REPO / "tests" / "data" / "tflm_cmsis_nn" / "measured.json"
DOC = REPO / "docs" / "tflm_cmsis_nn.md"
# `host.plan M --overlap --kernels cmsis-nn --cpu cortex-m4` plans run on mps2-an386 (plan
# "overlap"), in the same format: the overlap rules of CMSIS-NN's DSP path on the real TFLM.
OVERLAP_DATA = DATA.with_name("overlap_m4.json")
# person_detect `--bands --overlap --kernels cmsis-nn --cpu cortex-m4` on mps2-an386 (plan
# "bands-overlap") and unplanned (plan "none"), over seeded inputs.
BANDS_DATA = DATA.with_name("bands_m4.json")
# Models the predictor was not written against (../shared/zoo), unplanned and with `host.plan M
# --kernels cmsis-nn --cpu cortex-m4` (plan "offline"), mostly on mps2-an386.
UNSEEN_DATA = DATA.with_name("unseen_m4.json")


@dataclass(frozen=True)
class Category:
    """One line of RecordingMicroAllocator's report, as TFLM prints it."""

    name: str  # e.g. "Persistent buffer data"
    used: int  # with alignment overhead
    requested: int
    count: int


@dataclass(frozen=True)
class NodeOutput:
    node: int  # execution order in subgraph 0
    op: str  # TFLM's builtin operator name
    tensor: int  # output tensor index in subgraph 0
    crc32: int  # zlib crc32 of the tensor's bytes right after the operator ran
    bytes: int
    instructions: int  # the operator's Invoke alone (second, uninstrumented invoke)


@dataclass(frozen=True)
class InputRun:
    """One seeded input (tests/support/tflm_oracle.random_inputs(interp, n, seed))."""

    seed: int
    input_crc32: tuple[int, ...]  # per model input, as the harness read it
    crc32: tuple[int, ...]  # per row of the run's nodes: that operator output's CRC-32
    outputs_crc32: tuple[int, ...]


@dataclass(frozen=True)
class Run:
    model: str
    board: str  # QEMU machine
    cpu: str  # gcc -mcpu
    kernels: str  # "cmsis-nn" or "reference"
    plan: str  # "none" or "offline"
    head: int  # non-persistent bytes, as TFLM reports it
    tail: int  # persistent bytes
    total: int
    min_arena: int  # smallest arena (16-byte aligned) for which AllocateTensors and Invoke succeed
    categories: tuple[Category, ...]
    instructions: int  # per invoke, second invoke from Reset(), no instrumentation
    nodes: tuple[NodeOutput, ...]
    outputs_crc32: tuple[int, ...]
    inputs: tuple[InputRun, ...] = ()

    def category(self, name: str) -> Category | None:
        return next((c for c in self.categories if c.name == name), None)


@dataclass(frozen=True)
class ModelEntry:
    name: str
    origin: str  # "shared:<file>", "zoo:<file>", "repo:<path>" or "modelgen:demo"
    sha256: str
    size: int
    plan_offsets: tuple[int, ...]  # OfflineMemoryAllocation offsets, one per tensor (-1: online)
    planned_sha256: str
    bands: tuple[int, tuple[int, ...]] | None = None  # (cut operator, band bounds) of a rewrite
    # What host.plan --embed recorded beside the plan (metadata.marker): (runtime, overlap,
    # kernel library, CPU); None where the offsets were re-embedded alone.
    marker: tuple[str, bool, str, str] | None = None


@dataclass(frozen=True)
class Measured:
    sources: dict[str, str]  # project -> commit
    toolchain: dict[str, str]
    boards: dict[str, dict[str, object]]
    models: dict[str, ModelEntry]
    runs: tuple[Run, ...]

    def run(self, model: str, board: str, kernels: str, plan: str) -> Run | None:
        return next(
            (
                r
                for r in self.runs
                if (r.model, r.board, r.kernels, r.plan) == (model, board, kernels, plan)
            ),
            None,
        )


@cache
def load(path: Path = DATA) -> Measured:
    d = json.loads(path.read_text())
    models = {
        name: ModelEntry(
            name,
            m["origin"],
            m["sha256"],
            m["bytes"],
            tuple(m["plan"]["offsets"]),
            m["plan"]["planned_sha256"],
            _bands(m["plan"].get("bands")),
            _marker(m["plan"].get("marker")),
        )
        for name, m in d["models"].items()
    }
    runs = tuple(
        Run(
            model=r["model"],
            board=r["board"],
            cpu=r["cpu"],
            kernels=r["kernels"],
            plan=r["plan"],
            head=r["head"],
            tail=r["tail"],
            total=r["total"],
            min_arena=r["min_arena"],
            categories=tuple(Category(**c) for c in r["categories"]),
            instructions=r["instructions"],
            nodes=tuple(
                NodeOutput(
                    n["node"],
                    n["op"],
                    n["tensor"],
                    int(n["crc32"], 16),
                    n["bytes"],
                    n["instructions"],
                )  # fmt: skip
                for n in r["nodes"]
            ),
            outputs_crc32=tuple(int(c, 16) for c in r["outputs_crc32"]),
            inputs=tuple(_input_run(x) for x in r.get("inputs", ())),
        )
        for r in d["runs"]
    )
    return Measured(d["sources"], d["toolchain"], d["boards"], models, runs)


def _bands(b: dict | None) -> tuple[int, tuple[int, ...]] | None:
    return None if b is None else (b["cut"], tuple(b["bounds"]))


def _marker(m: dict | None) -> tuple[str, bool, str, str] | None:
    return None if m is None else (m["runtime"], m["overlap"], m["kernels"], m["cpu"])


def _input_run(x: dict) -> InputRun:
    def crcs(key: str) -> tuple[int, ...]:
        return tuple(int(c, 16) for c in x[key])

    return InputRun(x["seed"], crcs("input_crc32"), crcs("crc32"), crcs("outputs_crc32"))


def model_bytes(entry: ModelEntry) -> bytes | None:
    """The model as measured, or None where it lives in the absent shared corpus."""
    kind, _, where = entry.origin.partition(":")
    if kind in ("shared", "zoo"):
        p = (SHARED_MODELS if kind == "shared" else SHARED_ZOO) / where
        return p.read_bytes() if p.exists() else None
    if kind == "repo":
        return (REPO / where).read_bytes()
    if kind == "modelgen" and where == "demo":
        return build_demo_model()
    raise ValueError(f"{entry.name}: unknown origin {entry.origin!r}")


def measured_model_bytes(entry: ModelEntry) -> bytes:
    """The model as measured: skips where it is in the absent shared corpus, fails where its
    bytes changed since."""
    data = model_bytes(entry)
    if data is None:
        pytest.skip(f"{entry.origin} is absent (tests read ../shared/models and ../shared/zoo)")
    assert (sha256(data), len(data)) == (entry.sha256, entry.size), (
        f"{entry.name} changed since it was measured on TFLM + CMSIS-NN: re-measure "
        "(docs/tflm_cmsis_nn.md) or restore it"
    )
    return data


def planned_model_bytes(entry: ModelEntry, original: bytes) -> bytes:
    """The planned model measured: the original (banded as recorded) with the recorded offsets
    embedded, and host.plan's marker where it was measured with it."""
    model = Model(original)
    if entry.bands is not None:
        cut, bounds = entry.bands
        model, _ = rewrite(model, cut, list(bounds))
    offsets = {i: o for i, o in enumerate(entry.plan_offsets) if o != -1}
    if entry.marker is None:
        metadata.embed(model, offsets)
    else:
        runtime, overlap, kernels, cpu = entry.marker
        planned_for = runtime + ("+overlap" if overlap else "")
        lib = library(kernels, cpu)
        metadata.embed(model, offsets, planned_for, lib.name, lib.cpu)
    return model.to_bytes()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class PipRun:
    """The pip TFLM (reference kernels) on one seeded input, every tensor kept."""

    input_crc32: tuple[int, ...]
    crc32: dict[int, int]  # tensor index -> CRC-32 of its bytes after the invoke


def pip_runs(data: bytes, seeds: list[int], tensors: set[int]) -> list[PipRun]:
    """The pip TFLM on the seeded inputs the harness read, each from Reset() as there."""
    it = _keeping_all_tensors(data)
    n_inputs = len(Model(data).subgraphs[0].inputs)
    runs = []
    for seed in seeds:
        it.reset()
        inputs = random_inputs(it, n_inputs, seed)
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        it.invoke()
        crcs = {t: zlib.crc32(_tensor_bytes(it, t)) for t in tensors}
        runs.append(PipRun(tuple(zlib.crc32(x.tobytes()) for x in inputs), crcs))
    return runs


def pip_deterministic(data: bytes, tensors: set[int]) -> dict[int, int]:
    """CRC-32 of each tensor after the pip TFLM ran the boards' deterministic input."""
    it = _keeping_all_tensors(data)
    for i, x in enumerate(deterministic_inputs(it, len(Model(data).subgraphs[0].inputs))):
        it.set_input(x, i)
    it.invoke()
    return {t: zlib.crc32(_tensor_bytes(it, t)) for t in tensors}


def _keeping_all_tensors(data: bytes):
    runtime = oracle()
    return runtime.Interpreter.from_bytes(
        data, arena_size=16 << 20,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
    )  # fmt: skip


def _tensor_bytes(it, tensor: int) -> bytes:
    return np.ascontiguousarray(np.asarray(it.GetTensor(tensor, 0)["tensor_data"])).tobytes()


def doc_rows(cells: int) -> list[list[str]]:
    """The rows of docs/tflm_cmsis_nn.md's Markdown tables that have `cells` cells, stripped:
    the tests that check a table against the data pick theirs from these."""
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        row = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(row) == cells:
            rows.append(row)
    return rows
