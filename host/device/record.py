"""Record a board's arena report over a serial port: `python -m host.record --help`.

The firmware prints TFLM's RecordingMicroAllocator lines and a framed, CRC-checked record of the
same numbers (docs/wire_format.md). The recorder waits for a record it can trust, cross-checks
the text against it, shows or saves the result and compares it with the planner's prediction.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from host import entry
from host.argtypes import SECONDS, number
from host.device import upload, wire
from host.device.tflm_text import (
    MAX_NOTES,
    TextReport,
    TextReportCollector,
    category_differences,
    tflm_prediction,
)
from host.fileio import Output, read_file, read_stream, write_outputs
from host.progress import percent_steps, say
from host.tflite.model import Model, ModelError, builtin_name, read_model

# host.planning, host.runtime and host.device's boards, emulate and probe are imported in the
# functions that use them: they load numpy, which --help, --log and --list-ports do without.
if TYPE_CHECKING:
    from host.device.boards import Board

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_NO_REPORT, EXIT_INTERRUPT = 0, 1, 2, 3, 130
MAX_LOG_BYTES = 64 << 20  # a log read (--log) or kept (--save): a report is a few KiB


class RecordError(Exception):
    """No trustworthy report could be recorded (time-out, port closed, only damaged records)."""

    code = EXIT_NO_REPORT

    def __init__(self, message: str, recording: Recording | None = None) -> None:
        super().__init__(message)
        self.recording = recording  # what was received, for --save


class UsageError(RecordError):
    """Bad arguments or input files."""

    code = EXIT_USAGE


@dataclass
class Recording:
    source: str
    report: wire.WireReport | None = None
    text: TextReport | None = None
    rejected: list[str] = field(default_factory=list)  # the first MAX_NOTES reasons
    more_rejected: int = 0  # rejections beyond those: counted, not kept (a flood of noise)
    warnings: list[str] = field(default_factory=list)
    raw: bytes = b""


# ---------------------------------------------------------------- reading


Reader = Callable[[], bytes | None]  # b"" = nothing yet, None = end of input


def record_stream(
    read: Reader, source: str, timeout: float, text_only: bool = False, settle: float = 0.5
) -> Recording:
    """Reads until a valid record arrives (or, with text_only, a complete TFLM text report
    followed by `settle` seconds of quiet or the end of input)."""
    rec = Recording(source)
    dec = wire.FrameDecoder()
    col = TextReportCollector()
    raw = bytearray()
    deadline = time.monotonic() + timeout
    last_text = time.monotonic()

    def text_done() -> bool:
        return text_only and col.current is not None and col.current.complete

    try:
        while (chunk := read()) is not None:
            if chunk:
                raw += chunk[: MAX_LOG_BYTES - len(raw)]  # kept for --save, up to the limit
                seen = col.lines_seen
                if _feed(dec, col, chunk, rec):
                    return rec
                if col.lines_seen != seen:
                    last_text = time.monotonic()
            now = time.monotonic()
            if text_done() and (now - last_text >= settle or now >= deadline):
                break
            if now >= deadline:
                rec.raw = bytes(raw)
                why = _no_report(rec, f"no valid report within {timeout:g} s")
                raise RecordError(why, rec)
        for ev in dec.finish():
            _event(ev, rec)
        if rec.report is None and not text_done():
            rec.raw = bytes(raw)
            raise RecordError(_no_report(rec, "input ended without a valid report"), rec)
        return rec
    finally:
        rec.raw = bytes(raw)
        if rec.text is None and col.current is not None and col.current.complete:
            rec.text = col.current
        rec.warnings += _stream_warnings(dec, col, rec, len(raw))


def _stream_warnings(
    dec: wire.FrameDecoder, col: TextReportCollector, rec: Recording, kept: int
) -> list[str]:
    """What was dropped from the stream: overlong lines, unreadable report lines, rejected
    records beyond those listed, log bytes beyond those kept."""
    out = [f"report text: {e}" for e in col.errors]
    if rec.more_rejected:
        out.append(f"{rec.more_rejected} more damaged records rejected (not listed)")
    if col.more_errors:
        out.append(f"report text: {col.more_errors} more bad lines")
    if dec.dropped_lines:
        s = "s" if dec.dropped_lines > 1 else ""
        out.append(f"{dec.dropped_lines} line{s} over {wire.MAX_LINE} bytes dropped (noise?)")
    if kept >= MAX_LOG_BYTES:
        out.append(f"only the first {MAX_LOG_BYTES} bytes of the log are kept")
    return out


def _feed(dec: wire.FrameDecoder, col: TextReportCollector, chunk: bytes, rec: Recording) -> bool:
    """True once a record has been accepted (the text seen so far is kept with it)."""
    events = dec.feed(chunk)
    for line in dec.other_lines:
        col.line(line)
    dec.other_lines.clear()
    for ev in events:
        _event(ev, rec)
        if rec.report is not None:
            rec.text = col.current if col.current is not None and col.current.complete else None
            return True
    return False


def _event(ev: wire.WireReport | wire.Rejected, rec: Recording) -> None:
    if isinstance(ev, wire.Rejected) and len(rec.rejected) >= MAX_NOTES:
        rec.more_rejected += 1
    elif isinstance(ev, wire.Rejected):
        rec.rejected.append(ev.reason)
    else:
        rec.report = ev


def _no_report(rec: Recording, why: str) -> str:
    if rec.rejected:
        count = len(rec.rejected) + rec.more_rejected
        more = f"; {rec.more_rejected} more" if rec.more_rejected else ""
        why += f"; {count} damaged record(s) rejected: " + "; ".join(rec.rejected) + more
    elif not rec.raw:
        why += " (nothing was received: is the board running and the port right?)"
    return why


@dataclass
class Port:
    """An open serial port: read() gives b"" when nothing came, None once it has closed."""

    read: Reader
    write: Callable[[bytes], None]
    close: Callable[[], None]


def open_port(url: str, baud: int) -> Port:
    """Any pyserial port or URL (COM3, /dev/ttyACM0, socket://, rfc2217://)."""
    import serial  # pyserial; imported here so --help and --log work without it

    try:
        port = serial.serial_for_url(url, baudrate=baud, timeout=0.05, write_timeout=5)
    except (serial.SerialException, ValueError, OSError) as e:
        raise RecordError(f"cannot open {url}: {e}") from e

    sock = getattr(port, "_socket", None)  # socket:// (pyserial leaves Nagle on)
    if sock is not None:
        with contextlib.suppress(OSError):
            # Small writes (upload lines) otherwise wait for the peer's delayed ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    quickack = getattr(socket, "TCP_QUICKACK", None) if sock is not None else None

    def read() -> bytes | None:
        try:
            # More than in_waiting can raise on socket:// and lose what was read.
            data = port.read(port.in_waiting or 1)
            if quickack is not None and data:
                # Acknowledge at once: a peer that sends byte by byte with Nagle on (QEMU's
                # serial socket) otherwise waits for our delayed ACK, ~40 ms per line.
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, quickack, 1)
            return data
        except serial.SerialException as e:
            if "disconnected" in str(e) or "closed" in str(e):
                return None
            raise RecordError(f"reading {url}: {e}") from e

    def write(data: bytes) -> None:
        try:
            port.write(data)
        except (serial.SerialException, OSError) as e:
            raise RecordError(f"writing {url}: {e}") from e

    return Port(read, write, port.close)


