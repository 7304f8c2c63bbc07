"""`python -m host.scratch`: see host/planning/scratch_cli.py."""

from host.entry import run
from host.planning.scratch_cli import main

if __name__ == "__main__":
    raise SystemExit(run(main))
