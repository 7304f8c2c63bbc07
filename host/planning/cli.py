"""Offline memory planner for TensorFlow Lite Micro models.

python -m host.plan model.tflite              show the plan and the arena it needs
python -m host.plan model.tflite --embed      write the plan into the model (atomically)
python -m host.plan --check model.tflite      validate a plan already in a model
python -m host.plan --buffers problem.csv     plan a bare id,lower,upper,size problem
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

from host import entry
from host.argtypes import FRACTION, SECONDS, file_path
from host.fileio import Output, is_stdout, write_outputs
from host.planning import band_choice, c_header, checker, fast_paths, fit, origin
from host.planning.c_header import c_name
from host.planning.libraries.base import KernelLibrary, KernelsError
from host.planning.libraries.microarena import fastest_library
from host.planning.libraries.reference import REFERENCE
from host.planning.libraries.registry import CPUS, DEFAULT_CPU, KERNELS, RUNTIMES, library
from host.planning.model import metadata
from host.planning.packing import (
    PLANNERS,
    SEARCH_CORE,
    PlanError,
    arena_size,
    lower_bound,
    plan,
    read_csv,
    write_csv,
)
from host.planning.plan import PlanResult, plan_model
from host.planning.plot import check_plot_path, plot_bytes
from host.planning.report import plan_json, plan_text
from host.planning.scratch import predict_tflm_head
from host.planning.targets.result import TargetArena
from host.planning.targets.target import (
    DEFAULT_KERNELS,
    DEFAULT_TARGET,
    TARGETS,
    target_arena,
    target_kernels,
)
from host.planning.tflm.prepare import prepare_refusals
from host.planning.tflm.refusal import tflm_refusal
from host.progress import say
from host.runtime.binding import open_refusal
from host.terminal import printable
from host.tflite.compare import check_rewrite
from host.tflite.model import OFFLINE_PLAN_NAME, Model, ModelError

DEFAULT_MAC_BUDGET = 0.1
HEADER_NAME = "g_model"  # TFLM's examples' name for the model array
MODEL_TIME_LIMIT = 1.5  # a model plans in under 2 s by default (most reach the bound at once)
BANDS_TIME_LIMIT = 6.0  # with --bands: under 10 s in all by default
BANDS_SHARE = 0.75  # of the time limit, for choosing the split; the rest plans the model chosen
CSV_TIME_LIMIT = 10.0

EPILOG = """\
The plan is written as TFLM's OfflineMemoryAllocation metadata: any TFLM runtime (and this
project's firmware) then places tensors at these offsets. Kernel scratch buffers are still
placed by TFLM at run time; the planner simulates that, so the head it prints is the one TFLM
will report. Files (--embed, -o, --out-csv, --plot) are written atomically and together: each is
written beside its target, read back and checked (the planned model re-validated) before any
lands, so after a failure every file is as it was. A replaced file keeps its permissions, a
symlink keeps pointing at the file it names, which gets the new contents. With -o /dev/stdout
the report goes to standard error. The model must be a regular file of at most 2 GiB.
Exit status: 0 ok, 1 invalid plan (--check), 2 bad input.
"""


def _parser() -> argparse.ArgumentParser:
    p = entry.parser(
        "plan",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", nargs="?", help="the .tflite model to plan")
    p.add_argument("--embed", action="store_true", help="write the plan into the model")
    p.add_argument(
        "-o",
        "--output",
        help="write the planned model to OUTPUT, leaving MODEL as it is (implies --embed)",
    )
    p.add_argument(
        "--header",
        metavar="FILE",
        type=file_path,
        help="also write the planned model as a C/C++ header for a stock TFLM project: a const "
        "16-byte aligned array and the arena size to set on --target as a #define",
    )
    p.add_argument(
        "--header-name",
        metavar="NAME",
        type=c_name,
        default=None,
        help=f"with --header: the array's name (default {HEADER_NAME}; its length is NAME_len, "
        "the arena size NAME_ARENA_SIZE in capitals)",
    )
    p.add_argument(
        "--replace-plan",
        action="store_true",
        help="let --embed write over an offline plan another tool (Vela, ...) put in the model; "
        "without it such a model is left as it is (host.plan replaces its own plans unasked)",
    )
    p.add_argument("--check", metavar="MODEL", help="validate the plan embedded in MODEL")
    p.add_argument(
        "--buffers",
        metavar="CSV",
        help="plan a bare problem: id,lower,upper,size[,offset] (MiniMalloc's CSV: live "
        "[lower, upper), lower < upper, bytes with no alignment; offset fixes a buffer)",
    )
    p.add_argument("--out-csv", metavar="CSV", help="with --buffers: write offsets to this CSV")
    p.add_argument(
        "--planner", choices=sorted(PLANNERS), help="placement algorithm (default: best)"
    )
    p.add_argument(
        "--target",
        choices=TARGETS,
        help="whose arena to report: head, tail by category and the minimum arena to "
        f"configure (default: {DEFAULT_TARGET}; microarena-cortex-m with --kernels microarena)",
    )
    p.add_argument(
        "--kernels",
        choices=KERNELS,
        help="the kernel library the model will run with: its scratch buffers are planned "
        "around, its allocations make the tail, and with --overlap its loops decide what may "
        "overlap; with --check, whose overlap rules apply (default: the target's: "
        + ", ".join(f"{k.name} on {t}" for t, k in DEFAULT_KERNELS.items())
        + ")",
    )
    p.add_argument(
        "--cpu",
        choices=CPUS,
        help="the Cortex-M the kernels are built for: CMSIS-NN's scratch and loops differ "
        f"between no DSP (M0, M3), DSP (M4, M7, M33) and MVE (M55) (default: {DEFAULT_CPU})",
    )
    p.add_argument(
        "--runtime",
        choices=list(RUNTIMES),
        default=None,
        help="the older spelling of --kernels: tflm = --kernels reference, microarena = "
        "--kernels microarena",
    )
    p.add_argument(
        "--time-limit",
        type=SECONDS,
        default=None,
        help="seconds of search for a better plan than TFLM's greedy one, above 0 (default: "
        f"{MODEL_TIME_LIMIT:g} for a model, {BANDS_TIME_LIMIT:g} with --bands, of which "
        f"{100 * BANDS_SHARE:.0f}%% choose the split, {CSV_TIME_LIMIT:g} for --buffers). Work "
        "budgets end the searches (the same plan on a loaded machine); the clock only caps them. "
        "On top come reading the input, TFLM's greedy placement and the checks of the plan (a "
        "few seconds at 20,000 buffers: they grow with the square of the buffer count) and, "
        "for a model, the --target arena prediction (about a second on a model of thousands "
        "of operators)",
    )
    p.add_argument(
        "--overlap",
        action="store_true",
        help="let an operator's output overlap its inputs where the loops of --kernels "
        "provably allow it (needs --kernels: a plan proven for one library can corrupt "
        "another's outputs; the planned model records the library and CPU)",
    )
    p.add_argument(
        "--fastest",
        action="store_true",
        help="with --overlap --kernels microarena: keep every int8 fast path of the microarena "
        "kernels. Some compute two or four pixels (rows) at once (CONV_2D and FULLY_CONNECTED "
        "pairs; with --cpu cortex-m55, Helium's 1x1 rows and depthwise pairs), which needs "
        "the input further above the output than the in-order loops do (docs/overlap.md); "
        "where a plan puts it closer they take the in-order loops, with the same results and "
        "more instructions. --overlap --kernels microarena plans both ways and prints both "
        "heads and the operators the smallest plan slows down; without --fastest it keeps "
        "the smallest plan, or the fast one at an equal head",
    )
    p.add_argument(
        "--bands",
        action="store_true",
        help="rewrite the model so its early stage runs in horizontal bands (same outputs, "
        "bit for bit, on any TFLM), choosing the cut and band count with the smallest head "
        "within --bands-mac-budget; needs -o OUT to write it. A model no split helps or none "
        "is possible for is planned as it is, saying why",
    )
    p.add_argument(
        "--bands-mac-budget",
        type=FRACTION,
        default=DEFAULT_MAC_BUDGET,
        metavar="FRACTION",
        help="with --bands: multiply-accumulates the bands may add by recomputing their halos, "
        f"as a fraction of the model's (default {DEFAULT_MAC_BUDGET}: 10%% more)",
    )
    p.add_argument(
        "--bands-objective",
        choices=band_choice.OBJECTIVES,
        default="head",
        help="with --bands: what the split minimises: the arena head (default), or the arena "
        "to set on --target (head + TFLM's tail, which grows with every band's operators)",
    )
    p.add_argument(
        "--ram",
        metavar="SIZE|BOARD",
        help="does MODEL fit: a table of every option (plain, --overlap, --bands; stock TFLM + "
        "CMSIS-NN or this runtime) with its arena, flash, MACs, operator at the peak and "
        "verdict, for SIZE bytes of RAM (256K, 1M) or a board of boards/ (its RAM and flash)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--plot", metavar="FILE", help="draw the layout over time (.png or .svg)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    return p


def _progress(quiet: bool):
    return None if quiet else say


def cmd_plan(args: argparse.Namespace) -> int:
    start = time.monotonic()
    if args.plot:
        check_plot_path(args.plot)  # before any work (and before --embed writes anything)
    model = Model.load(args.model)
    existing = origin.origin(model)
    writes = args.embed or args.header  # outputs holding the new plan
    existing_head = _existing_head(model) if existing else None
    if existing and not existing.replaceable and writes and not args.replace_plan:
        raise PlanError(
            f"{args.model} already carries {existing.text}; nothing written: --replace-plan "
            "writes this planner's plan over it (--check MODEL says whether TFLM runs it as is)"
        )
    limit = args.time_limit or (BANDS_TIME_LIMIT if args.bands else MODEL_TIME_LIMIT)
    lib = args.kernel_library
    runtime = lib.runtime
    progress = _progress(args.quiet or args.json)
    banding = None
    if args.bands:
        banding = band_choice.apply(
            model,
            args.bands_mac_budget,
            lib,
            args.overlap,
            progress,
            target=args.target,
            objective=args.bands_objective,
            time_limit=BANDS_SHARE * limit,
        )
        model = banding.model
        limit -= BANDS_SHARE * limit
    result = plan_model(
        model,
        args.planner,
        limit,
        lib,
        progress,
        overlap=args.overlap,
        **(banding.placement if banding else {}),
    )
    fast = None
    if args.overlap and lib.name == "microarena":
        placement = banding.placement if banding else {}

        def plan_with(lib: KernelLibrary) -> PlanResult:
            return plan_model(model, args.planner, limit, lib, progress, overlap=True, **placement)

        result, fast = fast_paths.choose(model, result, plan_with, args.fastest, args.cpu)
    planned_for = runtime + ("+overlap" if args.overlap else "")
    offsets = result.tensor_offsets()
    metadata.embed(model, offsets, planned_for, lib.name, lib.cpu)  # saved by --embed
    target = _target(result, model, args.target, lib)
    _write_outputs(args, result, model, lib, target)
    refused = result.microarena_refusal = _microarena_refusal(model)
    result.seconds = time.monotonic() - start  # the whole run: bands and predictions included
    out = sys.stderr if args.embed and is_stdout(args.output or args.model) else sys.stdout
    if args.json:
        doc = plan_json(result, args.output or args.model if args.embed else None, target)
        doc["microarena_runtime"] = {"runs": refused is None, "message": refused}
        doc["search_core"] = SEARCH_CORE  # "c" (compiled) or "python": same plans, not speed
        if fast:
            doc["fast_paths"] = fast.to_json()
        if banding:
            doc["bands"] = banding.to_json()
        if existing:
            doc["existing_plan"] = {
                **existing.to_json(),
                "tflm_head": existing_head,
                "action": _action(existing, args),
            }
        print(json.dumps(doc), file=out)
    else:
        if banding:
            print(banding.text(), file=out)
        print(plan_text(result, target), file=out)
        if fast:
            print("\n".join(fast.lines()), file=out)
        if existing:
            print(
                f"existing plan    {existing.text}\n                 TFLM head with it "
                f"{existing_head} bytes (this plan: {result.head}); {_action(existing, args)}",
                file=out,
            )
        verdict = "runs this model" if refused is None else f"cannot run this model: {refused}"
        print(f"microarena runtime {verdict}", file=out)
        if args.embed:
            print(f"\nplan embedded in {args.output or args.model}", file=out)
        if args.header:
            macro = c_header.arena_macro(args.header_name or HEADER_NAME)
            print(f"header written to {args.header} ({macro} for {args.target})", file=out)
    return 0


def _write_outputs(
    args: argparse.Namespace,
    result: PlanResult,
    model: Model,
    lib: KernelLibrary,
    target: TargetArena | None,
):
    """The planned model (--embed, -o) and the plot land together, each checked, or neither.

    With the model written to standard output, the report goes to standard error so that the
    output can be piped on as a model.
    """
    outputs = []
    if args.embed:
        # Every field but the plan and its marker keeps its meaning, or nothing is written.
        data = check_rewrite(model, (OFFLINE_PLAN_NAME, origin.MARKER))
        outputs.append(Output(args.output or args.model, data, _written_model_check(lib)))
    if args.plot:
        outputs.append(Output(args.plot, plot_bytes(result, model, args.plot)))
    if args.header:
        outputs.append(_header_output(args, result, model.to_bytes(), lib, target))
    write_outputs(outputs)


def _header_output(
    args: argparse.Namespace,
    result: PlanResult,
    data: bytes,
    lib: KernelLibrary,
    target: TargetArena | None,
) -> Output:
    """The --header file: the planned model's bytes and the target's arena to set."""
    if target is None:
        raise PlanError(f"no --header: the arena on {args.target} is unknown ({result.warnings})")
    refusal = result.tflm_refusal.text() if result.tflm_refusal else None
    name = args.header_name or HEADER_NAME
    text = c_header.render(data, name, target, lib.label, args.header, args.model, refusal)

    def check(written: bytes) -> None:
        if c_header.array_bytes(written.decode()) != data:  # a bug of ours: never let it land
            raise PlanError("the header's array is not the planned model, nothing written")

    return Output(args.header, text.encode(), check)


def _written_model_check(lib: KernelLibrary) -> Callable[[bytes], None]:
    """The check the planned model's bytes pass, as read back from beside the target, before
    they replace any file: a model whose embedded plan is valid. (The field-by-field comparison
    with the original, check_rewrite, ran on these same bytes before they were written: the
    read-back must equal them.)"""

    def check(data: bytes) -> None:
        problems = checker.check(Model(data, "the planned model"), lib)
        if problems:  # a bug of ours: say so rather than leave a bad model unnoticed
            raise PlanError(f"planned model failed its own check, nothing written: {problems[0]}")

    return check


def _existing_head(model: Model) -> int | None:
    """TFLM's head with the plan the model carries (None where that plan cannot be used)."""
    try:
        return predict_tflm_head(model, REFERENCE)
    except Exception:  # a plan TFLM refuses (wrong size, ...): --check says why
        return None


