"""Make PlatformIO work offline in this checkout (run by .ci/setup; safe to run again): its
.pio-core prepared by host/device/pio_core.py (a tool-scons stub, quiet settings, no platform
record left by another checkout location)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_DIR = ROOT / ".pio-core"
sys.path.insert(0, str(ROOT))

from host.device.pio_core import prepare  # noqa: E402


def main() -> int:
    try:
        import platformio  # noqa: F401
        import SCons  # noqa: F401
    except ImportError as exc:
        print(
            f"pio_setup: {exc.name} is not installed in {sys.executable}; "
            "install the 'boards' extra: pip install -e '.[boards]'",
            file=sys.stderr,
        )
        return 1
    core_dir = Path(os.environ.get("PLATFORMIO_CORE_DIR") or CORE_DIR).resolve()
    pkg, removed = prepare(core_dir, ROOT)
    print(f"pio_setup: tool-scons stub in {pkg}")
    for path in removed:
        print(f"pio_setup: removed stale platform record {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