def file_reader(path: str) -> Reader:
    """The whole log at once: standard input (`-`) or a regular file, MAX_LOG_BYTES at most."""
    if path == "-":
        data = read_stream(sys.stdin.buffer, MAX_LOG_BYTES, "standard input", "log")
    else:
        data = read_file(path, MAX_LOG_BYTES, "log")
    chunks: Iterator[bytes] = iter([data])
    return lambda: next(chunks, None)


def list_ports() -> list[dict]:
    from serial.tools import list_ports as lp  # pyserial, as in open_port

    return [
        {"device": p.device, "description": p.description, "hwid": p.hwid}
        for p in sorted(lp.comports(), key=lambda p: p.device)
    ]


# ---------------------------------------------------------------- checks


def text_differences(report: wire.WireReport, text: TextReport) -> list[str]:
    """Where the human-readable lines disagree with the CRC-checked record."""
    diffs = [
        f"{k}: text {getattr(text, k)}, record {getattr(report, k)}"
        for k in ("total", "head", "tail")
        if getattr(text, k) != getattr(report, k)
    ]
    if text.categories != report.categories:
        diffs.append("categories differ")
    return diffs


TARGETS = ("microarena", "tflm-cortex-m", "tflm-x86_64")


def load_prediction(model: str, target: str = "microarena") -> dict:
    from host.runtime.arena import predict_model
    from host.runtime.binding import MicroarenaError

    try:
        if target.startswith("tflm"):
            return tflm_prediction(model, target) | {"predicted_for": f"stock TFLM ({target})"}
        _refuse_other_kernels_overlap(model)
        return dict(predict_model(model)) | {"predicted_for": _runtime_plan_words(model)}
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot predict {model}: {e}") from e
    except MicroarenaError as e:  # a model this runtime refuses: it could not run on the board
        raise UsageError(f"cannot predict {model}: the runtime refuses it: {e}") from e
    except RuntimeError as e:  # e.g. the host runtime the predictor uses did not build
        raise RecordError(f"the planner failed on {model}: {e}") from e


