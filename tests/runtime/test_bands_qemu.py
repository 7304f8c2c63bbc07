"""A banded model (host.plan --bands --runtime microarena) on the Cortex-M4F build under QEMU:
the board accepts each band placed inside the joined tensor, reports the predicted head, and
its outputs equal the host build's, whose outputs equal the original model's on the pip TFLM
(tests/planning/test_bands.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from support.tflm_oracle import MOBILENET_V2, MOBILENET_V2_BANDS, shared_model
from test_runtime_qemu import _check_on_qemu, _pattern, arm_library  # noqa: F401 (fixture)

from host.planning import bands, offline_plan
from host.planning.plan import PlanResult, plan_model
from host.rewrite import bands as rw
from host.runtime.binding import Interpreter
from host.tflite.model import Model


def test_banded_person_detect_on_qemu(arm_library: Path, tmp_path: Path) -> None:  # noqa: F811
    original = Model.load(shared_model("tflm_person_detect_int8"))
    banding = bands.apply(original, 0.1, "microarena", True)
    assert banding.chosen is not None
    result = plan_model(
        banding.model, time_limit=1.5, kernels="microarena", overlap=True, **banding.placement
    )
    _as_original_on_qemu(original, banding.model, result, arm_library, tmp_path)


def test_banded_mobilenet_v2_on_qemu(arm_library: Path, tmp_path: Path) -> None:  # noqa: F811
    """The converter-made MobileNetV2 with the split host.plan --bands --overlap chooses for
    TFLM (tests/planning/test_bands_mobilenet_v2.py), planned for this runtime."""
    original = Model.load(MOBILENET_V2)
    cut, count = MOBILENET_V2_BANDS
    t = rw.find_stage(original, cut).t_tensor
    bounds = bands.aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], count)
    assert bounds is not None
    banded, result = bands.plan_banded(original, cut, bounds, "microarena", True, 1.5)
    _as_original_on_qemu(original, banded, result, arm_library, tmp_path)


def _as_original_on_qemu(
    original: Model, banded: Model, result: PlanResult, library: Path, tmp_path: Path
) -> None:
    """The banded model, with its plan embedded, on QEMU: the board's outputs equal the host
    build's (_check_on_qemu) and the original model's."""
    offline_plan.embed(banded, result.tensor_offsets())
    path = tmp_path / "banded.tflite"
    path.write_bytes(banded.to_bytes())
    board_host = _check_on_qemu(path, library, tmp_path)
    plain = Interpreter(original.to_bytes())
    d = plain.input_details(0)
    plain.set_input(0, _pattern(d.shape, d.dtype))
    plain.invoke()
    np.testing.assert_array_equal(board_host.get_output(0), plain.get_output(0))
