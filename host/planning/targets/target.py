"""The arena to configure for a model on one target: head, tail by category, minimum arena.

Targets:
- tflm-x86_64: the pip `tflite-micro` interpreter (64-bit pointers; checked to the byte by
  tests/planning/targets/test_tflm.py on every runnable shared model and the converter-made models);
- tflm-cortex-m: TFLM on a 32-bit Cortex-M (4-byte pointers, arm-none-eabi-gcc's 1-byte enums,
  no compression), derived from the same replay, with the reference or CMSIS-NN kernels
  (checked against TFLM + CMSIS-NN measured on QEMU boards);
- microarena-cortex-m / microarena-host: this project's runtime (host/runtime/arena.py), whose
  figures differ between host and board by the pointer size of its per-tensor and per-operator
  records, and from TFLM's by keeping one data pointer per tensor instead of TFLM's structs.
"""

from __future__ import annotations

from host.planning.libraries.base import KernelLibrary, KernelsError
from host.planning.libraries.cmsis_nn import DEFAULT_CPU, CmsisNN
from host.planning.libraries.microarena import MICROARENA
from host.planning.libraries.reference import REFERENCE
from host.planning.scratch import unknown_scratch_ops
from host.planning.targets.result import TargetArena
from host.planning.targets.tflm import UNCATEGORIZED, predict
from host.planning.tflm import structs
from host.planning.tflm.categories import CATEGORIES, Category
from host.planning.tflm.refusal import tflm_refusal
from host.runtime import arena
from host.tflite.model import Model

TARGETS = ("tflm-cortex-m", "tflm-x86_64", "microarena-cortex-m", "microarena-host")
DEFAULT_TARGET = "tflm-cortex-m"
TFLM_ABIS = {"tflm-x86_64": structs.X86_64_PIP, "tflm-cortex-m": structs.CORTEX_M}
MICROARENA_ABIS = {"microarena-cortex-m": "cortex-m", "microarena-host": "host"}
UNITS = dict(CATEGORIES)  # category name -> the word its report line counts in
# The kernels each target runs unless told otherwise. On a Cortex-M almost every TFLM build
# uses CMSIS-NN (the Arduino, Zephyr and vendor ports ship it; the reference kernels are 15-28x
# slower there), and the Cortex-M4's DSP path is also the M7's and M33's. The pip interpreter
# has the reference kernels only; this project's runtime its own.
DEFAULT_KERNELS: dict[str, KernelLibrary] = {
    "tflm-cortex-m": CmsisNN(DEFAULT_CPU),
    "tflm-x86_64": REFERENCE,
    "microarena-cortex-m": MICROARENA,
    "microarena-host": MICROARENA,
}


def target_kernels(target: str, lib: KernelLibrary | None = None) -> KernelLibrary:
    """The kernel library the target runs: `lib` if given (checked to run there), else the
    target's default; KernelsError says why a library cannot run on the target."""
    lib = lib or DEFAULT_KERNELS[target]
    runtime = "microarena" if target in MICROARENA_ABIS else "tflm"
    if lib.runtime != runtime:
        raise KernelsError(
            f"{target} runs {'this project' if runtime == 'microarena' else 'TFLM'}'s "
            f"interpreter, which cannot run the {lib.title}"
        )
    if target == "tflm-x86_64" and lib.name != "reference":
        raise KernelsError(
            f"tflm-x86_64 is the pip tflite-micro interpreter: it has TFLM's reference kernels "
            f"only, not the {lib.title} (use --target tflm-cortex-m)"
        )
    return lib


