"""What the pip TFLM says loading and invoking each of many models, run in child processes:
a failed check in TFLM's Prepare aborts the process, so the next child goes on after the model
that stopped one. Used by tests/planning/tflm/test_prepare.py and tools/sweep_prepare.py."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STOPPED = "stopped (a failed check ended the process)"
HUNG = "no answer (TFLM ran the model past the time limit)"
# Loads and invokes models start..count-1 of a folder, printing [index, what TFLM said].
CHILD = """
import json, sys
from pathlib import Path
sys.path[:0] = ["tests", "."]
from support.tflm_oracle import capture_output, oracle
runtime = oracle()
folder, start, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for i in range(start, count):
    data = (folder / f"{i}.tflite").read_bytes()
    said = []
    def load():
        try:
            it = runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
        except Exception as e:
            said.append(str(e))
            return
        try:
            it.invoke()
        except Exception as e:
            said.append("invoke: " + str(e))
    said.append(capture_output(load))
    print(json.dumps([i, " ".join(said).strip()]), flush=True)
"""


def tflm_verdicts(models: list[bytes], timeout: float = 300) -> list[str]:
    """Per model: what TFLM printed or raised ("" when it ran), STOPPED, or HUNG when one child
    took over `timeout` seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        for i, data in enumerate(models):
            (Path(tmp) / f"{i}.tflite").write_bytes(data)
        said: dict[int, str] = {}
        while len(said) < len(models):
            start = len(said)
            try:
                proc = subprocess.run(
                    [sys.executable, "-c", CHILD, tmp, str(start), str(len(models))],
                    capture_output=True, text=True, cwd=REPO, check=False, timeout=timeout,
                )  # fmt: skip
                out, ended, why = proc.stdout, proc.returncode != 0, STOPPED
            except subprocess.TimeoutExpired as e:
                out, ended, why = (e.stdout or b"").decode(), True, HUNG
            for line in out.splitlines():
                i, text = json.loads(line)
                said[i] = text
            if len(said) < len(models) and (len(said) == start or ended):
                said[len(said)] = why
    return [said[i] for i in range(len(models))]
