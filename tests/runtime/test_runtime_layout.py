"""host.runtime.arena predicts the C runtime's arena exactly.

The ABI table (struct sizes per target) is checked against the compilers themselves
(`nm -S` of an object holding one array per sizeof), and the host prediction is compared with
what the C runtime reports on every supported shared model, with and without an
OfflineMemoryAllocation plan.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import pytest

from host.paths import SHARED_MODELS
from host.planning.model import metadata
from host.runtime import arena
from host.runtime.binding import MA_ERR_UNSUPPORTED, Interpreter, MicroarenaError
from host.runtime.sources import runtime_build
from host.tflite.model import Model

REPO = Path(__file__).resolve().parents[2]
MODELS = SHARED_MODELS
PROBE = """#include "internal.h"
const char ctx[sizeof(struct ma_context)];
const char subgraph[sizeof(ma_subgraph)];
const char inode[sizeof(ma_inode)];
const char tensor[sizeof(ma_tensor)];
const char resource[sizeof(ma_resource)];
const char scratch_req[sizeof(ma_scratch_req)];
const char ptr[sizeof(void *)];
const char align_ptr[_Alignof(ma_subgraph) == _Alignof(void *) &&
                     _Alignof(ma_inode) == _Alignof(void *) &&
                     _Alignof(ma_tensor) == _Alignof(void *) &&
                     _Alignof(ma_resource) == _Alignof(void *) &&
                     _Alignof(ma_scratch_req) == _Alignof(void *) ? _Alignof(void *) : 1];
"""
COMPILERS = {
    "host": (["gcc"], "nm"),
    "cortex-m": (
        [
            "arm-none-eabi-gcc",
            "-mcpu=cortex-m4",
            "-mthumb",
            "-mfloat-abi=hard",
            "-mfpu=fpv4-sp-d16",
        ],
        "arm-none-eabi-nm",
    ),
}


@pytest.mark.parametrize("abi", sorted(COMPILERS))
def test_abi_table_matches_compiler(abi: str, tmp_path: Path) -> None:
    cc, nm = COMPILERS[abi]
    if shutil.which(cc[0]) is None:
        pytest.skip(f"{cc[0]} is not installed")
    src = tmp_path / "probe.c"
    src.write_text(PROBE)
    obj = tmp_path / "probe.o"
    inc = [f"-I{d}" for d in runtime_build().include_dirs]
    subprocess.run([*cc, "-std=c11", *inc, "-c", str(src), "-o", str(obj)], check=True)
    out = subprocess.run([nm, "-S", str(obj)], capture_output=True, text=True, check=True).stdout
    sizes = {line.split()[3]: int(line.split()[1], 16) for line in out.splitlines()}
    assert sizes == vars(arena.ABIS[abi])


def _supported() -> list[str]:
    path = MODELS / "MANIFEST.tsv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return [row["name"] for row in csv.DictReader(f, delimiter="\t")]


def _check(data: bytes) -> Interpreter:
    try:
        it = Interpreter(data)
    except MicroarenaError as e:
        if e.status == MA_ERR_UNSUPPORTED:
            pytest.skip(f"runtime says: {e.message}")
        raise
    s = it.stats()
    p = arena.predict(data, abi="host")
    assert (p["head"], p["tail"], p["total"], p["temp_peak"], p["required"]) == (
        s.head,
        s.tail,
        s.total,
        s.temp_peak,
        s.required,
    )
    assert p["categories"] == s.categories
    offsets = {g: t.offset for g, t in enumerate(it.tensors())}
    for g, off in p["tensor_offsets"].items():
        assert offsets[g] == off, f"tensor {g}"
    core = arena.predict(data, abi="cortex-m")
    assert core["head"] == p["head"] and core["tail"] < p["tail"]
    return it


@pytest.mark.parametrize("name", _supported() or ["manifest-absent"])
def test_prediction_equals_runtime(name: str) -> None:
    path = MODELS / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"shared model {path} is absent (tests read ../shared/models)")
    it = _check(path.read_bytes())
    head = it.stats().head
    planned = {
        g: t.offset
        for g, t in enumerate(it.tensors())
        if 0 <= t.offset < head and not t.is_variable and not t.is_const
    }
    if planned:
        model = Model(path.read_bytes())
        metadata.embed(model, {g: off + 32 for g, off in planned.items()})
        _check(model.to_bytes())
