"""Shared models on emulated boards: the firmware application (microarena runtime, built with
PlatformIO for each board) against the real TFLM interpreter on the same deterministic input,
and its arena report against independent computations."""

from __future__ import annotations

import json
import re
import shutil
import zlib
from pathlib import Path

import numpy as np
import pytest
from support.stack_margin import assert_stack_margin, board_stack_size
from support.tflm_oracle import MODELS, run_tflm

from host.device import emulate
from host.device.boards import BuildError, build_image, get_board
from host.device.wire import WireReport, decode_stream
from host.tflite.model import Model

pytestmark = pytest.mark.skipif(
    shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None,
    reason="needs qemu-system-arm and arm-none-eabi-gcc (bash .ci/setup installs them)",
)

BOARDS = ["mps2-an386", "mps2-an385", "mps2-an500"]  # M4F, M3 soft float, M7
# Keyword spotting, sine regression, person detection, WHILE with cond/body subgraphs, and
# ResNet-8 (3x3 convolutions of 16 to 64 channels: the DSP cores' deepest stack).
MODEL_NAMES = [
    "tflm_hello_world_int8",
    "tflm_micro_speech_int8",
    "tflm_person_detect_int8",
    "litert_while_multi_subgraphs",
    "tiny_ic_resnet8_int8",
]
# The DSP cores' deepest runs (docs/boards.md's Stack table: ResNet-8's CONV_2D, 2,656 bytes on
# the M4 and 2,648 on the M7; the WHILE model 1,492 and 1,508) and a little room: a change that
# deepens the kernels' or the core's frames fails here instead of overflowing a user's smaller
# stack into the arena (docs/library.md).
DSP_STACK_BUDGET = {"mps2-an386": 2800, "mps2-an500": 2800}
OUTPUT_LINE = re.compile(r"^output (\d+) type=(\d+) bytes=(\d+) crc32=([0-9a-f]{8}) data=(\S+)$")
ARENA_LINE = re.compile(r"\[RecordingMicroAllocator\] Arena allocation (total|head|tail) (\d+)")


def model_paths() -> list[Path]:
    paths = [MODELS / f"{name}.tflite" for name in MODEL_NAMES]
    missing = [p.name for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"shared models absent (tests read ../shared/models): {', '.join(missing)}")
    return paths


@pytest.fixture(scope="module")
def images() -> dict[str, Path]:
    """One image per board holding all four models (the run picks one): three builds."""
    paths = model_paths()
    try:
        return {board: build_image(board, paths) for board in BOARDS}
    except BuildError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def tflm_outputs() -> dict[str, list[np.ndarray]]:
    """The real TFLM's outputs for every model on the firmware's deterministic input."""
    return {p.stem: run_tflm(p.read_bytes(), deterministic=True).outputs for p in model_paths()}


@pytest.fixture(scope="module")
def runs(images: dict[str, Path]) -> dict[tuple[str, str], emulate.Result]:
    return {
        (board, name): emulate.run(board, images[board], timeout=60, args=name)
        for board in BOARDS
        for name in MODEL_NAMES
    }


def firmware_outputs(text: str) -> list[tuple[int, bytes, int]]:
    found = []
    for line in text.splitlines():
        match = OUTPUT_LINE.match(line)
        if match:
            data = bytes.fromhex(match.group(5))
            assert len(data) == int(match.group(3))
            found.append((int(match.group(2)), data, int(match.group(4), 16)))
    return found


def wire_report(text: str) -> WireReport:
    events = decode_stream([text.encode()])
    reports = [e for e in events if isinstance(e, WireReport)]
    assert len(reports) == 1 and len(events) == 1, events
    return reports[0]


def assert_outputs_match(result: emulate.Result, expected: list[np.ndarray]) -> None:
    assert result.ok, result.uart_text[-2000:]
    outputs = firmware_outputs(result.uart_text)
    assert len(outputs) == len(expected)
    for (_, data, crc), want in zip(outputs, expected, strict=True):
        assert crc == zlib.crc32(data)
        got = np.frombuffer(data, dtype=want.dtype).reshape(want.shape)
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        else:
            # Integer kernels follow TFLM's reference arithmetic: allow one quantization step.
            diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
            assert diff.max() <= 1, (got, want)


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("board", BOARDS)
def test_outputs_match_tflm(runs, tflm_outputs, board: str, name: str) -> None:
    assert_outputs_match(runs[(board, name)], tflm_outputs[name])


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("board", BOARDS)
def test_stack_high_water_leaves_the_margin(runs, board: str, name: str) -> None:
    report = wire_report(runs[(board, name)].uart_text)
    used = assert_stack_margin(
        runs[(board, name)].uart_text, board, name, DSP_STACK_BUDGET.get(board)
    )
    assert (report.stack_used, report.stack_size) == (used, board_stack_size(board))  # as the text


