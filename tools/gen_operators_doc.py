"""Generate docs/operators.md: which operators and types the C runtime supports, and why not.

Everything comes from the code or from running it:
- the runtime's operators: the kernel registry (firmware/src/kernels/registry.c: builtin
  cases and the custom-operator name table) plus the core's control-flow operators;
- types: every one-operator case of the tests (conformance suites, the kernel tests' single
  operators), the demo model and every converter-made model TFLM runs (tests/data/keras) is
  opened on the host build: an (operator, type) that opens is listed as supported (the tests check
  those against the real TFLM), a refusal is listed with the runtime's message;
- TFLM's operators: every builtin code (and the custom operator names below) is tried on the
  pip tflite-micro interpreter, which says "Failed to get registration" for what it does not
  register.
  The list is stored in the document, so `--check` needs no TFLM.

    python tools/gen_operators_doc.py           # probe TFLM, write docs/operators.md
    python tools/gen_operators_doc.py --check   # exit 1 if the document is out of date
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from support.case_tables import SINGLE_OPS_FILE, conformance_cases, load_test_module  # noqa: E402

from host.fileio import write_text_atomic  # noqa: E402
from host.planning.tflm.prepare import CONDITIONS  # noqa: E402
from host.planning.tflm.refusal import refused_ops  # noqa: E402
from host.runtime.binding import Interpreter, MicroarenaError  # noqa: E402
from host.runtime.sources import runtime_operators  # noqa: E402
from host.tflite import schema as S  # noqa: E402
from host.tflite.flatbuf import set_child  # noqa: E402
from host.tflite.model import Model  # noqa: E402
from host.tflite.ops import BUILTIN_NAMES  # noqa: E402

DOC = REPO / "docs" / "operators.md"
KERAS = REPO / "tests" / "data" / "keras"
# Custom operator names tried on TFLM (its signal library and detection post-processing).
CUSTOM_CANDIDATES = [
    "SignalDelay", "SignalEnergy", "SignalFftAutoScale", "SignalFilterBank",
    "SignalFilterBankLog", "SignalFilterBankSpectralSubtraction",
    "SignalFilterBankSquareRoot", "SignalFramer", "SignalIrfft", "SignalOverlapAdd",
    "SignalPCAN", "SignalRfft", "SignalStacker", "SignalWindow",
    "TFLite_Detection_PostProcess",
]  # fmt: skip
WHERE = re.compile(r" ?\(?(code \d+, )?subgraph \d+, operator \d+\)?")  # model position
TFLM_LINE = re.compile(r"^<!-- TFLM (\S+) operators: (.*) -->$", re.M)


def _probe_model(code: int, custom: str | None) -> bytes:
    from host.tflite import modelgen

    g = modelgen.Graph()
    a = g.tensor("a", (1,), 0, [], [])
    b = g.tensor("b", (1,), 0, [], [])
    g.op(code, [a], [b], 0, modelgen.scalar_options({}, 1))
    data = modelgen.assemble(g, [a], [b])
    if custom is None:
        return data
    m = Model(data)
    set_child(m.root.get(S.MODEL_OPCODES)[0], S.OPCODE_CUSTOM, custom.encode())
    return m.to_bytes()


def _candidates() -> list[tuple[str, int, str | None]]:
    builtin = [(n, c, None) for c, n in sorted(BUILTIN_NAMES.items()) if c != 32]
    return builtin + [(n, 32, n) for n in CUSTOM_CANDIDATES]


def _probe_child(start: int) -> int:
    """Prints `index name yes|no` per candidate from `start`; a crash ends the process."""
    from support.tflm_oracle import capture_output
    from tflite_micro.python.tflite_micro import runtime

    for i, (name, code, custom) in enumerate(_candidates()):
        if i < start:
            continue
        data = _probe_model(code, custom)
        said: list[str] = []

        def run(data: bytes = data, said: list[str] = said) -> None:
            try:
                runtime.Interpreter.from_bytes(data, arena_size=1 << 16)
            except Exception as e:  # noqa: BLE001 - any failure after lookup means "registered"
                said.append(str(e))

        said.append(capture_output(run))
        # TFLM says "Didn't find op" for a builtin only; this line follows for custom ones too.
        missing = "Failed to get registration from op code" in "".join(said)
        print(i, name, "no" if missing else "yes", flush=True)
    return 0


def tflm_operators() -> tuple[str, list[str]]:
    """(tflite-micro version, the operators its Python interpreter registers). Each probe
    model has one operator with one float input and output; some TFLM kernels crash in
    Prepare on that (after the lookup succeeded: registered), so probing runs in child
    processes restarted after the operator that crashed."""
    from tflite_micro.python.tflite_micro import _version

    found: dict[int, bool] = {}
    total = len(_candidates())
    while len(found) < total:
        start = len(found)
        proc = subprocess.run(
            [sys.executable, __file__, "--probe-child", str(start)],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        for line in proc.stdout.splitlines():
            index, _, verdict = line.split()
            found[int(index)] = verdict == "yes"
        if len(found) == start or (proc.returncode != 0 and len(found) < total):
            found[len(found)] = True  # crashed after finding the kernel
    names = [name for i, (name, _, _) in enumerate(_candidates()) if found[i]]
    return _version.__version__, sorted(names)


def _type(model: Model, sg_index: int, op_index: int) -> str:
    sg = model.subgraphs[sg_index]
    op = sg.operators[op_index]
    ins = [sg.tensors[i] for i in op.inputs if i >= 0]
    first = next((t for t in ins if not t.is_const), ins[0] if ins else None)
    out = sg.tensors[op.outputs[0]] if op.outputs else None
    t_in = first.type_name if first else "-"
    t_out = out.type_name if out else "-"
    return t_in if t_out in (t_in, "BOOL") else f"{t_in}->{t_out}"


def _single_op_models() -> list[tuple[str, bytes]]:
    """The conformance cases, the kernel tests' single-operator cases and the demo model."""
    from support.conformance import single_op_model

    from host.tflite.modelgen import build_demo_model

    out = [("demo model", build_demo_model())]
    out += [(f"{name}: {c.name}", single_op_model(c)) for name, c in conformance_cases()]
    kernels = load_test_module(SINGLE_OPS_FILE)
    for name, case in kernels.SINGLE_OPS.items():
        out.append((f"test_kernels_single_ops.py: {name}", kernels.single_op_model(*case)))
    return out


