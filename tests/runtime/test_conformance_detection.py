"""Conformance of TFLite_Detection_PostProcess (TFLM's SSD post-processing custom operator)
with the real TFLM: one-operator models whose options are a flexbuffer map, as the TFLite
converter writes them, run on the runtime's ASan+UBSan build and on TFLM with the same inputs.

Cases cover fast and regular non-max suppression, with and without a background class,
several max_detections / detections_per_class / max_classes_per_detection, a score threshold
that drops every box, IoU thresholds from almost-everything-suppressed to nothing-suppressed,
scores with many ties (orders decided by TFLM's tie-breaking), more boxes than TFLM's insertion
sort handles (its merge sort), box encodings wider than 4 values, NaN and infinite scores and
NaN encodings (the classes' order then depends on TFLM's sort algorithm), boxes of zero area
(TFLM and this runtime both fail the invocation) and the types and options the runtime refuses
at open.

Every value TFLM writes is compared bit for bit: all four outputs. Fast NMS leaves the output
entries it does not write as they were in TFLM (this runtime zeroes them), so for it the
positions TFLM writes are derived from its detection count and compared, and the rest must be
zero here.
"""

from __future__ import annotations

import numpy as np
import pytest
from flatbuffers import flexbuffers
from support.conformance import I8, Case, Result, run_cases
from support.detection_models import OP, detect

CASES = [
    detect("1 class", 20, 1, max_detections=5),
    detect("4 classes", 30, 4, score=0.2, iou=0.6),
    detect("3 classes no background", 25, 3, background=False, max_detections=8),
    detect("2 classes per detection", 25, 3, per_detection=2, max_detections=6),
    detect("3 classes per detection of 3", 12, 3, per_detection=5, max_detections=4),
    detect("ties", 40, 3, levels=4, score=0.0),
    detect("300 boxes (merge sort)", 300, 10, max_detections=25, score=0.5),
    detect("iou 1 (nothing suppressed)", 30, 2, iou=1.0, levels=3),
    detect("iou 0.01", 30, 2, iou=0.01),
    detect("encodings of 6 values", 16, 2, stride=6),
    detect("score threshold above every score", 20, 3, score=2.0),
    detect("NaN and infinite scores, 3 classes per detection", 30, 6, per_detection=3, special=0.3),
    detect("NaN and infinite scores", 40, 5, special=0.2, levels=4, invokes=4),
    detect("use_regular_nms absent", 20, 2, override={"use_regular_nms": None}),
    detect("regular 3 classes", 30, 3, regular=True, per_class=5, score=0.25),
    detect(
        "5 classes no background default per class",
        50,
        5,
        background=False,
        regular=True,
        max_detections=20,
    ),
    detect("ties", 40, 4, regular=True, max_detections=15, per_class=3, levels=5, score=0.0),
    detect("more detections than selected", 12, 2, regular=True, max_detections=30, score=0.8),
    detect("300 boxes (merge sort)", 300, 3, regular=True, max_detections=40, per_class=30),
    detect(
        "iou 1 (nothing suppressed)",
        30,
        2,
        regular=True,
        iou=1.0,
        levels=3,
        per_class=50,
        max_detections=40,
    ),
    detect("iou 0.05", 30, 3, regular=True, iou=0.05, per_class=10),
    detect("score threshold above every score", 20, 3, regular=True, score=2.0),
    detect("NaN and infinite scores", 30, 4, regular=True, per_class=4, special=0.2),
    detect("zero-area box", 10, 2, zero_height=3, refuse=("MA_ERR_KERNEL", [OP, "box 3"])),
    detect(
        "zero-area box", 10, 2, regular=True, zero_height=7, refuse=("MA_ERR_KERNEL", [OP, "box 7"])
    ),
    detect("int8 refused", 10, 2, dtype=I8, refuse=("MA_ERR_UNSUPPORTED", [OP, "INT8", "float32"])),
    detect(
        "iou 0 refused", 10, 2, iou=0.0, refuse=("MA_ERR_UNSUPPORTED", [OP, "nms_iou_threshold"])
    ),
    detect(
        "y_scale as a string refused",
        10,
        2,
        override={"y_scale": "ten"},
        refuse=("MA_ERR_MODEL", [OP, "y_scale is not a number"]),
    ),
    detect(
        "outputs too small refused",
        10,
        2,
        per_detection=2,
        outputs=10,
        refuse=("MA_ERR_MODEL", [OP, "TFLM writes up to 40"]),
    ),
    detect(
        "detections_per_class 0 refused",
        10,
        2,
        regular=True,
        per_class=0,
        refuse=("MA_ERR_UNSUPPORTED", [OP, "detections_per_class"]),
    ),
]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_cases(CASES, tmp_path_factory.mktemp("conformance_detection"))


