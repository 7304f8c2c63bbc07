"""`python -m host.demo`: see host/device/demo.py."""

from host.device.demo import main

if __name__ == "__main__":
    raise SystemExit(main())