def evidence() -> tuple[dict[str, set[str]], dict[str, dict[str, str]]]:
    """Per operator: the types that open, and type -> refusal message."""
    runs: dict[str, set[str]] = {}
    refused: dict[str, dict[str, str]] = {}
    models = _single_op_models()
    # Converter-made models TFLM refuses (an empty output) say nothing about types: skipped.
    keras = [(p.name, p.read_bytes()) for p in sorted(KERAS.glob("*.tflite"))]
    models += [(n, d) for n, d in keras if not refused_ops(Model(d))]
    for _, data in models:
        model = Model(data)
        pairs = [
            (op.name, _type(model, s, op.index), s, op.index)
            for s, sg in enumerate(model.subgraphs)
            for op in sg.operators
        ]
        try:
            Interpreter(data)
        except MicroarenaError as e:
            where = re.search(r"subgraph (\d+), operator (\d+)", e.message)
            for name, t, s, k in pairs:
                if where and (s, k) == (int(where[1]), int(where[2])):
                    message = WHERE.sub("", e.message)
                    refused.setdefault(name, {}).setdefault(t, message)
            continue
        for name, t, _, _ in pairs:
            runs.setdefault(name, set()).add(t)
    return runs, refused


def tflite_checked() -> dict[str, str]:
    """Operator -> its conformance test file, for the operators checked against TFLite's
    reference kernels (pip ai-edge-litert) because the pip TFLM does not register them."""
    return {c.op: name for name, c in conformance_cases() if c.oracle == "litert"}


def _tflite_sentence(extra: list[str]) -> list[str]:
    """Says which oracle checks the operators beyond TFLM's list."""
    if not extra:
        return []
    checked = tflite_checked()
    files = sorted({checked[op] for op in extra if op in checked})
    unchecked = [op for op in extra if op not in checked]
    text = (
        f"The pip TFLM does not register {', '.join(extra)}: the tests compare "
        f"{', '.join(op for op in extra if op in checked)} with TFLite's own reference kernels "
        "instead (pip ai-edge-litert, OpResolverType.BUILTIN_REF: "
        f"{', '.join(f'`tests/runtime/{f}`' for f in files)})"
    )
    if unchecked:
        text += f"; nothing checks {', '.join(unchecked)}"
    return ["", text + ". Extras, outside the coverage figure."]


