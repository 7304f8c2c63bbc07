"""`python -m host.run`: see host/runtime/cli.py."""

from host.entry import run
from host.runtime.cli import main

if __name__ == "__main__":
    raise SystemExit(run(main))