def _runtime_plan_words(model: str) -> str:
    """Which figures the microarena prediction is: this runtime's, with the model's plan."""
    from host.planning.origin import origin

    o = origin(Model.load(model))
    return "this runtime (microarena kernels), " + (
        f"following {o.text}" if o else "placing tensors itself (no offline plan)"
    )


def _refuse_other_kernels_overlap(model: str) -> None:
    """An --overlap plan proven for other kernels than this runtime's: refused, saying how to
    re-plan (its overlaps may corrupt outputs here; the board's runtime refuses it too)."""
    from host.planning.origin import origin, replan_hint

    m = Model.load(model)
    o = origin(m)
    if o is not None and o.overlap and (o.kernels or o.runtime) != "microarena":
        raise UsageError(f"{model}: {replan_hint(m, model)}")


def plan_differences(
    report: wire.WireReport | TextReport, predicted: dict, subgraph_sizes: list[int] | None = None
) -> list[str]:
    """Where the recorded arena departs from the prediction (empty: as predicted)."""
    diffs, compared = [], 0
    for name in ("head", "tail", "total", "temp_peak"):
        got, want = getattr(report, name, None), predicted.get(name)
        if got is None or want is None:
            continue
        compared += 1
        if got != want:
            diffs.append(f"{name}: recorded {got}, predicted {want}")
    if not compared:
        return ["the prediction has no head, tail or total"]
    if isinstance(predicted.get("categories"), list):  # a TFLM prediction: every report line
        diffs += category_differences(report.categories, predicted["categories"])
    offsets = predicted.get("tensor_offsets")
    if isinstance(report, wire.WireReport) and report.tensors and offsets and subgraph_sizes:
        diffs += _offset_differences(report, offsets, subgraph_sizes)
    return diffs


def _offset_differences(r: wire.WireReport, offsets: dict, sizes: list[int]) -> list[str]:
    """The planner numbers tensors across subgraphs (subgraph 1's first tensor follows the
    last of subgraph 0); the record numbers them within their subgraph."""
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    if any(t.subgraph >= len(starts) for t in r.tensors):
        return ["the record places tensors in subgraphs the model does not have"]
    got = {starts[t.subgraph] + t.index: t.offset for t in r.tensors if t.region == "head"}
    want = {int(k): int(v) for k, v in offsets.items()}
    wrong = sorted(k for k in got.keys() | want.keys() if got.get(k) != want.get(k))
    if not wrong:
        return []
    k = wrong[0]
    return [
        f"tensor offsets: {len(wrong)} differ (first: tensor {k} recorded {got.get(k)}, "
        f"predicted {want.get(k)})"
    ]


