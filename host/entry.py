"""How every `python -m host....` command starts and ends: Ctrl-C is a one-line message and
status 130 (as a shell reports it), and a closed pipe (`| head`) ends the command quietly."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

EXIT_INTERRUPTED = 130


def run(main: Callable[[], int]) -> int:
    try:
        return main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Python would complain again when it flushes stdout at exit: point it at nothing.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
