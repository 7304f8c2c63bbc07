"""Every command, every option, with good and bad values: one table, run in-process.

A bad value must end in a one-line error on stderr and a non-zero exit status, never a
traceback; a good one exits 0. `--help` explains each command. Each option of each command
appears in the table at least once (test_every_option_is_in_the_table), so a new option comes
with its cases. Paths that would build firmware or start QEMU are exercised only where they
fail before any build (a bad argument, a model the runtime refuses).

Placeholders in arguments ({demo}, {tmp}, ...) are files made once per session by `files`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import io
import re
import runpy
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from host import commands
from host.device import demo, emulate, record, wire
from host.entry import version
from host.planning import cli as plan_cli
from host.planning import scratch_cli
from host.planning.tflm.categories import Category
from host.runtime import cli as run_cli
from host.runtime.binding import Interpreter
from host.tflite import modelgen
from host.tflite.ops import BUILTIN_CODES

ROOT = Path(__file__).resolve().parents[1]

COMMANDS: dict[str, Callable[[list[str] | None], int]] = {
    "host.plan": plan_cli.main,
    "host.run": run_cli.main,
    "host.record": record.main,
    "host.emulate": emulate.main,
    "host.demo": demo.main,
    "host.scratch": scratch_cli.main,
    "host.modelgen": modelgen.main,
}


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    code: int  # expected exit status; -1: any non-zero
    says: str  # on stdout when it succeeds, in the error line when it fails


def ok(*args: str, says: str = "") -> Case:
    return Case(args, 0, says)


def bad(*args: str, says: str, code: int = 2) -> Case:
    return Case(args, code, says)


MISSING = "No such file or directory"
CASES: dict[str, list[Case]] = {
    "host.plan": [
        ok("--version", says=f"microarena {version()}"),
        ok("--help", says="OfflineMemoryAllocation"),
        ok("{demo}", says="arena head"),
        ok("{demo}", "--json", "--quiet", says='"head"'),
        ok("{copy}", "--embed", "-q", says="plan embedded in"),
        ok("{planned}", "--replace-plan", "-o", "{tmp}/r.tflite", "-q", says="plan embedded in"),
        bad("--check", "{planned}", "--replace-plan", says="--replace-plan means nothing with"),
        ok("{demo}", "--header", "{tmp}/m.h", "--header-name", "kws", "-q", says="KWS_ARENA_SIZE"),
        bad("{demo}", "--header", "", says="--header: an empty path"),
        bad("{demo}", "--header", "{tmp}/no/m.h", says=f"{MISSING}: '{{tmp}}/no/m.h"),
        bad("{demo}", "--header", "{tmp}/m.h", "--header-name", "9x", says="not a C identifier"),
        bad("{demo}", "--header-name", "g", says="--header-name means nothing without --header"),
        bad("--check", "{planned}", "--header", "{tmp}/m.h", says="--header means nothing with"),
        ok("{demo}", "-o", "{tmp}/out.tflite", "-q", says="plan embedded in"),  # -o: a copy
        bad("{demo}", "-o", "{tmp}/missing/out.tflite", says=f"{MISSING}: '{{tmp}}/missing/out"),
        bad("{demo}", "--output", "{tmp}", says="Is a directory: '{tmp}'"),
        ok("--check", "{planned}", says="offline plan OK"),
        bad("--check", "{demo}", says="no OfflineMemoryAllocation metadata"),
        bad("--check", "{planned}", "--embed", says="--embed means nothing with --check MODEL"),
        bad("--check", "{planned}", "--overlap", says="--overlap means nothing with --check"),
        bad("--check", "{planned}", "--planner", "greedy", says="--planner means nothing with"),
        ok("--check", "{planned}", "--runtime", "microarena", says="offline plan OK"),
        ok("--buffers", "{csv}", says="3 buffers: arena"),
        ok("--buffers", "{csv}", "--out-csv", "{tmp}/o.csv", "-q", says="arena"),
        bad("--buffers", "{csv}", "--out-csv", "{tmp}/no/o.csv", says=f"{MISSING}: '{{tmp}}/no/o"),
        bad("--buffers", "{csv_empty_life}", says=":3: lower 2 must be below upper 2"),
        bad("--buffers", "{csv}", "-o", "x.tflite", says="-o/--output means nothing with --buf"),
        bad("{demo}", "--out-csv", "x.csv", says="--out-csv means nothing with MODEL: it needs"),
        ok("--buffers", "{csv}", "--planner", "greedy", "--time-limit", "0.5", says="arena"),
        bad("--buffers", "{csv}", "--target", "tflm-x86_64", says="it needs MODEL or --check"),
        ok("{demo}", "--planner", "greedy", says="arena head"),
        bad("{demo}", "--planner", "magic", says="invalid choice: 'magic'"),
        ok("{demo}", "--runtime", "microarena", says="arena head"),
        ok("{demo}", "--target", "microarena-host", says="arena to set"),
        bad("{demo}", "--target", "pc", says="invalid choice: 'pc'"),
        ok("{demo}", "--time-limit", "0.5", says="arena head"),
        ok("{demo}", "--ram", "256K", "--time-limit", "0.5", says="fits"),
        bad("{demo}", "--ram", "lots", says="neither a size"),
        bad("{demo}", "--ram", "4K", "--overlap", says="--ram plans every option itself"),
        bad("{demo}", "--time-limit", "0", says="--time-limit: must be above 0"),
        bad("{demo}", "--time-limit", "nan", says="--time-limit: must be above 0"),
        ok("{demo}", "--overlap", "--kernels", "reference", says="arena head"),
        bad("{demo}", "--overlap", says="--overlap needs --kernels"),
        ok("{demo}", "--overlap", "--kernels", "microarena", "--fastest", says="fast paths"),
        bad("{demo}", "--fastest", says="--fastest needs --overlap --kernels microarena"),
        ok("{demo}", "--kernels", "cmsis-nn", "--cpu", "cortex-m55", says="MVE path"),
        bad(
            "{demo}",
            "--kernels",
            "cmsis-nn",
            "--target",
            "tflm-x86_64",
            says="reference kernels only",
        ),
        ok("{demo}", "--bands", "-q", says="bands: no split within the budget lowers"),
        ok(
            "{demo}",
            "--bands",
            "--bands-mac-budget",
            "0",
            "-o",
            "{tmp}/b.tflite",
            "-q",
            says="plan embedded in",
        ),  # fmt: skip
        bad("{demo}", "--bands", "--embed", says="--bands with --embed needs -o OUT"),
        bad("{demo}", "--bands-mac-budget", "0.2", says="means nothing without --bands"),
        ok("{demo}", "--bands", "--bands-objective", "arena", "-q", says="lowers the arena to"),
        bad("{demo}", "--bands-objective", "arena", says="means nothing without --bands"),
        bad("{demo}", "--bands", "--bands-objective", "flash", says="invalid choice: 'flash'"),
        bad("{demo}", "--bands", "--bands-mac-budget", "-1", says="must be >= 0: -1"),
        bad("--check", "{planned}", "--bands", says="--bands means nothing with --check"),
        bad("{demo}", "--plot", "{tmp}/p.gif", says="--plot wants a .png or .svg"),
        bad("{damaged}", says="corrupt or truncated"),
        bad("{tmp}/absent.tflite", says=MISSING),
        bad(says="give exactly one of MODEL, --check MODEL or --buffers CSV"),
    ],
    "host.run": [
        ok("--version", says=f"microarena {version()}"),
        ok("--help", says="refused, never\ncast"),
        ok("{demo}", says="Arena required"),
        ok("{demo}", "--json", says='"outputs"'),
        ok("{demo}", "--input", "{npy_int8}", says="output 0"),
        ok("{demo}", "--input", "{npy_int32_exact}", says="output 0"),
        bad("{demo}", "--input", "{npy_float}", says="0.5 at [0, 0, 0, 0] is not exactly"),
        bad("{demo}", "--input", "{npy_300}", says="int32 value 300 at [0, 0, 0, 0]"),
        bad("{demo}", "--input", "{npy_int8}", "--input", "{npy_int8}", says="2 --input files"),
        bad("{demo}", "--input", "{txt}", says="not a .npy file"),
        bad("{demo}", "--input", "{tmp}/absent.npy", says=MISSING),
        bad("{demo}", "--arena-size", "99999999999", says="must be at most 4294967295"),
        bad("{demo}", "--arena-size", "0", says="--arena-size: must be >= 1"),
        bad("{demo}", "--arena-size", "1000", code=1, says="needs at least"),
        ok("{demo}", "--seed", "7", says="output 0"),
        bad("{demo}", "--seed", "-1", says="--seed: must be >= 0"),
        bad("{rejected}", code=1, says="EXP: input type INT8 is not supported"),
        bad("{damaged}", code=1, says="malformed model"),
        ok("--list-ops", says="CONV_2D"),
        bad(says="give a MODEL (or --list-ops)"),
    ],
    "host.record": [
        ok("--version", says=f"microarena {version()}"),
        ok("--help", says="exit status"),
        ok("--log", "{log}", says="head"),
        ok("--log", "{log}", "--json", says='"report"'),
        ok("--log", "{log}", "--text-only", says="head"),
        ok("--log", "{log}", "--save", "{tmp}/saved.log", says="head"),
        bad("--log", "{log}", "--save", "{tmp}/no/s.log", says=f"{MISSING}: '{{tmp}}/no/s.log'"),
        bad("--log", "{log}", "--plan", "{rejected}", says="the runtime refuses it: "),
        bad("--log", "{log}", "--plan", "{damaged}", says="corrupt or truncated"),
        bad("--log", "{log}", "--plan", says="--plan needs a model here"),
        bad("--log", "{log}", "--target", "tflm-x86_64", says="give --plan too"),
        bad("--log", "{log}", "--target", "esp32", says="invalid choice: 'esp32'"),
        bad("--log", "{tmp}/absent.log", says="cannot read"),
        bad("--log", "{log}", "--model", "{demo}", says="--model needs --board"),
        bad("--log", "{log}", "--upload", "{demo}", says="--upload needs a board"),
        bad("--board", "mps2-an386", "--model", "{rejected}", "--plan", says="runtime refuses"),
        bad("--board", "mps2-an386", "--upload", "{rejected}", "--plan", says="runtime refuses"),
        bad("--board", "mps2-an386", says="--board needs --model"),
        bad("--board", "nope", "--model", "{demo}", says="unknown board 'nope'"),
        bad("--port", "socket://127.0.0.1:1", "--timeout", "1", code=3, says="cannot open"),
        bad("--port", "x", "--arena", "4096", says="--arena needs --board and --upload"),
        bad("--log", "{log}", "--profile", says="--profile needs --board and --model"),
        bad("--board", "mps2-an386", "--upload", "{demo}", "--profile", says="--profile needs"),
        bad("--port", "x", "--arena", "0", says="--arena: must be >= 1"),
        bad("--port", "x", "--baud", "fast", says="--baud: not an integer: 'fast'"),
        bad("--log", "{log}", "--timeout", "0", says="--timeout: must be above 0"),
        ok("--list-ports", "--json", says="["),
        bad(says="one of the arguments --port --board --log --list-ports is required"),
    ],
    "host.emulate": [
        ok("--version", says=f"microarena {version()}"),
        ok("--help", says="QEMU"),
        bad("{elf}", "--timeout", "0", says="--timeout: must be above 0"),
        bad("{tmp}/absent.elf", "--json", says="firmware image not found"),
        bad("{demo}", "--append", "x", says="is not an ELF image"),
        bad("{elf}", "--board", "nucleo_f746zg", "--no-icount", says="cannot be emulated"),
        bad("--model", "{tmp}/absent.tflite", says="model not found"),
        bad("--model", "{demo}", "--board", "nope", says="unknown board 'nope'"),
        bad(says="give a firmware image or --model"),
    ],
    "host.demo": [
        ok("--version", says=f"microarena {version()}"),
        ok("--help", says="QEMU"),
        bad("--model", "{rejected}", says="the runtime refuses it: "),
        bad("--model", "{damaged}", says="corrupt or truncated"),
        bad("--model", "{tmp}/absent.tflite", says=MISSING),
        bad("--model", "", says="--model: an empty path"),
        bad("--model", "{demo}", "--board", "nope", says="unknown board 'nope'"),
        bad("--timeout", "0", says="--timeout: must be above 0"),
    ],
    "host.scratch": [
        ok("--version", says=f"microarena {version()}"),
        ok("--help", says="scratch"),
        ok("{demo}", says="scratch request"),
        ok("{demo}", "--json", says="["),
        ok("{demo}", "--runtime", "microarena", says="microarena kernels"),
        bad("{demo}", "--runtime", "cmsis", says="invalid choice: 'cmsis'"),
        bad("--formulas", "{tmp}/missing.json", "{demo}", says="unrecognized arguments"),
        bad("{damaged}", says="corrupt or truncated"),
        bad("{tmp}/absent.tflite", says=MISSING),
    ],
    "host.modelgen": [
        ok("--version", says=f"microarena {version()}"),
        ok("--help", says="seed"),
        ok("{tmp}/gen.tflite", says="wrote"),
        ok("--seed", "3", "{tmp}/gen3.tflite", says="wrote"),
        bad("{tmp}", says="Is a directory: '{tmp}'"),
        bad("--seed", "-1", "{tmp}/x.tflite", says="--seed: must be >= 0"),
        bad("{tmp}/missing/dir/x.tflite", says=f"{MISSING}: '{{tmp}}/missing/dir/x.tflite'"),
    ],
}


def _rejected_model() -> bytes:
    """EXP on int8: a valid model this runtime refuses (its EXP is float only)."""
    g = modelgen.Graph()
    x = g.tensor("x", (1, 4), modelgen.INT8, [0.1], [0])
    y = g.tensor("y", (1, 4), modelgen.INT8, [0.1], [0])
    g.op(BUILTIN_CODES["EXP"], [x], [y], 0, modelgen.scalar_options({}, 1))
    return modelgen.assemble(g, [x], [y])


def _log() -> bytes:
    cats = [Category("TfLiteEvalTensor data", 240, 240, 10, "allocations")]
    r = wire.WireReport(status=0, arena_size=4096, head=32, tail=240, total=272, categories=cats)
    text = "".join(
        f"[RecordingMicroAllocator] Arena allocation {k} {getattr(r, k)} bytes\r\n"
        for k in ("total", "head", "tail")
    )
    line = "[RecordingMicroAllocator] '{0}' used {1} bytes with alignment overhead (requested {2} bytes for {3} {4})\r\n"  # noqa: E501
    text += "".join(line.format(c.name, c.used, c.requested, c.count, c.unit) for c in cats)
    return (text + wire.encode_record(r)).encode()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("cli")
    data = modelgen.build_demo_model(0)
    made = {
        "demo": data,
        "copy": data,
        "rejected": _rejected_model(),
        "damaged": data[:200],
        "log": _log(),
        "elf": b"\x7fELF" + bytes(60),
        "txt": b"1 2 3\n",
        "csv": b"id,lower,upper,size\n0,0,2,16\n1,1,3,16\n2,2,4,32\n",
        "csv_empty_life": b"id,lower,upper,size\n0,0,2,16\n1,2,2,16\n",
    }
    names = {"demo": "demo.tflite", "copy": "copy.tflite", "rejected": "rejected.tflite"}
    paths = {k: tmp / names.get(k, k) for k in made}
    for k, v in made.items():
        paths[k].write_bytes(v)
    shape = Interpreter(data).input_details(0).shape
    arrays = {
        "npy_int8": np.zeros(shape, np.int8),
        "npy_int32_exact": np.full(shape, -128, np.int32),
        "npy_float": np.full(shape, 0.5),
        "npy_300": np.full(shape, 300, np.int32),
    }
    for k, a in arrays.items():
        paths[k] = tmp / f"{k}.npy"
        np.save(paths[k], a)
    paths["planned"] = tmp / "planned.tflite"
    assert plan_cli.main([str(paths["demo"]), "-o", str(paths["planned"]), "-q"]) == 0
    return {k: str(v) for k, v in paths.items()} | {"tmp": str(tmp)}


def invoke(command: str, args: list[str]) -> tuple[int, str, str]:
    """Runs a command's main() as `python -m` would: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = COMMANDS[command](args)
        except SystemExit as e:  # argparse, --help
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()


