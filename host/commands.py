"""`microarena COMMAND ...`: each `python -m host.COMMAND` under one console command, with the
same options (the same main function runs)."""

from __future__ import annotations

import importlib
import sys

from host import entry

# command -> (module whose main() it runs, what it does in one line)
COMMANDS = {
    "plan": ("host.planning.cli", "plan a model's arena offline, embed the plan, check it fits"),
    "run": ("host.runtime.cli", "run a model on the microarena C runtime here, with its report"),
    "record": ("host.device.record", "build for a board, run it and record its arena report"),
    "emulate": ("host.device.emulate", "run a firmware image on an emulated board (QEMU)"),
    "demo": ("host.device.demo", "the main job end to end on the demo model, on QEMU"),
    "scratch": ("host.planning.scratch_cli", "list the scratch buffers a model's kernels request"),
    "modelgen": ("host.tflite.modelgen", "write microarena's own int8 demo model"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {line}" for name, (_, line) in COMMANDS.items()]
    return (
        f"usage: {entry.CONSOLE_COMMAND} COMMAND [options]   ({entry.CONSOLE_COMMAND} COMMAND "
        "--help for its options)\n\ncommands:\n" + "\n".join(lines) + "\n\n"
        "Each is also `python -m host.COMMAND`. --version prints the version."
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print(usage(), file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help"):
        print(usage())
        return 0
    if args[0] == "--version":
        print(f"{entry.CONSOLE_COMMAND} {entry.version()}")
        return 0
    if args[0] not in COMMANDS:
        print(f"{usage()}\n\nerror: unknown command {args[0]!r}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[args[0]][0])
    return entry.run(lambda: module.main(args[1:]))
