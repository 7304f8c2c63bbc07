"""Public model-zoo models made by others for microcontrollers (../shared/zoo, sources in its
SOURCES.tsv) on the runtime's host build and its ASan + UBSan build, against the real TFLM.

Every model TFLM runs must run here with TFLM's outputs and every intermediate tensor over
three invocations (as test_converter_models.py compares them: a copy of the model whose
outputs include every operator's output, against TFLM's preserved tensors), and a total
arena no larger than TFLM's. A model TFLM refuses must be refused here too, naming the
operator. EXPECT says which is which, so a change in either direction fails.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest
from support.tflm_oracle import oracle, run_tflm
from test_converter_models import assert_all_match, run_ours, run_tflm_all

from host.paths import SHARED_ZOO
from host.runtime.binding import MA_ERR_UNSUPPORTED, Interpreter, MicroarenaError

# None: TFLM runs it and so must the runtime. Otherwise the operator both refuse.
EXPECT: dict[str, str | None] = {
    "armzoo_ds_cnn_s_int16": None,  # int16 depthwise, pooling, softmax; 4-aligned int64 biases
    "sscma_mnist": None,
    "st_aed_yamnet_256_int8": None,
    "st_har_ign_wl48_int8": None,
    "st_ic_mobilenet_v1_025_96_gray_int8": None,  # uint8 input and output
    "st_ic_resnet_v1_8_32_int8": None,
    "st_ic_st_mnist_v1_28_int8": None,
    "st_od_st_ssd_mobilenet_v1_025_192_int8": "TILE",  # the pip TFLM does not register it
    "st_od_st_yolo_lc_v1_192_int8": None,
    "tflm_keyword_scrambled_int16": None,
    "tflm_person_detect_vela": "CUSTOM:ethos-u",  # runs only on an Ethos-U NPU
    "tflm_seanet_transpose_conv0": None,
}
RUNS = sorted(name for name, op in EXPECT.items() if op is None)


def zoo_names() -> list[str]:
    path = SHARED_ZOO / "SOURCES.tsv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return [row["name"] for row in csv.DictReader(f, delimiter="\t")]


def zoo_model(name: str) -> bytes:
    path = SHARED_ZOO / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} is absent (the zoo models are read from ../shared/zoo)")
    return path.read_bytes()


def test_every_zoo_model_has_an_expectation() -> None:
    names = zoo_names()
    if not names:
        pytest.skip(f"{SHARED_ZOO}/SOURCES.tsv is absent (the zoo is read from ../shared/zoo)")
    assert set(names) == set(EXPECT), "EXPECT must name every model of ../shared/zoo"


@pytest.mark.parametrize("name", RUNS)
def test_runs_as_tflm_in_no_more_arena(name: str) -> None:
    data = zoo_model(name)
    assert_all_match(name, run_ours(data), run_tflm_all(data))
    ours, ref = Interpreter(data).stats(), run_tflm(data)
    assert ours.total <= ref.total, f"{name}: arena {ours.total} B, TFLM {ref.total} B"


@pytest.mark.parametrize("name", sorted(set(EXPECT) - set(RUNS)))
def test_refused_by_both_naming_the_operator(name: str) -> None:
    data = zoo_model(name)
    runtime = oracle()
    with pytest.raises(RuntimeError):
        runtime.Interpreter.from_bytes(data, arena_size=16 << 20)
    with pytest.raises(MicroarenaError) as e:
        Interpreter(data)
    assert e.value.status == MA_ERR_UNSUPPORTED, e.value.message
    assert f"unsupported operator {EXPECT[name]}" in e.value.message, e.value.message


def _child(out: str) -> int:
    """Run in a child process on the ASan + UBSan build: save every model's tensors."""
    results = {}
    for name in RUNS:
        path = SHARED_ZOO / f"{name}.tflite"
        for key, value in run_ours(path.read_bytes()).items():
            results[f"{name}/{key}"] = value
    np.savez(out, **results)
    return 0


def test_zoo_models_under_sanitizers_match_tflm(tmp_path: Path) -> None:
    from support.sanitize import child_tensors

    for name in RUNS:
        zoo_model(name)  # skip with the reason if the zoo is absent
    saved = child_tensors(__file__, tmp_path / "tensors.npz")
    for name in RUNS:
        assert_all_match(name, saved.get(name, {}), run_tflm_all(zoo_model(name)))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    sys.exit(_child(sys.argv[2]))