def subgraph_sizes(model: str) -> list[int] | None:
    """Tensors per subgraph, to match the record's tensor numbering with the planner's."""
    try:
        return [len(sg.tensors) for sg in Model.load(model).subgraphs]
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- output


def to_json(
    rec: Recording,
    predicted: dict | None,
    diffs: list[str] | None,
    emulated: Board | None = None,
) -> dict:
    """The recording for machines; `timing` says what the report's tick count means."""
    from host.device.boards import invoke_timing_fields

    r = rec.report
    timing = None
    if r is not None and r.cycles is not None:
        timing = invoke_timing_fields(r.cycles, r.clock_hz or 0, emulated)
    return {
        "source": rec.source,
        "report": rec.report.to_dict() if rec.report else None,
        "timing": timing,
        "profile": profile_rows(r, emulated) if r is not None and r.ops else None,
        "text_report": rec.text.to_dict() if rec.text else None,
        "rejected": rec.rejected,
        "warnings": rec.warnings,
        "prediction": predicted,
        "prediction_differences": diffs,
    }


def profile_rows(r: wire.WireReport, emulated: Board | None) -> list[dict]:
    """The record's per-operator ticks as instructions (emulated board) or cycles, each with
    its operator name and share of the invoke, slowest first."""
    unit = "instructions" if emulated is not None else "cycles"
    scale = emulated.qemu_tick_ns if emulated is not None else 1.0
    total = sum(o.ticks for o in r.ops if o.subgraph == 0) or 1
    rows = [
        {
            "subgraph": o.subgraph,
            "op": o.op,
            "name": builtin_name(o.code) if o.code < wire.CUSTOM_CODE_BASE else "CUSTOM",
            unit: round(o.ticks * scale),
            "share": o.ticks / total if o.subgraph == 0 else None,
        }
        for o in r.ops
    ]
    return sorted(rows, key=lambda row: -row[unit])


def _profile_table(r: wire.WireReport, emulated: Board | None) -> list[str]:
    rows = profile_rows(r, emulated)
    unit = "instructions" if emulated is not None else "cycles"
    out = ["per operator (share of subgraph 0; a nested subgraph's operators inside their caller):"]
    out.append(f"  {'subgraph':>8} {'op':>4}  {'operator':28}{unit:>14}{'share':>8}")
    for row in rows:
        share = f"{100 * row['share']:7.1f}%" if row["share"] is not None else f"{'':8}"
        out.append(f"  {row['subgraph']:>8} {row['op']:>4}  {row['name']:28}{row[unit]:>14}{share}")
    return out


def _emulated_board(board: str | None) -> Board | None:
    from host.device.boards import get_board

    return get_board(board) if board else None


