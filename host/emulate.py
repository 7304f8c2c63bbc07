"""`python -m host.emulate`: see host/device/emulate.py."""

from host.device.emulate import main
from host.entry import run

if __name__ == "__main__":
    raise SystemExit(run(main))