def _action(existing: origin.PlanOrigin, args: argparse.Namespace) -> str:
    """What this run did with the plan the model carried."""
    if args.embed:
        return "replaced by this plan"
    how = "--embed" if existing.replaceable else "--embed --replace-plan"
    return f"kept (the report is for a new plan, which {how} writes over it)"


def _microarena_refusal(model: Model) -> str | None:
    """Why this project's runtime cannot open the model (every unsupported operator), if so;
    escaped for a terminal, since it quotes the model's names. A model that breaks a Prepare
    condition of TFLM's (host.planning.tflm.prepare) is never said to run: the runtime
    refuses what TFLM refuses rather than compute something else."""
    broken = prepare_refusals(model)
    table = f"TFLM's Prepare refuses {', '.join(broken)}" if broken else None
    try:
        why = open_refusal(model.to_bytes())
    except (OSError, RuntimeError) as e:  # no C compiler here: say so, the plan stands
        return table or f"not checked ({e})"
    why = why or table
    return None if why is None else printable(why)


def _target(
    result: PlanResult, model: Model, target: str, lib: KernelLibrary
) -> TargetArena | None:
    """The target's head, tail and minimum arena for the model with its plan embedded (None,
    with a warning on the result, where it cannot be predicted)."""
    try:
        return target_arena(model, target, lib)
    except Exception as e:  # the figures are extra information; the plan stands without them
        result.warnings.append(f"arena prediction for {target} unavailable: {e}")
        return None


