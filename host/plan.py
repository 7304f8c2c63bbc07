"""`python -m host.plan`: see host/planning/cli.py."""

from host.entry import run
from host.planning.cli import main

if __name__ == "__main__":
    raise SystemExit(run(main))