def format_table(rec: Recording, predicted: dict | None, emulated: Board | None = None) -> str:
    """The recording for a person; `emulated`: the QEMU board it ran on (timing in
    instructions), None for hardware or a log."""
    r, t = rec.report, rec.text
    out = [f"source: {rec.source}"]
    if r is not None:
        out.append(f"status: {r.status_name}" + (f": {r.message}" if r.message else ""))
        if r.bytes_needed:
            out.append(f"bytes needed: {r.bytes_needed}")
        if r.info:
            out.append(f"info: {r.info}")
    else:
        out.append("status: (TFLM text report only, no checked record)")
    src = r if r is not None else t
    if src is not None and src.total is not None:
        rows = [("head", src.head), ("tail", src.tail), ("total", src.total)]
        if r is not None:
            rows.insert(1, ("temporary (high water)", r.temp_peak))
            rows.append(("arena size", r.arena_size))
        pred = dict(predicted or {})
        if r is not None and "temp_peak" in pred:
            pred["temporary (high water)"] = pred["temp_peak"]
        if pred.get("predicted_for"):
            out.append(f"predicted for: {pred['predicted_for']}")
        head = f"{'':24}{'bytes':>10}" + (f"{'predicted':>12}" if predicted else "")
        out.append(head)
        for name, value in rows:
            p = pred.get(name) if name != "arena size" else None
            extra = f"{'' if p is None else p:>12}" if predicted else ""
            out.append(f"  {name:22}{value:>10}{extra}")
        cats = src.categories
        if cats:
            lines = pred.get("categories")
            want = {c["name"]: c["used"] for c in lines} if isinstance(lines, list) else {}
            extra = f"{'predicted':>11}" if want else ""
            out.append(f"{'category':44}{'used':>8}{extra}{'requested':>11}  count")
            for c in cats:
                p = f"{want.get(c.name, '-'):>11}" if want else ""
                out.append(f"  {c.name:42}{c.used:>8}{p}{c.requested:>11}  {c.count} {c.unit}")
    if r is not None:
        if r.cycles is not None:
            from host.device.boards import invoke_timing

            out.append(invoke_timing(r.cycles, r.clock_hz or 0, emulated))
        if r.output_crc is not None:
            out.append(f"output crc32: {r.output_crc:08x} over {r.output_bytes} bytes")
        if r.stack_used is not None:
            out.append(stack_line(r))
        if r.tensors:
            out.append(f"tensor placements: {len(r.tensors)} (offsets with --json)")
        if r.ops:
            out += _profile_table(r, emulated)
    out += [f"rejected: {why}" for why in rec.rejected]
    out += [f"warning: {w}" for w in rec.warnings]
    return "\n".join(out)


def stack_line(r: wire.WireReport) -> str:
    """The stack high-water the board measured, against its budget (board.json stack_size)."""
    at_least = "at least " if r.stack_measured and r.stack_used >= r.stack_measured else ""
    over = "  OVERFLOW: over the board's stack" if (r.stack_used or 0) > (r.stack_size or 0) else ""
    return f"stack used {at_least}{r.stack_used} of {r.stack_size} bytes{over}"


def save(path: str, rec: Recording, doc: dict) -> list[str]:
    """The raw log to PATH, the parsed report to PATH.json; returns the files written."""
    p = Path(path)
    js = p.with_name(p.name + ".json")
    write_outputs([Output(p, rec.raw), Output(js, (json.dumps(doc, indent=2) + "\n").encode())])
    return [str(p), str(js)]


# ---------------------------------------------------------------- command line


EXAMPLES = """examples:
  python -m host.record --port /dev/ttyACM0 --plan model.tflite
  python -m host.record --port socket://127.0.0.1:4444 --json --save run.log
  python -m host.record --board mps2-an386 --model model.tflite --plan
  python -m host.record --board mps2-an386 --upload model.tflite
  python -m host.record --board mps2-an386 --model model.tflite --profile
  python -m host.record --log run.log
"""


