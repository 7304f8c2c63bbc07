"""`python -m host.run`: see host/runtime/cli.py."""

from host.runtime.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
