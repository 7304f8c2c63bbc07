"""Without ../shared/models the suite skips, saying why, instead of failing.

Runs a representative subset (a parametrization over the corpus, a sanitized child process,
a command-line test, the slow corpus sweeps) in a child pytest with MICROARENA_SHARED_MODELS
(host/paths.py) naming a folder that does not exist. The whole suite was checked this way by
hand (`MICROARENA_SHARED_MODELS=/nowhere pytest`); this keeps the patterns that broke from
coming back.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from host.paths import REPO

SUBSET = [
    "tests/tflite/test_model_io.py",
    "tests/runtime/test_runtime_malformed.py::test_corpus_under_address_and_undefined_sanitizers",
    "tests/runtime/test_kernels.py::test_core_refuses_unsupported_models_clearly",
    "tests/runtime/test_kernels.py::test_every_operator_matches_tflm",
    "tests/planning/test_plot.py::test_every_shared_model_plots",
    "tests/runtime/test_runtime_cli.py",
]


def test_subset_skips_with_reasons_without_shared_models(tmp_path: Path) -> None:
    absent = tmp_path / "no-such-folder" / "models"
    # Its own temporary folder: a --basetemp given to the outer run (PYTEST_ADDOPTS) would be
    # emptied by the inner one, under the outer run's feet.
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["MICROARENA_SHARED_MODELS"] = str(absent)
    inner = ["-q", "-rs", "-p", "no:cacheprovider", f"--basetemp={tmp_path / 'inner'}"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *inner, *SUBSET],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    skips = re.findall(r"^SKIPPED \[\d+\] (.*)$", out, re.MULTILINE)
    assert skips, out[-2000:]
    unexplained = [s for s in skips if str(absent) not in s]
    assert not unexplained, f"skips that do not name the missing folder: {unexplained}"
