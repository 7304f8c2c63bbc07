"""libFuzzer on the runtime's model loader and interpreter, for a bounded time.

Builds firmware/fuzz/fuzz_model with clang (-fsanitize=fuzzer,address; UBSan on the core)
and fuzzes it from the small shared models for MICROARENA_FUZZ_SECONDS (default 30) seconds.
Any crash, sanitizer report, leak of an error without a message, or timeout fails the test
and leaves the reproducer in the test's temporary directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from host.paths import SHARED_MODELS

REPO = Path(__file__).resolve().parents[2]
MODELS = SHARED_MODELS
SEED_MAX_BYTES = 32 << 10


def _generated_seeds() -> dict[str, bytes]:
    """One-operator models of what no shared model has: TFLite_Detection_PostProcess,
    RELU_N1_TO_1; and call graphs (issue 18: a subgraph called twice, fan-out, variables)."""
    from support.callgraph_models import fanout_model
    from support.conformance import Case, f32, q8, single_op_model
    from support.detection_models import detect
    from support.subgraph_models import shared_branch_model, variable_state_model

    cases = [detect("seed", 8, 2), detect("seed", 8, 3, regular=True, per_class=2)]
    cases += [
        Case("relu_n1_to_1 int8", "RELU_N1_TO_1", [q8((2, 8), 0.02, -5)], [q8((2, 8), 0.015, 3)]),
        Case("relu_n1_to_1 float", "RELU_N1_TO_1", [f32((2, 8))], [f32((2, 8))]),
    ]
    seeds = {str(c).replace(" ", "_"): single_op_model(c) for c in cases}
    seeds["shared_branch"] = shared_branch_model()
    seeds["fanout"] = fanout_model([2, 3, 2])
    seeds["variable_state"] = variable_state_model()[0]
    return seeds


def test_fuzz_model_loader(tmp_path: Path) -> None:
    if shutil.which("clang") is None:
        pytest.skip("clang is not installed (libFuzzer needs clang)")
    build = subprocess.run(
        ["make", "-s", "-C", str(REPO / "firmware"), "fuzz", f"BUILD={REPO / 'build'}"],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0 and "fuzzer" in build.stderr and "cannot find" in build.stderr:
        pytest.skip(f"clang has no libFuzzer runtime: {build.stderr.strip()[-300:]}")
    assert build.returncode == 0, build.stdout + build.stderr
    seeds = sorted(p for p in MODELS.glob("*.tflite") if p.stat().st_size <= SEED_MAX_BYTES)
    if not seeds:
        pytest.skip(f"no shared models under {MODELS} to seed the fuzzer")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for p in seeds:
        shutil.copy(p, corpus / p.name)
    for name, data in _generated_seeds().items():
        (corpus / f"{name}.tflite").write_bytes(data)
    seconds = int(os.environ.get("MICROARENA_FUZZ_SECONDS", "30"))
    proc = subprocess.run(
        [
            str(REPO / "build" / "fuzz" / "fuzz_model"),
            f"-max_total_time={seconds}",
            f"-max_len={SEED_MAX_BYTES}",
            "-timeout=20",
            "-rss_limit_mb=2048",
            f"-artifact_prefix={tmp_path}/",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 120,
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "Done" in proc.stderr
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*"))
