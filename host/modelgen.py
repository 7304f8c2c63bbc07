"""`python -m host.modelgen`: see host/tflite/modelgen.py."""

from host.entry import run
from host.tflite.modelgen import main

if __name__ == "__main__":
    raise SystemExit(run(main))
