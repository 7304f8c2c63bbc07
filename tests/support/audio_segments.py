"""TFLM's audio preprocessor cut into its two Signal* segments (Window .. Energy and
FilterBank .. FilterBankLog), each a model of its own whose subgraph outputs are every tensor
the segment computes, so runtimes can be compared on the Signal custom operators alone."""

from __future__ import annotations

import struct

from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import Model

MODEL = "tflm_audio_preprocessor_int8"
# name -> (segment inputs, tensors computed, operators) in the audio preprocessor.
SEGMENTS = {
    "spectrum": ([0], [19, 20, 21, 22, 23, 24], [0, 1, 2, 3, 4]),
    # FftAutoScale again, so that the square root's shift comes from it, not from an input.
    "filter_bank": ([28, 20], [21, 22, 29, 30, 31, 32, 33, 34], [2, 9, 10, 11, 12, 13]),
}
ENERGY_OUT = 24  # SignalEnergy writes bins [start_index, end_index) only (as TFLM)
ENERGY_BINS = slice(5, 241)


def cut(data: bytes, inputs: list[int], outputs: list[int], ops: list[int]) -> bytes:
    """Subgraph 0 reduced to `ops`, with the given inputs and outputs."""
    m = Model(data)
    sg = m.root.get(S.MODEL_SUBGRAPHS)[0]
    every = sg.get(S.SUBGRAPH_OPERATORS)
    set_child(sg, S.SUBGRAPH_INPUTS, struct.pack(f"<{len(inputs)}i", *inputs))
    set_child(sg, S.SUBGRAPH_OUTPUTS, struct.pack(f"<{len(outputs)}i", *outputs))
    set_child(sg, S.SUBGRAPH_OPERATORS, [every[i] for i in ops])
    return m.to_bytes()
