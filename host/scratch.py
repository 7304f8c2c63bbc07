"""`python -m host.scratch`: see host/planning/scratch.py."""

from host.entry import run
from host.planning.scratch import main

if __name__ == "__main__":
    raise SystemExit(run(main))