def written(case: Case, count: int) -> np.ndarray:
    """Output positions TFLM writes for `count` detections (see the module doc)."""
    options = flexbuffers.Loads(case.custom_options)
    if options.get("use_regular_nms", False):
        return np.arange(options["max_detections"])
    k = min(options["max_classes_per_detection"], options["num_classes"])
    return np.array([k * w + w % k for w in range(count)], dtype=np.int64)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_operator_matches_tflm(results: dict, case: Case) -> None:
    r: Result = results[case.name]
    if case.refuse is not None:
        status, words = case.refuse
        assert r.status == status, f"{case}: expected {status}, got {r.status} {r.message!r}"
        missing = [w for w in words if w not in r.message]
        assert not missing, f"{case}: message {r.message!r} lacks {missing}"
        if status == "MA_ERR_KERNEL":  # a run-time failure: TFLM's invocation fails too
            assert r.tflm is None, f"{case}: TFLM ran what the runtime refused"
        return
    assert r.tflm is not None, f"{case}: TFLM cannot run the model: {r.tflm_error}"
    assert r.status is None and r.ours is not None, f"{case}: {r.status} {r.message}"
    counts = []
    for step in range(case.invokes):
        want, got = r.tflm[4 * step : 4 * step + 4], r.ours[4 * step : 4 * step + 4]
        what = f"{case} invocation {step}"
        assert got[3].tobytes() == want[3].tobytes(), f"{what}: {got[3]} detections, TFLM {want[3]}"
        count = int(want[3][0])
        counts.append(count)
        at = written(case, count)
        mask = np.zeros(case.outputs[1].shape[1], bool)
        mask[at] = True
        for j, name in enumerate(("boxes", "classes", "scores")):
            g = got[j].reshape(mask.size, -1)
            w = want[j].reshape(mask.size, -1)
            assert g[mask].tobytes() == w[mask].tobytes(), (
                f"{what}: {name} differ: got {g[mask].tolist()}, TFLM {w[mask].tolist()}"
            )
            assert not g[~mask].any(), f"{what}: {name} not written by TFLM are not zero"
    if "above every score" in case.name:
        assert counts == [0] * case.invokes
    else:
        assert min(counts) > 0, f"{case}: no detections, the case checks nothing"


@pytest.mark.parametrize("case", [c for c in CASES if c.refuse is None][::3], ids=str)
def test_scratch_is_what_the_planner_models(case: Case) -> None:
    """The kernel's one scratch request is the size host/planning/scratch.py gives for it (the
    planner's --runtime microarena), and a small part of what TFLM's kernel requests."""
    from support.conformance import single_op_model

    from host.planning.libraries.microarena import MICROARENA
    from host.planning.libraries.reference import REFERENCE
    from host.planning.scratch import scratch_requests
    from host.runtime.binding import kernel_requests
    from host.tflite.model import Model

    data = single_op_model(case)
    logged = [(r.subgraph, r.node, r.nbytes) for r in kernel_requests(data) if r.kind == 1]
    modelled = scratch_requests(Model(data), MICROARENA)
    assert logged == [(r.subgraph, r.op, r.bytes) for r in modelled]
    tflm = sum(r.bytes for r in scratch_requests(Model(data), REFERENCE))
    assert 2 * logged[0][2] < tflm