def cmd_check(args: argparse.Namespace) -> int:
    model = Model.load(args.check)
    recorded = origin.origin(model)
    lib = _kernel_library(args, recorded)
    problems = checker.check(model, lib) + band_choice.graph_problems(model)
    mismatch = _planned_for_other_kernels(recorded, lib, args.check)
    if mismatch:
        problems.insert(0, mismatch)
    unjudged = checker.not_judged(model, lib)
    notes = checker.notes(model)
    refusal = tflm_refusal(model)
    if refusal:
        notes.append(f"TFLM refuses this model: {refusal.text()}")
    target = args.target
    arena = None if problems else _check_arena(model, target, lib, notes)
    if args.json:
        doc = {
            "model": args.check,
            "valid": not problems,
            "problems": problems,
            "not_judged": unjudged,
            "origin": recorded.to_json() if recorded else None,
            "notes": notes,
        }
        if arena is not None:
            doc["target"] = arena.to_json()
        print(json.dumps(doc))
        return 1 if problems else 0
    if problems:
        print(f"{args.check}: INVALID offline plan:")
        for msg in problems:
            print(f"  - {msg}")
    else:
        n = len(metadata.read(model).offsets)  # type: ignore[union-attr]
        shared = checker.allowed_overlaps(model, lib)
        extra = f"; {len(shared)} operators write over their input, as the {lib.label} allow"
        extra = extra if shared else ""
        if unjudged:
            print(
                f"{args.check}: offline plan OK for every operator this tool can judge ({n} "
                f"offsets{extra}); TFLM places the tensors as written; {len(unjudged)} overlaps "
                "not judged:"
            )
            print("".join(f"  - {msg}\n" for msg in unjudged), end="")
        else:
            print(f"{args.check}: offline plan OK ({n} offsets{extra})")
        if arena is not None:
            print(
                f"  head {arena.head} bytes with this plan on {target} "
                f"({'exact' if arena.exact.get('head') else 'NOT exact'}); arena to set "
                f"{arena.min_arena} bytes"
            )
    if recorded:
        print(f"  plan: {recorded.text}")
    print("".join(f"  note: {n}\n" for n in notes), end="")
    return 1 if problems else 0