def test_small_models_run_on_the_64k_board(tflm_outputs) -> None:
    # WHILE nests subgraph invocations (1,520 bytes of stack on the M3, 4,784 before the core's
    # frames were sized to their operators)
    small = ["tflm_hello_world_int8", "tflm_micro_speech_int8", "litert_while_multi_subgraphs"]
    try:
        image = build_image("lm3s6965evb", [MODELS / f"{name}.tflite" for name in small])
    except BuildError as exc:
        pytest.fail(str(exc))
    for name in small:
        result = emulate.run("lm3s6965evb", image, timeout=60, args=name)
        assert_outputs_match(result, tflm_outputs[name])
        assert_stack_margin(result.uart_text, "lm3s6965evb", name)


def test_model_too_big_for_the_board_fails_at_build_time(tmp_path: Path) -> None:
    model = model_paths()[MODEL_NAMES.index("tflm_person_detect_int8")]
    with pytest.raises(BuildError) as failure:
        build_image("lm3s6965evb", model, build_root=tmp_path)
    message = str(failure.value)
    assert "does not fit board lm3s6965evb" in message
    assert f"the model needs {model.stat().st_size} bytes" in message
    assert f"the board has {get_board('lm3s6965evb').flash_bytes}" in message
    assert not list(tmp_path.rglob("firmware.elf"))


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("board", BOARDS)
def test_report_record_matches_text_and_outputs(runs, board: str, name: str) -> None:
    result = runs[(board, name)]
    report = wire_report(result.uart_text)
    assert report.ok and name in report.info and board in report.info
    text = {k: int(v) for k, v in ARENA_LINE.findall(result.uart_text)}
    assert (report.head, report.tail, report.total) == (text["head"], text["tail"], text["total"])
    assert report.total == report.head + report.tail <= report.arena_size
    outputs = firmware_outputs(result.uart_text)
    joined = b"".join(data for _, data, _ in outputs)
    assert report.output_bytes == len(joined) and report.output_crc == zlib.crc32(joined)
    values = result.values()
    assert report.cycles == int(values["ticks"]) > 0
    assert report.clock_hz == int(values["tick_hz"])


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_arena_is_the_same_on_every_board(runs, name: str) -> None:
    """Same 32-bit ABI on M3/M4F/M7: the runtime's arena must not depend on the core."""
    totals = {board: wire_report(runs[(board, name)].uart_text) for board in BOARDS}
    assert len({(r.head, r.tail) for r in totals.values()}) == 1, totals


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_arena_matches_host_prediction(runs, images, name: str) -> None:
    """host.runtime.arena replays the runtime's allocations for Cortex-M exactly: head, tail,
    set-up peak and every tensor offset (the kernels' op data holds no pointers)."""
    from host.runtime import arena

    data = (MODELS / f"{name}.tflite").read_bytes()
    predicted = arena.predict(data)
    report = wire_report(runs[("mps2-an386", name)].uart_text)
    assert report.head == predicted["head"]
    assert (report.tail, report.total) == (predicted["tail"], predicted["total"])
    graphs = Model(data).subgraphs
    placed = {
        graphs[t.subgraph].tensors[t.index].global_index: t.offset
        for t in report.tensors
        if t.region == "head"
    }
    assert placed == {k: v for k, v in predicted["tensor_offsets"].items() if k in placed}
    assert set(placed) <= set(predicted["tensor_offsets"])
    # The image's arena is the largest prediction among its models, rounded to 16 bytes.
    sizes = [arena.predict(p.read_bytes())["required"] for p in model_paths()]
    assert report.arena_size == (max(sizes) + 15) // 16 * 16


def test_instruction_counts_are_repeatable(images: dict[str, Path]) -> None:
    ticks = {
        emulate.run("mps2-an386", images["mps2-an386"], args="tflm_micro_speech_int8").values()[
            "ticks"
        ]
        for _ in range(2)
    }
    assert len(ticks) == 1


