"""A banded model (host.plan --bands --runtime microarena) on the Cortex-M4F build under QEMU:
the board accepts each band placed inside the joined tensor, reports the predicted head, and
its outputs equal the host build's, whose outputs equal the original model's on the pip TFLM
(tests/planning/test_bands.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import band_fuzz as bf
from support.tflm_oracle import MOBILENET_V2, MOBILENET_V2_BANDS, shared_model
from test_runtime_qemu import _check_on_qemu, _pattern, arm_library  # noqa: F401 (fixture)

from host.planning import band_choice
from host.planning.libraries.microarena import MICROARENA
from host.planning.model import metadata
from host.planning.plan import PlanResult, plan_model
from host.rewrite import bands as rw
from host.runtime.binding import Interpreter
from host.tflite.model import Model


def test_banded_person_detect_on_qemu(arm_library: Path, tmp_path: Path) -> None:  # noqa: F811
    original = Model.load(shared_model("tflm_person_detect_int8"))
    banding = band_choice.apply(original, 0.1, MICROARENA, True)
    assert banding.chosen is not None
    result = plan_model(
        banding.model, time_limit=1.5, lib=MICROARENA, overlap=True, **banding.placement
    )
    _as_original_on_qemu(original, banding.model, result, arm_library, tmp_path)


def test_banded_mobilenet_v2_on_qemu(arm_library: Path, tmp_path: Path) -> None:  # noqa: F811
    """The converter-made MobileNetV2 with the split host.plan --bands --overlap chooses for
    TFLM (tests/planning/test_bands_mobilenet_v2.py), planned for this runtime."""
    original = Model.load(MOBILENET_V2)
    cut, count = MOBILENET_V2_BANDS
    t = rw.find_stage(original, cut).t_tensor
    bounds = band_choice.aligned_bounds(t.shape[1], t.nbytes() // t.shape[1], count)
    assert bounds is not None
    banded, result = band_choice.plan_banded(original, cut, bounds, MICROARENA, True, 1.5)
    _as_original_on_qemu(original, banded, result, arm_library, tmp_path)


@pytest.mark.parametrize("seed", [39, 37, 4])
def test_band_fuzz_stages_on_qemu(seed: int, arm_library: Path, tmp_path: Path) -> None:  # noqa: F811
    """A few of the band fuzzer's stages (support/band_fuzz.py: seeds 39 (float) and 37 (int8)
    hold a SAME max pool whose bands pad with the type's minimum, seed 4 a PAD whose bottom rows
    a band would have read alone), banded into 3 bands at their last cut, with T as an extra
    output: the board's outputs and T equal the host build's, and those the original's."""
    data, _ = bf.random_stage(seed)
    original = Model(data)
    cut = band_choice.cuts(original)[-1]
    stage = rw.find_stage(original, cut)
    height = stage.t_tensor.shape[1]
    bounds = rw.merge_empty(stage, [round(i * height / 3) for i in range(4)])
    assert len(bounds) >= 3, bounds
    banded, _ = rw.rewrite(original, cut, bounds)
    result = plan_model(Model(bf.with_output(banded.to_bytes(), stage.t)), time_limit=0.3,
                        lib=MICROARENA)  # fmt: skip
    with_t = Model(bf.with_output(banded.to_bytes(), stage.t))
    _as_original_on_qemu(Model(bf.with_output(data, stage.t)), with_t, result, arm_library,
                         tmp_path)  # fmt: skip


def _as_original_on_qemu(
    original: Model, banded: Model, result: PlanResult, library: Path, tmp_path: Path
) -> None:
    """The banded model, with its plan embedded, on QEMU: the board's outputs equal the host
    build's (_check_on_qemu) and the original model's."""
    metadata.embed(banded, result.tensor_offsets())
    path = tmp_path / "banded.tflite"
    path.write_bytes(banded.to_bytes())
    board_host = _check_on_qemu(path, library, tmp_path)
    plain = Interpreter(original.to_bytes())
    d = plain.input_details(0)
    plain.set_input(0, _pattern(d.shape, d.dtype))
    plain.invoke()
    for i in range(plain.num_outputs()):
        np.testing.assert_array_equal(board_host.get_output(i), plain.get_output(i))