def _check_arena(
    model: Model, target: str, lib: KernelLibrary, notes: list[str]
) -> TargetArena | None:
    """The head a valid plan gives on the target (None, with a note, when not predictable)."""
    try:
        return target_arena(model, target, lib)
    except Exception as e:  # extra information: the check's verdict stands without it
        notes.append(f"head on {target} unavailable: {e}")
        return None


def cmd_buffers(args: argparse.Namespace) -> int:
    buffers = read_csv(args.buffers)
    offsets = plan(
        buffers,
        planner=args.planner,
        time_limit=args.time_limit or CSV_TIME_LIMIT,
        alignment=1,
        progress=_progress(args.quiet or args.json),
    )
    size, bound = arena_size(buffers, offsets), lower_bound(buffers)
    if args.out_csv:
        write_csv(args.out_csv, buffers, offsets)
    if args.json:
        doc = {"arena": size, "lower_bound": bound, "offsets": offsets}
        print(json.dumps({**doc, "search_core": SEARCH_CORE}))
    else:
        ratio = size / bound if bound else 1.0
        print(f"{len(buffers)} buffers: arena {size} bytes, lower bound {bound} ({ratio:.3f}x)")
    return 0


def _planned_for_other_kernels(
    recorded: origin.PlanOrigin | None, lib: KernelLibrary, path: str
) -> str | None:
    """Why an --overlap plan made for other kernels (or another CPU) must not run with these:
    its overlaps hold for the loops it was proven for only."""
    if recorded is None or not recorded.overlap or not recorded.kernels:
        return None
    if (recorded.kernels, recorded.cpu) == (lib.name, lib.cpu):
        return None
    return (
        f"the plan's overlaps are proven for the {recorded.kernels_text()}, not for the "
        f"{lib.label}, whose loops may read an input after writing over it: re-plan "
        f"with `python -m host.plan {path} --embed --overlap --kernels {lib.name}"
        + (f" --cpu {lib.cpu}`" if lib.cpu else "`")
    )