def test_unknown_model_name_fails_clearly(images: dict[str, Path]) -> None:
    result = emulate.run("mps2-an386", images["mps2-an386"], args="no_such_model")
    assert result.exit_code == 1 and result.fault is None
    assert "no model named 'no_such_model'" in result.uart_text
    assert "tflm_person_detect_int8" in result.uart_text


def test_offline_plan_is_followed_on_the_board() -> None:
    """custom_plan = best: host.plan embeds its plan at build time and the board's runtime uses
    it. VWW is the model where TFLM's own greedy placement wastes a third of the head."""
    from host.runtime import arena

    model = MODELS / "tiny_vww_mobilenet_int8.tflite"
    if not model.exists():
        pytest.skip(f"shared model {model} is absent (tests read ../shared/models)")
    try:
        elf = build_image("mps2-an386", model, plan="best")
    except BuildError as exc:
        pytest.fail(str(exc))
    planned = elf.parent / "model_src" / "planned" / model.name
    result = emulate.run("mps2-an386", elf, timeout=60)
    report = wire_report(result.uart_text)
    assert result.ok and report.ok
    assert report.head == arena.predict(planned.read_bytes())["head"]
    assert report.head < arena.predict(model.read_bytes())["head"]  # the plan is smaller
    # Same outputs as the real TFLM on the unplanned model.
    assert_outputs_match(result, run_tflm(model.read_bytes(), deterministic=True).outputs)


def test_arena_too_big_for_the_ram_fails_before_writing(tmp_path: Path, capsys) -> None:
    """The RAM side of the build-time check (no shared model fits a QEMU board's flash but not
    its RAM), on the converter itself with a board of 16 KiB of RAM."""
    import sys

    from host.runtime import arena

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "firmware" / "apps" / "model"))
    import embed_model

    model = MODELS / "tiny_kws_dscnn_int8.tflite"
    if not model.exists():
        pytest.skip(f"shared model {model} is absent (tests read ../shared/models)")
    needed = (arena.predict(model.read_bytes())["required"] + 15) // 16 * 16
    args = [str(model), "--out-dir", str(tmp_path / "out"), "--board", "tiny"]
    assert embed_model.main([*args, "--ram-limit", str(16 * 1024)]) == 1
    assert f"RAM: the arena needs {needed} bytes" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert embed_model.main([*args, "--ram-limit", str(needed + 8 * 1024)]) == 0
    assert f"MA_APP_ARENA_BYTES {needed}u" in (tmp_path / "out" / "model_config.h").read_text()


def test_embedded_overlap_plan_survives_custom_plan_best(tmp_path: Path, capsys) -> None:
    """custom_plan = best keeps a plan the model already carries (here an --overlap plan for
    this runtime's kernels, smaller than a plain best plan) instead of re-planning it, and so
    does `host.emulate --model` (the builder's default, custom_plan = none). The library build
    paths (CMake, Make, PlatformIO's library script) are checked by test_library_*.py: the
    model they embed is the planned one, byte for byte."""
    from host.planning import cli as plan_cli
    from host.runtime import arena

    demo = Path(__file__).resolve().parents[2] / "build" / "demo_int8.tflite"
    if not demo.exists():
        pytest.skip(f"{demo} is absent (bash .ci/setup builds it)")
    model = tmp_path / "demo_int8_overlap.tflite"
    args = [str(demo), "--embed", "--overlap", "--kernels", "microarena", "-o", str(model), "-q"]
    assert plan_cli.main(args) == 0
    head = arena.predict(model.read_bytes())["head"]
    plain = tmp_path / "plain.tflite"
    assert plan_cli.main([*args[:2], "--kernels", "microarena", "-o", str(plain), "-q"]) == 0
    assert head < arena.predict(plain.read_bytes())["head"]  # a re-plan would lose the overlap
    try:
        elf = build_image("mps2-an386", model, plan="best")
    except BuildError as exc:
        pytest.fail(str(exc))
    assert not (elf.parent / "model_src" / "planned" / model.name).exists()
    report = wire_report(emulate.run("mps2-an386", elf, timeout=60).uart_text)
    assert report.ok and report.head == head
    capsys.readouterr()
    cli = ["--model", str(model), "--board", "mps2-an386", "--timeout", "60", "--json"]
    assert emulate.main(cli) == 0
    report = wire_report(json.loads(capsys.readouterr().out)["uart_text"])
    assert report.ok and report.head == head
