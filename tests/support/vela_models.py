"""A model as Arm's Vela writes it for an Ethos-U NPU, small and built here (the real one,
tflm_person_detect_vela, is in ../shared/zoo)."""

from __future__ import annotations

from host.planning.model import metadata
from host.tflite.model import OFFLINE_PLAN_NAME, Model
from host.tflite.modelgen import Graph, assemble, scalar_options
from host.tflite.ops import BUILTIN_CODES

INT8, UINT8 = 9, 3


def vela_like(then_softmax: bool = False) -> bytes:
    """An Ethos-U model as Vela writes it: one `ethos-u` operator with a command stream, weights,
    two scratch tensors (nothing writes them) and the input, all placed at offset 0 by Vela's
    own plan; with then_softmax a SOFTMAX whose output Vela's plan also puts at 0, over its
    input: an overlap of a kernel this tool knows, which is unsafe."""
    g = Graph()
    out = g.tensor("out", (1, 64), INT8, [0.5], [0])
    cms = g.tensor("_split_1_command_stream", (8,), UINT8, [], [], bytes(range(8)))
    flash = g.tensor("_split_1_flash", (16,), UINT8, [], [], bytes(16))
    scratch = g.tensor("_split_1_scratch", (256,), UINT8, [], [])
    fast = g.tensor("_split_1_scratch_fast", (256,), UINT8, [], [])
    x = g.tensor("input", (1, 8, 8, 1), INT8, [0.5], [0])
    g.op("ethos-u", [cms, flash, scratch, fast, x], [out], 0, scalar_options({}, 1))
    outputs = [out]
    if then_softmax:
        sm = g.tensor("softmax", (1, 64), INT8, [1 / 256], [-128])
        g.op(BUILTIN_CODES["SOFTMAX"], [out], [sm], 0, scalar_options({}, 1))
        outputs = [sm]
    m = Model(assemble(g, [x], outputs))
    m.set_metadata(b"vela_version", b"3.11.0")
    offsets = [0 if not t.is_const else -1 for t in m.tensors]
    m.set_metadata(OFFLINE_PLAN_NAME, metadata.encode(offsets, 1))
    return m.to_bytes()
