"""Build the model-upload probe firmware (firmware/apps/probe/) for an emulated MPS2 or MPS3 board.

The probe is one image for any model: PlatformIO builds it as the `probe` application, with
every kernel, sharing the runtime's compiled objects with the model images of the same board.
"""

from __future__ import annotations

from pathlib import Path

from host.device.boards import BuildError, build_image

# Boards whose UART0 is a CMSDK UART the probe can receive on, and where the 1 MiB model buffer
# and 2 MiB arena fit in RAM.
PROBE_BOARDS = ("mps2-an385", "mps2-an386", "mps2-an500", "mps3-an547")


class ProbeBuildError(RuntimeError):
    pass


def build_probe(board: str) -> Path:
    """The probe image for `board` (built if missing or out of date)."""
    if board not in PROBE_BOARDS:
        raise ValueError(f"the probe runs on {', '.join(PROBE_BOARDS)}, not {board!r}")
    try:
        return build_image(board, app="probe")
    except BuildError as exc:
        raise ProbeBuildError(str(exc)) from exc
