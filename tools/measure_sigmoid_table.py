"""Measure TFLM's int16 sigmoid/tanh look-up table from the real interpreter.

TFLM's int16 LOGISTIC and TANH (used inside its integer LSTM) interpolate a 256-entry table
of sigmoid(i / 24) in Q0.16 whose values no simple rounding formula reproduces. To stay
bit-exact without copying TFLM's sources, this script measures the table: a one-operator
int16 TANH model with input scale 1/6144 makes TFLM's kernel see 2x, so input x = 128 i
lands exactly on entry i (no interpolation) and the output is table[i] - 32768. The last
entry, reached only through interpolation, is solved from a point between entries 254, 255.

    .venv/bin/python tools/measure_sigmoid_table.py > \
        firmware/src/kernels/sigmoid_table.c
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def measure() -> list[int]:
    """The 256 table entries, from the pip tflite-micro interpreter."""
    sys.path[:0] = [str(REPO), str(REPO / "tests")]
    from support.kernel_harness import I16, T, single_op_model
    from tflite_micro.python.tflite_micro import runtime

    model = single_op_model("TANH", [T((1, 257), I16, 1 / 6144, 0)],
                            [T((1, 257), I16, 1 / 32768, 0)], None, {})  # fmt: skip
    it = runtime.Interpreter.from_bytes(model, arena_size=1 << 16)
    x = np.zeros((1, 257), np.int16)
    x[0, :256] = np.arange(256) * 128
    x[0, 256] = 254 * 128 + 127  # entry 254 plus 254/256 of the step to entry 255
    it.set_input(x, 0)
    it.invoke()
    y = np.asarray(it.get_output(0), np.int64)[0]
    table = [int(v) + 32768 for v in y[:255]]
    # out = (t254 * 256 + 254 * (t255 - t254) - 2^23 + 128) >> 8: solve for t255.
    for step in range(0, 256):
        if (table[254] * 256 + 254 * step - (1 << 23) + 128) >> 8 == y[256]:
            table.append(table[254] + step)
            break
    else:
        raise RuntimeError("could not solve the last table entry")
    return table


def c_source(table: list[int]) -> str:
    rows = [", ".join(str(v) for v in table[i : i + 12]) for i in range(0, 256, 12)]
    body = ",\n    ".join(rows)
    return (
        "/* sigmoid(i / 24) in Q0.16 as TFLM's int16 LOGISTIC/TANH interpolate it; measured\n"
        " * from the real interpreter by tools/measure_sigmoid_table.py (do not edit). */\n"
        '#include "kernel_util.h"\n\n'
        f"const uint16_t mak_sigmoid_table[256] = {{\n    {body}}};\n"
    )


if __name__ == "__main__":
    sys.stdout.write(c_source(measure()))
