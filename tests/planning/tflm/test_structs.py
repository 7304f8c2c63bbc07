"""TFLM's struct layouts (host/planning/tflm/structs.py) against the C compiler of each
target: every struct the planner's model of TFLM allocates (its own and the reference kernels'
OpData and builtin options), declared in C from the same field lists, has the sizeof and
alignof that `layout` computes."""

from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from host.planning.libraries.reference import op_data
from host.planning.tflm.structs import (
    AFFINE_QUANTIZATION,
    ALLOCATION_INFO,
    BUILTIN_DATA_ALLOCATOR,
    BUILTIN_PARAMS,
    CORTEX_M,
    EVAL_TENSOR,
    GREEDY_MEMORY_PLANNER,
    MICRO_RESOURCE_VARIABLE,
    MICRO_RESOURCE_VARIABLES,
    NODE_AND_REGISTRATION,
    RECORDING_SINGLE_ARENA_ALLOCATOR,
    SCRATCH_BUFFER_REQUEST,
    TFLITE_NODE,
    TFLITE_TENSOR,
    X86_64_PIP,
    Abi,
    Field,
    layout,
    recording_micro_allocator,
    subgraph_allocations,
)

_C_TYPES = {
    "ptr": "void*", "vptr": "void*", "size_t": "size_t", "int8": "signed char",
    "bool": "_Bool", "int16": "short", "uint16": "unsigned short", "int": "int",
    "float": "float", "enum": "enum small_enum", "int64": "long long", "double": "double",
}  # fmt: skip


def c_declaration(name: str, fields: tuple[Field, ...]) -> str:
    """The struct as C source, for the compiler to lay out."""
    body = " ".join(_c_member(f, k) for k, f in enumerate(fields))
    return f"struct {name} {{ {body} }};"


def _c_member(f: Field, k: int) -> str:
    if isinstance(f, str):
        return f"{_C_TYPES[f]} m{k};"
    if f[0] == "array":
        inner = _c_member(f[1], k)
        return inner[:-1] + f"[{f[2]}];"
    return "struct { " + " ".join(_c_member(g, j) for j, g in enumerate(f)) + f" }} m{k};"


def known_structs(abi: Abi) -> dict[str, tuple]:
    """Every struct layout the planner's model of TFLM uses for this ABI, by name."""
    structs: dict[str, tuple] = {
        "EvalTensor": EVAL_TENSOR,
        "TfLiteTensor": TFLITE_TENSOR,
        "NodeAndRegistration": NODE_AND_REGISTRATION,
        "TfLiteNode": TFLITE_NODE,
        "AffineQuantization": AFFINE_QUANTIZATION,
        "RecordingSingleArenaBufferAllocator": RECORDING_SINGLE_ARENA_ALLOCATOR,
        "GreedyMemoryPlanner": GREEDY_MEMORY_PLANNER,
        "RecordingMicroAllocator": recording_micro_allocator(abi),
        "MicroBuiltinDataAllocator": BUILTIN_DATA_ALLOCATOR,
        "SubgraphAllocations": subgraph_allocations(abi),
        "ScratchBufferRequest": SCRATCH_BUFFER_REQUEST,
        "AllocationInfo": ALLOCATION_INFO,
        "MicroResourceVariables": MICRO_RESOURCE_VARIABLES,
        "MicroResourceVariable": MICRO_RESOURCE_VARIABLE,
    }
    structs.update({f"OpData_{k}": v for k, v in op_data(abi).items()})
    structs.update({f"Params_{k}": v for k, v in BUILTIN_PARAMS.items()})
    return structs


COMPILERS = {
    "x86-64": (X86_64_PIP, ["gcc", "-c"]),
    "cortex-m": (CORTEX_M, ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-c"]),
}


@pytest.mark.parametrize("target", sorted(COMPILERS))
def test_struct_layout_matches_compiler(target: str, tmp_path) -> None:
    """Each struct's field list, laid out by structs.layout, has the sizeof and alignof the
    target's C compiler gives (for Cortex-M: arm-none-eabi-gcc, with its short enums)."""
    abi, command = COMPILERS[target]
    if shutil.which(command[0]) is None:
        pytest.skip(f"{command[0]} is not installed")
    structs = known_structs(abi)
    names = sorted(structs)
    source = ["#include <stddef.h>", "enum small_enum { SMALL_ENUM_LAST = 127 };"]
    source += [c_declaration(f"s{k}", structs[n]) for k, n in enumerate(names)]
    cells = ", ".join(f"sizeof(struct s{k}), _Alignof(struct s{k})" for k in range(len(names)))
    source.append(f"unsigned int layouts[] = {{ {cells} }};")
    (tmp_path / "layouts.c").write_text("\n".join(source) + "\n")
    objcopy = command[0].replace("gcc", "objcopy")
    subprocess.run([*command, "layouts.c", "-o", "layouts.o"], cwd=tmp_path, check=True)
    subprocess.run(
        [objcopy, "-O", "binary", "--only-section=.data", "layouts.o", "layouts.bin"],
        cwd=tmp_path,
        check=True,
    )
    raw = (tmp_path / "layouts.bin").read_bytes()
    values = struct.unpack(f"<{2 * len(names)}I", raw[: 8 * len(names)])
    compiled = {n: (values[2 * k], values[2 * k + 1]) for k, n in enumerate(names)}
    assert compiled == {n: layout(structs[n], abi) for n in names}
