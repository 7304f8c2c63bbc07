"""`python -m host.emulate`: see host/device/emulate.py."""

from host.device.emulate import main

if __name__ == "__main__":
    raise SystemExit(main())