def build_parser() -> argparse.ArgumentParser:
    ap = entry.parser(
        "record",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Record the arena report a board prints over its serial port: TFLM's\n"
            "RecordingMicroAllocator lines plus a CRC-checked record (docs/wire_format.md).\n"
            "Damaged records are rejected, never shown.\n\n"
            "exit status: 0 ok, 1 the board reported a failure or the report differs from\n"
            "--plan, 2 bad arguments, 3 no valid report (time-out, port closed),\n"
            "130 interrupted (Ctrl-C)"
        ),
    )
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--port", help="serial port or pyserial URL: /dev/ttyACM0, COM3, socket://…")
    src.add_argument("--board", help="start this emulated board (QEMU) and record from it")
    src.add_argument("--log", help="parse a saved log file instead of a port ('-' = stdin)")
    src.add_argument("--list-ports", action="store_true", help="list serial ports and exit")
    ap.add_argument("--model", help="with --board: the .tflite model built into the firmware")
    ap.add_argument(
        "--upload",
        metavar="MODEL",
        help="send MODEL to the probe firmware over the port (CRC-checked, acknowledged, "
        "retried), then record its report; with --board, builds and starts the probe",
    )
    ap.add_argument(
        "--arena",
        type=number(int, 1),
        metavar="BYTES",
        help="with --board and --upload: give the probe only this much arena",
    )
    ap.add_argument("--baud", type=number(int, 1), default=115200, help="default 115200")
    ap.add_argument(
        "--timeout",
        type=SECONDS,
        default=10.0,
        help="seconds to wait for the board (ready line, report); default 10",
    )
    ap.add_argument(
        "--text-only",
        action="store_true",
        help="accept a TFLM text report without a checked record (stock TFLM firmware)",
    )
    ap.add_argument(
        "--plan",
        nargs="?",
        const="",
        metavar="MODEL",
        help="compare head/tail/total with the planner's prediction for MODEL (default: the "
        "--model or --upload model). It plans nothing: the board runs the model with the "
        "offline plan it carries (host.plan --embed writes one), or with none",
    )
    ap.add_argument(
        "--target",
        choices=TARGETS,
        help="what the board runs, for --plan: this project's runtime (default), or stock TFLM "
        "on Cortex-M (with the kernels host.plan recorded in the model, else CMSIS-NN on a "
        "Cortex-M4) or the pip interpreter (then every category line of its "
        "RecordingMicroAllocator report is compared)",
    )
    ap.add_argument(
        "--save", metavar="FILE", help="write the raw log to FILE, the report to FILE.json"
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="with --board and --model: build the firmware with an operator hook and report "
        "each operator's instructions (a record from any board that has them shows them too)",
    )
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return ap


def _acquire(args: argparse.Namespace) -> Recording:
    if args.log is not None:
        if args.upload:
            raise UsageError("--upload needs a board: --port or --board")
        try:
            read = file_reader(args.log)
        except OSError as e:
            raise UsageError(f"cannot read {args.log}: {e.strerror}") from e
        return record_stream(read, args.log, args.timeout, args.text_only)
    if args.arena and not (args.board and args.upload):
        raise UsageError("--arena needs --board and --upload (the probe firmware)")
    if args.board is not None:
        return _record_board(args)
    return _record_port(args, args.port, args.port)


def _record_port(args: argparse.Namespace, url: str, source: str) -> Recording:
    """Optionally uploads the model to the probe, then records the report."""
    model = _read_model(args.upload) if args.upload else None
    port = open_port(url, args.baud)
    try:
        read, before, resends = port.read, b"", 0
        if model is not None:
            src = upload.LineSource(port.read)
            shown = percent_steps(f"uploading {len(model)} B")
            try:
                done = upload.upload(src, port.write, model, args.timeout, progress=shown)
                resends = done["resends"]
            except upload.UploadError as e:
                raise RecordError(f"upload to {source} failed: {e}") from e
            # What came after the last acknowledgement belongs to the report.
            before = bytes(src.log[: len(src.log) - len(src.pending)])
            read = _prepend(src.pending, port.read)
        rec = record_stream(read, source, args.timeout, args.text_only)
        rec.raw = before + rec.raw
        if resends:
            rec.warnings.append(f"upload: {resends} line(s) sent again after a NACK or silence")
        return rec
    finally:
        port.close()


def _read_model(path: str) -> bytes:
    try:
        data = read_model(path)
    except ModelError as e:
        raise UsageError(str(e)) from e
    if not data:
        raise UsageError(f"{path} is empty")
    return data


def _prepend(first: bytes, read: Reader) -> Reader:
    pending = [first] if first else []
    return lambda: pending.pop() if pending else read()


