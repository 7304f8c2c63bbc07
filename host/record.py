"""`python -m host.record`: see host/device/record.py."""

from host.device.record import main

if __name__ == "__main__":
    raise SystemExit(main())
