"""`python -m host.demo`: see host/device/demo.py."""

from host.device.demo import main
from host.entry import run

if __name__ == "__main__":
    raise SystemExit(run(main))
