"""How every command starts and ends: its parser (named as it was started, `microarena plan` or
`python -m host.plan`, with --version), Ctrl-C as a one-line message and status 130 (as a shell
reports it), and a closed pipe (`| head`) ending the command quietly."""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from host.paths import CHECKOUT, REPO

EXIT_INTERRUPTED = 130
CONSOLE_COMMAND = "microarena"  # pyproject.toml's [project.scripts]


def version() -> str:
    """The one version: pyproject.toml's in a checkout, else the installed package's metadata
    (which pip took from the same pyproject.toml)."""
    if CHECKOUT:
        found = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
        if found:
            return found.group(1)
    return importlib.metadata.version("microarena")


def prog(command: str) -> str:
    """How the user started `command`: through the console command or as a module."""
    started_as = os.path.basename(sys.argv[0]) if sys.argv else ""
    if os.path.splitext(started_as)[0] == CONSOLE_COMMAND:
        return f"{CONSOLE_COMMAND} {command}"
    return f"python -m host.{command}"


def parser(command: str, **kwargs: Any) -> argparse.ArgumentParser:
    """The argument parser of `command` (plan, run, ...), with --version."""
    p = argparse.ArgumentParser(prog=prog(command), **kwargs)
    p.add_argument(
        "--version",
        action="version",
        version=f"{CONSOLE_COMMAND} {version()}",
        help="print the version and exit",
    )
    return p


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
