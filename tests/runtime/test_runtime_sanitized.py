"""Every shared model the runtime supports, run on the AddressSanitizer + UBSan build of the
runtime, gives the same outputs as the real TFLM on the same seeded inputs.

The sanitized library runs in a child process (libasan must be preloaded before Python), which
saves its outputs; the parent compares them with TFLM's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from host.runtime.binding import MA_ERR_UNSUPPORTED, Interpreter, MicroarenaError  # noqa: E402


def _child(out: str) -> int:
    from support.tflm_oracle import MODELS, random_inputs

    results: dict[str, np.ndarray] = {}
    for path in sorted(MODELS.glob("*.tflite")):
        try:
            it = Interpreter(path.read_bytes())
        except MicroarenaError as e:
            if e.status == MA_ERR_UNSUPPORTED:
                continue
            raise
        for i, x in enumerate(random_inputs(it, it.num_inputs(), 0)):
            it.set_input(i, x)
        it.invoke()
        for i in range(it.num_outputs()):
            results[f"{path.stem}:{i}"] = it.get_output(i)
    np.savez(out, **results)
    print(f"ran {len({k.split(':')[0] for k in results})} models")
    return 0


def test_models_under_sanitizers_match_tflm(tmp_path: Path) -> None:
    import pytest
    from support.tflm_oracle import MODELS, run_tflm

    if not MODELS.exists():
        pytest.skip(f"{MODELS} is absent (tests read ../shared/models)")
    from support.sanitize import sanitized_env

    env = sanitized_env()
    out = tmp_path / "outputs.npz"
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    ours = dict(np.load(out))
    names = sorted({k.split(":")[0] for k in ours})
    assert len(names) >= 20, f"only {names} ran under the sanitizers"
    for name in names:
        ref = run_tflm((MODELS / f"{name}.tflite").read_bytes(), seed=0).outputs
        for i, b in enumerate(ref):
            a = ours[f"{name}:{i}"]
            if a.dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"{name} out {i}")
            else:
                np.testing.assert_array_equal(a, b, err_msg=f"{name} output {i}")


if __name__ == "__main__" and "--child" in sys.argv:
    sys.exit(_child(sys.argv[sys.argv.index("--child") + 1]))