def render(version: str, tflm: list[str]) -> str:
    ours = runtime_operators()
    runs, refused = evidence()
    both = sorted(set(tflm) & set(ours))
    extra = sorted(set(ours) - set(tflm))
    lines = [
        "# Operators",
        "",
        "Generated by `tools/gen_operators_doc.py` from the kernel registry and from opening "
        "the tests' one-operator cases, the demo model and the converter-made models on the "
        "host build; do not edit "
        "(`tests/runtime/test_operators_doc.py` regenerates it and compares).",
        "",
        *_matrix_headline(),
        "",
        f"Operators: the runtime has a kernel for {len(both)} of the {len(tflm)} operators the "
        f"pip TFLM (tflite-micro {version}) registers"
        + (f", plus {', '.join(extra)}." if extra else "."),
        *_tflite_sentence(extra),
        "",
        "Types: *runs* lists the input types (->output where it differs) with which the "
        "operator opens in those models (the tests compare each with the real TFLM, or with "
        "TFLite where TFLM lacks the operator); "
        "*refused* gives the runtime's own message. An operator with no kernel is refused at "
        "open as `unsupported operator NAME`. The Signal* operators are checked on TFLM's "
        "audio preprocessor (`tests/runtime/test_signal_kernels.py`), which is not part of "
        "this repository: int16 samples, uint32/uint64 spectra, int16 log output.",
        "",
        "| operator | TFLM | microarena | runs | refused |",
        "|---|---|---|---|---|",
    ]
    for name in sorted(set(tflm) | set(ours)):
        why = "; ".join(f"{t}: {m}" for t, m in sorted(refused.get(name, {}).items()))
        if name not in ours:
            why = "no kernel"
        lines.append(
            f"| {name} | {'yes' if name in tflm else 'no'} | {'yes' if name in ours else 'no'} "
            f"| {', '.join(sorted(runs.get(name, set())))} | {why} |"
        )
    lines += _prepare_section()
    lines += _matrix_section()
    lines += ["", f"<!-- TFLM {version} operators: {' '.join(tflm)} -->", ""]
    return "\n".join(lines)


def _prepare_section() -> list[str]:
    """The table of TFLM's Prepare conditions (host.planning.tflm.prepare.CONDITIONS)."""
    lines = [
        "",
        "## Conditions TFLM's Prepare checks",
        "",
        "TFLM's reference kernels refuse a model in Prepare when it breaks one of these "
        "conditions (or stop on a failed check; a row checked when invoked fails every "
        "invoke instead), where a runtime that went on would compute "
        "something else. This runtime refuses the same models at open, and host.plan says "
        "neither runs them. The rows are `host/planning/tflm/prepare.py`'s table, which "
        "host.plan reads; `tests/planning/tflm/test_prepare.py` builds a model breaking each "
        "row for each operator and checks that the pip TFLM, this runtime and host.plan all "
        "refuse it.",
        "",
        "| operators | input type | TFLM's Prepare wants |",
        "|---|---|---|",
    ]
    for c in CONDITIONS:
        lines.append(f"| {', '.join(c.ops)} | {', '.join(c.types) or 'any'} | {c.says()} |")
    return lines


def _matrix() -> dict[str, dict[str, str]]:
    import sweep_types

    return sweep_types.stored()


def _matrix_headline() -> list[str]:
    import sweep_types as sw

    verdicts = [v for pairs in _matrix().values() for v in pairs.values()]
    total, same = len(verdicts), sum(v == sw.RUNS for v in verdicts)
    gaps = total - same
    return [
        f"**Coverage by types: {same} of the {total} (operator, types) pairs the pip TFLM "
        f"runs in the type sweep run here with TFLM's bytes ({100 * same / total:.1f}%); "
        + (
            f"{gaps} gap{'s' if gaps != 1 else ''}, listed in the type matrix below.**"
            if gaps
            else "no gap (type matrix below).**"
        )
    ]


def _matrix_section() -> list[str]:
    import sweep_types as sw

    lines = [
        "",
        "## Type matrix",
        "",
        "`tools/sweep_types.py` re-types the tests' one-operator cases to every type (int8, "
        "uint8, int16, int32, int64, float32, bool; QUANTIZE, DEQUANTIZE and CAST input and "
        "output independently), runs each on the pip TFLM and, where TFLM runs it, on the "
        "runtime: the pairs below are those TFLM runs, written `inputs->outputs`; "
        "`tests/runtime/test_type_sweep.py` re-runs the sweep against "
        "`tests/data/type_sweep.json`. The sweep finds only what the cases' re-typings reach.",
        "",
        *[f"Left out: {op} {which}: {why}." for (op, which), why in sw.TFLM_WRONG.items()],
        "",
        "| operator | runs as TFLM | not yet |",
        "|---|---|---|",
    ]
    for op, pairs in _matrix().items():
        same = [sig for sig, v in pairs.items() if v == sw.RUNS]
        other = [f"{sig}: {v}" for sig, v in pairs.items() if v != sw.RUNS]
        lines.append(f"| {op} | {', '.join(same)} | {'; '.join(other)} |")
    return lines


def stored_tflm(text: str) -> tuple[str, list[str]]:
    m = TFLM_LINE.search(text)
    if m is None:
        raise SystemExit(f"{DOC} has no stored TFLM operator list; regenerate without --check")
    return m[1], m[2].split()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare, using the stored TFLM list")
    ap.add_argument("--probe-child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe_child is not None:
        return _probe_child(args.probe_child)
    if args.check:
        current = DOC.read_text()
        if render(*stored_tflm(current)) != current:
            print(f"{DOC} is out of date: run python tools/gen_operators_doc.py", file=sys.stderr)
            return 1
        return 0
    text = render(*tflm_operators())
    write_text_atomic(DOC, text)
    print(text.splitlines()[4])
    return 0


if __name__ == "__main__":
    sys.exit(main())
