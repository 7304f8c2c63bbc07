"""`python -m host.record`: see host/device/record.py."""

from host.device.record import main
from host.entry import run

if __name__ == "__main__":
    raise SystemExit(run(main))