def target_arena(model: Model, target: str, lib: KernelLibrary | None = None) -> TargetArena:
    """Head, tail and minimum arena of the model (with any embedded plan) on the target, run
    with `lib` (default: the target's own, DEFAULT_KERNELS)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose from {', '.join(TARGETS)}")
    lib = target_kernels(target, lib)
    if target in TFLM_ABIS:
        return _tflm(model, target, lib)
    return _microarena(model, target)


def _tflm(model: Model, target: str, lib: KernelLibrary) -> TargetArena:
    abi = TFLM_ABIS[target]
    p = predict(model, abi, lib=lib)
    refused = tflm_refusal(model)
    no_scratch = unknown_scratch_ops(model, lib)
    known = not p.unknown and not no_scratch and refused is None
    head_exact = known and not (abi.pointer != 8 and _has(model, "ADD_N"))
    notes = [
        f"kernels: {lib.label}"
        + (
            ""
            if lib.name != "reference" or target != "tflm-cortex-m"
            else "; a build with CMSIS-NN allocates differently: --kernels cmsis-nn --cpu ..."
        ),  # fmt: skip
        f"minimum arena: one byte less runs out during {p.limited_by}",
        "for a 16-byte aligned arena (alignas(16)); an unaligned one needs up to 15 bytes more",
    ]
    if refused:
        notes.append(f"TFLM refuses this model ({refused.names()}): the figures are not exact")
    if p.unknown:
        missing = ", ".join(p.unknown)
        notes.append(f"kernels not modelled (their allocations are missing): {missing}")
    if no_scratch:
        notes.append(
            f"scratch of {', '.join(no_scratch)} not modelled: the head may be short, and the "
            "tail (TFLM keeps a handle per scratch request)"
        )
    if not head_exact and known:
        notes.append("ADD_N's scratch holds pointers: its size is the x86-64 one here")
    if target == "tflm-x86_64":
        notes.append("the pip tflite-micro interpreter (its arena is malloc'ed: 16-byte aligned)")
    if lib.name == "reference":  # the same kernels on the other ABI
        other_abi = structs.CORTEX_M if target == "tflm-x86_64" else structs.X86_64_PIP
        other = predict(model, other_abi)
        where = (
            "on a 32-bit Cortex-M (4-byte pointers, 1-byte enums, no compression)"
            if target == "tflm-x86_64"
            else "in the pip interpreter on x86-64 (8-byte pointers, compression build)"
        )
        notes.append(
            f"{where} the same model needs tail {other.tail}, arena {other.min_arena}: TFLM's "
            "persistent structs hold pointers"
        )
    return TargetArena(
        target=target,
        head=p.head,
        tail=p.tail,
        min_arena=p.min_arena,
        min_arena_tail=p.min_arena_tail,
        categories=[
            Category(name, r.used, r.requested, r.count, unit)
            for name, unit in CATEGORIES
            if (r := p.categories.get(name)) and (r.used or r.requested)
        ],
        other={k: p.categories[k].used for k in UNCATEGORIZED if k in p.categories},
        operators=p.operators,
        library=lib.name,
        cpu=lib.cpu,
        exact={"head": head_exact, "tail": known, "min_arena": head_exact and p.exact},
        notes=notes,
    )


def _microarena(model: Model, target: str) -> TargetArena:
    abi = MICROARENA_ABIS[target]
    p = arena.predict(model.to_bytes(), abi)
    categories = p["categories"]
    assert isinstance(categories, dict)
    other = "host" if abi == "cortex-m" else "cortex-m"
    q = arena.predict(model.to_bytes(), other)
    return TargetArena(
        target=target,
        head=int(p["head"]),  # type: ignore[call-overload]
        tail=int(p["tail"]),  # type: ignore[call-overload]
        min_arena=int(p["required"]),  # type: ignore[call-overload]
        categories=[Category(n, *v, UNITS[n]) for n, v in categories.items()],
        library="microarena",
        exact={"head": True, "tail": True, "min_arena": True},
        notes=[
            f"this project's runtime, {abi} ABI ({arena.ABIS[abi].ptr}-byte pointers); on "
            f"{other} ({arena.ABIS[other].ptr}-byte pointers) the same model needs tail "
            f"{q['tail']}, arena {q['required']}: its per-tensor and per-operator records hold "
            "pointers"
        ],
    )


def _has(model: Model, op_name: str) -> bool:
    return any(op.name == op_name for sg in model.subgraphs for op in sg.operators)