TABLE = [(cmd, case) for cmd, cases in CASES.items() for case in cases]


@pytest.mark.parametrize(
    ("command", "case"), TABLE, ids=[f"{c} {' '.join(k.args)}" for c, k in TABLE]
)
def test_command(
    command: str,
    case: Case,
    files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(demo, "BUILD", Path(files["tmp"]) / "build")  # the demo's copies
    monkeypatch.setattr(demo, "REPO", Path(files["tmp"]))
    args = [a.format(**files) for a in case.args]
    says = case.says.format(**files)
    code, out, err = invoke(command, args)  # an uncaught exception fails the test here
    assert "Traceback" not in out + err
    if case.code == 0:
        assert code == 0, err
        assert says in out
        return
    assert code != 0 and (case.code == -1 or code == case.code), (code, out, err)
    errors = [line for line in err.splitlines() if re.search(r"\berror\b", line)]
    assert len(errors) == 1 and says in errors[0], err  # one line says what is wrong
    assert ".tmp" not in err  # never a hidden temporary file's name


def parser_of(main: Callable[[list[str] | None], int]) -> argparse.ArgumentParser:
    """The parser a main() builds: caught as it starts parsing."""

    class Caught(Exception):
        pass

    found: list[argparse.ArgumentParser] = []

    def catch(self: argparse.ArgumentParser, *a: object, **k: object) -> None:
        found.append(self)
        raise Caught

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(argparse.ArgumentParser, "parse_args", catch)
        with contextlib.suppress(Caught):
            main([])
    return found[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_is_in_the_table(command: str) -> None:
    """A new option without a case here fails this test: add a good and a bad value for it."""
    used = {a for case in CASES[command] for a in case.args}
    missing = [
        "/".join(action.option_strings)
        for action in parser_of(COMMANDS[command])._actions
        if action.option_strings and not used & set(action.option_strings)
    ]
    assert not missing, f"{command}: options with no case in CASES: {missing}"


def _has_main_guard(path: Path) -> bool:
    """A top-level `if __name__ == "__main__":` (not the same text inside a string)."""
    body = ast.parse(path.read_text()).body
    return any(isinstance(n, ast.If) and "__name__" in ast.unparse(n.test) for n in body)


# Entry points that are build steps (run by CMake, Make and PlatformIO builds, not by people):
# each with the test file that holds its errors to one line.
BUILD_STEPS = {"host.device.model_header": "tests/device/test_model_header.py"}


def test_every_entry_point_is_in_the_table() -> None:
    """Each `python -m host....` module (a file with a __main__ guard) has its cases."""
    modules = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in ROOT.glob("host/**/*.py")
        if _has_main_guard(p)
    }
    assert modules == set(COMMANDS) | set(BUILD_STEPS)
    assert all((ROOT / test).is_file() for test in BUILD_STEPS.values())


def test_console_command_runs_each_command() -> None:
    """`microarena NAME` runs the main() of `python -m host.NAME`, and its help lists each."""
    assert {f"host.{name}" for name in commands.COMMANDS} == set(COMMANDS)
    for name, (module, _) in commands.COMMANDS.items():
        assert importlib.import_module(module).main is COMMANDS[f"host.{name}"]
        code, out, _ = invoke_console([name, "--version"])
        assert (code, out) == (0, f"microarena {version()}\n")
    code, out, _ = invoke_console(["--help"])
    assert code == 0 and all(f"\n  {name} " in out for name in commands.COMMANDS), out
    code, _, err = invoke_console(["plna"])
    assert code == 2 and "unknown command 'plna'" in err


def invoke_console(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = commands.main(args)
        except SystemExit as e:  # argparse's --version
            code = e.code if isinstance(e.code, int) else 0
    return code, out.getvalue(), err.getvalue()


def test_slow_steps_say_what_they_do(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building an image and booting QEMU take 20-50 s: each says so first, on stderr only."""
    from host.device import boards, probe

    def build(*args: object, **kw: object) -> Path:
        return Path(files["elf"])

    def boot(*args: object, **kw: object) -> None:
        raise emulate.EmulationError("stopped here by the test")

    for module in (boards, emulate, probe):
        monkeypatch.setattr(module, "build_image", build)
    monkeypatch.setattr(emulate, "start", boot)
    runs = {
        ("host.record", "--board", "mps2-an386", "--model", "{demo}", "--json"): "the image of",
        ("host.record", "--board", "mps2-an386", "--upload", "{demo}"): "the probe firmware",
        ("host.emulate", "--model", "{demo}", "--json"): "the image of",
    }
    for (command, *args), built in runs.items():
        code, out, err = invoke(command, [a.format(**files) for a in args])
        steps = [line for line in err.splitlines() if line.startswith("  ... ")]
        assert code != 0 and out == "" and "stopped here by the test" in err
        assert len(steps) == 2 and f"building {built}" in steps[0], err
        assert steps[1] == "  ... booting QEMU (mps2-an386)", err


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.count(".") == 1])  # host/X.py
def test_ctrl_c_is_one_line(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m host.X` as a user runs it, interrupted: status 130 and one line, no traceback."""

    def interrupted(argv: list[str] | None = None) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(sys.modules[COMMANDS[command].__module__], "main", interrupted)
    with pytest.raises(SystemExit) as e:
        runpy.run_module(command, run_name="__main__")
    assert e.value.code == 130 and capsys.readouterr().err == "interrupted\n"


JUNK = ["", "-1", "0", "nan", "1e30", "{tmp}/absent/x", "{tmp}", "{damaged}", "{rejected}"]
BASE = {  # arguments that make each command do its main job, for JUNK to disturb
    "host.plan": ["{demo}"],
    "host.run": ["{demo}"],
    "host.record": ["--log", "{log}"],
    "host.emulate": ["{elf}"],
    "host.demo": [],
    "host.scratch": ["{demo}"],
    "host.modelgen": ["{tmp}/junk.tflite"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_no_value_gives_a_traceback(
    command: str,
    files: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Each option with each JUNK value: an error line or success, never an exception. Builds
    and QEMU are replaced by a failure (they are what the table's board cases exercise)."""
    from host.device import boards, probe

    def no_build(*args: object, **kw: object) -> Path:
        raise boards.BuildError("no builds in this test")

    def no_boot(*args: object, **kw: object) -> None:
        raise emulate.EmulationError("no QEMU in this test")

    for module in (boards, emulate, probe):
        monkeypatch.setattr(module, "build_image", no_build)
    monkeypatch.setattr(emulate, "start", no_boot)
    monkeypatch.setattr(demo, "DEMO_MODEL", Path(files["demo"]))
    monkeypatch.setattr(demo, "BUILD", tmp_path)
    monkeypatch.setattr(demo, "REPO", Path(files["tmp"]).parent)
    monkeypatch.chdir(tmp_path)  # outputs named by junk land here
    for action in parser_of(COMMANDS[command])._actions:
        if not action.option_strings or action.nargs == 0:
            continue
        for value in JUNK:
            args = [*BASE[command], action.option_strings[-1], value]
            code, out, err = invoke(command, [a.format(**files) for a in args])
            assert "Traceback" not in out + err, args
            assert code == 0 or any("error" in line for line in err.splitlines()), (args, err)
