"""host/planning/model/macs.py counts multiply-accumulates from shapes, whatever the types."""

from __future__ import annotations

import numpy as np
import pytest
from support.kernel_harness import F32, I8, I16, T, single_op_model

from host.planning.model.macs import all_macs
from host.tflite.model import Model


@pytest.mark.parametrize("dtype", [I8, I16, F32])
def test_fully_connected_macs_are_rows_times_weights(dtype: int) -> None:
    """3 rows of 5 values into 4 units: 3 x 4 x 5 MACs for int8, int16 and float outputs
    alike (an int16 output has twice the bytes of an int8 one, not twice the rows)."""
    q = {"scale": 0.5, "zp": 0} if dtype != F32 else {}
    weights = T((4, 5), I8 if dtype != F32 else F32, data=np.ones((4, 5)), **q)
    model = single_op_model(
        "FULLY_CONNECTED", [T((3, 5), dtype, **q), weights], [T((3, 4), dtype, **q)], None, {}
    )
    assert all_macs(Model(model)) == 3 * 4 * 5