def _kernel_library(
    args: argparse.Namespace, recorded: origin.PlanOrigin | None = None
) -> KernelLibrary:
    """--kernels (or its older spelling --runtime) and --cpu, checked against --target, whose
    default follows the kernels (and sets args.target). Not given: the kernels a host.plan
    plan records it was made for (`recorded`, --check), else the target's."""
    legacy = RUNTIMES[args.runtime].name if args.runtime else None
    if args.kernels and legacy and args.kernels != legacy:
        raise KernelsError(f"--runtime {args.runtime} means --kernels {legacy}, not {args.kernels}")
    name = args.kernels or legacy
    if name is None and recorded is not None and recorded.kernels:
        name, args.cpu = recorded.kernels, args.cpu or recorded.cpu
    if args.target is None:
        args.target = "microarena-cortex-m" if name == "microarena" else DEFAULT_TARGET
    return target_kernels(args.target, library(name or DEFAULT_KERNELS[args.target].name, args.cpu))


# Options that mean something in some modes only: (option, its attribute, those modes).
_MODE_ONLY = [
    ("--embed", "embed", ("model",)),
    ("--replace-plan", "replace_plan", ("model",)),
    ("--header", "header", ("model",)),
    ("--header-name", "header_name", ("model",)),
    ("-o/--output", "output", ("model",)),
    ("--plot", "plot", ("model",)),
    ("--overlap", "overlap", ("model",)),
    ("--fastest", "fastest", ("model",)),
    ("--bands", "bands", ("model",)),
    ("--out-csv", "out_csv", ("buffers",)),
    ("--planner", "planner", ("model", "buffers")),
    ("--time-limit", "time_limit", ("model", "buffers")),
    ("--target", "target", ("model", "check")),
    ("--runtime", "runtime", ("model", "check")),
    ("--kernels", "kernels", ("model", "check")),
    ("--cpu", "cpu", ("model", "check")),
]
MODE_NAMES = {"model": "MODEL", "check": "--check MODEL", "buffers": "--buffers CSV"}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    chosen = [x for x in (args.model, args.check, args.buffers) if x]
    if len(chosen) != 1:
        _parser().error("give exactly one of MODEL, --check MODEL or --buffers CSV")
    mode = "check" if args.check else "buffers" if args.buffers else "model"
    if args.ram is not None:
        return _fit(args, mode)
    for option, given, modes in _MODE_ONLY:
        if getattr(args, given) and mode not in modes:
            wanted = " or ".join(MODE_NAMES[m] for m in modes)
            _parser().error(f"{option} means nothing with {MODE_NAMES[mode]}: it needs {wanted}")
    args.embed = args.embed or args.output is not None
    if args.bands and args.embed and args.output is None:
        _parser().error(
            "--bands with --embed needs -o OUT: the rewritten model never replaces MODEL"
        )
    if args.bands_mac_budget != DEFAULT_MAC_BUDGET and not args.bands:
        _parser().error("--bands-mac-budget means nothing without --bands")
    if args.bands_objective != "head" and not args.bands:
        _parser().error("--bands-objective means nothing without --bands")
    if args.header_name and not args.header:
        _parser().error("--header-name means nothing without --header")
    args.planner = args.planner or "best"
    if args.overlap and not (args.kernels or args.runtime):
        _parser().error(
            "--overlap needs --kernels: whether an output may be written over its input "
            "depends on the kernels' loop order (CMSIS-NN's 1x1 convolution reads its whole "
            "input after writing outputs), so say which kernels, and --cpu, the model will run "
            "with"
        )
    if mode == "model":
        try:
            args.kernel_library = _kernel_library(args)
        except KernelsError as e:
            _parser().error(str(e))
        if args.fastest and not (args.overlap and args.kernel_library.name == "microarena"):
            _parser().error(
                "--fastest needs --overlap --kernels microarena: it keeps the microarena "
                "kernels' fast paths where overlaps would slow them down"
            )
        if args.fastest:
            args.kernel_library = fastest_library(args.cpu)
    try:
        if args.check:
            return cmd_check(args)
        if args.buffers:
            return cmd_buffers(args)
        return cmd_plan(args)
    except (ModelError, PlanError, OSError, KernelsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _fit(args: argparse.Namespace, mode: str) -> int:
    """--ram: the fit table (host/planning/fit.py), which runs host.plan once per option."""
    if mode != "model":
        _parser().error(f"--ram means nothing with {MODE_NAMES[mode]}: it needs MODEL")
    chosen = [o for o, attr, _ in _MODE_ONLY if attr != "time_limit" and getattr(args, attr)]
    if chosen or args.bands_mac_budget != DEFAULT_MAC_BUDGET:
        _parser().error(
            f"--ram plans every option itself (with its own arguments): drop "
            f"{', '.join(chosen) or '--bands-mac-budget'}"
        )
    try:
        return fit.main(args.model, args.ram, args.time_limit, args.json, main)
    except (fit.FitError, ModelError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