def _record_board(args: argparse.Namespace) -> Recording:
    if not (args.model or args.upload):
        raise UsageError("--board needs --model (built in) or --upload (sent to the probe)")
    from host.device import boards, emulate, probe

    try:
        if args.upload:
            say(f"building the probe firmware for {args.board} (PlatformIO)")
            elf = probe.build_probe(args.board)
        else:
            say(f"building the image of {args.model} for {args.board} (PlatformIO)")
            elf = boards.build_image(args.board, args.model, profile=args.profile)
        say(f"booting QEMU ({args.board})")
        limit = f"arena={args.arena}" if args.arena else ""
        emu = emulate.start(args.board, elf, args=limit)
    except (ValueError, FileNotFoundError, KeyError) as e:
        raise UsageError(f"cannot emulate {args.board}: {e}") from e
    except (boards.BuildError, probe.ProbeBuildError, emulate.EmulationError, OSError) as e:
        raise RecordError(f"cannot start {args.board}: {e}") from e
    with emu:
        rec = _record_port(args, emu.serial_url, f"{args.board} ({emu.serial_url})")
        # After a failure the probe waits for the next upload instead of exiting.
        failed = args.upload and rec.report is not None and not rec.report.ok
        code = None if failed else emu.wait(5.0)
        if code not in (0, None) and (rec.report is None or rec.report.ok):
            rec.warnings.append(f"the firmware exited with status {code} after its report")
    return rec


def run(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.list_ports:
        ports = list_ports()
        if args.json:
            print(json.dumps(ports, indent=2))
        else:
            print("\n".join(f"{p['device']}\t{p['description']}" for p in ports) or "no ports")
        return EXIT_OK
    if args.profile and not (args.board and args.model):
        raise UsageError("--profile needs --board and --model (it builds the model's firmware)")
    if args.model and not args.board:
        raise UsageError(
            "--model needs --board (it is built into that board's firmware); to compare a "
            "report with a model's prediction, give --plan MODEL"
        )
    if args.plan == "":
        args.plan = args.upload or args.model
        if not args.plan:
            raise UsageError("--plan needs a model here (--plan MODEL)")
    if args.target and args.plan is None:
        raise UsageError("--target says what --plan compares with: give --plan too")
    predicted = load_prediction(args.plan, args.target or TARGETS[0]) if args.plan else None
    try:
        rec = _acquire(args)
    except RecordError as e:
        if args.save and e.recording is not None:  # keep the evidence of what went wrong
            doc = to_json(e.recording, None, None) | {"error": str(e)}
            with contextlib.suppress(OSError):
                save(args.save, e.recording, doc)
        raise
    if rec.report is not None and rec.text is not None:
        diffs = text_differences(rec.report, rec.text)
        if diffs:
            rec.warnings.append(
                "the text lines disagree with the CRC-checked record, shown here "
                f"(text damaged on the line?): {'; '.join(diffs)}"
            )
    plan_diffs = None
    final = rec.report if rec.report is not None else rec.text
    if predicted is not None and final is not None:
        plan_diffs = plan_differences(final, predicted, subgraph_sizes(args.plan))
    emulated = _emulated_board(args.board)
    doc = to_json(rec, predicted, plan_diffs, emulated)
    if args.save:
        try:
            save(args.save, rec, doc)
        except OSError as e:
            raise UsageError(f"cannot save to {args.save}: {e}") from e
    print(json.dumps(doc, indent=2) if args.json else format_table(rec, predicted, emulated))
    failed = rec.report is not None and not rec.report.ok
    if failed:
        print(f"error: the board reported failure: {rec.report.status_name}", file=sys.stderr)
    if plan_diffs:
        print("error: differs from the prediction: " + "; ".join(plan_diffs), file=sys.stderr)
    return EXIT_MISMATCH if failed or plan_diffs else EXIT_OK


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except RecordError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPT
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stderr.close()
        return EXIT_OK
