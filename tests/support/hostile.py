"""Hostile inputs for the command-line tools: mutated models, and a command run in a child
process with bounded memory and time, as a user's shell would run it (issue 18)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from host.tflite import schema as S
from host.tflite.flatbuf import set_child
from host.tflite.model import Model

REPO = Path(__file__).resolve().parents[2]
MEMORY = 2 << 30  # address space of a command: 2 GiB is far above what any of them needs here
TIMEOUT = 60  # seconds: each command takes a few; a hang is the failure being looked for


def with_shape(data: bytes, tensor: int, shape: Sequence[int]) -> bytes:
    """The model with tensor `tensor` of subgraph 0 given another shape (nothing else changed)."""
    m = Model(data)
    tensors = m.root.get(S.MODEL_SUBGRAPHS)[0].get(S.SUBGRAPH_TENSORS)
    set_child(tensors[tensor], S.TENSOR_SHAPE, struct.pack(f"<{len(shape)}i", *shape))
    return m.to_bytes()


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_bounded(
    module: str, *args: str, stdin: int | None = subprocess.DEVNULL, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """`python -m module args` with MEMORY of address space (Linux) and `timeout` seconds; the
    caller asserts on its status and messages. Raises TimeoutExpired if it hangs."""
    limit = _limit_memory if sys.platform.startswith("linux") else None
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        errors="replace",
        stdin=stdin,
        timeout=timeout,
        preexec_fn=limit,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},  # one thread: less address space
    )


def clean_refusal(r: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit status 2 with a one-line message holding `words`, no traceback."""
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2, (r.returncode, r.stderr)
    for w in words:
        assert w in r.stderr, r.stderr
